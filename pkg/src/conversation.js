// Conversations: the glue only converts (attachment bytes to base64, the host's resolver
// answers to the wire form) and delegates; every rule about turns and providers is in the
// core (src/conversation).

import { FIELD } from './constants.js';
import { PromptloomError, __inbox, __optionsJson, __module, __requests, __answer, __Lowered, __withStore, __syncOptions, __asyncAnswer, __later, __toBase64, __asBytes, __inlineSlots, __fromCore, __json, __opts, __said, __release, __disposable, __call, __on, __onCall, __glue } from './api.js';

/** @import { Unchecked, ErrorCode, Glue } from './instance.js' */
/** @typedef {import('../index.js').Turn} Turn */
/** @typedef {import('../index.js').ResolveRequest} ResolveRequest */

/**
 * JSON text of a value from the caller; a value JSON cannot hold is a coded error.
 * @param {unknown} value
 * @param {ErrorCode} code
 * @param {string} path
 */
const stringify = (value, code, path) => __json(value ?? null, path, code, { text: false, nullable: true, path });

/**
 * A part with attachment bytes written as base64 (tool results' parts too).
 * @param {Unchecked} p a part as the caller wrote it
 * @returns {Unchecked}
 */
function wirePart(p) {
  if (!p || typeof p !== 'object') return p;
  if (p.type === 'file-attachment') {
    const bytes = __asBytes(p.data);
    if (bytes) return { ...p, data: __toBase64(bytes) };
  } else if (p.type === 'tool-result') {
    // Message parts in `content` (and, in a turn of schema version 1 or 2, in `output`).
    for (const key of ['content', 'output']) {
      const list = p[key];
      if (!Array.isArray(list)) continue;
      let changed = false;
      const next = list.map((/** @type {Unchecked} */ q) => {
        const r = wirePart(q);
        changed ||= r !== q;
        return r;
      });
      if (changed) return { ...p, [key]: next };
    }
  }
  return p;
}

/**
 * @internal A turn with attachment bytes written as base64.
 * @param {Unchecked} turn a turn as the caller wrote it
 * @returns {Unchecked}
 */
export function __wireTurn(turn) {
  if (!turn || typeof turn !== 'object' || !Array.isArray(turn.parts)) return turn;
  let changed = false;
  const parts = turn.parts.map((/** @type {Unchecked} */ p) => {
    const q = wirePart(p);
    changed ||= q !== p;
    return q;
  });
  return changed ? { ...turn, parts } : turn;
}

const NONE = /** @type {readonly any[]} */ (Object.freeze([]));

/**
 * Asks `resolve` for a turn's `requests` (planned by the core: only a user turn asks);
 * fills `answers` (by part index) and `texts`. Returns the Promises still pending (an
 * async resolver).
 * @param {ResolveRequest[]} requests
 * @param {number} index the turn's index
 * @param {((request: any) => unknown) | undefined} resolve
 * @param {Record<string, unknown>} answers
 * @param {(string | Uint8Array)[]} texts
 * @param {string | null} sync
 * @returns {readonly Promise<unknown>[]}
 */
function ask(requests, index, resolve, answers, texts, sync) {
  if (!resolve || requests.length === 0) return NONE;
  /** @type {import('./slots.js').Slot[]} */
  const slots = [];
  /** @type {Promise<unknown>[]} */
  const pending = [];
  /**
   * @param {number} part
   * @param {unknown} v
   * @param {string} kind
   */
  const put = (part, v, kind) => {
    const a = __answer(v, slots, texts, kind);
    // Turns are kept whole in wasm: large answers go inline too.
    if (a) answers[part] = slots.length > 0 ? __inlineSlots(a, slots) : a;
  };
  const fail = (/** @type {number} */ part, /** @type {unknown} */ e) => {
    answers[part] = { error: __said(e) };
  };
  for (const r of requests) {
    /** @type {Unchecked} */
    let v;
    try {
      v = resolve({ ...r, turn: index });
    } catch (e) {
      fail(r.part, e);
      continue;
    }
    if (v && typeof v.then === 'function') {
      if (sync) throw __asyncAnswer(v, sync);
      pending.push(Promise.resolve(v).then((x) => put(r.part, x, r.type), (e) => fail(r.part, e)));
    } else {
      try {
        put(r.part, v, r.type);
      } catch (e) {
        // The synchronous forms asked for nothing that is still pending.
        if (sync) throw e;
        // Wait for the answers already asked for, so none is left to reject unhandled.
        return [Promise.allSettled(pending).then(() => { throw e; })];
      }
    }
  }
  return pending;
}

/** @param {string} out the core's answer: the report's JSON, FIELD, the body */
function lowered(out) {
  const nul = out.indexOf(FIELD);
  return new __Lowered(out.slice(nul + 1), out.slice(0, nul));
}

