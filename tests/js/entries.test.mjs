// The two entries share one JS glue and one instance serves every call. They compose in any
// order: `promptloom` first and then a lazy `await import('promptloom/composer')` (a skill
// panel opened later) hands every call to the composer's module; the composer first serves
// the base entry too. Objects holding the base instance's wasm state fail clearly
// (`InstanceLost`); objects that are JS state carry on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
const BODY = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}';
const SPEC = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };

test('promptloom first, then a lazy promptloom/composer: every function of both works; JS-state objects carry on', async () => {
  const core = await import('../../pkg/src/node.js');
  assert.equal(core.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  // Made before the composer loads: JS state (a command catalog, an index, stores, a skill
  // catalog) and wasm state (a conversation).
  const commands = new core.CommandCatalog();
  commands.register({ name: 'deploy', description: 'Deploy the app', body: 'Deploy $1.' });
  const index = new core.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]);
  const account = await core.openSkillStore({ name: 'account', seed: true });
  const workspace = await core.openSkillStore({ name: 'workspace' });
  const catalog = new core.SkillCatalog(workspace, account);
  assert.equal((await catalog.match('propose a new tool'))[0].name, 'tool-builder');
  const conv = new core.Conversation();
  conv.append(MESSAGE);

  const comp = await import('../../pkg/src/composer-node.js');
  // The composer's own functions.
  assert.equal(comp.validateSkillSpec(SPEC).ok, true);
  const registry = comp.buildSkillRegistry([...(await catalog.skillSpecs()), SPEC], { tools: ['choir.memory.query', 'choir.fs.read'] });
  assert.deepEqual(registry.names(), ['one', 'skill-builder', 'tool-builder']);
  const c = comp.compose({ skill_package: { name: 'x', description: 'y', metadata: { framing: 'Say {{ user_request }}.' } }, user_request: 'hello', thread_id: 't' });
  assert.match(c.prompt.text, /## Request\n\nhello$/);
  // The base entry's functions, through either entry.
  assert.equal(core.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  assert.equal(comp.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  // JS-state objects made before carry on.
  assert.ok(commands.list().commands.some((x) => x.name === 'deploy'));
  assert.equal(index.match('release')[0].name, 'release-notes');
  assert.deepEqual((await account.list()).map((s) => s.name), ['skill-builder', 'tool-builder']);
  assert.equal((await catalog.match('propose a new tool'))[0].name, 'tool-builder');
  const session = await comp.openSession({ store: account, registry, id: 's' });
  assert.equal(session.lane('core'), 'idle');
  // An object holding the base instance's wasm state says so, and a new one works.
  assert.throws(() => conv.lower({ provider: 'anthropic' }), (e) => e.code === 'InstanceLost' && /took over every call/.test(e.message));
  const again = new core.Conversation();
  again.append(MESSAGE);
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
  // Loading the entries again changes nothing.
  await import('../../pkg/src/node.js');
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
});

test('promptloom/composer first, then promptloom: one instance serves both, nothing is replaced', () => {
  const url = (f) => JSON.stringify(new URL(`../../pkg/src/${f}`, import.meta.url).href);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const comp = await import(${url('composer-node.js')});
    const { __generation } = await import(${url('api.js')});
    const conv = new comp.Conversation();
    conv.append(${JSON.stringify(MESSAGE)});
    const core = await import(${url('node.js')});
    console.log(JSON.stringify([core.lower(${JSON.stringify(MESSAGE)}, { provider: 'anthropic' }).body, conv.lower({ provider: 'anthropic' }).body, comp.validateSkillSpec(${JSON.stringify(SPEC)}).ok, __generation()]));
  `], { encoding: 'utf8', cwd: fileURLToPath(new URL('.', import.meta.url)) });
  assert.deepEqual(JSON.parse(out), [BODY, BODY, true, 0]);
});

test('with only promptloom loaded, a call that needs the composer module names the import', () => {
  const url = JSON.stringify(new URL('../../pkg/src/node.js', import.meta.url).href);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const core = await import(${url});
    const index = new core.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]);
    try { index.decide('write the release notes'); console.log('no error'); } catch (e) { console.log(JSON.stringify([e.code, e.details.needs, e.message])); }
  `], { encoding: 'utf8' });
  const [code, needs, message] = JSON.parse(out);
  assert.deepEqual([code, needs], ['InvalidOptions', 'promptloom/composer']);
  assert.match(message, /import "promptloom\/composer"/);
});
