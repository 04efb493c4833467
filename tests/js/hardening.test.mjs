// Hardening in Node, on both entries: the shared suite (inputs that once killed the wasm
// instance, trap recovery, the boundary suite), and what only a whole process shows — an
// abandoned resolver Promise and garbage collection after a trap must not end the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hardeningConformance } from './hardening-conformance.mjs';
import { root } from './cases.mjs';

// One entry per process (the first entry loaded serves every call): this file takes
// `promptloom/composer`, hardening-lowering.test.mjs takes `promptloom`.
test('hardening suite in Node (promptloom/composer)', async () => {
  const pl = await import('promptloom/composer');
  const results = await hardeningConformance(pl, { calls: 60, seeds: [1, 2, 3] });
  assert.ok(results.length >= 12, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

/** Runs `source` as a module in a fresh Node process; returns its exit status and output. */
function run(source, flags = []) {
  const dir = mkdtempSync(join(tmpdir(), 'promptloom-'));
  const file = join(dir, 'probe.mjs');
  writeFileSync(file, source);
  try {
    const out = execFileSync(process.execPath, [...flags, file], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, out };
  } catch (e) {
    return { status: e.status, out: `${e.stdout}\n${e.stderr}` };
  }
}

const pkgUrl = (entry) => new URL(`../../pkg/src/${entry}`, import.meta.url).href;

test('F: a resolver answering one part synchronously (refused) and one with a Promise never leaves an unhandled rejection', () => {
  const r = run(`
    import * as pl from ${JSON.stringify(pkgUrl('node.js'))};
    const message = { role: 'user', parts: [{ type: 'file-ref', ref: { kind: 'path', path: 'a' } }, { type: 'file-ref', ref: { kind: 'path', path: 'b' } }] };
    try {
      pl.lower(message, { provider: 'anthropic', resolve: (req) => (req.ref.path === 'a' ? Promise.resolve(5) : 7) });
      console.log('no error');
    } catch (e) {
      console.log('caught', e.code);
    }
    await new Promise((r) => setTimeout(r, 50));
    console.log('still running');
  `);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /caught InvalidOptions/);
  assert.match(r.out, /still running/);
});

test('E: after a trap, collecting every wasm-backed object of the dead instance does not end the process', () => {
  const r = run(`
    import * as pl from ${JSON.stringify(pkgUrl('composer-node.js'))};
    const tools = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'];
    let objs = [];
    const system = pl.seedSkillSpecs(await pl.systemSkills());
    for (let i = 0; i < 50; i++) {
      const registry = pl.buildSkillRegistry(system, { tools });
      objs.push(registry, new pl.Arbiter(registry), new pl.CommandCatalog(), new pl.SkillIndex([{ id: 'a', name: 'n', description: 'd' }]), new pl.Conversation());
    }
    const skill = { name: 'n', description: 'd', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: '{% set s = "ab" %}' + '{% set s = s ~ s %}'.repeat(40) }] };
    try { pl.compose({ skill_package: skill, user_request: 'x', thread_id: 't' }); } catch (e) { console.log('trap', e.code); }
    objs = null;
    for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
    console.log(pl.lower({ role: 'user', parts: [{ type: 'text', text: 'ok' }] }, { provider: 'gemini' }).body);
  `, ['--expose-gc']);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /trap LimitExceeded/);
  assert.match(r.out, /"text":"ok"/);
});
