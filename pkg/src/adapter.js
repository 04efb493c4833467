// Model adapters: `fetch` a lowered body to a provider and read the answer with the core's
// response parser. Endpoints, headers, error codes and retry waits come from the core
// (src/transport.rs, src/response/errors.rs); this file only does the I/O, the waiting
// and the aborting. No provider SDK: `fetch` is in every host.

import { PromptloomError, __core, __fromCore, __opts, __json, __key, __signal, __bytesOf } from './api.js';
import { ResponseParser, __retryAfter, __providerName, __joinEvents } from './response.js';
import { ResponseStream, __aborted as aborted } from './response-stream.js';

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').ResponseTurn} ResponseTurn */
/** @typedef {import('../index.js').ResponseEvent} ResponseEvent */
/** @typedef {import('./response-stream.js').Emit} Emit */
/** @typedef {import('./response-stream.js').Produce} Produce */
/** One attempt's outcome. @typedef {{ turn: ResponseTurn, failure?: undefined } | { failure: PromptloomError, turn?: undefined }} Attempt */

/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/**
 * Waits `ms`, or rejects with `Aborted` when the signal fires first.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(aborted(signal));
    const t = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve(undefined);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal));
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether an event is model content (not only the response's start). */
const isContent = (/** @type {ResponseEvent} */ ev) => ev.type !== 'start';

/**
 * A model adapter for one provider:
 * `createAdapter({ provider, apiKey?, headers?, baseURL?, model?, fetch?, retry?, browser?, apiVersion? })`.
 * `send(body, { signal, onRetry })` posts the lowered body's bytes as they are and returns
 * a ResponseStream. Retries 429 / 5xx / overloaded answers (and network failures) before
 * any content arrived, honouring `retry-after`, with capped, jittered backoff.
 * @param {import('../index.js').AdapterOptions} options
 * @returns {import('../index.js').Adapter}
 */
