// Benchmark: lowering a fixed corpus to a request body string, per provider, in one run:
//   promptloom      lower(message, options).body           (the npm package, wasm core)
//   SDK convert     the app's own glue (what promptloom does that the SDK does not: cut the
//                   selected lines out of the file the editor read, fence them, render the
//                   editor-context markers) + await model.getArgs({...}) + JSON.stringify(args)
//   SDK generate    generateText with a stub fetch that captures the body
//   floor           JSON.stringify of the already-built SDK args
// Ratios, not absolute times: the machine is noisy. Rounds alternate between contenders and
// the median round is reported.
import { performance } from 'node:perf_hooks';
import { lower } from 'promptloom';
import { writeChart } from './chart.mjs';
import { generateText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ROUND_MS = Number(process.env.ROUND_MS ?? 150);

// ---- corpus ---------------------------------------------------------------------------
const PNG_HEAD = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
function pngOf(size) {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 2654435761) >>> 24;
  PNG_HEAD.copy(b);
  return b;
}
const bigPng = pngOf(1 << 20);
const bigPngB64 = bigPng.toString('base64');
const smallPng = pngOf(2048).toString('base64');
const smallPdf = Buffer.from('%PDF-1.4\n' + 'x'.repeat(2000) + '\n%%EOF\n').toString('base64');
const source = Array.from({ length: 400 }, (_, i) => `  const v${i} = compute(${i}, "value ${i}") // line ${i + 1}`).join('\n');
const prose = 'Explain, in two sentences, how the lowering chain turns a multipart user message into a provider request, and why the output must be byte-stable for prompt caching to work.';

const resolve = (req) => (req.type === 'file' ? source : null);

// The app glue an SDK user writes for a selection: cut lines start..end (1-based) of the
// file the editor read, and fence them with the path and range.
function fence(path, text, start, end) {
  const lines = text.split('\n').slice(start - 1, end).join('\n');
  const ext = path.slice(path.lastIndexOf('.') + 1);
  return '```' + ext + ' ' + path + ':' + start + '-' + end + '\n' + lines + '\n```';
}

