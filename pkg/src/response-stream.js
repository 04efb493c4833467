// One request's answer as the consumer sees it: the events in a queue, the final turn, and
// the event stream a server sends a page (`toResponse()`, written by the core's
// src/event_stream.rs). What fills it is an adapter's request or a page's `readEventStream`.

import { PromptloomError, __fromCore, __module, __glue, __onCall, __release, __opts } from './api.js';
import { EVENT_STREAM_CONTENT_TYPE } from './constants.js';
import { __rawEvents } from './response.js';

/** @typedef {import('../index.js').ResponseTurn} ResponseTurn */
/** @typedef {import('../index.js').ResponseEvent} ResponseEvent */
/** Hands a batch of events to the stream's consumer. @typedef {(events: readonly ResponseEvent[]) => void} Emit */
/**
 * What makes one request's answer: it runs the attempts and resolves with the final turn.
 * @typedef {(stream: ResponseStream, emit: Emit) => Promise<ResponseTurn>} Produce
 */

/**
 * @internal The `Aborted` error of `signal`.
 * @param {AbortSignal | undefined} signal
 * @param {ResponseTurn} [turn] what was read before the abort
 */
export function __aborted(signal, turn) {
  const reason = signal && signal.reason;
  const e = new PromptloomError('Aborted', `the request was aborted${reason && reason.message ? `: ${reason.message}` : ''}`, {});
  // `turn` (typed in index.d.ts) is set only on adapter and parser errors.
  if (turn) /** @type {any} */ (e).turn = turn;
  return e;
}

/** What a `toResponse()` says of its body. */
const EVENT_STREAM_HEADERS = [
  ['content-type', EVENT_STREAM_CONTENT_TYPE],
  ['cache-control', 'no-cache, no-transform'],
  ['x-accel-buffering', 'no'],
];

const DONE = Object.freeze({ value: undefined, done: true });
/**
 * The consumer of `__consume`: what takes each event, and the Promise it is answered.
 * @typedef {{ take: (ev: ResponseEvent) => unknown, resolve: (turn: Promise<ResponseTurn>) => void, reject: (e: unknown) => void, busy: boolean }} Sink
 */

/**
 * One request's answer: iterate it for the normalised events; `turn` is a Promise of the
 * final assistant turn. A provider error, a cut or malformed stream, or an abort ends the
 * iteration by throwing a PromptloomError with `code` (the turn read so far is `error.turn`).
 * The request starts when the stream is first iterated or `turn` is read; events wait in
 * a queue until the consumer takes them (one Promise per event, no generator chain).
 */
export class ResponseStream {
  /** @type {Produce} */
  #produce;
  /** @type {(why: Error) => void} */
  #stop;
  #started = false;
  #iterated = false;
  // Batches of events as the parser completed them (one per network chunk), and where
  // the event iteration is in the first one.
  /** @type {(readonly ResponseEvent[])[]} */
  #queue = [];
  #pos = 0;
  /** @type {((value?: any) => void) | null} */
  #wake = null;
  /** @type {Sink | null} the consumer that takes each event as it comes (`__consume`) */
  #sink = null;
  #finished = false;
  /** @type {PromptloomError | null} */
  #failure = null;
  /** @type {Promise<ResponseTurn>} */
  #done;
  /** @type {(turn: ResponseTurn) => void} */
  #resolve = () => {};
  /** @type {(error: PromptloomError) => void} */
  #reject = () => {};
  /** How many attempts the request took (retries + 1), once known. */
  attempts = 0;
  /** The HTTP status of the answer read, once known. */
  status = 0;
  /**
   * The provider whose answer this is (a page's `readEventStream`: once the stream said).
   * @type {import('../index.js').Provider | undefined}
   */
  provider;
  /**
   * From `relayAdapter` with `reconnect`: the run the reply belongs to.
   * @type {string | undefined}
   */
  run;
  /** @type {string | undefined | (() => string | undefined)} the last event id, or what reads it while the stream goes on */
  #eventId;