export function createAdapter(options) {
  if (options === null || typeof options !== 'object') throw invalid('createAdapter() takes an options object', 'options');
  const { provider, apiKey, headers = {}, baseURL, model, fetch: fetchFn = globalThis.fetch, retry = {}, browser, apiVersion, stream = true, idleTimeoutMs = 120000 } = options;
  if (!(idleTimeoutMs === 0 || (typeof idleTimeoutMs === 'number' && idleTimeoutMs > 0))) throw invalid('`idleTimeoutMs` must be a positive number of milliseconds (0: none)', 'idleTimeoutMs');
  __providerName(provider);
  if (typeof fetchFn !== 'function') throw invalid('`fetch` must be a function (this host has no global fetch)', 'fetch');
  if (apiKey !== undefined && typeof apiKey !== 'string') throw invalid('`apiKey` must be a string', 'apiKey');
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw invalid('`headers` must be an object of header name → string', 'headers');
  // Read once, each value a string (a number is written as text).
  const extra = Object.entries(headers).map(([k, v]) => [k.toLowerCase(), __key(v, `headers.${k}`)]);
  for (const [k, v] of /** @type {[string, unknown][]} */ ([['baseURL', baseURL], ['model', model], ['apiVersion', apiVersion]])) {
    if (v !== undefined && v !== null && typeof v !== 'string') throw invalid(`\`${k}\` must be a string`, k);
  }
  if (retry !== undefined && (retry === null || typeof retry !== 'object' || Array.isArray(retry))) throw invalid('`retry` must be an object `{ maxRetries?, initialDelayMs?, maxDelayMs?, maxRetryAfterMs? }`', 'retry');
  // A page, or a Web Worker of one (no `window` there, but the same CORS rules): browsers say
  // `Mozilla/5.0 …` in every context; Node, Deno, Bun and workerd name themselves.
  const isBrowser = browser ?? (typeof document === 'object' || (typeof navigator === 'object' && /^Mozilla\//.test(String(navigator?.userAgent ?? ''))));
  /** The URL and headers for one (model, stream) pair, from the core; kept per pair. */
  /** @type {Map<string, { url: string, headers: Record<string, string> }>} */
  const targets = new Map();
  /**
   * @param {string | undefined} m
   * @param {boolean} st
   */
  const targetFor = (m, st) => {
    const key = `${m ?? ''}\u0000${st ? 1 : 0}`;
    let t = targets.get(key);
    if (!t) {
      /** @type {{ url: string, headers: Record<string, string> }} */
      const made = JSON.parse(__core('requestTarget', provider, __json({ base_url: baseURL, model: m, stream: !!st, api_key: apiKey, api_version: apiVersion, browser: isBrowser }, 'the adapter options', 'InvalidOptions', { text: false })));
      /** @type {Record<string, string>} */
      const h = { ...made.headers };
      for (const [k, v] of extra) h[k] = v;
      made.headers = h;
      targets.set(key, made);
      t = made;
    }
    return t;
  };
  // The adapter's own target, checked now; without a model, a provider that names it in
  // the URL (Gemini) takes it from each Lowered's `report.call`.
  /** @type {{ url: string, headers: Record<string, string> } | undefined} */
  let target;
  try {
    target = targetFor(model, stream);
  } catch (e) {
    if (!(model === undefined && e instanceof PromptloomError && e.details.path === 'model')) throw e;
    targetFor('model', stream); // the other options are still checked now
  }
  const policy = __core('retryPolicy', __json(snake(retry), '`retry`', 'InvalidOptions', { text: false, path: 'retry' }));

  /**
   * @param {Unchecked} body the lowered body: a string, bytes or a Lowered
   * @param {import('../index.js').SendOptions} [options]
   * @returns {ResponseStream}
   */
  function send(body, options) {
    const { signal, onRetry } = __opts(options, 'send()');
    __signal(signal);
    if (onRetry !== undefined && typeof onRetry !== 'function') throw invalid('`onRetry` must be a function', 'onRetry');
    // A Lowered says which model and streaming it was lowered with (`report.call`).
    let to = target;
    if (body instanceof Uint8Array) __bytesOf(body, 'body');
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
      if (!body || typeof body.body !== 'string') throw invalid('`body` must be the lowered body (a string, a Uint8Array, or a Lowered)', 'body');
      const call = body.report && body.report.call;
      if (call && ((call.model !== undefined && call.model !== model) || (call.stream !== undefined && call.stream !== !!stream))) {
        to = targetFor(call.model ?? model, call.stream ?? stream);
      }
      body = body.body;
    }
    if (!to) throw invalid(`${provider} names the model in the URL: pass \`model\` to createAdapter(), or send the Lowered of a request lowered with the \`model\` setting`, 'model');
    const url = to.url;
    const allHeaders = to.headers;
    // The consumer's signal, and the stream's own stop (a consumer that breaks off).
    const inner = new AbortController();
    const sig = inner.signal;
    if (signal) {
      if (signal.aborted) inner.abort(signal.reason);
      else signal.addEventListener('abort', () => inner.abort(signal.reason), { once: true });
    }
    /**
     * One attempt: `{ turn }`, or `{ failure }` for the retry loop to judge.
     * @param {ResponseStream} stream
     * @param {Emit} emit
     * @returns {Promise<Attempt>}
     */
    const once = async (stream, emit) => {
      // This attempt's signal: the caller's abort, or silence longer than idleTimeoutMs
      // (waiting for the answer, or between two chunks of it).
      const ctl = new AbortController();
      const onAbort = () => ctl.abort(sig.reason);
      sig.addEventListener('abort', onAbort, { once: true });
      /** @type {{ out: boolean, timer: ReturnType<typeof setTimeout> | undefined }} */
      const idle = { out: false, timer: undefined };
      const arm = () => {
        if (!idleTimeoutMs) return;
        clearTimeout(idle.timer);
        idle.timer = setTimeout(() => {
          idle.out = true;
          ctl.abort(new Error(`no bytes from ${provider} for ${idleTimeoutMs} ms`));
        }, idleTimeoutMs);
      };
      arm();
      try {
        let res;
        try {
          res = await fetchFn(url, { method: 'POST', headers: allHeaders, body, signal: ctl.signal });
        } catch (e) {
          if (sig.aborted) throw aborted(sig);
          const why = idle.out ? `no answer from ${provider} within ${idleTimeoutMs} ms` : `the request to ${provider} failed: ${e && e.message ? e.message : e}`;
          return { failure: new PromptloomError('AdapterFailed', why, { provider, retryable: true, ...(idle.out ? { timeout_ms: idleTimeoutMs } : {}) }) };
        }
        stream.status = res.status;
        if (!res.ok) {
          let text = '';
          try {
            text = await res.text();
          } catch {
            if (sig.aborted) throw aborted(sig);
          }
          return { failure: __fromCore(__core('providerError', provider, res.status, text, __retryAfter(res.headers, Date.now()) ?? -1)) };
        }
        const out = await read(res, sig, emit, arm, idle, body);
        return 'retry' in out ? { failure: out.retry } : out;
      } finally {
        clearTimeout(idle.timer);
        sig.removeEventListener('abort', onAbort);
      }
    };
    /** @type {Produce} */
    const produce = async (stream, emit) => {
      for (let attempt = 0; ; attempt++) {
        if (sig.aborted) throw aborted(sig);
        stream.attempts = attempt + 1;
        const { turn, failure } = await once(stream, emit);
        if (!failure) return /** @type {ResponseTurn} */ (turn);
        const wait = __core('retryDelay', failure.code, JSON.stringify(failure.details), attempt, Math.random(), policy);
        if (wait < 0) throw failure;
        if (typeof onRetry === 'function') onRetry({ attempt: attempt + 1, delayMs: wait, error: failure });
        await sleep(wait, sig);
      }
    };
    return new ResponseStream(produce, (/** @type {Error} */ why) => inner.abort(why), provider);
  }

  /**
   * Reads one answer, emitting events as each chunk completes them. Events wait until the
   * first content event: an error before any content (a stream that opens with
   * `overloaded_error`) is retried like an HTTP error.
   * @param {Response} res
   * @param {AbortSignal} signal
   * @param {Emit} emit
   * @param {() => void} arm restarts the idle timer
   * @param {{ out: boolean }} idle whether the idle timer fired
   * @param {string | Uint8Array} request the lowered body (a JSON answer's request)
   * @returns {Promise<{ turn: ResponseTurn } | { retry: PromptloomError }>}
   */
  async function read(res, signal, emit, arm, idle, request) {
    const parser = new ResponseParser(provider, { request });
    /** @type {readonly ResponseEvent[]} */
    let held = [];
    let content = false;
    /**
     * Emits `evs` (after the held ones); a retryable error before content: retry.
     * @param {readonly ResponseEvent[]} evs
     */
    const take = (evs) => {
      if (content) {
        if (evs.length > 0) emit(evs);
        return null;
      }
      for (let i = 0; i < evs.length; i++) {
        const ev = evs[i];
        if (!isContent(ev)) continue;
        if (ev.type === 'error' && ev.details && ev.details.retryable) return { retry: __fromCore(JSON.stringify(ev)) };
        content = true;
        emit(__joinEvents(held, evs));
        held = [];
        return null;
      }
      held = __joinEvents(held, evs);
      return null;
    };
    const reader = res.body ? res.body.getReader() : null;
    try {
      if (!reader) {
        const r = take(parser.push(new Uint8Array(await res.arrayBuffer())));
        if (r) return r;
      } else {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          arm();
          const r = take(parser.push(value));
          if (r) {
            reader.cancel().catch(() => {});
            return r;
          }
        }
      }
    } catch (e) {
      if (e instanceof PromptloomError) throw e;
      if (signal.aborted) {
        throw aborted(signal, parser.finish());
      }
      // The connection broke: before any content it is retried, after it the parser
      // reports the cut stream.
      const why = idle.out ? `${provider} sent nothing for ${idleTimeoutMs} ms` : `the answer from ${provider} broke off: ${e && e.message ? e.message : e}`;
      if (!content) return { retry: new PromptloomError('AdapterFailed', why, { provider, retryable: true, ...(idle.out ? { timeout_ms: idleTimeoutMs } : {}) }) };
    }
    const r = take(parser.end());
    if (r) return r;
    if (held.length > 0) emit(held);
    const turn = parser.finish();
    const err = parser.error;
    if (err && err.code !== 'InvalidToolInput') {
      /** @type {any} */ (err).turn = turn;
      throw err;
    }
    return { turn };
  }

  /**
   * Sends `body` and waits for the whole answer: the assistant turn (the same as
   * `send(body, options).turn`). Whether the answer streams on the wire is the request's
   * (its `stream` setting).
   * @param {Unchecked} body
   * @param {import('../index.js').SendOptions} [options]
   */
  function generate(body, options) {
    return send(body, options).turn;
  }

  return { provider, model, url: target ? target.url : undefined, send, generate };
}

/**
 * camelCase retry options to the core's snake_case.
 * @param {object} o
 */
function snake(o) {
  /** @type {Record<string, unknown>} */
  const out = {};

  for (const [k, v] of Object.entries(o)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}
