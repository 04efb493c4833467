import { Conversation } from 'promptloom';
import { performance } from 'node:perf_hooks';
const src = await import('node:fs').then(f => f.readFileSync('conversation.mjs', 'utf8'));
const fnText = src.slice(src.indexOf('// ---- corpus'), src.indexOf('const tools ='));
const mod = new Function('Buffer', fnText + '; return { conversation, question };')(Buffer);
const tools = [{ name: 'search', description: 'Search the code', parameters: { type: 'object', properties: { path: { type: 'string' }, query: { type: 'string' } }, required: ['query'] } }];
let k = 0;
async function perOp(fn, ms) { let n = 0; const s = performance.now(); while (performance.now() - s < ms) { await fn(); n++; } return ((performance.now() - s) * 1000) / n; }
for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
  const n = 301;
  const { ours } = mod.conversation(n);
  const conv = new Conversation();
  for (const t of ours) conv.append(t);
  const options = { provider, system: 'x', tools, params: { model: 'gpt-x' } };
  conv.lower(options);
  const f = async () => { conv.append({ role: 'user', parts: [{ type: 'text', text: mod.question(1e6 + k++) }] }); const b = conv.lower(options).body; conv.truncate(n - 1); return b; };
  const r = [];
  for (let i = 0; i < 3; i++) r.push((await perOp(f, 200)).toFixed(1));
  console.log(provider, r.join(' '), JSON.stringify(conv.cacheStats()));
  conv.free();
}
