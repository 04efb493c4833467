// What bench/stream.mjs and bench/relay.mjs share: one long Anthropic reply (about 1,800
// events: 1,600 text deltas and a 4 KB tool input in 20-byte JSON deltas, ~220 KB) in 4 KB
// chunks as fetch delivers them, and the alternating rounds both time their contenders with.
import { performance } from 'node:perf_hooks';
import { encode, words } from '../scripts/mock-provider.mjs';

const sentence = 'The cache key omits the version, so a warm entry survives an update; add it. ';
let full = '';
while (words(full).length < 1600) full += sentence;
/** The reply's text. */
export const text = words(full).slice(0, 1600).join('');
/** The tool call's input. */
export const input = { path: 'src/lib/compute.ts', edits: Array.from({ length: 52 }, (_, i) => ({ line: i * 7, replace: `const v${i} = compute(${i}, version) // keyed by version` })) };
/** The provider's SSE events, as text. */
export const events = encode('anthropic', { reasoning: '', text, calls: [{ id: 'call_bench', name: 'apply_edits', input }] }, { stream: true, model: 'claude-sonnet-4-5', argChunk: 20 });
/** The whole stream's bytes, and in 4 KB chunks. */
export const bytes = new TextEncoder().encode(events.join(''));
export const chunks = [];
for (let i = 0; i < bytes.length; i += 4096) chunks.push(bytes.subarray(i, i + 4096));

/** A fresh provider Response streaming the chunks. */
export const streamResponse = () =>
  new Response(
    new ReadableStream({
      start(c) {
        for (const ch of chunks) c.enqueue(ch);
        c.close();
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  );

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Times `contenders` (`[name, async () => ({ n })]`): 3 warm-up passes, then `rounds` rounds
 * alternating their order. Returns each one's times and its last `n`.
 */
export async function timeRounds(contenders, rounds) {
  const times = new Map(contenders.map(([k]) => [k, []]));
  const counts = new Map();
  for (let w = 0; w < 3; w++) for (const [, f] of contenders) await f();
  for (let r = 0; r < rounds; r++) {
    for (const [k, f] of r % 2 ? [...contenders].reverse() : contenders) {
      const t0 = performance.now();
      const out = await f();
      times.get(k).push(performance.now() - t0);
      counts.set(k, out.n);
    }
  }
  return { times, counts };
}
