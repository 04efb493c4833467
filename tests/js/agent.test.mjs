// The agent loop in Node against the mock provider: a tool round trip to the final answer,
// persisted turn by turn and resumed after a "crash"; max_steps; abort; and a SkillSpec run
// where every call goes through the arbiter (a refusal goes back as an error result).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { startMockProvider, mockBaseURL } from '../../scripts/mock-provider.mjs';

let mock;
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await mock.close();
});

const tools = [{ name: 'search', description: 'Searches the docs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }];
const adapter = (provider, extra = {}) => pl.createAdapter({ provider, apiKey: 'k', baseURL: mockBaseURL(mock.url, provider), model: 'mock-model', retry: { initialDelayMs: 1 }, ...extra });
const lower = (provider) => ({ provider, ...(provider === 'gemini' ? {} : provider === 'anthropic' ? { model: 'm', maxOutputTokens: 256, stream: true } : { model: 'm', stream: true }) });

for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
  test(`${provider}: the loop runs the tool and stops on the final answer, every turn persisted`, async () => {
    const store = await pl.openMessageStore({ backend: 'memory' });
    const conversation = new pl.Conversation({ store, session: `s-${provider}` });
    await conversation.append({ role: 'user', parts: [{ type: 'text', text: 'Find the streaming docs' }] });
    const seen = [];
    const calls = [];
    const out = await pl.runAgent({
      conversation,
      adapter: adapter(provider),
      tools,
      handlers: { search: async (input) => { calls.push(input); return `Found: docs/streaming.md for "${input.query}"`; } },
      lower: lower(provider),
      onEvent: (ev, step) => seen.push(`${step}:${ev.type}`),
    });
    assert.equal(out.stop, 'final');
    assert.equal(out.steps, 2);
    assert.deepEqual(calls, [{ query: 'Find the streaming docs' }]);
    assert.match(out.turn.parts.find((p) => p.type === 'text').text, /Found: docs\/streaming\.md/);
    assert.ok(out.usage.input_tokens > 0 && out.usage.output_tokens > 0);
    assert.ok(seen.includes('1:tool-call-end') && seen.includes('2:text-delta'));
    const thread = await store.thread(`s-${provider}`);
    assert.deepEqual(thread.map((t) => t.role), ['user', 'assistant', 'tool', 'assistant']);
    // A reload reads the same thread.
    const again = await pl.Conversation.load({ store, session: `s-${provider}` });
    assert.equal(again.lower(lower(provider)).body, conversation.lower(lower(provider)).body);
  });
}

test('a thread reloaded with an unanswered call runs it first, then continues', async () => {
  const store = await pl.openMessageStore({ backend: 'memory' });
  const c = new pl.Conversation({ store, session: 'crash' });
  await c.append({ role: 'user', parts: [{ type: 'text', text: 'look it up' }] });
  await c.append({ role: 'assistant', parts: [{ type: 'tool-call', id: 'toolu_1', name: 'search', input: { query: 'x' } }] });
  // The process died here; a new one loads the thread.
  const resumed = await pl.Conversation.load({ store, session: 'crash' });
  const out = await pl.runAgent({ conversation: resumed, adapter: adapter('anthropic'), tools, handlers: { search: () => 'the answer is 42' }, lower: lower('anthropic') });
  assert.equal(out.stop, 'final');
  assert.match(out.turn.parts[out.turn.parts.length - 1].text, /42/);
  assert.deepEqual((await store.thread('crash')).map((t) => t.role), ['user', 'assistant', 'tool', 'assistant']);
});

test('max_steps stops a model that keeps calling tools; a failing handler is an error result', async () => {
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'loop' }] });
  const out = await pl.runAgent({ conversation: c, adapter: adapter('openai-chat'), tools, handlers: { search: () => { throw new Error('index offline'); } }, lower: lower('openai-chat'), maxSteps: 1 });
  assert.equal(out.stop, 'max-steps');
  const tool = c.turns.at(-1);
  assert.equal(tool.role, 'tool');
  assert.equal(tool.parts[0].is_error, true);
  assert.equal(tool.parts[0].output, 'index offline');
});

test('an abort mid-stream stops the loop and keeps the text shown', async () => {
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'tell me everything' }] });
  const ctl = new AbortController();
  const out = await pl.runAgent({ conversation: c, adapter: adapter('anthropic', { headers: { 'x-mock': 'slow=20' } }), lower: lower('anthropic'), signal: ctl.signal, onEvent: (ev) => ev.type === 'text-delta' && ctl.abort() });
  assert.equal(out.stop, 'aborted');
  assert.equal(out.error.code, 'Aborted');
  assert.equal(c.turns.at(-1).role, 'assistant');
  assert.ok(c.turns.at(-1).parts.some((p) => p.type === 'text' && p.text.length > 0));
});

