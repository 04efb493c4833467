// The compositor through the npm package's Node entry: the store conformance suite on the
// memory backend and on a host KV object, and the JS-facing behaviour (callbacks, errors,
// the inspector, a 100 MB attachment).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/node.js';
import { conformance } from './store-conformance.mjs';
import { v1 } from './cases.mjs';
import { kv } from './host-kv.mjs';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function report(results) {
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  assert.ok(results.length >= 10);
}

test('conformance: memory backend', async () => {
  report(await conformance(pl, () => pl.openMessageStore({ backend: 'memory' }), v1));
});

test('conformance: host KV object (array list)', async () => {
  report(await conformance(pl, () => pl.openMessageStore({ backend: kv(), name: 'kv' }), v1));
});

test('conformance: host KV object (edge-style { keys: [{ name }] } list)', async () => {
  report(await conformance(pl, () => pl.openMessageStore({ backend: kv({ cloudflareList: true }) }), v1));
});

test('a host store failing mid-write leaves the message invisible; a retry takes the same sequence number', async () => {
  const host = kv();
  const store = await pl.openMessageStore({ backend: host });
  await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'one' }] }, { store });
  host.failIn(3); // the journal and two rows land, then the store fails
  await assert.rejects(
    pl.submit({ role: 'user', parts: [{ type: 'text', text: 'two' }, { type: 'text', text: 'three' }] }, { store }),
    (e) => e.code === 'StoreFailed' && /KV quota exceeded/.test(e.message),
  );
  assert.deepEqual((await store.history()).map((m) => m.parts[0].text), ['one']);
  host.heal();
  const r = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'two' }] }, { store });
  assert.equal(r.seq, 2);
  assert.deepEqual((await store.history()).map((m) => m.parts.map((p) => p.text).join()), ['one', 'two']);
});

test('submit asks the host: async mention callbacks, resolve for other mentions and MCP prompts', async () => {
  const store = await pl.openMessageStore();
  const catalog = new pl.CommandCatalog();
  catalog.register({ name: 'issue', kind: 'prompt', server: 'github', prompt: 'create_issue', arguments: [{ name: 'title', required: true }] });
  catalog.registerMention({ name: 'frame', description: 'The current frame' });
  const asked = [];
  const r = await pl.submit(
    { role: 'user', parts: [...pl.parseInput('/issue crash on save', { catalog }), ...pl.parseInput('at @frame:12 and @selection', { catalog }), { type: 'mention', target: { kind: 'symbol', name: 'f' } }] },
    {
      store,
      catalog,
      now: () => 5,
      mentions: {
        selection: async () => ({ payload: { text: 'abc' }, source: 'editor-1' }),
        frame: (target) => ({ frame: Number(target.id) }),
      },
      resolve: async (q) => {
        asked.push(q.type);
        if (q.type === 'prompt') return { messages: [{ role: 'user', content: { type: 'text', text: `New issue: ${q.arguments.title}` } }] };
        if (q.type === 'resolve') throw new Error('symbol index not ready');
        return null;
      },
    },
  );
  assert.deepEqual(asked.sort(), ['prompt', 'resolve']);
  const l = await pl.lower(r.message, { provider: 'anthropic' });
  assert.deepEqual(l.json().messages[0].content.map((c) => c.text), [
    'New issue: crash on save',
    'at ',
    '<editor_context kind="frame">{"frame":12}</editor_context>',
    ' and ',
    '<editor_context kind="selection" source="editor-1">{"text":"abc"}</editor_context>',
  ]);
  assert.deepEqual(r.warnings.map((w) => w.code), ['ResolverFailed']);
});

