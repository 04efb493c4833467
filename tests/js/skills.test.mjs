// Skills through the npm package's Node entry: the skill-store conformance suite on the
// memory backend and on host KV objects, import/export of both formats, the catalog (scopes,
// phase-1 matching, embeddings) and marketplace sync against a local HTTP server with ETags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import * as pl from '../../pkg/src/node.js';
import { skillConformance } from './skill-conformance.mjs';
import { kv } from './host-kv.mjs';

const SEED = readFileSync(new URL('../skills/packages/consistency-checker.json', import.meta.url), 'utf8');
const NOW = '2026-11-22T08:00:00.000Z';
const now = () => Date.parse(NOW);

function report(results) {
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  assert.ok(results.length >= 11);
}

test('skill conformance: memory backend', async () => {
  report(await skillConformance(pl, () => pl.openSkillStore({ backend: 'memory', now }), SEED));
});

test('skill conformance: host KV object (array list)', async () => {
  report(await skillConformance(pl, () => pl.openSkillStore({ backend: kv(), name: 'ws', now }), SEED));
});

test('skill conformance: host KV object (edge-style { keys: [{ name }] } list)', async () => {
  report(await skillConformance(pl, () => pl.openSkillStore({ backend: kv({ cloudflareList: true }), now }), SEED));
});

test('a host store failing mid-write leaves the skill invisible; a retry completes it', async () => {
  const host = kv({ failAfter: 3 });
  const s = await pl.openSkillStore({ backend: host, now });
  await assert.rejects(s.create(JSON.parse(SEED)), (e) => e.code === 'StoreFailed' && /quota/.test(e.message));
  // The skill row is written last: nothing is listed, nothing half-read.
  assert.deepEqual(await s.list(), []);
  assert.equal(await s.getByName('Consistency Checker'), null);
  host.heal();
  await s.put(JSON.parse(SEED));
  assert.equal((await s.get('550e8400-e29b-41d4-a716-446655440000')).artifacts.length, 4);
});

test('importPackage / validateSkill / importSkillMd / exportSkillMd', () => {
  const { skill, warnings } = pl.importPackage(SEED, { now: () => Date.parse(NOW) });
  assert.equal(skill.artifacts.length, 4);
  assert.deepEqual(warnings, []);
  assert.deepEqual(pl.validateSkill(JSON.parse(SEED)), { valid: true, problems: [] });
  const v = pl.validateSkill({ name: 'x', description: '', version: 'one', artifacts: [{ kind: 'nope', name: 'a', content: '' }] });
  assert.equal(v.valid, false);
  assert.deepEqual(v.problems.map((p) => p.path), ['artifacts[0].kind', 'description', 'version']);
  assert.throws(() => pl.importPackage('{"name": '), (e) => e.code === 'InvalidSkill' && /not valid JSON/.test(e.message));
  assert.throws(() => pl.importSkillMd('# no frontmatter'), (e) => e.code === 'InvalidSkill' && e.details.path === 'SKILL.md');
  const md = pl.importSkillMd('---\nname: a-b\ndescription: Does things: well\n---\nBody {{ x }}\n', { 'references/r.md': new TextEncoder().encode('# ref\n') }, { dir: 'a-b', now: () => Date.parse(NOW) });
  assert.deepEqual(md.problems.map((p) => p.code), ['unquoted-colon']);
  assert.equal(md.skill.artifacts[1].content, '# ref\n', 'UTF-8 bytes stay text');
  const out = pl.exportSkillMd(md.skill);
  assert.equal(out.text, '---\nname: a-b\ndescription: "Does things: well"\n---\nBody {{ x }}\n');
  assert.equal(out.files['references/r.md'], '# ref\n');
  // Variants.
  const arts = ['openai', null, 'gemini'].map((v, i) => ({ ...skill.artifacts[1], id: `v${i}`, model_variant: v, ordinal: i }));
  assert.equal(pl.selectVariant(arts, 'gpt-4o').id, 'v0');
  assert.equal(pl.selectVariant(arts, 'claude-opus-4').id, 'v1');
  assert.equal(pl.selectVariant([], 'x'), undefined);
  assert.equal(pl.modelFamily('gemini-2.5-flash'), 'gemini');
});

