// The shaped boundary suite: every exported function, constructor, static and instance
// method of a promptloom entry — and every method of the objects they hand back (stores,
// adapters, gateways, sessions, authoring tools) — is called with a valid argument list in
// which one place (an argument, or a field at any depth of one) is replaced by a hostile
// value: a wrong type, a missing field, a BigInt, a cycle, 10,000-deep nesting, a detached
// buffer, a getter that answers differently on each read, an object whose `toString` returns
// an object, a sparse array, a callback that throws, rejects or answers junk.
//
// Every call must return, or fail with a PromptloomError carrying a documented `code`
// (never `Internal`, never `InstanceLost`); no promise may reject unobserved; afterwards
// the instance answers byte-identically. The list of callables is read from the exports: one
// without a shape here fails the suite, so a new function is covered the day it lands.
// It uses no host API beyond what every JS host has (Node, Chromium, workerd).

import { ERROR_CODES } from '../../pkg/src/constants.js';
import { rng, reference } from './boundary.mjs';

// A relayed answer (`stream.toResponse()`): the open event, two events, the turn.
const EVENTS = 'event: open\ndata: {"protocol":"promptloom-events","version":1,"provider":"openai-chat"}\n\nid: 1\ndata: {"type":"text-delta","part":0,"text":"hi"}\n\nid: 2\ndata: {"type":"finish","reason":"stop"}\n\nevent: turn\nid: 3\ndata: {"role":"assistant","parts":[{"type":"text","text":"hi"}],"metadata":{"provider":"openai-chat"}}\n\n';
const TOOLS = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'];
const TEXT = { type: 'text', text: 'hi' };
const MESSAGE = { role: 'user', parts: [TEXT, { type: 'file-ref', ref: { kind: 'path', path: 'a.ts' }, range: { start: 1, end: 2 } }] };
const FRAMED = { name: 'n', description: 'd', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: 'Hi {{ user_request }}' }] };
const CONTRACT = {
  name: 'look-up',
  version: '1.0.0',
  description: 'Looks a key up.',
  owner: 'tests',
  input: { key: { type: 'string', required: true } },
  output: { value: { type: 'string', required: true } },
  policy: { idempotent: true, timeout_ms: 200, budget: { p95_ms: 100, cost_usd: 0.001 } },
};
const CALL = { surface: 'chat', user: 'u1' };
const SSE = 'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
const ANTHROPIC_BODY = { id: 'm', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } };

/** A detached ArrayBuffer (and a view over one). */
function detached() {
  const b = new ArrayBuffer(8);
  const view = new Uint8Array(b);
  structuredClone(b, { transfer: [b] });
  return { buffer: b, view };
}

function deep(n, leaf) {
  let v = leaf;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

function deepObject(n) {
  let v = { x: 1 };
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

/** Hostile values (fresh objects on every call). */
function hostiles() {
  const cyclic = { role: 'user', parts: [] };
  cyclic.parts.push(cyclic);
  cyclic.self = cyclic;
  let reads = 0;
  const changing = {
    get text() {
      reads += 1;
      return reads === 1 ? 'ok' : 5;
    },
    get name() {
      reads += 1;
      return reads === 1 ? 'n' : {};
    },
  };
  const badString = { toString: () => ({}), valueOf: () => ({}) };
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [, 'a', , 'b'];
  const d = detached();
  return [
    undefined, null, true, 0, -1, 1.5, NaN, Infinity, 2 ** 53, 10n, '', 'x', 'null', '{', '\uD800',
    Symbol('s'), [], [null], sparse, {}, cyclic, changing, badString, deep(10000, 1), deepObject(10000),
    d.buffer, d.view, new Uint16Array(2), new Map(), new Date(NaN),
    () => { throw new Error('callback failed'); },
    async () => { throw new Error('async failed'); },
    () => 10n, () => null, () => 5, () => cyclic, () => changing, async () => badString,
    Object.create(null),
  ];
}

/** Every place inside `v` (argument index, then keys and indices), at most `depth` deep. */
function places(v, path, out, depth, seen) {
  out.push(path);
  if (depth === 0 || v === null || typeof v !== 'object' || seen.has(v)) return;
  if (!Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype) return;
  seen.add(v);
  const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
  for (const k of keys.slice(0, 24)) places(v[k], [...path, k], out, depth - 1, seen);
}

/** A structural copy of the valid arguments (functions, class instances and stores shared). */
function copy(v) {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copy);
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  const o = {};
  for (const k of Object.keys(v)) o[k] = copy(v[k]);
  return o;
}

/** `args` with the value at `path` replaced by `value` (or the key removed). */
function mutate(args, path, value, remove) {
  const out = copy(args);
  if (path.length === 1) {
    out[path[0]] = value;
    return out;
  }
  let at = out;
  for (const k of path.slice(0, -1)) at = at[k];
  const last = path[path.length - 1];
  if (remove && !Array.isArray(at)) delete at[last];
  else at[last] = value;
  return out;
}

function describe(path, value, remove) {
  const where = path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('').replace(/^\[(\d+)\]/, 'arg$1');
  if (remove) return `${where} removed`;
  let v;
  if (typeof value === 'bigint') v = `${value}n`;
  else if (typeof value === 'function') v = `fn ${String(value).slice(0, 40)}`;
  else if (typeof value === 'symbol') v = 'symbol';
  else if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) v = `${value.constructor.name}(${value.byteLength})`;
  else {
    try {
      const s = JSON.stringify(value);
      v = s === undefined ? String(value) : s.length > 50 ? `${s.slice(0, 50)}…` : s;
    } catch {
      v = 'unprintable';
    }
  }
  return `${where} = ${v}`;
}

