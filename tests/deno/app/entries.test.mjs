// `promptloom` first, then a lazy `await import('promptloom/composer')`, in Deno (the packed
// package installed into node_modules, imported by name): the message store suite on the
// memory backend with the base entry; after the composer loads, its suites (the arbiter,
// sessions, the gateway) and every function of both entries work, JS-state objects made
// before carry on, and an object holding the base instance's wasm state fails clearly.
import assert from 'node:assert/strict';
import { v1, gatewayContracts } from '../../js/cases.mjs';
import { conformance } from '../../js/store-conformance.mjs';
import { arbiterConformance } from '../../js/arbiter-conformance.mjs';
import { sessionConformance } from '../../js/session-conformance.mjs';
import { gatewayConformance } from '../../js/gateway-conformance.mjs';
import { arbiterSpecs, composerFixtures } from '../../js/composer-fixtures.mjs';

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
const BODY = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}';
const SPEC = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };
const ok = (results, at_least) => {
  assert.ok(results.length >= at_least, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error ?? r.detail}`);
};

Deno.test('promptloom then a lazy promptloom/composer in Deno: both entries, their suites, objects made before', async () => {
  const core = await import('promptloom');
  assert.equal(core.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  ok(await conformance(core, () => core.openMessageStore({ backend: 'memory' }), v1), 10);
  const commands = new core.CommandCatalog();
  commands.register({ name: 'deploy', description: 'Deploy the app', body: 'Deploy $1.' });
  const index = new core.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]);
  const account = await core.openSkillStore({ name: 'account', seed: true });
  const catalog = new core.SkillCatalog(await core.openSkillStore({ name: 'workspace' }), account);
  assert.equal((await catalog.match('propose a new tool'))[0].name, 'tool-builder');
  const conv = new core.Conversation();
  conv.append(MESSAGE);

  const comp = await import('promptloom/composer');
  assert.equal(comp.validateSkillSpec(SPEC).ok, true);
  const registry = comp.buildSkillRegistry([...(await catalog.skillSpecs()), SPEC], { tools: ['choir.memory.query', 'choir.fs.read'] });
  assert.deepEqual(registry.names(), ['one', 'skill-builder', 'tool-builder']);
  const c = comp.compose({ skill_package: { name: 'x', description: 'y', metadata: { framing: 'Say {{ user_request }}.' } }, user_request: 'hello', thread_id: 't' });
  assert.match(c.prompt.text, /## Request\n\nhello$/);
  ok(await arbiterConformance(comp, arbiterSpecs(), composerFixtures().requests['timeline-openai-staged']), 6);
  ok(await sessionConformance(comp, arbiterSpecs(), () => comp.openSkillStore({ backend: 'memory' })), 6);
  ok(await gatewayConformance(comp, { contracts: gatewayContracts(), state: () => comp.memoryState() }), 30);
  assert.equal(core.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  assert.ok(commands.list().commands.some((x) => x.name === 'deploy'));
  assert.equal(index.match('release')[0].name, 'release-notes');
  assert.equal((await catalog.match('propose a new tool'))[0].name, 'tool-builder');
  assert.throws(() => conv.lower({ provider: 'anthropic' }), (e) => e.code === 'InstanceLost');
  const again = new core.Conversation();
  again.append(MESSAGE);
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
});
