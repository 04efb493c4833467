// Benchmark: a reply relayed from a server to a page, in one run, side by side. The server
// reads the provider's stream (about 2,000 Anthropic events: 1,600 text deltas and a 4 KB
// tool input in 20-byte deltas, ~230 KB in 4 KB chunks) and writes it for the page; the page
// reads it back to its events and the final message. Both sides run in this process (no
// network): what is timed is the work of writing and reading, per reply.
//   promptloom relay    adapter.send(body).toResponse() on the server; readEventStream() on
//                       the page, every event iterated, then the turn
//   AI SDK relay        streamText(…).toUIMessageStreamResponse() on the server; on the page
//                       parseJsonEventStream + readUIMessageStream (what its chat transport
//                       does), every message snapshot iterated, then the last one
//   promptloom direct   the page reading the provider itself (adapter.send iterated): what
//                       the relay adds to it
// Ratios, not absolute times: rounds alternate between contenders; the median is reported.
import { createAdapter, readEventStream } from 'promptloom';
import { streamText, parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { writeChart } from './chart.mjs';
import { text, input, events, bytes, streamResponse as provider, median, timeRounds } from './long-reply.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 9);

const BODY = '{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[]}';

// ---- contenders --------------------------------------------------------------------------
const adapter = createAdapter({ provider: 'anthropic', apiKey: 'k', retry: { maxRetries: 0 }, fetch: async () => provider() });
async function promptloomRelay() {
  const res = adapter.send(BODY).toResponse();
  const page = readEventStream(res);
  let n = 0;
  for await (const _ of page) n++;
  return { n, turn: await page.turn };
}

async function promptloomDirect() {
  const s = adapter.send(BODY);
  let n = 0;
  for await (const _ of s) n++;
  return { n, turn: await s.turn };
}

const anthropic = createAnthropic({ apiKey: 'k', fetch: async () => provider() });
async function aiSdkRelay() {
  const res = streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'go', maxRetries: 0 }).toUIMessageStreamResponse();
  const chunksIn = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, c) {
        if (!part.success) throw part.error;
        c.enqueue(part.value);
      },
    }),
  );
  let n = 0;
  let last;
  for await (const message of readUIMessageStream({ stream: chunksIn })) {
    n++;
    last = message;
  }
  return { n, turn: last };
}

const contenders = [
  ['promptloom relay (toResponse + readEventStream)', promptloomRelay],
  ['AI SDK relay (toUIMessageStreamResponse + readUIMessageStream)', aiSdkRelay],
  ['promptloom direct (the page reads the provider)', promptloomDirect],
];

// ---- checks: both sides got the whole reply ------------------------------------------------
{
  const a = await promptloomRelay();
  if (a.turn.parts.find((p) => p.type === 'text').text !== text) throw new Error('the relay lost text');
  if (JSON.stringify(a.turn.parts.find((p) => p.type === 'tool-call').input.edits) !== JSON.stringify(input.edits)) throw new Error('the relay lost the tool input');
  const s = await aiSdkRelay();
  const sText = s.turn.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  if (sText !== text) throw new Error(`the AI SDK relay gave ${sText.length} characters of text`);
  if (!s.turn.parts.some((p) => p.type === 'tool-apply_edits' || p.toolName === 'apply_edits')) throw new Error('the AI SDK relay lost the tool call');
}

// ---- the wire: bytes a page downloads for the reply ----------------------------------------
const wireOf = async (res) => (await res.arrayBuffer()).byteLength;
const ourWire = await wireOf(adapter.send(BODY).toResponse());
const sdkWire = await wireOf(streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'go', maxRetries: 0 }).toUIMessageStreamResponse());

// ---- timing --------------------------------------------------------------------------------
const { times, counts } = await timeRounds(contenders, ROUNDS);
const sdk = median(times.get(contenders[1][0]));
const ours = median(times.get(contenders[0][0]));
const direct = median(times.get(contenders[2][0]));

console.log(`\nRelay: an Anthropic reply of ${events.length} events (1,600 text deltas, a ${JSON.stringify(input).length}-byte tool input in 20-byte deltas), ${(bytes.length / 1024).toFixed(0)} KB from the provider; server and page in one process; median of ${ROUNDS} rounds\n`);
console.log('| | per reply (server + page) | what the page iterates | vs AI SDK |');
console.log('|---|---:|---:|---:|');
for (const [k] of contenders) {
  const m = median(times.get(k));
  console.log(`| ${k} | ${m.toFixed(2)} ms | ${counts.get(k)} ${k.startsWith('AI SDK') ? 'message snapshots' : 'events'} | ${(sdk / m).toFixed(1)}× |`);
}
console.log(`\n| bytes to the page | promptloom-events | AI SDK UI message stream |\n|---|---:|---:|\n| one reply | ${(ourWire / 1024).toFixed(0)} KB | ${(sdkWire / 1024).toFixed(0)} KB |`);
console.log(`\nThe relay is ${(sdk / ours).toFixed(1)}× the AI SDK's speed; it adds ${(ours / direct).toFixed(2)}× to reading the provider directly.`);
writeChart('relay', `A reply relayed from a server to a page: ${events.length} events (Node)`, [
  { label: 'ms per reply', bars: contenders.map(([k]) => ({ name: k, value: median(times.get(k)), text: `${median(times.get(k)).toFixed(2)} ms` })) },
]);
