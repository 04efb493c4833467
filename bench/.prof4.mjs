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
  const catalog = new pl.CommandCatalog();
  catalog.register({ name: 'review', body: 'Review $1 for $2 issues.', arguments: [{ name: 'file', required: true }, { name: 'severity' }] });
  const hist = await pl.openMessageStore({ backend: 'indexeddb', name: 'h' + Math.random() });
  for (let i = 0; i < 1000; i++) await pl.submit({ role: 'user', parts: [
        { type: 'text', text: `message ${i}: what about this?` },
        { type: 'mention', target: { kind: 'file', path: 'src/a.ts', range: { start: 1, end: 3 } } },
        { type: 'editor-context', kind: 'cursor', payload: { line: i } },
        { type: 'command', id: '/review', args: `src/f${i}.ts` }] }, { store: hist, catalog, session: 'h' });
  window.go = async () => {
    const t = {};
    let t0 = performance.now();
    const msgs = await hist.history('h');
    t.history = performance.now() - t0;
    t0 = performance.now();
    pl.lowerMany(msgs, { provider: 'anthropic' });
    t.lowers = performance.now() - t0;
    t0 = performance.now();
    const { scans } = await hist.__backend.read({ scans: [['messages', 'h/'], ['parts', 'h/']] });
    t.read = performance.now() - t0;
    return t;
  };
  for (let i = 0; i < 3; i++) await window.go();
});
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
await cdp.send('Profiler.start');
const ts = [];
for (let i = 0; i < 5; i++) ts.push(await page.evaluate(() => window.go()));
const { profile } = await cdp.send('Profiler.stop');
console.log(ts);
const self = new Map();
const dt = profile.timeDeltas; const total = dt.reduce((a, b) => a + b, 0);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + us); }
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((us / total * 100).toFixed(1) + '%', k);
await browser.close(); await server.close();
