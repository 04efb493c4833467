// Benchmark: a 2,000-token reply rendered by React in a chat panel, in headless Chromium,
// side by side in one run:
//   promptloom   Chat (relayAdapter → readEventStream) bound with useSyncExternalStore
//   AI SDK       useChat (@ai-sdk/react) with its DefaultChatTransport
// Each reads its own server's wire for the same provider reply (promptloom: what
// `adapter.send(body).toResponse()` writes; the AI SDK: what `streamText(…)
// .toUIMessageStreamResponse()` writes), written here in Node beforehand. The page's fetch
// delivers it one event per network chunk, each in its own task (as tokens arrive from a
// server), so React renders once per token for both. Timed from the send to the last token
// on screen; per token = that / 2,000. Allocation per token is V8's sampling heap profiler
// (objects collected by minor and major GCs included), one profiled reply each.
// Both apps are bundled by Vite with React 19, the list items memoised. Ratios, not absolute
// times: page loads alternate between contenders; the median of the measured replies.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview } from 'vite';
import { chromium } from 'playwright-core';
import { createAdapter } from 'promptloom';
import { streamText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { encode, words } from '../scripts/mock-provider.mjs';
import { writeChart } from './chart.mjs';

const TOKENS = 2000;
const PAGES = Number(process.env.ROUNDS ?? 6); // page loads per contender
const PER_PAGE = 3; // measured replies per page load, after one warm-up reply
const here = fileURLToPath(new URL('.', import.meta.url));

// ---- the reply and each library's wire ------------------------------------------------------
const sentence = 'The cache key omits the version, so a warm entry survives an update; add it. ';
let full = '';
while (words(full).length < TOKENS) full += sentence;
const text = words(full).slice(0, TOKENS).join('');
const providerBytes = encode('anthropic', { reasoning: '', text, calls: [] }, { stream: true, model: 'claude-sonnet-4-5' }).join('');
const provider = () => new Response(providerBytes, { headers: { 'content-type': 'text/event-stream' } });
const BODY = '{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"go"}]}';
const events = (wire) => wire.split(/(?<=\n\n)/).filter((e) => e.trim() !== '');
const ours = events(await createAdapter({ provider: 'anthropic', apiKey: 'k', fetch: async () => provider() }).send(BODY).toResponse().text());
const anthropic = createAnthropic({ apiKey: 'k', fetch: async () => provider() });
const theirs = events(await streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'go', maxRetries: 0 }).toUIMessageStreamResponse().text());