/**
 * Lowers a whole conversation — system, user, assistant and tool turns — to a provider
 * request body: `{ body, report, json() }`, always synchronously (a resolver answering a
 * Promise, or a `store`, is refused naming `lowerConversationAsync`). The same bytes as a
 * Conversation holding the same turns.
 * @param {Turn[]} turns
 * @param {import('../index.js').SyncLowerOptions & import('../index.js').ConversationOptions} options
 * @returns {import('./api.js').__Lowered}
 */
export function lowerConversation(turns, options) {
  return /** @type {import('./api.js').__Lowered} */ (lowerTurns(turns, options, 'lowerConversationAsync'));
}

/**
 * `lowerConversation`, always as a Promise: the resolver may answer Promises, and `store` serves blobs.
 * @param {Turn[]} turns
 * @param {import('../index.js').LowerOptions & import('../index.js').ConversationOptions} options
 * @returns {Promise<import('./api.js').__Lowered>}
 */
export function lowerConversationAsync(turns, options) {
  return __later(() => lowerTurns(turns, options, null));
}

/**
 * @param {unknown} turns
 * @param {Unchecked} options checked by `__optionsJson`
 * @param {string | null} sync
 */
function lowerTurns(turns, options, sync) {
  if (!Array.isArray(turns)) {
    throw new PromptloomError('InvalidMessage', 'lowerConversation() takes an array of turns (at turns)', { path: 'turns' });
  }
  const opts = __optionsJson(options, 'lowerConversation()', true);
  if (sync) __syncOptions(options, sync);
  const wired = turns.map(__wireTurn);
  const turnsJson = stringify(wired, 'InvalidMessage', 'turns');
  const resolve = __withStore(options.resolve, options.store);
  /** @type {Record<string, unknown>[]} */
  const answers = turns.map(() => ({}));
  /** @type {(string | Uint8Array)[]} */
  const texts = [];
  /** @type {Promise<unknown>[]} */
  const pending = [];
  if (resolve) __requests(turnsJson).forEach((requests, i) => pending.push(...ask(requests, i, resolve, answers[i], texts, sync)));
  const ready = () => {
    const answersJson = texts.length === 0 && answers.every((a) => Object.keys(a).length === 0) ? '' : JSON.stringify(answers);
    return lowered(__inbox('lowerConversationInbox', [turnsJson, opts, answersJson, ...texts]));
  };
  if (pending.length === 0) return ready();
  return Promise.all(pending).then(ready);
}

/**
 * A conversation kept in wasm with a bounded cache of its lowered turns: `append` a turn,
 * `lower` for any provider; a turn lowered once for a target costs nothing again. With a
 * `store`, every appended turn is persisted before `append` resolves (and
 * `Conversation.load` reads a thread back).
 */
export class Conversation {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's ConversationCore */
  #core;
  // The instance the conversation was made on: it finishes there, even after a larger entry
  // loads and serves every new call.
  /** @type {Glue} */
  #glue;
  /** @type {Function} */
  #appendInbox;
  /** @type {Function} */
  #stageInbox;
  /** @type {Unchecked} a message store (checked for `append` and `thread`), or undefined */
  #store;
  /** @type {string} */
  #session;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  // The last body, and the same up to the end of its last message: the core sends each
  // new body as the change from the last one, which is mostly that prefix plus the new
  // turn (a string concatenation, no copy).
  #body = '';
  // Prefixes of the last body that end where a message ends (its whole messages, newest
  // last, at most 8): a new body usually starts with one of them (the last one in a chat,
  // an earlier one after a rewind or a regenerated reply), and is then made by
  // concatenation, without copying.
  #opens = [''];

  // The options given at construction, as JSON: `lower()` without options uses them.
  /** @type {string | undefined} */
  #defaults;

  /** @param {import('../index.js').ConversationInit} [init] */
  constructor(init) {
    const { store, session = 'default', cacheBytes = 0, options } = __opts(init, 'new Conversation()');
    if (store !== undefined && (store === null || typeof store.append !== 'function' || typeof store.thread !== 'function')) {
      throw new PromptloomError('InvalidOptions', '`store` must be a message store from openMessageStore() (at store)', { path: 'store' });
    }
    if (typeof session !== 'string') throw new PromptloomError('InvalidOptions', '`session` must be a string (at session)', { path: 'session' });
    if (typeof cacheBytes !== 'number' || !(cacheBytes >= 0)) {
      throw new PromptloomError('InvalidOptions', '`cacheBytes` must be a non-negative number (at cacheBytes)', { path: 'cacheBytes' });
    }
    const m = __module();
    this.#glue = __glue();
    this.#core = new m.ConversationCore(Math.min(cacheBytes, 0xffffffff) >>> 0);
    this.#appendInbox = this.#core.appendInbox.bind(this.#core);
    this.#stageInbox = this.#core.stageInbox.bind(this.#core);
    this.#store = store;
    this.#session = session;
    if (options !== undefined) this.#defaults = __optionsJson(options, 'new Conversation()', true);
  }

