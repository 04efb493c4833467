// Chat in Node through the npm package: the chat suite (tests/js/chat-conformance.mjs) over
// memory stores, answered by the mock provider (scripts/mock-provider.mjs) over real HTTP —
// once with an adapter that calls it, once through a relay: a server that forwards each
// lowered body with its own adapter and answers `stream.toResponse()`, read by the chat's
// `endpoint` adapter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import * as pl from 'promptloom';
import { chatConformance } from './chat-conformance.mjs';
import { chatViewCases } from './cases.mjs';
import { startMockProvider, mockBaseURL } from '../../scripts/mock-provider.mjs';

let mock;
let relay;
let relayURL;
before(async () => {
  mock = await startMockProvider();
  // The relay: the body as the page lowered it, sent with the server's adapter (its key).
  relay = createServer(async (req, res) => {
    // A GET attaches to a run: this relay keeps none (404, as a server that lost the run
    // answers), or it is down (503, when the test says so).
    if (req.method === 'GET') {
      const down = req.headers['x-relay-down'] === '1';
      res.writeHead(down ? 503 : 404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(down ? { code: 'AdapterFailed', message: 'the relay is down' } : { code: 'NotFound', message: 'no such run' }));
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const provider = req.url.slice(1);
    // The mock's failure switches, passed on (a test's own header, not the page's key).
    const headers = Object.fromEntries(['x-mock', 'x-mock-id'].filter((h) => req.headers[h]).map((h) => [h, req.headers[h]]));
    const adapter = pl.createAdapter({ provider, apiKey: 'server-key', baseURL: mockBaseURL(mock.url, provider), model: 'mock-model', headers, retry: { maxRetries: 0 } });
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const answer = adapter.send(Buffer.concat(chunks).toString('utf8'), { signal: ac.signal }).toResponse();
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    Readable.fromWeb(answer.body).on('error', () => res.destroy()).pipe(res);
  });
  await new Promise((r) => relay.listen(0, '127.0.0.1', r));
  relayURL = `http://127.0.0.1:${relay.address().port}`;
});
after(async () => {
  relay.closeAllConnections?.();
  await new Promise((r) => relay.close(r));
  await mock.close();
});

const openStore = (name) => pl.openMessageStore({ backend: 'memory', name });

test('Chat in Node, straight to the provider: every provider, tools, approval, stop, regenerate, edit, errors', async () => {
  const connect = (provider, headers = {}) => ({
    adapter: pl.createAdapter({ provider, apiKey: 'k', baseURL: mockBaseURL(mock.url, provider), model: 'mock-model', headers, retry: { maxRetries: 0 } }),
  });
  const results = await chatConformance(pl, { openStore, connect, lastRequest: async () => mock.requests.at(-1).body });
  assert.ok(results.length >= 10, String(results.length));
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('Chat in Node through a relay endpoint: the page never holds the key', async () => {
  const connect = (provider, headers = {}) => ({ endpoint: `${relayURL}/${provider}`, headers });
  const results = await chatConformance(pl, { openStore, connect, downHeaders: { 'x-relay-down': '1' } });
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  const last = mock.requests.at(-1);
  assert.ok(JSON.stringify(last.headers).includes('server-key'), 'the relay sent its own key');
});

test("Chat's messages are the core's view: every conversation input stored with appendTurns and opened is the Rust snapshot (ids aside)", async () => {
  for (const c of chatViewCases()) {
    const store = await openStore(`view-${c.name}`);
    const { ids } = await store.appendTurns(c.turns, { session: 'v', now: () => 1 });
    assert.equal(ids.length, c.turns.length);
    const chat = await pl.Chat.open({ store, session: 'v', adapter: pl.createAdapter({ provider: 'anthropic', apiKey: 'k' }), settings: { provider: 'anthropic' } });
    // The stored ids are `v/<seq>`; the snapshot's turns were never stored (`turn-<i>`).
    const shown = JSON.stringify(chat.messages, (k, v) => (k === 'at' ? undefined : k === 'id' && typeof v === 'string' && v.startsWith('v/') ? `turn-${Number(v.slice(2)) - 1}` : v));
    assert.equal(shown, c.expected, c.name);
  }
});