const rows = [
  {
    name: 'text only',
    ours: { parts: [{ type: 'text', text: prose }] },
    sdk: [{ type: 'text', text: prose }],
    gen: [{ type: 'text', text: prose }],
  },
  {
    name: 'code selection',
    ours: { parts: [{ type: 'text', text: 'Why does this fail?' }, { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/compute.ts', range: { start: 100, end: 140 } } }] },
    sdk: () => [{ type: 'text', text: 'Why does this fail?' }, { type: 'text', text: fence('src/lib/compute.ts', source, 100, 140) }],
    gen: () => [{ type: 'text', text: 'Why does this fail?' }, { type: 'text', text: fence('src/lib/compute.ts', source, 100, 140) }],
  },
  {
    name: '1 MB image (base64)',
    ours: { parts: [{ type: 'text', text: 'What is in this image?' }, { type: 'file-attachment', data: bigPngB64, mime: 'image/png', name: 'shot.png' }] },
    sdk: [{ type: 'text', text: 'What is in this image?' }, { type: 'file', data: bigPngB64, mediaType: 'image/png' }],
    gen: [{ type: 'text', text: 'What is in this image?' }, { type: 'image', image: bigPngB64, mediaType: 'image/png' }],
  },
  {
    name: '1 MB image (bytes)',
    ours: { parts: [{ type: 'text', text: 'What is in this image?' }, { type: 'file-attachment', data: bigPng, mime: 'image/png', name: 'shot.png' }] },
    sdk: [{ type: 'text', text: 'What is in this image?' }, { type: 'file', data: new Uint8Array(bigPng), mediaType: 'image/png' }],
    gen: [{ type: 'text', text: 'What is in this image?' }, { type: 'image', image: new Uint8Array(bigPng), mediaType: 'image/png' }],
  },
  {
    name: '10-part mixed',
    ours: {
      parts: [
        { type: 'text', text: 'Review this change.' },
        { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/compute.ts', range: { start: 100, end: 140 } } },
        { type: 'editor-context', kind: 'open', payload: ['src/lib/compute.ts', 'src/lib/bar.ts'], emitted_at: 5 },
        { type: 'file-attachment', data: smallPng, mime: 'image/png', name: 'screenshot.png' },
        { type: 'mention', target: { kind: 'skill', name: 'reviewer' } },
        { type: 'editor-context', kind: 'cursor', payload: { line: 120, column: 4 }, emitted_at: 6 },
        { type: 'file-attachment', data: smallPdf, mime: 'application/pdf', name: 'spec.pdf' },
        { type: 'editor-context', kind: 'selection', source: 'editor-1', payload: { text: 'compute(1)' }, emitted_at: 6 },
        { type: 'file-attachment', data: Buffer.from('A=1\nB=2\n').toString('base64'), mime: 'text/plain', name: 'env.txt' },
        { type: 'text', text: 'Focus on error handling.' },
      ],
    },
  },
];
// The SDK equivalents of the mixed row: what an app would hand it (contexts pre-rendered).
{
  const ctx = (k, p, s) => `<editor_context kind="${k}"${s ? ` source="${s}"` : ''}>${JSON.stringify(p)}</editor_context>`;
  const text = (t) => ({ type: 'text', text: t });
  const build = (image) => [
    text('Review this change.'),
    text(fence('src/lib/compute.ts', source, 100, 140)),
    text(ctx('open', ['src/lib/compute.ts', 'src/lib/bar.ts'])),
    image,
    text(ctx('cursor', { line: 120, column: 4 })),
    { type: 'file', data: smallPdf, mediaType: 'application/pdf', filename: 'spec.pdf' },
    text(ctx('selection', { text: 'compute(1)' }, 'editor-1')),
    text('```txt env.txt\nA=1\nB=2\n```'),
    text('Focus on error handling.'),
  ];
  rows[4].sdk = () => build({ type: 'file', data: smallPng, mediaType: 'image/png' });
  rows[4].gen = () => build({ type: 'image', image: smallPng, mediaType: 'image/png' });
}

// ---- providers ------------------------------------------------------------------------
let captured = '';
const replies = {
  anthropic: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } },
  'openai-chat': { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-x', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
  'openai-responses': { id: 'r1', object: 'response', created_at: 1, model: 'gpt-x', status: 'completed', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } },
  gemini: { candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } },
};
const stubFetch = (provider) => async (_url, init) => {
  captured = init.body;
  return new Response(JSON.stringify(replies[provider]), { status: 200, headers: { 'content-type': 'application/json' } });
};
const models = {
  anthropic: createAnthropic({ apiKey: 'k', fetch: stubFetch('anthropic') })('claude-sonnet-4-5'),
  'openai-chat': createOpenAI({ apiKey: 'k', fetch: stubFetch('openai-chat') }).chat('gpt-4.1'),
  'openai-responses': createOpenAI({ apiKey: 'k', fetch: stubFetch('openai-responses') }).responses('gpt-4.1'),
  gemini: createGoogleGenerativeAI({ apiKey: 'k', fetch: stubFetch('gemini') })('gemini-x'),
};
// The call settings each provider gets (the same fields the AI SDK's models are made with).
const settings = {
  anthropic: { model: 'claude-sonnet-4-5', maxOutputTokens: 4096 },
  'openai-chat': { model: 'gpt-4.1' },
  'openai-responses': { model: 'gpt-4.1' },
  gemini: {},
};

// ---- timing ---------------------------------------------------------------------------
async function perOp(fn) {
  for (let i = 0; i < 5; i++) await fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ROUND_MS) {
    await fn();
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}
function perOpSync(fn) {
  for (let i = 0; i < 5; i++) fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ROUND_MS) {
    fn();
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

// ---- run ------------------------------------------------------------------------------
const table = [];
let allMet = true;
for (const row of rows) {
  for (const provider of Object.keys(models)) {
    const model = models[provider];
    const content = typeof row.sdk === 'function' ? row.sdk : () => row.sdk;
    const genContent = typeof row.gen === 'function' ? row.gen : () => row.gen;
    const options = { provider, resolve, ...settings[provider] };
    const ours = () => lower(row.ours, options).body;
    const sdk = async () => {
      const prompt = [{ role: 'user', content: content() }];
      const { args } = await model.getArgs({ prompt, providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });
      return JSON.stringify(args);
    };
    const { args: built } = await model.getArgs({ prompt: [{ role: 'user', content: content() }], providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });
    const floor = () => JSON.stringify(built);
    const gen = async () => {
      await generateText({ model, messages: [{ role: 'user', content: genContent() }], maxRetries: 0 });
      return captured;
    };
    // Sanity: every contender produced a body that carries the content.
    const oursBody = ours();
    JSON.parse(oursBody);
    JSON.parse(await sdk());
    await gen();
    JSON.parse(captured);
    const t = { ours: [], sdk: [], gen: [], floor: [] };
    for (let r = 0; r < ROUNDS; r++) {
      t.ours.push(perOpSync(ours));
      t.sdk.push(await perOp(sdk));
      t.gen.push(await perOp(gen));
      t.floor.push(perOpSync(floor));
    }
    const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
    const ratio = m.sdk / m.ours;
    const target = row.name.startsWith('1 MB image') ? 10 : 2;
    const met = ratio >= target;
    allMet &&= met;
    table.push({ row: row.name, provider, ...m, ratio, genRatio: m.gen / m.ours, target, met });
  }
}

console.log(`\nLowering to a request body string (Node ${process.version}; median of ${ROUNDS} rounds of ${ROUND_MS} ms)\n`);
console.log('| corpus | provider | promptloom | AI SDK getArgs+stringify | speed-up | target | AI SDK generateText | speed-up | floor: JSON.stringify(args) |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of table) {
  console.log(`| ${r.row} | ${r.provider} | ${fmt(r.ours)} | ${fmt(r.sdk)} | ${r.ratio.toFixed(1)}× | ≥${r.target}× ${r.met ? 'met' : 'MISSED'} | ${fmt(r.gen)} | ${r.genRatio.toFixed(1)}× | ${fmt(r.floor)} |`);
}
console.log(allMet ? '\nAll targets met.' : '\nSome targets were missed (see MISSED rows).');
// The chart: one panel per corpus row and provider, promptloom beside the AI SDK's conversion.
writeChart('lower', 'Lowering one user message to a request body (Node): promptloom vs the AI SDK', table.map((r) => ({
  label: `${r.row}, ${r.provider}`,
  bars: [
    { name: 'promptloom', value: r.ours, text: fmt(r.ours) },
    { name: 'AI SDK getArgs + stringify', value: r.sdk, text: `${fmt(r.sdk)} (${r.ratio.toFixed(1)}× slower)` },
  ],
})));
