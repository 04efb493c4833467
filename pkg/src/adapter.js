// Model adapters: `fetch` a lowered body to a provider and read the answer with the core's
// response parser. Endpoints, headers, error codes and retry waits come from the core
// (src/transport.rs, src/response/errors.rs); this file only does the I/O, the waiting
// and the aborting. No provider SDK: `fetch` is in every host.

import { PromptloomError, __core, __fromCore } from './api.js';
import { ResponseParser, __retryAfter } from './response.js';

const PROVIDERS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

function aborted(signal, turn) {
  const reason = signal && signal.reason;
  const e = new PromptloomError('Aborted', `the request was aborted${reason && reason.message ? `: ${reason.message}` : ''}`, {});
  if (turn) e.turn = turn;
  return e;
}

/** Waits `ms`, or rejects with `Aborted` when the signal fires first. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(aborted(signal));
    const t = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal));
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether an event is model content (not only the response's start). */
const isContent = (ev) => ev.type !== 'start';

/**
 * One request's answer: iterate it for the normalised events; `turn` is a Promise of the
 * final assistant turn. A provider error, a cut or malformed stream, or an abort ends the
 * iteration by throwing a PromptloomError with `code` (the turn read so far is `error.turn`).
 */
export class ResponseStream {
  #source;
  #started = false;
  #done;
  #resolve;
  #reject;
  /** How many attempts the request took (retries + 1), once known. */
  attempts = 0;
  /** The HTTP status of the answer read, once known. */
  status = 0;

  constructor(source) {
    this.#source = source;
    this.#done = new Promise((res, rej) => {
      this.#resolve = res;
      this.#reject = rej;
    });
    // Nobody may ask for `turn`: a failure is reported by the iteration then.
    this.#done.catch(() => {});
  }

  async *#run() {
    try {
      const turn = yield* this.#source(this);
      this.#resolve(turn);
    } catch (e) {
      const err = e instanceof PromptloomError ? e : __fromCore(e);
      this.#reject(err);
      throw err;
    }
  }

  [Symbol.asyncIterator]() {
    if (this.#started) throw new PromptloomError('InvalidOptions', 'a response stream can be iterated once', {});
    this.#started = true;
    return this.#run();
  }

  /** The final assistant turn (reading the whole stream if nobody iterates it). */
  get turn() {
    if (!this.#started) {
      const it = this[Symbol.asyncIterator]();
      (async () => {
        for (;;) {
          const { done } = await it.next();
          if (done) return;
        }
      })().catch(() => {});
    }
    return this.#done;
  }

  /** The text of the final turn (its text parts joined). */
  async text() {
    const t = await this.turn;
    return t.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  }
}

/**
 * A model adapter for one provider:
 * `createAdapter({ provider, apiKey?, headers?, baseURL?, model?, fetch?, retry?, browser?, apiVersion? })`.
 * `send(body, { signal, onRetry })` posts the lowered body's bytes as they are and returns
 * a ResponseStream. Retries 429 / 5xx / overloaded answers (and network failures) before
 * any content arrived, honouring `retry-after`, with capped, jittered backoff.
 */
