// The scripted agent runs of tests/agent (the options, the thread so far, the provider's
// replies as recorded bodies, the tool answers, a SkillSpec for the arbiter) and what the
// Rust driver recorded for each (tests/snapshots/agent__runs@*.snap): the outcome, every
// request body byte for byte, and the thread at the end. Node, jco and Wasmtime run them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cases.mjs';

export function agentCases() {
  const dir = join(root, 'tests/agent');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      const snap = readFileSync(join(root, 'tests/snapshots', `agent__runs@${file}.snap`), 'utf8');
      return { name: file, ...c, expected: JSON.parse(snap.slice(snap.indexOf('\n---\n', 4) + 5)) };
    });
}
