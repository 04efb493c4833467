// The hardening suite in headless Chromium, on each entry in its own page (the first entry
// a page loads serves every call).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBlank } from './chromium.mjs';

const opened = [];
after(async () => {
  for (const o of opened) await o.close();
});

for (const entry of ['/pkg/src/web.js', '/pkg/src/composer-web.js']) {
  test(`hardening suite in Chromium (${entry})`, async () => {
    const blank = await openBlank();
    opened.push(blank);
    const results = await blank.page.evaluate(async (entry) => {
      const pl = await import(entry);
      const { hardeningConformance } = await import('/tests/js/hardening-conformance.mjs');
      return hardeningConformance(pl, { calls: 40, seeds: [1, 2], shapedCalls: 15 });
    }, entry);
    assert.ok(results.length >= 8, `${results.length} checks`);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
    assert.deepEqual(blank.errors.map(String), []);
  });
}
