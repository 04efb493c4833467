// `promptloom/composer` first, then `promptloom`, in Deno: one instance serves both entries
// and nothing is replaced (a conversation made before the base entry loads carries on).
import assert from 'node:assert/strict';

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
const BODY = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}';

Deno.test('promptloom/composer then promptloom in Deno: one instance serves both', async () => {
  const comp = await import('promptloom/composer');
  const conv = new comp.Conversation();
  conv.append(MESSAGE);
  const core = await import('promptloom');
  assert.equal(core.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  assert.equal(conv.lower({ provider: 'anthropic' }).body, BODY);
  const lower = await import('promptloom/lower');
  assert.equal(lower.lower(MESSAGE, { provider: 'anthropic' }).body, BODY);
  assert.equal(conv.lower({ provider: 'anthropic' }).body, BODY);
});
