// Conversations through the npm package in Node (memory and host-KV stores).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from 'promptloom';
import { conversationCases, conversationErrors } from './cases.mjs';
import { conversationConformance } from './conversation-conformance.mjs';
import { kv } from './host-kv.mjs';

const cases = { cases: conversationCases(), errors: conversationErrors() };

for (const [name, open] of [
  ['memory', () => pl.openMessageStore({ backend: 'memory' })],
  ['a host KV object', () => pl.openMessageStore({ backend: kv(), name: 'chat' })],
]) {
  test(`conversation conformance in Node (${name} store)`, async () => {
    const results = await conversationConformance(pl, cases, open);
    assert.ok(results.length >= 7, `${results.length} checks`);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  });
}

test('lowerConversation with an async resolver returns a Promise of the same body', async () => {
  const c = cases.cases.find((x) => x.name === 'user_turn_with_file_ref' && x.provider === 'openai-chat');
  const file = c.resolve[0]['1'].text;
  const out = pl.lowerConversationAsync(c.turns, { provider: 'openai-chat', resolve: async (req) => (req.type === 'file' ? file : null) });
  assert.equal(typeof out.then, 'function');
  assert.equal((await out).body, c.expected.body);
});

test('a Conversation report can be read until 8 more lowerings, then says so', () => {
  const conv = new pl.Conversation();
  conv.append({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
  const first = conv.lower({ provider: 'anthropic' });
  const seconds = [];
  for (let i = 0; i < 8; i++) seconds.push(conv.lower({ provider: 'gemini' }));
  assert.equal(seconds[7].report.provider, 'gemini');
  assert.throws(() => first.report, (e) => e instanceof pl.PromptloomError && e.code === 'InvalidOptions' && /read it before/.test(e.message));
  assert.equal(seconds[1].report.provider, 'gemini');
  conv.free();
});

test('a Conversation lowers with the options it was made with, and with others when given', () => {
  const c = conversationCases().find((x) => x.name === 'tool_round_trip' && x.provider === 'gemini');
  const other = conversationCases().find((x) => x.name === 'tool_round_trip' && x.provider === 'anthropic');
  const conv = new pl.Conversation({ options: { provider: 'gemini', ...c.options } });
  for (const t of c.turns) conv.append(t);
  assert.equal(conv.lower().body, c.expected.body);
  assert.equal(conv.lower({ provider: 'anthropic', ...other.options }).body, other.expected.body);
  assert.equal(conv.lower().body, c.expected.body);
  assert.throws(() => new pl.Conversation({ options: { provider: 'bedrock' } }).lower(), (e) => e.code === 'InvalidOptions');
  assert.throws(() => new pl.Conversation().lower(), (e) => e.code === 'InvalidOptions');
});

test('context fit: a growing chat keeps to its window, oldest turns out first, tool calls kept with their results', () => {
  const options = { model: 'chat-1', modelInfo: { contextWindow: 900, maxOutputTokens: 200 }, fit: { strategy: 'mark' }, tools: [{ name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object', properties: { w: { type: 'string' } } } }] };
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const conv = new pl.Conversation({ options: { provider, ...options } });
    const turns = [];
    const add = (t) => {
      turns.push(t);
      conv.append(t);
    };
    let dropped = 0;
    for (let i = 0; i < 30; i++) {
      add({ role: 'user', parts: [{ type: 'text', text: `Question ${i}: what does the word number ${i} mean in this text, and where else does it appear?` }] });
      if (i % 3 === 0) {
        add({ role: 'assistant', parts: [{ type: 'tool-call', id: `c${i}`, name: 'lookup', input: { w: `w${i}` } }] });
        add({ role: 'tool', parts: [{ type: 'tool-result', call_id: `c${i}`, name: 'lookup', output: { meaning: `meaning ${i}`, seen: [1, 2, 3] } }] });
      }
      add({ role: 'assistant', parts: [{ type: 'text', text: `Answer ${i}: it means what the glossary says, and it appears twice more.` }] });
      const out = conv.lower();
      // The same bytes as lowering the whole list statelessly.
      assert.equal(out.body, pl.lowerConversation(turns, { provider, ...options }).body, `${provider} turn ${i}`);
      const { fit } = out.report;
      assert.equal(fit.window, 900);
      assert.equal(fit.budget, 700);
      assert.ok(fit.tokens <= fit.budget, JSON.stringify(fit));
      assert.ok(fit.dropped.length >= dropped, 'a turn once left out stays out while the chat grows');
      dropped = fit.dropped.length;
      const repairs = out.report.repairs.filter((r) => r.code === 'TurnDropped').map((r) => r.turn);
      assert.deepEqual(repairs, fit.dropped);
      // The first turn kept is a user turn; no call is kept without its result or the reverse.
      if (dropped > 0) assert.equal(turns[fit.dropped.at(-1) + 1].role, 'user');
      assert.ok(!out.report.repairs.some((r) => r.code === 'MissingToolResult' || r.code === 'OrphanToolResult'));
      assert.equal(fit.marked, dropped > 0);
      if (dropped > 0) assert.match(out.body, new RegExp(`\\[${dropped} earlier turns of this conversation were left out`));
    }
    assert.ok(dropped > 40, `${provider}: ${dropped}`);
    // Without `fit`, nothing is left out and there is no estimate.
    const whole = pl.lowerConversation(turns, { provider, model: 'chat-1' });
    assert.equal(whole.report.fit, undefined);
    assert.equal(whole.report.repairs.filter((r) => r.code === 'TurnDropped').length, 0);
    conv.free();
  }
  assert.throws(() => pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'x' }] }], { provider: 'anthropic', model: 'unknown-9', fit: true }), (e) => e.code === 'InvalidOptions' && e.details.path === 'fit');
  assert.throws(() => pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'x' }] }], { provider: 'anthropic', model: 'claude-sonnet-4-5', fit: 'yes' }), (e) => e.code === 'InvalidOptions' && e.details.path === 'fit');
});

test('a text-only model gets images and PDFs as descriptors; the conversation cache tells the models apart', () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  const conv = new pl.Conversation();
  conv.append({ role: 'user', parts: [{ type: 'text', text: 'What is this?' }, { type: 'file-attachment', data: png, mime: 'image/png', name: 'a.png' }] });
  const seeing = conv.lower({ provider: 'openai-chat', model: 'gpt-4.1' });
  assert.match(seeing.body, /"image_url"/);
  const blind = conv.lower({ provider: 'openai-chat', model: 'o3-mini' });
  assert.doesNotMatch(blind.body, /"image_url"/);
  assert.match(blind.body, /not readable by this model directly/);
  assert.ok(blind.report.turns[0].warnings.some((w) => w.code === 'UnsupportedMedia'));
  // Back to the first model: its lowering again, byte for byte.
  assert.equal(conv.lower({ provider: 'openai-chat', model: 'gpt-4.1' }).body, seeing.body);
  // modelInfo says what the table does not know.
  assert.doesNotMatch(conv.lower({ provider: 'openai-chat', model: 'my-finetune', modelInfo: { vision: false } }).body, /"image_url"/);
  conv.free();
});
