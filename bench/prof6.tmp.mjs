import { Conversation } from 'promptloom';
import { performance } from 'node:perf_hooks';
const src = await import('node:fs').then(f => f.readFileSync('conversation.mjs', 'utf8'));
const fnText = src.slice(src.indexOf('// ---- corpus'), src.indexOf('const tools ='));
const mod = new Function('Buffer', fnText + '; return { conversation, question };')(Buffer);
const tools = [{ name: 'search', description: 'Search the code', parameters: { type: 'object', properties: { path: { type: 'string' }, query: { type: 'string' } }, required: ['query'] } }];
let k = 0;
for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini', 'anthropic', 'openai-chat']) {
  const n = 301;
  const { ours } = mod.conversation(n);
  const conv = new Conversation();
  for (const t of ours) conv.append(t);
  const options = { provider, system: 'x', tools, params: { model: 'gpt-x' } };
  conv.lower(options);
  const N = 3000;
  const s = performance.now();
  for (let i = 0; i < N; i++) {
    conv.append({ role: 'user', parts: [{ type: 'text', text: mod.question(1e6 + k++) }] });
    conv.lower(options).body;
    conv.truncate(n - 1);
  }
  console.log(provider, ((performance.now() - s) * 1000 / N).toFixed(1), 'µs', JSON.stringify(conv.cacheStats()));
  conv.free();
}
