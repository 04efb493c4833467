// The chat state object: a thread shown as messages, a reply streamed into it, stop,
// regenerate, edit and tool approval, for any UI that can subscribe. The rules — the view
// of a thread, what a regenerate drops, which turns an edit keeps, the session a branch is
// written to — are the core's (src/chat.rs); the loop is runAgent's (src/agent.rs). This
// file holds the state, reads the events into the reply being streamed, and writes the
// store.

import { PromptloomError, __opts, __core, __key } from './api.js';
import { submit } from './compositor.js';
import { Conversation } from './conversation.js';
import { runAgent } from './agent.js';
import { relayAdapter } from './event-stream.js';
import { Listeners } from './listeners.js';
import { EVENT_STREAM_RUN_LOST } from './constants.js';

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').ChatMessage} ChatMessage */
/** @typedef {import('../index.js').ChatSnapshot} ChatSnapshot */
/** @typedef {import('../index.js').ChatStatus} ChatStatus */
/** @typedef {import('../index.js').ResponseEvent} ResponseEvent */

/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/** @param {string} what */
function busy(what) {
  return new PromptloomError('InvalidRequest', `${what}: a reply is running; stop() it first or wait for it`, {});
}

/**
 * A new message object with `parts[i]` made by `f` from the old one (the rest shared).
 * @param {Unchecked} m
 * @param {number} i
 * @param {(old: Unchecked) => Unchecked} f
 */
function withPart(m, i, f) {
  const parts = m.parts.slice();
  while (parts.length <= i) parts.push(null);
  parts[i] = f(parts[i]);
  return { ...m, parts };
}

/**
 * `m` with `text` added to its text or reasoning part `i` (the path of every token: no
 * closure, one new part, parts array and message).
 * @param {Unchecked} m
 * @param {number} i
 * @param {'text' | 'reasoning'} type
 * @param {string} text
 */
function delta(m, i, type, text) {
  const parts = m.parts.slice();
  while (parts.length <= i) parts.push(null);
  const p = parts[i];
  parts[i] = { type, text: p && p.type === type ? p.text + text : text };
  return { ...m, parts };
}

/**
 * The reply being streamed, after one event (a new object; the parts it did not touch are
 * shared with the last one).
 * @param {Unchecked} m
 * @param {ResponseEvent} ev
 * @returns {Unchecked}
 */
function streamed(m, ev) {
  switch (ev.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return delta(m, ev.part, ev.type === 'text-delta' ? 'text' : 'reasoning', ev.text);
    case 'tool-call-start':
      return withPart(m, ev.part, () => ({ type: 'tool-call', id: ev.id, name: ev.name, ...(ev.kind ? { kind: ev.kind } : {}), input: undefined, inputText: '', state: 'input-streaming' }));
    case 'tool-call-delta':
      return withPart(m, ev.part, (p) => ({ ...p, inputText: (p?.inputText ?? '') + ev.delta }));
    case 'tool-call-end':
      return withPart(m, ev.part, (p) => {
        const { inputText: _, ...rest } = p ?? { type: 'tool-call', id: ev.id, name: ev.name };
        return { ...rest, input: ev.input, state: 'input-available' };
      });
    case 'citation':
      return withPart(m, ev.part, (p) => ({ ...p, citations: [...(p?.citations ?? []), ev.citation] }));
    case 'object-delta':
      return { ...m, object: /** @type {Unchecked} */ (ev).object };
    case 'usage': {
      const { type: _, ...usage } = ev;
      return { ...m, usage };
    }
    case 'finish':
      return { ...m, finish_reason: ev.reason };
    case 'start':
      return ev.model ? { ...m, model: ev.model } : m;
    default:
      return m;
  }
}

/**
 * A chat over one thread of a message store: the messages as a panel shows them, the reply
 * streaming into `pending`, `send`, `stop`, `regenerate`, `edit` and tool approval, and
 * `subscribe` / `getSnapshot` for React's `useSyncExternalStore`, Vue, Svelte or plain DOM
 * code. Each snapshot is a new frozen object; the messages a change did not touch are the
 * same objects as before (a streamed token makes a new `pending`, not a new `messages`).
 */
