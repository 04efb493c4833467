// Type-level tests of the package's public types (compiled with `tsc --noEmit --strict`).
import { lower, defaultCapabilities, PromptloomError, type Lowered, type UserMessage, type LoweringReport } from 'promptloom';

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
    const code: 'InvalidMessage' | 'InvalidOptions' | 'UnresolvedCommand' | 'InvalidRange' | 'InvalidData' | 'EmptyMessage' | 'Internal' = e.code;
    const path: string | undefined = e.details.path;
    void code, path;
  }
}
void rule, pending, max;
