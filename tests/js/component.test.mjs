// The WASI component in jco (transpiled to JS, run in Node with the preview2 shims): every
// shared case lowers to the recorded body; errors are the WIT `error` variant; the message
// store conformance suite runs on the component's `wasi:keyvalue` backend (an in-memory
// bucket, tests/js/kv.js).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { successCases, errorCases, root, v1, conversationCases, conversationErrors, responseCases, objectCases, chatViewCases } from './cases.mjs';
import { conformance } from './store-conformance.mjs';
import { skillConformance } from './skill-conformance.mjs';
import { buckets } from './kv.js';
import { host as handlerHost } from './handlers.js';
import { gatewayContracts } from './cases.mjs';
import { readFileSync } from 'node:fs';
import { composerFixtures, arbiterSpecs } from './composer-fixtures.mjs';
import { sessionConformance } from './session-conformance.mjs';
import * as plc from '../../pkg/src/composer-node.js';
import { agentCases } from './agent-cases.mjs';
import { artifactCases, scriptedHost } from './artifact-cases.mjs';

let lowering;
let compositor;
let skills;
let composer;
let arbiterApi;
let response;
let gatewayApi;
let agentApi;
let chatApi;
before(async () => {
  const out = join(root, 'tests/js/.out/component');
  execFileSync(join(root, 'node_modules/.bin/jco'), ['transpile', join(root, 'target/component/promptloom.wasm'), '-o', out, '--quiet', '--map', 'wasi:keyvalue/store=../../kv.js', '--map', 'promptloom:core/handlers=../../handlers.js'], { stdio: 'pipe' });
  const mod = await import(pathToFileURL(join(out, 'promptloom.js')).href);
  lowering = mod.lowering;
  compositor = mod.compositor;
  skills = mod.skills;
  composer = mod.composer;
  arbiterApi = mod.arbiter;
  response = mod.response;
  gatewayApi = mod.gateway;
  agentApi = mod.agent;
  chatApi = mod.chat;
});

test('the response parser resource in jco: a JSON answer streams as object edits (for-request) and ends in metadata.object', () => {
  const enc = new TextEncoder();
  const cases = objectCases();
  assert.ok(cases.length >= 5);
  for (const c of cases) {
    const p = response.ResponseParser.forRequest(c.provider, c.request);
    const bytes = enc.encode(c.stream);
    let deltas = 0;
    for (let i = 0; i < bytes.length; i += 9) for (const e of JSON.parse(p.push(bytes.subarray(i, i + 9)))) if (e.type === 'object-delta') deltas++;
    p.end();
    assert.ok(deltas > 0, c.name);
    assert.deepEqual(JSON.parse(p.finish()).metadata.object, c.object, c.name);
    assert.equal(p.firstError(), undefined, c.name);
    assert.deepEqual(JSON.parse(response.parseResponseFor(c.provider, c.request, bytes)).metadata.object, c.object, `${c.name} whole`);
  }
});

test('the response parser resource in jco: every recorded response, whole and in chunks; transport rules', () => {
  const enc = new TextEncoder();
  let n = 0;
  for (const c of responseCases()) {
    const bytes = enc.encode(c.body);
    for (const size of [bytes.length || 1, 5]) {
      const p = new response.ResponseParser(c.provider);
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...JSON.parse(p.push(bytes.subarray(i, i + size))));
      events.push(...JSON.parse(p.end()));
      assert.deepEqual(events, c.expected.events, `${c.name} by ${size}`);
      assert.deepEqual(JSON.parse(p.finish()), c.expected.turn, c.name);
      const err = p.firstError();
      assert.equal(err ? err.code : null, c.expected.error ? c.expected.error.code.replace(/[A-Z]/g, (m, i) => (i ? '-' : '') + m.toLowerCase()) : null, c.name);
    }
    n++;
  }
  assert.ok(n >= 25);
  assert.throws(() => response.parseResponse('gemini', enc.encode(readFileSync(join(root, 'tests/response/gemini/error_body.json'), 'utf8'))), (e) => e.payload.code === 'rate-limited');
  const busy = response.providerError('anthropic', 529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', undefined);
  assert.deepEqual([busy.class, busy.code], ['unavailable', 'overloaded']);
  const policy = response.defaultRetryPolicy();
  assert.equal(response.retryDelay(busy, 0, 0, policy), 250n);
  assert.equal(response.retryDelay(busy, 2, 0, policy), undefined);
  const t = response.requestTarget('openai-responses', { stream: true, apiKey: 'k', browser: false });
  assert.equal(t.url, 'https://api.openai.com/v1/responses');
  assert.deepEqual(t.headers.find(([k]) => k === 'authorization'), ['authorization', 'Bearer k']);
});

test('the event stream resources in jco: every recorded response written and read back gives the same events and turn; a cut one StreamTruncated', () => {
  const enc = new TextEncoder();
  let n = 0;
  for (const c of responseCases()) {
    const p = new response.ResponseParser(c.provider);
    const w = new response.EventStreamWriter(c.provider);
    let wire = w.open();
    const events = JSON.parse(p.push(enc.encode(c.body)));
    const closing = JSON.parse(p.end());
    wire += w.events(JSON.stringify(events)) + w.events(JSON.stringify(closing));
    const turn = p.finish();
    const err = p.firstError();
    wire += err && err.code !== 'invalid-tool-input' ? w.fail(err, turn) : w.close(turn);
    assert.equal(w.close(turn), '', 'nothing after the turn');
    const bytes = enc.encode(wire);
    const r = new response.EventStreamReader();
    const got = [];
    for (let i = 0; i < bytes.length; i += 7) got.push(...JSON.parse(r.push(bytes.subarray(i, i + 7))));
    got.push(...JSON.parse(r.end()));
    assert.deepEqual(got, [...events, ...closing], c.name);
    assert.deepEqual(JSON.parse(r.finish()), JSON.parse(turn), c.name);
    assert.equal(r.firstError()?.code, err?.code, c.name);
    assert.equal(r.provider(), c.provider);
    assert.equal(r.lastEventId(), String(events.length + closing.length + 1), c.name);
    n++;
  }
  assert.ok(n >= 40);
  // Cut before the turn: stream-truncated, the text so far kept.
  const w = new response.EventStreamWriter('gemini');
  const wire = w.open() + w.events(JSON.stringify([{ type: 'text-delta', part: 0, text: 'so far' }]));
  const r = new response.EventStreamReader();
  r.push(enc.encode(wire));
  const end = JSON.parse(r.end());
  assert.deepEqual(end.map((e) => e.type), ['error', 'finish']);
  assert.equal(r.firstError().code, 'stream-truncated');
  assert.equal(JSON.parse(r.finish()).parts[0].text, 'so far');
  assert.equal(r.lastEventId(), '1');
  // A failure before any event: the stream's error (not one of its events), then a turn naming it.
  const f = new response.EventStreamWriter('anthropic');
  const failed = f.fail({ class: 'refused', code: 'authentication-failed', message: 'the key was refused', details: '{"status":401}' }, undefined);
  const fr = new response.EventStreamReader();
  const evs = JSON.parse(fr.push(enc.encode(failed)));
  assert.deepEqual(evs, []);
  assert.equal(JSON.parse(fr.finish()).metadata.error.code, 'AuthenticationFailed');
  assert.deepEqual([fr.firstError().code, fr.firstError().message, JSON.parse(fr.firstError().details)], ['authentication-failed', 'the key was refused', { status: 401 }]);
  // What is not a list of events is the error variant.
  assert.throws(() => new response.EventStreamWriter('gemini').events('[{"part":1}]'), (e) => e.payload.code === 'invalid-options');
});

test('the event stream log in jco: every recorded response, its connection broken at several places, picked up from the log: each event once, the same turn', () => {
  const enc = new TextEncoder();
  let runs = 0;
  for (const c of responseCases()) {
    const p = new response.ResponseParser(c.provider);
    const w = new response.EventStreamWriter(c.provider);
    const events = [...JSON.parse(p.push(enc.encode(c.body))), ...JSON.parse(p.end())];
    const turn = p.finish();
    const err = p.firstError();
    const wire = w.open() + w.events(JSON.stringify(events)) + (err && err.code !== 'invalid-tool-input' ? w.fail(err, turn) : w.close(turn));
    for (const cut of [0, 5, Math.floor(wire.length / 2), wire.length - 3]) {
      const log = new response.EventStreamLog();
      const half = Math.max(cut, Math.floor((wire.length * 3) / 4));
      log.push(wire.slice(0, half));
      const r = new response.EventStreamReader();
      const got = [...JSON.parse(r.push(enc.encode(wire.slice(0, cut))))];
      r.reconnect();
      let [text, at] = log.since(r.lastEventId());
      got.push(...JSON.parse(r.push(enc.encode(text))));
      log.push(wire.slice(half));
      assert.equal(log.finished(), true, c.name);
      [text, at] = log.tail(at);
      got.push(...JSON.parse(r.push(enc.encode(text))));
      assert.equal(r.complete(), true, c.name);
      got.push(...JSON.parse(r.end()));
      assert.deepEqual(got, events, `${c.name} broken at ${cut}`);
      assert.deepEqual(JSON.parse(r.finish()), JSON.parse(turn), `${c.name} broken at ${cut}`);
      runs++;
    }
  }
  assert.ok(runs >= 160);
});

