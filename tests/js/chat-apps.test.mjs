// Chat as a web app uses it: a small React app (useSyncExternalStore), the README's
// plain-DOM chat page, docs/chat.md's Vue and Svelte panels and promptloom in a Web Worker,
// built by Vite with the packed package, run in headless Chromium, talking to the chat
// Worker of docs/chat.md (a Durable Object per run; bundled by wrangler, run in workerd)
// that relays the repository's mock provider. Streaming, a tool call approved in the page,
// stop, regenerate, edit, a reload in the middle of a stream (the React page attaches to
// the run the server is still reading; the plain-DOM page, which reads its replies itself,
// shows the reply so far, cut), and the thread back from IndexedDB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, preview } from 'vite';
import { chromium } from 'playwright-core';
import { Miniflare, fetch as mfFetch } from 'miniflare';
import { root } from './cases.mjs';
import { bundledWorker, packedApp } from './apps.mjs';
import { startMockProvider, mockBaseURL } from '../../scripts/mock-provider.mjs';

function readmeExample(name, page = 'README.md') {
  const md = readFileSync(join(root, page), 'utf8');
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(md);
  assert.ok(m, `README example ${name}`);
  return m[1];
}

// The React app: the chat's snapshot through useSyncExternalStore; each tool call that asks
// for approval gets Approve / Deny buttons; each user message an Edit button (the input's
// text replaces it). The open session (a branch after a regenerate or an edit) is kept in
// localStorage, as an app keeps the thread it shows.
const REACT_APP = `import { createElement as h, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { Chat, openMessageStore } from 'promptloom';

const store = await openMessageStore({ backend: 'indexeddb', name: 'react-chat' });
const chat = await Chat.open({
  store,
  session: localStorage.getItem('session') ?? 'chat-1',
  endpoint: '/chat',
  reconnect: true,
  settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 1024, stream: true },
  tools: [{ name: 'search', description: 'Searches the docs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } }, needsApproval: true }],
  handlers: { search: async ({ query }) => ({ hits: [query + '.md'] }) },
});
chat.subscribe(() => localStorage.setItem('session', chat.session));
// A reply the server was still reading when the page went away: attach to it (docs/chat.md).
${readmeExample('chatattach', 'docs/chat.md')}
window.chat = chat;
window.store = store;
window.pendingRenders = 0;

function Part({ p, m }) {
  if (p.type === 'tool-call') {
    return h('div', { className: 'call', 'data-state': p.state },
      p.name + ' ' + p.state + (p.output ? ' ' + JSON.stringify(p.output) : '') + (p.error ? ' ' + p.error : ''),
      p.state === 'approval-requested' && h('button', { className: 'approve', onClick: () => chat.approve(p.id, true) }, 'Approve'),
      p.state === 'approval-requested' && h('button', { className: 'deny', onClick: () => chat.approve(p.id, { approve: false, reason: 'no' }) }, 'Deny'));
  }
  return h('span', { className: p.type }, p.text ?? p.label ?? '');
}

function Message({ m }) {
  if (m.id === 'pending') window.pendingRenders++;
  return h('li', { 'data-role': m.role, 'data-status': m.status ?? '' },
    m.parts.map((p, i) => h(Part, { key: i, p, m })),
    m.role === 'user' && h('button', { className: 'edit', onClick: () => chat.edit(m.id, document.querySelector('input').value) }, 'Edit'));
}

function App() {
  const { messages, pending, status, error } = useSyncExternalStore(chat.subscribe, chat.getSnapshot);
  const send = (e) => {
    e.preventDefault();
    chat.send(e.target.text.value);
  };
  return h('main', { 'data-status': status },
    h('ol', { id: 'messages' }, messages.map((m) => h(Message, { key: m.id, m })), pending && h(Message, { key: 'pending', m: pending })),
    h('form', { onSubmit: send }, h('input', { name: 'text' }), h('button', { type: 'submit' }, 'Send')),
    h('button', { id: 'stop', onClick: () => chat.stop() }, 'Stop'),
    h('button', { id: 'regenerate', onClick: () => chat.regenerate() }, 'Regenerate'),
    error && h('p', { id: 'error' }, error.code));
}

createRoot(document.getElementById('root')).render(h(App));
`;

