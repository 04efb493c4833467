// What crosses `postMessage` between the page (remote.js) and the worker (worker.js): the
// tag of the wire's messages, errors as data, a chat snapshot's patches (what changed, a
// streamed token as its text) and listening to a Web Worker, a MessagePort or Node's
// worker_threads port alike.

import { PromptloomError } from './instance.js';

/** @typedef {import('./instance.js').Unchecked} Unchecked */
/** @typedef {import('../index.js').ChatSnapshot} ChatSnapshot */

/** The tag of every message of the wire (other messages on the port are not ours). */
export const __WIRE = 'promptloom/1';

/**
 * @internal An error as it crosses: its code, message and details (a PromptloomError's, or
 * `Internal` with the message of any other throw).
 * @param {unknown} e
 */
export function __errorOut(e) {
  const err = /** @type {Unchecked} */ (e);
  if (err instanceof PromptloomError || (err && typeof err.code === 'string' && err.name === 'PromptloomError')) {
    let details = {};
    try {
      details = structuredClone(err.details ?? {});
    } catch {
      // Details that cannot cross (a function, a stream) are left behind; the code says enough.
    }
    return { code: err.code, message: String(err.message), details };
  }
  return { code: 'Internal', message: err && err.message ? String(err.message) : String(err), details: {} };
}

/**
 * @internal The PromptloomError of an error that crossed.
 * @param {Unchecked} e
 */
export function __errorIn(e) {
  return new PromptloomError(e.code, e.message, e.details);
}

/**
 * A text part that grew: the same type, its text a longer copy of the old one's, no other
 * field (a streamed token).
 * @param {Unchecked} a
 * @param {Unchecked} b
 */
function grew(a, b) {
  if (!a || !b || a.type !== b.type || typeof a.text !== 'string' || typeof b.text !== 'string') return false;
  const keys = Object.keys(b);
  return keys.length === 2 && Object.keys(a).length === 2 && b.text.length >= a.text.length && b.text.startsWith(a.text);
}

/**
 * @internal What changed from snapshot `prev` to `next`, as it crosses: the fields whose
 * value is another object; of `messages`, the length and the messages that are not the
 * same objects; of `pending`, its head and the parts that changed (a text part that grew
 * sends its new end only, so a streamed token costs its own bytes).
 * @param {ChatSnapshot | null} prev
 * @param {ChatSnapshot} next
 */
export function __patch(prev, next) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const k of /** @type {const} */ (['session', 'status', 'run'])) if (!prev || prev[k] !== next[k]) out[k] = next[k];
  if (!prev || prev.error !== next.error) out.error = next.error ? __errorOut(next.error) : null;
  if (!prev || prev.messages !== next.messages) {
    const at = [];
    for (let i = 0; i < next.messages.length; i++) if (!prev || prev.messages[i] !== next.messages[i]) at.push([i, next.messages[i]]);
    out.messages = { n: next.messages.length, at };
  }
  const a = prev ? prev.pending : null;
  const b = next.pending;
  if (a !== b) {
    if (!a || !b || a.parts.length > b.parts.length) out.pending = b ? { whole: b } : null;
    else {
      const { parts, ...head } = b;
      const changed = [];
      for (let i = 0; i < parts.length; i++) {
        const p = /** @type {Unchecked} */ (parts[i]);
        const q = /** @type {Unchecked} */ (a.parts[i]);
        if (p === q) continue;
        changed.push(grew(q, p) ? [i, p.text.slice(q.text.length)] : [i, p]);
      }
      out.pending = { head, parts: changed };
    }
  }
  return out;
}

/**
 * @internal The snapshot after `patch`, over `prev`: the messages and parts it did not
 * name are the same objects as before.
 * @param {ChatSnapshot} prev
 * @param {Unchecked} patch
 * @returns {ChatSnapshot}
 */
export function __applyPatch(prev, patch) {
  /** @type {Unchecked} */
  const next = { ...prev };
  for (const k of ['session', 'status', 'run']) if (k in patch) next[k] = patch[k];
  if ('error' in patch) next.error = patch.error ? __errorIn(patch.error) : null;
  if (patch.messages) {
    const messages = prev.messages.slice(0, patch.messages.n);
    for (const [i, m] of patch.messages.at) messages[i] = m;
    next.messages = Object.freeze(messages);
  }
  if ('pending' in patch) {
    const p = patch.pending;
    if (!p) next.pending = null;
    else if (p.whole) next.pending = p.whole;
    else {
      /** @type {Unchecked[]} */
      const parts = prev.pending ? prev.pending.parts.slice() : [];
      for (const [i, v] of p.parts) parts[i] = typeof v === 'string' ? { type: parts[i].type, text: parts[i].text + v } : v;
      next.pending = { ...p.head, parts };
    }
  }
  return Object.freeze(next);
}

/**
 * The port the page talks to the worker through: a Web Worker, a MessagePort, or Node's
 * `worker_threads` Worker.
 * @param {Unchecked} port
 * @param {(data: Unchecked) => void} on
 * @returns {() => void} what stops listening
 */
export function __listen(port, on) {
  if (typeof port.addEventListener === 'function') {
    const f = (/** @type {MessageEvent} */ ev) => on(ev.data);
    __quiet(port.addEventListener('message', f));
    if (typeof port.start === 'function') __quiet(port.start());
    return () => __quiet(port.removeEventListener('message', f));
  }
  __quiet(port.on('message', on));
  return () => __quiet(port.off('message', on));
}

/**
 * @internal A port method's answer, let go: one that is a Promise (a port of the host's own
 * making) may reject without an unhandled rejection.
 * @param {unknown} r
 */
export function __quiet(r) {
  if (r && typeof (/** @type {Unchecked} */ (r).then) === 'function') /** @type {Promise<unknown>} */ (r).then(undefined, () => {});
}
