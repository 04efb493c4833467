// One scenario for every JS host that loads the entries separately (Node, Deno): the
// `promptloom` entry first, then a lazy `promptloom/composer`. `load(entry)` imports an
// entry ('promptloom' or 'promptloom/composer') the way the host's test does; `assert` is
// node:assert/strict. Every function of both entries works afterwards, and every object
// made before carries on: JS-state objects move to the larger instance, and objects holding
// the base instance's wasm state (a conversation, a parser in the middle of a stream)
// finish there.
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
  // A reply streaming in when the skill panel opens: half of it read before.
  const sse = ['data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n', 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'];
  const parser = core.createResponseParser('openai-chat');
  assert.deepEqual(parser.push(sse[0]).filter((e) => e.type === 'text-delta').map((e) => e.text), ['Hel']);

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
  // Objects holding the base instance's wasm state finish there: the stream goes on, the
  // conversation takes the reply and lowers it.
  assert.deepEqual(parser.push(sse[1]).filter((e) => e.type === 'text-delta').map((e) => e.text), ['lo']);
  const reply = parser.finish();
  assert.equal(reply.parts[0].text, 'Hello');
  assert.equal(conv.append(reply), 1);
  assert.equal(conv.length, 2);
  const both = JSON.parse(conv.lower({ provider: 'anthropic' }).body);
  assert.deepEqual(both.messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(conv.lower({ provider: 'anthropic' }).report.provider, 'anthropic');
  assert.equal(conv.turns[1].parts[0].text, 'Hello');
  // The same bytes as a conversation made on the larger instance.
  const fresh = new comp.Conversation();
  for (const t of conv.turns) fresh.append(t);
  assert.equal(fresh.lower({ provider: 'gemini' }).body, conv.lower({ provider: 'gemini' }).body);
  conv.free();
  assert.throws(() => conv.lower({ provider: 'anthropic' }), (e) => e.details.released === true);
  const again = new core.Conversation();
  again.append(MESSAGE);
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
  // Loading the entries again changes nothing.
  await load('promptloom');
  assert.equal(again.lower({ provider: 'anthropic' }).body, BODY);
  return { core, comp };
}