function resolved(table) {
  return Object.entries(table)
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([part, a]) => {
      let content;
      if ('text' in a) content = { tag: 'text', val: a.text };
      else if ('bytes' in a) content = { tag: 'bytes', val: { data: new Uint8Array(Buffer.from(a.bytes, 'base64')), mime: a.mime } };
      else if ('payload' in a) content = { tag: 'payload', val: JSON.stringify(a.payload) };
      else if ('error' in a) content = { tag: 'failed', val: a.error };
      else content = { tag: 'missing' };
      return { part: Number(part), content };
    });
}

/** The settings of a case's options: every field that is not one of the record's own. */
function settingsJson(o) {
  const { provider, system, tools, capabilities, cache, limits, ...settings } = o;
  return Object.keys(settings).length ? JSON.stringify(settings) : undefined;
}

function call(c) {
  const o = c.options;
  return lowering.lower(JSON.stringify(c.message), {
    provider: c.provider,
    system: o.system,
    tools: o.tools && JSON.stringify(o.tools),
    capabilities: o.capabilities && JSON.stringify(o.capabilities),
    settings: settingsJson(o),
    resolved: resolved(c.resolve),
  });
}

test('lower-many and inspect in jco: per-message results and answers, the three views', () => {
  const ref = { type: 'file-ref', ref: { path: 'a.txt' } };
  const msgs = JSON.stringify([
    { role: 'user', parts: [{ type: 'text', text: 'one' }] },
    { role: 'user', parts: [{ type: 'text', text: 'see' }, ref] },
    { role: 'user', parts: [] },
  ]);
  const out = wrap(() => lowering.lowerMany(msgs, { provider: 'anthropic', resolved: [] }, [{ turn: 1, resolved: [{ part: 1, content: { tag: 'text', val: 'FILE TEXT' } }] }]));
  assert.equal(out.length, 3);
  assert.match(out[0].val.body, /"one"/);
  assert.match(out[1].val.body, /FILE TEXT/);
  assert.equal(out[2].tag, 'err');
  assert.deepEqual([out[2].val.class, out[2].val.code], ['invalid', 'empty-message']);
  // The same bodies as lowering one by one.
  assert.equal(out[0].val.body, lowering.lower(JSON.stringify(JSON.parse(msgs)[0]), { provider: 'anthropic', resolved: [] }).body);
  assert.throws(() => lowering.lowerMany(msgs, { provider: 'anthropic', resolved: [{ part: 0, content: { tag: 'missing' } }] }, []), (e) => e.payload.code === 'invalid-options');
  assert.throws(() => lowering.lowerMany('{}', { provider: 'anthropic', resolved: [] }, []), (e) => e.payload.code === 'invalid-message');
  const msg = JSON.stringify({ role: 'user', parts: [{ type: 'text', text: 'look at ' }, ref] });
  const v = JSON.parse(wrap(() => compositor.inspect(msg, { provider: 'openai-chat', resolved: [{ part: 1, content: { tag: 'text', val: 'hello' } }] })));
  assert.deepEqual(v.user.map((c) => [c.type, c.label]), [['text', 'look at '], ['file-ref', 'a.txt']]);
  assert.equal(v.persisted.parts[1].ref.path, 'a.txt');
  assert.match(JSON.stringify(v.model.body), /hello/);
  const empty = JSON.parse(wrap(() => compositor.inspect(JSON.stringify({ role: 'user', parts: [] }), { provider: 'anthropic', resolved: [] })));
  assert.equal(empty.model.error.code, 'EmptyMessage');
});

test('limits travel in the WIT options records (jco)', () => {
  const msg = JSON.stringify({ role: 'user', parts: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] });
  assert.throws(() => lowering.lower(msg, { provider: 'anthropic', resolved: [], limits: '{"max_parts":1}' }), (e) => e.payload.code === 'limit-exceeded');
  assert.match(lowering.lower(msg, { provider: 'anthropic', resolved: [] }).body, /"b"/);
  assert.throws(() => lowering.lowerConversation(`[${msg},${msg}]`, { provider: 'gemini', limits: '{"max_turns":1}' }, []), (e) => e.payload.code === 'limit-exceeded');
});

test('every shared case lowers in jco to the recorded body', () => {
  for (const c of successCases()) {
    const out = call(c);
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(JSON.parse(out.report), c.expected.report);
  }
});

test('errors are the WIT error variant with the recorded message and details', () => {
  const kebab = (code) => code.replace(/[A-Z]/g, (m, i) => (i ? '-' : '') + m.toLowerCase());
  for (const c of errorCases()) {
    if (c.expected === 'ok') {
      assert.ok(call(c).body);
      continue;
    }
    assert.throws(
      () => call(c),
      (e) => {
        assert.equal(e.payload.code, kebab(c.expected.code), `${c.name} / ${c.provider}`);
        assert.equal(e.payload.message, c.expected.message);
        assert.deepEqual(JSON.parse(e.payload.details), c.expected.details);
        return true;
      },
    );
  }
  assert.equal(call({ message: { parts: [{ type: 'text', text: 'alive' }] }, provider: 'anthropic', options: {}, resolve: {} }).body,
    '{"messages":[{"role":"user","content":[{"type":"text","text":"alive"}]}]}');
});

/** A WIT error as the JS face's error shape (`code` in PascalCase). */
function jsError(e) {
  if (!e || !e.payload) return e;
  const code = e.payload.code.replace(/(^|-)([a-z])/g, (_, __, c) => c.toUpperCase());
  const err = new Error(e.payload.message);
  err.code = code;
  err.details = JSON.parse(e.payload.details);
  return err;
}
const wrap = (f) => {
  try {
    return f();
  } catch (e) {
    throw jsError(e);
  }
};

/**
 * The package's compositor API over the component: the same words (CommandCatalog,
 * parseInput, openMessageStore, submit, lower), so the one conformance suite runs on the
 * component's key-value backend too. Rows are read straight from the jco bucket.
 */
