// Type-level tests of the package's public types (compiled with `tsc --noEmit --strict`).
import {
  lower, lowerAsync, lowerMany, lowerManyAsync, defaultCapabilities, PromptloomError, CommandCatalog, parseInput, submit, openMessageStore, inspect,
  type Lowered, type UserMessage, type LoweringReport, type ErrorCode, type ErrorClass, type Submission, type MessageStore, type Completion, type Part, type UnknownPart, type CommandPart,
  validateSkill, importPackage, importSkillMd, exportSkillMd, modelFamily, selectVariant, openSkillStore, SkillIndex, SkillCatalog,
  type SkillStore, type SkillPackage, type Skill, type SkillSummary, type SkillArtifact, type Problem, type CatalogEntry, type Recommendation, type SyncReport,
} from 'promptloom';

const message: UserMessage = {
  role: 'user',
  parts: [
    { type: 'text', text: 'hi' },
    { type: 'file-ref', ref: { kind: 'path', path: 'src/a.ts', range: { start: 1, end: 4 } } },
    { type: 'file-attachment', data: new Uint8Array([1, 2]), mime: 'image/png', name: 'a.png' },
    { type: 'editor-context', kind: 'selection', payload: { id: 'n1' }, emitted_at: 1 },
    { type: 'mention', target: { kind: 'skill', name: 'x' } },
    // A part type this version does not know is written through a cast (the union stays closed, so it narrows).
    { type: 'future-part', text: 'kept' } as UnknownPart as unknown as Part,
  ],
  metadata: { schema_version: 1 },
};

