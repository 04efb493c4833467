// Screenshot tests of the demo's panels in headless Chromium: the four provider bodies side
// by side, the gateway's latency histogram and call timeline, and the chat's per-step table.
// Each panel is screenshotted (tests/js/.out/panels/*.png, for a person to look at) and the
// picture itself is checked: the colours the panel draws its figures in must be on it, in
// the amounts its data says — a panel whose CSS or SVG failed to render fails here even
// when its DOM is right. The figures are checked against the package's own answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDemo } from './chromium.mjs';
import { root } from './cases.mjs';

const out = join(root, 'tests/js/.out/panels');
let demo;
let page;
before(async () => {
  mkdirSync(out, { recursive: true });
  demo = await openDemo({ ready: 'promptloomRegistryReady', viewport: { width: 1400, height: 1400 } });
  page = demo.page;
  await page.waitForFunction(() => window.promptloomProvidersReady === true && window.promptloomChatReady === true);
});
after(async () => demo?.close());

/**
 * Screenshots `selector` into tests/js/.out/panels/<name>.png and counts, in the picture,
 * the pixels within 8 of each wanted colour (`{ name: '#rrggbb' }`).
 */
async function shot(selector, name, wanted) {
  const png = await page.locator(selector).screenshot();
  writeFileSync(join(out, `${name}.png`), png);
  const rgb = Object.fromEntries(Object.entries(wanted).map(([k, hex]) => [k, [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))]));
  return page.evaluate(async ({ b64, rgb }) => {
    const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
    const bmp = await createImageBitmap(blob);
    const canvas = new OffscreenCanvas(bmp.width, bmp.height);
    const g = canvas.getContext('2d');
    g.drawImage(bmp, 0, 0);
    const d = g.getImageData(0, 0, bmp.width, bmp.height).data;
    const counts = {};
    for (const [k, [r, gr, b]] of Object.entries(rgb)) {
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) <= 8 && Math.abs(d[i + 1] - gr) <= 8 && Math.abs(d[i + 2] - b) <= 8) n += 1;
      counts[k] = n;
    }
    return { width: bmp.width, height: bmp.height, counts };
  }, { b64: png.toString('base64'), rgb });
}

test('providers panel: four bodies, their bytes and cached prefixes as the package lowers them', async () => {
  assert.deepEqual(demo.errors, []);
  const cols = await page.$$eval('#pv-grid .pv-col', (cs) => cs.map((c) => ({
    provider: c.dataset.provider,
    meta: c.querySelector('.pv-meta').textContent,
    text: c.querySelector('pre').textContent,
    cached: c.querySelectorAll('pre span.cached').length,
    own: c.querySelectorAll('pre span.own').length,
  })));
  assert.deepEqual(cols.map((c) => c.provider), ['anthropic', 'openai-chat', 'openai-responses', 'gemini']);
  // The same bodies and prefixes, lowered again here through the package.
  const want = await page.evaluate(async () => {
    const pl = await import('/pkg/src/composer-web.js');
    const { TURNS, TOOLS, MODELS } = await import('/www/providers.js');
    return pl.providers.map((provider) => {
      const l = pl.lowerConversation(TURNS, { provider, model: MODELS[provider], tools: TOOLS, cache: true });
      return { body: l.body, bytes: new TextEncoder().encode(l.body).length, prefix: l.report.cache.prefix_bytes };
    });
  });
  cols.forEach((c, i) => {
    assert.deepEqual(JSON.parse(c.text), JSON.parse(want[i].body), c.provider);
    assert.ok(c.meta.startsWith(`${want[i].bytes.toLocaleString('en')} bytes · cached prefix ${want[i].prefix.toLocaleString('en')} (`), c.meta);
    assert.ok(want[i].prefix > 0 && c.cached > 3, `${c.provider}: ${c.cached} shaded lines`);
    assert.ok(c.own > 0, `${c.provider} has keys of its own`);
  });
  const s = await shot('#providers', 'providers', { cached: '#e6f0ff', own: '#9a3412' });
  assert.ok(s.width >= 1000, `${s.width} px wide`);
  assert.ok(s.counts.cached > 5000, `cached prefix shading: ${s.counts.cached} px`);
  assert.ok(s.counts.own > 100, `provider-only keys: ${s.counts.own} px`);
});