let bucketCount = 0;
function componentApi() {
  class CommandCatalog {
    commands = [];
    mentions = [];
    register(e) {
      this.commands.push(JSON.stringify(e));
    }
    wit() {
      return { builtins: true, commands: this.commands, mentions: this.mentions };
    }
  }
  class Store {
    constructor() {
      this.bucketName = `conformance-${bucketCount++}`;
      this.res = wrap(() => compositor.MessageStore.open(this.bucketName));
      const map = buckets.get(this.bucketName);
      const dec = new TextDecoder();
      const enc = new TextEncoder();
      this.__backend = {
        async scan(table, prefix) {
          const full = `${table}:${prefix}`;
          return [...map.keys()].filter((k) => k.startsWith(full)).sort().map((k) => [k.slice(table.length + 1), dec.decode(map.get(k))]);
        },
        async commitAfterRead(_reads, build) {
          for (const op of build([])) map.set(`${op.table}:${op.key}`, enc.encode(op.value));
        },
      };
    }
    async get(id) {
      return JSON.parse(wrap(() => this.res.get(id)));
    }
    async history(session = 'default') {
      return JSON.parse(wrap(() => this.res.history(session)));
    }
    async list(session = 'default') {
      return JSON.parse(wrap(() => this.res.list(session)));
    }
    async page(session = 'default', { of = 'thread', page, pageSize = 100 } = {}) {
      return JSON.parse(wrap(() => this.res.page(of, session, page === undefined ? undefined : BigInt(page), BigInt(pageSize))));
    }
    async blob(id) {
      const b = wrap(() => this.res.blob(id));
      return b === undefined ? null : JSON.parse(b);
    }
    close() {}
  }
  const answerOf = async (q, { mentions, resolve }) => {
    try {
      if (q.type === 'mention') return mentions?.[q.kind] ? await mentions[q.kind](q.target) : undefined;
      return resolve ? await resolve(q) : undefined;
    } catch (e) {
      return { error: String(e.message ?? e) };
    }
  };
  return {
    CommandCatalog,
    parseInput: (text, { catalog } = {}) => JSON.parse(wrap(() => compositor.parseInput(text, (catalog ?? new CommandCatalog()).wit()))),
    openMessageStore: async () => new Store(),
    async submit(message, { store, catalog, resolve, mentions, now, limits, ...options }) {
      const cat = (catalog ?? new CommandCatalog()).wit();
      const msg = JSON.stringify(message);
      // The JS options as the WIT options JSON takes them: the clock read once, the limits in
      // the core's spelling.
      const wire = limits && Object.fromEntries(Object.entries(limits).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
      const opts = JSON.stringify({ ...options, ...(now ? { now: now() } : {}), ...(wire ? { limits: wire } : {}) });
      let step = wrap(() => store.res.submit(msg, cat, opts, undefined));
      if (step.tag === 'needs') {
        const answers = [];
        for (const q of JSON.parse(step.val)) {
          const v = await answerOf(q, { mentions, resolve });
          if (v !== undefined && v !== null) answers.push({ part: q.part, value: JSON.stringify(v) });
        }
        step = wrap(() => store.res.submit(msg, cat, opts, answers));
      }
      assert.equal(step.tag, 'done');
      return JSON.parse(step.val);
    },
    /** Lowering with the store's blobs and the resolver's files, through the component. */
    lowerAsync(message, options) {
      return this.lower(message, options);
    },
    async lower(message, { provider, store, resolve }) {
      // The component plans what to ask (resolve-requests); the host only answers.
      const resolvedParts = [];
      const json = JSON.stringify(message);
      for (const r of wrap(() => lowering.resolveRequests(json))) {
        const request = JSON.parse(r.request);
        assert.equal(request.type, r.kind);
        assert.equal(request.part, r.part);
        if (r.kind === 'blob') {
          const b = await store.blob(request.content_id);
          if (b) resolvedParts.push({ part: r.part, content: { tag: 'bytes', val: { data: new Uint8Array(Buffer.from(b.data, 'base64')), mime: b.mime } } });
        } else if (r.kind === 'file' && resolve) {
          const t = await resolve(request);
          if (typeof t === 'string') resolvedParts.push({ part: r.part, content: { tag: 'text', val: t } });
        }
      }
      const body = wrap(() => lowering.lower(json, { provider, resolved: resolvedParts })).body;
      return { body, json: () => JSON.parse(body) };
    },
  };
}

test('conformance: the wasi:keyvalue backend of the component (jco)', async () => {
  const results = await conformance(componentApi(), () => componentApi().openMessageStore(), v1);
  assert.ok(results.length >= 10);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('the component lowers a stored message itself (blobs read back from the bucket)', async () => {
  const api = componentApi();
  const store = await api.openMessageStore();
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const r = await api.submit({ role: 'user', parts: [...api.parseInput('/search cats'), { type: 'file-attachment', name: 'd.png', data: png }] }, { store, limits: { blobThreshold: 1 } });
  const out = store.res.lower(r.id, { provider: 'gemini', resolved: [] });
  assert.equal(out.body, '{"contents":[{"role":"user","parts":[{"text":"cats"},{"inlineData":{"mimeType":"image/png","data":"' + png + '"}}]}]}');
  assert.deepEqual(JSON.parse(compositor.complete('/se', { builtins: true, commands: [], mentions: [] }, 5)).map((x) => x.insert), ['/search']);
});

/**
 * The package's skill API over the component (importPackage, importSkillMd, exportSkillMd,
 * openSkillStore with the seed's repository operations), so the skill conformance suite
 * runs on the component's key-value backend too.
 */
function skillApi() {
  const NOW = '2026-11-22T08:00:00.000Z';
  const dec = new TextDecoder();
  const bytes = (b64) => new Uint8Array(Buffer.from(b64, 'base64'));
  const fileList = (files) =>
    Object.entries(files ?? {}).map(([path, c]) => (typeof c === 'string' ? { path, content: c, base64: false } : { path, content: Buffer.from(c).toString('base64'), base64: true }));
  class Store {
    constructor() {
      this.bucketName = `skills-${bucketCount++}`;
      this.res = wrap(() => skills.SkillStore.open(this.bucketName));
      const map = buckets.get(this.bucketName);
      this.__backend = {
        async scan(table, prefix) {
          const full = `${table}:${prefix}`;
          return [...map.keys()].filter((k) => k.startsWith(full)).sort().map((k) => [k.slice(table.length + 1), dec.decode(map.get(k))]);
        },
      };
    }
    #json(f) {
      const v = wrap(f);
      return v === undefined ? null : JSON.parse(v);
    }
    async list(filter) {
      return filter === undefined ? this.#json(() => this.res.list()) : this.#json(() => this.res.listFiltered(JSON.stringify(filter)));
    }
    async get(id) {
      return this.#json(() => this.res.get(id));
    }
    async getByName(n) {
      return this.#json(() => this.res.getByName(n));
    }
    async getArtifacts(id, kinds = []) {
      return this.#json(() => this.res.getArtifacts(id, kinds));
    }
    async getArtifact(id) {
      return this.#json(() => this.res.getArtifact(id));
    }
    async create(s) {
      return this.#json(() => this.res.create(JSON.stringify(s), NOW));
    }
    async put(s) {
      return this.#json(() => this.res.put(JSON.stringify(s), NOW));
    }
    async update(s) {
      return this.#json(() => this.res.update(JSON.stringify(s), NOW));
    }
    async delete(id) {
      return this.#json(() => this.res.delete(id));
    }
    async addArtifact(a) {
      return this.#json(() => this.res.addArtifact(JSON.stringify(a), NOW));
    }
    async updateArtifact(a) {
      return this.#json(() => this.res.updateArtifact(JSON.stringify(a), NOW));
    }
    async deleteArtifact(id) {
      return this.#json(() => this.res.deleteArtifact(id, NOW));
    }
    async seed(doc) {
      return this.#json(() => this.res.seed(typeof doc === 'string' ? doc : JSON.stringify(doc), NOW));
    }
    async skillSpecs() {
      return this.#json(() => this.res.skillSpecs());
    }
    close() {}
  }
  // list(filter) is the component's list-filtered (the core's rule, no filter here).
  const open = async () => new Store();
  return {
    open,
    // A WASI host reads the package's seed file and hands its text to the component.
    systemSkills: async () => JSON.parse(readFileSync(join(root, 'pkg/system-skills.json'), 'utf8')),
    seedSkillSpecs: (doc) => JSON.parse(wrap(() => skills.seedSkillSpecs(typeof doc === 'string' ? doc : JSON.stringify(doc)))),
    // The JS clock (epoch milliseconds) as the ISO text the WIT functions take.
    importPackage: (pkg, { now = () => Date.parse(NOW) } = {}) => JSON.parse(wrap(() => skills.importPackage(typeof pkg === 'string' ? pkg : JSON.stringify(pkg), new Date(now()).toISOString()))),
    importSkillMd: (text, files, { dir, now = () => Date.parse(NOW) } = {}) => JSON.parse(wrap(() => skills.importSkillMd(text, fileList(files), dir, new Date(now()).toISOString()))),
    exportSkillMd(skill) {
      const out = JSON.parse(wrap(() => skills.exportSkillMd(JSON.stringify(skill))));
      return { ...out, files: Object.fromEntries(out.files.map((f) => [f.path, f.base64 ? bytes(f.content) : f.content])) };
    },
  };
}

test('skill conformance: the wasi:keyvalue backend of the component (jco)', async () => {
  const api = skillApi();
  const seed = readFileSync(join(root, 'tests/skills/packages/consistency-checker.json'), 'utf8');
  const results = await skillConformance(api, api.open, seed);
  assert.ok(results.length >= 11);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('the skill catalog in jco: scopes, phase-1 match, sync applied from a host-fetched body', () => {
  const NOW = '2026-11-22T08:00:00Z';
  const seed = readFileSync(join(root, 'tests/skills/packages/consistency-checker.json'), 'utf8');
  const ws = wrap(() => skills.SkillStore.open('cat-ws'));
  wrap(() => ws.create(JSON.stringify({ name: 'Consistency Checker', description: 'my fork', trigger_phrases: ['check my fork'] }), NOW));
  const cat = wrap(() => skills.SkillCatalog.open('cat-ws', 'cat-acc'));
  assert.equal(wrap(() => cat.syncEtag('https://market.test/catalog.json')), undefined);
  const body = JSON.stringify({ skills: [{ ...JSON.parse(seed), etag: '"a"' }, { name: 'Summarize', description: 'Summarizes.', etag: '"b"' }] });
  const report = JSON.parse(wrap(() => cat.applySync('https://market.test/catalog.json', body, '"v1"', NOW)));
  assert.deepEqual([report.status, report.upserted, report.shadowed], ['updated', ['Consistency Checker', 'Summarize'], ['Consistency Checker']]);
  assert.equal(wrap(() => cat.syncEtag('https://market.test/catalog.json')), '"v1"');
  const list = JSON.parse(wrap(() => cat.list()));
  assert.deepEqual(list.map((s) => [s.name, s.scope]), [['Consistency Checker', 'workspace'], ['Summarize', 'account']]);
  assert.equal(list[0].overrides.source, 'system');
  // The workspace fork hides the account copy (and its trigger phrases) by name.
  assert.deepEqual(JSON.parse(wrap(() => cat.match('are there any contradictions?', 3))), []);
  const r = JSON.parse(wrap(() => cat.match('please check my fork', 3)));
  assert.deepEqual([r[0].name, r[0].scope, r[0].tier], ['Consistency Checker', 'workspace', 'exact']);
  assert.deepEqual(JSON.parse(wrap(() => cat.match('summarize', 3))).map((x) => [x.name, x.scope]), [['Summarize', 'account']]);
  assert.equal(JSON.parse(wrap(() => cat.load('Consistency Checker', ['description']))).length, 0, 'the workspace fork has no artifacts');
  // The orchestrator decision: an exact hit activates, with the run order of its artifacts.
  const d = JSON.parse(wrap(() => cat.decide('please check my fork', 3, '')));
  assert.deepEqual([d.action, d.reason, d.skills[0].name, d.skills[0].artifacts], ['activate', 'exact', 'Consistency Checker', []]);
  const recs = wrap(() => cat.match('summarize', 3));
  assert.deepEqual(JSON.parse(wrap(() => skills.decide('summarize', recs, ''))).action, 'activate');
  assert.equal(JSON.parse(wrap(() => skills.decide('zebra', '[]', ''))).reason, 'no-match');
  assert.throws(() => skills.decide('x', recs, '{"max_skills": 0}'), (e) => e.payload.code === 'invalid-options');
  // A disabled skill (metadata.enabled: false) is listed but never matched.
  wrap(() => ws.create(JSON.stringify({ name: 'Quiet Checker', description: 'd', trigger_phrases: ['quietly check it'], metadata: { enabled: false } }), NOW));
  wrap(() => cat.refresh());
  assert.ok(JSON.parse(wrap(() => cat.list())).some((s) => s.name === 'Quiet Checker'));
  assert.ok(!JSON.parse(wrap(() => cat.match('quietly check it', 5))).some((r) => r.name === 'Quiet Checker'));
  // A malformed body is the sync-failed variant; nothing changes.
  assert.throws(() => wrap(() => cat.applySync('https://market.test/catalog.json', '<html>', '"v2"', NOW)), (e) => e.code === 'SyncFailed');
  assert.equal(wrap(() => cat.syncEtag('https://market.test/catalog.json')), '"v1"');
  // An invalid package is the invalid-skill variant with every problem.
  assert.throws(() => wrap(() => skills.importPackage('{"name":"x","version":"1"}', NOW)), (e) => e.code === 'InvalidSkill' && e.details.problems.length === 2);
});

test('the Skill Composer in jco: every fixture composes to the Rust snapshot, errors are WIT variants', () => {
  const fx = composerFixtures();
  const kebab = (code) => code.replace(/[A-Z]/g, (m, i) => (i ? '-' : '') + m.toLowerCase());
  let n = 0;
  for (const [name, expected] of Object.entries(fx.expected)) {
    const req = JSON.stringify(fx.requests[name]);
    if (expected.error) {
      assert.throws(
        () => composer.compose(req),
        (e) => {
          assert.equal(e.payload.code, kebab(expected.error.code), name);
          assert.equal(e.payload.message, expected.error.message, name);
          assert.deepEqual(JSON.parse(e.payload.details), expected.error.details, name);
          return true;
        },
      );
    } else {
      const step = composer.compose(req);
      if (expected.needs_shape) {
        assert.equal(step.tag, 'needs-shape');
        assert.deepEqual(JSON.parse(step.val), expected.needs_shape);
      } else {
        assert.equal(step.tag, 'composed', name);
        assert.deepEqual(JSON.parse(step.val), expected.composition, name);
      }
    }
    n++;
  }
  assert.ok(n >= 15);
  // The step protocol of the planner path: the host answers and composes again.
  const q = composer.compose(JSON.stringify(fx.requests['planner-needs-shape']));
  assert.equal(q.tag, 'needs-shape');
  const answered = { ...fx.requests['planner-needs-shape'], delegated_shape: { kind: 'staged', stages: [{ name: 'search', tools: ['web_search'] }, { name: 'write', tools: ['write_doc'] }] } };
  const c = JSON.parse(composer.compose(JSON.stringify(answered)).val);
  assert.deepEqual([c.subgraph.kind, c.subgraph.decided_by], ['staged', 'model']);
  // A runaway template ends with the variant, and the instance keeps composing.
  assert.throws(() => composer.compose(JSON.stringify(fx.requests['runaway-template'])), (e) => e.payload.code === 'malformed-template' && JSON.parse(e.payload.details).reason === 'fuel');
  assert.equal(composer.compose(JSON.stringify(fx.requests['release-notes-developers'])).tag, 'composed');
});

test('a prepared skill in jco: the same steps as compose, byte for byte; a package that does not validate fails when prepared', () => {
  const fx = composerFixtures();
  const outcome = (f) => {
    try {
      const step = f();
      return JSON.stringify([step.tag, step.val]);
    } catch (e) {
      return JSON.stringify([e.payload.class, e.payload.code, e.payload.message, e.payload.details]);
    }
  };
  let prepared = 0;
  let refused = 0;
  for (const name of Object.keys(fx.expected)) {
    const { skill_package, ...invocation } = fx.requests[name];
    let p;
    try {
      p = composer.PreparedSkill.prepare(JSON.stringify(skill_package));
    } catch (e) {
      assert.throws(() => composer.compose(JSON.stringify(fx.requests[name])), (c) => c.payload.class === e.payload.class && c.payload.code === e.payload.code && c.payload.message === e.payload.message, name);
      refused++;
      continue;
    }
    assert.equal(p.name(), skill_package.name, name);
    const want = outcome(() => composer.compose(JSON.stringify(fx.requests[name])));
    assert.equal(outcome(() => p.compose(JSON.stringify(invocation))), want, name);
    assert.equal(outcome(() => p.compose(JSON.stringify(invocation))), want, `${name}, again`);
    prepared++;
  }
  assert.ok(prepared >= 12 && refused >= 1, `${prepared} prepared, ${refused} refused`);
  const p = composer.PreparedSkill.prepare(JSON.stringify(fx.requests['release-notes-developers'].skill_package));
  assert.throws(() => p.compose(JSON.stringify(fx.requests['release-notes-developers'])), (e) => e.payload.code === 'invalid-request' && /without `skill_package`/.test(e.payload.message));
  assert.throws(() => p.compose('['), (e) => e.payload.code === 'invalid-request');
  assert.throws(() => composer.PreparedSkill.prepare('{'), (e) => e.payload.code === 'invalid-request');
});

test('the composer in jco: lowering a composition, nested requests, the authoring tools, dispatch, assertions, traces, invocation records', async () => {
  const fx = composerFixtures();
  const NOW = '2026-11-22T10:00:00Z';
  const comp = fx.expected['release-notes-developers'].composition;
  // The same body as the npm package gives.
  const viaJs = await plc.lowerComposition(comp, { provider: 'anthropic' });
  const viaWit = composer.lowerComposition(JSON.stringify(comp), { provider: 'anthropic', resolved: [] });
  assert.equal(viaWit.body, viaJs.body);
  // With the caller's system text and tools: merged by the core, the same in both faces.
  const extra = [{ name: 'mine', description: 'm', inputSchema: { type: 'object', properties: {} } }];
  const jsMerged = await plc.lowerComposition(comp, { provider: 'openai-chat', system: 'House rules.', tools: extra });
  const witMerged = composer.lowerComposition(JSON.stringify(comp), { provider: 'openai-chat', system: 'House rules.', tools: JSON.stringify(extra), resolved: [] });
  assert.equal(witMerged.body, jsMerged.body);
  // A model request (the shape question, a template's call) lowered for a provider, and the
  // answer a turn gives: the rule an Adapter from createAdapter() follows in JS.
  const mreq = { purpose: 'shape', system: 'Answer in JSON.', prompt: 'Which stages?', schema: { type: 'object', properties: { stages: { type: 'array' } } } };
  const viaWitReq = composer.lowerModelRequest(JSON.stringify(mreq), { provider: 'openai-chat', settings: JSON.stringify({ model: 'gpt-4o' }), resolved: [] });
  const viaJsReq = plc.lower({ role: 'user', parts: [{ type: 'text', text: mreq.prompt }] }, { provider: 'openai-chat', model: 'gpt-4o', system: mreq.system, output: { schema: mreq.schema } });
  assert.equal(viaWitReq.body, viaJsReq.body);
  assert.deepEqual(JSON.parse(composer.modelAnswer(JSON.stringify({ role: 'assistant', parts: [{ type: 'text', text: '{}' }] }), 'gpt-4o')), { text: '{}', model: 'gpt-4o' });
  // Which artifacts a whole-skill run executes: the core's order, in both faces.
  const seedSkill = JSON.stringify(plc.importPackage(readFileSync(join(root, 'tests/skills/packages/consistency-checker.json'), 'utf8'), { now: () => Date.parse(NOW) }).skill);
  assert.deepEqual(composer.runOrder(seedSkill), ['Overview', 'Cross-Reference Script', 'DSPy Checker']);
  const merged = JSON.parse(jsMerged.body);
  assert.match(merged.messages[0].content, /^House rules\.\n\n/);
  assert.equal(merged.tools.at(-1).function.name, 'mine');
  const nested = JSON.parse(composer.nestedRequest(JSON.stringify(fx.requests['release-notes-developers']), JSON.stringify({ name: 'Sub', description: 'x', metadata: { framing: 'Sub.', tool_surface: ['get_pr', 'delete_repo'] } }), '[{"name":"get_pr"},{"name":"delete_repo"}]', 'look', '{}'));
  assert.deepEqual(nested.available_tools.map((t) => t.name), ['get_pr']);
  // Authoring tools over a wasi:keyvalue store.
  const store = wrap(() => skills.SkillStore.open('composer-authoring'));
  const app = JSON.stringify(fx.expected['application-skill-writer'].composition);
  const auth = JSON.stringify(fx.expected['authoring-skill-writer'].composition);
  const create = JSON.stringify({ name: 'Timeline Check', description: 'Checks timelines', metadata: { framing: 'Check it.' } });
  assert.equal(JSON.parse(composer.authoringTools()).length, 4);
  assert.throws(() => wrap(() => store.callAuthoringTool('create_skill', create, app, NOW)), (e) => e.code === 'UnknownTool');
  assert.equal(JSON.parse(wrap(() => store.callAuthoringTool('create_skill', create, auth, NOW))).name, 'Timeline Check');
  wrap(() => store.callAuthoringTool('add_artifact', JSON.stringify({ skill: 'Timeline Check', kind: 'description', name: 'About', content: 'x' }), auth, NOW));
  assert.deepEqual(JSON.parse(wrap(() => store.callAuthoringTool('list_skills', '{}', auth, NOW))).map((s) => s.name), ['Timeline Check']);
  // Dispatch: routes, the fallback, the missing executors.
  const tl = wrap(() => skills.SkillStore.open('composer-dispatch'));
  wrap(() => tl.create(JSON.stringify(fx.packages['full-contract']), NOW));
  const summary = JSON.stringify(JSON.parse(wrap(() => tl.list()))[0]);
  const ref = (name, kind = '') => JSON.parse(wrap(() => composer.pickArtifact(summary, name, kind, '')));
  const dspyRef = ref('DSPy Auditor');
  assert.throws(() => composer.pickArtifact(summary, 'Nope', '', ''), (e) => e.payload.code === 'not-found');
  // Optimisation: the executor's manifest, the stamp, staleness.
  const dspyArt = wrap(() => tl.getArtifact(dspyRef.id));
  const m26 = JSON.stringify({ version: 'dspy-2.6' });
  assert.deepEqual(JSON.parse(wrap(() => composer.dspyStale(JSON.stringify([JSON.parse(dspyArt)]), m26))).map((x) => x.reason), ['unstamped']);
  const call = JSON.parse(wrap(() => composer.dspyOptimizeCall(dspyArt, '', '')));
  assert.deepEqual([call.template_id, call.training_data], ['chain_of_thought', []]);
  const stamped = wrap(() => composer.dspyStamp(dspyArt, '{"demos":[]}', m26, 0, NOW));
  wrap(() => tl.updateArtifact(stamped, NOW));
  const restored = JSON.parse(wrap(() => tl.getArtifact(dspyRef.id)));
  assert.deepEqual([restored.state_blob, restored.metadata.optimized.executor_version], ['{"demos":[]}', 'dspy-2.6']);
  assert.deepEqual(JSON.parse(wrap(() => composer.dspyStale(JSON.stringify([restored]), m26))), []);
  assert.deepEqual(JSON.parse(wrap(() => composer.dspyStale(JSON.stringify([restored]), JSON.stringify({ version: 'dspy-3' })))).map((x) => x.optimized_with), ['dspy-2.6']);
  assert.throws(() => composer.dspyStamp(dspyArt, '{}', '{}', 0, NOW), (e) => e.payload.code === 'adapter-failed');
  const fbRef = ref('Audit Prompt', 'prompt_template');
  const art = wrap(() => tl.getArtifact(fbRef.id));
  // Traces per bucket, JSON lines; invocation records beside the turn.
  const row = JSON.parse(wrap(() => tl.recordTrace(JSON.stringify({ session_id: 's', skill_id: JSON.parse(art).skill_id, artifact_id: fbRef.id, artifact_kind: 'prompt_template', started_at: NOW, input_tokens: 10, output_tokens: 5, pricing: { input_per_mtok: 1, output_per_mtok: 2 } }))));
  assert.equal(row.estimated_cost, 0.00002);
  assert.equal(wrap(() => tl.exportTraces('s', undefined, undefined)).trimEnd().split('\n').length, 1);
  assert.equal(row.created_at, NOW, 'created_at defaults to the start when nothing completed');
  // Trace pages over wasi:keyvalue in jco: a page, its cursor, the end.
  for (let i = 1; i <= 4; i++) wrap(() => tl.recordTrace(JSON.stringify({ session_id: 's', skill_id: 'k', artifact_id: 'a', artifact_kind: 'prompt_template', started_at: `2026-11-23T00:00:0${i}Z` })));
  const p1 = JSON.parse(wrap(() => tl.tracePage('s', undefined, undefined, undefined, 3)));
  const p2 = JSON.parse(wrap(() => tl.tracePage('s', undefined, undefined, p1.next, 3)));
  assert.deepEqual([p1.items.length, p2.items.length, p2.next], [3, 2, null]);
  assert.deepEqual([...p1.items, ...p2.items].map((r) => r.id), wrap(() => tl.exportTraces('s', undefined, undefined)).trimEnd().split('\n').map((l) => JSON.parse(l).id));
  assert.throws(() => tl.tracePage(undefined, undefined, undefined, undefined, 0), (e) => e.payload.code === 'invalid-options');
  // No output was recorded: no DSPy example.
  assert.equal(wrap(() => tl.exportDspyDataset('s', undefined, undefined)), '');
  assert.equal(wrap(() => store.exportTraces(undefined, undefined, undefined)), '');
  // Replay: the record recomposes byte-identically; an edited template is named.
  const rnReq = fx.requests['release-notes-memory-marks'];
  const rnComp = JSON.parse(wrap(() => composer.compose(JSON.stringify(rnReq))).val);
  const rnSkill = JSON.stringify(rnReq.skill_package);
  const same = JSON.parse(wrap(() => composer.verifyInvocation(JSON.stringify(rnComp.invocation_record), rnSkill, JSON.stringify(rnReq.memory_context))));
  assert.deepEqual([same.identical, same.changes], [true, []]);
  const edited = { ...rnReq.skill_package, artifacts: rnReq.skill_package.artifacts.map((a) => (a.name === 'Notes Framing' ? { ...a, content: `${a.content}\nBe brief.` } : a)) };
  const diff = JSON.parse(wrap(() => composer.verifyInvocation(JSON.stringify(rnComp.invocation_record), JSON.stringify(edited), '[]')));
  assert.deepEqual(diff.changes.map((c) => [c.kind, c.change]), [['template', 'modified'], ['memory', 'missing'], ['memory', 'missing']]);
  assert.throws(() => composer.verifyInvocation('{"outcome":"error"}', rnSkill, ''), (e) => e.payload.code === 'invalid-request');
  const messages = wrap(() => compositor.MessageStore.open('composer-records'));
  wrap(() => messages.recordInvocation(JSON.stringify(comp.invocation_record)));
  assert.deepEqual(JSON.parse(wrap(() => messages.invocations('thread-1'))), [comp.invocation_record]);
});

test('skill state machines in jco: validation, registries, the arbiter, the log replayed, Mermaid', () => {
  const specs = arbiterSpecs();
  const tools = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write', 'search'];
  const v = JSON.parse(arbiterApi.validateSkillSpec(JSON.stringify(specs['broken-trap']), tools));
  assert.deepEqual([v.ok, v.problems[0].code], [false, 'no-path-to-terminal']);
  // Spec files in bulk: every problem of every file, or the specs in order.
  const files = [{ path: 'skills/z.json', text: JSON.stringify(specs['build-feature']) }, { path: 'skills/a.json', text: JSON.stringify(specs['broken-trap']) }, { path: 'skills/b.json', text: '{' }];
  assert.throws(() => wrap(() => arbiterApi.loadSkillSpecs(files, tools)), (e) => e.code === 'InvalidSkill' && e.details.problems.map((p) => p.file).join() === 'skills/a.json,skills/b.json');
  assert.deepEqual(JSON.parse(wrap(() => arbiterApi.loadSkillSpecs(files.slice(0, 1), tools))).specs.map((x) => x.name), ['build_feature']);
  assert.throws(() => wrap(() => arbiterApi.SkillRegistry.build(JSON.stringify([specs['broken-unreachable']]), '[]', tools)), (e) => e.code === 'InvalidSkill');
  // The system skills come from the package's seed file, as a WASI host reads it.
  const system = wrap(() => skills.seedSkillSpecs(readFileSync(join(root, 'pkg/system-skills.json'), 'utf8')));
  const reg = arbiterApi.SkillRegistry.build(JSON.stringify([...JSON.parse(system), specs['build-feature']]), '[]', tools);
  assert.deepEqual(reg.names(), ['build_feature', 'skill-builder', 'tool-builder']);
  assert.deepEqual(reg.summary().trimEnd().split('\n').map((l) => l.split(':')[0]), ['Skills you can start', '- build_feature', '- skill-builder', '- tool-builder']);
  const a = arbiterApi.Arbiter.create(reg, 2);
  assert.equal(JSON.parse(a.start('core', 'build_feature', '{"feature":"x"}')).state, 'understand');
  const no = JSON.parse(a.propose('core', '{"type":"tool","name":"choir.fs.write"}'));
  assert.deepEqual([no.accepted, no.error.code, no.error.allowed_tools], [false, 'tool-not-allowed', ['choir.memory.query']]);
  assert.equal(JSON.parse(a.propose('core', '{"type":"transition","event":"complete"}')).state, 'plan');
  const run = JSON.parse(a.run('core'));
  assert.deepEqual(JSON.parse(a.replay(JSON.stringify(run.log))), run);
  assert.equal(JSON.parse(a.cancel('core')).status, 'cancelled');
  assert.ok(!JSON.stringify(JSON.parse(a.stepContext('core', '{}'))).includes('Apply changes to files.'));
  assert.match(arbiterApi.toMermaid(JSON.stringify(specs['build-feature']), 'plan'), /class plan current\n$/);
  // A composed staged subgraph as a spec.
  const comp = composerFixtures().expected['timeline-openai-staged'].composition;
  const staged = JSON.parse(arbiterApi.compositionSpec(JSON.stringify(comp)));
  assert.deepEqual([staged.initial_state, staged.states['stage-1'].allowed_tools], ['stage-1', ['workspace_search', 'get_page']]);
});

/**
 * The package's session and approval words over the component's `session` resource and
 * proposal functions (conversions only: the component reads and writes its own bucket), so
 * the one session suite runs on the component under jco.
 */
function sessionApi() {
  let n = 0;
  const json = (f) => JSON.parse(wrap(f));
  class Registry {
    constructor(res) {
      this.res = res;
    }
    names() {
      return this.res.names();
    }
    spec(name) {
      const s = this.res.spec(name);
      return s === undefined ? null : JSON.parse(s);
    }
  }
  const at = (now) => BigInt(now());
  class Session {
    constructor(res, now) {
      this.res = res;
      this.now = now;
    }
    async laneEvent(lane, event) {
      return wrap(() => this.res.laneEvent(lane, event, at(this.now)));
    }
    async startSkill(lane, skill, input = null) {
      return json(() => this.res.startSkill(lane, skill, JSON.stringify(input), at(this.now)));
    }
    async propose(lane, p) {
      return json(() => this.res.propose(lane, JSON.stringify(p), at(this.now)));
    }
    async cancel(lane) {
      return json(() => this.res.cancel(lane, at(this.now)));
    }
    async heartbeat() {
      wrap(() => this.res.heartbeat(at(this.now)));
    }
    async stop() {
      wrap(() => this.res.stop(at(this.now)));
    }
    stale(ms) {
      return this.res.stale(at(this.now), BigInt(ms));
    }
    hierarchy() {
      return JSON.parse(this.res.hierarchy());
    }
    log() {
      return JSON.parse(this.res.log());
    }
    lane(l) {
      return this.res.lane(l);
    }
    run(l) {
      const r = this.res.run(l);
      return r === undefined ? null : JSON.parse(r);
    }
    free() {
      this.res[Symbol.dispose]?.();
    }
  }
  return {
    typed: true,
    open: async () => ({ bucket: `sessions-${n++}`, close() {} }),
    buildSkillRegistry: (specs, { tools = [] } = {}) => new Registry(wrap(() => arbiterApi.SkillRegistry.build(JSON.stringify(specs), '[]', tools))),
    systemSkills: async () => JSON.parse(readFileSync(join(root, 'pkg/system-skills.json'), 'utf8')),
    seedSkillSpecs: (doc) => JSON.parse(wrap(() => skills.seedSkillSpecs(JSON.stringify(doc)))),
    openSession: async ({ store, registry, id, now = Date.now }) => new Session(wrap(() => arbiterApi.Session.open(registry.res, store.bucket, id, at(now), 2)), now),
    sessionMachines: () => JSON.parse(arbiterApi.sessionMachines()),
    toMermaid: (spec, current) => wrap(() => arbiterApi.toMermaid(JSON.stringify(spec), current)),
    listProposals: async (store, { status } = {}) => json(() => arbiterApi.listProposals(store.bucket, status)),
    approvalLog: async (store) => json(() => arbiterApi.approvalLog(store.bucket)),
    approveProposal: async (store, id, { registry, by, now = Date.now }) => {
      const [row, next] = wrap(() => arbiterApi.approveProposal(store.bucket, id, registry.res, by ?? '', at(now)));
      return { proposal: JSON.parse(row), registry: new Registry(next) };
    },
    rejectProposal: async (store, id, { by, reason, now = Date.now }) => ({ proposal: json(() => arbiterApi.rejectProposal(store.bucket, id, by ?? '', reason ?? '', at(now))) }),
    installApproved: async (store, registry) => new Registry(wrap(() => arbiterApi.installApproved(store.bucket, registry.res))),
  };
}

test('session conformance: the session resource and proposals of the component on wasi:keyvalue (jco)', async () => {
  const api = sessionApi();
  const results = await sessionConformance(api, arbiterSpecs(), api.open);
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

function conversationOptions(provider, o) {
  return {
    provider,
    system: o.system,
    tools: o.tools && JSON.stringify(o.tools),
    capabilities: o.capabilities && JSON.stringify(o.capabilities),
    settings: settingsJson(o),
    cache: o.cache === undefined ? undefined : JSON.stringify(o.cache),
  };
}

test('every conversation case lowers in jco to the recorded body, stateless and through the conversation resource', () => {
  for (const c of conversationCases()) {
    const answers = c.resolve.map((t, turn) => ({ turn, resolved: resolved(t ?? {}) }));
    const out = lowering.lowerConversation(JSON.stringify(c.turns), conversationOptions(c.provider, c.options), answers);
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(JSON.parse(out.report), c.expected.report);
    const conv = new lowering.Conversation(undefined);
    for (const [i, t] of c.turns.entries()) conv.append(JSON.stringify(t), resolved(c.resolve[i] ?? {}));
    assert.equal(conv.lower(conversationOptions(c.provider, c.options)).body, c.expected.body, `${c.name} / ${c.provider} (resource)`);
    assert.equal(conv.len(), c.turns.length);
  }
});

test('conversation errors are WIT variants naming turn and part; the component keeps answering', () => {
  const kebab = (code) => code.replace(/[A-Z]/g, (m, i) => (i ? '-' : '') + m.toLowerCase());
  for (const c of conversationErrors()) {
    assert.throws(
      () => lowering.lowerConversation(JSON.stringify(c.turns), conversationOptions(c.provider, c.options), []),
      (e) => {
        assert.equal(e.payload.code, kebab(c.expected.code), `${c.name} / ${c.provider}`);
        assert.equal(e.payload.message, c.expected.message);
        assert.deepEqual(JSON.parse(e.payload.details), c.expected.details);
        return true;
      },
    );
  }
  const c = conversationCases()[0];
  assert.equal(lowering.lowerConversation(JSON.stringify(c.turns), conversationOptions(c.provider, c.options), []).body, c.expected.body);
});

test('a thread in the wasi:keyvalue message store: turns appended, read back in order, lowered', () => {
  const c = conversationCases().find((x) => x.name === 'tool_round_trip' && x.provider === 'gemini');
  const store = compositor.MessageStore.open('thread-jco');
  for (const t of c.turns) store.appendTurn(JSON.stringify(t), JSON.stringify({ session: 'chat', now: 1 }));
  const thread = JSON.parse(store.thread('chat'));
  assert.deepEqual(thread.map((t) => t.role), ['user', 'assistant', 'tool', 'assistant', 'user']);
  const out = lowering.lowerConversation(JSON.stringify(thread), conversationOptions(c.provider, c.options), []);
  assert.equal(out.body, c.expected.body);
  assert.throws(() => store.appendTurn('{"role":"tool","parts":[{"type":"tool-result"}]}', '{"session":"chat"}'), (e) => e.payload.code === 'invalid-message');
  assert.equal(JSON.parse(store.thread('chat')).length, 5);
});

test('chat in jco: the view of every thread is the Rust snapshot, turn by turn too; branch plans; a branch copied with append-turns; drafts', () => {
  const cases = chatViewCases();
  assert.ok(cases.length >= 29);
  for (const c of cases) {
    assert.equal(chatApi.view(JSON.stringify(c.turns), 0), c.expected, c.name);
    // Turn by turn, as a host shows appended turns: a tool turn with the turns the last message shows.
    let shown = [];
    let tail = { start: 0, end: 0 };
    c.turns.forEach((t, i) => {
      const folds = t.role === 'tool' && tail.end === i && shown.length > 0 && c.turns[tail.start].role === 'assistant';
      if (folds) {
        const v = JSON.parse(chatApi.view(JSON.stringify(c.turns.slice(tail.start, i + 1)), tail.start));
        if (v.length === 1) {
          shown = [...shown.slice(0, -1), v[0]];
          tail.end = i + 1;
          return;
        }
        shown.push(v.at(-1));
      } else shown.push(...JSON.parse(chatApi.view(JSON.stringify([t]), i)));
      tail = { start: i, end: i + 1 };
    });
    assert.equal(JSON.stringify(shown), c.expected, `${c.name}, turn by turn`);
  }
  const thread = chatViewCases().find((c) => c.name === 'tool_round_trip').turns;
  assert.deepEqual(chatApi.branch(JSON.stringify(thread), 'chat', undefined, 'n1'), { keep: 5, session: 'chat' });
  assert.deepEqual(chatApi.branch(JSON.stringify(thread.slice(0, 4)), 'chat', undefined, 'n1'), { keep: 1, session: 'chat~n1' });
  assert.deepEqual(chatApi.branch(JSON.stringify(thread), 'chat~n1', 'turn-4', 'n2'), { keep: 4, session: 'chat~n2' });
  assert.throws(() => chatApi.branch(JSON.stringify(thread), 'chat', 'turn-1', 'n'), (e) => e.payload.code === 'invalid-request');
  assert.throws(() => chatApi.branch(JSON.stringify(thread), 'chat', 'nope', 'n'), (e) => e.payload.code === 'not-found');
  assert.throws(() => chatApi.branch(JSON.stringify(thread.slice(0, 4)), 'chat', undefined, 'a~b'), (e) => e.payload.code === 'invalid-options');
  assert.throws(() => chatApi.view('{', 0), (e) => e.payload.code === 'invalid-message');
  // The branch's copy: one write, new ids, the old session untouched.
  const store = compositor.MessageStore.open('chat-jco');
  for (const t of thread) store.appendTurn(JSON.stringify(t), JSON.stringify({ session: 'chat', now: 1 }));
  const stored = JSON.parse(store.thread('chat'));
  const plan = chatApi.branch(JSON.stringify(stored.slice(0, 4)), 'chat', undefined, 'b1');
  const copied = JSON.parse(store.appendTurns(JSON.stringify(stored.slice(0, plan.keep)), JSON.stringify({ session: plan.session })));
  assert.deepEqual(copied.ids, ['chat~b1/0000000001']);
  assert.equal(JSON.parse(store.thread('chat~b1')).length, 1);
  assert.equal(JSON.parse(store.thread('chat')).length, 5);
  assert.throws(() => store.appendTurns('[{"role":"tool","parts":[{"type":"tool-result"}]}]', '{"session":"x"}'), (e) => e.payload.code === 'invalid-message');
  assert.equal(JSON.parse(store.thread('x')).length, 0);
  // A reply whose host went away: its draft comes back cut, and stands until appended.
  assert.equal(store.draft('chat'), undefined);
  const soFar = { turn: { role: 'assistant', parts: [{ type: 'text', text: 'Hel' }, { type: 'tool-call', id: 'c9', name: 'f', input: {} }] } };
  assert.equal(store.saveDraft('chat', JSON.stringify(soFar)), true);
  const draft = JSON.parse(store.draft('chat')).turn;
  assert.deepEqual([draft.parts, draft.metadata.cut], [[{ type: 'text', text: 'Hel' }], true]);
  store.appendTurn(JSON.stringify(draft), JSON.stringify({ session: 'chat', now: 2 }));
  assert.equal(store.draft('chat'), undefined);
  assert.equal(JSON.parse(chatApi.view(store.thread('chat'), 0)).at(-1).status, 'cut');
  assert.equal(store.saveDraft('chat', '{"run":"r1"}'), true);
  assert.equal(JSON.parse(store.draft('chat')).run, 'r1');
  assert.equal(store.saveDraft('chat', '{"turn":{"role":"assistant","parts":[]}}'), false);
  store.saveDraft('chat', JSON.stringify(soFar));
  assert.equal(store.saveDraft('chat', '{}'), false); // nothing to keep: dropped
  assert.equal(store.draft('chat'), undefined);
  assert.throws(() => store.saveDraft('chat', '{'), (e) => e.payload.code === 'invalid-message');
});

test('the lowering-only world (no imports) holds conversations too', async () => {
  const out = join(root, 'tests/js/.out/component-lowering');
  execFileSync(join(root, 'node_modules/.bin/jco'), ['transpile', join(root, 'target/component/promptloom-lowering.wasm'), '-o', out, '--quiet'], { stdio: 'pipe' });
  const { lowering: only } = await import(pathToFileURL(join(out, 'promptloom-lowering.js')).href);
  for (const c of conversationCases().filter((x) => x.name === 'tool_round_trip')) {
    assert.equal(only.lowerConversation(JSON.stringify(c.turns), conversationOptions(c.provider, c.options), []).body, c.expected.body);
    const conv = new only.Conversation(1 << 20);
    for (const t of c.turns) conv.append(JSON.stringify(t), []);
    assert.equal(conv.lower(conversationOptions(c.provider, c.options)).body, c.expected.body);
    assert.deepEqual(JSON.parse(conv.cacheStats()).limit, 1 << 20);
  }
});

test('the gateway in jco: the seed contract, typed errors, canary, idempotency, limits, breaker, retries, a wasi:keyvalue bucket', () => {
  const { ContractRegistry, Gateway } = gatewayApi;
  const contracts = gatewayContracts();
  const reg = new ContractRegistry();
  const seed = JSON.parse(reg.register(contracts['valid/cross-title-link.yaml']));
  assert.equal(seed.version, '0.9.0');
  for (const f of ['valid/cross-title-link-1.0.yaml', 'valid/order-inventory-backup.yaml', 'valid/order-inventory.json']) reg.register(contracts[f]);
  const tag = (f) => {
    try {
      f();
      return 'ok';
    } catch (e) {
      return e.payload?.code ?? String(e);
    }
  };
  let bad;
  try {
    reg.register(contracts['invalid/bad-regex-and-defaults.yaml']);
  } catch (e) {
    bad = e.payload;
  }
  assert.deepEqual([bad.class, bad.code], ['invalid', 'invalid-contract']);
  assert.deepEqual(JSON.parse(bad.details).problems.map((p) => p.path), ['input.code.regex', 'input.k.default', 'input.lo.min', 'input.locale.default']);
  let t = 1_000_000;
  const runs = {};
  handlerHost.now = () => t;
  handlerHost.handlers = {
    'cross-title-link': (input, ctx) => {
      runs[input.title_id] = (runs[input.title_id] ?? 0) + 1;
      t += 5;
      if (input.title_id.startsWith('DOWN')) return { fail: { message: 'upstream', status: 503 } };
      if (input.title_id.startsWith('SLOW')) { t += 5_000; return { recommendations: [] }; }
      return ctx.version === '1.0.0' ? { nodes: [], edges: [] } : { recommendations: [{ title_id: 'X', similarity: 1, reason: `k=${input.k}` }] };
    },
    'order-inventory': (input) => (input.order_id === 'ORD-500' ? { fail: { code: 'REGION_DOWN', message: 'down' } } : { hold_id: 'H' }),
    'order-inventory-backup': () => ({ hold_id: 'B' }),
  };
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const got = JSON.parse(reg.plannerSection('related titles for Berserk', JSON.stringify({ provider, surface: 'chat', user: 'u1', flags: ['cross_title_link_enabled'], tier: 'adult' })));
    assert.equal(JSON.stringify(got), JSON.stringify(contracts.planner[provider]), provider);
  }
  assert.ok(Array.isArray(JSON.parse(reg.overlapAudit(undefined, 0.5))));
  const gw = new Gateway(reg, undefined);
  const chat = { surface: 'chat', user: 'u1', session: 's1', flags: ['cross_title_link_enabled'], tier: 'adult', version: '0.9' };
  const call = (name, input, opts = chat, g = gw) => JSON.parse(g.call(name, JSON.stringify(input), JSON.stringify(opts)));
  assert.equal(call('cross-title-link', { title_id: 'BRSK_001', locale: 'en-US' }).recommendations[0].reason, 'k=10');
  assert.equal(tag(() => call('cross-title-link', { title_id: 'BRSK_001', locale: 'en-US' }, { ...chat, flags: [] })), 'capability-denied');
  assert.equal(tag(() => call('cross-title-link', { title_id: 'nope', locale: 'en-US' })), 'invalid-input');
  assert.equal(tag(() => call('nope', {})), 'not-found');
  // The variant's case is the code's class: what the caller can do about it.
  const classOf = (f) => {
    try {
      f();
    } catch (e) {
      return [e.payload.class, e.payload.code];
    }
  };
  assert.deepEqual(classOf(() => call('nope', {})), ['refused', 'not-found']);
  assert.deepEqual(classOf(() => call('cross-title-link', { title_id: 'nope', locale: 'en-US' })), ['invalid', 'invalid-input']);
  // Idempotency: the duplicate never reaches the handler.
  call('cross-title-link', { title_id: 'ABCD_001', locale: 'en-US' });
  call('cross-title-link', { title_id: 'ABCD_001', locale: 'en-US' });
  assert.equal(runs.ABCD_001, 1);
  // 60 per user per minute.
  const codes = Array.from({ length: 70 }, (_, i) => tag(() => call('cross-title-link', { title_id: `RATE_${String(i).padStart(3, '0')}`, locale: 'en-US' }, { ...chat, user: 'burst' })));
  assert.equal(codes.filter((c) => c === 'ok').length, 60);
  assert.equal(codes.filter((c) => c === 'rate-limited').length, 10);
  // Retries (attempts: 1 on 0.9) with the host's waits; a late answer is a timeout.
  assert.deepEqual(classOf(() => call('cross-title-link', { title_id: 'DOWN_001', locale: 'en-US' })), ['failed', 'handler-failed']);
  assert.equal(runs.DOWN_001, 2);
  assert.equal(handlerHost.sleeps.length, 1);
  assert.equal(tag(() => call('cross-title-link', { title_id: 'SLOW_001', locale: 'en-US' })), 'timeout');
  // Fallback to the backup contract.
  assert.deepEqual(call('order-inventory', { order_id: 'ORD-500' }, { ...chat, version: undefined }), { hold_id: 'B' });
  // The canary split, deterministic per user, and a run-time change.
  let on = 0;
  for (let i = 0; i < 20_000; i++) if (JSON.parse(reg.resolve('cross-title-link', 'chat', `user-${i}`, undefined, 0)).version === '1.0.0') on++;
  assert.ok(Math.abs(on / 20_000 - 0.05) <= 0.01, on);
  // The breaker of 1.0 (20 failures in the window open it) on a wasi:keyvalue bucket shared by two gateways.
  const a = new Gateway(reg, 'gateway-state');
  const b = new Gateway(reg, 'gateway-state');
  const v1 = { ...chat, surface: 'voice', version: '=1.0.0' };
  const outs = Array.from({ length: 12 }, (_, i) => tag(() => call('cross-title-link', { title_id: `DOWN_${String(100 + i)}`, locale: 'en-US' }, v1, i % 2 ? a : b)));
  assert.ok(outs.includes('circuit-open'), outs.join());
  const before = Object.values(runs).reduce((x, y) => x + y, 0);
  assert.equal(tag(() => call('cross-title-link', { title_id: 'GOOD_001', locale: 'en-US' }, v1, a)), 'circuit-open');
  assert.equal(Object.values(runs).reduce((x, y) => x + y, 0), before, 'an open breaker never reaches the handler');
  assert.ok([...buckets.get('gateway-state').keys()].some((k) => k.startsWith('cb:cross-title-link@1.0.0')));
  assert.deepEqual(JSON.parse(gw.verify('order-inventory-backup')).map((c) => c.ok), [true]);
  assert.deepEqual(JSON.parse(gw.verify('cross-title-link')).map((c) => [c.version, c.ok]), [['0.9.0', true], ['1.0.0', true]]);
  handlerHost.handlers['order-inventory-backup'] = () => ({ hold: 1 });
  assert.equal(tag(() => gw.verify('order-inventory-backup')), 'invalid-contract');
  const recs = JSON.parse(gw.records());
  assert.ok(recs.length > 70 && recs.some((r) => r.outcome === 'cached') && recs.some((r) => r.fallback_from.length === 1));
  const otel = JSON.parse(gatewayApi.recordsToOtel(JSON.stringify(recs.slice(0, 3))));
  assert.equal(otel.resourceSpans[0].scopeSpans[0].spans.length, 3);
  assert.equal(JSON.parse(gatewayApi.checkContract(contracts['invalid/no-owner-no-budget.yaml'])).problems.length, 2);
});

/** A case's SkillSpec run started on a fresh arbiter of the component (or none). */
function caseArbiter(c) {
  if (!c.arbiter) return undefined;
  const reg = arbiterApi.SkillRegistry.build(JSON.stringify([c.arbiter.spec]), '[]', c.arbiter.tools);
  const a = arbiterApi.Arbiter.create(reg, 2);
  a.start(c.arbiter.lane, c.arbiter.spec.name, 'null');
  return a;
}

/** The host side of a case: replies by request, tools by name; every body kept. */
function caseHost(c, requests) {
  const replies = [...c.replies];
  const enc = new TextEncoder();
  handlerHost.send = (provider, body) => {
    requests.push(body);
    return enc.encode(JSON.stringify(replies.shift()));
  };
  handlerHost.tools = {};
  for (const [name, t] of Object.entries(c.tools ?? {})) {
    handlerHost.tools[name] = () => {
      if (t.fail !== undefined) throw new Error(t.fail);
      return t.output;
    };
  }
}

test('the agent loop in jco: run-agent with the host model and tools, and the agent-run machine driven by hand, match the core driver', () => {
  for (const c of agentCases()) {
    const options = { lower: c.options.lower, tools: c.options.tools, max_steps: c.options.max_steps };
    // run-agent: the component drives the machine with the handlers import.
    const requests = [];
    caseHost(c, requests);
    const conv = new lowering.Conversation();
    for (const t of c.turns) conv.append(JSON.stringify(t), []);
    const store = compositor.MessageStore.open(`agent-${c.name}`);
    const arbiter = caseArbiter(c);
    const out = agentApi.runAgent(conv, JSON.stringify({ ...options, lane: c.arbiter?.lane }), arbiter, store);
    assert.deepEqual({ stop: out.stop, steps: out.steps, usage: JSON.parse(out.usage) }, c.expected.outcome, c.name);
    assert.deepEqual(requests, c.expected.requests, c.name);
    assert.deepEqual(JSON.parse(conv.turns()), c.expected.turns, c.name);
    // The turns the loop appended are in the store (the initial ones were never stored here).
    assert.deepEqual(JSON.parse(store.thread('default')).map((t) => t.role), c.expected.turns.slice(c.turns.length).map((t) => t.role), c.name);
    if (arbiter) assert.equal(JSON.parse(arbiter.run(c.arbiter.lane)).status, c.expected.arbiter_status);

    // agent-run: the same run, the host performing each action itself.
    const sent = [];
    caseHost(c, sent);
    const conv2 = new lowering.Conversation();
    for (const t of c.turns) conv2.append(JSON.stringify(t), []);
    const arb2 = caseArbiter(c);
    const run = agentApi.AgentRun.create(JSON.stringify({ ...options, arbiter: arb2 !== undefined }));
    const tools = JSON.stringify(c.options.tools ?? []);
    let offer = null;
    let reply = null;
    let action = JSON.parse(run.next('start', c.turns.length ? JSON.stringify(c.turns.at(-1)) : ''));
    for (;;) {
      if (action.do === 'done') break;
      if (action.do === 'offer') {
        offer = arb2.stepOffer(c.arbiter.lane, tools);
        action = JSON.parse(run.next('offer', offer));
      } else if (action.do === 'propose') {
        const p = arbiterApi.callProposal(action.call.name, JSON.stringify(action.call.input ?? {}), JSON.stringify(action.names));
        action = JSON.parse(run.next('verdict', arb2.propose(c.arbiter.lane, p)));
      } else if (action.do === 'tool') {
        const t = handlerHost.tools[action.name];
        if (!t) action = JSON.parse(run.next('no-tool', ''));
        else {
          try {
            action = JSON.parse(run.next('output', JSON.stringify(t(action.call))));
          } catch (e) {
            action = JSON.parse(run.next('failed', e.message));
          }
        }
      } else if (action.do === 'append') {
        conv2.append(action.turn === undefined ? reply : JSON.stringify(action.turn), []);
        action = JSON.parse(run.next('appended', ''));
      } else if (action.do === 'send') {
        const o = action.options;
        const body = conv2.lower(conversationOptions(o.provider, o)).body;
        reply = response.parseResponse(o.provider, handlerHost.send(o.provider, body, action.step));
        action = JSON.parse(run.next('received', reply));
      } else if (action.do === 'status') {
        action = JSON.parse(run.next('status', String(JSON.parse(arb2.run(c.arbiter.lane)).status === 'running')));
      } else assert.fail(`unknown action ${action.do}`);
    }
    assert.deepEqual({ stop: action.stop, steps: action.steps, usage: action.usage }, c.expected.outcome, c.name);
    assert.deepEqual(sent, c.expected.requests, c.name);
    assert.deepEqual(JSON.parse(conv2.turns()), c.expected.turns, c.name);
  }
  // An event the run does not wait for is a WIT error, and the run stays where it was.
  const run = agentApi.AgentRun.create('{"lower":{"provider":"gemini"}}');
  assert.throws(() => run.next('appended', ''), (e) => e.payload.code === 'invalid-request');
  assert.equal(JSON.parse(run.next('start', '')).do, 'send');
  assert.throws(() => agentApi.AgentRun.create('{"max_steps":0}'), (e) => e.payload.code === 'invalid-options');
});

/** A case's run options, as the Rust driver's test writes them. */
function runOptions(skill, run) {
  const o = { skill };
  for (const k of ['artifact', 'model_id', 'executors', 'parameters', 'context', 'session_id', 'pricing', 'render_limits']) if (run[k] !== undefined) o[k] = run[k];
  return o;
}

test('artifact runs in jco: run-artifact with the host executors, and the artifact-run machine driven by hand, match the core driver', () => {
  for (const c of artifactCases()) {
    const skill = JSON.parse(wrap(() => skills.importPackage(c.pkg, c.now))).skill;
    for (const [i, run] of c.runs.entries()) {
      const want = c.expected[i];
      const names = 'skill_run' in run ? JSON.stringify(run.skill_run) : undefined;
      // run-artifact: the component drives the run with the handlers import.
      let h = scriptedHost(run);
      handlerHost.complete = (request) => h.answer('model', request);
      handlerHost.execute = (executor, request) => (executor === 'code' || executor === 'dspy' || executor === 'dspy-manifest' ? h.answer(executor, request) : h.answer('handler', request, executor));
      let ms = 0;
      handlerHost.now = () => (ms += 1000);
      const store = wrap(() => skills.SkillStore.open(`artifact-run-${i}`));
      let got;
      try {
        got = { result: JSON.parse(composer.runArtifact(JSON.stringify(runOptions(skill, run)), names, store)) };
      } catch (e) {
        got = { error: { code: e.payload.code, message: e.payload.message, details: JSON.parse(e.payload.details) } };
      }
      const code = (x) => x.replace(/[A-Z]/g, (m, k) => (k ? '-' : '') + m.toLowerCase());
      // The clock here is the host's now-ms: the traces' times (and ids) differ; the rest is the same.
      const strip = (x) => JSON.parse(JSON.stringify(x, (k, v) => (/^(started_at|completed_at|created_at|id|trace)$/.test(k) ? undefined : v)));
      if (want.error) assert.deepEqual(strip(got.error), strip({ ...want.error, code: code(want.error.code) }), run.name);
      else assert.deepEqual(strip(got.result), strip(want.result), run.name);
      assert.deepEqual(h.calls, want.calls, run.name);
      // Each trace is in the store.
      assert.equal(wrap(() => store.exportTraces(undefined, undefined, undefined)).trim().split('\n').filter(Boolean).length, want.traces.length, run.name);
      handlerHost.now = () => Date.now();

      // artifact-run: the same run, the host performing each action (the scripted clock).
      h = scriptedHost(run);
      const traces = [];
      let r;
      try {
        r = composer.ArtifactRun.create(JSON.stringify(runOptions(skill, run)), names);
      } catch (e) {
        assert.equal(e.payload.code, code(want.error.code), run.name);
        continue;
      }
      let a = JSON.parse(r.first());
      let last;
      const answer = (f) => {
        try {
          return ['output', JSON.stringify(f())];
        } catch (e) {
          return ['failed', e.message];
        }
      };
      while (a.do !== 'done') {
        let ev;
        if (a.do === 'load') ev = ['loaded', JSON.stringify(skill.artifacts.find((x) => x.id === a.id) ?? null)];
        else if (a.do === 'time') ev = ['time', JSON.stringify((last = h.time()))];
        else if (a.do === 'manifest') ev = answer(() => h.answer('dspy-manifest', null));
        else if (a.do === 'trace') {
          traces.push({ key: a.key, row: a.row });
          ev = ['stored', ''];
        } else if (a.do === 'call') ev = answer(() => h.answer(a.executor, a.request, a.kind));
        a = JSON.parse(r.next(ev[0], ev[1]));
      }
      const out = { name: run.name, calls: h.calls, traces, ...(a.error ? { error: a.error } : { result: a.result }) };
      assert.deepEqual(out, want, run.name);
    }
  }
});