test('the catalog: register, replace, complete, unregister, typed errors', () => {
  const c = new pl.CommandCatalog();
  assert.equal(c.register({ name: '/review', body: 'Review $1', description: 'Review a file' }), undefined);
  assert.equal(c.register({ name: 'review', body: 'Look at $1', source: 'project' }).body, 'Review $1');
  assert.deepEqual(c.complete('/re').map((x) => x.insert), ['/review', '/rewind']);
  assert.deepEqual(c.complete('@se').map((x) => x.insert), ['@selection']);
  assert.deepEqual(c.complete('@').map((x) => x.insert).slice(0, 3), ['@file:', '@skill:', '@cursor']);
  assert.equal(c.unregister('/review'), true);
  assert.equal(c.unregister('review'), false);
  assert.throws(() => c.register({ name: 'x y', body: '' }), (e) => e.code === 'InvalidCommand' && e.details.path === 'name');
  assert.throws(() => c.register({ name: 'p', kind: 'prompt' }), (e) => e.code === 'InvalidCommand' && e.details.path === 'server');
  assert.throws(() => c.register({ name: 'k', kind: 'teleport' }), (e) => e.code === 'InvalidCommand');
  assert.ok(new pl.CommandCatalog({ builtins: false }).list().commands.length === 0);
  assert.deepEqual(c.list().commands.map((x) => x.name), ['archive', 'branch', 'compact', 'rewind', 'search']);
});

test('the inspector shows the user view, the persisted shape and the model view side by side', async () => {
  const store = await pl.openMessageStore();
  const r = await pl.submit({ role: 'user', parts: pl.parseInput('/search icon set') }, { store });
  const v = await pl.inspect(r.message, { provider: 'openai-chat' });
  assert.deepEqual(v.user, [{ detail: 'parts', label: '/search icon set', part: 0, type: 'command' }]);
  assert.equal(v.persisted.parts[0].resolved.flags.intent, 'search');
  assert.equal(v.model.body.messages[0].content, 'icon set');
  const action = await pl.submit({ role: 'user', parts: pl.parseInput('/compact') }, { store });
  assert.deepEqual(action.actions.map((a) => a.action), ['compact']);
  assert.equal((await pl.inspect(action.message, { provider: 'anthropic' })).model.error.code, 'EmptyMessage');
});

test('a 100 MB attachment is refused with TooLarge; nothing is stored and the instance keeps working', async () => {
  const store = await pl.openMessageStore();
  const big = new Uint8Array(100 * 1024 * 1024);
  await assert.rejects(pl.submit({ role: 'user', parts: [{ type: 'file-attachment', name: 'huge.bin', data: big }] }, { store }), (e) => e.code === 'TooLarge' && e.details.size === big.length);
  assert.deepEqual(await store.history(), []);
  const r = await pl.submit({ role: 'user', parts: [{ type: 'file-attachment', name: 'dot.png', data: Buffer.from(PNG, 'base64') }] }, { store });
  assert.equal(r.message.parts[0].data, PNG);
});

test('options are checked with clear errors', async () => {
  await assert.rejects(pl.submit({ role: 'user', parts: [] }, {}), (e) => e.code === 'InvalidOptions' && e.details.path === 'store');
  await assert.rejects(pl.openMessageStore({ backend: 'sqlite' }), (e) => e.code === 'InvalidOptions');
  await assert.rejects(pl.openMessageStore({ backend: { get() {} } }), (e) => e.code === 'InvalidOptions' && /put/.test(e.message));
  const store = await pl.openMessageStore();
  await assert.rejects(pl.submit({ role: 'user', parts: [] }, { store, catalog: {} }), (e) => e.details.path === 'catalog');
  await assert.rejects(pl.submit({ role: 'user', parts: [] }, { store, limits: { blobThreshold: -1 } }), (e) => e.code === 'InvalidOptions' && e.details.path === 'limits.blobThreshold' && /limits\.blobThreshold/.test(e.message));
  assert.throws(() => pl.parseInput(5), (e) => e.code === 'InvalidMessage');
});

