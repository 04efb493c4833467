// The Skill Composer fixtures for the JS suites, read from the Rust test corpus: skill
// packages, compose requests (package included) and the compositions the reviewed Rust
// snapshots hold for them. Node-only (reads files); other runtimes get the object as JSON.
import { readFileSync, readdirSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const read = (p) => readFileSync(new URL(p, root), 'utf8');

export function composerFixtures() {
  const packages = {};
  for (const dir of ['composer/skills/', 'skills/packages/']) {
    for (const f of readdirSync(new URL(dir, root))) {
      if (!f.endsWith('.json')) continue;
      try {
        packages[f.slice(0, -5)] = JSON.parse(read(dir + f));
      } catch {
        /* the deliberately broken packages */
      }
    }
  }
  const requests = {};
  const expected = {};
  for (const f of readdirSync(new URL('composer/requests/', root))) {
    const name = f.slice(0, -5);
    const c = JSON.parse(read(`composer/requests/${f}`));
    requests[name] = { ...c.request, skill_package: packages[c.skill] };
    const snap = read(`snapshots/composer__golden_compositions@${f}.snap`);
    expected[name] = JSON.parse(snap.slice(snap.indexOf('\n---\n', 4) + 5));
  }
  return { packages, requests, expected };
}

/** The SkillSpecs of tests/arbiter/specs, by name. */
export function arbiterSpecs() {
  const out = {};
  for (const f of readdirSync(new URL('arbiter/specs/', root))) out[f.slice(0, -5)] = JSON.parse(read(`arbiter/specs/${f}`));
  return out;
}
