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
  const out = pl.lowerConversation(c.turns, { provider: 'openai-chat', resolve: async (req) => (req.type === 'file' ? file : null) });
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