test('onEvent: an async observer sees every event in order before the turn is appended; one that throws stops the run with its error', async () => {
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'tell me a story' }] });
  const seen = [];
  let inFlight = 0;
  const out = await pl.runAgent({
    conversation: c,
    adapter: adapter('anthropic'),
    lower: lower('anthropic'),
    onEvent: async (ev) => {
      assert.equal(inFlight, 0, 'one observer call at a time');
      inFlight++;
      await new Promise((r) => setTimeout(r, 0));
      seen.push(ev.type === 'text-delta' ? ev.text : `<${ev.type}>`);
      inFlight--;
    },
  });
  assert.equal(out.stop, 'final');
  const text = seen.filter((x) => !x.startsWith('<')).join('');
  assert.equal(text, out.turn.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''));
  assert.equal(seen.at(-1), '<finish>');
  assert.equal(c.turns.at(-1).role, 'assistant');
  // A throwing observer: the run rejects with its error (coded, naming the callback), and
  // the request is stopped.
  const d = new pl.Conversation();
  d.append({ role: 'user', parts: [{ type: 'text', text: 'tell me a story' }] });
  const boom = new Error('the panel broke');
  for (const onEvent of [(ev) => { if (ev.type === 'text-delta') throw boom; }, async (ev) => { if (ev.type === 'text-delta') throw boom; }]) {
    const asked = mock.requests.length;
    await assert.rejects(pl.runAgent({ conversation: d, adapter: adapter('anthropic', { headers: { 'x-mock': 'slow=20' } }), lower: lower('anthropic'), onEvent }), (e) => e.code === 'AdapterFailed' && e.details.callback === 'onEvent' && /the panel broke/.test(e.message));
    assert.equal(mock.requests.length, asked + 1);
    assert.deepEqual(d.turns.map((t) => t.role), ['user'], 'nothing appended');
  }
});

const spec = {
  name: 'research',
  description: 'Research, then report.',
  initial_state: 'research',
  states: {
    research: { objective: 'Search the docs.', allowed_tools: ['docs.search'], transitions: [{ on: 'found', to: 'report' }] },
    report: { objective: 'Report what you found.', allowed_tools: [], transitions: [], terminal: true },
  },
};

test('a SkillSpec run: every call proposed to the arbiter, the state machine advances, the loop stops when the run completes', async () => {
  const registry = pl.buildSkillRegistry([spec], { tools: ['docs.search'] });
  const arbiter = new pl.Arbiter(registry);
  arbiter.start('main', 'research', null);
  const offer = arbiter.stepOffer('main', [{ name: 'docs.search', description: 'Searches.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }]);
  assert.deepEqual(offer.tools.map((t) => t.name), ['docs_search', 'skill_transition']);
  assert.deepEqual(offer.names, { docs_search: 'docs.search' });
  assert.match(offer.system, /Objective: Search the docs\.[\s\S]*skill_transition.*found/);
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'What is new in streaming?' }] });
  const states = [];
  const out = await pl.runAgent({
    conversation: c,
    adapter: adapter('anthropic'),
    tools: [{ name: 'docs.search', description: 'Searches.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }],
    handlers: { 'docs.search': () => 'streaming: adapters and parsers' },
    lower: lower('anthropic'),
    arbiter,
    lane: 'main',
    onTurn: () => states.push(arbiter.run('main').state),
  });
  assert.equal(out.stop, 'arbiter');
  assert.equal(out.run.status, 'finished');
  assert.deepEqual(states, ['research', 'research', 'report']);
  const names = c.turns.filter((t) => t.role === 'assistant').flatMap((t) => t.parts.filter((p) => p.type === 'tool-call').map((p) => p.name));
  assert.deepEqual(names, ['docs_search', 'skill_transition', 'skill_finish']);
  assert.ok(c.turns.filter((t) => t.role === 'tool').every((t) => !t.parts[0].is_error));
});

test('a SkillSpec run in a session: every proposal and lane move stored before the tool runs; the run reopens finished', async () => {
  const registry = pl.buildSkillRegistry([spec], { tools: ['docs.search'] });
  const store = await pl.openSkillStore({ backend: 'memory' });
  const session = await pl.openSession({ store, registry, id: 'agent-1' });
  await session.startSkill('main', 'research', null);
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'What is new in streaming?' }] });
  const seenBeforeTool = [];
  const out = await pl.runAgent({
    conversation: c,
    adapter: adapter('anthropic'),
    tools: [{ name: 'docs.search', description: 'Searches.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }],
    handlers: { 'docs.search': () => { seenBeforeTool.push(session.lane('main')); return 'streaming: adapters and parsers'; } },
    lower: lower('anthropic'),
    arbiter: session,
    lane: 'main',
  });
  assert.equal(out.stop, 'arbiter');
  assert.equal(out.run.status, 'finished');
  assert.deepEqual(seenBeforeTool, ['waiting_tool'], 'the accepted call moved the lane before the tool ran');
  session.free();
  const again = await pl.openSession({ store, registry, id: 'agent-1' });
  assert.equal(again.run('main').status, 'finished');
  assert.equal(again.lane('main'), 'idle');
  const moves = again.log().filter((e) => e.type === 'lane').map((e) => e.event);
  assert.deepEqual(moves, ['request', 'tool_call', 'tool_result', 'response']);
  again.free();
});

