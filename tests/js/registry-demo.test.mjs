// The demo's registry panel in headless Chromium: the contracts listed, the canary moved at
// run time and the split recounted, a failing handler opening the breaker (then calls are
// refused without reaching it), and the planner section regenerated per provider.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDemo } from './chromium.mjs';

let demo;
let page;
before(async () => {
  demo = await openDemo({ ready: 'promptloomRegistryReady', viewport: { width: 1400, height: 1400 } });
  page = demo.page;
});
after(async () => demo?.close());

test('the registry panel: contracts, canary, breaker, planner section', async () => {
  assert.deepEqual(demo.errors, []);
  const rows = await page.$$eval('#rg-contracts tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows.map((r) => `${r[0]}@${r[1]}`), ['cross-title-link@0.9.0', 'cross-title-link@1.0.0', 'order-inventory@4.0.0', 'review-sentiment@1.5.0']);
  assert.equal(rows[1][3], 'chat 5%');
  const split = async () => Number((await page.textContent('#rg-split')).split(' ')[0]);
  const five = await split();
  assert.ok(five >= 30 && five <= 70, five);
  await page.fill('#rg-canary', '50');
  await page.dispatchEvent('#rg-canary', 'change');
  const half = await split();
  assert.ok(half >= 450 && half <= 550, half);
  // Healthy calls, then a failing handler: the breaker of 0.9.0 opens.
  const fire = async () => {
    await page.evaluate(() => { window.promptloomRegistryIdle = false; });
    await page.click('#rg-fire');
    await page.waitForFunction(() => window.promptloomRegistryIdle === true);
    return page.textContent('#rg-outcomes');
  };
  assert.equal(await fire(), 'ok 20');
  await page.check('#rg-fail');
  const failed = await fire();
  assert.match(failed, /HandlerFailed \d+ · CircuitOpen \d+/);
  const breaker = await page.$eval('#rg-contracts tbody tr:first-child td:last-child', (td) => td.textContent);
  assert.equal(breaker, 'open');
  // The planner's tools, per provider.
  const tools = JSON.parse(await page.textContent('#rg-planner'));
  assert.ok(tools.some((t) => t.name === 'cross-title-link' && t.input_schema));
  await page.selectOption('#rg-provider', 'gemini');
  const gemini = JSON.parse(await page.textContent('#rg-planner'));
  assert.ok(gemini[0].functionDeclarations.some((f) => f.name === 'cross-title-link'));
  assert.match(await page.textContent('#rg-catalog'), /- cross-title-link \(v/);
  assert.deepEqual(demo.errors, []);
});