export class Chat {
  /** @type {Unchecked} */
  #store;
  /** @type {Unchecked} */
  #adapter;
  /** @type {Record<string, unknown>} */
  #settings;
  /** @type {unknown[]} */
  #tools;
  /** @type {Record<string, Function>} */
  #handlers;
  /** @type {Set<string>} */
  #approval;
  /** @type {Record<string, unknown>} */
  #submitOptions;
  /** @type {() => string} */
  #nonce;
  /** @type {number} */
  #maxSteps;
  /** @type {{ arbiter?: unknown, lane?: string }} runAgent's arbiter and lane, when given */
  #arbiter;
  /** @type {{ onEvent?: Function, onTurn?: Function }} the host's observers of each run */
  #observers;
  /** Whether requests go through the chat's relay with reconnects (runs to attach to). */
  #relays = false;
  /** @type {Conversation | null} */
  #conversation = null;
  /** @type {number} turns in the thread */
  #length = 0;
  /** @type {{ start: number, end: number, turns: Unchecked[] | null }} the turns the last message shows, `start` to `end` (null: not read yet) */
  #tail = { start: 0, end: 0, turns: null };
  /** @type {ChatSnapshot} */
  #snapshot;
  #listeners = new Listeners();
  /** @type {AbortController | null} */
  #abort = null;
  /** @type {Map<string, (answer: { approve: boolean, reason?: string }) => void>} */
  #asked = new Map();
  /** @type {number | false} ms between the saves of the reply streaming as the thread's draft (false: none) */
  #draftEvery = false;
  /** @type {ReturnType<typeof setTimeout> | null} the next draft save */
  #draftTimer = null;
  /** @type {Promise<unknown>} the draft save in flight */
  #draftWrite = Promise.resolve();
  /** Whether this run saved a draft (dropped when it ends). */
  #drafted = false;
  /** @type {{ run: string, turn: Unchecked | null } | null} the draft's run to attach to, and the reply so far to show if the server lost it */
  #fallback = null;
  /** @type {(() => void) | null} releases the Web Lock that says this page is reading the reply */
  #unlock = null;
  /** @type {Promise<void>} */
  ready;

