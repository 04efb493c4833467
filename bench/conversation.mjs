// Benchmark: what a chat pays per new turn, per provider, in one run.
//   promptloom turn   a Conversation holding the earlier turns: append the new user turn,
//                     lower, read the body (then drop the turn again, so the next round
//                     appends a turn whose text was never seen: no cache hit on the new turn)
//   promptloom whole  lowerConversation(all turns): the stateless form, every turn lowered
//   AI SDK            model.getArgs({ prompt: all turns }) + JSON.stringify(args): what the
//                     SDK does for every request of a chat (it has no incremental form)
// Conversations of 25, 76 and 301 turns: user text, code selections, tool calls with JSON
// results, one image. Ratios, not absolute times: the machine is noisy. Rounds alternate
// between contenders and the median round is reported.
import { performance } from 'node:perf_hooks';
import { Conversation, lowerConversation } from 'promptloom';
import { writeChart } from './chart.mjs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ROUND_MS = Number(process.env.ROUND_MS ?? 200);

// ---- corpus ---------------------------------------------------------------------------
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const image = Buffer.concat([PNG, Buffer.alloc(30000, 7)]).toString('base64');
const source = Array.from({ length: 200 }, (_, i) => `  const v${i} = compute(${i}, "value ${i}") // line ${i + 1}`).join('\n');
const selection = (a, b) => '```ts src/lib/compute.ts:' + a + '-' + b + '\n' + source.split('\n').slice(a - 1, b).join('\n') + '\n```';
const question = (i) => `Question ${i}: why does compute() return a stale value when the cache is warm, and what would you change?`;
const answer = (i) => `Answer ${i}: the cache key omits the version, so a warm entry survives an update. Add the version to the key and invalidate on write. `.repeat(3);

/** One conversation in both shapes: promptloom turns and the AI SDK's prompt. */
function conversation(n) {
  const ours = [];
  const sdk = [];
  let k = 0;
  while (ours.length < n - 1) {
    const i = k++;
    if (i % 4 === 1) {
      // A code selection (resolved by the host) and a question.
      ours.push({ role: 'user', parts: [{ type: 'text', text: question(i) }, { type: 'text', text: selection(10 + i % 50, 30 + i % 50) }] });
      sdk.push({ role: 'user', content: [{ type: 'text', text: question(i) }, { type: 'text', text: selection(10 + i % 50, 30 + i % 50) }] });
    } else if (i === 2) {
      ours.push({ role: 'user', parts: [{ type: 'text', text: 'This screenshot:' }, { type: 'file-attachment', data: image, mime: 'image/png', name: 'shot.png' }] });
      sdk.push({ role: 'user', content: [{ type: 'text', text: 'This screenshot:' }, { type: 'file', data: image, mediaType: 'image/png' }] });
    } else {
      ours.push({ role: 'user', parts: [{ type: 'text', text: question(i) }] });
      sdk.push({ role: 'user', content: [{ type: 'text', text: question(i) }] });
    }
    if (ours.length >= n - 1) break;
    if (i % 3 === 0 && ours.length + 3 < n - 1) {
      const id = `toolu_${String(i).padStart(6, '0')}`;
      const input = { path: 'src/lib/compute.ts', query: `compute ${i}` };
      const result = { hits: [{ path: 'src/lib/compute.ts', line: 10 + i, text: `const v${i} = compute(${i})` }], total: 1 };
      ours.push({ role: 'assistant', parts: [{ type: 'text', text: 'Let me search.' }, { type: 'tool-call', id, name: 'search', input }] });
      sdk.push({ role: 'assistant', content: [{ type: 'text', text: 'Let me search.' }, { type: 'tool-call', toolCallId: id, toolName: 'search', input }] });
      ours.push({ role: 'tool', parts: [{ type: 'tool-result', call_id: id, name: 'search', output: result }] });
      sdk.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'search', output: { type: 'json', value: result } }] });
    }
    ours.push({ role: 'assistant', parts: [{ type: 'text', text: answer(i) }] });
    sdk.push({ role: 'assistant', content: [{ type: 'text', text: answer(i) }] });
  }
  return { ours: ours.slice(0, n - 1), sdk: sdk.slice(0, n - 1) };
}

