// The contract registry and the invocation gateway: JS glue. Contracts, version routing,
// validation, capabilities, rate limits, breakers, idempotency, retry decisions and records
// live in the core (a call is a state machine there); this file runs what it asks for — the
// host's handler with a timeout and the caller's AbortSignal, the backoff waits, and state
// transactions on the chosen port (memory in wasm, IndexedDB, a Durable Object).

import { PromptloomError, __call as call, __core, __json, __opts, __str, __module, __generation, __signal, __list, __fn, __host, __hostAsync, __said, __num, __release, __disposable, __clock, __longRun } from './api.js';
import { GATEWAY_MAX_RECORDS, ERROR_CODES } from './constants.js';

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../composer.js').GatewayRecord} GatewayRecord */
/** @typedef {import('../composer.js').RegisteredContract} RegisteredContract */
/**
 * A state port as the gateway reads it: the in-wasm memory port, or one that runs each
 * transaction itself.
 * @typedef {{ kind?: string, __inner?: any, transact?: (keys: string[], op: object, now: number) => unknown }} StatePort
 */
/** One step of the core's call machine. @typedef {Unchecked} CallStep */

const clock = () => Date.now();
/** The core's answer when the output is valid and passed on as given (src/js/gateway.rs). */
const ECHO = '{"do":"done","echo":true}';

/**
 * A class only the composer module has, or the error that names the entry to import.
 * @param {string} name
 * @returns {any} the wasm-bindgen class
 */
function coreClass(name) {
  const M = __module();
  if (typeof M[name] !== 'function') __core('gatewayApply'); // throws, naming promptloom/composer
  return M[name];
}

const contractText = (/** @type {unknown} */ c) => __json(c, 'the contract', 'InvalidContract');

/**
 * A registry of skill contracts: several versions side by side, pins per surface, canaries
 * and sunsets. Registration checks a contract whole (`InvalidContract`, every problem in
 * `details.problems` with its path). The registry is JS state: if the wasm instance is ever
 * replaced after a trap, it is rebuilt from what was registered.
 */
