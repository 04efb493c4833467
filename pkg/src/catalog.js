// The skill catalog: the two scopes (workspace and account) merged, phase-1 matching
// (SkillIndex), the orchestrator's decision, and the marketplace sync. Merging, ranking,
// decisions and sync plans are the core's (src/catalog); this file holds the host's
// stores, calls `fetch` and the host's embedder.

import { PromptloomError, __inbox, __module, __json, __key, __opts, __str, __call, __generation, __encoder, __num, __said, __list, __bytesOf, __hostAsync, __release, __disposable, __clock, __iso, __renamed, __longRun } from './api.js';
import { __object as object, __rowsText as rowsText, __summaries as summaries, __SkillStore as SkillStore, __migrate as migrate, openSkillStore } from './skills.js';

// The compact text form's separators must not occur inside a field (a stateless test, a
// global replace).
const HAS_SEP = /[\u001d-\u001f]/;

const SEPS = /[\u001d-\u001f]/g;

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').SkillSummary} SkillSummary */
/** @typedef {import('../index.js').Recommendation} Recommendation */
/** @typedef {import('../index.js').Decision} Decision */

const clean = (/** @type {unknown} */ s) => (typeof s === 'string' ? (HAS_SEP.test(s) ? s.replace(SEPS, ' ') : s) : '');

// A list's items joined by one string concatenation each: `map(clean).join` took V8 about
// twice as long, a third of the JS side of a 10,000-skill index build.
const list = (/** @type {unknown} */ a) => {
  if (!Array.isArray(a)) return '';
  let s = '';
  for (let i = 0; i < a.length; i++) {
    if (i > 0) s += '\u001d';
    s += clean(a[i]);
  }
  return s;
};

/**
 * One embedding as a Float32Array, each number read once: an array, Float32Array or
 * Float64Array of finite numbers (within float32's range). Anything else is a coded error
 * naming the place.
 * @param {Unchecked} v
 * @param {string} what
 * @returns {Float32Array}
 */
function vectorOf(v, what) {
  const bad = (/** @type {string} */ why) => new PromptloomError('InvalidOptions', `\`${what}\` must be an array of finite numbers: ${why} (at ${what})`, { path: what });
  if (ArrayBuffer.isView(v)) {
    if (!(v instanceof Float32Array || v instanceof Float64Array)) throw bad('a typed array other than Float32Array or Float64Array');
    __bytesOf(v, what);
  } else if (!Array.isArray(v)) throw bad(`got ${v === null ? 'null' : typeof v}`);
  const out = new Float32Array(v.length);
  for (let j = 0; j < v.length; j++) {
    const x = v[j];
    if (typeof x !== 'number' || !Number.isFinite(Math.fround(x))) throw bad(`[${j}] is not a finite number`);
    out[j] = x;
  }
  return out;
}

/** Skills per piece of a SkillIndex's text. */
const CHUNK = 256;

/**
 * `metadata.enabled` as JSON text for the index, or '' (the core decides what it means).
 * @param {Unchecked} s a summary
 */
function enabledField(s) {
  const m = s.metadata;
  if (m === null || typeof m !== 'object' || !('enabled' in m)) return '';
  try {
    return JSON.stringify(m.enabled) ?? '';
  } catch {
    return '';
  }
}