test('a call the state does not allow is refused and goes back to the model with the reason', async () => {
  const arbiter = new pl.Arbiter(pl.buildSkillRegistry([spec], { tools: ['docs.search'] }));
  arbiter.start('main', 'research', null);
  const c = new pl.Conversation();
  c.append({ role: 'user', parts: [{ type: 'text', text: 'go' }] });
  c.append({ role: 'assistant', parts: [{ type: 'tool-call', id: 'toolu_x', name: 'rm_rf', input: {} }] });
  let ran = false;
  await pl.runAgent({ conversation: c, adapter: adapter('anthropic'), handlers: { rm_rf: () => { ran = true; } }, lower: lower('anthropic'), arbiter, maxSteps: 1 });
  assert.equal(ran, false);
  const refusal = c.turns[2].parts[0];
  assert.equal(refusal.is_error, true);
  assert.match(refusal.output, /arbiter refused[\s\S]*Allowed tools: docs\.search; transitions: found/);
});

test('runAgent checks its options', async () => {
  await assert.rejects(pl.runAgent({}), (e) => e.code === 'InvalidOptions' && e.details.path === 'conversation');
  await assert.rejects(pl.runAgent({ conversation: new pl.Conversation(), adapter: {} }), (e) => e.details.path === 'adapter');
  await assert.rejects(pl.runAgent({ conversation: new pl.Conversation(), adapter: adapter('gemini'), maxSteps: 0 }), (e) => e.details.path === 'maxSteps');
});

// The Rust driver's scripted runs (tests/agent), through runAgent with an adapter that
// answers with the recorded bodies: the same request bodies, byte for byte, the same thread.
import { agentCases } from './agent-cases.mjs';

for (const c of agentCases()) {
  test(`the scripted run ${c.name} matches the core's driver`, async () => {
    const provider = c.options.lower.provider;
    const requests = [];
    const replies = [...c.replies];
    const adapter = {
      send(body) {
        requests.push(body);
        const turn = pl.parseResponse(provider, JSON.stringify(replies.shift()));
        return { async *[Symbol.asyncIterator]() {}, turn: Promise.resolve(turn) };
      },
    };
    const store = await pl.openMessageStore({ backend: 'memory' });
    const conversation = new pl.Conversation({ store, session: c.name });
    for (const t of c.turns) await conversation.append(t);
    const handlers = {};
    for (const [name, t] of Object.entries(c.tools ?? {})) {
      handlers[name] = () => {
        if (t.fail !== undefined) throw new Error(t.fail);
        return t.output;
      };
    }
    let arbiter;
    let lane;
    if (c.arbiter) {
      arbiter = new pl.Arbiter(pl.buildSkillRegistry([c.arbiter.spec], { tools: c.arbiter.tools }));
      lane = c.arbiter.lane;
      arbiter.start(lane, c.arbiter.spec.name, null);
    }
    const out = await pl.runAgent({ conversation, adapter, tools: c.options.tools ?? [], handlers, lower: c.options.lower, maxSteps: c.options.max_steps ?? 8, arbiter, lane });
    assert.deepEqual({ stop: out.stop, steps: out.steps, usage: out.usage }, c.expected.outcome);
    assert.deepEqual(requests, c.expected.requests);
    assert.deepEqual(conversation.turns, c.expected.turns);
    if (c.arbiter) assert.equal(out.run.status, c.expected.arbiter_status);
    // Every turn is in the store, in order.
    assert.deepEqual((await store.thread(c.name)).map((t) => t.role), c.expected.turns.map((t) => t.role));
  });
}

