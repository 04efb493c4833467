// The page's side of a relayed answer: `readEventStream(response)` reads the event stream a
// server wrote with `stream.toResponse()` into the same events and the same final turn the
// server's parser gave. The protocol's rules are the core's (src/event_stream.rs); this file
// only moves bytes in and events out.

import { PromptloomError, __fromCore, __module, __glue, __onCall, __onBytes, __opts, __signal, __release, __host } from './api.js';
import { ResponseStream, __aborted } from './response-stream.js';
import { __objects } from './response.js';
import { ERROR_CODES, EVENT_STREAM_RUN_HEADER } from './constants.js';

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').ResponseTurn} ResponseTurn */
/** @typedef {import('../index.js').Provider} Provider */

/**
 * The error of a server's answer that is not an event stream (its HTTP status said so):
 * the server's own `{ code, message }` when it sent one, else `AdapterFailed`.
 * @param {Response} res
 */
async function refusal(res) {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // the body broke off: the status is all there is
  }
  /** @type {Unchecked} */
  let said = null;
  try {
    said = JSON.parse(text);
  } catch {
    // not JSON
  }
  const details = { status: res.status, retryable: res.status >= 500 || res.status === 429 };
  if (said && typeof said === 'object' && (/** @type {readonly string[]} */ (ERROR_CODES)).includes(said.code) && typeof said.message === 'string') {
    return __fromCore(JSON.stringify({ code: said.code, message: said.message, details: { ...(said.details && typeof said.details === 'object' ? said.details : {}), ...details } }));
  }
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new PromptloomError('AdapterFailed', `the server answered ${res.status}${excerpt ? `: ${excerpt}` : ''}`, details);
}

/** @param {Unchecked} s */
const kind = (s) => (s !== null && typeof s === 'object' && typeof s.getReader === 'function' ? 'stream' : s !== null && typeof s === 'object' && typeof s.status === 'number' && 'body' in s ? 'response' : null);
/** @param {Unchecked} s */
const isLater = (s) => s !== null && typeof s === 'object' && typeof s.then === 'function';

/**
 * The body of one connection (a Response, a Promise of one, or a stream): a Response that
 * is not a stream throws what the server said.
 * @param {Unchecked} from
 * @param {ResponseStream} stream
 * @param {boolean} first the first connection (its status is the stream's)
 * @returns {Promise<ReadableStream<Uint8Array> | null>}
 */
async function bodyOf(from, stream, first) {
  if (isLater(from)) {
    try {
      from = await from;
    } catch (e) {
      throw e instanceof PromptloomError ? e : new PromptloomError('AdapterFailed', `the request failed: ${e && /** @type {Unchecked} */ (e).message ? /** @type {Unchecked} */ (e).message : e}`, { retryable: true });
    }
    if (kind(from) === null) throw notSource();
  }
  if (kind(from) === 'stream') return from;
  if (first) stream.status = from.status;
  if (!from.ok) throw await refusal(from);
  return from.body;
}

/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

function notSource() {
  return new PromptloomError('InvalidOptions', 'readEventStream() takes a Response, a Promise of one (`fetch(…)`) or a ReadableStream of bytes (at source)', { path: 'source' });
}

/**
 * Reads an event stream a server wrote (`stream.toResponse()`, or the bytes of
 * `toReadableStream()`): a ResponseStream with the same events, the same final turn and the
 * same errors as the server's adapter gave. A stream cut before its end throws
 * `StreamTruncated` with the turn read so far (`error.turn`); `lastEventId` is the last
 * event read whole. With `reconnect(lastEventId)`, a connection that breaks before the turn
 * is picked up again: it answers the server's replay from that id (a server that kept the
 * stream in an `EventStreamLog`), up to `retries` times (default 3), and the page sees one
 * stream, each event once.
 * @param {Unchecked} source a `Response`, a Promise of one, or a `ReadableStream<Uint8Array>`
 * @param {{ signal?: AbortSignal, reconnect?: (lastEventId: string | undefined) => unknown, retries?: number }} [options]
 * @returns {ResponseStream}
 */