export function createAdapter(options) {
  if (options === null || typeof options !== 'object') throw invalid('createAdapter() takes an options object', 'options');
  const { provider, apiKey, headers = {}, baseURL, model, fetch: fetchFn = globalThis.fetch, retry = {}, browser, apiVersion, stream = true } = options;
  if (!PROVIDERS.includes(provider)) throw invalid(`unknown provider \`${provider}\` (expected one of ${PROVIDERS.join(', ')})`, 'provider');
  if (typeof fetchFn !== 'function') throw invalid('`fetch` must be a function (this host has no global fetch)', 'fetch');
  if (apiKey !== undefined && typeof apiKey !== 'string') throw invalid('`apiKey` must be a string', 'apiKey');
  if (headers === null || typeof headers !== 'object') throw invalid('`headers` must be an object', 'headers');
  const targetOptions = JSON.stringify({
    base_url: baseURL,
    model,
    stream: !!stream,
    api_key: apiKey,
    api_version: apiVersion,
    browser: browser ?? (typeof window === 'object' && typeof document === 'object'),
  });
  const target = JSON.parse(__core('requestTarget', provider, targetOptions));
  const allHeaders = { ...target.headers };
  for (const [k, v] of Object.entries(headers)) allHeaders[k.toLowerCase()] = String(v);
  const policy = __core('retryPolicy', JSON.stringify(retry === null || typeof retry !== 'object' ? {} : snake(retry)));

  function send(body, { signal, onRetry } = {}) {
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
      if (body && typeof body.body === 'string') body = body.body; // a Lowered
      else throw invalid('`body` must be the lowered body (a string, a Uint8Array, or a Lowered)', 'body');
    }
    return new ResponseStream(async function* (stream) {
      let attempt = 0;
      for (;;) {
        if (signal && signal.aborted) throw aborted(signal);
        stream.attempts = attempt + 1;
        let failure;
        let res;
        try {
          res = await fetchFn(target.url, { method: 'POST', headers: allHeaders, body, signal });
        } catch (e) {
          if (signal && signal.aborted) throw aborted(signal);
          failure = new PromptloomError('AdapterFailed', `the request to ${provider} failed: ${e && e.message ? e.message : e}`, { provider, retryable: true });
        }
        if (res) {
          stream.status = res.status;
          if (!res.ok) {
            let text = '';
            try {
              text = await res.text();
            } catch {
              if (signal && signal.aborted) throw aborted(signal);
            }
            failure = __fromCore(__core('providerError', provider, res.status, text, __retryAfter(res.headers, Date.now()) ?? -1));
          } else {
            const out = yield* read(res, signal);
            if (out.retry) failure = out.retry;
            else return out.turn;
          }
        }
        const wait = __core('retryDelay', failure.code, JSON.stringify(failure.details), attempt, Math.random(), policy);
        if (wait < 0) throw failure;
        if (typeof onRetry === 'function') onRetry({ attempt: attempt + 1, delayMs: wait, error: failure });
        await sleep(wait, signal);
        attempt += 1;
      }
    });
  }

  /**
   * Reads one answer. Events wait until the first content event: an error before any
   * content (a stream that opens with `overloaded_error`) is retried like an HTTP error.
   */
  async function* read(res, signal) {
    const parser = new ResponseParser(provider);
    let held = [];
    let content = false;
    const reader = res.body ? res.body.getReader() : null;
    const take = function* (evs) {
      for (const ev of evs) {
        if (!content && isContent(ev)) {
          if (ev.type === 'error' && ev.details && ev.details.retryable) return { retry: __fromCore(JSON.stringify(ev)) };
          content = true;
          yield* held;
          held = [];
        }
        if (content) yield ev;
        else held.push(ev);
      }
      return null;
    };
    try {
      if (!reader) {
        const r = yield* take(parser.push(new Uint8Array(await res.arrayBuffer())));
        if (r) return r;
      } else {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const r = yield* take(parser.push(value));
          if (r) {
            reader.cancel().catch(() => {});
            return r;
          }
        }
      }
    } catch (e) {
      if (e instanceof PromptloomError) throw e;
      if (signal && signal.aborted) throw aborted(signal, parser.finish());
      // The connection broke: before any content it is retried, after it the parser
      // reports the cut stream.
      if (!content) return { retry: new PromptloomError('AdapterFailed', `the answer from ${provider} broke off: ${e && e.message ? e.message : e}`, { provider, retryable: true }) };
    }
    const r = yield* take(parser.end());
    if (r) return r;
    yield* held;
    const turn = parser.finish();
    const err = parser.error;
    if (err && err.code !== 'InvalidToolInput') {
      err.turn = turn;
      throw err;
    }
    return { turn };
  }

  return { provider, url: target.url, send };
}

/** camelCase retry options to the core's snake_case. */
function snake(o) {
  const out = {};
  for (const [k, v] of Object.entries(o)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}
