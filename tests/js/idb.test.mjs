// The message store on real IndexedDB in headless Chromium, through the npm package's
// browser entry: the shared conformance suite, an aborted transaction, and a second
// connection upgrading the database under the first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBlank } from './chromium.mjs';
import { v1, conversationCases, conversationErrors, responseCases } from './cases.mjs';
import { startMockProvider, mockBaseURL } from '../../scripts/mock-provider.mjs';

let demo;
let page;

before(async () => {
  demo = await openBlank();
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

test('conformance: IndexedDB backend', async () => {
  const results = await page.evaluate(async (v1) => {
    const pl = await import('/pkg/src/web.js');
    const { conformance } = await import('/tests/js/store-conformance.mjs');
    let n = 0;
    return conformance(pl, () => pl.openMessageStore({ backend: 'indexeddb', name: `conformance-${n++}` }), v1);
  }, v1);
  assert.ok(results.length >= 10);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('an aborted IndexedDB transaction writes nothing and the store keeps working', async () => {
  const out = await page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    const store = await pl.openMessageStore({ backend: 'indexeddb', name: 'abort-test' });
    await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'kept' }] }, { store });
    const count = async () => {
      const b = store.__backend;
      let rows = 0;
      for (const t of ['messages', 'parts', 'blobs', 'sessions', 'ids']) rows += (await b.scan(t, '')).length;
      return rows;
    };
    const before = await count();
    // A batch whose last put has a key IndexedDB rejects: the earlier puts of the same
    // transaction must be rolled back.
    let error;
    try {
      await store.__backend.commitAfterRead([], () => [
        { op: 'put', table: 'parts', key: 'default/0000000002#00000', value: '{}' },
        { op: 'put', table: 'messages', key: 'default/0000000002', value: '{}' },
        { op: 'put', table: 'messages', key: {}, value: '{}' },
      ]);
    } catch (e) {
      error = { code: e.code, message: e.message };
    }
    // A submit whose write is aborted from outside (the transaction is aborted by the page
    // while the puts are pending).
    const realTx = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (...a) {
      const t = realTx.apply(this, a);
      if (a[1] === 'readwrite') queueMicrotask(() => t.abort());
      return t;
    };
    let aborted;
    try {
      await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'lost' }] }, { store });
    } catch (e) {
      aborted = { code: e.code, message: e.message };
    } finally {
      IDBDatabase.prototype.transaction = realTx;
    }
    const after = await count();
    const r = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'after' }] }, { store });
    const history = (await store.history()).map((m) => m.parts[0].text);
    store.close();
    return { error, aborted, before, after, seq: r.seq, history };
  });
  assert.equal(out.error?.code, 'StoreFailed');
  assert.equal(out.aborted?.code, 'StoreFailed');
  assert.match(out.aborted.message, /aborted; nothing was written/);
  assert.equal(out.after, out.before);
  assert.equal(out.seq, 2);
  assert.deepEqual(out.history, ['kept', 'after']);
});

test('a second connection upgrading the database closes the first cleanly; the data survives', async () => {
  const out = await page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    const store = await pl.openMessageStore({ backend: 'indexeddb', name: 'upgrade-test' });
    const r = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'survives' }] }, { store });
    // "Another tab" with a newer schema: a new connection one version up adding a store.
    const db2 = await new Promise((resolve, reject) => {
      const o = indexedDB.open('upgrade-test', store.__backend.db.version + 1);
      o.onupgradeneeded = () => o.result.createObjectStore('future');
      o.onsuccess = () => resolve(o.result);
      o.onerror = () => reject(o.error);
      o.onblocked = () => reject(new Error('blocked: the first connection did not close'));
    });
    let late;
    try {
      await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'late' }] }, { store });
    } catch (e) {
      late = e.code;
    }
    const rows = await new Promise((resolve) => {
      const q = db2.transaction('messages').objectStore('messages').getAll();
      q.onsuccess = () => resolve(q.result.map((v) => JSON.parse(v).id));
    });
    db2.close();
    let reopen;
    try {
      await pl.openMessageStore({ backend: 'indexeddb', name: 'upgrade-test' });
    } catch (e) {
      reopen = e.code;
    }
    return { id: r.id, late, rows, reopen, stores: [...db2.objectStoreNames] };
  });
  assert.equal(out.late, 'StoreFailed');
  assert.deepEqual(out.rows, [out.id]);
  assert.equal(out.reopen, 'StoreFailed');
  assert.ok(out.stores.includes('messages') && out.stores.includes('future'));
});