  /** @param {import('../index.js').ChatInit} init */
  constructor(init) {
    const { store, session = 'default', adapter, endpoint, settings, tools = [], handlers = {}, catalog, resolve, mentions, maxSteps = 8, nonce, headers, reconnect, arbiter, lane, onEvent, onTurn, draft } = __opts(init, 'new Chat()');
    if (!store || typeof store.thread !== 'function' || typeof store.appendTurns !== 'function') throw invalid('`store` must be a message store from openMessageStore()', 'store');
    if (settings === null || typeof settings !== 'object' || typeof settings.provider !== 'string') throw invalid('`settings` must be the lowering options of every request, with a `provider`', 'settings');
    if ((adapter === undefined) === (endpoint === undefined)) throw invalid('a Chat takes an `adapter` (createAdapter) or an `endpoint` (a server that relays the provider), one of them', adapter === undefined ? 'adapter' : 'endpoint');
    if (adapter !== undefined && (adapter === null || typeof adapter.send !== 'function')) throw invalid('`adapter` must be a model adapter from createAdapter()', 'adapter');
    if (adapter !== undefined && adapter.provider !== undefined && adapter.provider !== settings.provider) {
      throw invalid(`the adapter calls ${String(typeof adapter.provider === 'string' ? adapter.provider : typeof adapter.provider)} but \`settings.provider\` is ${settings.provider}`, 'settings.provider');
    }
    if (!Array.isArray(tools)) throw invalid('`tools` must be an array of tool definitions', 'tools');
    if (handlers === null || typeof handlers !== 'object') throw invalid('`handlers` must be an object of functions by tool name', 'handlers');
    if (nonce !== undefined && typeof nonce !== 'function') throw invalid('`nonce` must be a function answering a unique string', 'nonce');
    if (onEvent !== undefined && typeof onEvent !== 'function') throw invalid('`onEvent` must be a function', 'onEvent');
    if (onTurn !== undefined && typeof onTurn !== 'function') throw invalid('`onTurn` must be a function', 'onTurn');
    if (draft !== undefined && draft !== false && !(typeof draft === 'number' && draft >= 0 && Number.isFinite(draft))) throw invalid('`draft` is the ms between saves of the reply streaming (a number ≥ 0), or false', 'draft');
    this.#observers = { onEvent, onTurn };
    this.#store = store;
    this.#adapter = adapter ?? relayAdapter({ endpoint, provider: settings.provider, headers, ...(reconnect === undefined ? {} : { reconnect }) });
    this.#relays = adapter === undefined && reconnect !== undefined && reconnect !== false && reconnect !== 0;
    // The reply streaming is kept as the thread's draft, so a reload shows it cut — or,
    // relayed with reconnects, finds the run the server is still reading.
    this.#draftEvery = draft ?? 500;
    if (this.#draftEvery !== false && typeof store.saveDraft !== 'function') this.#draftEvery = false;
    this.#settings = settings;
    this.#approval = new Set(tools.filter((/** @type {Unchecked} */ t) => t && t.needsApproval === true).map((/** @type {Unchecked} */ t) => t.name));
    this.#tools = tools.map((/** @type {Unchecked} */ t) => {
      if (!t || typeof t !== 'object' || !('needsApproval' in t)) return t;
      const { needsApproval: _, ...rest } = t;
      return rest;
    });
    this.#handlers = handlers;
    this.#submitOptions = { catalog, resolve, mentions };
    this.#maxSteps = maxSteps;
    this.#arbiter = arbiter === undefined ? {} : { arbiter, ...(lane === undefined ? {} : { lane }) };
    this.#nonce = nonce ?? (() => globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 12));
    this.#snapshot = Object.freeze({ session: __key(session, 'session'), status: /** @type {ChatStatus} */ ('loading'), messages: Object.freeze([]), pending: null, error: null, run: null });
    this.ready = this.#open(this.#snapshot.session);
    this.ready.catch(() => {});
  }

  /**
   * A chat with its thread read.
   * @param {import('../index.js').ChatInit} init
   */
  static async open(init) {
    const chat = new Chat(init);
    await chat.ready;
    return chat;
  }

  /**
   * Reads the thread of `session` into a conversation and the view.
   * @param {string} session
   */
  async #open(session) {
    try {
      const run = await this.#adoptDraft(session);
      const conversation = await Conversation.load({ store: this.#store, session, options: /** @type {any} */ (this.#settings) });
      this.#conversation = conversation;
      this.#length = conversation.length;
      const messages = JSON.parse(__core('chatView', conversation.__turnsJson(), 0));
      // The turns the last message shows (where a tool turn appended next may fold in),
      // read from the conversation only if one does.
      const start = messages.length > 0 ? messages[messages.length - 1].turn : 0;
      this.#tail = { start, turns: null, end: conversation.length };
      this.#set({ session, status: 'ready', messages: Object.freeze(messages), pending: null, error: null, run });
    } catch (e) {
      this.#set({ status: 'error', error: e });
      throw e;
    }
  }

  /** The Web Lock a page holds while it reads a reply of `session` into its draft. @param {string} session */
  #lockName(session) {
    return `promptloom:reply:${this.#store.name ?? ''}:${session}`;
  }

  /**
   * A reply the thread's last page was reading when it went away (a reload, a closed tab)
   * is the session's draft; the core says what to do with it (`chatAdopt`). Relayed with
   * reconnects, its run is what the page attaches to (answered, for the snapshot's `run`;
   * the reply so far is kept for a server that lost the run); otherwise it is appended,
   * cut, so the thread shows it. Not while another page still reads it (it holds the
   * session's Web Lock, where the host has them).
   * @param {string} session
   * @returns {Promise<string | null>}
   */
  async #adoptDraft(session) {
    this.#fallback = null;
    if (this.#draftEvery === false || typeof this.#store.draft !== 'function') return null;
    const draft = await this.#store.draft(session);
    if (!draft) return null;
    const locks = /** @type {Unchecked} */ (globalThis.navigator)?.locks;
    if (locks && typeof locks.request === 'function') {
      const free = await locks.request(this.#lockName(session), { ifAvailable: true }, (/** @type {unknown} */ lock) => lock !== null);
      if (!free) return null;
    }
    // 0: attach to its run, 1: append its turn, 2: drop it.
    const to = __core('chatAdopt', typeof draft.run === 'string', draft.turn != null, this.#relays);
    if (to === 0) {
      this.#fallback = { run: draft.run, turn: draft.turn ?? null };
      return draft.run;
    }
    if (to === 1) await this.#store.append(draft.turn, { session });
    await this.#store.dropDraft(session);
    return null;
  }

  /** Saves the reply streaming (and the run relaying it) as the thread's draft, now. */
  #draftNow() {
    this.#draftTimer = null;
    const { pending, run } = this.#snapshot;
    if (!pending && !run) return;
    const session = this.session;
    // Attached to a reloaded reply and nothing replayed yet: the reply so far is the draft's.
    const kept = !pending && this.#fallback && this.#fallback.run === run ? this.#fallback.turn : null;
    const parts = (pending ? pending.parts : kept ? kept.parts : [])
      .filter((/** @type {Unchecked} */ p) => p && (p.type === 'text' || p.type === 'reasoning') && typeof p.text === 'string')
      .map((/** @type {Unchecked} */ p) => ({ type: p.type, text: p.text }));
    const turn = { role: 'assistant', parts, ...(pending && pending.model ? { metadata: { model: pending.model } } : {}) };
    if (!this.#drafted) {
      this.#drafted = true;
      this.#lock(session);
    }
    // A draft that cannot be written is only a draft: the reply goes on.
    this.#draftWrite = this.#draftWrite.then(() => this.#store.saveDraft({ turn, ...(run ? { run } : {}) }, { session })).catch(() => {});
  }

  /** Saves the reply streaming as the thread's draft, soon (at most once per `draft` ms). */
  #draftSoon() {
    if (this.#draftEvery === false || this.#draftTimer !== null) return;
    this.#draftTimer = setTimeout(() => this.#draftNow(), this.#draftEvery);
  }

  /**
   * Holds the session's Web Lock (where the host has them) until the run ends: another
   * page opening the thread meanwhile leaves the draft to this one.
   * @param {string} session
   */
  #lock(session) {
    const locks = /** @type {Unchecked} */ (globalThis.navigator)?.locks;
    if (!locks || typeof locks.request !== 'function') return;
    /** @type {Promise<void>} */
    const held = new Promise((release) => {
      this.#unlock = () => release();
    });
    locks.request(this.#lockName(session), () => held).catch(() => {});
  }

  /** No draft save after this: the one in flight has landed. */
  async #settleDraft() {
    if (this.#draftTimer !== null) clearTimeout(this.#draftTimer);
    this.#draftTimer = null;
    await this.#draftWrite;
  }

  /** The session (thread) shown: a regenerate or an edit moves to a branch. */
  get session() {
    return this.#snapshot.session;
  }
  /** The settled messages. */
  get messages() {
    return this.#snapshot.messages;
  }
  /** `loading`, `ready`, `submitted`, `streaming`, `awaiting-approval` or `error`. */
  get status() {
    return this.#snapshot.status;
  }
  /** The last run's error, or null. */
  get error() {
    return this.#snapshot.error;
  }

  /** The current state: `{ session, status, messages, pending, error }` (frozen; a new object on every change). */
  getSnapshot = () => this.#snapshot;

  /**
   * Calls `listener` after every change; returns the function that stops it.
   * @param {() => void} listener
   */
  subscribe = (listener) => this.#listeners.add(listener);

  /** @param {Partial<ChatSnapshot>} change */
  #set(change) {
    this.#snapshot = Object.freeze({ ...this.#snapshot, ...change });
    this.#listeners.notify();
  }

  /**
   * `#set({ pending, status: 'streaming' })`, spelled out: the path of every token.
   * @param {Unchecked} pending
   */
  #streaming(pending) {
    const s = this.#snapshot;
    this.#snapshot = Object.freeze({ session: s.session, status: /** @type {ChatStatus} */ ('streaming'), messages: s.messages, pending, error: s.error, run: s.run });
    this.#listeners.notify();
  }

  /** @param {string} what */
  #idle(what) {
    const s = this.#snapshot.status;
    if (s === 'loading') throw new PromptloomError('InvalidRequest', `${what}: the thread is still loading; await chat.ready`, {});
    if (s === 'submitted' || s === 'streaming' || s === 'awaiting-approval') throw busy(what);
  }

  /**
   * Shows the turn `turn`, appended at index `i`: a tool turn is viewed with the turns the
   * last message shows (an assistant turn and the tool turns folded into it), and when the
   * core folds it in too, the one message replaces the last.
   * @param {Unchecked} turn
   * @param {number} i
   * @param {Partial<ChatSnapshot>} [also]
   */
  #fold(turn, i, also = {}) {
    const messages = this.#snapshot.messages;
    const tail = this.#tail;
    const folds = turn.role === 'tool' && messages.length > 0 && tail.end === i && messages[messages.length - 1].role === 'assistant';
    const view = (/** @type {unknown[]} */ turns, /** @type {number} */ first) => JSON.parse(__core('chatView', JSON.stringify(turns), first));
    /** @type {Unchecked[]} */
    let next;
    if (folds) {
      const shown = tail.turns ?? /** @type {Conversation} */ (this.#conversation).turns.slice(tail.start, i);
      const v = view([...shown, turn], tail.start);
      if (v.length === 1) {
        this.#tail = { start: tail.start, turns: [...shown, turn], end: i + 1 };
        this.#set({ messages: Object.freeze([...messages.slice(0, -1), v[0]]), ...also });
        return;
      }
      next = [...messages, v[v.length - 1]];
    } else {
      next = [...messages, ...view([turn], i)];
    }
    this.#tail = { start: i, turns: [turn], end: i + 1 };
    this.#set({ messages: Object.freeze(next), ...also });
  }

  /**
   * One run's options over the chat's own: `settings` (lowering options over the chat's:
   * another model, a system text), `adapter` (another provider's, with `settings.provider`),
   * `arbiter` and `lane`.
   * @param {unknown} options
   * @param {string} what
   */
  #runOptions(options, what) {
    const { settings, adapter, arbiter, lane, attach } = __opts(options, what);
    if (attach !== undefined && typeof attach !== 'string') throw invalid('`attach` names a relayed run (a string: a snapshot\'s `run`)', 'attach');
    if (attach !== undefined && (!this.#relays || adapter !== undefined)) throw invalid('`attach` needs the chat\'s `endpoint` with `reconnect`', 'attach');
    if (settings !== undefined && (settings === null || typeof settings !== 'object')) throw invalid('`settings` must be an object of lowering options', 'settings');
    if (adapter !== undefined && (adapter === null || typeof adapter.send !== 'function')) throw invalid('`adapter` must be a model adapter from createAdapter()', 'adapter');
    const provider = settings?.provider ?? this.#settings.provider;
    const sends = adapter ?? this.#adapter;
    if (typeof sends.provider === 'string' && sends.provider !== provider) throw invalid(`the adapter calls ${sends.provider} but the settings say ${String(provider)}`, 'settings.provider');
    if (arbiter !== undefined && (arbiter === null || typeof arbiter.stepOffer !== 'function')) throw invalid('`arbiter` must be an Arbiter or a Session (promptloom/composer)', 'arbiter');
    if (lane !== undefined && typeof lane !== 'string') throw invalid('`lane` must be a string', 'lane');
    return { ...(settings ? { lower: settings } : {}), ...(adapter ? { adapter } : {}), ...(arbiter !== undefined ? { arbiter, lane } : {}), ...(attach !== undefined ? { attach } : {}) };
  }

  /**
   * The thread lowered as the next request would send it (`settings` over the chat's): the
   * body and the report, for an inspector or a token count.
   * @param {Record<string, unknown>} [settings]
   */
  lower(settings) {
    if (this.#snapshot.status === 'loading') throw new PromptloomError('InvalidRequest', 'lower(): the thread is still loading; await chat.ready', {});
    if (settings !== undefined && (settings === null || typeof settings !== 'object')) throw invalid('`settings` must be an object of lowering options', 'settings');
    return /** @type {Conversation} */ (this.#conversation).lower(/** @type {any} */ ({ ...this.#settings, ...settings }));
  }

  /**
   * Sends a message: `parts` (an array), a `{ parts }` message or a string. It is resolved
   * and persisted first (`submit`), shown, and answered: the reply streams into `pending`,
   * tool calls run through `handlers` (a tool with `needsApproval` waits for `approve`),
   * each turn is persisted and shown as it ends. Resolves when the run ends, with
   * `{ submission, stop, error? }`; a message that cannot be stored rejects, nothing sent.
   * @param {import('../index.js').ChatInput} input
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async send(input, options) {
    const run = this.#runOptions(options, 'send()');
    this.#idle('send()');
    const message = typeof input === 'string' ? { parts: [{ type: 'text', text: input }] } : Array.isArray(input) ? { parts: input } : input;
    const { catalog, resolve, mentions } = this.#submitOptions;
    this.#set({ status: 'submitted', error: null, pending: null });
    /** @type {Unchecked} */
    let submission;
    try {
      submission = await submit(/** @type {any} */ (message), /** @type {any} */ ({ store: this.#store, session: this.session, catalog, resolve, mentions }));
      await /** @type {Conversation} */ (this.#conversation).append(submission.message, resolve ? { resolve: /** @type {any} */ (resolve) } : undefined);
    } catch (e) {
      this.#set({ status: 'ready' });
      throw e;
    }
    this.#fold(submission.message, this.#length++);
    // A message of host actions only (/branch, /compact, …) is for the host: no reply.
    const parts = submission.message.parts;
    if (submission.actions.length > 0 && parts.every((/** @type {Unchecked} */ p) => p.type === 'command' && p.resolved?.outcome === 'action')) {
      this.#set({ status: 'ready' });
      return { submission, stop: 'actions' };
    }
    return { submission, ...(await this.#reply(run)) };
  }

  /**
   * Runs the thread on from its last turn, with no new message: tool calls a reloaded
   * thread left unanswered run first (a reload while a call waited for approval asks
   * again), and a last user message is answered.
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async resume(options) {
    this.#idle('resume()');
    const run = this.#runOptions(options, 'resume()');
    this.#set({ error: null, pending: null, status: 'submitted' });
    return this.#reply(run);
  }

  /** Stops the reply: what was streamed is kept, marked `cut`. */
  stop() {
    // The adapter makes the Aborted error, with the turn read so far.
    if (this.#abort) this.#abort.abort(new Error('the user stopped the reply'));
    for (const [, answer] of this.#asked) answer({ approve: false, reason: 'the user stopped the reply' });
  }

  /**
   * Answers a tool call waiting for approval: `true`, `false`, or `{ approve, reason? }` (a
   * refusal goes back to the model as the call's error result, with the reason).
   * @param {string} callId
   * @param {boolean | { approve: boolean, reason?: string }} answer
   */
  approve(callId, answer) {
    const f = this.#asked.get(__key(callId, 'callId'));
    if (!f) throw new PromptloomError('NotFound', `no tool call \`${callId}\` is waiting for approval`, { path: 'callId' });
    const a = typeof answer === 'boolean' ? { approve: answer } : answer;
    if (!a || typeof a !== 'object' || typeof a.approve !== 'boolean') throw invalid('an approval is `true`, `false` or `{ approve, reason? }`', 'answer');
    f(a);
  }

  /**
   * Answers the last user message again: the turns after it are left out of a new branch
   * (the store keeps them in the old session), and the reply streams there. After a failed
   * reply, the same message is sent again in the same session.
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async regenerate(options) {
    this.#idle('regenerate()');
    const run = this.#runOptions(options, 'regenerate()');
    await this.#branch(undefined);
    this.#set({ error: null, pending: null });
    return this.#reply(run);
  }

  /**
   * Replaces the user message `id` with `input` in a new branch (the turns before it
   * copied, the message sent there); the old thread stays in its session.
   * @param {string} id
   * @param {import('../index.js').ChatInput} input
   * @param {import('../index.js').ChatRunOptions} [options]
   */
  async edit(id, input, options) {
    this.#idle('edit()');
    this.#runOptions(options, 'edit()');
    await this.#branch(__key(id, 'id'));
    return this.send(input, options);
  }

  /**
   * Goes on where the core says a regenerate (`edit` undefined) or an edit of `edit`
   * goes on: a new session holding the turns it keeps, copied, or this one.
   * @param {string | undefined} edit
   */
  async #branch(edit) {
    const conversation = /** @type {Conversation} */ (this.#conversation);
    const plan = /** @type {string} */ (__core('chatBranch', conversation.__turnsJson(), this.session, edit, String(this.#nonce())));
    const at = plan.indexOf(' ');
    const keep = Number(plan.slice(0, at));
    const session = plan.slice(at + 1);
    if (session === this.session) return;
    const turns = conversation.turns.slice(0, keep);
    if (turns.length > 0) await this.#store.appendTurns(turns, { session });
    await this.#open(session);
  }

  /** Runs the reply (runAgent), streaming into `pending`. */
  /**
   * @param {{ lower?: Record<string, unknown>, adapter?: Unchecked, arbiter?: unknown, lane?: string, attach?: string }} [run]
   */
  async #reply(run = {}) {
    const abort = new AbortController();
    this.#abort = abort;
    const conversation = /** @type {Conversation} */ (this.#conversation);
    const store = this.#store;
    const session = this.session;
    // Each turn is stored first (its stored id is the message's), then taken by the
    // conversation (which finds it stored) and shown.
    const thread = {
      get options() {
        return conversation.options;
      },
      get turns() {
        return conversation.turns;
      },
      lower: (/** @type {any} */ o) => conversation.lower(o),
      append: async (/** @type {Unchecked} */ turn) => {
        await this.#settleDraft();
        const { turn: stored } = await store.append(turn, { session });
        await conversation.append(stored);
        const cut = stored.role === 'assistant' && stored.metadata?.cut === true;
        this.#fold(stored, this.#length++, stored.role === 'assistant' ? { pending: null, status: cut ? 'ready' : 'submitted' } : {});
        return this.#length - 1;
      },
    };
    /** @type {Record<string, Function>} */
    const handlers = {};
    for (const [name, h] of Object.entries(this.#handlers)) {
      if (typeof h !== 'function') continue;
      handlers[name] = this.#approval.has(name) ? this.#gated(name, h) : h;
    }
    try {
      const result = await runAgent(/** @type {any} */ ({
        conversation: /** @type {any} */ (thread),
        adapter: this.#watched(run.adapter ?? this.#adapter, run.attach),
        tools: /** @type {any} */ (this.#tools),
        handlers: /** @type {any} */ (handlers),
        maxSteps: this.#maxSteps,
        ...(run.lower ? { lower: run.lower } : {}),
        ...(run.arbiter !== undefined ? { arbiter: run.arbiter, lane: run.lane ?? 'main' } : this.#arbiter),
        signal: abort.signal,
        ...(this.#observers.onTurn ? { onTurn: this.#observers.onTurn } : {}),
        onEvent: (/** @type {ResponseEvent} */ ev, /** @type {number} */ step) => {
          const base = this.#snapshot.pending ?? { id: 'pending', role: 'assistant', status: 'streaming', parts: [] };
          const pending = streamed(base, ev);
          if (pending !== base || this.#snapshot.status !== 'streaming') this.#streaming(pending);
          this.#draftSoon();
          const seen = this.#observers.onEvent;
          if (seen) return seen(ev, step);
        },
      }));
      this.#fallback = null;
      this.#set({ status: 'ready', pending: null, run: null });
      return { stop: result.stop, steps: result.steps, usage: result.usage, ...(result.error ? { error: result.error } : {}) };
    } catch (e) {
      if (abort.signal.aborted) {
        // Stopped while a tool ran or waited for approval: nothing more is written.
        this.#set({ status: 'ready', pending: null, run: null });
        return { stop: 'aborted', error: e };
      }
      const pending = this.#snapshot.pending;
      const fallback = this.#fallback;
      if (run.attach !== undefined && fallback && fallback.run === run.attach && !pending) {
        // The attach failed before the replay's first event. A server that no longer has
        // the run (the core's EVENT_STREAM_RUN_LOST statuses): the reply so far is shown,
        // cut, as the thread's last turn. Any other failure keeps the draft, and the run,
        // to attach again.
        const lost = EVENT_STREAM_RUN_LOST.includes(/** @type {Unchecked} */ (e)?.details?.status);
        if (lost) {
          this.#fallback = null;
          if (fallback.turn) await thread.append(fallback.turn).catch(() => {});
        } else {
          this.#drafted = false; // the draft stays
        }
        this.#set({ status: 'error', error: e, pending: null, run: lost ? null : fallback.run });
        return { stop: 'error', error: e };
      }
      this.#set({ status: 'error', error: e, pending: pending ? { ...pending, status: 'error' } : null, run: null });
      return { stop: 'error', error: e };
    } finally {
      if (this.#abort === abort) this.#abort = null;
      await this.#settleDraft();
      if (this.#drafted) {
        // The reply ended here: its draft is stale (a turn was stored after it) or, when it
        // failed, not to be shown as cut after a reload.
        this.#drafted = false;
        await store.dropDraft(session).catch(() => {});
      }
      if (this.#unlock) this.#unlock();
      this.#unlock = null;
    }
  }

  /**
   * The adapter as a run uses it: each request's relayed run shows in the snapshot (`run`,
   * what a reloaded page attaches to), and with `attach` the first request is the replay of
   * that run instead of a new one.
   * @param {Unchecked} adapter
   * @param {string | undefined} attach
   */
  #watched(adapter, attach) {
    let once = attach;
    return {
      provider: adapter.provider,
      model: adapter.model,
      url: adapter.url,
      send: (/** @type {unknown} */ body, /** @type {Unchecked} */ opts) => {
        const o = once === undefined ? opts : { ...opts, attach: once };
        once = undefined;
        const s = adapter.send(body, o);
        if (s && typeof s.run === 'string') {
          this.#set({ run: s.run });
          // The run is kept with the thread from its first byte: a reload attaches to it.
          if (this.#draftEvery !== false) {
            if (this.#draftTimer !== null) clearTimeout(this.#draftTimer);
            this.#draftNow();
          }
        }
        return s;
      },
      generate: (/** @type {unknown} */ body, /** @type {Unchecked} */ opts) => adapter.generate(body, opts),
    };
  }

  /**
   * A handler that waits for the user's approval first: the call shows
   * `approval-requested` until `approve(callId, …)`; a refusal is the call's error result.
   * @param {string} name
   * @param {Function} h
   */
  #gated(name, h) {
    return async (/** @type {unknown} */ input, /** @type {Unchecked} */ ctx) => {
      const id = ctx.call.id;
      const answer = await new Promise((resolve) => {
        this.#asked.set(id, resolve);
        this.#callState(id, 'approval-requested', 'awaiting-approval');
      });
      this.#asked.delete(id);
      if (!answer.approve) {
        this.#callState(id, 'input-available', 'submitted');
        throw new Error(answer.reason ? `the user denied this call: ${answer.reason}` : 'the user denied this call');
      }
      this.#callState(id, 'input-available', 'submitted');
      return h(input, ctx);
    };
  }

  /**
   * Sets the state of tool call `id` in the last message.
   * @param {string} id
   * @param {string} state
   * @param {ChatStatus} status
   */
  #callState(id, state, status) {
    const messages = this.#snapshot.messages;
    const last = messages[messages.length - 1];
    const i = last ? last.parts.findIndex((/** @type {Unchecked} */ p) => p.type === 'tool-call' && p.id === id) : -1;
    if (i < 0) return this.#set({ status });
    const m = withPart(last, i, (p) => ({ ...p, state }));
    this.#set({ status, messages: Object.freeze([...messages.slice(0, -1), m]) });
  }
}

