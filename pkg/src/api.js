// The lowering face: lower(), lowerMany() and the message helpers. A message is prepared
// for the core (large attachment data stays in JS, slots.js), the host's resolver answers
// what the core asks, and the body is spliced together; every rule about messages is in the
// core. The instance and the crossing helpers are in instance.js; this module re-exports
// them for the other face files.

import { FIELD, NEEDS_DATA, FAILED, NEXT, ASK, LOST, PROVIDERS } from './constants.js';
import { PromptloomError, __call, __inbox, __fromCore, __json, __module, __str, __said, __limitsWire, __toolsWire } from './instance.js';
import { __answer as answer, __prepare as prepare, __splice, __inlineSlots, __inlineBytes } from './slots.js';

export * from './instance.js';
export * from './slots.js';
const call = __call;

/** @typedef {import('../index.js').UserMessage} UserMessage */
/** @typedef {import('../index.js').LowerOptions} LowerOptions */
/** @typedef {import('../index.js').ResolveRequest} ResolveRequest */
/** @typedef {import('../index.js').Resolve} Resolve */
/** @typedef {import('../index.js').MessageStore} MessageStore */
/** @typedef {import('./slots.js').Slot} Slot */
/**
 * What the resolver answered for each message, by part index: the answer as the core reads
 * it, or the error it raised.
 * @typedef {Record<string, unknown>[]} Answers
 */

/**
 * @internal The resolver requests of each message or turn in `json` (a JSON array): the
 * core plans them (`lower::requests`), one list per item, each request the object the
 * host's resolver is called with (`{ type, part, ref | target | content_id }`).
 * @param {string} json
 * @returns {ResolveRequest[][]}
 */
export function __requests(json) {
  return JSON.parse(__inbox('resolveRequestsInbox', [json]));
}

/**
 * The options the core reads, as JSON (`resolve` and `store` stay in JS); `cache` only for
 * conversations. A value JSON cannot hold is a coded error.
 * @param {unknown} options
 * @param {string} [what]
 * @param {boolean} [conversation]
 */
function optionsJson(options, what = 'lower()', conversation = false) {
  if (!options || typeof options !== 'object') {
    throw new PromptloomError('InvalidOptions', `${what} needs an options object with a provider (at $)`, { path: '$' });
  }
  // `resolve` and `store` stay in JS; the rest (the settings among them) is the core's to read.
  const { resolve, store, ...core } = /** @type {Record<string, any>} */ (options);
  if (resolve !== undefined && typeof resolve !== 'function') {
    throw new PromptloomError('InvalidOptions', '`resolve` must be a function (at resolve)', { path: 'resolve' });
  }
  if (!conversation) delete core.cache;
  if (core.limits !== undefined) core.limits = __limitsWire(core.limits);
  if (core.tools !== undefined) core.tools = __toolsWire(core.tools);
  try {
    return JSON.stringify(core);
  } catch (e) {
    throw new PromptloomError('InvalidOptions', `the options cannot be written as JSON: ${e && e.message ? e.message : e} (at options)`, { path: 'options' });
  }
}

