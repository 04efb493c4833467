// Benchmark: a JSON answer read while it streams (structured output), in one run, side by side:
//   promptloom parser   createResponseParser('anthropic', { request }) for a request that
//                       asked for JSON (`output`): an Anthropic stream whose text arrives in
//                       20-byte deltas (one SSE event each, one push each), every
//                       `object-delta` applied to the object so far (parser.object)
//   AI SDK              parsePartialJson (from 'ai') of the text so far at each delta: what
//                       streamObject / partialOutputStream do per delta
//   JS floor            JSON.parse of the whole text once, at the end (no partial object)
// Two answer sizes (50 KB and 500 KB) show how each grows; the AI SDK re-reads the text from
// the start at every delta, so it runs at 50 KB only (at 500 KB one stream takes minutes).
// Ratios, not absolute times: rounds alternate between contenders; the median is reported.
import { performance } from 'node:perf_hooks';
import { createResponseParser, lower } from 'promptloom';
import { parsePartialJson } from 'ai';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const DELTA = 20;

/** A JSON answer of about `kb` KB: release notes with titles, tags and long texts. */
function answer(kb) {
  const items = [];
  let size = 0;
  for (let i = 0; size < kb * 1024; i++) {
    const item = { id: i, title: `Change ${i}: the cache key keeps the version`, tags: ['cache', 'fix', `v${i % 7}`], score: i * 0.25, breaking: i % 5 === 0, text: 'A warm entry no longer survives an update; the key now names the version it was written for. '.repeat(2) };
    items.push(item);
    size += JSON.stringify(item).length + 1;
  }
  return JSON.stringify({ release: '2.0.0', items });
}

const request = lower({ role: 'user', parts: [{ type: 'text', text: 'Write the release notes.' }] }, {
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  output: { schema: { type: 'object', properties: { release: { type: 'string' }, items: { type: 'array' } } } },
}).body;

/** The stream of `text` as Anthropic sends it: one SSE event per 20-byte text delta. */
function stream(text) {
  const enc = new TextEncoder();
  const ev = (name, data) => enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  const out = [ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 9, output_tokens: 1 } } }), ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })];
  const deltas = [];
  for (let i = 0; i < text.length; i += DELTA) deltas.push(text.slice(i, i + DELTA));
  for (const d of deltas) out.push(ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } }));
  out.push(ev('content_block_stop', { type: 'content_block_stop', index: 0 }), ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 100 } }), ev('message_stop', { type: 'message_stop' }));
  return { chunks: out, deltas };
}

/** The stream's bytes in 4 KB network chunks (as fetch delivers them). */
function network(s) {
  const all = new Uint8Array(s.chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of s.chunks) (all.set(c, at), (at += c.length));
  const out = [];
  for (let i = 0; i < all.length; i += 4096) out.push(all.subarray(i, i + 4096));
  return out;
}

function promptloom(s, chunks = s.chunks, req = request) {
  const p = createResponseParser('anthropic', { request: req });
  let edits = 0;
  for (const c of chunks) for (const e of p.push(c)) if (e.type === 'object-delta') edits++;
  p.end();
  const object = p.object;
  p.free();
  return { object, edits };
}

async function aiSdk(s) {
  let text = '';
  let last;
  for (const d of s.deltas) {
    text += d;
    const r = await parsePartialJson(text);
    if (r.value !== undefined) last = r.value;
  }
  return { object: last };
}

function floor(s) {
  return { object: JSON.parse(s.deltas.join('')) };
}

const rows = [];
for (const kb of [50, 500]) {
  const text = answer(kb);
  const s = stream(text);
  const want = JSON.parse(text);
  const net = network(s);
  const contenders = [
    ['promptloom parser, 4 KB network chunks (object edits applied)', async () => promptloom(s, net)],
    ['promptloom parser, one push per SSE event', async () => promptloom(s)],
    ['promptloom parser, 4 KB chunks, no JSON asked for (text events only)', async () => promptloom(s, net, '')],
    ['JS floor (JSON.parse once at the end)', async () => floor(s)],
  ];
  if (kb === 50) contenders.splice(1, 0, ['AI SDK parsePartialJson per delta', () => aiSdk(s)]);
  // Every contender ends with the whole answer.
  for (const [k, f] of contenders) {
    if (k.includes('text events only')) continue;
    const { object } = await f();
    if (JSON.stringify(object) !== JSON.stringify(want)) throw new Error(`${k} did not rebuild the answer at ${kb} KB`);
  }
  const times = new Map(contenders.map(([k]) => [k, []]));
  const rounds = kb === 50 ? ROUNDS : ROUNDS;
  for (let r = 0; r < rounds; r++) {
    for (const [k, f] of r % 2 ? [...contenders].reverse() : contenders) {
      if (k.startsWith('AI SDK') && r >= 3) continue; // seconds per stream: three rounds
      const t0 = performance.now();
      await f();
      times.get(k).push(performance.now() - t0);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ours = median(times.get(contenders[0][0]));
  for (const [k] of contenders) {
    const m = median(times.get(k));
    rows.push({ kb, k, m, deltas: s.deltas.length, vs: m / ours });
  }
}
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(2)} ms`);
console.log(`\nA JSON answer streamed in ${DELTA}-byte deltas (Anthropic SSE; Node ${process.version}; median of ${ROUNDS} rounds, the AI SDK's of 3)\n`);
console.log('| answer | deltas | contender | per stream | vs promptloom |');
console.log('|---:|---:|---|---:|---:|');
for (const r of rows) console.log(`| ${r.kb} KB | ${r.deltas} | ${r.k} | ${fmt(r.m)} | ${r.vs.toFixed(2)}× |`);
const p50 = rows.find((r) => r.kb === 50 && r.k.startsWith('promptloom')).m;
const e50 = rows.find((r) => r.kb === 50 && r.k.includes('one push')).m;
const p500 = rows.find((r) => r.kb === 500 && r.k.startsWith('promptloom')).m;
const e500 = rows.find((r) => r.kb === 500 && r.k.includes('one push')).m;
const sdk = rows.find((r) => r.k.startsWith('AI SDK')).m;
console.log(`\npromptloom 500 KB / 50 KB: ${(p500 / p50).toFixed(1)}× (network chunks), ${(e500 / e50).toFixed(1)}× (one push per event) the time for 10× the answer (linear: about 10×)`);
console.log(`target ≥ 100× faster than the AI SDK at 50 KB: ${(sdk / p50).toFixed(0)}× with network chunks, ${(sdk / e50).toFixed(0)}× with one push per event — ${sdk / p50 >= 100 ? 'met' : 'MISSED'}`);