const tools = [{ name: 'search', description: 'Search the code', inputSchema: { type: 'object', properties: { path: { type: 'string' }, query: { type: 'string' } }, required: ['query'] } }];
const sdkTools = [{ type: 'function', name: 'search', description: 'Search the code', inputSchema: tools[0].parameters }];
const models = {
  anthropic: createAnthropic({ apiKey: 'k' })('claude-x'),
  'openai-chat': createOpenAI({ apiKey: 'k' }).chat('gpt-x'),
  'openai-responses': createOpenAI({ apiKey: 'k' }).responses('gpt-x'),
  gemini: createGoogleGenerativeAI({ apiKey: 'k' })('gemini-x'),
};
// The call settings each provider gets (the same fields the AI SDK's models are made with).
const settings = {
  anthropic: { model: 'claude-x', maxOutputTokens: 4096 },
  'openai-chat': { model: 'gpt-x' },
  'openai-responses': { model: 'gpt-x' },
  gemini: {},
};
const SYSTEM = 'You are a careful engineer. Answer briefly.';

// ---- timing ---------------------------------------------------------------------------
async function perOp(fn) {
  for (let i = 0; i < 3; i++) await fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ROUND_MS) {
    await fn();
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
const kb = (b) => `${(b / 1024).toFixed(0)} KB`;

// ---- run ------------------------------------------------------------------------------
const table = [];
let allMet = true;
let fresh = 0;
for (const n of (process.env.TURNS ?? '25,76,301').split(',').map(Number)) {
  const { ours, sdk } = conversation(n);
  for (const provider of Object.keys(models)) {
    const model = models[provider];
    const options = { provider, system: SYSTEM, tools, ...settings[provider] };
    const conv = new Conversation({ options }); // a chat's options, given once
    for (const t of ours) conv.append(t);
    conv.lower(); // every earlier turn lowered once, as the chat's earlier requests did
    const turn = () => ({ role: 'user', parts: [{ type: 'text', text: question(1e6 + fresh++) }] });
    const oursTurn = async () => {
      conv.append(turn());
      const body = conv.lower().body;
      conv.truncate(n - 1);
      return body;
    };
    const oursWhole = async () => lowerConversation([...ours, turn()], options).body;
    const sdkTurn = async () => {
      const prompt = [{ role: 'system', content: SYSTEM }, ...sdk, { role: 'user', content: [{ type: 'text', text: question(1e6 + fresh++) }] }];
      const { args } = await model.getArgs({ prompt, tools: sdkTools, providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });
      return JSON.stringify(args);
    };
    // Sanity: both carry every turn.
    const a = JSON.parse(await oursTurn());
    const b = JSON.parse(await sdkTurn());
    const count = (body) => (body.messages ?? body.input ?? body.contents).length;
    if (Math.abs(count(a) - count(b)) > 1) throw new Error(`${provider} ${n}: ${count(a)} vs ${count(b)} messages`);
    const t = { turn: [], whole: [], sdk: [] };
    for (let r = 0; r < ROUNDS; r++) {
      t.turn.push(await perOp(oursTurn));
      if (!process.env.NO_WHOLE) t.whole.push(await perOp(oursWhole)); else t.whole.push(1);
      t.sdk.push(await perOp(sdkTurn));
    }
    const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
    const ratio = m.sdk / m.turn;
    const target = n >= 301 ? 20 : n >= 76 ? 10 : 1;
    const met = ratio >= target;
    if (n >= 76) allMet &&= met;
    table.push({ n, provider, ...m, ratio, wholeRatio: m.sdk / m.whole, target, met, cache: conv.cacheStats().bytes, bodyBytes: JSON.stringify(a).length });
    conv.free();
  }
}

console.log(`\nA chat's cost per new turn (Node ${process.version}; median of ${ROUNDS} rounds of ${ROUND_MS} ms)\n`);
console.log('| turns | provider | body | promptloom per turn | AI SDK getArgs+stringify | speed-up | target | promptloom stateless | speed-up | cache held |');
console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of table) {
  const tgt = r.n >= 76 ? `≥${r.target}× ${r.met ? 'met' : 'MISSED'}` : '—';
  console.log(`| ${r.n} | ${r.provider} | ${kb(r.bodyBytes)} | ${fmt(r.turn)} | ${fmt(r.sdk)} | ${r.ratio.toFixed(1)}× | ${tgt} | ${fmt(r.whole)} | ${r.wholeRatio.toFixed(1)}× | ${kb(r.cache)} |`);
}
console.log(allMet ? '\nAll targets met.' : '\nSome targets were missed (see MISSED rows).');
writeChart('conversation', "A chat's cost per new turn (Node): promptloom vs the AI SDK's conversion of the whole prompt", table.map((r) => ({
  label: `${r.n} turns, ${r.provider}`,
  bars: [
    { name: 'promptloom per turn', value: r.turn, text: fmt(r.turn) },
    { name: 'promptloom stateless', value: r.whole, text: fmt(r.whole) },
    { name: 'AI SDK getArgs + stringify', value: r.sdk, text: `${fmt(r.sdk)} (${r.ratio.toFixed(1)}× the per-turn cost)` },
  ],
})));