// ---- the app: both contenders in one bundle, picked by the URL -------------------------------
const APP = `import { createElement as h, memo, useEffect, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { Chat, openMessageStore, relayAdapter, readEventStream } from 'promptloom';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';

const wire = await (await fetch('/wire.json')).json();
const lib = new URL(location.href).searchParams.get('lib');
// One event per chunk, each in its own task, as a server's tokens arrive (a message
// channel's task: setTimeout would add its 4 ms clamp to every token).
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()();
const task = () => new Promise((r) => {
  waiting.push(r);
  channel.port2.postMessage(0);
});
const stream = (pieces) => {
  const enc = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    async pull(c) {
      if (i >= pieces.length) return c.close();
      await task();
      c.enqueue(enc.encode(pieces[i++]));
    },
  });
};
const respond = (pieces) => async () => new Response(stream(pieces), { headers: { 'content-type': 'text/event-stream' } });
const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const Item = memo(({ role, text }) => h('li', { 'data-role': role }, text));
const root = createRoot(document.getElementById('root'));
const shown = () => document.querySelector('li[data-role=assistant]')?.textContent.length ?? 0;
let n = 0;

function Ours({ chat }) {
  const s = useSyncExternalStore(chat.subscribe, chat.getSnapshot);
  const list = s.pending ? [...s.messages, s.pending] : s.messages;
  return h('ol', null, list.map((m) => h(Item, { key: m.id, role: m.role, text: textOf(m) })));
}

function Theirs({ id, ready }) {
  const { messages, sendMessage } = useChat({ id, transport: new DefaultChatTransport({ api: '/chat', fetch: respond(wire.theirs) }) });
  useEffect(() => ready(sendMessage), [sendMessage]);
  return h('ol', null, messages.map((m) => h(Item, { key: m.id, role: m.role, text: textOf(m) })));
}

// The floor: the same chunks delivered the same way and the same list, from a store that
// only appends each token's text (no parsing, no protocol): what the delivery and React cost.
function Floor({ store }) {
  const s = useSyncExternalStore(store.subscribe, store.get);
  return h('ol', null, h(Item, { key: 'u', role: 'user', text: 'go' }), h(Item, { key: 'a', role: 'assistant', text: s }));
}
const floorStore = () => {
  let text = '';
  const ls = new Set();
  return {
    get: () => text,
    subscribe: (l) => (ls.add(l), () => ls.delete(l)),
    add: (t) => {
      text += t;
      for (const l of ls) l();
    },
  };
};

window.reply = async () => {
  n++;
  if (lib === 'bytes') {
    // The delivery alone: the same chunks read off the same stream, decoded, nothing parsed.
    const t0 = performance.now();
    const reader = (await respond(wire.ours)()).body.getReader();
    const dec = new TextDecoder();
    let chars = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chars += dec.decode(value, { stream: true }).length;
    }
    return { ms: performance.now() - t0, chars };
  }
  if (lib === 'read') {
    // What the page's reading costs alone: the relayed events iterated, no Chat, no React.
    const t0 = performance.now();
    const s = readEventStream(respond(wire.ours)());
    let chars = 0;
    for await (const ev of s) if (ev.type === 'text-delta') chars += ev.text.length;
    await s.turn;
    return { ms: performance.now() - t0, chars };
  }
  if (lib === 'chat') {
    // Chat without React: a listener that reads each snapshot.
    const store = await openMessageStore({ backend: 'memory', name: 'r' + n });
    const chat = await Chat.open({ store, session: 's', adapter: relayAdapter({ endpoint: '/chat', provider: 'anthropic', fetch: respond(wire.ours) }), settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 4096, stream: true } });
    let chars = 0;
    chat.subscribe(() => {
      const p = chat.getSnapshot().pending;
      if (p) chars = textOf(p).length;
    });
    const t0 = performance.now();
    await chat.send('go');
    return { ms: performance.now() - t0, chars };
  }
  if (lib === 'floor') {
    const store = floorStore();
    root.render(h(Floor, { key: n, store }));
    await task();
    const t0 = performance.now();
    // The same chunks off the same stream; each text event's token appended, unparsed.
    const reader = (await respond(wire.ours)()).body.getReader();
    const dec = new TextDecoder();
    let i = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (dec.decode(value).includes('"text-delta"')) store.add(wire.tokens[i++]);
    }
    await task();
    return { ms: performance.now() - t0, chars: shown() };
  }
  if (lib === 'promptloom') {
    const store = await openMessageStore({ backend: 'memory', name: 'r' + n });
    const chat = await Chat.open({ store, session: 's', adapter: relayAdapter({ endpoint: '/chat', provider: 'anthropic', fetch: respond(wire.ours) }), settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 4096, stream: true } });
    root.render(h(Ours, { key: n, chat }));
    await task();
    const t0 = performance.now();
    await chat.send('go');
    await task();
    return { ms: performance.now() - t0, chars: shown() };
  }
  const send = await new Promise((ready) => root.render(h(Theirs, { key: n, id: 'c' + n, ready })));
  await task();
  const t0 = performance.now();
  await send({ text: 'go' });
  await task();
  return { ms: performance.now() - t0, chars: shown() };
};
window.loaded = true;
`;

