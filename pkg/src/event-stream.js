// The page's side of a relayed answer: `readEventStream(response)` reads the event stream a
// server wrote with `stream.toResponse()` into the same events and the same final turn the
// server's parser gave. The protocol's rules are the core's (src/event_stream.rs); this file
// only moves bytes in and events out.

import { PromptloomError, __fromCore, __module, __glue, __on, __onCall, __withBytes, __opts, __signal, __release } from './api.js';
import { ResponseStream, __aborted } from './response-stream.js';
import { __objects } from './response.js';
import { ERROR_CODES } from './constants.js';

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

function notSource() {
  return new PromptloomError('InvalidOptions', 'readEventStream() takes a Response, a Promise of one (`fetch(…)`) or a ReadableStream of bytes (at source)', { path: 'source' });
}

/**
 * Reads an event stream a server wrote (`stream.toResponse()`, or the bytes of
 * `toReadableStream()`): a ResponseStream with the same events, the same final turn and the
 * same errors as the server's adapter gave. A stream cut before its end throws
 * `StreamTruncated` with the turn read so far (`error.turn`); `lastEventId` is the last
 * event read whole, for a reconnect.
 * @param {Unchecked} source a `Response`, a Promise of one, or a `ReadableStream<Uint8Array>`
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {ResponseStream}
 */
export function readEventStream(source, options) {
  const { signal } = __opts(options, 'readEventStream()');
  __signal(signal);
  const kind = (/** @type {Unchecked} */ s) =>
    s !== null && typeof s === 'object' && typeof s.getReader === 'function' ? 'stream' : s !== null && typeof s === 'object' && typeof s.status === 'number' && 'body' in s ? 'response' : null;
  const later = source !== null && typeof source === 'object' && typeof source.then === 'function';
  if (!later && kind(source) === null) throw notSource();
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
    // A Promise of a Response (`readEventStream(fetch(…))`): its rejection is the request's.
    if (later) {
      try {
        source = await source;
      } catch (e) {
        if (sig.aborted) throw __aborted(sig);
        throw e instanceof PromptloomError ? e : new PromptloomError('AdapterFailed', `the request failed: ${e && /** @type {Unchecked} */ (e).message ? /** @type {Unchecked} */ (e).message : e}`, { retryable: true });
      }
      if (kind(source) === null) throw notSource();
    }
    /** @type {ReadableStream<Uint8Array> | null} */
    let body = source;
    if (kind(source) === 'response') {
      stream.status = source.status;
      if (!source.ok) throw await refusal(source);
      body = source.body;
    }
    stream.attempts = 1;
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
    const said = () => {
      const s = JSON.parse(__onCall(glue, () => core.state()));
      return s;
    };
    // While the stream goes on, `lastEventId` asks the reader (when it ends, it is fixed).
    stream.__eventId(() => __onCall(glue, () => core.lastEventId()) ?? undefined);
    const reader = body ? body.getReader() : null;
    const onAbort = () => reader?.cancel(sig.reason).catch(() => {});
    sig.addEventListener('abort', onAbort, { once: true });
    try {
      if (reader) {
        for (;;) {
          let step;
          try {
            step = await reader.read();
          } catch (e) {
            if (sig.aborted) throw __aborted(sig, said().turn);
            break; // the connection broke: the core reports the cut stream
          }
          if (sig.aborted) throw __aborted(sig, said().turn);
          if (step.done) break;
          take(__on(glue, () => __withBytes(push, step.value, 'chunk')));
          if (stream.provider === undefined) stream.provider = said().provider ?? undefined;
        }
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
