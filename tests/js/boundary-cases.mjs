// The reproductions of the boundary issue, one check each: every call fails with a coded
// PromptloomError (or succeeds where the README says it does), and nothing rejects unheard.
// Runs in every JS host (no host API beyond fetch's Response and structuredClone).

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function detached() {
  const b = new ArrayBuffer(8);
  const view = new Uint8Array(b);
  structuredClone(b, { transfer: [b] });
  return { buffer: b, view };
}

/** `[{ name, ok, detail }]`. */
export async function boundaryCases(pl) {
  const results = [];
  const coded = async (name, f, code) => {
    let got;
    try {
      await f();
      got = 'no error';
    } catch (e) {
      got = e instanceof pl.PromptloomError ? e.code : `${e && e.constructor && e.constructor.name}: ${e && e.message}`;
    }
    const ok = code instanceof RegExp ? code.test(got) : got === code;
    results.push({ name, ok, detail: ok ? '' : `expected ${code}, got ${got}` });
  };
  const passes = async (name, f) => {
    try {
      await f();
      results.push({ name, ok: true, detail: '' });
    } catch (e) {
      results.push({ name, ok: false, detail: `${e && e.code} ${e && e.message}` });
    }
  };
  const cyclic = {};
  cyclic.self = cyclic;
  const message = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };

  // The lowering surface (every entry).
  await coded('parseResponse of an object holding a BigInt', () => pl.parseResponse('anthropic', { x: 1n }), 'InvalidOptions');
  await coded('parseResponse of a detached ArrayBuffer', () => pl.parseResponse('anthropic', detached().buffer), 'InvalidOptions');
  await coded('ResponseParser.push of a view over a detached buffer', () => new pl.ResponseParser('anthropic').push(detached().view), 'InvalidOptions');
  await coded('createAdapter with a BigInt baseURL', () => pl.createAdapter({ provider: 'anthropic', baseURL: 1n, fetch: async () => new Response('') }), 'InvalidOptions');
  await coded('createAdapter with a cyclic retry', () => pl.createAdapter({ provider: 'anthropic', retry: cyclic, fetch: async () => new Response('') }), 'InvalidOptions');
  await coded('createAdapter with a header whose toString answers an object', () => pl.createAdapter({ provider: 'anthropic', headers: { 'x-a': { toString: () => ({}) } }, fetch: async () => new Response('') }), 'InvalidOptions');
  await coded('a resolver answering a cyclic object during lower', () => pl.lower({ role: 'user', parts: [{ type: 'file-ref', ref: { kind: 'path', path: 'a' } }] }, { provider: 'anthropic', resolve: () => cyclic }), /^(InvalidOptions|no error)$/);
  await coded('lowerConversation with a detached attachment', () => pl.lowerConversation([{ role: 'user', parts: [{ type: 'file-attachment', data: detached().view, mime: 'image/png' }] }], { provider: 'anthropic' }), 'InvalidData');
  await coded('runAgent with onEvent an object', () => pl.runAgent({ conversation: new pl.Conversation(), adapter: { send() {} }, onEvent: {} }), 'InvalidOptions');
  await coded('runAgent with onTurn a string', () => pl.runAgent({ conversation: new pl.Conversation(), adapter: { send() {} }, onTurn: 'x' }), 'InvalidOptions');
  await coded('Conversation.load({})', () => pl.Conversation.load({}), 'InvalidOptions');
  if (!pl.openSkillStore) return results;

  await coded('importSkillMd with a detached file', () => pl.importSkillMd('---\nname: a\ndescription: b\n---\nx\n', { 'a.bin': detached().view }), /^(InvalidData|InvalidOptions)$/);
  await coded('SkillIndex.match with a vector whose items convert to objects', () => new pl.SkillIndex([{ id: 'a', name: 'a', description: 'd' }]).match('a', { vector: [{ valueOf: () => ({}) }] }), 'InvalidOptions');
  const store = await pl.openSkillStore({ backend: 'memory', name: `cases${Math.random()}` });
  const made = await store.create({ name: 'Greeter', description: 'Says hello', artifacts: [{ kind: 'prompt_template', name: 'Hello', content: 'Hello {{ who }}' }] });
  // eslint-disable-next-line no-sparse-arrays
  await coded('store.getArtifacts with a sparse kinds array', () => store.getArtifacts(made.id, [, 'prompt_template']), 'InvalidOptions');
  // eslint-disable-next-line no-sparse-arrays
  await coded('catalog.load with a sparse kinds array', () => new pl.SkillCatalog(store, store).load('Greeter', [, 'x']), 'InvalidOptions');
  await coded('syncMarketplace whose fetch answers null', () => new pl.SkillCatalog(store, store).syncMarketplace('https://market.test/skills.json', { fetch: async () => null }), 'SyncFailed');
  await passes('store.update without artifacts keeps them (README)', async () => {
    const stored = await store.get(made.id);
    await store.update({ ...stored, artifacts: undefined, description: 'Says hello warmly' });
    const after = await store.get(made.id);
    if (after.description !== 'Says hello warmly' || after.artifacts.length !== 1) throw new Error(`updated wrongly: ${JSON.stringify(after).slice(0, 200)}`);
  });
  if (!pl.compose) return results;

  const model = async () => ({ text: 'yes' });
  const opts = { store, skill: 'Greeter', artifact: 'Hello', parameters: { who: 'a' }, adapter: model };
  await coded('runArtifact with a BigInt parameter', () => pl.runArtifact({ ...opts, parameters: { who: 1n } }), 'InvalidOptions');
  await coded('runSkill with a cyclic parameter', () => pl.runSkill({ ...opts, artifact: undefined, parameters: cyclic }), 'InvalidOptions');
  await coded("runArtifact with traces: 'x'", () => pl.runArtifact({ ...opts, traces: 'x' }), 'InvalidOptions');
  await coded("optimizeDspy with traces: 'x'", () => pl.optimizeDspy({ store, skill: 'Greeter', traces: 'x', executors: { dspy: { execute: model, optimize: model, manifest: async () => ({ version: '1' }) } } }), 'InvalidOptions');
  await coded("a skill with artifacts: 'x' given to runArtifact", () => pl.runArtifact({ ...opts, store: undefined, skill: { name: 'x', artifacts: 'x' } }), 'InvalidSkill');
  const framed = { name: 'n', description: 'd', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: 'Hi {{ user_request }}' }] };
  const authoring = pl.compose({ skill_package: framed, user_request: 'x', thread_id: 't', purpose: 'authoring', caller_capabilities: ['list_skills'], available_tools: ['list_skills'] });
  const tools = pl.authoringTools(store);
  await coded('handlers.list_skills({}, null)', () => tools.handlers.list_skills({}, null), 'UnknownTool');
  await coded('handlers.list_skills with a BigInt argument', () => tools.handlers.list_skills({ source: 1n }, { composition: authoring }), 'InvalidRequest');
  await coded('new Arbiter with retries whose valueOf answers an object', () => new pl.Arbiter(pl.buildSkillRegistry([], {}), { retries: { valueOf: () => ({}) } }), 'InvalidOptions');
  let reads = 0;
  const shaped = { ...framed, metadata: { ...framed.metadata, planner_delegates_shape: true } };
  await coded('a shape model whose text getter changes between reads', () => pl.compose({ skill_package: shaped, user_request: 'x', thread_id: 't' }, { adapter: async () => ({ get text() { reads += 1; return reads === 1 ? '{"stages":[]}' : 5; } }) }), /^(no error|InvalidRequest|AdapterFailed|MissingRequiredField)$/);
  await coded('a shape model answering the text "null"', () => pl.compose({ skill_package: shaped, user_request: 'x', thread_id: 't' }, { adapter: async () => 'null' }), 'AdapterFailed');
  await coded('a shape model answering the text "5"', () => pl.compose({ skill_package: shaped, user_request: 'x', thread_id: 't' }, { adapter: async () => '5' }), 'AdapterFailed');

  // The gateway's composition patterns.
  const registry = new pl.ContractRegistry();
  registry.register({ name: 'look-up', version: '1.0.0', description: 'Looks a key up.', owner: 'tests', input: { key: { type: 'string', required: true } }, output: { value: { type: 'string', required: true } }, policy: { idempotent: true, timeout_ms: 500, budget: { p95_ms: 100, cost_usd: 0.001 } } });
  const gw = pl.createGateway({ registry, handlers: { 'look-up': async (input) => ({ value: `v:${input.key}` }) }, state: pl.memoryState() });
  const call = { surface: 'api', user: 'u1' };
  const step = { name: 'look-up', input: { key: 'a' } };
  await coded('gateway.parallel(new Uint16Array(2))', () => gw.parallel(new Uint16Array(2), call), 'InvalidOptions');
  await coded('gateway.parallel([step, null])', () => gw.parallel([step, null], call), 'InvalidOptions');
  await coded('gateway.parallel(undefined)', () => gw.parallel(undefined, call), 'InvalidOptions');
  await coded('gateway.sequence(undefined)', () => gw.sequence(undefined, call), 'InvalidOptions');
  await coded('gateway.conditional(undefined, f)', () => gw.conditional(undefined, () => null, call), 'InvalidOptions');
  await coded("gateway.conditional(step, 'x')", () => gw.conditional(step, 'x', call), 'InvalidOptions');
  await coded("gateway.call with signal: 'x'", () => gw.call('look-up', { key: 'a' }, { ...call, signal: 'x' }), 'InvalidOptions');
  await coded("gateway.speculate with signal: 'x'", () => gw.speculate('look-up', { key: 'a' }, { ...call, signal: 'x' }).result, 'InvalidOptions');
  await coded('gateway.sequence whose input function throws', () => gw.sequence([{ name: 'look-up', input: () => { throw new Error('no input'); } }], call), 'AdapterFailed');
  await coded('new GatewayStateObject()', () => new pl.GatewayStateObject(), 'InvalidOptions');
  await sleep(20);
  return results;
}
