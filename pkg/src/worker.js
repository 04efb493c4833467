// The worker's half of promptloom in a Web Worker: `serveWorker` answers the page's
// `connectWorker` (remote.js; what crosses is remote-wire.js's) — the functions the app
// serves, and chats made by its factory, whose snapshots go to the page as patches.

import { PromptloomError, __opts } from './instance.js';
import { Chat } from './chat.js';
import { __WIRE, __errorOut, __patch, __listen, __quiet } from './remote-wire.js';

/** @typedef {import('./instance.js').Unchecked} Unchecked */

/** The chat methods the page may call. */
const METHODS = new Set(['send', 'resume', 'regenerate', 'edit', 'stop', 'approve', 'lower']);

/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/**
 * Serves the page's `connectWorker`: `functions` by name (`remote.call(name, …args)`), and
 * `chat(init)` — the factory of the chats the page opens (`remote.chat(init)`), answering a
 * `Chat` or the options of one (its store, adapter, handlers: what cannot cross). `port` is
 * the worker's global scope unless given. Returns the function that stops serving.
 * @param {import('../index.js').ServeWorkerOptions} options
 */
export function serveWorker(options) {
  const { chat: factory, functions = {}, port = globalThis } = __opts(options, 'serveWorker()');
  if (factory !== undefined && typeof factory !== 'function') throw invalid('`chat` must be a function of the page\'s init answering a Chat or its options', 'chat');
  if (functions === null || typeof functions !== 'object') throw invalid('`functions` must be an object of functions by name', 'functions');
  for (const [k, f] of Object.entries(functions)) if (typeof f !== 'function') throw invalid('each of `functions` must be a function', `functions.${k}`);
  if (!port || typeof port.postMessage !== 'function' || (typeof port.addEventListener !== 'function' && typeof port.on !== 'function')) {
    throw invalid('`port` must be the worker\'s scope or a MessagePort (postMessage, and addEventListener or on)', 'port');
  }
  /** @type {Map<number, { chat: Chat, stop: (() => void) | null }>} */
  const chats = new Map();
  let next = 0;
  /** @param {Record<string, unknown>} message */
  const post = (message) => __quiet(port.postMessage({ wire: __WIRE, ...message }));

  /** @param {Unchecked} d */
  async function answer(d) {
    switch (d.op) {
      case 'call': {
        const f = Object.hasOwn(functions, d.name) ? functions[d.name] : undefined;
        if (!f) throw new PromptloomError('NotFound', `the worker serves no function \`${d.name}\` (serveWorker's functions: ${Object.keys(functions).join(', ') || 'none'})`, { path: 'name' });
        return f(...d.args);
      }
      case 'chat': {
        if (!factory) throw new PromptloomError('InvalidRequest', 'the worker serves no chat (serveWorker\'s `chat` factory)', {});
        const made = await factory(d.init);
        const chat = made instanceof Chat ? made : await Chat.open(made);
        await chat.ready;
        const id = ++next;
        chats.set(id, { chat, stop: null });
        return id;
      }
      case 'watch': {
        const c = chats.get(d.chat);
        if (!c) throw new PromptloomError('NotFound', 'that chat was closed', {});
        // The first patch is the whole snapshot; each one after it, what changed.
        /** @type {import('../index.js').ChatSnapshot | null} */
        let last = null;
        const send = () => {
          const s = c.chat.getSnapshot();
          const patch = __patch(last, s);
          last = s;
          tell({ chat: d.chat, patch });
        };
        send();
        c.stop = c.chat.subscribe(send);
        return null;
      }
      case 'method': {
        const c = chats.get(d.chat);
        if (!c) throw new PromptloomError('NotFound', 'that chat was closed', {});
        if (!METHODS.has(d.method)) throw new PromptloomError('InvalidRequest', `a chat has no method \`${d.method}\``, {});
        const out = await /** @type {Unchecked} */ (c.chat)[d.method](...d.args);
        if (out && typeof out === 'object' && out.error) return { ...out, error: __errorOut(out.error) };
        return out ?? null;
      }
      case 'close': {
        const c = chats.get(d.chat);
        if (c) {
          c.chat.stop();
          if (c.stop) c.stop();
          chats.delete(d.chat);
        }
        return null;
      }
      default:
        throw new PromptloomError('InvalidRequest', `unknown request \`${d.op}\``, {});
    }
  }

  /** Posts, or gives up quietly: the page went away, or the port refuses. @param {Record<string, unknown>} message */
  const tell = (message) => {
    try {
      post(message);
    } catch {
      // Nobody to tell.
    }
  };
  /** @param {unknown} e */
  const failed = (e) => {
    const what = /** @type {Unchecked} */ (e);
    return invalid(`the port failed: ${what && what.message ? what.message : what}`, 'port');
  };
  /** @type {() => void} */
  let stop;
  try {
    stop = __listen(port, (d) => {
      if (!d || d.wire !== __WIRE) return;
      if (d.hello) return tell({ ready: true });
      if (typeof d.id !== 'number') return;
      (async () => answer(d))().then(
        (value) => {
          try {
            post({ id: d.id, ok: true, value });
          } catch (e) {
            const what = /** @type {Unchecked} */ (e);
            tell({ id: d.id, ok: false, error: { code: 'InvalidOutput', message: `the result cannot cross to the page: ${what && what.message ? what.message : what}`, details: {} } });
          }
        },
        (e) => tell({ id: d.id, ok: false, error: __errorOut(e) }),
      );
    });
  } catch (e) {
    throw failed(e);
  }
  try {
    post({ ready: true });
  } catch (e) {
    try {
      stop();
    } catch {
      // The port is broken already.
    }
    throw failed(e);
  }
  return () => {
    try {
      stop();
    } catch {
      // A port that cannot stop listening is the host's.
    }
    for (const [, c] of chats) {
      c.chat.stop();
      if (c.stop) c.stop();
    }
    chats.clear();
  };
}