test('runAgent asks for a JSON answer with the output setting, and gives the object parsed', async () => {
  const schema = { type: 'object', properties: { said: { type: 'string' }, words: { type: 'integer' }, first: { type: 'string' } }, required: ['said', 'words'] };
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const conversation = new pl.Conversation();
    await conversation.append({ role: 'user', parts: [{ type: 'text', text: 'count these four words' }] });
    const model = provider === 'anthropic' ? 'claude-sonnet-4-5' : provider === 'gemini' ? 'gemini-2.5-flash' : 'gpt-4.1';
    const out = await pl.runAgent({ conversation, adapter: adapter(provider, { model }), lower: { provider, model, stream: true, output: { schema, name: 'count' } } });
    assert.equal(out.stop, 'final', provider);
    assert.deepEqual(out.object, { said: 'count these four words', words: 4, first: 'count' }, provider);
    assert.deepEqual(out.turn.metadata.object, out.object);
    conversation.free();
  }
});

// A tool whose inputSchema is a zod schema (Standard JSON Schema): the provider is offered its
// JSON Schema, each call's input is checked by it before the handler runs (the handler gets
// the parsed value), and a call it refuses goes back to the model as an error result.
test('a zod inputSchema: offered as JSON Schema, each input checked and parsed; a refused input is an error result', async () => {
  const { z } = await import('zod');
  for (const provider of ['anthropic', 'openai-chat', 'gemini']) {
    const before = mock.requests.length;
    const conversation = new pl.Conversation();
    conversation.append({ role: 'user', parts: [{ type: 'text', text: 'Find the streaming docs' }] });
    const got = [];
    const out = await pl.runAgent({
      conversation,
      adapter: adapter(provider),
      tools: [{ name: 'search', description: 'Searches the docs.', inputSchema: z.object({ query: z.string().transform((q) => q.toUpperCase()) }) }],
      handlers: { search: async ({ query }) => (got.push(query), `found ${query}`) },
      lower: lower(provider),
    });
    assert.equal(out.stop, 'final', provider);
    assert.deepEqual(got, ['FIND THE STREAMING DOCS'], `${provider}: the handler got the parsed value`);
    const body = JSON.parse(mock.requests[before].body);
    const offered = JSON.stringify(body.tools ?? body.functionDeclarations);
    assert.match(offered, /"query":\{"type":"(string|STRING)"\}/, `${provider}: the JSON Schema was offered (Gemini's in its OpenAPI subset)`);
    assert.doesNotMatch(offered, /\$schema|~standard/, provider);
    // The model's input lacks what the schema needs: the handler never runs, the model is told.
    const strict = new pl.Conversation();
    strict.append({ role: 'user', parts: [{ type: 'text', text: 'Find the streaming docs' }] });
    let ran = false;
    const refused = await pl.runAgent({
      conversation: strict,
      adapter: adapter(provider),
      tools: [{ name: 'search', inputSchema: z.object({ query: z.string(), limit: z.number() }) }],
      handlers: { search: async () => { ran = true; return 'x'; } },
      lower: lower(provider),
    });
    assert.equal(ran, false, provider);
    const result = strict.turns.find((t) => t.role === 'tool').parts[0];
    assert.equal(result.is_error, true, provider);
    assert.match(JSON.stringify(result.output), /does not match the tool's schema: limit: /, provider);
    assert.equal(refused.stop, 'final', provider);
  }
  // lower() writes a zod schema out the same way.
  const lowered = pl.lower({ parts: [{ type: 'text', text: 'x' }] }, { provider: 'anthropic', tools: [{ name: 's', inputSchema: z.object({ q: z.string() }) }] }).json();
  assert.deepEqual(lowered.tools[0].input_schema, { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
  // The old spellings of a tool's schema are refused, naming inputSchema.
  // (the core refuses them, so every host does: here when runAgent lowers its first step)
  const asked = new pl.Conversation({ options: { provider: 'anthropic' } });
  asked.append({ role: 'user', parts: [{ type: 'text', text: 'x' }] });
  await assert.rejects(pl.runAgent({ conversation: asked, adapter: adapter('anthropic'), tools: [{ name: 's', input_schema: { type: 'object' } }] }), (e) => e.code === 'InvalidOptions' && e.details.use === 'inputSchema' && e.details.path === 'tools[0].input_schema');
  assert.throws(() => pl.lower({ parts: [{ type: 'text', text: 'x' }] }, { provider: 'openai-chat', tools: [{ name: 's', parameters: { type: 'object' } }] }), (e) => e.code === 'InvalidOptions' && e.details.path === 'tools[0].parameters');
});
