import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
const server = await serve(0);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless=new', '--no-sandbox'] });
const page = await browser.newPage();
await page.goto(`${server.url}/www/`);
await page.waitForFunction(() => window.promptloomReady === true);
const r = await page.evaluate(async () => {
  const pl = await import('/pkg/src/web.js');
  const api = await import('/pkg/src/api.js');
  const png = new Uint8Array(24 * 1024); png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < png.length; i++) png[i] = (i * 2654435761) >>> 24;
  const notes = new TextEncoder().encode('# Notes\n' + '- a decision worth keeping\n'.repeat(60));
  const catalog = new pl.CommandCatalog();
  catalog.register({ name: 'review', body: 'Review $1 for $2 issues.', arguments: [{ name: 'file', required: true }, { name: 'severity' }] });
  const message = () => ({ role: 'user', parts: [
        { type: 'text', text: 'Why does this return undefined?' },
        { type: 'command', id: '/review', args: 'src/lib/foo.ts critical' },
        { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/foo.ts', range: { start: 10, end: 40 } } },
        { type: 'file-attachment', name: 'screen.png', mime: 'image/png', data: png },
        { type: 'mention', target: { kind: 'selection' } },
        { type: 'mention', target: { kind: 'file', path: 'src/lib/bar.ts', range: { start: 1, end: 20 } } },
        { type: 'mention', target: { kind: 'skill', name: 'code-review' } },
        { type: 'editor-context', kind: 'open', payload: { files: ['src/lib/foo.ts', 'src/lib/bar.ts'] } },
        { type: 'file-attachment', name: 'notes.md', mime: 'text/markdown', data: notes },
        { type: 'text', text: 'Keep the fix minimal.' }] });
  const N = 50; const t = {};
  const time = async (k, f) => { const t0 = performance.now(); for (let i = 0; i < N; i++) await f(i); t[k] = (performance.now() - t0) / N; };
  const store = await pl.openMessageStore({ backend: 'indexeddb', name: 'p' + Math.random() });
  const mem = await pl.openMessageStore({ backend: 'memory' });
  const mentions = { selection: () => ({ payload: { symbol: 'f' } }) };
  let last;
  const acc = { get: 0, commit: 0, build: 0 };
  const b = store.__backend; const og = b.get.bind(b), oc = b.commitAfterRead.bind(b);
  b.get = async (...a) => { const t0 = performance.now(); const r = await og(...a); acc.get += performance.now() - t0; return r; };
  b.commitAfterRead = async (reads, build) => { const t0 = performance.now(); const r = await oc(reads, (v) => { const t1 = performance.now(); const o = build(v); acc.build += performance.now() - t1; return o; }); acc.commit += performance.now() - t0; return r; };
  await time('submit-idb', async () => { last = await pl.submit(message(), { store, catalog, mentions }); });
  acc.get = acc.commit = 0;
  await time('submit-idb2', async () => { last = await pl.submit(message(), { store, catalog, mentions }); });
  t.acc2 = { ...acc }; for (const k in t.acc2) t.acc2[k] /= N;
  await time('submit-mem', async () => { await pl.submit(message(), { store: mem, catalog, mentions }); });
  const msgJson = JSON.stringify({ ...message(), parts: message().parts.map((p) => p.data instanceof Uint8Array ? { ...p, data: api.__toBase64(p.data) } : p) });
  const cat = catalog.__inner;
  await time('core-step1', async () => { api.__inbox('submitInbox', [msgJson, '{"session":"x"}', '', ''], cat); });
  await time('core-step2', async () => { JSON.parse(api.__inbox('submitInbox', [msgJson, '{"session":"x"}', '', '{"4":{"payload":1}}'], cat)); });
  await time('get', async () => { await store.get(last.id); });
  const resolve = (q) => (q.type === 'file' ? 'x\n'.repeat(100) : null);
  await time('lower', async () => { await pl.lower(last.message, { provider: 'anthropic', resolve, store }); });
  await time('lower-nostore', async () => { pl.lower(last.message, { provider: 'anthropic', resolve }); });
  await time('idb-get', async () => { await store.__backend.get('sessions', 'default'); });
  const rows = []; for (const tb of ['messages','parts','blobs','sessions','ids']) for (const [k, v] of await store.__backend.scan(tb, 'default/0000000001')) rows.push([tb, k, v]);
  const sess = await store.__backend.get('sessions', 'default'); rows.push(['sessions', 'zz', sess]); rows.push(['ids','zz', '"x"']);
  let n = 0;
  await time('commit-only', async () => { n++; await store.__backend.commitAfterRead([], () => rows.map(([tb, k, v]) => ({ op: 'put', table: tb, key: k + 'c' + n, value: v }))); });
  await time('commit-2reads', async () => { n++; await store.__backend.commitAfterRead([['sessions','default'],['ids','q']], () => rows.map(([tb, k, v]) => ({ op: 'put', table: tb, key: k + 'd' + n, value: v }))); });
  t.rows = rows.length; t.acc = Object.fromEntries(Object.entries(acc).map(([k,v]) => [k, v / N]));
  return t;
});
console.log(r);
await browser.close(); await server.close();
