// The skill store on real IndexedDB in headless Chromium, through the npm package's browser
// entry: the skill conformance suite, an abort in the middle of a skill write, the native
// indexes, and upgrades (a version-1 database from the message store; a version-3 database
// gaining session logs and proposals; another tab upgrading under an open store).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openBlank } from './chromium.mjs';

const SEED = readFileSync(new URL('../skills/packages/consistency-checker.json', import.meta.url), 'utf8');
let demo;
let page;

before(async () => {
  demo = await openBlank();
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

test('skill conformance: IndexedDB backend', async () => {
  const results = await page.evaluate(async (seed) => {
    const pl = await import('/pkg/src/web.js');
    const { skillConformance } = await import('/tests/js/skill-conformance.mjs');
    let n = 0;
    return skillConformance(pl, () => pl.openSkillStore({ backend: 'indexeddb', name: `skill-conformance-${n++}`, now: () => Date.parse('2026-11-22T08:00:00Z') }), seed);
  }, SEED);
  assert.ok(results.length >= 11);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('an abort in the middle of a skill write leaves the store exactly as it was', async () => {
  const out = await page.evaluate(async (seed) => {
    const pl = await import('/pkg/src/web.js');
    const store = await pl.openSkillStore({ backend: 'indexeddb', name: 'skill-abort' });
    await store.create({ name: 'Kept', description: 'written before' });
    const dump = async () => {
      const out = {};
      for (const t of ['skills', 'skill_names', 'skill_artifacts', 'artifact_ids']) out[t] = await store.__backend.scan(t, '');
      return JSON.stringify(out);
    };
    const before = await dump();
    // Abort the transaction after its third put: the skill's artifacts are half written.
    const realPut = IDBObjectStore.prototype.put;
    let puts = 0;
    IDBObjectStore.prototype.put = function (...a) {
      const r = realPut.apply(this, a);
      if (++puts === 3) this.transaction.abort();
      return r;
    };
    let error;
    try {
      await store.create(JSON.parse(seed));
    } catch (e) {
      error = { code: e.code, message: e.message };
    } finally {
      IDBObjectStore.prototype.put = realPut;
    }
    const after = await dump();
    // The store keeps working: the same create now succeeds.
    await store.create(JSON.parse(seed));
    const names = (await store.list()).map((s) => s.name);
    store.close();
    return { error, same: before === after, puts, names };
  }, SEED);
  assert.equal(out.error?.code, 'StoreFailed');
  assert.match(out.error.message, /nothing was written/);
  assert.ok(out.puts >= 3);
  assert.ok(out.same, 'rows changed by an aborted write');
  assert.deepEqual(out.names, ['Consistency Checker', 'Kept']);
});

test('native indexes: name and source on skills, skill_id and kind on artifacts', async () => {
  const out = await page.evaluate(async (seed) => {
    const pl = await import('/pkg/src/web.js');
    const store = await pl.openSkillStore({ backend: 'indexeddb', name: 'skill-indexes' });
    await store.create(JSON.parse(seed));
    await store.create({ name: 'Mine', description: 'a user skill' });
    const db = store.__backend.db;
    const t = db.transaction(['skills', 'skill_artifacts']);
    const indexes = { skills: [...t.objectStore('skills').indexNames], skill_artifacts: [...t.objectStore('skill_artifacts').indexNames] };
    const byKind = await new Promise((r) => {
      const q = t.objectStore('skill_artifacts').index('kind').getAll('dspy_module');
      q.onsuccess = () => r(q.result.map((v) => JSON.parse(v.v).name));
    });
    const system = (await store.list({ source: 'system' })).map((s) => s.name);
    store.close();
    return { indexes, byKind, system };
  }, SEED);
  assert.deepEqual(out.indexes, { skills: ['name', 'source'], skill_artifacts: ['id', 'kind', 'skill_id'] });
  assert.deepEqual(out.byKind, ['DSPy Checker']);
  assert.deepEqual(out.system, ['Consistency Checker']);
});

test('a version-1 database (messages only) upgrades in place to version 5 (skills, invocation records, traces, session logs, proposals, drafts); another tab upgrading closes the store cleanly', async () => {
  const out = await page.evaluate(async () => {
    const pl = await import('/pkg/src/web.js');
    // A database as the version-1 library left it: the message tables and one row.
    await new Promise((resolve, reject) => {
      const o = indexedDB.open('skill-upgrade', 1);
      o.onupgradeneeded = () => {
        for (const t of ['messages', 'parts', 'blobs', 'sessions', 'ids']) o.result.createObjectStore(t);
        o.transaction.objectStore('ids').put('"default/0000000001"', 'm1');
      };
      o.onsuccess = () => {
        o.result.close();
        resolve();
      };
      o.onerror = () => reject(o.error);
    });
    const skills = await pl.openSkillStore({ backend: 'indexeddb', name: 'skill-upgrade' });
    await skills.create({ name: 'After Upgrade', description: 'x' });
    const kept = await skills.__backend.get('ids', 'm1');
    const version = skills.__backend.db.version;
    const stores = ['skill_invocations', 'skill_traces', 'session_log', 'skill_proposals', 'approval_log', 'message_drafts'].filter((t) => skills.__backend.db.objectStoreNames.contains(t));
    // Another tab at a newer version: this connection closes; later writes fail cleanly.
    const db3 = await new Promise((resolve, reject) => {
      const o = indexedDB.open('skill-upgrade', version + 1);
      o.onupgradeneeded = () => o.result.createObjectStore('future');
      o.onsuccess = () => resolve(o.result);
      o.onerror = () => reject(o.error);
      o.onblocked = () => reject(new Error('blocked: the skill store did not close'));
    });
    let late;
    try {
      await skills.create({ name: 'Late', description: 'x' });
    } catch (e) {
      late = e.code;
    }
    const rows = await new Promise((resolve) => {
      const q = db3.transaction('skills').objectStore('skills').getAll();
      q.onsuccess = () => resolve(q.result.map((v) => JSON.parse(v.v).name));
    });
    db3.close();
    return { kept, version, late, rows, stores };
  });
  assert.equal(out.kept, '"default/0000000001"');
  assert.equal(out.version, 5);
  assert.deepEqual(out.stores, ['skill_invocations', 'skill_traces', 'session_log', 'skill_proposals', 'approval_log', 'message_drafts']);
  assert.equal(out.late, 'StoreFailed');
  assert.deepEqual(out.rows, ['After Upgrade']);
});

test('a version-3 database upgrades in place to version 5: its skills and traces kept, sessions and proposals stored beside them, a draft saved', async () => {
  // A page of its own: this one imports promptloom/composer (the other page loaded the
  // promptloom entry first).
  const own = await openBlank();
  const out = await own.page.evaluate(async () => {
    const pl = await import('/pkg/src/composer-web.js');
    // A database as the version-3 library left it: every table of then, one skill, one trace.
    const v3 = ['messages', 'parts', 'blobs', 'sessions', 'ids', 'skills', 'skill_artifacts', 'skill_sync', 'skill_invocations', 'skill_traces'];
    await new Promise((resolve, reject) => {
      const o = indexedDB.open('upgrade-3', 3);
      o.onupgradeneeded = () => {
        for (const t of v3) o.result.createObjectStore(t);
        const skills = o.transaction.objectStore('skills');
        skills.createIndex('name', 'name', { unique: true });
        skills.createIndex('source', 'source', { unique: false });
        const arts = o.transaction.objectStore('skill_artifacts');
        arts.createIndex('id', 'id', { unique: true });
        arts.createIndex('skill_id', 'skill_id', { unique: false });
        arts.createIndex('kind', 'kind', { unique: false });
        o.transaction.objectStore('skill_traces').put('{"id":"t1","session_id":"s"}', 's/2026/t1');
      };
      o.onsuccess = () => {
        o.result.close();
        resolve();
      };
      o.onerror = () => reject(o.error);
    });
    const store = await pl.openSkillStore({ backend: 'indexeddb', name: 'upgrade-3' });
    const created = await store.create({ name: 'Kept', description: 'x' });
    const trace = await store.__backend.get('skill_traces', 's/2026/t1');
    const spec = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };
    const registry = pl.buildSkillRegistry([spec], {});
    const s = await pl.openSession({ store, registry, id: 'after-upgrade' });
    await s.startSkill('core', 'one');
    s.free();
    const again = await pl.openSession({ store, registry, id: 'after-upgrade' });
    const state = again.run('core').state;
    const recoveries = again.hierarchy().recoveries;
    again.free();
    // The message store on the upgraded database keeps a draft.
    const messages = await pl.openMessageStore({ backend: 'indexeddb', name: 'upgrade-3' });
    const drafted = await messages.saveDraft({ turn: { role: 'assistant', parts: [{ type: 'text', text: 'Hel' }] } }, { session: 'd' });
    const draft = (await messages.draft('d'))?.turn?.parts?.[0]?.text;
    return { version: store.__backend.db.version, trace, kept: (await store.list()).map((x) => x.name), id: created.id !== undefined, state, recoveries, drafted, draft };
  });
  assert.equal(out.version, 5);
  assert.deepEqual([out.drafted, out.draft], [true, 'Hel']);
  assert.equal(out.trace, '{"id":"t1","session_id":"s"}');
  assert.deepEqual(out.kept, ['Kept']);
  assert.deepEqual([out.state, out.recoveries], ['a', 1]);
  await own.close();
});