test('large attachments stay in JS through submit; the core asks for the bytes only to hash or to tell text from binary', async () => {
  const store = await pl.openMessageStore();
  const head = Buffer.from(PNG, 'base64');
  const png = Buffer.alloc(300 * 1024, 9);
  head.copy(png);
  const pngB64 = png.toString('base64');
  const blobBytes = Buffer.alloc(2 * 1024 * 1024, 5);
  head.copy(blobBytes);
  const binary = Buffer.alloc(4096, 0); // no magic, not text: must be read to classify
  const notes = Buffer.from('# Notes\n' + '- kept\n'.repeat(400));
  const r = await pl.submit(
    {
      role: 'user',
      parts: [
        { type: 'file-attachment', name: 'shot.png', data: png }, // inline, held back
        { type: 'file-attachment', name: 'shot.png', data: `data:image/png;base64,${pngB64}` }, // a data URL, held back
        { type: 'file-attachment', name: 'big.png', data: blobBytes }, // to the blob store: hashed
        { type: 'file-attachment', name: 'x.bin', data: binary }, // unlabelled: read whole
        { type: 'file-attachment', name: 'notes.md', data: notes }, // text: never held back
      ],
    },
    { store },
  );
  const [a, b, c, d, e] = r.message.parts;
  assert.equal(a.data, pngB64);
  assert.equal(b.data, pngB64);
  assert.equal(c.blob.content_id, `sha256-${(await import('node:crypto')).createHash('sha256').update(blobBytes).digest('hex')}`);
  assert.equal((await store.blob(c.blob.content_id)).data, blobBytes.toString('base64'));
  assert.equal(d.mime, 'application/octet-stream');
  assert.ok(d.blob && !d.data);
  assert.equal(Buffer.from(e.data, 'base64').toString(), notes.toString());
  assert.deepEqual(await store.get(r.id), r.message);
  // Lowered from the store: the same bytes as lowering the parts as given.
  const direct = pl.lower({ parts: [{ type: 'file-attachment', name: 'shot.png', data: png }] }, { provider: 'anthropic' });
  const stored = await pl.lowerAsync({ parts: [r.message.parts[0]] }, { provider: 'anthropic', store });
  assert.equal(stored.body, direct.body);
});

test('pages(): a session page by page, oldest or newest first; a signal stops it before its next read', async () => {
  const store = await pl.openMessageStore({ backend: 'memory' });
  for (let i = 1; i <= 35; i++) await pl.submit({ role: 'user', parts: [{ type: 'text', text: `m${i}` }] }, { store, session: 'chat', now: () => 0 });
  const seen = [];
  for await (const p of store.pages('chat', { pageSize: 10 })) seen.push([p.page, p.items.length]);
  assert.deepEqual(seen, [[0, 9], [1, 10], [2, 10], [3, 6]]);
  const newest = [];
  for await (const p of store.pages('chat', { pageSize: 10, order: 'newest-first', of: 'list' })) newest.push(p.items.map((h) => h.seq).join(','));
  assert.equal(newest[0], '30,31,32,33,34,35');
  assert.equal(newest.length, 4);
  // The reads: one per page (the backend's read() counted), plus the counter read of the last page.
  let reads = 0;
  const b = store.__backend;
  const read = b.read.bind(b);
  b.read = (plan) => (reads++, read(plan));
  let n = 0;
  for await (const _ of store.pages('chat', { pageSize: 10 })) n++;
  assert.equal([n, reads].join(), '4,4');
  const ac = new AbortController();
  const it = store.pages('chat', { pageSize: 10, signal: ac.signal });
  assert.equal((await it.next()).value.page, 0);
  ac.abort();
  await assert.rejects(it.next(), (e) => e.code === 'Aborted');
  await assert.rejects(store.pages('chat', { order: 'sideways' }).next(), (e) => e.code === 'InvalidOptions' && e.details.path === 'order');
  await assert.rejects(store.page('chat', { page: -1 }), (e) => e.code === 'InvalidOptions' && e.details.path === 'page');
  await assert.rejects(store.page('chat', { of: 'everything' }), (e) => e.code === 'InvalidOptions' && e.details.path === 'of');
});