export function readEventStream(source, options) {
  const { signal, reconnect, retries = 3 } = __opts(options, 'readEventStream()');
  __signal(signal);
  if (reconnect !== undefined && typeof reconnect !== 'function') {
    throw new PromptloomError('InvalidOptions', '`reconnect` must be a function answering the server\'s replay (a Response, a Promise of one, or a ReadableStream) (at reconnect)', { path: 'reconnect' });
  }
  if (!Number.isInteger(retries) || retries < 0) throw new PromptloomError('InvalidOptions', '`retries` must be a non-negative integer (at retries)', { path: 'retries' });
  if (!isLater(source) && kind(source) === null) throw notSource();
  const inner = new AbortController();
  if (signal) {
    if (signal.aborted) inner.abort(signal.reason);
    else signal.addEventListener('abort', () => inner.abort(signal.reason), { once: true });
  }
  const glue = __glue();
  /** @type {import('./response-stream.js').Produce} */
  const produce = async (stream, emit) => {
    const sig = inner.signal;
    if (sig.aborted) throw __aborted(sig);
    /** @type {any} wasm-bindgen's EventStreamReaderCore */
    const core = __onCall(glue, () => new (__module().EventStreamReaderCore)());
    /** @type {any} the JSON answer so far */
    let object;
    /** @param {string} json */
    const take = (json) => {
      if (json === '[]') return;
      const evs = JSON.parse(json);
      object = __objects(object, evs);
      emit(evs);
    };
    const push = (/** @type {number} */ len) => core.pushInbox(len);
    /**
     * What the stream said so far (the turn, its error, the provider, the last event id).
     * @returns {{ turn: ResponseTurn, error: { code: string } | null, provider: Provider | null, last_event_id: string | null }}
     */
    const said = () => JSON.parse(__onCall(glue, () => core.state()));
    // While the stream goes on, `lastEventId` asks the reader (when it ends, it is fixed).
    stream.__eventId(() => __onCall(glue, () => core.lastEventId()) ?? undefined);
    /** @type {ReadableStreamDefaultReader<Uint8Array> | null} */
    let reader = null;
    const onAbort = () => reader?.cancel(sig.reason).catch(() => {});
    sig.addEventListener('abort', onAbort, { once: true });
    try {
      let from = source;
      for (let attempt = 0; ; attempt++) {
        // The body of this connection: a refused first request throws its code; a refused
        // reconnect ends the stream where it broke.
        /** @type {ReadableStream<Uint8Array> | null} */
        let body;
        try {
          body = await bodyOf(from, stream, attempt === 0);
        } catch (e) {
          if (sig.aborted) throw __aborted(sig, attempt > 0 ? said().turn : undefined);
          if (attempt === 0) throw e;
          break;
        }
        stream.attempts = attempt + 1;
        reader = body ? body.getReader() : null;
        if (reader) {
          for (;;) {
            let step;
            try {
              step = await reader.read();
            } catch (e) {
              if (sig.aborted) throw __aborted(sig, said().turn);
              break; // the connection broke: reconnect, or the core reports the cut stream
            }
            if (sig.aborted) throw __aborted(sig, said().turn);
            if (step.done) break;
            take(__onBytes(glue, push, step.value, 'chunk'));
            if (stream.provider === undefined) stream.provider = said().provider ?? undefined;
          }
        }
        // Whole, or nothing to reconnect with: the end. Else the server's replay from the
        // last event read (the core skips what was read already).
        if (!reconnect || attempt >= retries || __onCall(glue, () => core.complete())) break;
        __onCall(glue, () => core.reconnect());
        const id = __onCall(glue, () => core.lastEventId()) ?? undefined;
        try {
          from = __host(reconnect, 'reconnect', id);
        } catch (e) {
          break;
        }
        if (!isLater(from) && kind(from) === null) break;
      }
      take(__onCall(glue, () => core.end()));
      const { turn, error } = said();
      if (error && error.code !== 'InvalidToolInput') {
        const e = __fromCore(JSON.stringify(error));
        /** @type {any} */ (e).turn = turn;
        throw e;
      }
      return turn;
    } finally {
      sig.removeEventListener('abort', onAbort);
      // Fixed before the reader goes: the last event read whole.
      stream.__eventId(__onCall(glue, () => core.lastEventId()) ?? undefined);
      __release(core);
    }
  };
  return new ResponseStream(produce, (/** @type {Error} */ why) => inner.abort(why));
}

