import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
const server = await serve(0);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless=new', '--no-sandbox'] });
const page = await browser.newPage();
await page.goto(`${server.url}/www/`);
await page.waitForFunction(() => window.promptloomReady === true);
const cdp = await page.context().newCDPSession(page);
await page.evaluate(async () => {
  const pl = await import('/pkg/src/web.js');
  const png = new Uint8Array(24 * 1024); png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < png.length; i++) png[i] = (i * 2654435761) >>> 24;
  const notes = new TextEncoder().encode('# Notes\n' + '- a decision worth keeping\n'.repeat(60));
  const source = Array.from({ length: 200 }, (_, i) => `  const v${i} = compute(${i}) // line ${i + 1}`).join('\n');
  const catalog = new pl.CommandCatalog();
  catalog.register({ name: 'review', body: 'Review $1 for $2 issues.', arguments: [{ name: 'file', required: true }, { name: 'severity' }] });
  window.msg = () => ({ role: 'user', parts: [
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
  window.run = async (n) => {
    const store = await pl.openMessageStore({ backend: 'memory' });
    const resolve = (q) => (q.type === 'file' ? source : null);
    for (let i = 0; i < n; i++) {
      const r = await pl.submit(window.msg(), { store, catalog, mentions: { selection: () => ({ payload: { s: 1 } }) } });
      pl.lower(r.message, { provider: 'anthropic', resolve });
    }
  };
  await window.run(100);
});
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
await cdp.send('Profiler.start');
const t0 = Date.now();
await page.evaluate(() => window.run(1000));
const ms = Date.now() - t0;
const { profile } = await cdp.send('Profiler.stop');
const self = new Map();
const dt = profile.timeDeltas; const total = dt.reduce((a, b) => a + b, 0);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + us); }
console.log('per iteration ms', ms / 1000);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((us / total * 100).toFixed(1) + '%', k);
await browser.close(); await server.close();
