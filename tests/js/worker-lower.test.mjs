// The `promptloom/lower` entry in a real edge runtime: a Worker importing it, bundled by
// wrangler as a user's would be, running in workerd (via miniflare). The bundle holds the
// lowering-only module and nothing else.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Miniflare } from 'miniflare';
import { join } from 'node:path';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { root, successCases, conversationCases, conversationErrors, responseCases, objectCases } from './cases.mjs';
import { startMockProvider } from '../../scripts/mock-provider.mjs';

let mf;
const out = join(root, 'tests/js/.out/worker-lower');
before(async () => {
  rmSync(out, { recursive: true, force: true });
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--config', 'wrangler-lower.toml', '--outdir', out], {
    cwd: join(root, 'tests/js/worker'),
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  });
  mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'lower-worker.js'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2025-01-01',
  });
  await mf.ready;
});
after(async () => mf && (await mf.dispose()));

test('the bundle holds the lowering-only module only', () => {
  const wasm = readdirSync(out).filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, wasm.join(', '));
  assert.match(wasm[0], /promptloom_lower_bg\.wasm$/);
  assert.ok(statSync(join(out, wasm[0])).size < statSync(join(root, 'pkg/dist/wasm/promptloom_bg.wasm')).size);
});

test('every recorded case lowers in workerd through promptloom/lower to the recorded body', async () => {
  for (const c of successCases()) {
    const res = await mf.dispatchFetch('http://worker.test/', {
      method: 'POST',
      body: JSON.stringify({ message: c.message, options: { provider: c.provider, ...c.options }, resolve: c.resolve }),
    });
    const got = await res.json();
    assert.equal(got.body, c.expected.body, `${c.name} / ${c.provider}: ${JSON.stringify(got.error)}`);
    assert.deepEqual(got.report, c.expected.report);
  }
});

test('conversations and responses in workerd through promptloom/lower; the adapter against the mock provider', async () => {
  const mock = await startMockProvider();
  try {
    const res = await mf.dispatchFetch('http://worker.test/suites', {
      method: 'POST',
      body: JSON.stringify({ conversations: { cases: conversationCases(), errors: conversationErrors() }, responses: responseCases(), objects: objectCases(), mock: mock.url }),
    });
    const results = await res.json();
    assert.ok(results.length >= 9, JSON.stringify(results).slice(0, 500));
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  } finally {
    await mock.close();
  }
});

test('a Worker relays a provider stream to a page: readEventStream gives what the Worker read', async () => {
  const pl = await import('promptloom/lower');
  const mock = await startMockProvider();
  try {
    for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
      const message = { role: 'user', parts: [{ type: 'text', text: `relay for ${provider}` }] };
      const res = await mf.dispatchFetch('http://worker.test/relay', { method: 'POST', body: JSON.stringify({ message, provider, mock: mock.url }) });
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      const stream = pl.readEventStream(res);
      const events = [];
      for await (const ev of stream) events.push(ev);
      const turn = await stream.turn;
      // The key stayed in the Worker; the page got the events and the turn.
      assert.equal(mock.requests.at(-1).headers[provider === 'anthropic' ? 'x-api-key' : provider === 'gemini' ? 'x-goog-api-key' : 'authorization'].includes('worker-key'), true);
      assert.equal(events[0].type, 'start');
      assert.equal(events.at(-1).type, 'finish');
      assert.equal(events.filter((e) => e.type === 'text-delta').map((e) => e.text).join(''), turn.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''));
      assert.match(turn.parts.find((p) => p.type === 'text').text, new RegExp(`relay for ${provider}`));
      assert.equal(turn.metadata.provider, provider);
      assert.equal(stream.provider, provider);
      assert.equal(stream.lastEventId, String(events.length + 1));
    }
    // A message the Worker cannot lower: its coded error reaches the page.
    const res = await mf.dispatchFetch('http://worker.test/relay', { method: 'POST', body: JSON.stringify({ message: { role: 'user', parts: [] }, provider: 'anthropic', mock: mock.url }) });
    await assert.rejects(pl.readEventStream(res).turn, (e) => e instanceof pl.PromptloomError && e.code === 'EmptyMessage' && e.details.status === 400);
    // A provider the Worker cannot reach: the adapter's error (after its retries) reaches the page.
    const bad = await mf.dispatchFetch('http://worker.test/relay', { method: 'POST', body: JSON.stringify({ message: { role: 'user', parts: [{ type: 'text', text: 'x' }] }, provider: 'openai-chat', mock: 'http://127.0.0.1:9/nowhere' }) });
    await assert.rejects(pl.readEventStream(bad).turn, (e) => e.code === 'AdapterFailed' && e.turn.metadata.error.code === 'AdapterFailed');
  } finally {
    await mock.close();
  }
});
