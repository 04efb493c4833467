// The response side: the glue only moves bytes into wasm and events out of it; every rule
// about SSE, provider events, usage, stop reasons and errors is in the core (src/response).

import { PromptloomError, __module, __fromCore, __withBytes, __str, __core, __opts, __json, providers, __bytesOf, __release, __disposable, __call, __on, __onCall, __onBytes, __glue } from './api.js';

const NONE = /** @type {readonly any[]} */ (Object.freeze([]));
/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').ResponseTurn} ResponseTurn */
/** @typedef {import('../index.js').Provider} Provider */
/**
 * @internal `provider` checked against the targets the package knows.
 * @param {unknown} provider
 * @returns {Provider}
 */
export function __providerName(provider) {
  const p = __str(provider, 'provider');
  if (!(/** @type {readonly string[]} */ (providers)).includes(p)) {
    throw new PromptloomError('InvalidOptions', `unknown provider \`${p}\` (expected one of ${providers.join(', ')}) (at provider)`, { path: 'provider' });
  }
  return /** @type {Provider} */ (p);
}
const providerName = __providerName;

/**
 * Events JSON from the core: "[]" needs no parse.
 * @param {string} json
 * @returns {readonly any[]} the events (`ResponseEvent`s) as the core wrote them
 */
function events(json) {
  if (json === '[]') return NONE;
  const list = JSON.parse(json);
  RAW.set(list, json);
  return list;
}

/** The JSON text each list of events was parsed from (what a relay writes on as it is). */
const RAW = new WeakMap();

/**
 * @internal `a` then `b` as one list, its JSON text kept when both had theirs.
 * @param {readonly any[]} a
 * @param {readonly any[]} b
 * @returns {readonly any[]}
 */
export function __joinEvents(a, b) {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const list = a.concat(b);
  const ra = RAW.get(a);
  const rb = RAW.get(b);
  if (ra && rb) RAW.set(list, `${ra.slice(0, -1)},${rb.slice(1)}`);
  return list;
}

/**
 * @internal The JSON text `events` (a list a parser returned) was parsed from, if it was.
 * @param {readonly any[]} list
 * @returns {string | undefined}
 */
export function __rawEvents(list) {
  return RAW.get(list);
}

/**
 * A core error (its JSON wire form) as a PromptloomError.
 * @param {string | undefined} json
 */
function coreError(json) {
  return json ? __fromCore(json) : null;
}

/**
 * The start of a lowered request (its text, bytes or a Lowered), which is all the core reads
 * to learn whether a JSON answer was asked for: the settings come before the messages.
 * @param {Unchecked} request
 * @returns {string | undefined}
 */
function requestHead(request) {
  if (request === undefined) return undefined;
  if (request instanceof Uint8Array) return new TextDecoder().decode((__bytesOf(request, 'request') ?? request).subarray(0, 65536));
  const text = typeof request === 'string' ? request : request?.body;
  if (typeof text !== 'string') {
    throw new PromptloomError('InvalidOptions', '`request` must be the lowered body (a string, bytes or a Lowered) (at request)', { path: 'request' });
  }
  return text.slice(0, 65536);
}

/**
 * Reads one response of `provider`, chunk by chunk: `push(chunk)` returns the events the
 * chunk completes, `end()` the closing ones, `finish()` the assistant turn.
 */
export class ResponseParser {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's ResponseParserCore */
  #core;
  /** @type {(len: number) => string} */
  #push;
  // The instance the parser was made on: a stream read when a larger entry loads finishes there.
  /** @type {import('./instance.js').Glue} */
  #glue;
  #ended = false;
  /** @type {any} the JSON answer so far */
  #object;

  /**
   * `options.request`: the lowered request (its body text, or a Lowered). When it asked for
   * a JSON answer (`output`), the parser reads the answer as it streams: `object-delta`
   * events carry its edits and `object` (the partial object so far, one object updated in
   * place), and the turn's `metadata.object` is the whole answer parsed.
   * @param {Provider} provider
   * @param {import('../index.js').ResponseParserOptions} [options]
   */
  constructor(provider, options = {}) {
    const p = providerName(provider);
    const m = __module();
    const head = requestHead(options?.request);
    try {
      this.#core = new m.ResponseParserCore(p, head);
    } catch (e) {
      throw __fromCore(e);
    }
    this.#push = (len) => this.#core.pushInbox(len);
    this.#glue = __glue();
    this.provider = p;
  }

  /**
   * Calls the core on the parser's instance; its errors coded (one replaced after a trap: `InstanceLost`).
   * @template T
   * @param {() => T} f
   * @returns {T}
   */
  #on(f) {
    return __onCall(this.#glue, f);
  }

  /**
   * Feeds the next bytes (a Uint8Array or a string); returns the events they complete.
   * @param {Uint8Array | ArrayBuffer | ArrayBufferView | string} chunk
   */
  push(chunk) {
    return this.#objects(events(__onBytes(this.#glue, this.#push, chunk, 'chunk')));
  }

  /** The JSON answer so far (a request that asked for one), or undefined. */
  get object() {
    return this.#object;
  }