/** The phase-1 index over catalog summaries (synchronous matching). */
export class SkillIndex {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's SkillIndex */
  #inner;
  /** @type {number} */
  #gen = -1;
  // The index text (UTF-8) and vectors stay in JS: the index is rebuilt from them if the
  // wasm instance is ever replaced after a trap.
  /** @type {Uint8Array} */
  #text;
  /** @type {[Float32Array, number] | null} */
  #vectors = null;
  /**
   * @param {SkillSummary[]} summaries skill summaries (from `store.list()` or `catalog.list()`)
   * @param {{ vectors?: ArrayLike<number>[] }} [options]
   */
  constructor(summaries, options) {
    const { vectors } = __opts(options, 'new SkillIndex()');
    if (!Array.isArray(summaries)) throw new PromptloomError('InvalidOptions', 'a SkillIndex is built from an array of summaries', { path: '$' });
    // The compact text, encoded as UTF-8 a piece of CHUNK skills at a time: a piece is a
    // short rope the engine flattens in cache, and once encoded it is garbage. Strings kept
    // until the end (2.7 MB for 10,000 skills) were copied by every young-generation
    // collection the build ran into; the bytes live outside the JS heap. The core reads
    // them as one text.
    let bytes = new Uint8Array(1 << 16);
    let len = 0;
    const encode = (/** @type {string} */ piece) => {
      const need = len + piece.length * 3;
      if (need > bytes.length) {
        const grown = new Uint8Array(Math.max(need, bytes.length * 2));
        grown.set(bytes.subarray(0, len));
        bytes = grown;
      }
      len += __encoder.encodeInto(piece, bytes.subarray(len)).written;
    };
    let text = '';
    summaries.forEach((/** @type {Unchecked} */ s, i) => {
      if (s === null || typeof s !== 'object') throw new PromptloomError('InvalidOptions', `summaries[${i}] must be a skill summary object (at summaries[${i}])`, { path: `summaries[${i}]` });
      text += `${clean(s.id)}\u001f${clean(s.name)}\u001f${clean(s.description)}\u001f${list(s.tags)}\u001f${list(s.intent_patterns)}\u001f${list(s.trigger_phrases)}\u001f${clean(s.scope)}\u001f${enabledField(s)}\u001e`;
      if ((i + 1) % CHUNK === 0) {
        encode(text);
        text = '';
      }
    });
    encode(text);
    // Kept for a rebuild (see above), without the spare room.
    this.#text = bytes.slice(0, len);
    this.size = summaries.length;
    this.#build();
    if (vectors) this.setVectors(vectors);
  }
  #build() {
    const M = __module();
    this.#gen = __generation();
    this.#inner = __inbox((/** @type {Uint32Array} */ lens) => new M.SkillIndex(lens), [this.#text]);
    if (this.#vectors) {
      const [flat, dim] = this.#vectors;
      __call(() => this.#inner.setVectors(flat, dim));
    }
  }
  #current() {
    if (this.#gen !== __generation()) this.#build();
    return this.#inner;
  }
  /**
   * One embedding per skill, in the same order (arrays or Float32Arrays of one length).
   * @param {ArrayLike<number>[]} vectors
   */
  setVectors(vectors) {
    const bad = (/** @type {string} */ why) => new PromptloomError('InvalidOptions', `\`vectors\` must be one array of numbers per skill, all of one length: ${why} (at vectors)`, { path: 'vectors' });
    const rows = __list(vectors, 'vectors').map((v, i) => vectorOf(v, `vectors[${i}]`));
    const dim = rows.length > 0 ? rows[0].length : 0;
    const flat = new Float32Array(dim * rows.length);
    rows.forEach((v, i) => {
      if (v.length !== dim) throw bad(`vectors[${i}] has ${v.length} numbers, vectors[0] has ${dim}`);
      flat.set(v, i * dim);
    });
    if (!__call(() => this.#current().setVectors(flat, dim))) throw bad(`${rows.length} vectors for ${this.size} skills`);
    this.#vectors = [flat, dim];
  }
  /**
   * Ranked recommendations: `[{ id, name, scope, score, tier: exact | scored, matched, trigger?, similarity? }]`.
   * @param {string} query
   * @param {import('../index.js').MatchOptions & { vector?: ArrayLike<number> | null, blend?: number }} [options]
   * @returns {Recommendation[]}
   */
  match(query, options) {
    const { k = 5, prefix = true, vector, blend = 0.3 } = __opts(options, 'match()');
    /** @type {Float32Array | undefined} */
    let q;
    if (vector !== undefined && vector !== null) {
      q = vectorOf(vector, 'vector');
    }
    const text = __str(query, 'query');
    const inner = this.#current();
    const kk = __num(k, 'k', { integer: true, min: 0 });
    const b = __num(blend, 'blend');
    return JSON.parse(__inbox((/** @type {Uint32Array} */ lens) => inner.rank(lens, kk, prefix !== false, q, b), [text]));
  }
  /**
   * The orchestrator decision for `query` over this index: `match()` (same options), then
   * `decide()` with `options.policy`.
   * @param {string} query
   * @param {import('../index.js').MatchOptions & { policy?: import('../index.js').DecisionPolicy }} [options]
   * @returns {Decision}
   */
  decide(query, options) {
    const { policy, ...rest } = __opts(options, 'decide()');
    return decide(query, this.match(query, rest), policy);
  }
  /** Frees the wasm memory now (otherwise when collected). */
  free() {
    __release(this.#inner);
  }
}

/**
 * A decision policy in the core's spelling (`maxSkills` → `max_skills`).
 * @param {Unchecked} policy
 */
function policyText(policy) {
  if (policy === undefined || policy === null) return '';
  __renamed(__opts(policy, '`policy`'), { max_skills: 'maxSkills' }, '`policy`');
  const { maxSkills, ...rest } = policy;
  return __json(maxSkills === undefined ? rest : { ...rest, max_skills: maxSkills }, '`policy`', 'InvalidOptions', { text: false, path: 'policy' });
}

/**
 * The orchestrator decision from phase-1 recommendations (what `match()` returned):
 * `{ action: direct | activate | research | clarify, reason, skills, scores, terms }`. The
 * rule is the core's (`catalog::orchestrator`); `policy` tunes it (`{ activate, margin,
 * max_skills, similarity }`).
 * @param {string} query
 * @param {Recommendation[]} recommendations
 * @param {import('../index.js').DecisionPolicy} [policy]
 * @returns {Decision}
 */
export function decide(query, recommendations, policy) {
  if (!Array.isArray(recommendations)) throw new PromptloomError('InvalidRequest', '`recommendations` must be the array match() returned (at recommendations)', { path: 'recommendations' });
  const recs = __json(recommendations, '`recommendations`', 'InvalidRequest', { text: false, path: 'recommendations' });
  return JSON.parse(__inbox('decideSkills', [__str(query, 'query'), recs, policyText(policy)]));
}

/** The merged catalog of a workspace store and an account store (workspace wins by name). */
export class SkillCatalog {
  static {
    __disposable(this);
  }
  /** @type {SkillIndex | undefined} */
  #index;
  /** @type {string | undefined} */
  #key;
  /** @type {Function | undefined} */
  #embed;
  /** @type {number} */
  #blend;
  /**
   * @param {SkillStore} workspace
   * @param {SkillStore} account
   * @param {{ embed?: import('../index.js').Embed, blend?: number }} [options]
   */
  constructor(workspace, account, options) {
    const { embed, blend = 0.3 } = __opts(options, 'new SkillCatalog()');
    for (const [s, n] of [[workspace, 'workspace'], [account, 'account']]) {
      if (!(s instanceof SkillStore)) throw new PromptloomError('InvalidOptions', `the ${n} store must come from openSkillStore() (at ${n})`, { path: n });
    }
    if (embed !== undefined && typeof embed !== 'function') throw new PromptloomError('InvalidOptions', '`embed` must be a function from texts to vectors (at embed)', { path: 'embed' });
    this.workspace = workspace;
    this.account = account;
    this.#embed = embed;
    this.#blend = __num(blend, 'blend');
  }
  /**
   * The host's embeddings of `texts`: one vector per text, or `AdapterFailed` naming `embed`.
   * @param {string[]} texts
   * @param {AbortSignal} [signal]
   * @returns {Promise<Float32Array[]>}
   */
  async #embedded(texts, signal) {
    if (!this.#embed) return [];
    const got = await __hostAsync(this.#embed, 'embed', texts, signal === undefined ? {} : { signal });
    if (!Array.isArray(got) || got.length !== texts.length) {
      throw new PromptloomError('AdapterFailed', `\`embed\` must answer one vector per text (${texts.length}; got ${Array.isArray(got) ? got.length : got === null ? 'null' : typeof got}) (at embed)`, { path: 'embed', callback: 'embed' });
    }
    try {
      return got.map((/** @type {unknown} */ v, /** @type {number} */ i) => vectorOf(v, `embed()[${i}]`));
    } catch (e) {
      throw e instanceof PromptloomError ? new PromptloomError('AdapterFailed', e.message, { ...e.details, callback: 'embed' }) : e;
    }
  }
  /** Every skill once (workspace first by name), each with `scope` and, when it hides an account skill, `overrides`. */
  async list() {
    const [w, a] = await Promise.all([this.workspace.__backend.scan('skills', ''), this.account.__backend.scan('skills', '')]);
    return JSON.parse(__inbox('catalogList', [rowsText(w), rowsText(a)]));
  }
  /**
   * The skill named `name` (workspace first), with `scope`, or null.
   * @param {string} name
   */
  async get(name) {
    for (const [store, scope] of /** @type {[SkillStore, string][]} */ ([[this.workspace, 'workspace'], [this.account, 'account']])) {
      const s = await store.getByName(name);
      if (s) return { ...s, scope };
    }
    return null;
  }
  /**
   * Phase 2: the artifacts of the given kinds of the skill named `name` (workspace first), or null.
   * @param {string} name
   * @param {import('../index.js').ArtifactKind[]} [kinds]
   */
  async load(name, kinds) {
    for (const store of [this.workspace, this.account]) {
      const id = await store.__backend.get('skill_names', __key(name, 'name'));
      if (id != null) return store.getArtifacts(JSON.parse(id), kinds);
    }
    return null;
  }
  /** Releases the phase-1 index's wasm memory now (otherwise when collected); the next match builds it again. */
  free() {
    this.#index?.free();
    this.#index = undefined;
  }
  /**
   * The phase-1 index, rebuilt when a store changed through these instances.
   * @param {{ refresh?: boolean } & import('../index.js').LongRunOptions} [options]
   * @returns {Promise<SkillIndex>}
   */
  async index(options) {
    const { refresh = false } = __opts(options, 'index()');
    const run = __longRun(options ?? {}, 'index()');
    const key = `${this.workspace.version}:${this.account.version}`;
    if (!refresh && this.#index && this.#key === key) return this.#index;
    run.stop();
    const summaries = await this.list();
    run.stop();
    run.tell('listed', summaries.length, summaries.length);
    const ix = new SkillIndex(summaries);
    if (this.#embed && summaries.length > 0) {
      const texts = summaries.map((/** @type {SkillSummary} */ s) => `${s.name}: ${s.description}`);
      run.tell('embedding', 0, texts.length);
      /** @type {Float32Array[]} */
      let vectors;
      try {
        vectors = await this.#embedded(texts, run.signal);
        run.stop();
      } catch (e) {
        ix.free();
        throw e;
      }
      run.tell('embedded', texts.length, texts.length);
      try {
        ix.setVectors(vectors);
      } catch (e) {
        ix.free();
        throw e;
      }
    }
    this.#index?.free();
    this.#index = ix;
    this.#key = key;
    return ix;
  }
  /**
   * Phase 1: ranked recommendations for `query` (exact trigger-phrase hits first).
   * @param {string} query
   * @param {import('../index.js').MatchOptions} [options]
   * @returns {Promise<Recommendation[]>}
   */
  async match(query, options) {
    const { k = 5, prefix = true } = __opts(options, 'match()');
    query = __str(query, 'query');
    const ix = await this.index();
    const vector = this.#embed && ix.size > 0 ? (await this.#embedded([query]))[0] : undefined;
    return ix.match(query, { k, prefix, vector, blend: this.#blend });
  }
  /**
   * Phase 1 then the orchestrator decision (see `decide()`): an activated skill also lists
   * `artifacts`, the names its run loads in order (phase 2 loads each when its step runs).
   * @param {string} query
   * @param {import('../index.js').MatchOptions & { policy?: import('../index.js').DecisionPolicy }} [options]
   * @returns {Promise<Decision>}
   */
  async decide(query, options) {
    const { policy, ...rest } = __opts(options, 'decide()');
    query = __str(query, 'query');
    const d = decide(query, await this.match(query, rest), policy);
    if (d.action === 'activate') {
      // Each activated skill's run order is the core's (runOrder), read from its summary.
      for (const s of /** @type {Unchecked[]} */ (d.skills)) {
        const summary = await (s.scope === 'account' ? this.account : this.workspace).summary(s.id);
        if (summary) s.artifacts = JSON.parse(__inbox('runOrder', [JSON.stringify(summary)]));
      }
    }
    return d;
  }
  /** The SkillSpecs of both stores' enabled skills (a workspace fork wins by name), by name: what buildSkillRegistry takes. */
  async skillSpecs() {
    const [w, a] = await Promise.all([this.workspace.__backend.scan('skills', ''), this.account.__backend.scan('skills', '')]);
    return JSON.parse(__inbox('skillSeed', ['specs', rowsText(w), rowsText(a)]));
  }
  /** Forces the next match to rebuild the index (after writes through other instances or tabs). */
  refresh() {
    this.#key = undefined;
  }
  /**
   * Syncs from a marketplace catalog URL with a conditional GET (`If-None-Match`): 304 keeps
   * the cache; changed packages are upserted into the account store; workspace skills are
   * never touched; offline (fetch rejects) changes nothing and reports `status: "offline"`.
   * An HTTP error or a malformed catalog throws `SyncFailed` before anything is written.
   * @param {string} url
   * @param {{ fetch?: typeof fetch, now?: () => number } & import('../index.js').LongRunOptions} [options]
   * @returns {Promise<import('../index.js').SyncReport>}
   */
  async syncMarketplace(url, options) {
    const { fetch: get = globalThis.fetch, now } = __opts(options, 'syncMarketplace()');
    const run = __longRun(options ?? {}, 'syncMarketplace()');
    run.stop();
    if (typeof url !== 'string' || url === '') throw new PromptloomError('InvalidOptions', 'syncMarketplace() takes the catalog URL', { path: 'url' });
    if (typeof get !== 'function') throw new PromptloomError('InvalidOptions', '`fetch` must be a function (at fetch)', { path: 'fetch' });
    const account = this.account;
    const stamp = now === undefined ? account.__now() : __iso(__clock(now)());
    const state = await account.__backend.get('skill_sync', url);
    const last = state == null ? null : JSON.parse(state).etag ?? null;
    const empty = { upserted: [], unchanged: [], shadowed: [], skipped: [] };
    /** @type {Unchecked} the host's answer: a Response, or anything shaped like one */
    let res;
    try {
      res = await get(url, { headers: last ? { 'If-None-Match': last } : {}, ...(run.signal ? { signal: run.signal } : {}) });
    } catch (e) {
      run.stop();
      return { status: 'offline', etag: last, error: __said(e), ...empty };
    }
    run.stop();
    run.tell('fetched', 1, 2);
    // The host's answer, read once: a Response (or anything shaped like one).
    const status = res !== null && typeof res === 'object' ? res.status : undefined;
    if (typeof status !== 'number' || typeof res.text !== 'function') {
      throw new PromptloomError('SyncFailed', `\`fetch\` answered ${res === null ? 'null' : typeof res} for ${url}, not a Response; nothing was changed (at fetch)`, { path: 'fetch', url });
    }
    if (status === 304) return { status: 'not-modified', etag: last, ...empty };
    if (!(status >= 200 && status < 300)) throw new PromptloomError('SyncFailed', `the marketplace answered HTTP ${status} for ${url}; nothing was changed`, { status, url });
    /** @type {unknown} */
    let body;
    /** @type {string} */
    let etag;
    try {
      body = await res.text();
      const tag = res.headers && typeof res.headers.get === 'function' ? res.headers.get('ETag') : null;
      etag = typeof tag === 'string' ? tag : '';
    } catch (e) {
      run.stop();
      throw Object.assign(new PromptloomError('SyncFailed', `the marketplace answer for ${url} could not be read: ${__said(e)}; nothing was changed`, { url }), { cause: e });
    }
    if (typeof body !== 'string') throw new PromptloomError('SyncFailed', `the marketplace answer for ${url} is not text; nothing was changed`, { url });
    // Past here the writes start: an abort before them changes nothing.
    run.stop();
    const [rows, ws] = await Promise.all([account.__backend.scan('skills', ''), this.workspace.list()]);
    const M = __module();
    const m = __inbox((/** @type {Uint32Array} */ lens) => new M.SkillMigration(lens, stamp), ['sync', body, rowsText(rows), ws.map((/** @type {SkillSummary} */ s) => s.name).join('\0'), etag, url]);

    let report;
    try {
      report = await migrate(account, m, run);
    } finally {
      m.free();
    }
    this.refresh();
    run.tell('written', 2, 2);
    return { status: 'updated', etag: etag || null, ...report };
  }
}