async function scopes() {
  const workspace = await pl.openSkillStore({ name: 'ws', now });
  const account = await pl.openSkillStore({ name: 'acc', now });
  return { workspace, account };
}

test('the catalog merges scopes (workspace wins, override reported) and loads phase 2 lazily', async () => {
  const { workspace, account } = await scopes();
  await account.create(JSON.parse(SEED));
  await account.create({ name: 'Summarize', description: 'Summarizes the open page.', trigger_phrases: ['tl;dr'] });
  const fork = { ...JSON.parse(SEED), id: 'fork', description: 'My fork.' };
  await workspace.create(fork);
  const cat = new pl.SkillCatalog(workspace, account);
  const list = await cat.list();
  assert.deepEqual(list.map((s) => [s.name, s.scope]), [['Consistency Checker', 'workspace'], ['Summarize', 'account']]);
  assert.deepEqual(list[0].overrides, { scope: 'account', id: '550e8400-e29b-41d4-a716-446655440000', version: '1.0.0', source: 'system' });
  assert.equal((await cat.get('Consistency Checker')).description, 'My fork.');
  assert.equal((await cat.get('Summarize')).scope, 'account');
  const arts = await cat.load('Consistency Checker', ['description']);
  assert.deepEqual(arts.map((a) => [a.name, a.skill_id]), [['Overview', 'fork']]);
  // Phase 1.
  const r = await cat.match('are there any contradictions in chapter two?');
  assert.equal(r[0].name, 'Consistency Checker');
  assert.equal(r[0].scope, 'workspace');
  assert.equal(r[0].tier, 'exact');
  assert.equal(r[0].trigger, 'are there any contradictions');
  assert.deepEqual((await cat.match('tl;dr')).map((x) => x.name), ['Summarize']);
  // A write through the store rebuilds the index.
  await workspace.create({ name: 'Timeline', description: 'Checks timelines.', trigger_phrases: ['check the timeline'] });
  assert.equal((await cat.match('please check the timeline'))[0].name, 'Timeline');
});

test('an embedding hook is blended in', async () => {
  const { workspace, account } = await scopes();
  await account.create({ name: 'Summarize', description: 'Summarizes the open page.' });
  await account.create({ name: 'Translate', description: 'Translates text.' });
  const vec = (t) => (/summar|condense|shorten/i.test(t) ? [1, 0] : [0, 1]);
  const calls = [];
  const cat = new pl.SkillCatalog(workspace, account, { embed: async (texts) => (calls.push(texts.length), texts.map(vec)), blend: 0.5 });
  const r = await cat.match('condense this');
  assert.equal(r[0].name, 'Summarize');
  assert.ok(r[0].similarity > 0.99);
  assert.deepEqual(calls, [2, 1], 'skills embedded once per index build, the query once per match');
});

