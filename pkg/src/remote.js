// The page's half of promptloom in a Web Worker: `connectWorker(worker)` gives the calls the
// worker serves (`serveWorker`, worker.js) as Promises and a `Chat` whose snapshots come
// from the worker's. No wasm is loaded here: the page imports this module only, so an index
// of 10k skills or a large lowering runs in the worker and never blocks input. What
// crosses `postMessage` between the two is remote-wire.js's.

import { PromptloomError } from './instance.js';
import { __WIRE, __errorIn, __applyPatch, __listen, __quiet } from './remote-wire.js';
import { Listeners } from './listeners.js';

export { PromptloomError };

/** @typedef {import('./instance.js').Unchecked} Unchecked */
/** @typedef {import('../index.js').ChatSnapshot} ChatSnapshot */


/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/**
 * promptloom running in a worker (`serveWorker`), seen from the page: `call` runs one of
 * the functions it serves; `chat` opens a `Chat` there and gives its mirror here.
 */
class Remote {
  /** @type {Unchecked} */
  #port;
  #next = 0;
  /** @type {Map<number, { resolve: (v: unknown) => void, reject: (e: unknown) => void }>} */
  #calls = new Map();
  /** @type {Map<number, RemoteChat>} */
  #chats = new Map();
  /** @type {PromptloomError | null} */
  #lost = null;
  /** @type {() => void} */
  #unlisten;
  /** @type {Promise<void>} resolves when the worker serves (its `ready`) */
  #ready;
  /** @type {() => void} */
  #serving = () => {};

  /** @param {Unchecked} port */
  constructor(port) {
    this.#port = port;
    this.#ready = new Promise((r) => {
      this.#serving = r;
    });
    this.#unlisten = __listen(port, (d) => this.#receive(d));
    // The worker says `ready` when it starts serving, and answers this `hello` once it does:
    // whichever of the two is missed (a page listening late, a worker still loading its
    // wasm when the hello came), the other arrives.
    __quiet(port.postMessage({ wire: __WIRE, hello: true }));
    // A worker that fails to load or throws where nobody catches: every call waiting ends.
    const fail = (/** @type {Unchecked} */ ev) => this.#fail(`the worker failed: ${ev && ev.message ? ev.message : String(ev)}`);
    if (typeof port.addEventListener === 'function') __quiet(port.addEventListener('error', fail));
    else if (typeof port.on === 'function') __quiet(port.on('error', fail));
  }

  /** @param {string} why */
  #fail(why) {
    this.#lost = new PromptloomError('InstanceLost', why, {});
    for (const [, c] of this.#calls) c.reject(this.#lost);
    this.#calls.clear();
  }

  /** @param {Unchecked} d */
  #receive(d) {
    if (!d || d.wire !== __WIRE) return;
    if (d.ready) return this.#serving();
    if (typeof d.chat === 'number' && d.patch) {
      this.#chats.get(d.chat)?.__patch(d.patch);
      return;
    }
    const c = this.#calls.get(d.id);
    if (!c) return;
    this.#calls.delete(d.id);
    if (d.ok) c.resolve(d.value);
    else c.reject(__errorIn(d.error));
  }

  /**
   * @internal Sends one request; resolves with the worker's answer.
   * @param {Record<string, unknown>} request
   */
  __ask(request) {
    if (this.#lost) return Promise.reject(this.#lost);
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#ready.then(() => this.#post(id, request, reject));
    });
  }

  /**
   * @param {number} id
   * @param {Record<string, unknown>} request
   * @param {(e: unknown) => void} reject
   */
  #post(id, request, reject) {
    if (!this.#calls.has(id)) return;
    try {
      __quiet(this.#port.postMessage({ wire: __WIRE, id, ...request }));
    } catch (e) {
      this.#calls.delete(id);
      const what = /** @type {Unchecked} */ (e);
      reject(new PromptloomError('InvalidOptions', `the arguments cannot cross to the worker: ${what && what.message ? what.message : what} (functions, adapters and stores live in the worker: give them in serveWorker) (at arguments)`, { path: 'arguments' }));
    }
  }

  /**
   * Runs the function `name` the worker serves (`serveWorker({ functions })`) with `args`
   * (values that can be structured-cloned); resolves with its result.
   * @param {string} name
   * @param {...unknown} args
   */
  call(name, ...args) {
    if (typeof name !== 'string') return Promise.reject(invalid('call() takes the name of a function the worker serves', 'name'));
    return this.__ask({ op: 'call', name, args });
  }

  /**
   * Opens a chat in the worker (its `chat` factory gets `init`) and resolves with its
   * mirror on the page, the thread read.
   * @param {Record<string, unknown>} [init]
   */
  async chat(init = {}) {
    if (init === null || typeof init !== 'object') throw invalid('chat() takes an object (what the worker\'s chat factory reads)', 'init');
    const id = /** @type {number} */ (await this.__ask({ op: 'chat', init }));
    const chat = new RemoteChat(this, id);
    this.#chats.set(id, chat);
    await this.__ask({ op: 'watch', chat: id });
    return chat;
  }

  /** @internal @param {number} id */
  __forget(id) {
    this.#chats.delete(id);
  }

  /** Stops listening to the worker (the worker itself is the app's to terminate). */
  close() {
    this.#unlisten();
    this.#fail('the connection was closed');
  }
}