test('a React app and a plain-DOM page built by Vite, in Chromium, against the chat Worker in workerd', async () => {
  const base = join(root, 'tests/js/.out/chat-apps');
  rmSync(base, { recursive: true, force: true });
  // React comes from the repository's own node_modules (a parent folder of the app).
  const app = packedApp(base, 'chat-app');
  writeFileSync(join(app, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="/src/main.js"></script></body></html>');
  writeFileSync(join(app, 'src/main.js'), REACT_APP);
  writeFileSync(join(app, 'dom.html'), '<!doctype html><html><body><pre id="messages"></pre><form><input name="text"></form><button id="stop">Stop</button><script type="module" src="/src/dom.js"></script></body></html>');
  writeFileSync(join(app, 'src/dom.js'), readmeExample('chat'));
  // promptloom in a Web Worker: the page loads promptloom/remote only (no wasm) and runs the
  // remote suite against the worker, which opens IndexedDB and calls the mock provider
  // (same origin, through the preview server's /mock proxy).
  writeFileSync(join(app, 'remote.html'), '<!doctype html><html><body><script type="module" src="/src/remote.js"></script></body></html>');
  writeFileSync(join(app, 'src/remote-conformance.js'), readFileSync(join(root, 'tests/js/remote-conformance.mjs'), 'utf8'));
  writeFileSync(join(app, 'src/chat-conformance.mjs'), readFileSync(join(root, 'tests/js/chat-conformance.mjs'), 'utf8'));
  writeFileSync(join(app, 'src/remote-serve.js'), readFileSync(join(root, 'tests/js/remote-serve.mjs'), 'utf8'));
  writeFileSync(join(app, 'src/remote-worker.js'), "import * as pl from 'promptloom';\nimport { serveTests } from './remote-serve.js';\n\nserveTests(pl);\n");
  // docs/chat.md's page over the README's worker: the chat in the worker relays through
  // the Durable Object Worker, as the other pages do.
  writeFileSync(join(app, 'src/worker.js'), readmeExample('webworker'));
  writeFileSync(join(app, 'remotechat.html'), '<!doctype html><html><body><script type="module" src="/src/remotechat.js"></script></body></html>');
  writeFileSync(join(app, 'src/remotechat.js'), `${readmeExample('chatremote', 'docs/chat.md')}
const seen = [];
chat.subscribe(() => seen.push(chat.getSnapshot()));
const out = await chat.send('Hello from the page');
window.remoteChat = { stop: out.stop, roles: chat.messages.map((m) => m.role), text: chat.messages.at(-1).parts.map((p) => p.text ?? '').join(''), streamed: seen.filter((s) => s.status === 'streaming').length };
`);
  // docs/chat.md's Vue and Svelte bindings, each a page of the app.
  writeFileSync(join(app, 'vue.html'), '<!doctype html><html><body><div id="app"></div><script type="module" src="/src/vue.js"></script></body></html>');
  writeFileSync(join(app, 'src/vue.js'), readmeExample('chatvue', 'docs/chat.md'));
  writeFileSync(join(app, 'svelte.html'), '<!doctype html><html><body><div id="app"></div><script type="module" src="/src/svelte.js"></script></body></html>');
  writeFileSync(join(app, 'src/ChatPanel.svelte'), readmeExample('chatsvelte', 'docs/chat.md'));
  writeFileSync(join(app, 'src/svelte.js'), `import { mount } from 'svelte';
import { Chat, openMessageStore } from 'promptloom';
import ChatPanel from './ChatPanel.svelte';

const chat = await Chat.open({
  store: await openMessageStore({ backend: 'indexeddb', name: 'svelte-chat' }),
  endpoint: '/chat',
  settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 1024, stream: true },
});
mount(ChatPanel, { target: document.getElementById('app'), props: { chat } });
`);
  writeFileSync(join(app, 'src/remote.js'), `import { connectWorker, PromptloomError } from 'promptloom/remote';
import { remoteConformance } from './remote-conformance.js';

const worker = () => new Worker(new URL('./remote-worker.js', import.meta.url), { type: 'module' });
window.remoteResults = await remoteConformance({ connectWorker, PromptloomError }, { worker, mock: location.origin + '/mock', backend: 'indexeddb' });
`);

  // The Worker: the README's, bundled by wrangler, in workerd on a local port.
  const mock = await startMockProvider();
  // The Worker of docs/chat.md: a Durable Object per run keeps what it relays.
  const script = bundledWorker(join(base, 'worker'), readmeExample('chatresume', 'docs/chat.md'), 'name = "chat-app"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n\n[[durable_objects.bindings]]\nname = "CHAT_RUNS"\nclass_name = "ChatRun"\n\n[[migrations]]\ntag = "v1"\nnew_classes = ["ChatRun"]\n');
  let slow = false;
  const mf = new Miniflare({
    modules: true,
    scriptPath: script,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    port: 0,
    durableObjects: { CHAT_RUNS: 'ChatRun' },
    bindings: { ANTHROPIC_API_KEY: 'worker-key', ANTHROPIC_BASE_URL: mockBaseURL(mock.url, 'anthropic') },
    // The Worker's requests to the provider, slowed when the test says so.
    outboundService: async (req) => {
      const headers = Object.fromEntries(req.headers);
      if (slow) headers['x-mock'] = slow === true ? 'slow=150' : slow;
      return mfFetch(req.url, { method: req.method, headers, body: req.method === 'GET' ? undefined : await req.arrayBuffer() });
    },
  });
  const workerURL = await mf.ready;
  writeFileSync(join(app, 'vite.config.js'), `import { svelte } from '@sveltejs/vite-plugin-svelte';\nexport default { plugins: [svelte()], build: { target: 'es2022', rollupOptions: { input: { main: 'index.html', dom: 'dom.html', remote: 'remote.html', remotechat: 'remotechat.html', vue: 'vue.html', svelte: 'svelte.html' } } }, worker: { format: 'es' }, preview: { proxy: { '/chat': { target: ${JSON.stringify(String(workerURL).replace(/\/$/, ''))}, changeOrigin: true }, '/mock': { target: ${JSON.stringify(mock.url)}, changeOrigin: true, rewrite: (p) => p.slice('/mock'.length) } } } };\n`);
  await build({ root: app, logLevel: 'silent' });
  const server = await preview({ root: app, preview: { port: 0, host: '127.0.0.1' }, logLevel: 'silent' });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const origin = server.resolvedUrls.local[0];
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const status = (s) => page.waitForFunction((want) => document.querySelector('main')?.dataset.status === want, s, { timeout: 20000 });
    const roles = () => page.$$eval('#messages > li', (l) => l.map((x) => `${x.dataset.role}${x.dataset.status ? `:${x.dataset.status}` : ''}`));
    const say = async (text) => {
      await page.fill('input', text);
      await page.press('input', 'Enter');
    };
    const approveNext = async () => {
      await page.waitForSelector('button.approve', { timeout: 20000 });
      await page.click('button.approve');
    };

    // React: a message, its tool call approved in the page, the reply streamed.
    await page.goto(origin);
    await status('ready');
    await say('Find the stream docs');
    await approveNext();
    await status('ready');
    assert.deepEqual(await roles(), ['user', 'assistant:done', 'assistant:done']);
    assert.match(await page.textContent('#messages > li:nth-child(2) .call'), /^search output-available \{"hits":\["Find the stream docs\.md"\]\}/);
    assert.match(await page.textContent('#messages > li:nth-child(3)'), /The tool answered/);
    assert.ok((await page.evaluate(() => window.pendingRenders)) > 0, 'the reply rendered while it streamed');
    assert.equal(mock.requests.at(-1).headers['x-api-key'], 'worker-key');

    // Stop while the next reply streams (a token at a time): rendered as each came, then
    // kept, marked cut. (The events of one network chunk are one render.)
    slow = true;
    const rendersBefore = await page.evaluate(() => window.pendingRenders);
    await say('Tell me more');
    const streamed = () => page.evaluate(() => document.querySelector('#messages > li[data-status=streaming] .text')?.textContent.length ?? 0);
    await page.waitForFunction(() => (document.querySelector('#messages > li[data-status=streaming] .text')?.textContent.length ?? 0) > 3, null, { timeout: 20000 });
    const [sofar, renders] = [await streamed(), await page.evaluate(() => window.pendingRenders)];
    await page.waitForFunction((n) => (document.querySelector('#messages > li[data-status=streaming] .text')?.textContent.length ?? 0) > n, sofar, { timeout: 20000 });
    assert.ok(renders > rendersBefore && (await page.evaluate(() => window.pendingRenders)) > renders, 'the reply rendered as it streamed, a token at a time');
    await page.click('#stop');
    await status('ready');
    slow = false;
    assert.deepEqual(await roles(), ['user', 'assistant:done', 'assistant:done', 'user', 'assistant:cut']);

    // Regenerate: a branch with the last user message answered again.
    await page.click('#regenerate');
    await approveNext();
    await status('ready');
    const afterRegenerate = await roles();
    assert.deepEqual(afterRegenerate, ['user', 'assistant:done', 'assistant:done', 'user', 'assistant:done', 'assistant:done']);
    const branch = await page.evaluate(() => window.chat.session);
    assert.match(branch, /^chat-1~/);

    // Edit the first message: another branch, from the start.
    await page.fill('input', 'Find the relay docs');
    await page.click('#messages > li:first-child button.edit');
    await approveNext();
    await status('ready');
    assert.deepEqual(await roles(), ['user', 'assistant:done', 'assistant:done']);
    assert.match(await page.textContent('#messages > li:first-child'), /^Find the relay docs/);
    const edited = await page.evaluate(() => window.chat.session);
    assert.notEqual(edited, branch);

    // A reload in the middle of a stream: the thread comes back from IndexedDB, and the
    // page attaches to the reply its Durable Object is still reading (replayed from the
    // start), with no new request to the provider.
    slow = true;
    const asked = mock.requests.length;
    await say('One more');
    await page.waitForFunction(() => (document.querySelector('#messages > li[data-status=streaming] .text')?.textContent.length ?? 0) > 3, null, { timeout: 20000 });
    await page.reload();
    slow = false;
    await page.waitForFunction(() => window.chat?.getSnapshot().run, null, { timeout: 20000 });
    assert.equal(await page.evaluate(() => window.chat.session), edited);
    await approveNext();
    await status('ready');
    assert.deepEqual(await roles(), ['user', 'assistant:done', 'assistant:done', 'user', 'assistant:done', 'assistant:done']);
    // The first step's reply was the one read before the reload; only the step after the tool asked again.
    assert.equal(mock.requests.length, asked + 2);
    assert.equal(await page.evaluate(() => window.chat.getSnapshot().run), null);
    assert.equal(await page.evaluate(() => window.store.draft(window.chat.session)), null, 'no draft once the reply is stored');
    // The old threads are still in the store, under their sessions.
    const kept = await page.evaluate(async () => (await window.store.thread('chat-1')).map((t) => t.role));
    assert.deepEqual(kept, ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    assert.deepEqual(errors, []);

    // A reload whose run the server no longer has (its object gone): the page attaches, the
    // Worker answers 404, and the reply so far shows in the thread, cut.
    await page.evaluate(async () => {
      const session = window.chat.session;
      await window.store.append({ role: 'user', parts: [{ type: 'text', text: 'Lost one' }] }, { session });
      await window.store.saveDraft({ run: 'a-run-the-worker-never-had', turn: { role: 'assistant', parts: [{ type: 'text', text: 'The reply so far' }] } }, { session });
    });
    await page.reload();
    await status('error');
    assert.deepEqual((await roles()).slice(-2), ['user', 'assistant:cut']);
    assert.match(await page.textContent('#messages > li:last-child'), /^The reply so far/);
    assert.equal(await page.evaluate(() => window.chat.error?.code), 'NotFound');
    assert.equal(await page.evaluate(() => window.store.draft(window.chat.session)), null);

    // The README's plain-DOM page, in the same app.
    const dom = await browser.newPage();
    dom.on('pageerror', (e) => errors.push(e.message));
    await dom.goto(new URL('/dom.html', origin).href);
    await dom.waitForFunction(() => document.querySelector('#messages').dataset.status === 'ready');
    await dom.fill('input', 'Hello there');
    await dom.press('input', 'Enter');
    await dom.waitForFunction(() => /assistant: You said: "Hello there"/.test(document.querySelector('#messages').textContent) && document.querySelector('#messages').dataset.status === 'ready', null, { timeout: 20000 });
    await dom.reload();
    await dom.waitForFunction(() => document.querySelector('#messages').dataset.status === 'ready');
    assert.match(await dom.textContent('#messages'), /^user: Hello there\nassistant: You said: "Hello there"/);
    assert.deepEqual(errors, []);
    // A reload in the middle of a reply the page reads itself (no reconnect): the reply so
    // far was kept as the thread's draft, and comes back cut.
    slow = true;
    await dom.fill('input', 'Tell me a story');
    await dom.press('input', 'Enter');
    await dom.waitForFunction(() => /assistant: You said: "Tell me a story/.test(document.querySelector('#messages').textContent), null, { timeout: 20000 });
    await dom.waitForTimeout(1200); // the draft is saved every 500 ms while the reply streams
    const shown = (await dom.textContent('#messages')).split('\n').at(-1);
    await dom.reload();
    slow = false;
    await dom.waitForFunction(() => document.querySelector('#messages').dataset.status === 'ready');
    const back = (await dom.textContent('#messages')).split('\n');
    assert.equal(back.length, 4, back.join('\n'));
    assert.equal(back[2], 'user: Tell me a story');
    assert.match(back[3], /^assistant: You said: "Tell me a story/);
    assert.ok(shown.startsWith(back[3]) && back[3].length > 'assistant: You said'.length, `the draft is what was shown: ${back[3]} / ${shown}`);
    assert.deepEqual(errors, []);

    // docs/chat.md's Vue and Svelte panels: a message sent, the reply streamed in (a token
    // at a time: the events of one network chunk are one change), shown.
    slow = 'slow=15';
    for (const [name, text] of [['vue', 'Hello Vue'], ['svelte', 'Hello Svelte']]) {
      const p = await browser.newPage();
      p.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
      await p.goto(new URL(`/${name}.html`, origin).href);
      await p.waitForFunction(() => document.querySelector('main')?.dataset.status === 'ready', null, { timeout: 20000 });
      let streamed = 0;
      await p.exposeFunction('seen', () => streamed++);
      await p.evaluate(() => new MutationObserver(() => window.seen()).observe(document.querySelector('ol'), { childList: true, subtree: true, characterData: true }));
      await p.fill('input', text);
      await p.press('input', 'Enter');
      await p.waitForFunction((t) => document.querySelector('li[data-role=assistant]')?.textContent.includes(`You said: "${t}"`) && document.querySelector('main').dataset.status === 'ready', text, { timeout: 20000 });
      assert.deepEqual(await p.$$eval('li', (l) => l.map((x) => x.dataset.role)), ['user', 'assistant'], name);
      assert.equal(await p.textContent('li[data-role=user]'), text, name);
      assert.ok(streamed > 3, `${name}: the reply rendered as it streamed (${streamed} changes)`);
      await p.close();
    }
    slow = false;
    assert.deepEqual(errors, []);

    // promptloom in a Web Worker, seen from a page that loads no wasm.
    const remote = await browser.newPage();
    remote.on('pageerror', (e) => errors.push(e.message));
    await remote.goto(new URL('/remote.html', origin).href);
    await remote.waitForFunction(() => window.remoteResults, null, { timeout: 60000 });
    const results = await remote.evaluate(() => window.remoteResults);
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed, [], failed.map((r) => `${r.name}\n${r.detail}`).join('\n\n'));
    assert.ok(results.length >= 6, `${results.length} scenarios`);
    const pageWasm = await remote.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm')));
    assert.deepEqual(pageWasm, [], 'the page fetched no wasm (the worker did)');
    // docs/chat.md's page: a chat in the README's worker, relayed by the Worker in workerd.
    await remote.goto(new URL('/remotechat.html', origin).href);
    await remote.waitForFunction(() => window.remoteChat, null, { timeout: 30000 });
    const rc = await remote.evaluate(() => window.remoteChat);
    assert.equal(rc.stop, 'final');
    assert.deepEqual(rc.roles, ['user', 'assistant']);
    assert.match(rc.text, /You said: "Hello from the page"/);
    assert.ok(rc.streamed > 3, `${rc.streamed} streamed snapshots on the page`);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
    await mf.dispose();
    await mock.close();
  }
});
