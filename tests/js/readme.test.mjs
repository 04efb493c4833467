// Every example in README.md and docs/ runs, in the host it is written for: Node, the browser (an
// import map names the package), a wrangler-bundled Worker in workerd, the component in jco,
// and the component in Wasmtime (Python). Where the README shows output, it must match.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Miniflare, fetch as mfFetch } from 'miniflare';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { root } from './cases.mjs';
import { bundledWorker } from './apps.mjs';

/** The pages whose examples run: the README and every guide in docs/. */
const pages = () => ['README.md', 'BENCHMARKS.md', 'bench/HISTORY.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** `<!-- example: name -->` + fenced block, and an optional `<!-- output -->` block after it. */
function examples() {
  const re = /<!-- (example: (\w+)|output) -->\n```\w*\n([\s\S]*?)\n```/g;
  const out = {};
  for (const page of pages()) {
    const md = readFileSync(join(root, page), 'utf8');
    let last;
    for (const m of md.matchAll(re)) {
      if (m[2]) {
        assert.ok(!(m[2] in out), `example ${m[2]} is named twice`);
        out[(last = m[2])] = { code: m[3], page };
      } else if (last) out[last].output = m[3];
    }
  }
  return out;
}

const ex = examples();
const out = join(root, 'tests/js/.out/readme');
before(() => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
});

test('the README and the guides have an example for every host', () => {
  // (`webworker` and `webworkerpage` run in a Vite app: tests/js/vite.test.mjs; `chatattach`
  // in the React app of tests/js/chat-apps.test.mjs, `chatvue`, `chatsvelte` and
  // `chatremote` in its Vue, Svelte and Web Worker pages.)
  assert.deepEqual(Object.keys(ex).sort(), ['browser', 'chat', 'chatattach', 'chatnode', 'chatremote', 'chatresume', 'chatsvelte', 'chatvue', 'chatworker', 'composer', 'compositor', 'conversation', 'fit', 'gateway', 'gatewaybrowser', 'gatewaywasmtime', 'gatewayworker', 'jco', 'node', 'pages', 'sessions', 'settings', 'skills', 'streaming', 'toolkinds', 'tracepages', 'wasmtime', 'webworker', 'webworkerpage', 'worker', 'workerpage']);
});

// Every code block of the README and docs/ runs: a JS or Python block is a named example
// (run below), a Rust block is a doc test (src/lib.rs includes each page), and the rest
// are what an example prints, shell lines, diagrams or tables in text, or a Cargo.toml line.
test('every code block in the README and docs/ is an example that runs', () => {
  const ran = [];
  for (const page of pages()) {
    const md = readFileSync(join(root, page), 'utf8');
    for (const m of md.matchAll(/(?:^|\n)(<!-- [^\n]* -->\n)?```(\w*)\n[\s\S]*?\n```/g)) {
      const [, marker, lang] = m;
      const where = `${page}: a \`${lang || 'untagged'}\` block at offset ${m.index}`;
      if (['js', 'ts', 'python', 'py', 'mjs', 'svelte'].includes(lang)) assert.match(marker ?? '', /^<!-- example: \w+ -->/, `${where} is not a named example`);
      else if (lang === 'rust') assert.ok(readFileSync(join(root, 'src/lib.rs'), 'utf8').includes(`include_str!("../${page}")`), `${where}: src/lib.rs does not doc-test ${page}`);
      else assert.ok(['text', 'toml', ''].includes(lang), `${where}: an unknown language`);
      ran.push(lang);
    }
  }
  assert.ok(ran.filter((l) => ['js', 'ts', 'python', 'svelte'].includes(l)).length >= Object.keys(ex).length, `${ran.length} blocks`);
});