/**
 * A `Chat` running in a worker, seen from the page: the same snapshot (`getSnapshot`,
 * `subscribe`, structurally shared), the same actions. Every action answers a Promise
 * (`stop`, `approve` and `lower` too); a run's options carry `settings`, `lane` and `attach`
 * only — adapters, handlers and arbiters are the worker's.
 */
class RemoteChat {
  /** @type {Remote} */
  #remote;
  #id;
  /** @type {ChatSnapshot} */
  #snapshot = Object.freeze({ session: '', status: 'loading', messages: Object.freeze([]), pending: null, error: null, run: null });
  #listeners = new Listeners();

  /**
   * @param {Remote} remote
   * @param {number} id
   */
  constructor(remote, id) {
    this.#remote = remote;
    this.#id = id;
  }

  /** @internal @param {Unchecked} patch */
  __patch(patch) {
    this.#snapshot = __applyPatch(this.#snapshot, patch);
    this.#listeners.notify();
  }

  /** The current state, as the worker's chat last showed it. */
  getSnapshot = () => this.#snapshot;

  /**
   * Calls `listener` after every change; returns the function that stops it.
   * @param {() => void} listener
   */
  subscribe = (listener) => this.#listeners.add(listener);

  get session() {
    return this.#snapshot.session;
  }
  get messages() {
    return this.#snapshot.messages;
  }
  get status() {
    return this.#snapshot.status;
  }
  get error() {
    return this.#snapshot.error;
  }

  /**
   * @param {string} method
   * @param {unknown[]} args
   */
  async #run(method, args) {
    const out = /** @type {Unchecked} */ (await this.#remote.__ask({ op: 'method', chat: this.#id, method, args }));
    if (out && typeof out === 'object' && out.error) return { ...out, error: __errorIn(out.error) };
    return out;
  }

  /**
   * The per-run options that cross: settings, lane and attach.
   * @param {unknown} options
   * @param {string} what
   */
  #options(options, what) {
    if (options === undefined) return undefined;
    if (options === null || typeof options !== 'object') throw invalid(`${what} takes an options object`, 'options');
    for (const k of Object.keys(options)) {
      if (k !== 'settings' && k !== 'lane' && k !== 'attach') throw invalid(`a chat in a worker takes \`settings\`, \`lane\` and \`attach\` per run; \`${k}\` is given where the worker makes the chat (serveWorker's chat factory)`, k);
    }
    return options;
  }

  /**
   * @param {import('../index.js').ChatInput} input
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async send(input, options) {
    return this.#run('send', [input, this.#options(options, 'send()')]);
  }
  /** @param {import('../index.js').ChatRunOptions} [options] */
  async resume(options) {
    return this.#run('resume', [this.#options(options, 'resume()')]);
  }
  /** @param {import('../index.js').ChatRunOptions} [options] */
  async regenerate(options) {
    return this.#run('regenerate', [this.#options(options, 'regenerate()')]);
  }
  /**
   * @param {string} id
   * @param {import('../index.js').ChatInput} input
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async edit(id, input, options) {
    return this.#run('edit', [id, input, this.#options(options, 'edit()')]);
  }
  async stop() {
    await this.#run('stop', []);
  }
  /**
   * @param {string} callId
   * @param {boolean | { approve: boolean, reason?: string }} answer
   */
  async approve(callId, answer) {
    await this.#run('approve', [callId, answer]);
  }
  /** @param {Record<string, unknown>} [settings] */
  async lower(settings) {
    return this.#run('lower', [settings]);
  }
  /** Closes the chat in the worker; the mirror keeps its last snapshot. */
  async close() {
    this.#remote.__forget(this.#id);
    this.#listeners.clear();
    await this.#remote.__ask({ op: 'close', chat: this.#id });
  }
}

/**
 * Talks to promptloom in a worker that called `serveWorker`: `worker` is a Web Worker (or
 * a MessagePort, or Node's `worker_threads` Worker).
 * @param {Unchecked} worker
 */
export function connectWorker(worker) {
  if (!worker || typeof worker.postMessage !== 'function' || (typeof worker.addEventListener !== 'function' && typeof worker.on !== 'function')) {
    throw invalid('connectWorker() takes a Worker (or a MessagePort) whose script calls serveWorker()', 'worker');
  }
  return new Remote(worker);
}
