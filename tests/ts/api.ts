// Type-level tests of the package's public types (compiled with `tsc --noEmit --strict`).
import {
  lower, lowerMany, defaultCapabilities, PromptloomError, CommandCatalog, parseInput, submit, openMessageStore, inspect,
  type Lowered, type UserMessage, type LoweringReport, type ErrorCode, type Submission, type MessageStore, type Completion, type Part, type CommandPart,
} from 'promptloom';

const message: UserMessage = {
  role: 'user',
  parts: [
    { type: 'text', text: 'hi' },
    { type: 'file-ref', ref: { kind: 'path', path: 'src/a.ts', range: { start: 1, end: 4 } } },
    { type: 'file-attachment', data: new Uint8Array([1, 2]), mime: 'image/png', name: 'a.png' },
    { type: 'editor-context', kind: 'selection', payload: { id: 'n1' }, emitted_at: 1 },
    { type: 'mention', target: { kind: 'skill', name: 'x' } },
    { type: 'future-part', text: 'kept' },
  ],
  metadata: { schema_version: 1 },
};

// A synchronous resolver gives a Lowered directly.
const sync: Lowered = lower(message, { provider: 'anthropic', resolve: () => 'text' });
const report: LoweringReport = sync.report;
const rule: string = report.blocks[0].rule;
// An async resolver gives a Promise.
const pending: Promise<Lowered> = lower(message, { provider: 'gemini', resolve: async () => new Uint8Array() });
// Options are checked.
// @ts-expect-error: not a provider
lower(message, { provider: 'bedrock' });
// @ts-expect-error: capabilities fields are typed
lower(message, { provider: 'gemini', capabilities: { images: { max_bytes: 'big' } } });
lower(message, { provider: 'openai-chat', capabilities: { images: { max_bytes: 1 } }, tools: [{ name: 't' }], params: { model: 'm' } });
const max: number = defaultCapabilities('openai-responses').images.max_bytes;

try {
  lower(message, { provider: 'anthropic' });
} catch (e) {
  if (e instanceof PromptloomError) {
    const code: ErrorCode = e.code;
    const path: string | undefined = e.details.path;
    void code, path;
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
    limits: { blob_threshold: 1 << 20 },
  });
  const history: UserMessage[] = await store.history();
  const lowered = await lower(done.message, { provider: 'gemini', store });
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
