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
  const png = new Uint8Array(200); png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < png.length; i++) png[i] = (i * 2654435761) >>> 24;
  const notes = new TextEncoder().encode('# Notes\n' + '- a decision worth keeping\n'.repeat(60));
  const source = Array.from({ length: 200 }, (_, i) => `  const v${i} = compute(${i}) // line ${i + 1}`).join('\n');
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
  const N = 200; const t = {};
  const time = (k, f) => { const t0 = performance.now(); for (let i = 0; i < N; i++) f(i); t[k] = ((performance.now() - t0) / N).toFixed(3); };
  const cat = catalog.__inner;
  let wm;
  time('wire+stringify', () => { const m = message(); wm = JSON.stringify({ ...m, parts: m.parts.map((p) => p.data instanceof Uint8Array ? { ...p, data: api.__toBase64(p.data) } : p) }); });
  time('step1', () => { JSON.parse(api.__inbox('submitInbox', [wm, '{"session":"x","now":1}', '', ''], cat)); });
  let out;
  time('step2-core', () => { out = api.__inbox('submitInbox', [wm, '{"session":"x","now":1}', '', '{"4":{"payload":1}}'], cat); });
  let done;
  time('step2-parse', () => { done = JSON.parse(out).done; });
  t.outLen = out.length;
  const resolve = (q) => (q.type === 'file' ? source : null);
  time('lower', () => { pl.lower(done.message, { provider: 'anthropic', resolve }); });
  time('lower-body-only', () => { pl.lower(done.message, { provider: 'anthropic', resolve }).body; });
  return t;
});
console.log(r);
await browser.close(); await server.close();
