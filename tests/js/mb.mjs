import { performance } from 'node:perf_hooks';
import { lower } from 'promptloom';
const prose = 'Explain, in two sentences, how the lowering chain turns a multipart user message into a provider request, and why the output must be byte-stable for prompt caching to work.';
const msg = { parts: [{ type: 'text', text: prose }] };
const source = Array.from({ length: 400 }, (_, i) => `  const v${i} = compute(${i}, "value ${i}") // line ${i + 1}`).join('\n');
const code = { parts: [{ type: 'text', text: 'Why does this fail?' }, { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/compute.ts', range: { start: 100, end: 140 } } }] };
function t(name, f, n = 20000) { for (let i = 0; i < 1000; i++) f(); const s = performance.now(); for (let i = 0; i < n; i++) f(); console.log(name, ((performance.now() - s) * 1000 / n).toFixed(2), 'us'); }
t('text gemini', () => lower(msg, { provider: 'gemini' }).body);
t('stringify msg', () => JSON.stringify(msg));
t('code gemini', () => lower(code, { provider: 'gemini', resolve: () => source }).body, 2000);
t('stringify answers', () => JSON.stringify({1:{text:source}}), 2000);