export class ContractRegistry {
  static {
    __disposable(this);
  }
  /** @type {any} */
  #r = null;
  #gen = -1;
  /** @type {[string, unknown[]][]} the edits, in order (replayed on a fresh instance) */
  #log = [];
  /** @type {Set<string>} */
  #names = new Set();
  /** @internal The core registry (rebuilt after an instance change). */
  get __inner() {
    if (this.#r === null || this.#gen !== __generation()) {
      const Core = coreClass('ContractRegistryCore');
      const r = call(() => new Core());
      for (const [op, args] of this.#log) call(() => r[op](...args));
      this.#r = r;
      this.#gen = __generation();
    }
    return this.#r;
  }
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again from the contracts registered. */
  free() {
    __release(this.#r);
    this.#r = null;
  }
  /**
   * @param {string} op
   * @param {unknown[]} args
   * @returns {any} what the core answers
   */
  #edit(op, ...args) {
    const out = call(() => this.__inner[op](...args));
    this.#log.push([op, args]);
    return out;
  }
  /**
   * Registers a contract (YAML text, JSON text or an object) → the registered contract.
   * @param {import('../composer.js').ContractDocument | string} contract
   * @returns {RegisteredContract}
   */
  register(contract) {
    const c = JSON.parse(this.#edit('register', contractText(contract)));
    this.#names.add(c.name);
    return c;
  }
  /**
   * Removes a version (or every version of `name`) → whether any was there.
   * @param {string} name
   * @param {string | null} [version]
   * @returns {boolean}
   */
  unregister(name, version) {
    const had = this.#edit('unregister', __str(name, 'name'), version == null ? '' : __str(version, 'version'));
    this.#names = new Set(this.list().map((/** @type {RegisteredContract} */ c) => c.name));
    return had;
  }
  /**
   * Whether a contract of this name is registered.
   * @param {string} name
   */
  has(name) {
    return this.#names.has(name);
  }
  /**
   * Every registered version (name, version, schemas, surfaces, canary, sunset, source).
   * @returns {RegisteredContract[]}
   */
  list() {
    return JSON.parse(call(() => this.__inner.list())).contracts;
  }
  /**
   * The pins: `[{ surface, name, range }]`.
   * @returns {{ surface: string, name: string, range: string }[]}
   */
  pins() {
    return JSON.parse(call(() => this.__inner.list())).pins;
  }
  /**
   * One version.
   * @param {string} name
   * @param {string} version
   * @returns {RegisteredContract}
   */
  get(name, version) {
    return JSON.parse(call(() => this.__inner.get(__str(name, 'name'), __str(version, 'version'))));
  }
  /**
   * The version a call by `user` on `surface` runs (canary, pins, sunsets applied).
   * @param {string} name
   * @param {{ surface: string, user: string, version?: string, now?: () => number }} options
   */
  resolve(name, options) {
    const { surface, user, version = '', now } = __opts(options, 'resolve()');
    const at = __clock(now)();
    return JSON.parse(call(() => this.__inner.resolve(__str(name, 'name'), __str(surface, 'surface'), __str(user, 'user'), __str(version, 'version'), at)));
  }
  /**
   * Sends `percent` of `surface`'s users to `version` (0 removes the canary).
   * @param {string} name
   * @param {string} version
   * @param {string} surface
   * @param {number} percent
   */
  setCanary(name, version, surface, percent) {
    if (typeof percent !== 'number') throw new PromptloomError('InvalidOptions', '`percent` must be a number (at percent)', { path: 'percent' });
    this.#edit('setCanary', __str(name, 'name'), __str(version, 'version'), __str(surface, 'surface'), percent);
  }
  /**
   * Calls to `version` fail with `Sunset` from `at` (a date or RFC 3339 time; null clears).
   * @param {string} name
   * @param {string} version
   * @param {string | null} at
   */
  setSunset(name, version, at) {
    this.#edit('setSunset', __str(name, 'name'), __str(version, 'version'), at == null ? '' : __str(at, 'at'));
  }
  /**
   * What the planner sees for a message: `{ tools, catalog, names, more, tokens }` — the
   * top-K contracts (default 8) the caller may call, in `provider`'s tool shape, under
   * `tokenBudget` (default 6,000), and `request_more_tools` when more are left (call again
   * with `exclude` set to the names offered). Options: `{ provider, k?, tokenBudget?,
   * surface?, user?, tier?, flags?, exclude?, queryVector?, now? }`.
   * @param {string} query
   * @param {import('../composer.js').PlannerOptions} options
   * @returns {import('../composer.js').PlannerSection}
   */
  plannerSection(query, options) {
    const { provider, k, tokenBudget, surface, user, tier, flags, exclude, queryVector, now } = __opts(options, 'plannerSection()');
    const o = __json({ provider, k, token_budget: tokenBudget, surface, user, tier, flags, exclude, query_vector: queryVector, now: __clock(now)() }, 'the planner options');
    return JSON.parse(call(() => this.__inner.plannerSection(__str(query, 'query'), o)));
  }
  /**
   * Gives contracts embeddings (`{ name: number[] }`, one length) for the router.
   * @param {Record<string, number[]>} vectors
   */
  setVectors(vectors) {
    return this.#edit('setVectors', __json(vectors, 'the vectors', 'InvalidOptions', { text: false }));
  }
  /**
   * Pairs of contracts whose descriptions are too alike (`{ vectors?, threshold = 0.85 }`).
   * @param {{ vectors?: Record<string, number[]>, threshold?: number }} [options]
   */
  overlapAudit(options) {
    const { vectors, threshold = 0.85 } = __opts(options, 'overlapAudit()');
    const v = vectors == null ? '' : __json(vectors, 'the vectors', 'InvalidOptions', { text: false });
    return JSON.parse(call(() => this.__inner.overlapAudit(v, __num(threshold, 'threshold'))));
  }
  /**
   * Owner-less, deprecated and rarely-called contracts, from a gateway's records.
   * @param {GatewayRecord[]} records
   * @param {{ minCallsPerDay?: number }} [options]
   */
  review(records, options) {
    const { minCallsPerDay = 100 } = __opts(options, 'review()');
    return JSON.parse(call(() => this.__inner.review(__json(records ?? [], 'the records', 'InvalidOptions', { text: false }), __num(minCallsPerDay, 'minCallsPerDay', { min: 0 }))));
  }
  /**
   * `surface` calls `name` within `range` (`0.9`, `^1`, `>=1.2, <2`; null unpins).
   * @param {string} surface
   * @param {string} name
   * @param {string | null} range
   */
  pin(surface, name, range) {
    this.#edit('pin', __str(surface, 'surface'), __str(name, 'name'), range == null ? '' : __str(range, 'range'));
  }
}

/**
 * Reads a contract without registering it → `{ ok, problems, contract? }`.
 * @param {import('../composer.js').ContractDocument | string} contract
 * @returns {{ ok: boolean, problems: import('../composer.js').ContractProblem[], contract?: RegisteredContract }}
 */
export function checkContract(contract) {
  return JSON.parse(__core('checkContract', contractText(contract)));
}

/**
 * Runs one state transaction over the values a custom port read (same order as `keys`).
 * @param {object} op
 * @param {(string | null)[]} values
 * @param {number} now
 * @returns {{ writes: [string, string | null][], result: unknown }}
 */
export function applyGatewayState(op, values, now) {
  if (!Array.isArray(values)) throw new PromptloomError('InvalidRequest', '`values` is the list of stored texts (or nulls) for the op\'s keys (at values)', { path: 'values' });
  if (typeof now !== 'number') throw new PromptloomError('InvalidRequest', '`now` is epoch milliseconds (at now)', { path: 'now' });
  return applyOn(__json(op, 'the state op', 'InvalidRequest', { text: false }), __json(values, 'the state values', 'InvalidRequest', { text: false }), now);
}

/**
 * Gateway records as OpenTelemetry (OTLP/JSON) spans.
 * @param {GatewayRecord[]} records
 * @returns {object}
 */
export function recordsToOtel(records) {
  return JSON.parse(__core('gatewayOtel', __json(records, 'the records', 'InvalidRequest', { text: false })));
}

/**
 * The state port of one isolate or tab (held in wasm: a transaction never leaves it).
 * Limits and breakers hold for the calls this JS realm makes.
 */
export function memoryState() {
  let inner = /** @type {any} */ (null);
  let gen = -1;
  return {
    kind: 'memory',
    /** @internal */
    get __inner() {
      if (inner === null || gen !== __generation()) {
        const Core = coreClass('GatewayMemory');
        inner = call(() => new Core());
        gen = __generation();
      }
      return inner;
    },
    /**
     * A stored value (for panels and tests), or null.
     * @param {string} key
     * @returns {unknown}
     */
    get(key) {
      const v = call(() => this.__inner.get(__str(key, 'key')));
      return v === '' ? null : JSON.parse(v);
    },
  };
}

/**
 * Runs a transaction (op and values as JSON text) → the writes and the result.
 * @param {string} opText
 * @param {string} valuesText
 * @param {number} now
 * @returns {{ writes: [string, string | null][], result: unknown }}
 */
function applyOn(opText, valuesText, now) {
  return JSON.parse(__core('gatewayApply', opText, valuesText, now));
}

/** @type {(req: IDBRequest) => Promise<unknown>} */
const idbDone = (req) => new Promise((resolve, reject) => {
  req.onsuccess = () => resolve(req.result);
  req.onerror = () => reject(req.error);
});

/**
 * The state port of one browser profile: every transaction is one IndexedDB readwrite
 * transaction, so limits, breakers and idempotency hold across the tabs of the profile.
 * @param {{ name?: string, indexedDB?: IDBFactory }} [options]
 */
export function indexedDbState(options) {
  const { name = 'promptloom-gateway', indexedDB = globalThis.indexedDB } = __opts(options, 'indexedDbState()');
  if (!indexedDB) throw new PromptloomError('StoreFailed', 'IndexedDB is not available here (pass `indexedDB`)', {});
  /** @type {Promise<IDBDatabase> | undefined} */
  let db;
  /** @returns {Promise<IDBDatabase>} */
  const open = () => (db ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore('state');
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  }));
  return {
    kind: 'indexeddb',
    /**
     * @param {string[]} keys
     * @param {object} op
     * @param {number} now
     */
    async transact(keys, op, now) {
      const d = await open();
      return new Promise((resolve, reject) => {
        const tx = d.transaction('state', 'readwrite');
        const store = tx.objectStore('state');
        /** @type {unknown} */
        let result;
        Promise.all(keys.map((k) => idbDone(store.get(k)))).then((values) => {
          // Still inside the transaction: the writes commit with the reads, or not at all.
          const r = applyOn(JSON.stringify(op), JSON.stringify(values.map((v) => (typeof v === 'string' ? v : null))), now);
          for (const [k, v] of r.writes) (v === null ? store.delete(k) : store.put(v, k));
          result = r.result;
        }, (e) => { try { tx.abort(); } catch { /* already finished */ } reject(e); });
        tx.oncomplete = () => resolve(result);
        tx.onerror = tx.onabort = () => reject(new PromptloomError('StoreFailed', `the gateway state transaction failed: ${tx.error?.message ?? 'aborted'}`, {}));
      });
    },
    /** Closes the database. */
    close() {
      if (db) db.then((d) => d.close(), () => {});
      db = undefined;
    },
  };
}

