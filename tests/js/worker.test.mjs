// The same shared cases through a real edge runtime: a Worker that imports the npm package,
// bundled by wrangler as a user's would be, running in workerd (via miniflare).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Miniflare } from 'miniflare';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { successCases, errorCases, root, v1, conversationCases, conversationErrors, responseCases } from './cases.mjs';
import { startMockProvider } from '../../scripts/mock-provider.mjs';

let mf;
before(async () => {
  const out = join(root, 'tests/js/.out/worker');
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: join(root, 'tests/js/worker'),
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  });
  mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'worker.js'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
    kvNamespaces: ['CHAT'],
  });
  await mf.ready;
});
after(async () => mf && (await mf.dispose()));

async function send(c) {
  const res = await mf.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify({ message: c.message, options: { provider: c.provider, ...c.options }, resolve: c.resolve }),
  });
  return res.json();
}

test('every shared case lowers in workerd to the recorded body', async () => {
  for (const c of successCases()) {
    const out = await send(c);
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}: ${JSON.stringify(out.error)}`);
    assert.deepEqual(out.report, c.expected.report);
  }
});

test('errors cross the Worker as typed codes, and the Worker keeps serving', async () => {
  for (const c of errorCases()) {
    const out = await send(c);
    if (c.expected === 'ok') assert.ok(out.body);
    else assert.deepEqual(out.error, c.expected, `${c.name} / ${c.provider}`);
  }
  const ok = await send({ message: { parts: [{ type: 'text', text: 'alive' }] }, provider: 'gemini', options: {}, resolve: {} });
  assert.equal(ok.body, '{"contents":[{"role":"user","parts":[{"text":"alive"}]}]}');
});

for (const backend of ['memory', 'kv']) {
  test(`conformance in workerd: the ${backend === 'kv' ? 'Worker KV namespace' : 'memory'} backend`, async () => {
    const res = await mf.dispatchFetch('http://worker.test/conformance', { method: 'POST', body: JSON.stringify({ v1, backend }) });
    const results = await res.json();
    assert.ok(results.length >= 10);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  });
}

for (const backend of ['memory', 'kv']) {
  test(`skill conformance in workerd: the ${backend === 'kv' ? 'Worker KV namespace' : 'memory'} backend`, async () => {
    const seed = readFileSync(join(root, 'tests/skills/packages/consistency-checker.json'), 'utf8');
    const res = await mf.dispatchFetch('http://worker.test/skill-conformance', { method: 'POST', body: JSON.stringify({ seed, backend }) });
    const results = await res.json();
    assert.ok(results.length >= 11);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  });
}

test('phase-1 matching in workerd', async () => {
  const skills = [
    { name: 'Consistency Checker', description: 'Finds contradictions.', trigger_phrases: ['are there any contradictions'] },
    { name: 'Summarize', description: 'Summarizes pages.' },
  ];
  const res = await mf.dispatchFetch('http://worker.test/match', { method: 'POST', body: JSON.stringify({ skills, query: 'Are there any contradictions here?' }) });
  const r = await res.json();
  assert.deepEqual([r[0].name, r[0].tier], ['Consistency Checker', 'exact']);
});

test('conversations in workerd: recorded bodies, a thread in the Worker KV namespace', async () => {
  const res = await mf.dispatchFetch('http://worker.test/conversation', {
    method: 'POST',
    body: JSON.stringify({ cases: conversationCases(), errors: conversationErrors() }),
  });
  const results = await res.json();
  assert.ok(results.length >= 7, JSON.stringify(results).slice(0, 500));
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('responses in workerd: recorded events and turns, re-chunked; the adapter against the mock provider', async () => {
  const mock = await startMockProvider();
  try {
    const res = await mf.dispatchFetch('http://worker.test/response', { method: 'POST', body: JSON.stringify({ cases: responseCases(), mock: mock.url }) });
    const results = await res.json();
    assert.equal(results.length, 5, JSON.stringify(results).slice(0, 500));
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  } finally {
    await mock.close();
  }
});

test('hardening in workerd (promptloom): inputs that once killed the instance, the boundary suite', async () => {
  const res = await mf.dispatchFetch('http://worker.test/hardening', { method: 'POST', body: JSON.stringify({ calls: 40, seeds: [1, 2], shapedCalls: 15 }) });
  const results = await res.json();
  assert.ok(results.length >= 8, JSON.stringify(results).slice(0, 500));
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('fault suite in workerd: every write and read position over the Worker KV namespace', async () => {
  const res = await mf.dispatchFetch('http://worker.test/faults', { method: 'POST' });
  const results = await res.json();
  assert.ok(results.length >= 16, JSON.stringify(results).slice(0, 500));
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

// Last: once the composer entry is loaded, it serves every call of this Worker.
test('promptloom/composer imported lazily in workerd after promptloom: both entries work; system skills seeded', async () => {
  const res = await mf.dispatchFetch('http://worker.test/lazy-composer', { method: 'POST' });
  const out = await res.json();
  const body = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}';
  assert.deepEqual(out, { before: body, after: body, valid: true, names: ['skill-builder', 'tool-builder'], seeded: 'created' });
  // The Worker keeps serving the base entry's calls.
  const again = await send({ message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] }, options: { provider: 'anthropic' } });
  assert.equal(again.body, body);
});

test('Chat in workerd: the chat suite inside the Worker, answered by the mock provider; threads in memory and in the KV namespace', async () => {
  const mock = await startMockProvider();
  try {
    for (const backend of ['memory', 'kv']) {
      const res = await mf.dispatchFetch('http://worker.test/chat', { method: 'POST', body: JSON.stringify({ mock: mock.url, backend }) });
      const results = await res.json();
      assert.ok(results.length >= 7, JSON.stringify(results).slice(0, 500));
      for (const r of results) assert.ok(r.ok, `${backend}: ${r.name}\n${r.detail}`);
    }
  } finally {
    await mock.close();
  }
});