  /**
   * Applies each `object-delta`'s edits to the object so far, and hands it on the event.
   * @param {readonly any[]} evs
   */
  #objects(evs) {
    this.#object = __objects(this.#object, evs);
    return evs;
  }

  /** Ends the response; returns the events that completes (closing a cut call, usage, finish, errors). */
  end() {
    if (this.#ended) return __on(this.#glue, () => NONE); // InstanceLost after a trap
    const out = this.#on(() => this.#core.end());
    this.#ended = true;
    return this.#objects(events(out));
  }

  /** Ends the response (if `end()` was not called) and returns the assistant turn. */
  finish() {
    this.end();
    return this.turn;
  }

  /**
   * The assistant turn as read so far.
   * @returns {ResponseTurn}
   */
  get turn() {
    return JSON.parse(this.#on(() => this.#core.turnJson()));
  }

  /** The first error so far (a PromptloomError), or null. */
  get error() {
    return coreError(this.#on(() => this.#core.errorJson()));
  }

  /** Frees the wasm memory now (otherwise the garbage collector does). */
  free() {
    __release(this.#core);
  }
}

/**
 * @internal Applies each `object-delta`'s edits (in `evs`) to `object`, the JSON answer so
 * far, and sets it on the event; returns the object after them (one object updated in place).
 * @param {any} object
 * @param {readonly any[]} evs
 * @returns {any}
 */
export function __objects(object, evs) {
  for (let i = 0; i < evs.length; i++) {
    const e = evs[i];
    if (e.type !== 'object-delta') continue;
    for (const { path, set, append } of e.edits) {
      if (path.length === 0) {
        object = set;
        continue;
      }
      let at = object;
      for (let i = 0; i < path.length - 1 && at != null; i++) at = at[path[i]];
      if (at == null || typeof at !== 'object') continue;
      const k = path[path.length - 1];
      if (append !== undefined) at[k] += append;
      else at[k] = set;
    }
    e.object = object;
  }
  return object;
}

/**
 * A parser for `provider`'s responses (an SSE stream, or a whole JSON body).
 * @param {Provider} provider
 * @param {import('../index.js').ResponseParserOptions} [options]
 */
export function createResponseParser(provider, options) {
  return new ResponseParser(provider, options);
}

/**
 * Parses a whole response body (a string, bytes, or the parsed JSON object) into the
 * assistant turn (`options.request`: the lowered request, for a JSON answer's
 * `metadata.object`). A provider error body throws its code (`RateLimited`, `ProviderRejected`, …).
 * @param {Provider} provider
 * @param {unknown} body
 * @param {import('../index.js').ResponseParserOptions} [options]
 * @returns {ResponseTurn}
 */
export function parseResponse(provider, body, options = {}) {
  const p = providerName(provider);
  const text = body !== null && typeof body === 'object' && !ArrayBuffer.isView(body) && !(body instanceof ArrayBuffer) ? __json(body, 'the response body', 'InvalidOptions', { text: false, path: 'body' }) : body;
  const head = requestHead(options?.request);
  const m = __module();
  return JSON.parse(__withBytes((/** @type {number} */ len) => m.parseResponseInbox(p, len, head), text, 'body'));
}

/**
 * The PromptloomError of an HTTP error response: `{ status, body, retryAfterMs? }` (or
 * `headers`, from which `retry-after-ms` / `retry-after` are read).
 * @param {Provider} provider
 * @param {{ status: number, body?: unknown, headers?: unknown, retryAfterMs?: number }} response
 * @returns {PromptloomError}
 */
export function providerError(provider, response) {
  const p = providerName(provider);
  const { status, body = '', headers, retryAfterMs } = __opts(response, 'providerError()');
  if (retryAfterMs !== undefined && !(typeof retryAfterMs === 'number' && retryAfterMs >= 0)) {
    throw new PromptloomError('InvalidOptions', '`retryAfterMs` must be a non-negative number (at retryAfterMs)', { path: 'retryAfterMs' });
  }
  if (!Number.isInteger(status) || status < 0 || status > 65535) {
    throw new PromptloomError('InvalidOptions', '`status` must be an HTTP status (at status)', { path: 'status' });
  }
  const after = retryAfterMs ?? (headers ? __retryAfter(headers, Date.now()) : undefined);
  return __fromCore(__core('providerError', p, status, typeof body === 'string' ? body : __json(body, '`body`', 'InvalidOptions', { path: 'body' }), after ?? -1));
}

/**
 * @internal `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date) in ms; a
 * header's syntax is HTTP's, not a provider's.
 * @param {Unchecked} headers a `Headers` or a plain object of header values
 * @param {number} now epoch milliseconds
 * @returns {number | undefined}
 */
export function __retryAfter(headers, now) {
  if (headers === null || typeof headers !== 'object') return undefined;
  const get = (/** @type {string} */ k) => {
    const v = typeof headers.get === 'function' ? headers.get(k) : headers[k];

    return typeof v === 'string' ? v : undefined;
  };
  const ms = Number.parseFloat(get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = get('retry-after');
  if (raw == null) return undefined;
  const s = Number.parseFloat(raw);
  if (Number.isFinite(s) && /^\s*[\d.]+\s*$/.test(raw)) return Math.max(0, s * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}