test('gateway panel: the latency histogram against the p95 budget, outcomes and breaker over time', async () => {
  const fire = async (button) => {
    await page.evaluate(() => { window.promptloomRegistryIdle = false; });
    await page.click(button);
    await page.waitForFunction(() => window.promptloomRegistryIdle === true, null, { timeout: 30000 });
    return page.textContent('#rg-outcomes');
  };
  assert.equal(await fire('#rg-fire'), 'ok 20');
  assert.equal(await fire('#rg-holds'), 'ok 10 · RateLimited 4');
  const hist = await page.$$eval('#rg-histogram rect', (rs) => rs.reduce((n, r) => n + Number(r.dataset.count), 0));
  assert.equal(hist, 20, 'one bar entry per cross-title-link call');
  assert.match(await page.textContent('#rg-histogram'), /budget p95 510 ms/);
  const stats = await page.textContent('#rg-stats');
  assert.match(stats, /^34 calls recorded · cross-title-link p95 \d+ ms against a budget of 510 ms$/);
  const outcomes = await page.$$eval('#rg-timeline rect[data-outcome]', (rs) => rs.map((r) => r.dataset.outcome));
  assert.deepEqual(outcomes, [...Array(30).fill('ok'), ...Array(4).fill('RateLimited')]);
  const s = await shot('#registry', 'gateway', { bars: '#2f6fdf', ok: '#2e9e55', limited: '#e08a1e', budget: '#c0392b' });
  assert.ok(s.counts.bars > 300, `histogram bars: ${s.counts.bars} px`);
  assert.ok(s.counts.ok > 1000 && s.counts.limited > 100, JSON.stringify(s.counts));
  assert.ok(s.counts.budget > 40, `budget line: ${s.counts.budget} px`);
  // A failing service: the breaker opens, and the timeline shows it.
  await page.check('#rg-fail');
  assert.match(await fire('#rg-fire'), /CircuitOpen/);
  await page.uncheck('#rg-fail');
  const breakers = await page.$$eval('#rg-timeline rect[data-breaker]', (rs) => rs.map((r) => r.dataset.breaker));
  assert.ok(breakers.includes('open'), breakers.join(','));
  const open = await shot('#rg-timeline', 'gateway-breaker', { open: '#e9a29a', refused: '#c0392b' });
  assert.ok(open.counts.open > 50 && open.counts.refused > 50, JSON.stringify(open.counts));
});

test('chat panel: per-step first-token time, tokens and list-price cost; the report says what changed', async () => {
  await page.fill('#chat-model', 'claude-sonnet-4-5');
  await page.fill('#chat-mock', 'slow=5');
  await page.fill('#chat-input', 'How is f used?');
  await page.evaluate(() => { window.promptloomChatIdle = false; });
  await page.click('#chat-send');
  await page.waitForFunction(() => window.promptloomChatIdle === true, null, { timeout: 30000 });
  assert.match(await page.textContent('#chat-status'), /^final after 2 steps/);
  const rows = await page.$$eval('#chat-stats tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, 2);
  for (const [step, ttft, input, , output, , cost] of rows) {
    assert.match(ttft, /^\d+ ms$/, `step ${step}`);
    assert.ok(Number(input) > 0 && Number(output) > 0, `${input} in, ${output} out`);
    assert.match(cost, /^\$0\.\d{5}$/);
  }
  assert.deepEqual(rows.map((r) => r[5]), ['1', '0'], 'the first step called a tool');
  assert.match(await page.textContent('#chat-report'), /no repairs, no id mappings for anthropic|repair|id /);
  const s = await shot('#chat', 'chat', { text: '#1d1d1f' });
  assert.ok(s.height > 300 && s.counts.text > 500, `${s.height} px tall, ${s.counts.text} px of text`);
  assert.ok(await page.isVisible('#chat-stats'));
  assert.deepEqual(demo.errors, []);
});