/**
 * The state port of a Worker fleet: each contract's state lives in one Durable Object
 * (`namespace` is the binding of a class that extends `GatewayStateObject`), which runs
 * every transaction on its own storage, one at a time — so limits and breakers hold exactly
 * across isolates. `objectFor(op)` chooses the object name (default: the contract).
 * @param {Unchecked} namespace a Durable Object namespace binding (checked here)
 * @param {{ objectFor?: (keys: string[], op: object) => string }} [options]
 */
export function durableObjectState(namespace, options) {
  const { objectFor } = __opts(options, 'durableObjectState()');
  if (!namespace || typeof namespace.idFromName !== 'function') throw new PromptloomError('InvalidOptions', 'durableObjectState() takes a Durable Object namespace binding (at namespace)', { path: 'namespace' });
  const route = typeof objectFor === 'function' ? objectFor : (/** @type {string[]} */ keys) => String(keys[0] ?? '').split(':')[1]?.split('@')[0] ?? 'gateway';
  return {
    kind: 'durable-object',
    /**
     * @param {string[]} keys
     * @param {object} op
     * @param {number} now
     */
    async transact(keys, op, now) {
      const name = __str(__host(route, 'objectFor', keys, op), 'the name objectFor answered', 'AdapterFailed', 'objectFor');
      /** @type {Response} */
      let res;
      /** @type {Unchecked} */
      let body;
      try {
        const stub = namespace.get(namespace.idFromName(`promptloom-gateway:${name}`));
        res = await stub.fetch('https://gateway-state/transact', { method: 'POST', body: JSON.stringify({ keys, op, now }) });
        body = await res.json();
      } catch (e) {
        throw Object.assign(new PromptloomError('StoreFailed', `the gateway state object could not be reached: ${__said(e)} (at namespace)`, { path: 'namespace' }), { cause: e });
      }
      const error = body !== null && typeof body === 'object' ? body.error : undefined;
      if (!res.ok || error) {
        const known = error && typeof error.code === 'string' && ERROR_CODES.includes(error.code);
        throw new PromptloomError(known ? error.code : 'StoreFailed', typeof error?.message === 'string' ? error.message : `the gateway state object answered ${res.status}`, known && error.details && typeof error.details === 'object' ? error.details : {});
      }
      return body.result;
    },
  };
}