test('every relative link of the README and docs/ names a file that exists; the npm page and licenses are current', async () => {
  const { existsSync } = await import('node:fs');
  const { dirname } = await import('node:path');
  for (const page of [...pages(), 'ARCHITECTURE.md', 'CHANGELOG.md']) {
    const md = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
    for (const [, target] of md.matchAll(/\]\(((?!https?:|#)[^)\s#]+)(#[^)\s]*)?\)/g)) {
      assert.ok(existsSync(join(root, dirname(page), target)), `${page} links to ${target}, which does not exist`);
    }
  }
  const { pkgReadme } = await import('../../scripts/pkg-readme.mjs');
  assert.equal(readFileSync(join(root, 'pkg/README.md'), 'utf8'), pkgReadme(readFileSync(join(root, 'README.md'), 'utf8')), 'pkg/README.md is stale: node scripts/pkg-readme.mjs');
  for (const f of ['LICENSE-MIT', 'LICENSE-APACHE']) assert.equal(readFileSync(join(root, 'pkg', f), 'utf8'), readFileSync(join(root, f), 'utf8'), `pkg/${f}`);
  const manifest = JSON.parse(readFileSync(join(root, 'pkg/package.json'), 'utf8'));
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE']) assert.ok(manifest.files.includes(f), f);
  assert.ok(Number(process.versions.node.split('.')[0]) >= Number(manifest.engines.node.replace('>=', '')), 'engines.node admits the Node the tests run on');
  assert.equal(manifest.engines.node, '>=20', 'the oldest Node the test command runs on (CI: 20)');
});

test('README: Node, the request sent to the mock provider (ANTHROPIC_BASE_URL)', async () => {
  const { startMockProvider, mockBaseURL } = await import('../../scripts/mock-provider.mjs');
  const mock = await startMockProvider();
  try {
    const file = join(out, 'node.mjs');
    writeFileSync(file, ex.node.code);
    const env = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: mockBaseURL(mock.url, 'anthropic') };
    const { execFile } = await import('node:child_process');
    const text = await new Promise((res, rej) => execFile('node', [file], { encoding: 'utf8', env }, (e, so, se) => (e ? rej(new Error(`${e.message}\n${se}`)) : res(so))));
    assert.equal(text.trimEnd(), ex.node.output);
    // What the example sent is the body it printed.
    assert.equal(mock.requests.at(-1).body, ex.node.output.split('\n')[0]);
  } finally {
    await mock.close();
  }
});

test('README: one set of settings for every provider', () => {
  const file = join(out, 'settings.mjs');
  writeFileSync(file, ex.settings.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.settings.output);
});

test('README: the compositor in Node', () => {
  const file = join(out, 'compositor.mjs');
  writeFileSync(file, ex.compositor.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.compositor.output);
});

test('README: a conversation in Node', () => {
  const file = join(out, 'conversation.mjs');
  writeFileSync(file, ex.conversation.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.conversation.output);
});

test('README: the context fit of a conversation', () => {
  const file = join(out, 'fit.mjs');
  writeFileSync(file, ex.fit.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.fit.output);
});

test('README: custom tools, provider tools and their calls', () => {
  const file = join(out, 'toolkinds.mjs');
  writeFileSync(file, ex.toolkinds.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.toolkinds.output);
});

/** Runs the Node example `name` against the mock provider (its URL in place of :8787); what it prints. */
async function againstMock(name) {
  const { startMockProvider } = await import('../../scripts/mock-provider.mjs');
  const { execFile } = await import('node:child_process');
  const mock = await startMockProvider();
  try {
    const file = join(out, `${name}.mjs`);
    writeFileSync(file, ex[name].code.replace('http://127.0.0.1:8787', mock.url));
    return await new Promise((res, rej) => execFile('node', [file], { encoding: 'utf8' }, (e, so, se) => (e ? rej(new Error(`${e.message}\n${se}`)) : res(so))));
  } finally {
    await mock.close();
  }
}

test('README: streaming, tools and the agent loop in Node, against the mock provider', async () => {
  assert.equal((await againstMock('streaming')).trimEnd(), ex.streaming.output);
});

test('docs/chat.md: a Chat in Node with a tool that asks for approval, and a regenerate, against the mock provider', async () => {
  assert.equal((await againstMock('chatnode')).trimEnd(), ex.chatnode.output);
});

test('docs/chat.md: a run in a Durable Object (wrangler, workerd); a Chat whose connection breaks mid-reply picks it up again', async () => {
  const { startMockProvider, mockBaseURL, planFor } = await import('../../scripts/mock-provider.mjs');
  const { createServer } = await import('node:http');
  const pl = await import('promptloom');
  const mock = await startMockProvider();
  const script = bundledWorker(join(out, 'chatresume'), ex.chatresume.code, 'name = "chat-runs"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n\n[[durable_objects.bindings]]\nname = "CHAT_RUNS"\nclass_name = "ChatRun"\n\n[[migrations]]\ntag = "v1"\nnew_classes = ["ChatRun"]\n');
  const persist = join(out, 'chatresume-storage');
  rmSync(persist, { recursive: true, force: true });
  const options = {
    modules: true,
    scriptPath: script,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    durableObjects: { CHAT_RUNS: 'ChatRun' },
    // The objects' storage on disk: it outlives a restart of workerd (every object evicted).
    durableObjectsPersist: persist,
    bindings: { ANTHROPIC_API_KEY: 'worker-key', ANTHROPIC_BASE_URL: mockBaseURL(mock.url, 'anthropic') },
    // The provider streams slowly, so the reply is still coming when the page reconnects.
    outboundService: async (req) => mfFetch(req.url, { method: req.method, headers: { ...Object.fromEntries(req.headers), 'x-mock': 'slow=5' }, body: await req.arrayBuffer() }),
  };
  const mf = new Miniflare(options);
  // Between the page and the Worker: the first reply's connection breaks after 900 bytes.
  const seen = [];
  let breaks = 1;
  const proxy = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    seen.push({ method: req.method, run: req.headers['x-promptloom-run'], last: req.headers['last-event-id'] });
    const answer = await mf.dispatchFetch('http://x/chat', { method: req.method, headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-') || k === 'last-event-id' || k === 'content-type')), body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    const reader = answer.body.getReader();
    const cut = req.method === 'POST' && breaks-- > 0 ? 900 : Infinity;
    let sent = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (sent + value.length >= cut) {
        res.write(value.subarray(0, cut - sent));
        await reader.cancel();
        return res.destroy();
      }
      sent += value.length;
      res.write(value);
    }
    res.end();
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  try {
    const store = await pl.openMessageStore({ backend: 'memory' });
    const chat = await pl.Chat.open({ store, session: 'chat-1', endpoint: `http://127.0.0.1:${proxy.address().port}/chat`, reconnect: true, settings: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 1024, stream: true } });
    const out = await chat.send('Tell me about reconnecting');
    assert.equal(out.stop, 'final', JSON.stringify(out.error));
    const reply = chat.messages.at(-1);
    assert.equal(reply.status, 'done');
    const text = reply.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.equal(text, planFor('anthropic', JSON.parse(mock.requests.at(-1).body)).text);
    // One provider request; the page's POST broke, and its GET named the run and the last event.
    assert.equal(mock.requests.length, 1);
    assert.deepEqual(seen.map((s) => s.method), ['POST', 'GET']);
    assert.equal(seen[1].run, seen[0].run);
    assert.match(seen[1].last, /^\d+$/);
    // The stored turn is the whole reply.
    const thread = await store.thread('chat-1');
    assert.equal(thread.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join(''), text);
    // workerd restarts (every object evicted, its memory gone): the run is replayed from
    // the object's storage, the same reply, with no new request to the provider.
    assert.ok(readdirSync(persist, { recursive: true }).some((f) => String(f).endsWith('.sqlite')), 'the objects kept their logs on disk');
    await mf.setOptions(options);
    const again = await pl.readEventStream(mf.dispatchFetch('http://x/chat', { headers: { 'x-promptloom-run': seen[0].run } })).turn;
    assert.equal(again.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''), text);
    assert.equal(mock.requests.length, 1);
    // A run the server does not have: NotFound, as the page reads it.
    const gone = await mf.dispatchFetch('http://x/chat', { headers: { 'x-promptloom-run': 'nope' } });
    assert.equal(gone.status, 404);
    assert.equal((await gone.json()).code, 'NotFound');
  } finally {
    await new Promise((r) => proxy.close(r));
    await mf.dispose();
    await mock.close();
  }
});

test('README: a chat panel in Chromium (IndexedDB) against its Worker (bundled by wrangler, in workerd): streaming, stop, a reload', async () => {
  const { startMockProvider, mockBaseURL } = await import('../../scripts/mock-provider.mjs');
  const mock = await startMockProvider();
  const script = bundledWorker(join(out, 'chatworker'), ex.chatworker.code, 'name = "readme-chat"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n');
  // The mock streams slowly when asked (x-mock), so the page can stop a reply mid-way.
  let slow = false;
  const mf = new Miniflare({
    modules: true,
    scriptPath: script,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    bindings: { ANTHROPIC_API_KEY: 'worker-key', ANTHROPIC_BASE_URL: mockBaseURL(mock.url, 'anthropic') },
    // The Worker's requests to the provider, slowed when the test says so.
    outboundService: async (req) => {
      const headers = Object.fromEntries(req.headers);
      if (slow) headers['x-mock'] = 'slow=40';
      return mfFetch(req.url, { method: req.method, headers, body: req.method === 'GET' ? undefined : await req.arrayBuffer() });
    },
  });
  // The page's origin serves the files and forwards /chat to the Worker.
  const server = await serve(0, '127.0.0.1', {
    '/chat': async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const answer = await mf.dispatchFetch('http://x/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      const reader = answer.body.getReader();
      res.on('close', () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    },
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    writeFileSync(join(out, 'chat.js'), ex.chat.code);
    writeFileSync(join(out, 'chat.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">{"imports":{"promptloom":"/pkg/src/web.js"}}</script>
<pre id="messages"></pre><form><input name="text"></form><button id="stop">Stop</button>
<script type="module" src="/tests/js/.out/readme/chat.js"></script>`);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const open = async () => {
      await page.goto(`${server.url}/tests/js/.out/readme/chat.html`);
      await page.waitForFunction(() => document.querySelector('#messages').dataset.status === 'ready');
    };
    const say = async (text) => {
      await page.fill('input', text);
      await page.press('input', 'Enter');
    };
    await open();
    await say('Hello there');
    await page.waitForFunction(() => /assistant: You said: "Hello there"/.test(document.querySelector('#messages').textContent) && document.querySelector('#messages').dataset.status === 'ready');
    const first = await page.textContent('#messages');
    // The provider saw the page's request with the Worker's key.
    assert.equal(mock.requests.at(-1).headers['x-api-key'], 'worker-key');
    assert.equal(JSON.parse(mock.requests.at(-1).body).messages[0].content[0].text, 'Hello there');
    // A second message, stopped while it streams.
    slow = true;
    await say('Tell me more');
    await page.waitForFunction(() => document.querySelector('#messages').dataset.status === 'streaming' && /assistant: You said: "Tell/.test(document.querySelector('#messages').textContent));
    await page.click('#stop');
    await page.waitForFunction(() => document.querySelector('#messages').dataset.status === 'ready');
    slow = false;
    const stopped = await page.textContent('#messages');
    assert.ok(stopped.startsWith(first), stopped);
    const cutReply = stopped.split('\n').at(-1);
    assert.match(cutReply, /^assistant: /);
    assert.ok(!cutReply.endsWith('arriving.'), `stopped before the end: ${cutReply}`);
    // A reload: the thread comes back from IndexedDB, the cut reply with it.
    await open();
    assert.equal(await page.textContent('#messages'), stopped);
    const cut = await page.evaluate(async () => {
      const { openMessageStore } = await import('promptloom');
      const store = await openMessageStore({ backend: 'indexeddb', name: 'editor' });
      return (await store.thread('chat-1')).map((t) => [t.role, t.metadata.cut === true]);
    });
    assert.deepEqual(cut, [['user', false], ['assistant', false], ['user', false], ['assistant', true]]);
    // The Worker refuses another model: the page shows the error code.
    const refused = await page.evaluate(async () => {
      const { readEventStream } = await import('promptloom');
      try {
        await readEventStream(fetch('/chat', { method: 'POST', body: JSON.stringify({ model: 'other' }) })).turn;
      } catch (e) {
        return e.code;
      }
    });
    assert.equal(refused, 'InvalidRequest');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
    await mf.dispose();
    await mock.close();
  }
});

test('README: skills in Node', () => {
  const file = join(out, 'skills.mjs');
  writeFileSync(file, ex.skills.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.skills.output);
});

test('README: the Skill Composer in Node', () => {
  const file = join(out, 'composer.mjs');
  writeFileSync(file, ex.composer.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.composer.output);
});

test('README: sessions and approvals in Node', () => {
  const file = join(out, 'sessions.mjs');
  writeFileSync(file, ex.sessions.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.sessions.output);
});

test('docs/api/ is the reference the types give (scripts/api-docs.mjs, TypeDoc with warnings as errors)', () => {
  try {
    execFileSync('node', [join(root, 'scripts/api-docs.mjs'), '--check'], { stdio: 'pipe' });
  } catch (e) {
    assert.fail(`${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
});

test('docs/compositor.md: a session page by page in Node', () => {
  const file = join(out, 'pages.mjs');
  writeFileSync(file, ex.pages.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.pages.output);
});

test('docs/composer.md: traces page by page in Node', () => {
  const file = join(out, 'tracepages.mjs');
  writeFileSync(file, ex.tracepages.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.tracepages.output);
});

test('README: WASI component in jco', () => {
  const dir = join(out, 'jco');
  execFileSync(join(root, 'node_modules/.bin/jco'), ['transpile', join(root, 'target/component/promptloom-lowering.wasm'), '-o', join(dir, 'promptloom-component'), '--quiet']);
  writeFileSync(join(dir, 'example.mjs'), ex.jco.code);
  assert.equal(execFileSync('node', [join(dir, 'example.mjs')], { encoding: 'utf8' }).trimEnd(), ex.jco.output);
});

test('README: WASI component in Wasmtime', () => {
  const dir = join(out, 'py');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(root, 'target/component/promptloom-lowering.wasm'), join(dir, 'promptloom-lowering.wasm'));
  writeFileSync(join(dir, 'example.py'), ex.wasmtime.code);
  assert.equal(execFileSync('python3', ['example.py'], { cwd: dir, encoding: 'utf8' }).trimEnd(), ex.wasmtime.output);
});

test('README: skill contracts and the gateway in Node', () => {
  const file = join(out, 'gateway.mjs');
  writeFileSync(file, ex.gateway.code);
  assert.equal(execFileSync('node', [file], { encoding: 'utf8' }).trimEnd(), ex.gateway.output);
});

test('README: the gateway in a WASI host (Wasmtime)', () => {
  const dir = join(out, 'gateway-py');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(root, 'target/component/promptloom.wasm'), join(dir, 'promptloom.wasm'));
  writeFileSync(join(dir, 'example.py'), ex.gatewaywasmtime.code);
  assert.equal(execFileSync('python3', ['example.py'], { cwd: dir, encoding: 'utf8' }).trimEnd(), ex.gatewaywasmtime.output);
});

test('README: the gateway in a Worker with a Durable Object (bundled by wrangler, two isolates in workerd)', async () => {
  const script = bundledWorker(join(out, 'gateway-worker'), ex.gatewayworker.code, 'name = "readme-gateway"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n\n[[durable_objects.bindings]]\nname = "GATEWAY_STATE"\nclass_name = "GatewayState"\n\n[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["GatewayState"]\n');
  const worker = (name, ns) => ({ name, modules: true, scriptPath: script, modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }], compatibilityDate: '2025-01-01', durableObjects: { GATEWAY_STATE: ns } });
  const mf = new Miniflare({ workers: [worker('a', 'GatewayState'), worker('b', { className: 'GatewayState', scriptName: 'a' })] });
  try {
    const [a, b] = [await mf.getWorker('a'), await mf.getWorker('b')];
    const ask = (w, id) => w.fetch('http://x/', { method: 'POST', headers: { 'x-user': 'u1' }, body: JSON.stringify({ order_id: id }) });
    const r1 = await ask(a, 'ORD-1');
    assert.equal(r1.status, 200);
    assert.deepEqual(await r1.json(), { status: 'ORD-1 shipped' });
    assert.equal((await ask(b, 'ORD-2')).status, 200);
    const third = await ask(a, 'ORD-3');
    assert.equal(third.status, 429, 'two per minute, counted across both isolates');
    assert.ok((await third.json()).retry_after_ms > 0);
    assert.equal((await (await ask(b, 'nope')).json()).code, 'InvalidInput');
  } finally {
    await mf.dispose();
  }
});

test('README: the gateway in the browser on IndexedDB', async () => {
  const server = await serve(0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    writeFileSync(join(out, 'gateway-browser.js'), ex.gatewaybrowser.code);
    writeFileSync(join(out, 'gateway-browser.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">{"imports":{"promptloom/composer":"/pkg/src/composer-web.js"}}</script>
<pre></pre>`);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/tests/js/.out/readme/gateway-browser.html`);
    await page.addScriptTag({ type: 'module', url: '/tests/js/.out/readme/gateway-browser.js' });
    await page.waitForFunction(() => document.querySelector('pre').textContent.length > 0);
    assert.deepEqual(errors, []);
    assert.equal(await page.textContent('pre'), 'Thread T-7: resolved.');
    assert.ok(await page.evaluate(async () => (await indexedDB.databases()).some((d) => d.name === 'my-app-gateway')));
  } finally {
    await browser.close();
    await server.close();
  }
});

test('README: a Worker that relays the reply to the page as an event stream (bundled by wrangler, run in workerd, against the mock provider; the page example reads it)', async () => {
  const { startMockProvider, mockBaseURL, planFor } = await import('../../scripts/mock-provider.mjs');
  const mock = await startMockProvider();
  const script = bundledWorker(join(out, 'worker'), ex.worker.code, 'name = "readme-worker"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n');
  const mf = new Miniflare({
    modules: true,
    scriptPath: script,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    bindings: { ANTHROPIC_API_KEY: 'worker-key', ANTHROPIC_BASE_URL: mockBaseURL(mock.url, 'anthropic') },
  });
  try {
    // The page's example, its `fetch` the Worker's and its element a stand-in.
    const pl = await import('promptloom');
    const reply = { textContent: '' };
    const seen = [];
    const fetchWorker = async (path, init) => {
      const res = await mf.dispatchFetch(`http://x${path}`, init);
      seen.push(res);
      return res;
    };
    const page = ex.workerpage.code.replace("import { readEventStream } from 'promptloom';", '').replace("const reply = document.querySelector('#reply');", '') + '\nreturn turn;';
    const turn = await new Function('readEventStream', 'fetch', 'reply', `return (async () => {${page}})();`)(pl.readEventStream, fetchWorker, reply);
    assert.equal(seen[0].status, 200);
    assert.equal(seen[0].headers.get('content-type'), 'text/event-stream; charset=utf-8');
    // What reached the provider: the streamed request, with the Worker's key; what came
    // back to the page: the text the provider streamed, and the turn the Worker read.
    const sent = mock.requests.at(-1);
    assert.equal(reply.textContent, planFor('anthropic', JSON.parse(sent.body)).text);
    assert.equal(turn.parts.find((p) => p.type === 'text').text, reply.textContent);
    assert.equal(turn.metadata.provider, 'anthropic');
    assert.equal(JSON.parse(sent.body).stream, true);
    assert.equal(sent.headers['x-api-key'], 'worker-key');
    assert.equal(JSON.parse(sent.body).messages[0].content[0].text, 'Hello there');
    // The Worker's own refusal reaches the page's readEventStream as its code.
    await assert.rejects(pl.readEventStream(await fetchWorker('/', { method: 'POST', body: JSON.stringify({ parts: [] }) })).turn, (e) => e.code === 'EmptyMessage');
    const bad = await mf.dispatchFetch('http://x/', { method: 'POST', body: JSON.stringify({ parts: [{ type: 'command', id: '/x' }] }) });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).code, 'UnresolvedCommand');
  } finally {
    await mf.dispose();
    await mock.close();
  }
});

test('README: browser (import map, a dropped PNG)', async () => {
  const server = await serve(0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    writeFileSync(join(out, 'browser.js'), ex.browser.code);
    writeFileSync(join(out, 'browser.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">{"imports":{"promptloom":"/pkg/src/web.js"}}</script>
<input type="file"><pre></pre>`);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/tests/js/.out/readme/browser.html`);
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    await page.setInputFiles('input', { name: 'dot.png', mimeType: 'image/png', buffer: png });
    await page.addScriptTag({ type: 'module', url: '/tests/js/.out/readme/browser.js' });
    await page.waitForFunction(() => document.querySelector('pre').textContent.length > 0);
    const body = JSON.parse(await page.textContent('pre'));
    assert.deepEqual(errors, []);
    assert.deepEqual(body.input[0].content[0], { type: 'input_image', image_url: `data:image/png;base64,${png.toString('base64')}`, detail: 'auto' });
  } finally {
    await browser.close();
    await server.close();
  }
});
