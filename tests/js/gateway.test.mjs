// The contract registry and the gateway in Node through the npm package (promptloom/composer):
// the shared suite on the memory port and on a custom port (a JS Map driven through
// applyGatewayState), and a fault-injection run against real handlers that call a local
// HTTP server over loopback: timeouts, 5xx, 4xx, slow answers, a server that drops the
// connection mid-answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as pl from 'promptloom/composer';
import { gatewayContracts } from './cases.mjs';
import { gatewayConformance } from './gateway-conformance.mjs';

/** A port over a Map, as a user would write one for their own store. */
function mapPort() {
  const map = new Map();
  return {
    map,
    transact(keys, op, now) {
      const r = pl.applyGatewayState(op, keys.map((k) => map.get(k) ?? null), now);
      for (const [k, v] of r.writes) (v === null ? map.delete(k) : map.set(k, v));
      return r.result;
    },
  };
}

for (const [name, state] of [['memory', () => pl.memoryState()], ['a custom port', mapPort]]) {
  test(`gateway conformance in Node on ${name}`, async () => {
    const results = await gatewayConformance(pl, { contracts: gatewayContracts(), state });
    assert.ok(results.length >= 30, results.length);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  });
}

let server;
let base;
const hits = new Map();
before(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const key = u.searchParams.get('key');
    hits.set(key, (hits.get(key) ?? 0) + 1);
    const n = hits.get(key);
    const mode = u.pathname.slice(1);
    if (mode === 'ok') return res.end(JSON.stringify({ value: key }));
    if (mode === 'slow') return setTimeout(() => res.end(JSON.stringify({ value: key })), 300);
    if (mode === 'e500') return (res.statusCode = 500), res.end('{"error":"boom"}');
    if (mode === 'e404') return (res.statusCode = 404), res.end('{"error":"missing"}');
    if (mode === 'flaky') return n < 3 ? ((res.statusCode = 503), res.end('busy')) : res.end(JSON.stringify({ value: key }));
    if (mode === 'die') return req.socket.destroy();
    if (mode === 'garbage') return res.end('<html>not json');
    res.statusCode = 400;
    res.end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => new Promise((r) => server.close(r)));

test('fault injection: real handlers over loopback HTTP', async () => {
  const registry = new pl.ContractRegistry();
  registry.register({
    name: 'remote', version: '1.0.0', description: 'A lookup served over HTTP.', owner: 'tests',
    input: { mode: { type: 'string', required: true }, key: { type: 'string', required: true } },
    output: { value: { type: 'string', required: true } },
    policy: { idempotent: true, timeout_ms: 150, retry: { attempts: 2, backoff: 'exponential', base_ms: 10 }, budget: { p95_ms: 100, cost_usd: 0 } },
  });
  const seen = [];
  const remote = async ({ mode, key }, { signal, attempt }) => {
    seen.push({ key, attempt });
    const res = await fetch(`${base}/${mode}?key=${key}`, { signal });
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
    return res.json();
  };
  const gw = pl.createGateway({ registry, handlers: { remote } });
  const ctx = { surface: 'batch', user: 'u' };
  const code = (p) => p.then(() => 'ok', (e) => e.code);
  assert.deepEqual(await gw.call('remote', { mode: 'ok', key: 'a' }, ctx), { value: 'a' });
  assert.equal(await code(gw.call('remote', { mode: 'slow', key: 'b' }, ctx)), 'Timeout');
  assert.equal(hits.get('b'), 3, 'three attempts, each cancelled at 150 ms');
  assert.equal(await code(gw.call('remote', { mode: 'e500', key: 'c' }, ctx)), 'HandlerFailed');
  assert.equal(hits.get('c'), 3);
  assert.equal(await code(gw.call('remote', { mode: 'e404', key: 'd' }, ctx)), 'HandlerFailed');
  assert.equal(hits.get('d'), 1, 'a 4xx is not retried');
  assert.deepEqual(await gw.call('remote', { mode: 'flaky', key: 'e' }, ctx), { value: 'e' });
  assert.equal(hits.get('e'), 3, 'two 503s, then the answer');
  assert.equal(await code(gw.call('remote', { mode: 'die', key: 'f' }, ctx)), 'HandlerFailed');
  assert.equal(hits.get('f'), 3, 'a dropped connection is retried');
  assert.equal(await code(gw.call('remote', { mode: 'garbage', key: 'g' }, ctx)), 'HandlerFailed');
  const recs = gw.records();
  assert.deepEqual(recs.map((r) => r.outcome), ['ok', 'Timeout', 'HandlerFailed', 'HandlerFailed', 'ok', 'HandlerFailed', 'HandlerFailed']);
  assert.deepEqual(recs.map((r) => r.attempts), [1, 3, 3, 1, 3, 3, 3]);
  assert.ok(recs[1].budget_overrun && recs[1].latency_ms >= 450, JSON.stringify(recs[1]));
});
