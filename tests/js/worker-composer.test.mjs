// The Skill Composer in a real edge runtime: a Worker importing `promptloom/composer`,
// bundled by wrangler as a user's would be, running in workerd (via miniflare).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Miniflare } from 'miniflare';
import { join } from 'node:path';
import { statSync, readdirSync, rmSync } from 'node:fs';
import { root } from './cases.mjs';
import { composerFixtures, arbiterSpecs } from './composer-fixtures.mjs';
import { gatewayContracts } from './cases.mjs';

let mf;
const out = join(root, 'tests/js/.out/worker-composer');
before(async () => {
  rmSync(out, { recursive: true, force: true });
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--config', 'wrangler-composer.toml', '--outdir', out], {
    cwd: join(root, 'tests/js/worker'),
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  });
  mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'composer-worker.js'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    kvNamespaces: ['CHAT'],
    durableObjects: { GATEWAY_STATE: 'GatewayState' },
  });
  await mf.ready;
});
after(async () => mf && (await mf.dispose()));

test('the bundle holds the composer module only', () => {
  const wasm = readdirSync(out).filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, wasm.join(', '));
  assert.match(wasm[0], /promptloom_composer_bg\.wasm$/);
  assert.ok(statSync(join(out, wasm[0])).size > 0);
});

for (const backend of ['memory', 'kv']) {
  test(`composer conformance in workerd: the ${backend === 'kv' ? 'Worker KV namespace' : 'memory'} backend`, async () => {
    const res = await mf.dispatchFetch('http://worker.test/composer-conformance', { method: 'POST', body: JSON.stringify({ fx: composerFixtures(), backend }) });
    const results = await res.json();
    assert.ok(results.length >= 11);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  });
}

test('arbiter conformance in workerd', async () => {
  const res = await mf.dispatchFetch('http://worker.test/arbiter-conformance', { method: 'POST', body: JSON.stringify({ specs: arbiterSpecs(), staged: composerFixtures().requests['timeline-openai-staged'] }) });
  const results = await res.json();
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

for (const backend of ['memory', 'kv']) {
  test(`session conformance in workerd: the ${backend === 'kv' ? 'Worker KV namespace' : 'memory'} backend`, async () => {
    const res = await mf.dispatchFetch('http://worker.test/session-conformance', { method: 'POST', body: JSON.stringify({ specs: arbiterSpecs(), backend }) });
    const results = await res.json();
    assert.ok(results.length >= 6);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  });
}

test('a composition at the edge, and a typed error', async () => {
  const fx = composerFixtures();
  let res = await mf.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify(fx.requests['release-notes-developers']) });
  const { composition } = await res.json();
  assert.deepEqual(composition, fx.expected['release-notes-developers'].composition);
  res = await mf.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify(fx.requests['release-notes-bad-parameters']) });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'ParameterMismatch');
});

test('hardening in workerd (promptloom/composer): trap recovery, the boundary suite', async () => {
  const res = await mf.dispatchFetch('http://worker.test/hardening', { method: 'POST', body: JSON.stringify({ calls: 40, seeds: [1, 2], shapedCalls: 15 }) });
  const results = await res.json();
  assert.ok(results.length >= 12, JSON.stringify(results).slice(0, 500));
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

for (const port of ['memory', 'durable-object']) {
  test(`gateway conformance in workerd on ${port}`, async () => {
    const res = await mf.dispatchFetch('http://worker.test/gateway-conformance', { method: 'POST', body: JSON.stringify({ contracts: gatewayContracts(), port, run: `run-${Date.now()}` }) });
    const results = await res.json();
    assert.ok(results.length >= 30, JSON.stringify(results).slice(0, 500));
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  });
}

test('two Worker instances share one Durable Object: the rate limit holds across them', async () => {
  const script = join(out, 'composer-worker.js');
  const worker = (name, ns) => ({
    name,
    modules: true,
    scriptPath: script,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    kvNamespaces: ['CHAT'],
    durableObjects: { GATEWAY_STATE: ns },
  });
  const two = new Miniflare({ workers: [worker('edge-a', 'GatewayState'), worker('edge-b', { className: 'GatewayState', scriptName: 'edge-a' })] });
  try {
    await two.ready;
    const a = await two.getWorker('edge-a');
    const b = await two.getWorker('edge-b');
    const ask = (w, from) => w.fetch('http://worker.test/gateway-quota', { method: 'POST', body: JSON.stringify({ from, count: 20 }) }).then((r) => r.json());
    const [ca, cb] = await Promise.all([ask(a, 0), ask(b, 100)]);
    const all = [...ca, ...cb];
    assert.equal(all.filter((c) => c === 'ok').length, 25, all.join());
    assert.equal(all.filter((c) => c === 'RateLimited').length, 15, all.join());
    assert.ok(ca.includes('ok') && cb.includes('ok'), 'both Workers were served');
  } finally {
    await two.dispose();
  }
});