test('two tabs writing one session: optimistic inserts, a retry, no message lost', async () => {
  const out = await page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    // Two store instances over one database behave like two tabs: each keeps its own idea
    // of the session counter.
    const a = await pl.openMessageStore({ backend: 'indexeddb', name: 'two-tabs' });
    const b = await pl.openMessageStore({ backend: 'indexeddb', name: 'two-tabs' });
    const sends = [];
    for (let i = 0; i < 6; i++) {
      sends.push(pl.submit({ role: 'user', parts: [{ type: 'text', text: `a${i}` }] }, { store: a }));
      sends.push(pl.submit({ role: 'user', parts: [{ type: 'text', text: `b${i}` }] }, { store: b }));
    }
    const rs = await Promise.all(sends);
    const history = (await a.history()).map((m) => m.parts[0].text);
    a.close();
    b.close();
    return { seqs: rs.map((r) => r.seq).sort((x, y) => x - y), history };
  });
  assert.deepEqual(out.seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.equal(out.history.length, 12);
  assert.deepEqual([...out.history].sort(), ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
});

test('responses in Chromium: recorded events and turns, re-chunked; a streamed reply through the adapter, aborted mid-way', async () => {
  const mock = await startMockProvider();
  try {
    const results = await page.evaluate(async ({ cases, base }) => {
      const pl = await import('/pkg/src/web.js');
      const { responseConformance } = await import('/tests/js/response-conformance.mjs');
      const results = responseConformance(pl, { cases });
      const body = pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'in a page' }] }], { provider: 'openai-chat', model: 'm', stream: true }).body;
      const adapter = pl.createAdapter({ provider: 'openai-chat', apiKey: 'k', baseURL: base });
      const text = await adapter.send(body).text();
      results.push({ name: 'a streamed reply through fetch in the page', ok: /in a page/.test(text), detail: text });
      const ctl = new AbortController();
      const slow = pl.createAdapter({ provider: 'openai-chat', baseURL: base, headers: { 'x-mock': 'slow=30' } }).send(body, { signal: ctl.signal });
      let code = null;
      let deltas = 0;
      try {
        for await (const ev of slow) if (ev.type === 'text-delta' && ++deltas === 2) ctl.abort();
      } catch (e) {
        code = `${e.code}:${e.turn.parts[0].text.length > 0}`;
      }
      results.push({ name: 'an aborted stream keeps the text read so far', ok: code === 'Aborted:true', detail: String(code) });
      return results;
    }, { cases: responseCases(), base: mockBaseURL(mock.url, 'openai-chat') });
    assert.equal(results.length, 6);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  } finally {
    await mock.close();
  }
});

test('conversations in Chromium: recorded bodies, and a thread in IndexedDB read back and lowered', async () => {
  const cases = { cases: conversationCases(), errors: conversationErrors() };
  const results = await page.evaluate(async (cases) => {
    const pl = await import('/pkg/src/web.js');
    const { conversationConformance } = await import('/tests/js/conversation-conformance.mjs');
    let n = 0;
    return conversationConformance(pl, cases, () => pl.openMessageStore({ backend: 'indexeddb', name: `conversation-${n++}` }));
  }, cases);
  assert.ok(results.length >= 7);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});