  /**
   * A conversation holding the stored thread of `session`.
   * @param {import('../index.js').ConversationInit} init
   */
  static async load(init) {
    const { store, session = 'default', cacheBytes = 0, options } = __opts(init, 'Conversation.load()');
    if (store === undefined) throw new PromptloomError('InvalidOptions', 'Conversation.load() reads a stored thread: pass `store`, a message store from openMessageStore() (at store)', { path: 'store' });
    const c = new Conversation({ store, session, cacheBytes, options });
    const thread = await store.thread(session);
    if (!Array.isArray(thread)) throw new PromptloomError('StoreFailed', 'the message store answered `thread()` with something other than a list of turns (at store)', { path: 'store' });
    for (const t of thread) c.#local(t, {}, []);
    return c;
  }

  /**
   * The turn as JSON for the core (attachment bytes as base64).
   * @param {unknown} turn
   */
  #json(turn) {
    return stringify(__wireTurn(turn), 'InvalidMessage', `turns[${this.length}]`);
  }

  /**
   * Appends a turn with its resolver answers (null: none asked); returns its index.
   * @param {unknown} turn
   * @param {Record<string, unknown> | null} answers
   * @param {readonly (string | Uint8Array)[]} texts
   * @param {string} [json]
   * @returns {number}
   */
  #local(turn, answers, texts, json = this.#json(turn)) {
    const answersJson = answers === null || (texts.length === 0 && Object.keys(answers).length === 0) ? '' : JSON.stringify(answers);
    return __on(this.#glue, () => __inbox(this.#appendInbox, texts.length === 0 ? [json, answersJson] : [json, answersJson, ...texts]));
  }

  /**
   * Calls the core on the instance the conversation was made on; its errors coded.
   * @template T
   * @param {() => T} f
   * @returns {T}
   */
  #on(f) {
    return __onCall(this.#glue, f);
  }

  /**
   * Appends a turn (`{ role, parts }`). A user turn's file-refs, mentions and blobs are
   * resolved now, with `resolve`, and kept with the turn. Returns the turn's index: at once
   * for a conversation without a store (a resolver must answer synchronously; an async one
   * is refused naming `appendAsync`), as a Promise for one with a store (the turn is
   * persisted first).
   * @param {Turn} turn
   * @param {{ resolve?: import('../index.js').Resolve }} [options]
   * @returns {number | Promise<number>}
   */
  append(turn, options) {
    return this.#append(turn, options, this.#store ? null : 'appendAsync');
  }

  /**
   * `append`, always as a Promise: the resolver may answer Promises.
   * @param {Turn} turn
   * @param {{ resolve?: import('../index.js').Resolve }} [options]
   * @returns {Promise<number>}
   */
  appendAsync(turn, options) {
    return __later(() => this.#append(turn, options, null));
  }

  /**
   * @param {unknown} turn
   * @param {unknown} options
   * @param {string | null} sync
   * @returns {number | Promise<number>}
   */
  #append(turn, options, sync) {
    const { resolve } = __opts(options, 'append()');
    if (resolve !== undefined && typeof resolve !== 'function') {
      throw new PromptloomError('InvalidOptions', '`resolve` must be a function (at resolve)', { path: 'resolve' });
    }
    const ask_ = __withStore(resolve, this.#store);
    // Nothing to ask and nothing to persist: the turn goes straight in.
    if (!this.#store && !ask_) return this.#local(turn, null, NONE);
    // Otherwise the turn crosses once: the core reads it, keeps it under a number, and the
    // store's rows and the append are made from what it read.
    /** @type {number} */
    let n;
    /** @type {ResolveRequest[]} */
    let requests;
    try {
      const json = this.#json(turn);
      const out = __on(this.#glue, () => __inbox(this.#stageInbox, [json]));
      const at = out.indexOf(FIELD);
      n = Number(out.slice(0, at));
      requests = JSON.parse(out.slice(at + 1));
    } catch (e) {
      // With a store, append() answers with a Promise: its errors are rejections.
      if (this.#store) return Promise.reject(e);
      throw e;
    }
    /** @type {Record<string, unknown>} */
    const answers = {};
    /** @type {(string | Uint8Array)[]} */
    const texts = [];
    /**
     * Appends the staged turn (`keep`) or drops it; the turn's index.
     * @param {boolean} keep
     * @returns {number}
     */
    const finish = (keep) => {
      const answersJson = texts.length === 0 && Object.keys(answers).length === 0 ? '' : JSON.stringify(answers);
      return __on(this.#glue, () => __inbox((/** @type {Uint32Array} */ lens) => this.#core.appendStagedInbox(n, keep, lens), texts.length === 0 ? [answersJson] : [answersJson, ...texts]));
    };
    let pending = NONE;
    try {
      if (ask_) pending = ask(requests, this.length, ask_, answers, texts, sync);
    } catch (e) {
      // A synchronous append refused an answer: the staged turn is dropped.
      finish(false);
      throw e;
    }
    if (!this.#store && pending.length === 0) return finish(true);
    // One append at a time, in order: the thread's order is the conversation's.
    const run = this.#queue.then(async () => {
      try {
        await Promise.all(pending);
        // The store does not write a turn it holds already (a message submit() stored).
        if (this.#store) await this.#persist(n, turn);
      } catch (e) {
        finish(false);
        throw e;
      }
      return finish(true);
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Writes staged turn `n` to the store (a store of another kind: through its `append`).
   * @param {number} n
   * @param {unknown} turn
   */
  async #persist(n, turn) {
    const store = this.#store;
    if (typeof store.__appendStaged !== 'function') return store.append(turn, { session: this.#session });
    const core = this.#core;
    return store.__appendStaged(this.#session, (/** @type {string} */ optsJson, /** @type {string} */ row) => this.#on(() => core.layoutStaged(n, optsJson, row)));
  }

  /**
   * Lowers the conversation: `{ body, report, json() }`, the same bytes as
   * lowerConversation. Without options, the ones given to the constructor.
   * @param {import('../index.js').SyncLowerOptions & import('../index.js').ConversationOptions} [options]
   */
  lower(options) {
    if (options === undefined && this.#defaults !== undefined) return this.#lower(this.#defaults);
    const opts = __optionsJson(options, 'lower()', true);
    if (/** @type {Unchecked} */ (options).resolve !== undefined) {
      throw new PromptloomError('InvalidOptions', 'a Conversation resolves file-refs when a turn is appended: pass `resolve` to append() (at resolve)', { path: 'resolve' });
    }
    return this.#lower(opts);
  }

  /** @param {string} opts the options' JSON */
  #lower(opts) {
    /** @type {string} */
    const out = this.#on(() => this.#core.lower(opts));
    const g = out.indexOf(FIELD);
    const a = out.indexOf(FIELD, g + 1);
    const b = out.indexOf(FIELD, a + 1);
    const generation = Number(out.slice(0, g));
    const keep = Number(out.slice(g + 1, a));
    const close = Number(out.slice(a + 1, b));
    const tail = out.slice(b + 1);
    // Every string in #opens is a prefix of the last body: the one as long as `keep` is
    // exactly the part to keep.
    let open = this.#opens.findLast((o) => o.length === keep);
    const opens = this.#opens.filter((o) => o.length < keep);
    if (open === undefined) open = this.#body.slice(0, keep);
    opens.push(open);
    const next = open + tail.slice(0, tail.length - close);
    if (next.length > keep) opens.push(next);
    this.#opens = opens.length > 8 ? opens.slice(-8) : opens;
    this.#body = open + tail;
    // The report is written only if read (the core keeps the last 8 lowerings' reports).
    const core = this.#core;
    return new __Lowered(this.#body, () => this.#on(() => core.reportJson(generation)));
  }

  /** The options given at construction (what `lower()` without options uses), or undefined. */
  get options() {
    return this.#defaults === undefined ? undefined : JSON.parse(this.#defaults);
  }

  /** The turns, in order (their wire form). */
  get turns() {
    return JSON.parse(this.#on(() => this.#core.turns()));
  }

  /** @internal The turns as JSON text (what `turns` parses). */
  __turnsJson() {
    return this.#on(() => this.#core.turns());
  }

  /** How many turns there are. */
  get length() {
    return this.#on(() => this.#core.length);
  }

  /**
   * Keeps the first `n` turns (in memory; the store keeps its rows).
   * @param {number} n
   */
  truncate(n) {
    if (!Number.isInteger(n) || n < 0) throw new PromptloomError('InvalidOptions', '`n` must be a non-negative integer (at n)', { path: 'n' });
    this.#on(() => this.#core.truncate(n));
  }

  /** The cache of lowered turns: `{ entries, bytes, limit, hits, misses }`. */
  cacheStats() {
    return JSON.parse(this.#on(() => this.#core.cacheStats()));
  }

  /** Frees the wasm memory now (otherwise the garbage collector does). */
  free() {
    __release(this.#core);
  }
}