/**
 * The server's copy of an event stream, for pages that reconnect: `record(readable)` passes
 * the stream on (to the page) and keeps its frames; `replay(lastEventId)` is what a
 * reconnecting page is sent — the `open` event, every event after that id, then the rest as
 * it comes, until the stream ends. The stream is read to its end even when the page went
 * away, so a reload finds the whole reply. Keep it where the run lives (a Durable Object, a
 * process's memory). The rules — which frames a replay sends — are the core's.
 *
 * To outlive the process (a Durable Object evicted between the reply and a page's reload),
 * `keep(text)` is given each piece of the recording as it comes (append it to storage), and
 * `new EventStreamLog({ kept })` is the log again from what was kept: it replays that, and
 * ends there (no one is recording it any more).
 */
export class EventStreamLog {
  /** @type {any} wasm-bindgen's EventStreamLogCore */
  #core;
  #glue = __glue();
  /** @type {Set<() => void>} replays waiting for more */
  #waiting = new Set();
  #closed = false;
  #recording = false;
  /** @type {((text: string) => unknown) | undefined} */
  #keep;

  /**
   * @param {{ kept?: string, keep?: (text: string) => unknown }} [options] `kept`: the text
   *   an earlier log kept (the log is that recording, ended); `keep`: called with each piece
   *   of text recorded (a Promise it answers is not awaited; a failure is ignored)
   */
  constructor(options) {
    const { kept, keep } = __opts(options, 'new EventStreamLog()');
    if (kept !== undefined && typeof kept !== 'string') throw invalid('`kept` is the text a log kept (a string)', 'kept');
    if (keep !== undefined && typeof keep !== 'function') throw invalid('`keep` must be a function taking each piece of text recorded', 'keep');
    this.#core = __onCall(this.#glue, () => new (__module().EventStreamLogCore)());
    this.#keep = keep;
    if (kept !== undefined) {
      if (kept.length > 0) __onCall(this.#glue, () => this.#core.push(kept));
      // Kept by a log that is gone: no one records the rest of it.
      this.#closed = true;
      this.#recording = true;
    }
  }

  /** Whether the recorded stream ended (its `turn`, or a failure, came). */
  get finished() {
    return this.#closed || __onCall(this.#glue, () => this.#core.finished());
  }

  #wake() {
    for (const w of this.#waiting) w();
    this.#waiting.clear();
  }

  /**
   * Keeps the frames of `readable` (what `stream.toReadableStream()` gives) and returns the
   * stream to send the page. The log reads it to its end whatever the page does.
   * @param {ReadableStream<Uint8Array>} readable
   * @returns {ReadableStream<Uint8Array>}
   */
  record(readable) {
    if (!readable || typeof readable.tee !== 'function') throw new PromptloomError('InvalidOptions', 'record() takes a ReadableStream of the event stream (`stream.toReadableStream()`) (at readable)', { path: 'readable' });
    if (this.#recording) throw new PromptloomError('InvalidRequest', 'this log records a stream already: one log per stream', {});
    this.#recording = true;
    const [page, kept] = readable.tee();
    const keep = async () => {
      const reader = kept.getReader();
      const dec = new TextDecoder();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const text = dec.decode(value, { stream: true });
          __onCall(this.#glue, () => this.#core.push(text));
          this.#wake();
          if (this.#keep && text.length > 0) this.#kept(text);
        }
      } finally {
        this.#closed = true;
        this.#wake();
      }
    };
    keep().catch(() => {});
    return page;
  }

  /** Hands `text` to `keep`; what it does is the host's (its failure is not the stream's). @param {string} text */
  #kept(text) {
    try {
      const p = /** @type {Function} */ (this.#keep)(text);
      if (isLater(p)) p.then(undefined, () => {});
    } catch {
      // the stream goes on without it
    }
  }

  /**
   * What a page that read up to event `lastEventId` is sent (none: all of it), as a stream
   * of bytes: the `open` event, the events after that one, then what comes until the end.
   * @param {string | null} [lastEventId]
   * @returns {ReadableStream<Uint8Array>}
   */
  replay(lastEventId) {
    if (lastEventId !== undefined && lastEventId !== null && typeof lastEventId !== 'string') throw new PromptloomError('InvalidOptions', '`lastEventId` must be a string (at lastEventId)', { path: 'lastEventId' });
    const enc = new TextEncoder();
    /** @type {number | null} where the text sent so far ends in the recording */
    let at = null;
    return new ReadableStream({
      pull: async (c) => {
        for (;;) {
          /** @type {string} */
          let out;
          if (at === null) out = __onCall(this.#glue, () => this.#core.since(lastEventId ?? undefined));
          else out = __onCall(this.#glue, () => this.#core.tail(at));
          // `<offset> <text>`: where the text ends in the recording, and the text.
          const sp = out.indexOf(' ');
          at = Number(out.slice(0, sp));
          const text = out.slice(sp + 1);
          if (text.length > 0) return c.enqueue(enc.encode(text));
          if (this.#closed) return c.close();
          await new Promise((r) => this.#waiting.add(/** @type {() => void} */ (r)));
        }
      },
    });
  }
}

/**
 * The page half of a relay: an adapter that posts each lowered body to `endpoint` (a
 * server that forwards it with its key and answers `stream.toResponse()`) and reads the
 * event stream back. With `reconnect` (true, or the reconnects allowed per reply; true: 3),
 * each request names its run (`x-promptloom-run: <id>`), and a connection that breaks
 * before the reply's end is picked up again: a `GET` of `endpoint` with the run and its
 * `last-event-id`, which a server that kept the run in an `EventStreamLog` answers with
 * its replay.
 * @param {{ endpoint: string | URL, provider: string, headers?: Record<string, string>, fetch?: typeof fetch, reconnect?: boolean | number, nonce?: () => string }} options
 * @returns {import('../index.js').Adapter}
 */
export function relayAdapter(options) {
  const { endpoint, provider, headers = {}, fetch: f = globalThis.fetch, reconnect = false, nonce = () => globalThis.crypto.randomUUID() } = __opts(options, 'relayAdapter()');
  if (typeof endpoint !== 'string' && !(endpoint instanceof URL)) throw invalid('`endpoint` must be a URL (a string or a URL)', 'endpoint');
  if (typeof provider !== 'string') throw invalid('`provider` must name the provider the server calls', 'provider');
  if (headers === null || typeof headers !== 'object') throw invalid('`headers` must be an object of header values', 'headers');
  if (typeof f !== 'function') throw invalid('`fetch` must be a function', 'fetch');
  if (typeof reconnect !== 'boolean' && !(Number.isInteger(reconnect) && reconnect >= 0)) throw invalid('`reconnect` must be true, false or the reconnects allowed per reply', 'reconnect');
  if (typeof nonce !== 'function') throw invalid('`nonce` must be a function answering a unique string', 'nonce');
  const retries = reconnect === true ? 3 : Number(reconnect);
  /**
   * @param {string | Uint8Array | { body: string }} body
   * @param {{ signal?: AbortSignal }} [opts]
   */
  const send = (body, opts) => {
    const { signal, attach } = __opts(opts, 'send()');
    const bytes = typeof body === 'string' || body instanceof Uint8Array ? body : body && typeof body.body === 'string' ? body.body : null;
    if (bytes === null) throw new PromptloomError('InvalidRequest', 'send() takes a lowered body: a string, bytes or a Lowered (at body)', { path: 'body' });
    if (attach !== undefined && (typeof attach !== 'string' || retries === 0)) throw invalid('`attach` names a run (a string), with `reconnect`', 'attach');
    /** @type {Record<string, string>} */
    const run = retries > 0 ? { [EVENT_STREAM_RUN_HEADER]: attach ?? String(nonce()) } : {};
    // `attach`: the reply of a run the server is reading already (the page was reloaded),
    // replayed from its start instead of a new request.
    const first = attach !== undefined ? () => f(endpoint, { method: 'GET', headers: { ...headers, ...run }, signal }) : () => f(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers, ...run }, body: bytes, signal });
    const stream = readEventStream(
      Promise.resolve().then(first),
      {
        signal,
        ...(retries > 0
          ? {
              retries,
              reconnect: (/** @type {string | undefined} */ id) => f(endpoint, { method: 'GET', headers: { ...headers, ...run, ...(id === undefined ? {} : { 'last-event-id': id }) }, signal }),
            }
          : {}),
      },
    );
    if (retries > 0) stream.run = run[EVENT_STREAM_RUN_HEADER];
    return stream;
  };
  return {
    provider: /** @type {any} */ (provider),
    model: undefined,
    url: String(endpoint),
    send,
    generate: (body, opts) => send(body, opts).turn,
  };
}