/** A marketplace: serves `state.body` with `state.etag`; honours If-None-Match. */
async function marketplace() {
  const state = { body: '', etag: '"v1"', status: 200, seen: [] };
  const server = createServer((req, res) => {
    state.seen.push(req.headers['if-none-match'] ?? null);
    if (state.status !== 200) {
      res.writeHead(state.status).end('oops');
      return;
    }
    if (req.headers['if-none-match'] === state.etag) {
      res.writeHead(304, { ETag: state.etag }).end();
      return;
    }
    res.writeHead(200, { ETag: state.etag, 'Content-Type': 'application/json' }).end(state.body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/catalog.json`;
  return { state, url, close: () => new Promise((r) => server.close(r)) };
}

test('marketplace sync: 200, 304, changed, 500, malformed body, offline', async () => {
  const m = await marketplace();
  try {
    const { workspace, account } = await scopes();
    await workspace.create({ name: 'Consistency Checker', description: 'my workspace fork' });
    const cat = new pl.SkillCatalog(workspace, account);
    const pkg = JSON.parse(SEED);
    m.state.body = JSON.stringify({ skills: [{ ...pkg, etag: '"cc-1"' }, { name: 'Summarize', description: 'v1', etag: '"s-1"', marketplace_id: 'mk-sum' }] });
    // 200: both upserted into the account scope; the workspace fork untouched (reported as shadowing).
    let r = await cat.syncMarketplace(m.url);
    assert.equal(r.status, 'updated');
    assert.deepEqual(r.upserted, ['Consistency Checker', 'Summarize']);
    assert.deepEqual(r.shadowed, ['Consistency Checker']);
    assert.equal((await workspace.getByName('Consistency Checker')).description, 'my workspace fork');
    const sum = await account.getByName('Summarize');
    assert.deepEqual([sum.source, sum.sync_etag, sum.marketplace_id], ['community', '"s-1"', 'mk-sum']);
    const rowsAfterFirst = JSON.stringify(await account.__backend.scan('skills', ''));
    // 304: If-None-Match sent, nothing changes.
    r = await cat.syncMarketplace(m.url);
    assert.equal(r.status, 'not-modified');
    assert.equal(m.state.seen.at(-1), '"v1"');
    assert.equal(JSON.stringify(await account.__backend.scan('skills', '')), rowsAfterFirst);
    // Changed catalog: only the changed package is written, in place.
    m.state.etag = '"v2"';
    m.state.body = JSON.stringify({ skills: [{ ...pkg, etag: '"cc-1"' }, { name: 'Summarize', description: 'v2', etag: '"s-2"', marketplace_id: 'mk-sum' }] });
    r = await cat.syncMarketplace(m.url);
    assert.deepEqual([r.upserted, r.unchanged], [['Summarize'], ['Consistency Checker']]);
    const sum2 = await account.getByName('Summarize');
    assert.deepEqual([sum2.id, sum2.description, sum2.created_at], [sum.id, 'v2', sum.created_at]);
    const before = JSON.stringify(await account.__backend.scan('skills', ''));
    const sync = JSON.stringify(await account.__backend.scan('skill_sync', ''));
    // 500: SyncFailed, nothing changed.
    m.state.etag = '"v3"';
    m.state.status = 500;
    await assert.rejects(cat.syncMarketplace(m.url), (e) => e.code === 'SyncFailed' && e.details.status === 500);
    // Malformed body: SyncFailed, nothing changed.
    m.state.status = 200;
    m.state.body = '{"skills": {"not": "an array"}}';
    await assert.rejects(cat.syncMarketplace(m.url), (e) => e.code === 'SyncFailed');
    m.state.body = '<html>';
    await assert.rejects(cat.syncMarketplace(m.url), (e) => e.code === 'SyncFailed' && /JSON/.test(e.message));
    assert.equal(JSON.stringify(await account.__backend.scan('skills', '')), before);
    assert.equal(JSON.stringify(await account.__backend.scan('skill_sync', '')), sync, 'the ETag is not advanced');
    // Offline: the cache is used.
    const offline = await cat.syncMarketplace(m.url, { fetch: () => Promise.reject(new TypeError('fetch failed')) });
    assert.deepEqual([offline.status, offline.error], ['offline', 'fetch failed']);
    assert.equal(JSON.stringify(await account.__backend.scan('skills', '')), before);
    assert.equal((await cat.match('Summarize'))[0].name, 'Summarize');
  } finally {
    await m.close();
  }
});

test('a corrupt skill row is a StoreFailed naming it, for list and get; other rows stay readable', async () => {
  for (const backend of ['memory', kv()]) {
    const s = await pl.openSkillStore({ backend, now });
    await s.create({ name: 'Fine', description: 'ok' });
    await s.__backend.commitAfterRead([], () => [{ op: 'put', table: 'skills', key: 'broken', value: '{"id": 1' }]);
    await assert.rejects(s.list(), (e) => e.code === 'StoreFailed' && /skills row `broken`/.test(e.message));
    await assert.rejects(s.get('broken'), (e) => e.code === 'StoreFailed' && /broken/.test(e.message));
    assert.equal((await s.getByName('Fine')).name, 'Fine');
  }
});

test('SkillIndex and SkillCatalog: a disabled skill (metadata.enabled: false) is listed but never matched', async () => {
  const on = { id: 'a', name: 'Notes Writer', description: 'Writes release notes.', trigger_phrases: ['write release notes'] };
  const off = { id: 'b', name: 'Release Notes', description: 'Writes release notes.', trigger_phrases: ['write release notes'], metadata: { enabled: false } };
  const ix = new pl.SkillIndex([off, on, { ...off, id: 'c', name: 'Odd', metadata: { enabled: 'false' } }]);
  assert.equal(ix.size, 3);
  assert.deepEqual(ix.match('write release notes').map((r) => r.id).sort(), ['a', 'c'], 'only `false` itself disables');
  assert.deepEqual(ix.match('release notes').map((r) => r.id).sort(), ['a', 'c']);
  const ws = await pl.openSkillStore();
  await ws.create({ name: 'Quiet Checker', description: 'd', trigger_phrases: ['quietly check it'], metadata: { enabled: false } });
  const cat = new pl.SkillCatalog(ws, await pl.openSkillStore({ name: 'acct' }));
  assert.ok((await cat.list()).some((s) => s.name === 'Quiet Checker'));
  assert.deepEqual((await cat.match('quietly check it')).map((r) => r.name), []);
});

test('SkillIndex: separator characters inside fields cannot shift documents', () => {
  const ix = new pl.SkillIndex([
    { id: 'a', name: 'Alpha\u001eBeta', description: 'one\u001ftwo\u001dthree', tags: ['x\u001ey'], trigger_phrases: ['say\u001falpha'] },
    { id: 'b', name: 'Gamma', description: 'delta' },
  ]);
  assert.equal(ix.size, 2);
  assert.deepEqual(ix.match('gamma').map((r) => r.id), ['b']);
  assert.deepEqual(ix.match('say alpha').map((r) => [r.id, r.tier]), [['a', 'exact']]);
  assert.deepEqual(ix.match('three').map((r) => r.id), ['a']);
});

test('system skills: openSkillStore({ seed: true }) migrates a host store once; the catalog gives the specs; a failed migration finishes on the next open', async () => {
  const host = kv();
  const account = await pl.openSkillStore({ backend: host, name: 'account', now, seed: true });
  assert.deepEqual([account.seeded.status, account.seeded.version, account.seeded.upserted], ['created', 1, ['tool-builder', 'skill-builder']]);
  const again = await pl.openSkillStore({ backend: host, name: 'account', now, seed: true });
  assert.equal(again.seeded.status, 'current');
  assert.equal((await pl.openSkillStore({ backend: host, name: 'account', now })).seeded, null, 'no seed, no migration');
  // A workspace fork of tool-builder wins in the catalog's specs.
  const doc = await pl.systemSkills();
  const fork = { ...doc.skills[0], source: 'user', metadata: { skill_spec: { ...doc.skills[0].metadata.skill_spec, max_steps: 12 } } };
  const workspace = await pl.openSkillStore({ backend: kv(), name: 'ws', now });
  await workspace.create(fork);
  const catalog = new pl.SkillCatalog(workspace, account);
  const specs = await catalog.skillSpecs();
  assert.deepEqual(specs.map((s) => [s.name, s.max_steps]), [['skill-builder', 40], ['tool-builder', 12]]);
  assert.deepEqual(await account.skillSpecs(), pl.seedSkillSpecs(doc));
  // The system skills are matched like any skill.
  const top = await catalog.match('propose a new tool', { k: 1 });
  assert.equal(top[0]?.name, 'tool-builder');
  // A host store that fails in the middle of the migration: the open fails, the next one finishes it.
  const flaky = kv();
  flaky.failIn(3);
  await assert.rejects(pl.openSkillStore({ backend: flaky, name: 'account', now, seed: true }), (e) => e.code === 'StoreFailed');
  flaky.heal();
  const healed = await pl.openSkillStore({ backend: flaky, name: 'account', now, seed: true });
  assert.equal(healed.seeded.status, 'created');
  assert.deepEqual((await healed.list()).map((s) => s.name), ['skill-builder', 'tool-builder']);
  // A host's own seed document, and the options that are not one.
  const own = await pl.openSkillStore({ now, seed: { version: 3, skills: [{ name: 'house-style', description: 'Our house style.' }] } });
  assert.deepEqual([own.seeded.status, own.seeded.version, own.seeded.upserted], ['created', 3, ['house-style']]);
  for (const seed of ['yes', 1, null]) {
    await assert.rejects(pl.openSkillStore({ now, seed }), (e) => e.code === 'InvalidOptions' && e.details.path === 'seed');
  }
  await assert.rejects(pl.openSkillStore({ now, seed: { version: 0, skills: [] } }), (e) => e.code === 'InvalidSkill' && e.details.problems[0].code === 'invalid-version');
});

// Long operations take a signal and report progress: an abort stops each at its next step
// with `Aborted` (a sync aborted before its writes changes nothing), and `onProgress` hears
// every phase.
test('long operations: signal and onProgress for syncMarketplace, catalog.index with embeddings, and seeding', async () => {
  const m = await marketplace();
  try {
    const { workspace, account } = await scopes();
    const seen = [];
    const embedSignals = [];
    const cat = new pl.SkillCatalog(workspace, account, { embed: async (texts, { signal }) => (embedSignals.push(signal), texts.map((t) => [t.length, 1])) });
    m.state.body = JSON.stringify({ skills: [{ name: 'Summarize', description: 'v1', etag: '"s-1"', marketplace_id: 'mk-sum' }] });
    const aborted = (e) => e instanceof pl.PromptloomError && e.code === 'Aborted' && e.cause === 'stop';
    // Aborted before anything: nothing fetched, nothing written.
    const before = m.state.seen.length;
    const gone = new AbortController();
    gone.abort('stop');
    await assert.rejects(cat.syncMarketplace(m.url, { signal: gone.signal }), aborted);
    assert.equal(m.state.seen.length, before, 'nothing fetched');
    // Aborted after the fetch, before the writes: nothing written.
    const mid = new AbortController();
    await assert.rejects(cat.syncMarketplace(m.url, { signal: mid.signal, onProgress: (p) => p.phase === 'fetched' && mid.abort('stop') }), aborted);
    assert.equal(await account.getByName('Summarize'), null, 'nothing written');
    // Whole: fetched, then written.
    const r = await cat.syncMarketplace(m.url, { onProgress: (p) => seen.push(p) });
    assert.equal(r.status, 'updated');
    const writes = seen.filter((p) => p.phase === 'writing');
    assert.deepEqual([seen[0].phase, seen.at(-1).phase], ['fetched', 'written']);
    assert.ok(writes.length >= 2 && writes.every((p, i) => p.done === i && p.total === writes.length - 1), JSON.stringify(writes));
    // The index: listed, embedding, embedded; the signal reaches embed.
    seen.length = 0;
    const live = new AbortController();
    const ix = await cat.index({ signal: live.signal, onProgress: (p) => seen.push(p) });
    assert.deepEqual(seen.map((p) => `${p.phase}:${p.done}/${p.total}`), ['listed:1/1', 'embedding:0/1', 'embedded:1/1']);
    assert.equal(embedSignals.at(-1), live.signal);
    assert.ok(ix.size === 1);
    const stop = new AbortController();
    await assert.rejects(cat.index({ refresh: true, signal: stop.signal, onProgress: (p) => p.phase === 'embedding' && stop.abort('stop') }), aborted);
    // Seeding: an aborted signal stops it before anything is read or written.
    const fresh = await pl.openSkillStore({ backend: 'memory', name: 'seed-abort', now });
    await assert.rejects(fresh.seed(await pl.systemSkills(), { signal: gone.signal }), aborted);
    assert.deepEqual(await fresh.list(), []);
    // The bulk import's progress: one `writing` before each skill and one when all are written;
    // an abort between writes keeps what is written, and seeding again finishes the job.
    const seedDoc = await pl.systemSkills();
    const part = new AbortController();
    const heard = [];
    await assert.rejects(fresh.seed(seedDoc, { signal: part.signal, onProgress: (p) => (heard.push(p), p.done === 1 && part.abort('stop')) }), aborted);
    assert.equal(heard[0].phase, 'writing');
    const total = heard[0].total;
    assert.ok(total >= 2, `${total} skills`);
    assert.equal((await fresh.list()).length, 1, 'the one written before the abort stays');
    heard.length = 0;
    const again = await fresh.seed(seedDoc, { onProgress: (p) => heard.push(`${p.done}/${p.total}`) });
    assert.equal((await fresh.list()).length, total);
    assert.equal(heard.at(-1), `${heard.length - 1}/${heard.length - 1}`);
    assert.ok(again.status === 'created', again.status);
    // An observer that throws stops the operation as AdapterFailed naming it.
    await assert.rejects(cat.index({ refresh: true, onProgress: () => { throw new Error('ui gone'); } }), (e) => e.code === 'AdapterFailed' && e.details.callback === 'onProgress');
  } finally {
    await m.close();
  }
});