/**
 * The Durable Object side of `durableObjectState`: export a class that extends it from your
 * Worker and bind it (`[[durable_objects.bindings]]`). Its storage holds the state of the
 * contracts routed to it; the object's input gate keeps each transaction whole.
 */
export class GatewayStateObject {
  /** @param {Unchecked} state the Durable Object state the runtime passes (checked here) */
  constructor(state) {
    const storage = state !== null && typeof state === 'object' ? state.storage : undefined;
    if (!storage || typeof storage.get !== 'function' || typeof storage.put !== 'function' || typeof storage.delete !== 'function') {
      throw new PromptloomError('InvalidOptions', 'GatewayStateObject takes the Durable Object state the runtime passes (`state.storage` with get, put and delete) (at state)', { path: 'state' });
    }
    this.storage = storage;
  }
  /** @param {Request} request */
  async fetch(request) {
    try {
      const { keys, op, now } = /** @type {{ keys: string[], op: object, now: number }} */ (await request.json());
      /** @type {Map<string, unknown>} */
      const got = await this.storage.get(keys);
      const values = keys.map((k) => (typeof got.get(k) === 'string' ? got.get(k) : null));
      const r = applyOn(JSON.stringify(op), JSON.stringify(values), Number(now));
      /** @type {Record<string, string>} */
      const puts = {};
      /** @type {string[]} */
      const dels = [];
      for (const [k, v] of r.writes) (v === null ? dels.push(k) : (puts[k] = v));
      if (Object.keys(puts).length) await this.storage.put(puts);
      if (dels.length) await this.storage.delete(dels);
      return Response.json({ result: r.result });
    } catch (e) {
      const err = e instanceof PromptloomError ? e : new PromptloomError('StoreFailed', __said(e), {});
      return Response.json({ error: { code: err.code, message: err.message, details: err.details } }, { status: 500 });
    }
  }
}

const TIMEOUT = Symbol('timeout');
const ABORTED = Symbol('aborted');

/**
 * What a handler threw, as the failure the core classifies.
 * @param {unknown} e
 */
function failureOf(e) {
  /** @type {Unchecked} */
  const o = e && typeof e === 'object' ? e : {};
  const status = Number.isInteger(o.status) ? o.status : Number.isInteger(o.statusCode) ? o.statusCode : undefined;
  return JSON.stringify({
    code: typeof o.code === 'string' ? o.code : undefined,
    message: typeof o.message === 'string' ? o.message : __said(e),
    status,
    retryable: typeof o.retryable === 'boolean' ? o.retryable : undefined,
  });
}

const hex = (/** @type {Function} */ random) => {
  let s = '';
  for (let i = 0; i < 4; i++) {
    const r = __host(random, 'random');
    if (typeof r !== 'number' || !(r >= 0 && r < 1)) throw new PromptloomError('AdapterFailed', `\`random\` must answer a number in [0, 1) (got ${typeof r === 'number' ? r : typeof r}) (at random)`, { path: 'random', callback: 'random' });
    s += Math.floor(r * 0x100000000).toString(16).padStart(8, '0');
  }
  return s;
};

/**
 * Waits `ms`; resolves ABORTED early when the signal fires.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<true | typeof ABORTED>}
 */
