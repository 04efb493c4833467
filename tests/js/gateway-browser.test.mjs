// The gateway in headless Chromium through the browser entry of promptloom/composer: the
// shared suite on the memory port and on real IndexedDB, and two gateways over one
// IndexedDB database (as two tabs of one profile would be) sharing one rate limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBlank } from './chromium.mjs';
import { gatewayContracts } from './cases.mjs';

let demo;
before(async () => {
  demo = await openBlank();
  assert.deepEqual(demo.errors, []);
});
after(async () => demo?.close());

for (const port of ['memory', 'indexeddb']) {
  test(`gateway conformance in Chromium on ${port}`, async () => {
    const results = await demo.page.evaluate(async ({ contracts, port }) => {
      const pl = await import('/pkg/src/composer-web.js');
      const { gatewayConformance } = await import('/tests/js/gateway-conformance.mjs');
      let n = 0;
      const state = port === 'memory' ? () => pl.memoryState() : () => pl.indexedDbState({ name: `gw-conformance-${Date.now()}-${n++}` });
      return gatewayConformance(pl, { contracts, state, label: `${port}: ` });
    }, { contracts: gatewayContracts(), port });
    assert.ok(results.length >= 30, results.length);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  });
}

test('two gateways on one IndexedDB database share the rate limit and the idempotency record', async () => {
  const out = await demo.page.evaluate(async () => {
    const pl = await import('/pkg/src/composer-web.js');
    const registry = new pl.ContractRegistry();
    registry.register({
      name: 'quota', version: '1', description: 'Counts.', owner: 'tests',
      input: { n: { type: 'integer', required: true } }, output: { n: 'integer' },
      policy: { idempotent: true, rate_limit: { per_user_per_min: 25 }, timeout_ms: 1000, budget: { p95_ms: 50, cost_usd: 0 } },
    });
    let runs = 0;
    const handlers = { quota: async ({ n }) => (runs++, { n }) };
    const a = pl.createGateway({ registry, handlers, state: pl.indexedDbState({ name: 'gw-shared' }) });
    const b = pl.createGateway({ registry, handlers, state: pl.indexedDbState({ name: 'gw-shared' }) });
    const codes = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).call('quota', { n: i }, { surface: 'chat', user: 'same', session: 's' }).then(() => 'ok', (e) => e.code)));
    // A duplicate of a call that went through (whichever tab made it) is answered from the record.
    const first = codes.indexOf('ok');
    const dup = await a.call('quota', { n: first }, { surface: 'chat', user: 'same', session: 's' }).then(() => 'ok', (e) => e.code);
    return { ok: codes.filter((c) => c === 'ok').length, limited: codes.filter((c) => c === 'RateLimited').length, runs, dup, outcome: a.records().at(-1).outcome };
  });
  assert.deepEqual(out, { ok: 25, limited: 15, runs: 25, dup: 'ok', outcome: 'cached' });
});
