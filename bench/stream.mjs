// Benchmark: reading a long Anthropic Messages stream (about 2,000 events: 1,600 text deltas
// and a 4 KB tool input in 20-byte JSON deltas, ~230 KB), in one run, side by side:
//   promptloom parser   createResponseParser('anthropic'), fed the bytes in 4 KB chunks (as
//                       fetch delivers them): every normalised event and the final turn
//   promptloom adapter  createAdapter({ fetch: stub }).send(body): the same through fetch's
//                       Response stream, iterated
//   … batches()         the same, iterated per chunk (an array of events each)
//   AI SDK streamText   streamText with @ai-sdk/anthropic and a stub fetch returning the same
//                       bytes, consuming fullStream
//   JS floor            TextDecoder + split on blank lines + JSON.parse of every event (no
//                       normalisation, no turn): what any parser pays at least
// Ratios, not absolute times: rounds alternate between contenders; the median is reported.
// Memory: the JS heap and wasm memory held after a run (the turn kept), with --expose-gc.
import { createResponseParser, createAdapter } from 'promptloom';
import { writeChart } from './chart.mjs';
import { streamText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { text, input, events, bytes, chunks, streamResponse, median, timeRounds } from './long-reply.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 9);

// ---- the stream (bench/long-reply.mjs) ------------------------------------------------
const nEvents = events.length;
const toolBytes = JSON.stringify(input).length;

// ---- contenders -----------------------------------------------------------------------
function promptloomParser() {
  const p = createResponseParser('anthropic');
  let n = 0;
  for (const c of chunks) n += p.push(c).length;
  n += p.end().length;
  const turn = p.finish();
  p.free();
  return { n, turn };
}

const adapter = createAdapter({ provider: 'anthropic', apiKey: 'k', fetch: async () => streamResponse() });
async function promptloomAdapter() {
  const s = adapter.send('{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[]}');
  let n = 0;
  for await (const _ of s) n++;
  return { n, turn: await s.turn };
}

async function promptloomBatches() {
  const s = adapter.send('{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[]}');
  let n = 0;
  for await (const b of s.batches()) n += b.length;
  return { n, turn: await s.turn };
}

const anthropic = createAnthropic({ apiKey: 'k', fetch: async () => streamResponse() });
async function aiSdk() {
  const r = streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'go', maxRetries: 0 });
  let n = 0;
  for await (const _ of r.fullStream) n++;
  return { n, turn: await r.response };
}

async function floor() {
  const dec = new TextDecoder();
  let buf = '';
  let n = 0;
  const out = [];
  for (const c of chunks) {
    buf += dec.decode(c, { stream: true });
    let at;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const d = ev.indexOf('data: ');
      if (d >= 0) {
        out.push(JSON.parse(ev.slice(d + 6)));
        n++;
      }
    }
  }
  return { n, turn: out };
}

const contenders = [
  ['promptloom parser', async () => promptloomParser()],
  ['promptloom adapter', promptloomAdapter],
  ['promptloom adapter, batches()', promptloomBatches],
  ['AI SDK streamText (fullStream)', aiSdk],
  ['JS floor (split + JSON.parse)', floor],
];

// ---- checks: every contender read the whole stream -------------------------------------
{
  const a = promptloomParser();
  const textOut = a.turn.parts.find((p) => p.type === 'text').text;
  if (textOut !== text) throw new Error('promptloom lost text');
  const call = a.turn.parts.find((p) => p.type === 'tool-call');
  if (JSON.stringify(call.input.edits) !== JSON.stringify(input.edits)) throw new Error('promptloom lost the tool input');
  const s = await aiSdk();
  if (s.n < 1600) throw new Error(`the AI SDK gave ${s.n} parts`);
}

// ---- timing ----------------------------------------------------------------------------
const { times, counts } = await timeRounds(contenders, ROUNDS);

// ---- memory held after one run (the result kept) ----------------------------------------
async function held(f) {
  if (!global.gc) return null;
  global.gc();
  await new Promise((r) => setTimeout(r, 10));
  global.gc();
  const before = process.memoryUsage();
  const keep = await f();
  global.gc();
  await new Promise((r) => setTimeout(r, 10));
  global.gc();
  const after = process.memoryUsage();
  void keep;
  return { heap: after.heapUsed - before.heapUsed, external: after.arrayBuffers - before.arrayBuffers };
}
const mem = new Map();
for (const [k, f] of contenders) mem.set(k, await held(f));

const ours = median(times.get('promptloom parser'));
const sdk = median(times.get('AI SDK streamText (fullStream)'));
console.log(`\nStream: Anthropic SSE, ${nEvents} events (1,600 text deltas, a ${toolBytes}-byte tool input in 20-byte deltas), ${(bytes.length / 1024).toFixed(0)} KB in ${chunks.length} chunks of 4 KB; median of ${ROUNDS} rounds\n`);
console.log('| | per stream | events out | events / s | vs AI SDK | JS heap held after (GC\'d; noise ±100 KB) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [k] of contenders) {
  const m = median(times.get(k));
  const h = mem.get(k);
  console.log(`| ${k} | ${m.toFixed(2)} ms | ${counts.get(k)} | ${Math.round((nEvents / m) * 1000).toLocaleString('en-US')} | ${(sdk / m).toFixed(1)}× | ${h ? `${(h.heap / 1024).toFixed(0)} KB` : 'n/a (run with --expose-gc)'} |`);
}
console.log(`\npromptloom's parse is ${(sdk / ours).toFixed(1)}× the AI SDK's speed (target: ≥ 3×); the JS floor is ${(median(times.get('JS floor (split + JSON.parse)')) / ours).toFixed(2)}× promptloom's time.`);
writeChart('stream', `Reading an Anthropic SSE stream of ${nEvents} events (Node)`, [
  { label: 'ms per stream', bars: contenders.map(([k]) => ({ name: k, value: median(times.get(k)), text: `${median(times.get(k)).toFixed(2)} ms` })) },
]);