const dir = join(here, '.out/chat-render');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'src'), { recursive: true });
mkdirSync(join(dir, 'public'), { recursive: true });
writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="/src/main.js"></script></body></html>');
writeFileSync(join(dir, 'src/main.js'), APP);
writeFileSync(join(dir, 'public/wire.json'), JSON.stringify({ ours, theirs, tokens: words(text) }));
await build({ root: dir, logLevel: 'silent', build: { target: 'es2022' } });
const server = await preview({ root: dir, preview: { port: 0, host: '127.0.0.1' }, logLevel: 'silent' });
const origin = server.resolvedUrls.local[0];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

const LIBS = [
  ['promptloom', 'promptloom Chat + useSyncExternalStore'],
  ['aisdk', 'AI SDK useChat'],
  ['floor', 'the floor: the same chunks, each token appended to a bare store React renders'],
  ['chat', 'promptloom Chat alone (a listener, no React)'],
  ['read', 'promptloom readEventStream alone (no Chat, no React)'],
  ['bytes', 'the delivery alone: the chunks read and decoded, nothing parsed'],
];
const times = new Map(LIBS.map(([k]) => [k, []]));
const alloc = new Map();
try {
  for (let r = 0; r < PAGES; r++) {
    for (const [lib] of r % 2 ? [...LIBS].reverse() : LIBS) {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${origin}?lib=${lib}`);
      await page.waitForFunction(() => window.loaded === true);
      const warm = await page.evaluate(() => window.reply());
      if (lib !== 'bytes' && warm.chars !== text.length) throw new Error(`${lib}: ${warm.chars} characters on screen, not ${text.length}`);
      for (let i = 0; i < PER_PAGE; i++) times.get(lib).push((await page.evaluate(() => window.reply())).ms);
      if (r < 2 && !alloc.has(lib)) {
        // One reply under the sampling heap profiler: every allocation, collected or not.
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('HeapProfiler.enable');
        await cdp.send('HeapProfiler.collectGarbage');
        await cdp.send('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
        await page.evaluate(() => window.reply());
        const { profile } = await cdp.send('HeapProfiler.stopSampling');
        const total = (node) => node.selfSize + node.children.reduce((s, c) => s + total(c), 0);
        alloc.set(lib, total(profile.head));
      }
      if (errors.length) throw new Error(`${lib}: ${errors.join('; ')}`);
      await page.close();
    }
  }
} finally {
  await browser.close();
  await server.close();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sdk = median(times.get('aisdk'));
console.log(`\nA ${TOKENS}-token reply rendered by React 19 in headless Chromium, one event per network chunk (each in its own task); median of ${PAGES * PER_PAGE} replies per contender over ${PAGES} page loads each\n`);
console.log('| | per reply | per token | allocated per token | vs AI SDK |');
console.log('|---|---:|---:|---:|---:|');
for (const [k, name] of LIBS) {
  const m = median(times.get(k));
  console.log(`| ${name} | ${m.toFixed(1)} ms | ${((m / TOKENS) * 1000).toFixed(1)} µs | ${(alloc.get(k) / TOKENS / 1024).toFixed(2)} KB | ${(sdk / m).toFixed(2)}× |`);
}
const ratio = median(times.get('promptloom')) / sdk;
const floor = median(times.get('floor'));
console.log(`\npromptloom takes ${(ratio * 100).toFixed(0)} % of the AI SDK's time per token (target: at most 50 %); above the floor, its own work is ${(((median(times.get('promptloom')) - floor) / TOKENS) * 1000).toFixed(1)} µs per token against the AI SDK's ${(((sdk - floor) / TOKENS) * 1000).toFixed(1)} µs. Wire: ${ours.length} events (${(ours.join('').length / 1024).toFixed(0)} KB) against ${theirs.length} (${(theirs.join('').length / 1024).toFixed(0)} KB).`);
writeChart('chat-render', `A ${TOKENS}-token reply rendered by React (Chromium)`, [
  { label: 'µs per token', bars: LIBS.map(([k, name]) => ({ name, value: (median(times.get(k)) / TOKENS) * 1000, text: `${((median(times.get(k)) / TOKENS) * 1000).toFixed(1)} µs` })) },
]);
