// One scenario for every JS host that loads the entries separately (Node, Deno): the
// `promptloom` entry first, then a lazy `promptloom/composer`. `load(entry)` imports an
// entry ('promptloom' or 'promptloom/composer') the way the host's test does; `assert` is
// node:assert/strict. Every function of both entries works afterwards, JS-state objects
// made before carry on, and an object holding the base instance's wasm state fails
// clearly (`InstanceLost`) while a new one works.
export const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
export const BODY = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}';
export const SPEC = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };

/** Runs the scenario; returns both modules for host-specific checks after it. */
export async function baseThenComposer(load, assert) {
  const core = await load('promptloom');
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

  const comp = await load('promptloom/composer');
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
  await load('promptloom');
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
  return { core, comp };
}
