// Every object that holds wasm memory lets it go three ways: `free()` at once (a second call
// does nothing), `[Symbol.dispose]` (the `using` statement), and, with neither, when the
// garbage collector takes the object. A released object answers a coded error; one that can
// be rebuilt from its JS state (a command catalog, a prepared skill, a contract registry, a
// skill catalog) builds itself again on its next use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as pl from 'promptloom/composer';
import { root, gatewayContracts } from './cases.mjs';

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
const SPEC = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };
const released = (e) => e instanceof pl.PromptloomError && e.code === 'InvalidOptions' && e.details.released === true && /released/.test(e.message);

test('free() and Symbol.dispose release each object once; a released object answers a coded error', async () => {
  const store = await pl.openSkillStore({ name: 'dispose' });
  const registry = pl.buildSkillRegistry([SPEC]);
  // [made, a use after release that must fail]
  const gone = [
    [() => { const c = new pl.Conversation(); c.append(MESSAGE); return c; }, (c) => c.lower({ provider: 'anthropic' })],
    [() => pl.createResponseParser('anthropic'), (p) => p.push('data: {"type":"ping"}\n\n')],
    [() => new pl.SkillIndex([{ id: 'a', name: 'notes', description: 'Writes notes' }]), (ix) => ix.match('notes')],
    [() => new pl.Arbiter(pl.buildSkillRegistry([SPEC])), (a) => a.start('lane', 'one')],
    [() => pl.buildSkillRegistry([SPEC]), (r) => r.names()],
    [async () => pl.openSession({ store, registry, id: `s${Math.random()}` }), (s) => s.hierarchy()],
  ];
  for (const [make, use] of gone) {
    for (const release of ['free', Symbol.dispose]) {
      const o = await make();
      assert.equal(typeof o[Symbol.dispose], 'function', `${o.constructor.name} is disposable`);
      o[release]();
      o[release](); // a second release does nothing
      assert.throws(() => use(o), released, `${o.constructor.name} after ${String(release)}`);
    }
  }
  // Rebuilt from their JS state on the next use.
  const commands = new pl.CommandCatalog();
  commands.register({ name: 'deploy', description: 'Deploy', body: 'Deploy $1.' });
  commands[Symbol.dispose]();
  assert.ok(commands.list().commands.some((c) => c.name === 'deploy'));
  const skill = { name: 'Hello', description: 'Greets.', metadata: { framing: 'Hello.' } };
  const prepared = pl.prepareSkill(skill);
  const before = JSON.stringify(prepared.compose({ thread_id: 't' }));
  prepared.free();
  assert.equal(JSON.stringify(prepared.compose({ thread_id: 't' })), before);
  const contracts = new pl.ContractRegistry();
  const [file, yaml] = Object.entries(gatewayContracts()).find(([k]) => k.startsWith('valid/'));
  contracts.register(yaml);
  const names = contracts.list().map((c) => c.name);
  assert.ok(names.length > 0, file);
  contracts[Symbol.dispose]();
  assert.deepEqual(contracts.list().map((c) => c.name), names);
  const catalog = new pl.SkillCatalog(await pl.openSkillStore({ name: 'w' }), await pl.openSkillStore({ name: 'a', seed: true }));
  const first = (await catalog.match('propose a new tool'))[0].name;
  catalog.free();
  assert.equal((await catalog.match('propose a new tool'))[0].name, first);
  registry.free();
});

// Never freed: the objects go with the garbage collector (wasm-bindgen's FinalizationRegistry
// on the core object each one holds), so the wasm memory stops growing. Each round makes
// conversations holding ~1 MB of turns and parsers with buffered input, and drops them.
test('objects never freed are released when collected: the wasm memory stops growing', () => {
  const dir = join(root, 'tests/js/.out/dispose');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'leak.mjs'), `import { Conversation, createResponseParser } from 'promptloom';
import { __module } from '${join(root, 'pkg/src/api.js')}';
const big = 'x'.repeat(256 * 1024);
const pages = () => __module().__exports().memory.buffer.byteLength / 65536;
const round = () => {
  for (let i = 0; i < 8; i++) {
    const c = new Conversation();
    for (let t = 0; t < 4; t++) c.append({ role: t % 2 ? 'assistant' : 'user', parts: [{ type: 'text', text: big + t }] });
    c.lower({ provider: 'anthropic' });
    const p = createResponseParser('openai-chat');
    p.push('data: {"choices":[{"index":0,"delta":{"content":"' + 'y'.repeat(64 * 1024) + '"}}]}\\n\\ndata: {"choices":[{"ind');
  }
};
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
};
for (let i = 0; i < 10; i++) { round(); await settle(); }
const warm = pages();
for (let i = 0; i < 60; i++) { round(); await settle(); }
console.log(JSON.stringify({ warm, after: pages() }));
`);
  const { warm, after } = JSON.parse(execFileSync('node', ['--expose-gc', join(dir, 'leak.mjs')], { encoding: 'utf8', cwd: root }));
  // 60 more rounds would hold ~600 MB (9,000+ pages) if nothing were released.
  assert.ok(after - warm < 400, `the wasm memory grew from ${warm} to ${after} pages`);
});