// A synchronous resolver gives a Lowered directly.
const sync: Lowered = lower(message, { provider: 'anthropic', resolve: () => 'text' });
const report: LoweringReport = sync.report;
const rule: string = report.blocks[0].rule;
// An async resolver takes the async form, which always gives a Promise.
const pending: Promise<Lowered> = lowerAsync(message, { provider: 'gemini', resolve: async () => new Uint8Array() });
const always: Promise<Lowered> = lowerAsync(message, { provider: 'gemini' });
// @ts-expect-error: the synchronous form takes a resolver that answers at once
lower(message, { provider: 'gemini', resolve: async () => new Uint8Array() });
const many: Promise<Array<Lowered | PromptloomError>> = lowerManyAsync([message], { provider: 'gemini', resolve: async (r) => (r.message === 0 ? 'x' : null) });
void [always, many];
// Options are checked.
// @ts-expect-error: not a provider
lower(message, { provider: 'bedrock' });
// @ts-expect-error: capabilities fields are typed
lower(message, { provider: 'gemini', capabilities: { images: { max_bytes: 'big' } } });
lower(message, { provider: 'openai-chat', capabilities: { images: { max_bytes: 1 } }, tools: [{ name: 't' }], model: 'm' });
// Custom tools and a provider's own tools beside functions.
lower(message, {
  provider: 'openai-responses',
  tools: [
    { name: 'read_file', inputSchema: { type: 'object' } },
    { type: 'custom', name: 'code_exec', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
    { type: 'provider', provider: 'openai-responses', tool: { type: 'apply_patch' } },
  ],
});
// @ts-expect-error: a provider tool names its provider
lower(message, { provider: 'openai-responses', tools: [{ type: 'provider', tool: { type: 'shell' } }] });
const max: number = defaultCapabilities('openai-responses').images.max_bytes;

try {
  lower(message, { provider: 'anthropic' });
} catch (e) {
  if (e instanceof PromptloomError) {
    const code: ErrorCode = e.code;
    const cls: ErrorClass = e.class;
    // @ts-expect-error: the classes are a closed set
    const other: typeof e.class = 'retryable';
    const path: string | undefined = e.details.path;
    void code, cls, other, path;
  }
}
void rule, pending, max;

// The compositor.
const catalog = new CommandCatalog();
catalog.register({ name: 'review', body: 'Review $1', arguments: [{ name: 'file', required: true }] });
catalog.register({ name: 'gh', kind: 'prompt', server: 'github' });
// @ts-expect-error: a prompt command needs its server
catalog.register({ name: 'gh', kind: 'prompt' });
catalog.registerMention({ name: 'frame' });
const rows: Completion[] = catalog.complete('/re', { limit: 5 });
const typed: Part[] = parseInput('/review a.ts @selection', { catalog });
async function compose(): Promise<void> {
  const store: MessageStore = await openMessageStore({ backend: 'indexeddb', name: 'chat' });
  const kv = await openMessageStore({ backend: { get: async () => null, put: async () => {}, delete: async () => {}, list: async () => [] } });
  const done: Submission = await submit({ parts: typed }, {
    store,
    catalog,
    mentions: { selection: () => ({ payload: { text: 'x' }, source: 'editor' }) },
    resolve: async (q) => (q.type === 'prompt' ? { messages: [] } : null),
    limits: { blobThreshold: 1 << 20 },
  });
  const history: UserMessage[] = await store.history();
  const lowered: Lowered = await lowerAsync(done.message, { provider: 'gemini', store });
  // @ts-expect-error: a store's blobs are read asynchronously
  lower(done.message, { provider: 'gemini', store });
  const views = await inspect(done.message, { provider: 'anthropic', store });
  const first = done.message.parts[0] as CommandPart;
  const outcome: string | undefined = first.resolved?.outcome;
  const all = lowerMany(history, { provider: 'openai-responses' });
  const firstBody: string | undefined = Array.isArray(all) && !(all[0] instanceof PromptloomError) ? all[0].body : undefined;
  void history, lowered, views, outcome, kv, firstBody;
  // @ts-expect-error: submit needs a store
  await submit({ parts: [] }, {});
}
void rows, compose;

// ---- skills ----
async function skills(): Promise<void> {
  const ws: SkillStore = await openSkillStore({ backend: 'indexeddb', name: 'ws', now: () => Date.now() });
  // @ts-expect-error: one shape of time, a clock answering epoch milliseconds
  void openSkillStore({ now: () => new Date().toISOString() });
  const acc: SkillStore = await openSkillStore();
  const pkg: SkillPackage = {
    name: 'Checker',
    description: 'Finds contradictions.',
    trigger_phrases: ['are there any contradictions'],
    metadata: { framing: { artifact: 'Check' }, parameters: { type: 'object' }, interrupts: [{ name: 'on_ambiguous_input', when: { parameter: 'x' } }] },
    artifacts: [
      { kind: 'prompt_template', name: 'Check', content: '{{ x }}' },
      { kind: 'description', name: 'When', content: 'Use it.', metadata: { include_when: { any: [{ scope: 'workspace' }, 'never'] } } },
      { kind: 'dspy_module', name: 'D', content: '{"template_id":"predict"}', metadata: { fallback_artifact: 'Check', assertions: [{ type: 'length', min: 1 }] } },
    ],
  };
  // @ts-expect-error: an artifact kind outside the six
  const bad: SkillPackage = { name: 'x', description: 'y', artifacts: [{ kind: 'recipe', name: 'r', content: '' }] };
  const v: { valid: boolean; problems: Problem[] } = validateSkill(pkg);
  const { skill, warnings } = importPackage(pkg);
  const summary: SkillSummary = await acc.create(skill);
  const back: Skill | null = await acc.get(summary.id);
  const arts: SkillArtifact[] = await acc.getArtifacts(skill.id, ['prompt_template', 'example']);
  const md = importSkillMd('---\nname: a\ndescription: b\n---\n', { 'scripts/x.py': new Uint8Array([1]) }, { dir: 'a' });
  const out: { text: string; files: Record<string, string | Uint8Array>; dropped: Problem[] } = exportSkillMd(md.skill);
  const variant: SkillArtifact | undefined = selectVariant(arts, 'claude-opus-4');
  const catalog = new SkillCatalog(ws, acc, { embed: async (texts) => texts.map(() => [0, 1]) });
  const entries: CatalogEntry[] = await catalog.list();
  const recs: Recommendation[] = await catalog.match('contradictions?', { k: 3 });
  const tier: 'exact' | 'scored' | undefined = recs[0]?.tier;
  const report: SyncReport = await catalog.syncMarketplace('https://example.test/catalog.json');
  const ix = new SkillIndex(entries);
  const sync: Recommendation[] = ix.match('contra', { prefix: true });
  const family: string = modelFamily('gpt-4o');
  void bad, v, warnings, back, out, variant, tier, report, sync, family;
}
void skills;

// Conversations.
import { lowerConversation, lowerConversationAsync, Conversation, type Turn, type LoweredConversation, type ConversationReport } from 'promptloom';
const turns: Turn[] = [
  { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
  message,
  { role: 'assistant', parts: [{ type: 'reasoning', text: 't', signature: 's', provider: 'anthropic' }, { type: 'tool-call', id: 'c1', name: 'read', input: { path: 'a' } }] },
  { role: 'tool', parts: [{ type: 'tool-result', call_id: 'c1', output: [{ type: 'text', text: 'A' }], is_error: false }] },
];
const conv: LoweredConversation = lowerConversation(turns, { provider: 'anthropic', cache: { ttl: '1h' } });
const creport: ConversationReport = conv.report;
const mapped: string | undefined = creport.ids[0]?.to;
const later: Promise<LoweredConversation> = lowerConversationAsync(turns, { provider: 'gemini', resolve: async () => 'x' });
// @ts-expect-error: the synchronous form takes a resolver that answers at once
lowerConversation(turns, { provider: 'gemini', resolve: async () => 'x' });
// @ts-expect-error: not a cache option
lowerConversation(turns, { provider: 'anthropic', cache: { ttl: '2h' } });
// @ts-expect-error: not a role
const badTurn: Turn = { role: 'bot', parts: [] };
const chat = new Conversation({ cacheBytes: 1 << 20 });
// Without a store, append answers at once; with one, a Promise; appendAsync always a Promise.
const index: number = chat.append(turns[0]);
const asyncIndex: Promise<number> = chat.appendAsync(turns[0], { resolve: async () => 'x' });
async function persisted(store: MessageStore): Promise<number> {
  const kept = new Conversation({ store, session: 's' });
  const loaded = await Conversation.load({ store });
  // @ts-expect-error: a persisted conversation's append answers with a Promise
  const wrong: number = kept.append(turns[0]);
  void wrong;
  return (await kept.append(turns[0])) + (await loaded.append(turns[0]));
}
void [asyncIndex, persisted, chat instanceof Conversation];
const body: string = chat.lower({ provider: 'openai-responses' }).body;
void [creport, mapped, later, badTurn, index, body];

// The response side.
import { createResponseParser, parseResponse, providerError, createAdapter, type ResponseEvent, type ResponseTurn, type Adapter, type Usage } from 'promptloom';
const parser = createResponseParser('anthropic');
const evs: ResponseEvent[] = parser.push(new Uint8Array([100, 97]));
for (const ev of evs) {
  if (ev.type === 'text-delta') { const t: string = ev.text; const at: number = ev.part; void t, at; }
  if (ev.type === 'tool-call-end') { const input: unknown = ev.input; void input; }
  if (ev.type === 'error') { const code: ErrorCode = ev.code; void code; }
}
const finalTurn: ResponseTurn = parser.finish();
const used: Usage | undefined = finalTurn.metadata.usage;
chat.append(finalTurn);
// @ts-expect-error: not a provider
createResponseParser('bedrock');
const whole: ResponseTurn = parseResponse('gemini', { candidates: [] });
const perr: PromptloomError = providerError('openai-chat', { status: 429, headers: new Headers() });
const adapter: Adapter = createAdapter({ provider: 'gemini', model: 'gemini-2.5-flash', apiKey: 'k', retry: { maxRetries: 3 } });
async function stream() {
  const s = adapter.send(chat.lower({ provider: 'gemini' }), { signal: new AbortController().signal, onRetry: (r) => { const ms: number = r.delayMs; void ms; } });
  for await (const ev of s) { const type: ResponseEvent['type'] = ev.type; void type; }
  const t: ResponseTurn = await s.turn;
  const text: string = await s.text();
  void t, text;
}
void [used, whole, perr, stream];
import { runAgent, Conversation as Conv2, type AgentResult } from 'promptloom';
async function agent() {
  const r: AgentResult = await runAgent({ conversation: new Conv2(), adapter, tools: [{ name: 'search', inputSchema: { type: 'object' } }], handlers: { search: async (input) => `found ${input.query}` }, lower: { provider: 'gemini' }, maxSteps: 4 });
  const stop: 'final' | 'arbiter' | 'max-steps' | 'aborted' = r.stop;
  void stop;
}
void agent;

// Objects holding wasm memory: free() now, or `using` (Symbol.dispose).
function scoped(): string {
  using chat2 = new Conversation();
  chat2.append({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
  using commands = new CommandCatalog();
  const d: Disposable = chat2;
  void d;
  return chat2.lower({ provider: 'anthropic' }).body + commands.list().commands.length;
}
void scoped;

// Part unions narrow on `type`.
function paths(m: UserMessage, t: import('promptloom').AssistantTurn): string[] {
  const out: string[] = [];
  for (const p of m.parts) {
    if (p.type === 'file-ref' && p.ref.kind === 'path') out.push(p.ref.path);
    else if (p.type === 'text') out.push(p.text);
    else if (p.type === 'command') out.push(p.id);
  }
  for (const p of t.parts) if (p.type === 'tool-call') out.push(p.name);
  const unknown = { type: 'sketch', strokes: 3 } as import('promptloom').UnknownPart as unknown as Part;
  void unknown;
  return out;
}
void paths;

// Tool inputs typed from their schema: a zod schema (Standard Schema) types the handler.
import { z } from 'zod';
async function typedTools(adapter: import('promptloom').Adapter): Promise<void> {
  await runAgent({
    conversation: new Conv2(),
    adapter,
    tools: [
      { name: 'search', description: 'Searches.', inputSchema: z.object({ query: z.string(), limit: z.number().optional() }) },
      { name: 'plain', inputSchema: { type: 'object' } },
    ],
    handlers: {
      search: async ({ query, limit }) => `${query.toUpperCase()} ${limit ?? 0}`,
      plain: async (input) => input,
      // @ts-expect-error: not a tool of this run
      other: async () => 1,
    },
  });
  await runAgent({
    conversation: new Conv2(),
    adapter,
    tools: [{ name: 'n', inputSchema: z.object({ n: z.number() }) }],
    // @ts-expect-error: `n` is a number
    handlers: { n: async ({ n }: { n: string }) => n },
  });
}
void typedTools;

// Chat: the snapshot for useSyncExternalStore, typed messages and parts, tools typed as runAgent's.
import { Chat, relayAdapter, openMessageStore as openStore2, type ChatSnapshot, type ChatMessage, type ChatOutcome } from 'promptloom';
async function chatUsage(adapter: import('promptloom').Adapter): Promise<void> {
  const store = await openStore2({ backend: 'indexeddb', name: 'editor' });
  const chat = await Chat.open({
    store,
    session: 'chat-1',
    adapter,
    settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 1024 },
    tools: [{ name: 'search', inputSchema: z.object({ query: z.string() }), needsApproval: true }],
    handlers: { search: async ({ query }) => query.length },
  });
  const subscribe: (l: () => void) => () => void = chat.subscribe;
  const snapshot: ChatSnapshot = chat.getSnapshot();
  void subscribe;
  const shown: readonly ChatMessage[] = snapshot.pending ? [...snapshot.messages, snapshot.pending] : snapshot.messages;
  for (const m of shown) {
    for (const p of m.parts) {
      if (p.type === 'tool-call' && 'state' in p && p.state === 'approval-requested') chat.approve(p.id, { approve: true });
    }
  }
  const out: ChatOutcome = await chat.send('hello');
  if (out.stop === 'error') console.log(out.error?.code);
  await chat.edit(shown[0].id, [{ type: 'text', text: 'again' }]);
  await chat.regenerate();
  chat.stop();
  const relayed = new Chat({ store, endpoint: '/chat', settings: { provider: 'openai-chat', model: 'gpt-4.1' } });
  await relayed.ready;
  const a = relayAdapter({ endpoint: new URL('https://example.test/chat'), provider: 'gemini' });
  void a;
  // @ts-expect-error: settings need a provider
  new Chat({ store, adapter, settings: { model: 'x' } });
}
void chatUsage;