/** Awaits `p` for at most `ms`; a call that never settles is reported. */
async function settled(p, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([p.then(() => 'ok', (e) => ({ e })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `f()`, awaiting what it answers (a stream: its turn; an async iterator: read out). */
async function run(f) {
  const out = await f();
  if (out && typeof out === 'object' && typeof out.batches === 'function' && 'turn' in out) await out.turn;
  else if (out && typeof out === 'object' && typeof out.next === 'function' && typeof out[Symbol.asyncIterator] === 'function') {
    for (let i = 0; i < 100; i++) if ((await out.next()).done) break;
  }
}

/** 'ok', `{ e }` (what it threw or rejected with) or 'timeout'. */
function attempt(f, ms) {
  return settled(Promise.resolve().then(() => run(f)), ms);
}

/**
 * The objects every shape draws on, made fresh for each run of the suite: stores, a
 * catalog, an index, a conversation, a parser, an adapter answering locally, a contract
 * registry and a gateway with a handler, an arbiter, a session and the authoring tools.
 */
async function fixtures(pl) {
  const f = {};
  f.fetch = async () => new Response(SSE, { headers: { 'content-type': 'text/event-stream' } });
  f.adapter = pl.createAdapter({ provider: 'openai-chat', retry: { maxRetries: 0 }, fetch: f.fetch });
  if (!pl.openSkillStore) return f; // promptloom/lower
  f.store = await pl.openSkillStore({ backend: 'memory', name: `b${Math.random()}` });
  f.skill = await f.store.create({ name: 'Greeter', description: 'Says hello to someone', artifacts: [{ kind: 'prompt_template', name: 'Hello', content: 'Hello {{ who }}' }] });
  f.stored = await f.store.get(f.skill.id);
  f.framed = await f.store.get((await f.store.create(FRAMED)).id);
  f.messages = await pl.openMessageStore({ backend: 'memory', name: `m${Math.random()}` });
  f.message = await f.messages.append(MESSAGE, { session: 's', now: () => 1 });
  f.model = async () => ({ text: 'yes' });
  if (pl.compose) {
    f.system = pl.seedSkillSpecs(await pl.systemSkills());
    f.registry = pl.buildSkillRegistry(f.system, { tools: TOOLS });
    f.session = await pl.openSession({ store: f.store, registry: f.registry, id: 's1', now: () => 1 });
    f.composition = pl.compose({ skill_package: f.framed, user_request: 'x', thread_id: 't' });
    f.authoring = pl.compose({ skill_package: f.framed, user_request: 'x', thread_id: 't', purpose: 'authoring', caller_capabilities: ['create_skill', 'update_skill', 'list_skills', 'add_artifact'], available_tools: ['create_skill', 'update_skill', 'list_skills', 'add_artifact'] });
    f.tools = pl.authoringTools(f.store);
    f.contracts = new pl.ContractRegistry();
    f.contracts.register(CONTRACT);
    f.gateway = pl.createGateway({ registry: f.contracts, handlers: { 'look-up': async (input) => ({ value: `v:${input.key}` }) }, state: pl.memoryState(), now: () => 1_700_000_000_000 });
  }
  return f;
}

/**
 * The valid call of every callable: `name → (f, pl) => [target, args]` where `target` is
 * the function or method's receiver-bound call. Names: `fn`, `new Class`, `Class.static`,
 * `Class#method`, `object.method` (objects handed back by a function).
 */
function shapes(pl, f) {
  const turns = [MESSAGE, { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] }, MESSAGE];
  const offer = () => {
    const a = new pl.Arbiter(f.registry);
    a.start('core', 'skill-builder', {});
    return a;
  };
  const s = {
    // the lowering entry
    lower: () => [MESSAGE, { provider: 'anthropic', system: 'Be brief.', resolve: () => ({ text: 'x' }) }],
    lowerAsync: () => [MESSAGE, { provider: 'anthropic', system: 'Be brief.', store: f.messages, resolve: async () => ({ text: 'x' }) }],
    lowerMany: () => [[MESSAGE, MESSAGE], { provider: 'gemini', resolve: () => ({ text: 'x' }) }],
    lowerManyAsync: () => [[MESSAGE, MESSAGE], { provider: 'gemini', resolve: async () => ({ text: 'x' }) }],
    defaultCapabilities: () => ['openai-chat'],
    normalizeMessage: () => [MESSAGE],
    resolveRequests: () => [MESSAGE],
    // the compositor
    parseInput: () => ['/help me @file', { catalog: new pl.CommandCatalog() }],
    submit: () => [MESSAGE, { store: f.messages, session: 's', resolve: () => ({ text: 'x' }), mentions: { file: () => 'x' } }],
    openMessageStore: () => [{ backend: 'memory', name: 'm2' }],
    inspect: () => [MESSAGE, { provider: 'anthropic' }],
    'new CommandCatalog': () => [{ builtins: true }],
    'CommandCatalog#register': () => [{ name: 'deploy', description: 'Deploy', body: 'Deploy $1.' }],
    'CommandCatalog#registerMention': () => [{ name: 'ticket', description: 'a ticket' }],
    'CommandCatalog#unregister': () => ['deploy'],
    'CommandCatalog#list': () => [],
    'CommandCatalog#complete': () => ['/de', { limit: 3 }],
    'messages.get': () => [f.message.id],
    'messages.history': () => ['s'],
    'messages.thread': () => ['s'],
    'messages.append': () => [MESSAGE, { session: 's', now: () => 1 }],
    'messages.list': () => ['s'],
    'messages.page': () => ['s', { of: 'list', page: 0, pageSize: 10 }],
    'messages.pages': () => ['s', { of: 'history', pageSize: 100, order: 'newest-first' }],
    'messages.blob': () => ['sha256:00'],
    'messages.recordInvocation': () => [f.composition ? f.composition.invocation_record : { id: 'inv-1', thread_id: 't', skill_name: 'n' }],
    'messages.invocations': () => ['t'],
    // conversations
    lowerConversation: () => [turns, { provider: 'openai-responses', resolve: () => ({ text: 'x' }) }],
    lowerConversationAsync: () => [turns, { provider: 'openai-responses', resolve: async () => ({ text: 'x' }) }],
    'new Conversation': () => [{ store: f.messages, session: 'c', options: { provider: 'anthropic' } }],
    'Conversation.load': () => [{ store: f.messages, session: 'c', options: { provider: 'anthropic' } }],
    'Conversation#append': () => [MESSAGE, { resolve: () => ({ text: 'x' }) }],
    'Conversation#appendAsync': () => [MESSAGE, { resolve: async () => ({ text: 'x' }) }],
    'Conversation#lower': () => [{ provider: 'gemini', system: 'x' }],
    'Conversation#truncate': () => [1],
    'Conversation#cacheStats': () => [],
    // responses and adapters
    createResponseParser: () => ['anthropic', { request: { provider: 'anthropic', body: '{}' } }],
    'new ResponseParser': () => ['openai-chat', {}],
    'ResponseParser#push': () => [new TextEncoder().encode(SSE)],
    'ResponseParser#end': () => [],
    'ResponseParser#finish': () => [],
    'ResponseStream#batches': () => [],
    'ResponseStream#text': () => [],
    'ResponseStream#toReadableStream': () => [],
    'ResponseStream#toResponse': () => [{ status: 200, headers: { 'access-control-allow-origin': '*' } }],
    readEventStream: () => [new Response(EVENTS), { signal: new AbortController().signal, reconnect: () => new Response(EVENTS), retries: 1 }],
    relayAdapter: () => [{ endpoint: 'http://127.0.0.1:9/relay', provider: 'openai-chat', headers: { 'x-a': 'b' }, fetch: async () => new Response(EVENTS), reconnect: 2, nonce: () => 'run-1' }],
    'new EventStreamLog': () => [{ kept: EVENTS, keep: () => {} }],
    'EventStreamLog#record': () => [new Response(EVENTS).body],
    'EventStreamLog#replay': () => ['1'],
    'new Chat': () => [{ store: f.messages, session: 'chat', adapter: f.adapter, settings: { provider: 'openai-chat', model: 'gpt-4o' }, tools: [{ name: 'look', description: 'x', inputSchema: { type: 'object' }, needsApproval: true }], handlers: { look: async () => 'ok' }, nonce: () => 'n1', onEvent: () => {}, onTurn: async () => {} }],
    'Chat.open': () => [{ store: f.messages, session: 'chat', endpoint: 'http://127.0.0.1:9/relay', headers: { 'x-a': 'b' }, settings: { provider: 'openai-chat', model: 'gpt-4o' }, maxSteps: 2 }],
    'Chat#send': () => [{ parts: [TEXT] }, { settings: { model: 'gpt-4.1', system: 'x' }, adapter: f.adapter }],
    'Chat#stop': () => [],
    'Chat#resume': () => [{ settings: { system: 'x' } }],
    'Chat#regenerate': () => [{ settings: { model: 'gpt-4.1' } }],
    'Chat#edit': () => ['chat/0000000001', [TEXT], { settings: { maxOutputTokens: 10 } }],
    'Chat#approve': () => ['call-1', { approve: false, reason: 'no' }],
    'Chat#lower': () => [{ model: 'gpt-4.1', system: 'x' }],
    serveWorker: () => [{ chat: async (init) => init, functions: { twice: (x) => x * 2 }, port: { postMessage() {}, addEventListener() {}, removeEventListener() {} } }],
    'messages.appendTurns': () => [turns, { session: 'copy', now: () => 1 }],
    'messages.saveDraft': () => [{ turn: { role: 'assistant', parts: [{ type: 'text', text: 'Hel' }] }, run: 'r1' }, { session: 'drafting' }],
    'messages.draft': () => ['drafting'],
    'messages.dropDraft': () => ['drafting'],
    parseResponse: () => ['anthropic', ANTHROPIC_BODY, {}],
    providerError: () => ['anthropic', { status: 429, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}', headers: { 'retry-after': '1' } }],
    createAdapter: () => [{ provider: 'anthropic', apiKey: 'k', baseURL: 'http://localhost:1', headers: { 'x-a': 'b' }, fetch: f.fetch, retry: { maxRetries: 1, initialDelayMs: 1 } }],
    'adapter.send': () => [pl.lower(MESSAGE, { provider: 'openai-chat', model: 'gpt-4o' }), { onRetry: () => {} }],
    'adapter.generate': () => [pl.lower(MESSAGE, { provider: 'openai-chat', model: 'gpt-4o' }), {}],
    runAgent: () => {
      const conversation = new pl.Conversation({ options: { provider: 'openai-chat', model: 'gpt-4o' } });
      conversation.append(MESSAGE);
      return [{ conversation, adapter: f.adapter, tools: [{ name: 'look', description: 'x', inputSchema: { type: 'object' } }], handlers: { look: async () => 'ok' }, lower: { system: 'x' }, maxSteps: 2, onEvent: () => {}, onTurn: () => {} }];
    },
    // skills
    validateSkill: () => [{ name: 'a', description: 'b', artifacts: [] }],
    importPackage: () => [{ name: 'a', description: 'b', artifacts: [] }, { now: () => Date.parse('2026-01-01T00:00:00Z') }],
    importSkillMd: () => ['---\nname: a\ndescription: b\n---\nbody\n', { 'scripts/x.sh': new TextEncoder().encode('echo') }, { now: () => Date.parse('2026-01-01T00:00:00Z') }],
    exportSkillMd: () => [f.stored],
    modelFamily: () => ['claude-sonnet-4-5'],
    selectVariant: () => [[{ kind: 'prompt_template', name: 'F', content: 'x', metadata: { model_family: 'claude' } }], 'claude-sonnet-4-5'],
    openSkillStore: () => [{ backend: 'memory', name: 'x2', now: () => Date.parse('2026-01-01T00:00:00Z') }],
    systemSkills: () => [],
    seedSkillSpecs: () => [{ version: 1, skills: [] }],
    'store.list': () => [{ source: 'user', tags: ['a'] }],
    'store.get': () => [f.skill.id],
    'store.summary': () => ['Greeter'],
    'store.getByName': () => ['Greeter'],
    'store.getArtifacts': () => [f.skill.id, ['prompt_template']],
    'store.getArtifact': () => [f.stored.artifacts[0].id],
    'store.create': () => [{ name: 'Other', description: 'd', artifacts: [{ kind: 'example', name: 'E', content: 'x' }] }],
    'store.put': () => [{ name: 'Other2', description: 'd', artifacts: [] }],
    'store.update': () => [{ ...f.stored, artifacts: undefined, description: 'changed' }],
    'store.delete': async () => [(await f.store.create({ name: `Gone ${Math.random()}`, description: 'd', artifacts: [] })).id],
    'store.addArtifact': () => [{ skill_id: f.skill.id, kind: 'example', name: 'E2', content: 'x' }],
    'store.updateArtifact': () => [{ ...f.stored.artifacts[0], content: 'Hello {{ who }}!' }],
    'store.deleteArtifact': async () => [(await f.store.addArtifact({ skill_id: f.skill.id, kind: 'example', name: `E${Math.random()}`, content: 'x' })).id],
    'store.recordTrace': () => [{ skill_id: f.skill.id, artifact_id: f.stored.artifacts[0].id, artifact_kind: 'prompt_template', session_id: 's', started_at: '2026-01-01T00:00:00Z', rendered_input: 'x', raw_output: 'y', duration_ms: 3 }],
    'store.exportTraces': () => [{ skillId: f.skill.id, format: 'jsonl' }],
    'store.tracePage': () => [{ sessionId: 's', skillId: f.skill.id, after: 's/2026-01-01T00:00:00Z/trace-1', pageSize: 10 }],
    'store.tracePages': () => [{ sessionId: 's', pageSize: 10 }],
    'store.traces': () => [{ skillId: f.skill.id }],
    'store.seed': () => [{ version: 1, skills: [] }],
    'store.skillSpecs': () => [],
    'new SkillIndex': () => [[{ id: 'a', name: 'release-notes', description: 'Writes release notes' }], { vectors: [[1, 0]] }],
    'SkillIndex#setVectors': () => [[[1, 0]]],
    'SkillIndex#match': () => ['release notes', { k: 2, vector: [1, 0], blend: 0.5 }],
    'SkillIndex#decide': () => ['release notes', { policy: { maxSkills: 1 } }],
    'new SkillCatalog': () => [f.store, f.store, { embed: async (texts) => texts.map(() => [1, 0]) }],
    'SkillCatalog#list': () => [],
    'SkillCatalog#get': () => ['Greeter'],
    'SkillCatalog#load': () => ['Greeter', ['prompt_template']],
    'SkillCatalog#index': () => [{ refresh: true }],
    'SkillCatalog#match': () => ['hello', { k: 2 }],
    'SkillCatalog#decide': () => ['hello', { policy: { maxSkills: 1 } }],
    'SkillCatalog#skillSpecs': () => [],
    'SkillCatalog#refresh': () => [],
    'SkillCatalog#syncMarketplace': () => ['http://127.0.0.1:9/market.json', { fetch: async () => new Response('{"skills":[]}'), now: () => Date.parse('2026-01-01T00:00:00Z') }],
    decide: () => ['release notes', [{ id: 'a', name: 'a', score: 0.9 }], { maxSkills: 1 }],
  };
  if (!pl.compose) return s;
  const gw = f.gateway;
  Object.assign(s, {
    compose: () => [{ skill_package: FRAMED, user_request: 'x', thread_id: 't' }, { adapter: f.model }],
    prepareSkill: () => [FRAMED],
    'new PreparedSkill': () => [FRAMED],
    'PreparedSkill#compose': () => [{ user_request: 'x', thread_id: 't' }, { adapter: f.model }],
    nestedRequest: () => [{ skill_package: FRAMED, user_request: 'x', thread_id: 't' }, FRAMED, { userRequest: 'y' }],
    lowerComposition: () => [f.composition, { provider: 'anthropic', resolve: () => ({ text: 'x' }) }],
    lowerCompositionAsync: () => [f.composition, { provider: 'anthropic', resolve: async () => ({ text: 'x' }) }],
    authoringTools: () => [f.store],
    'tools.call': () => ['list_skills', { source: 'user' }, { composition: f.authoring }],
    'handlers.create_skill': () => [{ name: `Made ${Math.random()}`, description: 'd' }, { composition: f.authoring }],
    'handlers.update_skill': () => [{ name: 'Greeter', framing: 'x' }, { composition: f.authoring }],
    'handlers.list_skills': () => [{ source: 'user' }, { composition: f.authoring }],
    'handlers.add_artifact': () => [{ skill: 'Greeter', kind: 'example', name: `E${Math.random()}`, content: 'x' }, { composition: f.authoring }],
    runArtifact: () => [{ store: f.store, skill: 'Greeter', artifact: 'Hello', parameters: { who: 'a' }, adapter: f.model, sessionId: 's', traces: f.store, now: () => Date.parse('2026-01-01T00:00:00Z') }],
    runSkill: () => [{ store: f.store, skill: 'Greeter', artifacts: ['Hello'], parameters: { who: 'a' }, adapter: f.model, traces: null }],
    optimizeDspy: () => [{ store: f.store, skill: 'Greeter', executors: { dspy: { execute: async () => 'x', optimize: async () => ({ state: 1 }), manifest: async () => ({ version: '1' }) } }, traces: f.store }],
    staleDspy: () => [{ store: f.store, executors: { dspy: { execute: async () => 'x', manifest: async () => ({ version: '1' }) } } }],
    verifyInvocation: () => [f.composition.invocation_record, { store: f.store, memory: async () => [] }],
    validateSkillSpec: () => [f.system[0], { tools: TOOLS }],
    loadSkillSpecs: () => [[{ path: 'a.json', text: JSON.stringify(f.system[0]) }], { tools: TOOLS }],
    buildSkillRegistry: () => [f.system, { tools: TOOLS, overrides: [] }],
    'new Arbiter': () => [f.registry, { retries: 1 }],
    'Arbiter#start': () => ['core', 'skill-builder', {}],
    'Arbiter#propose': () => ['core', { type: 'tool', name: 'choir.memory.query', input: {} }],
    'Arbiter#cancel': () => ['core'],
    'Arbiter#run': () => ['core'],
    'Arbiter#log': () => ['core'],
    'Arbiter#stepContext': () => ['core', { note: 1 }],
    'Arbiter#stepOffer': () => ['core', [{ name: 'choir.memory.query', description: 'q', input_schema: { type: 'object' } }]],
    'Arbiter#proposeCall': () => ['core', { name: 'choir.memory.query', input: {} }, offer().stepOffer('core')],
    'Arbiter#hierarchy': () => ['s'],
    'Arbiter#replay': () => [offer().log('core')],
    toMermaid: () => [f.system[0]],
    compositionSpec: () => [f.composition],
    openSession: () => [{ store: f.store, registry: f.registry, id: 's2', now: () => 1, retries: 1 }],
    sessionMachines: () => [],
    listProposals: () => [f.store, { status: 'pending' }],
    approveProposal: () => [f.store, 'p-missing', { registry: f.registry, by: 'me', now: () => 1 }],
    rejectProposal: () => [f.store, 'p-missing', { by: 'me', reason: 'no', now: () => 1 }],
    approvalLog: () => [f.store],
    installApproved: () => [f.store, f.registry],
    'session.laneEvent': () => ['core', 'request'],
    'session.stop': () => [],
    'session.startSkill': () => ['core', 'skill-builder', {}],
    'session.propose': () => ['core', { type: 'tool', name: 'choir.memory.query', input: {} }],
    'session.proposeCall': () => ['core', { name: 'choir.memory.query', input: {} }, offer().stepOffer('core')],
    'session.cancel': () => ['core'],
    'session.heartbeat': () => [],
    'session.stale': () => [1000],
    'session.hierarchy': () => [],
    'session.log': () => [],
    'session.lane': () => ['core'],
    'session.run': () => ['core'],
    'session.stepContext': () => ['core', {}],
    'session.stepOffer': () => ['core', []],
    'registry.names': () => [],
    'registry.spec': () => ['skill-builder'],
    'registry.summary': () => [],
    'new ContractRegistry': () => [],
    'ContractRegistry#register': () => [{ ...CONTRACT, version: '1.1.0' }],
    'ContractRegistry#unregister': () => ['look-up', '9.9.9'],
    'ContractRegistry#has': () => ['look-up'],
    'ContractRegistry#list': () => [],
    'ContractRegistry#pins': () => [],
    'ContractRegistry#get': () => ['look-up', '1.0.0'],
    'ContractRegistry#resolve': () => ['look-up', { ...CALL, now: () => 1 }],
    'ContractRegistry#setCanary': () => ['look-up', '1.0.0', 'chat', 10],
    'ContractRegistry#setSunset': () => ['look-up', '1.0.0', null],
    'ContractRegistry#pin': () => ['chat', 'look-up', '^1'],
    'ContractRegistry#plannerSection': () => ['look a key up', { provider: 'anthropic', ...CALL, now: () => 0 }],
    'ContractRegistry#setVectors': () => [{ 'look-up': [1, 0] }],
    'ContractRegistry#overlapAudit': () => [{ threshold: 0.9 }],
    'ContractRegistry#review': () => [gw.records(), { minCallsPerDay: 1 }],
    checkContract: () => [CONTRACT],
    applyGatewayState: () => [{ op: 'settle', key: 'x' }, [null], 1],
    recordsToOtel: () => [gw.records()],
    memoryState: () => [],
    indexedDbState: () => [{ name: 'g' }],
    durableObjectState: () => [{ idFromName: (n) => n, get: () => ({ fetch: async () => new Response('{}') }) }, {}],
    'new GatewayStateObject': () => [{ storage: { get: async () => new Map(), put: async () => {}, delete: async () => {}, transaction: async (fn) => fn({ get: async () => undefined, put: async () => {} }) } }],
    'GatewayStateObject#fetch': () => [new Request('http://do/apply', { method: 'POST', body: '{}' })],
    createGateway: () => [{ registry: f.contracts, handlers: { 'look-up': async () => ({ value: 'v' }) }, state: pl.memoryState(), now: () => 1 }],
    'new Gateway': () => [{ registry: f.contracts, handlers: {}, state: pl.memoryState() }],
    'Gateway#call': () => ['look-up', { key: 'a' }, { ...CALL, signal: new AbortController().signal }],
    'Gateway#records': () => [],
    'Gateway#otel': () => [],
    'Gateway#verify': () => ['look-up'],
    'Gateway#sequence': () => [[{ name: 'look-up', input: { key: 'a' } }, { name: 'look-up', input: (prev) => ({ key: prev.value }) }], CALL],
    'Gateway#parallel': () => [[{ name: 'look-up', input: { key: 'a' } }, { name: 'look-up', input: { key: 'b' } }], CALL],
    'Gateway#conditional': () => [{ name: 'look-up', input: { key: 'a' } }, () => ({ name: 'look-up', input: { key: 'b' } }), CALL],
    'Gateway#speculate': () => ['look-up', { key: 'a' }, CALL],
  });
  return s;
}

/** The receivers of instance methods (`Class#m` and `object.m`), made fresh per call. */
function receivers(pl, f) {
  const r = {
    CommandCatalog: () => {
      const c = new pl.CommandCatalog();
      c.register({ name: 'deploy', description: 'Deploy', body: 'Deploy $1.' });
      return c;
    },
    Conversation: () => {
      const c = new pl.Conversation({ options: { provider: 'anthropic' } });
      c.append(MESSAGE);
      return c;
    },
    ResponseParser: () => new pl.ResponseParser('openai-chat'),
    ResponseStream: () => f.adapter.send(pl.lower(MESSAGE, { provider: 'openai-chat', model: 'gpt-4o' })),
    EventStreamLog: () => new pl.EventStreamLog({ keep: () => {} }),
    Chat: async (m) => {
      const store = await pl.openMessageStore({ backend: 'memory', name: `c${Math.random()}` });
      const c = await pl.Chat.open({ store, session: 'chat', adapter: f.adapter, settings: { provider: 'openai-chat', model: 'gpt-4o' } });
      if (m === 'edit' || m === 'regenerate') await c.send('hi');
      return c;
    },
    SkillIndex: () => new pl.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]),
    SkillCatalog: () => new pl.SkillCatalog(f.store, f.store),
    messages: () => f.messages,
    store: () => f.store,
    adapter: () => f.adapter,
  };
  if (!pl.compose) return r;
  Object.assign(r, {
    PreparedSkill: () => pl.prepareSkill(FRAMED),
    Arbiter: (m) => {
      const a = new pl.Arbiter(f.registry);
      if (m !== 'start') a.start('core', 'skill-builder', {});
      return a;
    },
    session: async (m) => {
      const s = await pl.openSession({ store: f.store, registry: f.registry, id: `s${Math.random()}`, now: () => 1 });
      if (m !== 'startSkill' && m !== 'laneEvent') await s.startSkill('core', 'skill-builder', {});
      return s;
    },
    registry: () => f.registry,
    tools: () => f.tools,
    handlers: () => f.tools.handlers,
    ContractRegistry: () => {
      const c = new pl.ContractRegistry();
      c.register(CONTRACT);
      return c;
    },
    Gateway: () => f.gateway,
    GatewayStateObject: () => new pl.GatewayStateObject({ storage: { get: async () => new Map(), put: async () => {}, delete: async () => {}, transaction: async (fn) => fn({ get: async () => undefined, put: async () => {} }) } }),
  });
  return r;
}

const SKIP_METHODS = new Set(['constructor', 'free', 'close', '__inner', 'class']);

/** Every callable of the entry and of the objects its functions hand back. */
async function callables(pl, f) {
  const out = [];
  const objects = receivers(pl, f);
  const methodsOf = (obj) => {
    const names = new Set();
    for (let p = obj; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const m of Object.getOwnPropertyNames(p)) {
        const d = Object.getOwnPropertyDescriptor(p, m);
        if (d && typeof d.value === 'function' && !SKIP_METHODS.has(m) && !m.startsWith('__')) names.add(m);
      }
    }
    return [...names];
  };
  for (const [name, v] of Object.entries(pl)) {
    if (typeof v !== 'function') continue;
    if (/^[A-Z]/.test(name)) {
      if (name === 'PromptloomError') continue;
      if (name !== 'ResponseStream') out.push({ name: `new ${name}`, call: (args) => new v(...args) });
      for (const m of Object.getOwnPropertyNames(v)) {
        if (typeof v[m] === 'function' && !['length', 'name', 'prototype'].includes(m)) out.push({ name: `${name}.${m}`, call: (args) => v[m](...args) });
      }
      for (const m of methodsOf(v.prototype)) {
        out.push({ name: `${name}#${m}`, call: async (args) => {
          const o = await objects[name](m);
          return o[m](...args);
        } });
      }
    } else {
      out.push({ name, call: (args) => v(...args) });
    }
  }
  // Objects handed back by functions (not classes of the entry).
  for (const key of ['messages', 'store', 'adapter', 'session', 'registry', 'tools', 'handlers']) {
    if (!objects[key] || (key !== 'adapter' && !pl.openSkillStore)) continue;
    const o = await objects[key]();
    for (const m of methodsOf(o)) {
      out.push({ name: `${key}.${m}`, call: async (args) => (await objects[key](m))[m](...args) });
    }
  }
  return out;
}

/**
 * The suite: `calls` mutated calls per callable (and the valid call once); returns
 * `{ calls, failures, missing, unhandled, before, after }`.
 */
export async function shapedBoundary(pl, { seed = 11, calls = 40, timeoutMs = 3000, attribute = false } = {}) {
  const r = rng(seed);
  const failures = [];
  const unnamed = [];
  const refused = [];
  // Rejections nobody listened to: each host reports one when the microtasks run out, and
  // takes it back if a handler comes later (`rejectionhandled`); what is left at the end is
  // unhandled for good.
  const pending = new Map();
  let current = '';
  const onUnhandled = (a, b) => {
    const promise = b instanceof Promise ? b : a && a.promise;
    const reason = b instanceof Promise ? a : a && 'reason' in a ? a.reason : a;
    pending.set(promise ?? {}, `during ${current}: ${reason && reason.code ? reason.code : ''} ${String(reason && reason.message ? reason.message : reason).slice(0, 200)}`);
    if (a && typeof a.preventDefault === 'function') a.preventDefault();
  };
  const onHandled = (a) => pending.delete(a instanceof Promise ? a : a && a.promise);
  const proc = globalThis.process;
  const node = !!(proc && typeof proc.on === 'function');
  if (node) {
    proc.on('unhandledRejection', onUnhandled);
    proc.on('rejectionHandled', onHandled);
  } else if (typeof globalThis.addEventListener === 'function') {
    globalThis.addEventListener('unhandledrejection', onUnhandled);
    globalThis.addEventListener('rejectionhandled', onHandled);
  }
  let made = 0;
  const before = await reference(pl);
  const f = await fixtures(pl);
  const table = shapes(pl, f);
  const list = await callables(pl, f);
  const missing = list.filter((c) => !table[c.name]).map((c) => c.name);
  const judge = (name, what, got) => {
    if (got === 'ok') return;
    if (got === 'timeout') {
      failures.push(`${name}(${what}): did not settle in ${timeoutMs} ms`);
      return;
    }
    const e = got.e;
    const code = e && e.code;
    // A trap is survived (a fresh instance), but the objects made before it are lost: no
    // input may cause one.
    if (!(e instanceof pl.PromptloomError) || !ERROR_CODES.includes(code) || code === 'InstanceLost' || code === 'Internal' || /fresh (wasm )?instance serves the next call/.test(String(e.message))) {
      failures.push(`${name}(${what}): ${e && e.constructor && e.constructor.name}: ${code} ${String(e && e.message).slice(0, 200)}`);
    } else if (!(e.details && typeof e.details.path === 'string') && !/\(at [^)]+\)/.test(e.message)) {
      unnamed.push(`${name}(${what}): ${code} ${String(e.message).slice(0, 200)}`);
    }
  };
  try {
    for (const c of list) {
      const shape = table[c.name];
      if (!shape) continue;
      // The valid call must itself pass or fail with a coded error.
      made += 1;
      const valid = await attempt(async () => c.call(await shape()), timeoutMs);
      if (valid !== 'ok') refused.push(`${c.name}: ${valid === 'timeout' ? 'timeout' : `${valid.e && valid.e.code} ${String(valid.e && valid.e.message).slice(0, 160)}`}`);
      judge(c.name, 'valid', valid);
      for (let i = 0; i < calls; i++) {
        const args = await shape();
        const all = [];
        places(args, [], all, 5, new Set());
        // Past the end of the argument list too (an extra or a missing argument).
        const spots = [...all.filter((p) => p.length > 0), [args.length]];
        const path = r.pick(spots);
        const pool = hostiles();
        const remove = path.length > 1 && r.below(6) === 0;
        const value = r.pick(pool);
        const mutated = mutate(args, path, value, remove);
        made += 1;
        current = `${c.name}(${describe(path, value, remove)})`;
        judge(c.name, describe(path, value, remove), await attempt(async () => c.call(mutated), timeoutMs));
        // Each call's orphaned rejections surface before the next call (slower; for finding them).
        if (attribute) await new Promise((resolve) => setTimeout(resolve, 0));
      }
    }
    // Let rejections nobody listened to surface (and late handlers take them back).
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    if (node) {
      proc.off('unhandledRejection', onUnhandled);
      proc.off('rejectionHandled', onHandled);
    } else if (typeof globalThis.removeEventListener === 'function') {
      globalThis.removeEventListener('unhandledrejection', onUnhandled);
      globalThis.removeEventListener('rejectionhandled', onHandled);
    }
  }
  const unhandled = [...pending.values()];
  const after = await reference(pl);
  return { calls: made, callables: list.length, failures, unnamed, refused, missing, unhandled, before, after };
}
