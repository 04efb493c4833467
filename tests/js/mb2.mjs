import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import * as core from '../../pkg/dist/wasm/promptloom.js';
core.initSync({ module: readFileSync(new URL('../../pkg/dist/wasm/promptloom_bg.wasm', import.meta.url)) });
function t(name, f, n = 20000) { for (let i = 0; i < 1000; i++) f(); const s = performance.now(); for (let i = 0; i < n; i++) f(); console.log(name, ((performance.now() - s) * 1000 / n).toFixed(2), 'us'); }
const prose = 'Explain, in two sentences, how the lowering chain turns a multipart user message into a provider request, and why the output must be byte-stable for prompt caching to work.';
const m = JSON.stringify({ parts: [{ type: 'text', text: prose }] });
t('sniff (call overhead)', () => core.sniffMime(new Uint8Array(4)));
t('defaultCapabilities', () => core.defaultCapabilities('gemini'));
t('lowerPrepared text', () => core.lowerPrepared(m, '{"provider":"gemini"}', '{}', []));
t('normalize text', () => core.normalizeMessage(m));
const source = Array.from({ length: 400 }, (_, i) => `  const v${i} = compute(${i}, "value ${i}") // line ${i + 1}`).join('\n');
const code = JSON.stringify({ parts: [{ type: 'text', text: 'Why does this fail?' }, { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/compute.ts', range: { start: 100, end: 140 } } }] });
t('lowerPrepared code', () => core.lowerPrepared(code, '{"provider":"gemini"}', '{"1":{"text_at":0}}', [source]), 3000);
t('lowerPrepared code no text', () => core.lowerPrepared(code, '{"provider":"gemini"}', '{"1":{"text":"x"}}', []), 3000);