function wait(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(ABORTED);
    const t = setTimeout(() => { signal?.removeEventListener('abort', stop); resolve(true); }, ms);
    const stop = () => { clearTimeout(t); resolve(ABORTED); };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Handler timeouts on one timer: deadlines are kept in a set and a single timer is armed
 * for the earliest, so a call costs no timer of its own (calls of one contract have
 * increasing deadlines: the armed timer stays valid).
 */
class Deadlines {
  /** @type {Set<{ at: number, fire: () => void }>} */
  #items = new Set();
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;
  #at = Infinity;
  /**
   * @param {number} at epoch milliseconds
   * @param {() => void} fire
   */
  add(at, fire) {
    const item = { at, fire };
    this.#items.add(item);
    if (at < this.#at) this.#arm(at);
    return item;
  }
  /** @param {{ at: number, fire: () => void } | undefined} item */
  remove(item) {
    if (item) this.#items.delete(item);
  }
  /** @param {number} at */
  #arm(at) {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#at = at;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, at - Date.now()));
  }
  #tick() {
    this.#timer = null;
    this.#at = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const item of this.#items) {
      if (item.at <= now) {
        this.#items.delete(item);
        item.fire();
      } else if (item.at < next) next = item.at;
    }
    if (next < Infinity) this.#arm(next);
  }
}

/** What a handler threw (or the promise it returned rejected with). */
class Threw {
  /** @param {unknown} error */
  constructor(error) {
    this.error = error;
  }
}

/** @type {(info: HandlerInfo, reason: unknown) => void} */
let abortHandler;

/**
 * What a handler receives beside its input. Its `signal` is made when first read (most
 * handlers never do); it aborts on the call's timeout and on the caller's abort.
 */
class HandlerInfo {
  /** @type {AbortController | null} */
  #ac = null;
  /** @type {AbortSignal | undefined} */
  #outer;
  static {
    abortHandler = (info, reason) => info.#ac?.abort(reason);
  }
  /**
   * @param {CallStep} a the core's `invoke` step
   * @param {Unchecked} ctx the call's options
   * @param {AbortSignal | undefined} signal
   */
  constructor(a, ctx, signal) {
    this.contract = a.contract;
    this.version = a.version;
    this.attempt = a.attempt;
    this.idempotencyKey = a.idempotency_key ?? null;
    this.traceId = a.trace_id;
    this.surface = ctx.surface;
    this.user = ctx.user;
    this.session = ctx.session ?? null;
    this.tenant = ctx.tenant ?? null;
    this.#outer = signal;
  }
  /** Aborts when the call times out or the caller aborts. */
  get signal() {
    if (this.#ac === null) {
      const ac = new AbortController();
      this.#ac = ac;
      const outer = this.#outer;
      if (outer) outer.addEventListener('abort', () => ac.abort(outer.reason), { once: true });
    }
    return this.#ac.signal;
  }
}

/** The gateway every call goes through (see `createGateway`). */
export class Gateway {
  /** @type {ContractRegistry} */
  #registry;
  /** @type {Record<string, Function>} */
  #handlers;
  /** @type {StatePort} */
  #state;
  /** @type {Function} */
  #now;
  /** @type {Function} */
  #random;
  /** @type {GatewayRecord[]} */
  #records = [];
  /** @type {number} */
  #max;
  /** @type {Function | null} */
  #onRecord;
  /** @type {string} */
  #prefix;
  #seq = 0;
  #deadlines = new Deadlines();
  /** @param {import('../composer.js').GatewayOptions} options */
  constructor(options) {
    const { registry, handlers = {}, state = memoryState(), now = clock, random = Math.random, maxRecords = GATEWAY_MAX_RECORDS, onRecord } = __opts(options, 'createGateway()');
    if (!(registry instanceof ContractRegistry)) throw new PromptloomError('InvalidOptions', 'createGateway() takes `registry`, a ContractRegistry (at registry)', { path: 'registry' });
    if (handlers === null || typeof handlers !== 'object') throw new PromptloomError('InvalidOptions', '`handlers` maps contract names (or `name@version`) to async functions (at handlers)', { path: 'handlers' });
    for (const [k, h] of Object.entries(handlers)) if (typeof h !== 'function') throw new PromptloomError('InvalidOptions', `the handler of \`${k}\` is not a function (at handlers.${k})`, { path: `handlers.${k}` });
    if (!state || (state.kind !== 'memory' && typeof state.transact !== 'function')) throw new PromptloomError('InvalidOptions', '`state` is memoryState(), indexedDbState(), durableObjectState() or `{ transact(keys, op, now) }` (at state)', { path: 'state' });
    for (const [k, f] of /** @type {[string, unknown][]} */ ([['now', now], ['random', random]])) if (typeof f !== 'function') throw new PromptloomError('InvalidOptions', `\`${k}\` must be a function (at ${k})`, { path: k });
    this.#registry = registry;
    this.#handlers = handlers;
    this.#state = state;
    this.#now = now;
    this.#random = random;
    this.#max = __num(maxRecords, 'maxRecords', { integer: true, min: 0 });
    if (onRecord !== undefined && onRecord !== null) __fn(onRecord, 'onRecord');
    this.#onRecord = typeof onRecord === 'function' ? onRecord : null;
    // Trace ids (the core's rule): 64 random bits per gateway, then the call's number.
    this.#prefix = hex(random).slice(0, 16);
  }

