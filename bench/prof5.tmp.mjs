import { Conversation } from 'promptloom';
import { performance } from 'node:perf_hooks';
const src = await import('node:fs').then(f => f.readFileSync('conversation.mjs', 'utf8'));
const fnText = src.slice(src.indexOf('// ---- corpus'), src.indexOf('const tools ='));
const mod = new Function('Buffer', fnText + '; return { conversation, question };')(Buffer);
const tools = [{ name: 'search', description: 'Search the code', parameters: { type: 'object', properties: { path: { type: 'string' }, query: { type: 'string' } }, required: ['query'] } }];
const n = Number(process.argv[3] ?? 301);
const { ours } = mod.conversation(n);
const conv = new Conversation();
for (const t of ours) conv.append(t);
const options = { provider: process.argv[2] ?? 'openai-chat', system: 'x', tools, params: { model: 'gpt-x' } };
conv.lower(options);
let k = 0;
const N = Number(process.env.NN ?? 2000);
let ta = 0, tl = 0, tt = 0;
for (let i = 0; i < N + 100; i++) {
  const t0 = performance.now();
  conv.append({ role: 'user', parts: [{ type: 'text', text: mod.question(1e6 + k++) }] });
  const t1 = performance.now();
  const b = conv.lower(options).body;
  const t2 = performance.now();
  conv.truncate(n - 1);
  const t3 = performance.now();
  if (i >= 100) { ta += t1 - t0; tl += t2 - t1; tt += t3 - t2; }
}
console.log(`n=${n} append ${(ta * 1000 / N).toFixed(1)} µs, lower ${(tl * 1000 / N).toFixed(1)} µs, truncate ${(tt * 1000 / N).toFixed(1)} µs`);
