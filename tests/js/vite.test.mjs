// The package as a new web user gets it: `npm pack`, installed into a fresh Vite app, built
// with `vite build`, served by `vite preview`, and run in headless Chromium. (This catches
// packaging mistakes the other tiers cannot: the `files` list, the exports map, bundlers
// dropping the wasm initialisation, the wasm asset URL.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, preview } from 'vite';
import { chromium } from 'playwright-core';
import { root } from './cases.mjs';
import { packedApp } from './apps.mjs';

/** The README's code examples by name (the Web Worker ones run here, in a bundled app). */
function readmeExample(name) {
  const md = readFileSync(join(root, 'README.md'), 'utf8');
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(md);
  assert.ok(m, `README example ${name}`);
  return m[1];
}

test('a fresh Vite app builds and runs with the packed package', async () => {
  const base = join(root, 'tests/js/.out/vite');
  rmSync(base, { recursive: true, force: true });
  const app = packedApp(base, 'fresh-app');
  writeFileSync(join(app, 'index.html'), '<!doctype html><html><body><pre id="out"></pre><script type="module" src="/src/main.js"></script></body></html>');
  writeFileSync(join(app, 'src/main.js'), `import { lower, PromptloomError, CommandCatalog, parseInput, submit, openMessageStore, openSkillStore, SkillCatalog, importSkillMd, createResponseParser, createAdapter, Conversation } from 'promptloom';
const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
const out = lower({ parts: [{ type: 'text', text: 'hi' }, { type: 'file-attachment', data: png, mime: 'image/png' }] }, { provider: 'gemini' });
let code = '';
try { lower({ parts: [{ type: 'command', id: '/x' }] }, { provider: 'gemini' }); } catch (e) { code = e instanceof PromptloomError ? e.code : 'wrong'; }
// The compositor with IndexedDB, as a web editor would use it.
const catalog = new CommandCatalog();
const store = await openMessageStore({ backend: 'indexeddb', name: 'fresh-app' });
const done = await submit({ parts: parseInput('/search cats @selection', { catalog }) }, { store, catalog, mentions: { selection: () => ({ n: 1 }) } });
const history = await store.history();
const ws = await openSkillStore({ backend: 'indexeddb', name: 'fresh-ws' });
const acc = await openSkillStore({ backend: 'indexeddb', name: 'fresh-acc', seed: true });
await ws.put(importSkillMd('---\\nname: timeline\\ndescription: Checks timelines.\\n---\\nBody\\n').skill);
const [best] = await new SkillCatalog(ws, acc).match('timeline');
// A streamed reply read by the adapter (the page's fetch answers from memory).
const sse = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hel"}}]}\\n\\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\\n\\ndata: [DONE]\\n\\n';
const adapter = createAdapter({ provider: 'openai-chat', fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }) });
const chat = new Conversation({ options: { provider: 'openai-chat', model: 'm', stream: true } });
chat.append({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
const reply = await adapter.send(chat.lower().body).text();
const p = createResponseParser('anthropic');
const evs = p.push('event: error\\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\\n\\n');
// The skill panel, opened later: the composer entry loaded lazily takes over every call.
const comp = await import('promptloom/composer');
const spec = comp.validateSkillSpec({ name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } });
const registry = comp.buildSkillRegistry(await new SkillCatalog(ws, acc).skillSpecs(), { tools: ['choir.memory.query', 'choir.fs.read'] });
const late = lower({ parts: [{ type: 'text', text: 'late' }] }, { provider: 'anthropic' }).json();
document.getElementById('out').textContent = JSON.stringify({ body: out.json(), code, stored: history.length, intent: done.message.parts[0].resolved.flags.intent, skill: best?.name, reply, overloaded: evs[0].code, seeded: acc.seeded.status, lazy: [spec.ok, registry.names(), late.messages[0].content[0].text] });
`);
  // The README's Web Worker, bundled by Vite beside the page: 10,000 skills indexed, a
  // message lowered and a chat opened in the worker; the page loads promptloom/remote only.
  writeFileSync(join(app, 'src/worker.js'), readmeExample('webworker'));
  writeFileSync(join(app, 'worker.html'), '<!doctype html><html><body><pre id="out"></pre><script type="module" src="/src/worker-page.js"></script></body></html>');
  writeFileSync(join(app, 'src/worker-page.js'), `const skills = Array.from({ length: 10000 }, (_, i) => ({ id: 's' + i, name: i === 7345 ? 'timeline-check' : 'skill-' + i, description: i === 7345 ? 'Checks the timeline of a project plan' : 'Does task number ' + i + ' of the workspace' }));
const renders = [];
const render = (s) => renders.push(s.status);
${readmeExample('webworkerpage')}
const wasm = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm'));
document.getElementById('out').textContent = JSON.stringify({ size, names: names.slice(0, 3), body: JSON.parse(body), chat: [chat.status, chat.session, chat.messages.length], wasm });
`);
  writeFileSync(join(app, 'vite.config.js'), `export default { build: { rollupOptions: { input: { main: 'index.html', worker: 'worker.html' } } }, worker: { format: 'es' } };\n`);
  await build({ root: app, logLevel: 'silent' });
  const server = await preview({ root: app, preview: { port: 0, host: '127.0.0.1' }, logLevel: 'silent' });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.resolvedUrls.local[0]);
    await page.waitForFunction(() => document.getElementById('out').textContent.length > 0, null, { timeout: 15000 });
    const got = JSON.parse(await page.textContent('#out'));
    assert.deepEqual(errors, []);
    assert.equal(got.code, 'UnresolvedCommand');
    assert.equal(got.stored, 1);
    assert.equal(got.intent, 'search');
    assert.equal(got.skill, 'timeline');
    assert.equal(got.reply, 'Hello');
    assert.equal(got.overloaded, 'Overloaded');
    // The package's system skills seeded into IndexedDB (their data module split out by the
    // bundler), and promptloom/composer imported lazily after promptloom.
    assert.equal(got.seeded, 'created');
    assert.deepEqual(got.lazy, [true, ['skill-builder', 'tool-builder'], 'late']);
    assert.deepEqual(got.body.contents[0].parts[0], { text: 'hi' });
    assert.equal(got.body.contents[0].parts[1].inlineData.mimeType, 'image/png');

    // The Web Worker page: the worker's answers and its chat, and no wasm on the page.
    await page.goto(new URL('/worker.html', server.resolvedUrls.local[0]).href);
    await page.waitForFunction(() => document.getElementById('out').textContent.length > 0, null, { timeout: 30000 });
    const w = JSON.parse(await page.textContent('#out'));
    assert.deepEqual(errors, []);
    assert.equal(w.size, 10000);
    assert.equal(w.names[0], 'timeline-check');
    assert.equal(w.body.messages[0].content[0].text, 'hello');
    assert.deepEqual(w.chat, ['ready', 'chat', 0]);
    assert.deepEqual(w.wasm, [], 'the page loads no wasm: the worker does');
  } finally {
    await browser.close();
    await server.close();
  }
});
