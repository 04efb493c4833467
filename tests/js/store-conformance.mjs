// The message-store conformance suite: the same checks against every backend (memory and a
// host KV object in Node, IndexedDB in headless Chromium, `wasi:keyvalue` through the
// component). Environment-agnostic: it gets the package, a way to open a fresh store, and
// the version-1 fixtures; it returns one result per check.

import { assert, checker, eq, rejects } from './checks.mjs';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PROVIDERS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

/** Every row of every table, to prove a failure wrote nothing. */
async function snapshot(store) {
  const b = store.__backend;
  const out = {};
  for (const t of ['messages', 'parts', 'blobs', 'sessions', 'ids']) out[t] = await b.scan(t, '');
  return JSON.stringify(out);
}

/**
 * Runs the suite. `pl` is the package, `open()` resolves to a fresh, empty store, `v1` is
 * the list of version-1 fixtures (tests/compose/v1). Returns [{ name, ok, error? }].
 */
export async function conformance(pl, open, v1) {
  const results = [];
  const check = checker(open, results);
  const catalog = new pl.CommandCatalog();
  catalog.register({ name: 'review', body: 'Review $1 for $2 issues', arguments: [{ name: 'file', required: true }, { name: 'severity' }] });
  const mixed = () => ({
    role: 'user',
    parts: [
      ...pl.parseInput('/review src/a.ts critical', { catalog }),
      ...pl.parseInput('look at @file:src/a.ts:1-2 and @selection, then @skill:pdf', { catalog }),
      { type: 'file-attachment', name: 'dot.png', mime: 'image/png', data: PNG },
      { type: 'editor-context', kind: 'viewport', payload: { x: 1 } },
    ],
  });
  const opts = (store, extra = {}) => ({ store, catalog, now: () => 1_700_000_000_000, mentions: { selection: () => ({ text: 'sel' }) }, ...extra });
  const files = (q) => (q.type === 'file' ? 'one\ntwo\nthree' : null);

  await check('a new store is empty; an unknown id is NotFound', async (s) => {
    eq(await s.history(), [], 'history');
    eq(await s.list('x'), [], 'list');
    await rejects(s.get('nope'), 'NotFound', 'get');
    eq(await s.blob('sha256-nope'), null, 'blob');
  });

  await check('submit persists; get returns exactly what was submitted', async (s) => {
    const r = await pl.submit(mixed(), opts(s));
    eq(r.id, 'default/0000000001', 'default id');
    eq(r.seq, 1, 'seq');
    eq(await s.get(r.id), r.message, 'read back');
    eq(r.message.metadata.schema_version, 2, 'schema_version');
    const list = await s.list();
    eq(list.map((h) => [h.id, h.seq, h.part_count]), [[r.id, 1, r.message.parts.length]], 'list');
  });

  await check('replay: the persisted message lowers to the same bytes, for every provider', async (s) => {
    const r = await pl.submit(mixed(), opts(s));
    const back = await s.get(r.id);
    for (const provider of PROVIDERS) {
      const a = await pl.lowerAsync(r.message, { provider, store: s, resolve: files });
      const b = await pl.lowerAsync(back, { provider, store: s, resolve: files });
      eq(a.body, b.body, provider);
    }
  });

  await check('history is in order; sessions are separate (also a session named like a prefix)', async (s) => {
    for (const [session, text] of [['a', 'one'], ['a/b', 'other'], ['a', 'two'], ['a', 'three']]) {
      await pl.submit({ role: 'user', parts: [{ type: 'text', text }] }, opts(s, { session }));
    }
    eq((await s.history('a')).map((m) => m.parts[0].text), ['one', 'two', 'three'], 'a');
    eq((await s.history('a/b')).map((m) => m.parts[0].text), ['other'], 'a/b');
    eq((await s.list('a')).map((h) => h.seq), [1, 2, 3], 'seqs');
  });

  await check('a session reads page by page: one key prefix each, together the whole thread', async (s) => {
    for (let i = 1; i <= 23; i++) await pl.submit({ role: 'user', parts: [{ type: 'text', text: `m${i}` }] }, opts(s, { session: 'p' }));
    // A session whose name looks like one of p's pages is not in p's pages.
    await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'nested' }] }, opts(s, { session: 'p/0000000001' }));
    const texts = (page) => page.items.map((t) => t.parts[0].text);
    const last = await s.page('p', { pageSize: 10 });
    eq([last.page, last.prev, last.next, texts(last)], [2, 1, null, ['m20', 'm21', 'm22', 'm23']], 'the last page');
    const first = await s.page('p', { of: 'history', page: 0, pageSize: 10 });
    eq([first.prev, first.next, texts(first)], [null, 1, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9']], 'page 0 (seq 1-9)');
    const heads = await s.page('p', { of: 'list', page: 1, pageSize: 10 });
    eq(heads.items.map((h) => h.seq), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], 'summaries');
    const all = [];
    for (let at = 0; at !== null; ) {
      const p = await s.page('p', { page: at, pageSize: 10 });
      all.push(...p.items);
      at = p.next;
    }
    eq(all, await s.history('p'), 'the pages are the thread');
    eq(await s.page('nobody'), { items: [], page: 0, prev: null, next: null }, 'an empty session');
    await rejects(s.page('p', { pageSize: 50 }), 'InvalidOptions', 'a page size that is not a power of ten');
  });

  await check('concurrent submits to one session get distinct sequence numbers', async (s) => {
    const rs = await Promise.all([1, 2, 3, 4, 5].map((n) => pl.submit({ role: 'user', parts: [{ type: 'text', text: `m${n}` }] }, opts(s))));
    eq(rs.map((r) => r.seq).sort(), [1, 2, 3, 4, 5], 'seqs');
    eq((await s.history()).length, 5, 'history');
  });

  await check('large attachments go to the blob store (deduplicated) and lower from it', async (s) => {
    const msg = { role: 'user', parts: [{ type: 'text', text: 'two copies' }, { type: 'file-attachment', name: 'a.png', data: PNG }, { type: 'file-attachment', name: 'b.png', data: PNG }] };
    const r = await pl.submit(msg, opts(s, { limits: { blobThreshold: 10 } }));
    eq(r.blobs.length, 1, 'one blob');
    const cid = r.message.parts[1].blob.content_id;
    eq(r.message.parts[2].blob.content_id, cid, 'same id');
    assert(!('data' in r.message.parts[1]), 'no inline data');
    const blob = await s.blob(cid);
    eq([blob.mime, blob.size, blob.data], ['image/png', 70, PNG], 'blob row');
    const l = await pl.lowerAsync(await s.get(r.id), { provider: 'anthropic', store: s });
    eq(l.json().messages[0].content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, 'lowered from the blob');
  });

  await check('the per-session inline budget carries across messages', async (s) => {
    const att = { type: 'file-attachment', name: 'x.png', data: PNG };
    const o = opts(s, { limits: { sessionInlineMax: 100 } });
    const a = await pl.submit({ role: 'user', parts: [att] }, o);
    const b = await pl.submit({ role: 'user', parts: [att] }, o);
    assert(typeof a.message.parts[0].data === 'string', 'first inline');
    assert(b.message.parts[0].blob && !b.message.parts[0].data, 'second split out');
  });

  await check('bad input is a typed error and writes nothing', async (s) => {
    await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'kept' }] }, opts(s));
    const before = await snapshot(s);
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'command', id: '/review' }] }, opts(s)), 'MissingArgument', 'missing');
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'command', id: '/review', args: '"a b' }] }, opts(s)), 'InvalidCommand', 'quotes');
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'file-attachment', data: PNG }] }, opts(s, { limits: { maxAttachmentBytes: 8 } })), 'TooLarge', 'too large');
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'file-attachment', data: '%%%%' }] }, opts(s)), 'InvalidData', 'base64');
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'nope' }, 5] }, opts(s)), 'InvalidMessage', 'malformed part');
    await rejects(pl.submit('not json', opts(s)), 'InvalidMessage', 'not an object');
    eq(await snapshot(s), before, 'rows unchanged');
    eq((await s.history()).map((m) => m.parts[0].text), ['kept'], 'still readable');
  });

  await check('a taken id is refused and nothing changes', async (s) => {
    await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'first' }] }, opts(s, { id: 'm-1' }));
    const before = await snapshot(s);
    await rejects(pl.submit({ role: 'user', parts: [{ type: 'text', text: 'second' }] }, opts(s, { id: 'm-1' })), 'InvalidOptions', 'dup');
    eq(await snapshot(s), before, 'rows unchanged');
    eq((await s.get('m-1')).parts[0].text, 'first', 'kept');
  });

  await check('version-1 rows read back in the version-2 shape; the rows are not rewritten', async (s) => {
    for (const f of v1) {
      const ops = [];
      for (const [table, rows] of Object.entries(f.rows)) {
        for (const [key, value] of Object.entries(rows)) ops.push({ op: 'put', table, key, value: JSON.stringify(value) });
      }
      await s.__backend.commitAfterRead([], () => ops);
      const before = await snapshot(s);
      const m = await s.get(f.id);
      eq(m, f.expect_v2, `upgraded ${f.id}`);
      eq((await s.history(f.session)).at(-1), f.expect_v2, 'history');
      for (const provider of PROVIDERS) {
        const a = await pl.lowerAsync(m, { provider, store: s });
        const b = await pl.lowerAsync(f.expect_v2, { provider, store: s });
        eq(a.body, b.body, provider);
      }
      eq(await snapshot(s), before, 'rows unchanged');
    }
  });

  await check('a corrupt row is a StoreFailed error naming it; other messages still read', async (s) => {
    const ok = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'fine' }] }, opts(s, { session: 'c' }));
    const bad = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'x' }] }, opts(s, { session: 'c' }));
    await s.__backend.commitAfterRead([], () => [{ op: 'put', table: 'parts', key: `${bad.id}#00000`, value: '{not json' }]);
    const e = await rejects(s.get(bad.id), 'StoreFailed', 'corrupt');
    assert(e.message.includes(`${bad.id}#00000`), 'names the row');
    eq((await s.get(ok.id)).parts[0].text, 'fine', 'other message');
  });

  return results;
}