  /**
   * A stream read with `readEventStream`: the id of the last event read whole, as it goes
   * and once it ended or failed (what a reconnect asks to resume after).
   * @returns {string | undefined}
   */
  get lastEventId() {
    return typeof this.#eventId === 'function' ? this.#eventId() : this.#eventId;
  }

  /**
   * @internal Sets the last event id, or the function that reads it while the stream goes on.
   * @param {string | undefined | (() => string | undefined)} v
   */
  __eventId(v) {
    this.#eventId = v;
  }

  /**
   * @param {Produce} produce
   * @param {(why: Error) => void} stop cancels the request
   * @param {import('../index.js').Provider} [provider]
   */
  constructor(produce, stop, provider) {
    this.#produce = produce;
    this.#stop = stop;
    this.provider = provider;
    this.#done = new Promise((res, rej) => {
      this.#resolve = res;
      this.#reject = rej;
    });
    // Nobody may ask for `turn`: a failure is reported by the iteration then.
    this.#done.catch(() => {});
  }

  #start() {
    if (this.#started) return;
    this.#started = true;
    /** @type {Emit} */
    const emit = (evs) => {
      if (evs.length === 0) return;
      // A sink that takes events as they come, and none waiting: handed over now.
      if (this.#sink && this.#queue.length === 0) return this.#handOver(evs);
      this.#queue.push(evs);
      this.#notify();
    };
    let run;
    try {
      run = Promise.resolve(this.#produce(this, emit));
    } catch (e) {
      run = Promise.reject(e);
    }
    run.then(
      (turn) => {
        this.#finished = true;
        this.#resolve(turn);
        this.#notify();
      },
      (e) => {
        const err = e instanceof PromptloomError ? e : __fromCore(e);
        this.#finished = true;
        this.#failure = err;
        this.#reject(err);
        this.#notify();
      },
    );
  }

  /**
   * Settles the consumer's waiting `next()` with the result ready now, if one is; or hands
   * the events to the consumer that takes them as they come (`__consume`).
   */
  #notify() {
    if (this.#sink) return this.#pump();
    const w = this.#wake;
    if (w) {
      this.#wake = null;
      w();
    }
  }

  /**
   * Waits for more events or the end, then `then()`.
   * @template T
   * @param {() => Promise<T>} then
   * @returns {Promise<T>}
   */
  #after(then) {
    return new Promise((r) => {
      this.#wake = r;
    }).then(then);
  }

  /** The end of the iteration: done, or the failure (thrown once). */
  #end() {
    const f = this.#failure;
    this.#failure = null;
    return f ? Promise.reject(f) : Promise.resolve(DONE);
  }

  /** The failure, taken: what ends the iteration, once. */
  #failed() {
    const f = /** @type {PromptloomError} */ (this.#failure);
    this.#failure = null;
    return f;
  }

  /** @returns {Promise<IteratorResult<ResponseEvent, undefined>>} */
  #next() {
    const batch = this.#queue[0];
    if (batch) {
      const value = batch[this.#pos++];
      if (this.#pos === batch.length) {
        this.#queue.shift();
        this.#pos = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    return this.#finished ? this.#end() : this.#after(() => this.#next());
  }

  /** @returns {Promise<IteratorResult<ResponseEvent[], undefined>>} */
  #nextBatch() {
    const batch = this.#queue.shift();
    if (batch) {
      // Each batch is an array the parser made for this chunk: handed on as it is.
      const value = /** @type {ResponseEvent[]} */ (this.#pos === 0 ? batch : batch.slice(this.#pos));
      this.#pos = 0;
      return Promise.resolve({ value, done: false });
    }
    return this.#finished ? this.#end() : this.#after(() => this.#nextBatch());
  }

  /**
   * @template T
   * @param {() => Promise<IteratorResult<T, undefined>>} next
   * @returns {AsyncIterableIterator<T, undefined>}
   */
  #iterate(next) {
    if (this.#iterated) throw new PromptloomError('InvalidOptions', 'a response stream can be iterated once', {});
    this.#iterated = true;
    this.#start();
    const it = {
      next,
      // A consumer that stops reading (break) cancels the request.
      return: () => {
        if (!this.#finished) this.#stop(new Error('the consumer stopped reading'));
        return Promise.resolve(DONE);
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  /**
   * The events in batches: each an array of the events one network chunk completed (one
   * Promise per chunk instead of per event, for consumers that render per frame).
   */
  batches() {
    return this.#iterate(() => this.#nextBatch());
  }

  [Symbol.asyncIterator]() {
    return this.#iterate(() => this.#next());
  }

  /**
   * @internal Takes each event as the parser completes it, in the microtask that read it
   * (no Promise per event: the agent loop's path); a Promise `sink` answers holds the
   * events after it until it settles. Resolves with the turn once every event was taken;
   * rejects with the stream's error, or with what `sink` threw (the request is stopped).
   * @param {(ev: ResponseEvent) => unknown} sink
   * @returns {Promise<ResponseTurn>}
   */
  __consume(sink) {
    if (this.#iterated) throw new PromptloomError('InvalidOptions', 'a response stream can be iterated once', {});
    this.#iterated = true;
    const done = new Promise((resolve, reject) => {
      this.#sink = { take: sink, resolve, reject, busy: false };
    });
    this.#start();
    this.#pump();
    return done;
  }

  /**
   * Hands `evs` to the sink (nothing queued before them); what is left when it answers a
   * Promise waits in the queue.
   * @param {readonly ResponseEvent[]} evs
   */
  #handOver(evs) {
    const sink = /** @type {Sink} */ (this.#sink);
    if (sink.busy) {
      this.#queue.push(evs);
      return;
    }
    for (let i = 0; i < evs.length; i++) {
      if (this.#give(sink, evs[i])) continue;
      if (sink.busy && i + 1 < evs.length) this.#queue.push(evs.slice(i + 1));
      return;
    }
  }

  /**
   * Hands one event to the sink: false when it takes no more for now (it threw, and is
   * ended; or it answered a Promise, which holds the next events until it settles).
   * @param {Sink} sink
   * @param {ResponseEvent} ev
   */
  #give(sink, ev) {
    /** @type {unknown} */
    let p;
    try {
      p = sink.take(ev);
    } catch (e) {
      this.#sinkEnd(sink, e, true);
      return false;
    }
    if (p === null || typeof p !== 'object' || typeof (/** @type {any} */ (p).then) !== 'function') return true;
    this.#hold(sink, /** @type {PromiseLike<unknown>} */ (p));
    return false;
  }

  /**
   * Holds the sink's next events until `p` settles.
   * @param {Sink} sink
   * @param {PromiseLike<unknown>} p
   */
  #hold(sink, p) {
    sink.busy = true;
    p.then(
      () => {
        sink.busy = false;
        if (this.#sink === sink) this.#pump();
      },
      (e) => this.#sinkEnd(sink, e, true),
    );
  }

  /** Hands the queued events to the sink, until one answers a Promise; settles it at the end. */
  #pump() {
    const sink = /** @type {Sink} */ (this.#sink);
    while (!sink.busy) {
      const batch = this.#queue[0];
      if (!batch) {
        if (!this.#finished) return;
        if (this.#failure) return this.#sinkEnd(sink, this.#failed());
        this.#sink = null;
        return sink.resolve(this.#done);
      }
      const ev = batch[this.#pos++];
      if (this.#pos === batch.length) {
        this.#queue.shift();
        this.#pos = 0;
      }
      if (!this.#give(sink, ev)) return;
    }
  }

  /**
   * Ends the sink with `error`; what the sink threw itself stops the request.
   * @param {Sink} sink
   * @param {unknown} error
   * @param {boolean} [own]
   */
  #sinkEnd(sink, error, own = false) {
    if (this.#sink !== sink) return;
    this.#sink = null;
    this.#queue = [];
    if (own && !this.#finished) this.#stop(error instanceof Error ? error : new Error(String(error)));
    sink.reject(error);
  }

  /** The final assistant turn (the whole stream is read if nobody iterates it). */
  get turn() {
    this.#start();
    return this.#done;
  }

  /**
   * The answer as the event stream a page reads with `readEventStream` (the
   * `promptloom-events` protocol: SSE bytes). It consumes the stream: the events as they
   * come, then the final turn; a failure ends it with its error and the turn read before
   * it. Cancelling the readable (the page went away) cancels the request.
   * @returns {ReadableStream<Uint8Array>}
   */
  toReadableStream() {
    const glue = __glue();
    const it = this.batches();
    /** @type {any} wasm-bindgen's EventStreamWriterCore, made once the provider is known */
    let core = null;
    const writer = () => {
      if (!core) {
        const p = this.provider;
        if (!p) throw new PromptloomError('InvalidOptions', 'the stream does not know its provider yet', {});
        core = __onCall(glue, () => new (__module().EventStreamWriterCore)(p));
      }
      return core;
    };
    /** @param {(w: any) => Uint8Array} f */
    const write = (f) => __onCall(glue, () => f(writer()));
    const done = () => {
      __release(core);
      core = null;
    };
    return new ReadableStream(
      {
        start: (c) => {
          if (this.provider) c.enqueue(write((w) => w.events('[]')));
        },
        pull: async (c) => {
          try {
            const { value, done: end } = await it.next();
            if (!end) {
              const bytes = write((w) => w.events(__rawEvents(value) ?? JSON.stringify(value)));
              if (bytes.length > 0) c.enqueue(bytes);
              return;
            }
            const turn = await this.turn;
            c.enqueue(write((w) => w.end(JSON.stringify(turn), undefined)));
          } catch (e) {
            const err = e instanceof PromptloomError ? e : __fromCore(e);
            const read = /** @type {any} */ (err).turn;
            const wire = JSON.stringify({ code: err.code, message: err.message, details: err.details });
            c.enqueue(write((w) => w.end(read ? JSON.stringify(read) : undefined, wire)));
          }
          done();
          c.close();
        },
        cancel: () => {
          done();
          return it.return?.().then(() => {});
        },
      },
      { highWaterMark: 0 },
    );
  }

  /**
   * The answer as an HTTP `Response` streaming `toReadableStream()`: status 200,
   * `content-type: text/event-stream`, no caching; `init` adds headers or sets the status.
   * @param {ResponseInit} [init]
   * @returns {Response}
   */
  toResponse(init) {
    const { status = 200, statusText, headers: given } = __opts(init, 'toResponse()');
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new PromptloomError('InvalidOptions', '`status` must be an HTTP status from 200 to 599 (at status)', { path: 'status' });
    }
    if (statusText !== undefined && (typeof statusText !== 'string' || !/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText))) {
      throw new PromptloomError('InvalidOptions', '`statusText` must be an HTTP reason phrase (at statusText)', { path: 'statusText' });
    }
    /** @type {Headers} */
    let headers;
    try {
      headers = new Headers(given);
    } catch (e) {
      throw new PromptloomError('InvalidOptions', `\`headers\` must be a Headers, a list of name-value pairs or an object of strings: ${e instanceof Error ? e.message : String(e)} (at headers)`, { path: 'headers' });
    }
    for (const [k, v] of EVENT_STREAM_HEADERS) if (!headers.has(k)) headers.set(k, v);
    return new Response(this.toReadableStream(), { status, statusText, headers });
  }

  /** The text of the final turn (its text parts joined). */
  async text() {
    const t = await this.turn;
    return t.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  }
}