/** The result of lower(): the body text, the report, and the body as an object. */
class Lowered {
  /** @type {string | (() => unknown) | unknown} the report's JSON, a function making it, or the report parsed */
  #report;
  /**
   * @param {string} body
   * @param {string | (() => unknown)} reportJson
   */
  constructor(body, reportJson) {
    this.body = body;
    this.#report = reportJson;
  }
  /** Every decision the lowering made (parsed on first access). */
  /** @returns {any} */
  get report() {
    if (typeof this.#report === 'function') this.#report = this.#report();
    if (typeof this.#report === 'string') this.#report = JSON.parse(this.#report);
    return this.#report;
  }
  toJSON() {
    return { body: this.body, report: this.report };
  }
  /** The body parsed as an object. */
  json() {
    return JSON.parse(this.body);
  }
}

/**
 * One core call for every message (`json`: their JSON); a Lowered or a PromptloomError per
 * message. With `first` = ASK (a resolver not asked yet) the core may answer
 * `{ id, requests }` instead: what to ask the resolver, one list per message, while it
 * keeps the parsed messages under `id`; `pending` = that id lowers them with the answers.
 * @param {unknown[]} messages the prepared messages
 * @param {string} json their JSON
 * @param {string} opts the options' JSON
 * @param {Answers} answers
 * @param {Slot[]} slots
 * @param {(string | Uint8Array)[]} texts
 * @param {string} [first]
 * @param {number} [pending]
 * @returns {{ id: number, requests: ResolveRequest[][] } | (Lowered | PromptloomError)[]}
 */
function finish(messages, json, opts, answers, slots, texts, first, pending) {
  const answersJson = first ?? (texts.length === 0 && answers.every((a) => Object.keys(a).length === 0) ? '' : JSON.stringify(answers));
  /** @type {string | undefined} */
  let out;
  if (pending !== undefined) {
    out = __inbox('lowerPendingInbox', [answersJson, ...texts], pending);
    // A newer plan replaced the kept messages: send them again.
    if (out === LOST) out = undefined;
  }
  out = out ?? /** @type {string} */ (__inbox('lowerManyInbox', [json, opts, answersJson, ...texts]));
  if (out[0] === ASK) {
    const nul = out.indexOf(FIELD);
    return { id: Number(out.slice(1, nul)), requests: JSON.parse(out.slice(nul + 1)) };
  }
  if (out[0] === NEEDS_DATA) {
    const wanted = out.slice(1).split(',').map((/** @type {string} */ n) => slots[Number(n)]);
    if (wanted.some((w) => !w)) throw new PromptloomError('Internal', 'the core asked for an unknown data slot', {});
    const answers2 = answers.map((a) => {
      /** @type {Record<string, unknown>} */
      const b = {};
      for (const [k, v] of Object.entries(a)) b[k] = __inlineSlots(v, wanted);
      return b;
    });
    out = /** @type {string} */ (__inbox('lowerManyInbox', [JSON.stringify(messages.map((m) => __inlineSlots(m, wanted))), opts, JSON.stringify(answers2), ...texts]));
    if (out[0] === NEEDS_DATA) throw new PromptloomError('Internal', 'the core asked twice for data', {});
  }
  return out.split(NEXT).map((/** @type {string} */ seg) => {
    if (seg[0] === FAILED) return __fromCore(seg.slice(1));
    const nul = seg.indexOf(FIELD);
    return new Lowered(__splice(seg.slice(nul + 1), slots), seg.slice(0, nul));
  });
}

/**
 * Asks the resolver for every request of every message, then lowers them in one call.
 * `sync` names the async form when this is the synchronous one (`lower`, `lowerMany`): a
 * store or a resolver answering a Promise is then refused, naming it.
 * @param {unknown[]} messages
 * @param {Record<string, any>} options
 * @param {boolean} many
 * @param {string | null} sync
 * @returns {(Lowered | PromptloomError)[] | Promise<(Lowered | PromptloomError)[]>}
 */
function lowerAll(messages, options, many, sync) {
  const opts = optionsJson(options);
  if (sync) syncOptions(options, sync);
  /** @type {Slot[]} */
  const slots = [];
  /** @type {(string | Uint8Array)[]} */
  const texts = [];
  const prepared = messages.map((m) => prepare(m, slots));
  const json = __json(prepared, 'the message', 'InvalidMessage', { text: false });
  const answers = prepared.map(() => ({}));
  const resolve = withStore(options.resolve, options.store);
  const ready = () => /** @type {(Lowered | PromptloomError)[]} */ (finish(prepared, json, opts, answers, slots, texts));
  if (!resolve) return ready();
  // The core plans what to ask; a message that asks nothing is lowered in the same call.
  const planned = finish(prepared, json, opts, answers, slots, texts, ASK);
  if (Array.isArray(planned)) return planned;
  const lists = planned.requests;
  /** @type {Promise<void>[]} */
  const pending = [];
  try {
    ask(lists, many, resolve, answers, slots, texts, pending, sync);
  } catch (e) {
    // A synchronous answer was refused: the Promises already started are abandoned, and
    // their own failures must not surface later as unhandled rejections.
    for (const p of pending) p.catch(() => {});
    throw e;
  }
  const lowerKept = () => /** @type {(Lowered | PromptloomError)[]} */ (finish(prepared, json, opts, answers, slots, texts, undefined, planned.id));
  if (pending.length === 0) return lowerKept();
  return Promise.all(pending).then(lowerKept);
}

/**
 * Asks the resolver for every request; async answers are collected in `pending`.
 * @param {ResolveRequest[][]} lists
 * @param {boolean} many
 * @param {(request: ResolveRequest) => unknown} resolve
 * @param {Answers} answers
 * @param {Slot[]} slots
 * @param {(string | Uint8Array)[]} texts
 * @param {Promise<void>[]} pending
 * @param {string | null} sync
 */
function ask(lists, many, resolve, answers, slots, texts, pending, sync) {
  lists.forEach((requests, i) => {
    for (const r of requests) {
      const request = many ? { ...r, message: i } : r;
      /** @type {any} */
      let v;
      try {
        v = resolve(request);
      } catch (e) {
        answers[i][r.part] = { error: __said(e) };
        continue;
      }
      if (v && typeof v.then === 'function') {
        if (sync) throw asyncAnswer(v, sync);
        pending.push(
          Promise.resolve(v).then(
            (x) => {
              const a = answer(x, slots, texts, r.type);
              if (a) answers[i][r.part] = a;
            },
            (e) => {
              answers[i][r.part] = { error: __said(e) };
            },
          ),
        );
      } else {
        const a = answer(v, slots, texts, r.type);
        if (a) answers[i][r.part] = a;
      }
    }
  });
}

/**
 * @param {(Lowered | PromptloomError)[]} results
 * @returns {Lowered}
 */
function one(results) {
  const r = results[0];
  if (r instanceof PromptloomError) throw r;
  return r;
}

/**
 * Lowers a user message to a provider request body: `{ body, report, json() }`, always
 * synchronously. A resolver that answers a Promise, or a `store` (its blobs are read
 * asynchronously), is refused with `InvalidOptions` naming `lowerAsync`.
 * @param {UserMessage} message
 * @param {import('../index.js').SyncLowerOptions} options
 * @returns {Lowered}
 */
export function lower(message, options) {
  return __lowerOne(message, options, 'lowerAsync');
}

/**
 * Lowers a user message, always as a Promise: the resolver may answer Promises, and `store` serves the message's blobs.
 * @param {UserMessage} message
 * @param {LowerOptions} options
 * @returns {Promise<Lowered>}
 */
export function lowerAsync(message, options) {
  return __later(() => __lowerOne(message, options, null));
}

/**
 * One message lowered; `sync` names the async form in the synchronous one, else a Promise.
 * @param {unknown} message
 * @param {any} options what the caller passed, checked by `optionsJson`
 * @param {string | null} sync
 * @returns {any} a Lowered when `sync`, else a Promise of one
 */
export function __lowerOne(message, options, sync) {
  const out = lowerAll([message], options, false, sync);
  return sync ? one(/** @type {(Lowered | PromptloomError)[]} */ (out)) : Promise.resolve(out).then(one);
}

/**
 * Lowers many messages (a history) with one set of options in one call into wasm. Returns
 * one entry per message, in order: a Lowered, or the PromptloomError that message got (a
 * message that is only a host action has no content for the model). Synchronous, as
 * `lower` is; `lowerManyAsync` takes async resolvers and a store. Resolver requests carry
 * `message`, the message's index.
 * @param {UserMessage[]} messages
 * @param {import('../index.js').SyncLowerOptions} options
 * @returns {(Lowered | PromptloomError)[]}
 */
export function lowerMany(messages, options) {
  return many(messages, options, 'lowerManyAsync');
}

/**
 * `lowerMany`, always as a Promise (async resolvers, a store).
 * @param {UserMessage[]} messages
 * @param {LowerOptions} options
 * @returns {Promise<(Lowered | PromptloomError)[]>}
 */
export function lowerManyAsync(messages, options) {
  return __later(() => many(messages, options, null));
}

/**
 * @param {unknown} messages
 * @param {any} options what the caller passed, checked by `optionsJson`
 * @param {string | null} sync
 * @returns {any} the list, or (async) a Promise of it
 */
function many(messages, options, sync) {
  if (!Array.isArray(messages)) throw new PromptloomError('InvalidMessage', 'lowerMany() takes an array of messages', { path: '$' });
  if (messages.length === 0) {
    __inbox('lowerManyInbox', ['[]', optionsJson(options), '']); // the options are still checked
    if (sync) syncOptions(options, sync);
    return [];
  }
  return lowerAll(messages, options, true, sync);
}

/**
 * A synchronous form refuses a store (its blobs are read asynchronously), naming the async form.
 * @param {{ store?: unknown }} options
 * @param {string} asyncForm
 */
function syncOptions(options, asyncForm) {
  if (options.store !== undefined) {
    throw new PromptloomError('InvalidOptions', `a \`store\` serves blobs asynchronously: use ${asyncForm}() (at store)`, { path: 'store', use: asyncForm });
  }
}

/**
 * A resolver answered a Promise in a synchronous form: the error naming the async form (the
 * Promise is caught, so its own failure is not left unheard).
 * @param {unknown} v
 * @param {string} asyncForm
 */
function asyncAnswer(v, asyncForm) {
  Promise.resolve(v).catch(() => {});
  return new PromptloomError('InvalidOptions', `the resolver answered a Promise, and this form is synchronous: use ${asyncForm}() (at resolve)`, { path: 'resolve', use: asyncForm });
}

/**
 * The async form of a synchronous call: always a Promise, every error a rejection.
 * @template T
 * @param {() => T | Promise<T>} f
 * @returns {Promise<T>}
 */
export function __later(f) {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * A resolver that answers blob requests from a message store, and the rest with `resolve`.
 * @param {((request: any) => unknown) | undefined} resolve
 * @param {any} store what the caller passed as a store (its `blob` is checked)
 * @returns {((request: any) => unknown) | undefined}
 */
function withStore(resolve, store) {
  if (!store) return resolve;
  if (typeof store.blob !== 'function') {
    throw new PromptloomError('InvalidOptions', '`store` must be a message store from openMessageStore() (at store)', { path: 'store' });
  }
  return (request) => {
    if (request.type !== 'blob') return resolve ? resolve(request) : null;
    return store.blob(request.content_id).then((/** @type {import('../index.js').StoredBlob | null} */ b) => (b ? { base64: b.data, mime: b.mime } : resolve ? resolve(request) : null));
  };
}

/**
 * The default capability table of a provider (what it accepts natively, limits, routes).
 * @param {import('../index.js').Provider} provider
 * @returns {Record<string, unknown>}
 */
export function defaultCapabilities(provider) {
  return JSON.parse(call((/** @type {string} */ p) => __module().defaultCapabilities(p), __str(provider, 'provider')));
}

/**
 * Parses a message and returns its normalised wire form (unknown parts are kept).
 * @param {UserMessage} message
 * @returns {UserMessage}
 */
export function normalizeMessage(message) {
  return JSON.parse(call((/** @type {string} */ m) => __module().normalizeMessage(m), __json(__inlineBytes(message), 'the message', 'InvalidMessage', { text: false })));
}

/**
 * What lower() will ask the resolver for this message (the core plans it), in part order:
 * the objects `resolve` is called with.
 * @param {UserMessage} message
 * @returns {ResolveRequest[]}
 */
export function resolveRequests(message) {
  return JSON.parse(call((/** @type {string} */ m) =>
 __module().resolveRequests(m), __json(__inlineBytes(message), 'the message', 'InvalidMessage', { text: false })));
}

/** The providers lower() accepts. */
export const providers = PROVIDERS;

export { optionsJson as __optionsJson, Lowered as __Lowered, withStore as __withStore, syncOptions as __syncOptions, asyncAnswer as __asyncAnswer };
