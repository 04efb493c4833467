// The scripted artifact and skill runs of tests/artifact_run and what the Rust driver
// recorded for each run (tests/snapshots/artifact_run__runs@*.snap): the calls made, the
// traces stored, the result or the error. Node, jco and Wasmtime replay them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cases.mjs';

export function artifactCases() {
  const dir = join(root, 'tests/artifact_run');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      const snap = readFileSync(join(root, 'tests/snapshots', `artifact_run__runs@${file}.snap`), 'utf8');
      const expected = JSON.parse(snap.slice(snap.indexOf('\n---\n', 4) + 5));
      return { name: file, ...c, pkg: readFileSync(join(root, `tests/skills/packages/${c.package}.json`), 'utf8'), expected };
    });
}

/**
 * A scripted host for one run: `answer(executor, request, kind)` pops the run's answers in
 * order (a `{ fail }` answer throws), `clock()` ticks a second per reading, `calls` and
 * `traces` record what the run asked.
 */
export function scriptedHost(run) {
  const answers = JSON.parse(JSON.stringify(run.answers ?? {}));
  const calls = [];
  const traces = [];
  let tick = 0;
  return {
    calls,
    traces,
    answer(executor, request, kind) {
      calls.push(kind === undefined ? { executor, request } : { executor, kind, request });
      const a = answers[executor].shift();
      if (a && typeof a === 'object' && a.fail !== undefined) throw new Error(a.fail);
      return a;
    },
    time() {
      tick += 1;
      return { now: `2026-11-22T10:00:${String(tick).padStart(2, '0')}.000Z`, ms: tick * 1000 };
    },
    done: () => Object.values(answers).every((l) => l.length === 0),
  };
}
