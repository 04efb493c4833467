// IndexedDB in headless Chromium under faults: every write and read request of every kind
// of write fails in turn (IDBObjectStore methods patched to throw from the armed position
// on); a full quota is named `QuotaExceeded`; a blocked open leaves no hidden connection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBlank } from './chromium.mjs';

let blank;
before(async () => {
  blank = await openBlank();
});
after(async () => {
  await blank?.close();
});

test('fault suite on IndexedDB: every write and read position', async () => {
  const results = await blank.page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    const { faultConformance } = await import('/tests/js/fault-conformance.mjs');
    let current = null;
    const P = IDBObjectStore.prototype;
    const I = IDBIndex.prototype;
    for (const [proto, m, kind] of [[P, 'put', 'write'], [P, 'add', 'write'], [P, 'delete', 'write'], [P, 'get', 'read'], [P, 'getAll', 'read'], [P, 'getAllKeys', 'read'], [I, 'getAll', 'read'], [I, 'getAllKeys', 'read'], [I, 'openKeyCursor', 'read'], [I, 'get', 'read']]) {
      const orig = proto[m];
      proto[m] = function (...a) {
        if (current) {
          try {
            current[kind]();
          } catch (e) {
            throw new DOMException(e.message, 'UnknownError');
          }
        }
        return orig.apply(this, a);
      };
    }
    let n = 0;
    const open = (kind, f) => {
      current = f;
      const name = `faults-${n++}`;
      return kind === 'messages' ? pl.openMessageStore({ backend: 'indexeddb', name }) : pl.openSkillStore({ backend: 'indexeddb', name, now: () => Date.parse('2026-11-23T00:00:00Z') });
    };
    return faultConformance(pl, open);
  });
  assert.ok(results.length >= 16, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('a full quota is QuotaExceeded, named, and nothing is written', async () => {
  const out = await blank.page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    const store = await pl.openMessageStore({ backend: 'indexeddb', name: 'quota' });
    await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'kept' }] }, { store, now: () => 1 });
    // Chromium reports a full quota as a transaction aborted with a QuotaExceededError whose
    // message is empty: made to happen here by aborting the write with that error.
    const desc = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, 'error');
    const put = IDBObjectStore.prototype.put;
    Object.defineProperty(IDBTransaction.prototype, 'error', { configurable: true, get() { return this.__quota ? new DOMException('', 'QuotaExceededError') : desc.get.call(this); } });
    IDBObjectStore.prototype.put = function (...a) {
      const r = put.apply(this, a);
      const t = this.transaction;
      if (!t.__quota) {
        t.__quota = true;
        r.addEventListener('success', () => t.abort());
      }
      return r;
    };
    let err;
    try {
      await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'lost' }] }, { store, now: () => 2 });
    } catch (e) {
      err = { code: e.code, message: e.message, dom: e.details.dom };
    }
    IDBObjectStore.prototype.put = put;
    Object.defineProperty(IDBTransaction.prototype, 'error', desc);
    const history = (await store.history()).map((m) => m.parts[0].text);
    store.close();
    return { err, history };
  });
  assert.equal(out.err.code, 'QuotaExceeded');
  assert.equal(out.err.dom, 'QuotaExceededError');
  assert.match(out.err.message, /quota/);
  assert.match(out.err.message, /QuotaExceededError/);
  assert.deepEqual(out.history, ['kept']);
});

test('a blocked open is refused at once and leaves no connection behind', async () => {
  const out = await blank.page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    const name = 'blocked';
    // "Another tab" holds the database at an older version and never answers versionchange.
    const old = await new Promise((res, rej) => {
      const r = indexedDB.open(name, 1);
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    let err;
    try {
      await pl.openMessageStore({ backend: 'indexeddb', name });
    } catch (e) {
      err = { code: e.code, message: e.message };
    }
    old.close(); // the other tab closes: the abandoned request goes through now
    await new Promise((r) => setTimeout(r, 200));
    const version = await new Promise((res) => {
      const r = indexedDB.open(name);
      r.onsuccess = () => {
        const v = r.result.version;
        r.result.close();
        res(v);
      };
    });
    // Nothing holds the database: deleting it is not blocked.
    const deleted = await new Promise((res) => {
      const r = indexedDB.deleteDatabase(name);
      r.onblocked = () => res('blocked');
      r.onsuccess = () => res('deleted');
    });
    return { err, version, deleted };
  });
  assert.equal(out.err.code, 'StoreFailed');
  assert.match(out.err.message, /another tab/);
  assert.equal(out.version, 1, 'the abandoned open did not upgrade the database');
  assert.equal(out.deleted, 'deleted');
});
