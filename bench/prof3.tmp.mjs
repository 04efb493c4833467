import { Conversation } from 'promptloom';
import { performance } from 'node:perf_hooks';
const q = (i) => `Question ${i}: why does compute() return a stale value when the cache is warm, and what would you change?`;
const a = (i) => `Answer ${i}: the cache key omits the version. `.repeat(8);
const conv = new Conversation();
for (let i = 0; i < 150; i++) { conv.append({ role: 'user', parts: [{ type: 'text', text: q(i) }] }); conv.append({ role: 'assistant', parts: [{ type: 'text', text: a(i) }] }); }
const opts = { provider: 'openai-chat' };
conv.lower(opts);
const t = (name, f, n = 2000) => { for (let i = 0; i < 50; i++) f(); const s = performance.now(); for (let i = 0; i < n; i++) f(); console.log(name, ((performance.now() - s) * 1000 / n).toFixed(1), 'µs'); };
t('lower again (no change)', () => conv.lower(opts).body.length);
let k = 0;
t('append only + truncate', () => { conv.append({ role: 'user', parts: [{ type: 'text', text: q(1e6 + k++) }] }); conv.truncate(300); });
t('append+lower+truncate', () => { conv.append({ role: 'user', parts: [{ type: 'text', text: q(1e6 + k++) }] }); conv.lower(opts); conv.truncate(300); });
console.log(conv.lower(opts).body.length);