  /** The host clock, read once per use: epoch milliseconds, or `AdapterFailed` naming `now`. */
  #clock() {
    const t = __host(this.#now, 'now');
    if (typeof t !== 'number' || !Number.isFinite(t)) throw new PromptloomError('AdapterFailed', `\`now\` must answer epoch milliseconds (got ${typeof t}) (at now)`, { path: 'now', callback: 'now' });
    return t;
  }

  /** The registry. */
  get registry() {
    return this.#registry;
  }

  /**
   * @param {string} contract
   * @param {string} version
   * @returns {Function | undefined}
   */
  #handler(contract, version) {
    const h = this.#handlers;
    const v = `${contract}@${version}`;
    return Object.hasOwn(h, v) ? h[v] : Object.hasOwn(h, contract) ? h[contract] : undefined;
  }

  /**
   * Calls contract `name` with `input` as `{ surface, user, session?, tenant?, tier?,
   * flags?, version?, scope?, signal? }` → its output, or a PromptloomError with a typed
   * code (`InvalidInput`, `CapabilityDenied`, `RateLimited`, `CircuitOpen`, `InFlight`,
   * `Timeout`, `HandlerFailed`, `InvalidOutput`, `Sunset`, `NotFound`, `NoHandler`,
   * `Aborted`).
   * @param {string} name
   * @param {unknown} input
   * @param {import('../composer.js').CallOptions} options
   * @returns {Promise<any>} the handler's output (checked against the contract's output schema)
   */
  async call(name, input, options) {
    const { signal, ...ctx } = __opts(options, 'gateway.call()');
    name = __str(name, 'name');
    __signal(signal);
    const inputText = __json(input ?? null, 'the input', 'InvalidInput', { text: false, nullable: true, path: 'input' });
    const ctxText = __json(ctx, 'the call options');
    if (!Object.hasOwn(this.#handlers, name) && !Object.keys(this.#handlers).some((k) => k.startsWith(`${name}@`)) && this.#registry.has(name)) {
      throw new PromptloomError('NoHandler', `no handler is registered for contract \`${name}\` (pass it in createGateway({ handlers }))`, { contract: name });
    }
    const Core = coreClass('GatewayCall');
    this.#seq += 1;
    const c = call(() => new Core(this.#registry.__inner, name, inputText, ctxText, this.#prefix, this.#seq));
    const mem = this.#state.kind === 'memory' ? this.#state.__inner : null;
    const step = (/** @type {() => string} */ f) => JSON.parse(call(f));
    try {
      /** @type {CallStep} */
      let a = step(() => (mem ? c.startIn(mem, this.#clock()) : c.start(this.#clock())));
      for (;;) {
        if (a.do === 'transact') {
          /** @type {unknown} */
          let result;
          try {
            // A port without `transact` is the memory port, whose transactions the core runs.
            result = await /** @type {NonNullable<StatePort['transact']>} */ (this.#state.transact)(a.keys, a.op, this.#clock());
          } catch (e) {
            throw e instanceof PromptloomError ? e : Object.assign(new PromptloomError('StoreFailed', `the gateway state port failed: ${__said(e)} (at state)`, { path: 'state' }), { cause: e });
          }
          const resultText = __json(result ?? null, "the state port's answer", 'StoreFailed', { text: false, nullable: true, path: 'state' });
          a = step(() => c.applied(resultText, this.#clock()));
        } else if (a.do === 'invoke') {
          a = await this.#invoke(c, a, ctx, signal, mem);
        } else if (a.do === 'sleep') {
          const r = await wait(a.ms, signal);
          a = step(() => (mem ? c.eventIn(mem, r === ABORTED ? 'aborted' : 'woke', '', this.#clock()) : c.event(r === ABORTED ? 'aborted' : 'woke', '', this.#clock())));
        } else {
          if (this.#max > 0 || this.#onRecord) this.#keep(JSON.parse(call(() => c.record())));
          if (a.do === 'done') return a.output;
          throw new PromptloomError(a.error.code, a.error.message, a.error.details);
        }
      }
    } finally {
      try { c.free(); } catch { /* a replaced instance */ }
    }
  }

  /**
   * Runs the handler the core asked for: its result, its failure, the deadline or the
   * caller's abort, whichever comes first, as the core's next step.
   * @param {any} c wasm-bindgen's GatewayCall
   * @param {CallStep} a the `invoke` step
   * @param {Unchecked} ctx the call's options
   * @param {AbortSignal | undefined} signal
   * @param {any} mem the memory port's core, or null
   * @returns {Promise<CallStep>}
   */
  async #invoke(c, a, ctx, signal, mem) {
    const ev = (/** @type {string} */ kind, failure = '') => JSON.parse(call(() => (mem ? c.eventIn(mem, kind, failure, this.#clock()) : c.event(kind, failure, this.#clock()))));
    const h = this.#handler(a.contract, a.version);
    if (!h) return ev('failed', JSON.stringify({ code: 'NoHandler', message: `no handler for ${a.contract}@${a.version}`, retryable: false }));
    if (signal?.aborted) return ev('aborted');
    const info = new HandlerInfo(a, ctx, signal);
    /** @type {{ at: number, fire: () => void } | undefined} */
    let deadline;
    /** @type {(() => void) | undefined} */
    let stop;
    // One promise settles with the handler's result, its failure, the deadline or the
    // caller's abort, whichever comes first.
    const out = await new Promise((resolve) => {
      deadline = this.#deadlines.add(Date.now() + a.timeout_ms, () => resolve(TIMEOUT));
      if (signal) {
        stop = () => resolve(ABORTED);
        signal.addEventListener('abort', stop, { once: true });
      }
      try {
        Promise.resolve(h(a.input, info)).then(resolve, (e) => resolve(new Threw(e)));
      } catch (e) {
        resolve(new Threw(e));
      }
    });
    this.#deadlines.remove(deadline);
    if (stop) signal?.removeEventListener('abort', stop);
    if (out === TIMEOUT) {
      abortHandler(info, new PromptloomError('Timeout', `${a.contract}@${a.version} ran past ${a.timeout_ms} ms`, {}));
      return ev('timed-out');
    }
    if (out === ABORTED) {
      abortHandler(info, signal?.reason);
      return ev('aborted');
    }
    if (out instanceof Threw) {
      if (signal?.aborted) return ev('aborted');
      return ev('failed', failureOf(out.error));
    }
    /** @type {string} */
    let text;
    try {
      text = JSON.stringify(out === undefined ? null : out);
    } catch (e) {
      return ev('failed', JSON.stringify({ message: `the handler's output cannot be written as JSON: ${__said(e)}`, retryable: false }));
    }
    const answer = call(() => (mem ? c.outputIn(mem, text, this.#clock()) : c.output(text, this.#clock())));
    // The usual answer: done, with the output as the handler gave it (read back from its
    // JSON, so the caller never shares the handler's object).
    if (answer === ECHO) return { do: 'done', output: JSON.parse(text) };
    const next = JSON.parse(answer);
    if (next.echo) next.output = JSON.parse(text);
    return next;
  }

  /** @param {GatewayRecord} record */
  #keep(record) {
    if (this.#max > 0) {
      this.#records.push(record);
      if (this.#records.length > this.#max) this.#records.splice(0, this.#records.length - this.#max);
    }
    if (this.#onRecord) {
      try { this.#onRecord(record); } catch { /* an observer never breaks a call */ }
    }
  }

  /** The observability records kept (newest last; `maxRecords`, default 10,000). */
  records() {
    return this.#records.slice();
  }

  /** The kept records as OpenTelemetry (OTLP/JSON) spans. */
  otel() {
    return recordsToOtel(this.#records);
  }

  /**
   * Registration's handler check: a synthetic input (the contract's first example, else one
   * generated from its input schema) through each contract's handler (`name` for one; every
   * version otherwise); any output outside the output schema fails with `InvalidContract`
   * and every problem. Returns what was checked.
   * @param {string | null} [name]
   * @param {import('../index.js').LongRunOptions} [options]
   */
  async verify(name, options) {
    const run = __longRun(__opts(options, 'verify()'), 'verify()');
    /** @type {Unchecked[]} what to check, one per contract version */
    const targets = JSON.parse(call(() => this.#registry.__inner.verifyTargets(name == null ? '' : __str(name, 'name'))));
    /** @type {unknown[]} */
    const results = [];
    for (const [i, t] of targets.entries()) {
      run.stop();
      run.tell('checking', i, targets.length);
      const h = this.#handler(t.name, t.version);
      if (t.input === null) results.push(t);
      else if (!h) results.push({ ...t, no_handler: true });
      else {
        try {
          const c = t.context;
          const output = await h(t.input, { contract: c.contract, version: c.version, attempt: c.attempt, idempotencyKey: c.idempotency_key, traceId: c.trace_id, synthetic: c.synthetic, signal: run.signal ?? new AbortController().signal });
          results.push({ ...t, context: undefined, output: output === undefined ? null : output });
        } catch (e) {
          results.push({ ...t, error: __said(e) });
        }
      }
    }
    run.tell('checked', targets.length, targets.length);
    return JSON.parse(call(() => this.#registry.__inner.verifyReport(__json(results, 'the check results', 'InvalidRequest', { text: false }))));
  }

  /**
   * Pattern A: each step's input from the previous output (`input: (prev) => …`) → every output.
   * @param {import('../composer.js').GatewayStep[]} steps
   * @param {import('../composer.js').CallOptions} options
   * @returns {Promise<unknown[]>}
   */
  async sequence(steps, options) {
    const list = gatewaySteps(steps, 'sequence()', true);
    __opts(options, 'sequence()');
    /** @type {unknown[]} */
    const outs = [];
    /** @type {unknown} */
    let prev;
    for (const [i, s] of list.entries()) {
      const input = typeof s.input === 'function' ? await __hostAsync(s.input, `steps[${i}].input`, prev, outs.slice()) : s.input;
      prev = await this.call(s.name, input, { ...options, ...s.options });
      outs.push(prev);
    }
    return outs;
  }

  /**
   * Pattern B: independent calls at once (latency = the slowest) → outputs, or the first
   * error. Every call is checked before any starts, and every call is waited for (one that
   * fails never leaves the others' failures unobserved).
   * @param {import('../composer.js').GatewayStep[]} calls
   * @param {import('../composer.js').CallOptions} options
   * @returns {Promise<unknown[]>}
   */
  async parallel(calls, options) {
    const list = gatewaySteps(calls, 'parallel()', false);
    __opts(options, 'parallel()');
    const settled = await Promise.allSettled(list.map((s) => this.call(s.name, s.input, { ...options, ...s.options })));
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  }

  /**
   * Pattern C: a cheap classifier first, then the call `route(output)` picks (null: none).
   * @param {import('../composer.js').GatewayStep} classify
   * @param {(label: unknown) => import('../composer.js').GatewayStep | null | Promise<import('../composer.js').GatewayStep | null>} route
   * @param {import('../composer.js').CallOptions} options
   */
  async conditional(classify, route, options) {
    const [first] = gatewaySteps([classify], 'conditional()', false, 'classify');
    if (typeof route !== 'function') throw new PromptloomError('InvalidOptions', 'conditional() takes `route`, a function from the label to the next step or null (at route)', { path: 'route' });
    __opts(options, 'conditional()');
    const label = await this.call(first.name, first.input, { ...options, ...first.options });
    const picked = await __hostAsync(route, 'route', label);
    if (picked === null || picked === undefined) return { label, output: null, called: null };
    const [next] = gatewaySteps([picked], 'the step `route` answered', false, 'route()');
    return { label, output: await this.call(next.name, next.input, { ...options, ...next.options }), called: next.name };
  }

  /**
   * Pattern D: starts a call now; `cancel()` aborts it (the handler's signal fires) and its
   * result is ignored; `result` settles with the output, or `Aborted` once cancelled.
   * @param {string} name
   * @param {unknown} input
   * @param {import('../composer.js').CallOptions} options
   */
  speculate(name, input, options) {
    const { signal, ...rest } = __opts(options, 'speculate()');
    __str(name, 'name');
    __signal(signal);
    const ac = new AbortController();
    signal?.addEventListener('abort', () => ac.abort(signal.reason), { once: true });
    const result = this.call(name, input, /** @type {import('../composer.js').CallOptions} */ ({ ...rest, signal: ac.signal }));
    result.catch(() => {}); // an ignored speculation never rejects unhandled
    return { result, cancel: () => ac.abort(new PromptloomError('Aborted', 'the speculative call was cancelled', {})) };
  }
}

/**
 * The steps of a composition pattern, each read once: `{ name, input?, options? }` (the
 * input a function in a sequence). Anything else is a coded error naming the step.
 * @param {unknown} steps
 * @param {string} what
 * @param {boolean} inputFn
 * @param {string} [path]
 * @returns {{ name: string, input: Unchecked, options: Unchecked }[]}
 */
function gatewaySteps(steps, what, inputFn, path = 'steps') {
  const list = path === 'steps' ? __list(steps, 'steps') : /** @type {unknown[]} */ (steps);
  return list.map((/** @type {Unchecked} */ s, /** @type {number} */ i) => {
    const at = path === 'steps' ? `steps[${i}]` : path;
    if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new PromptloomError('InvalidOptions', `${what}: each step is \`{ name, input?, options? }\` (got ${s === null ? 'null' : Array.isArray(s) ? 'an array' : typeof s}) (at ${at})`, { path: at });
    const { name, input, options } = s;
    __str(name, `${at}.name`);
    if (typeof input === 'function' && !inputFn) throw new PromptloomError('InvalidOptions', `${what}: a step's input is a value here (a function only in sequence()) (at ${at}.input)`, { path: `${at}.input` });
    if (options !== undefined) __opts(options, `${at}.options`);
    return { name, input, options };
  });
}

/**
 * The invocation gateway: `{ registry, handlers, state?, now?, random?, maxRecords?,
 * onRecord? }`. Handlers are `async (input, { contract, version, attempt, idempotencyKey,
 * traceId, signal, surface, user, session, tenant }) => output`, by contract name or
 * `name@version`; throw an error with `code` (a declared error code), `status` or
 * `retryable` to fail.
 * @param {import('../composer.js').GatewayOptions} options
 */
export function createGateway(options) {
  return new Gateway(options);
}
