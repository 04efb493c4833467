// The compositor's JS glue: the command catalog, the text front end, submit (asks the
// host's callbacks, then writes the rows the core laid out in one commit), the message
// store, and the inspector. Resolution rules and the row layout live in the core.

import { PromptloomError, lowerAsync, __inlineBytes, __fromCore, __call, __json, __str, __opts, __key, __generation, __core, __inbox, __module, __holdData, __splice, __inlineSlots, __toBase64, __asBytes, __num, __said, __release, __disposable, __clock, __limitsWire, __longRun } from './api.js';
import { memoryBackend, indexedDbBackend, hostBackend, readPlanned } from './stores.js';
import { __wireTurn } from './conversation.js';
import { FIELD, SLOT } from './constants.js';

/** @import { Unchecked } from './instance.js' */
/** @import { Backend, WriteOp } from './stores.js' */
/** @typedef {import('../index.js').UserMessage} UserMessage */
/** @typedef {import('../index.js').Turn} Turn */
/** @typedef {import('../index.js').CommandEntry} CommandEntry */
/**
 * The rows the core laid out for one message or turn: its summary, the writes, and what was
 * stored (`message`).
 * @typedef {{ batch: (WriteOp & { at?: number })[], id: string, message?: unknown, [key: string]: unknown }} Laid
 */

/** Slash commands and `@` mention kinds: register, list, complete. */
export class CommandCatalog {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's CommandCatalog */
  #inner;
  /** @type {number} */
  #gen = -1;
  /** @type {boolean} */
  #builtins;
  // What was registered, in order: the catalog is rebuilt from it if the wasm instance is
  // ever replaced after a trap (a catalog is JS state and survives).
  /** @type {[string, string][]} */
  #journal = [];
  /** @param {{ builtins?: boolean }} [options] built-ins (/branch, /compact, /archive, /rewind, /search, @selection, @open, @cursor, @last) unless false */
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new PromptloomError('InvalidOptions', '`new CommandCatalog(options)` takes an options object (at options)', { path: 'options' });
    }
    this.#builtins = options.builtins !== false;
    this.#inner = this.#make();
  }
  #make() {
    const M = __module();
    this.#gen = __generation();
    return __call(() => new M.CommandCatalog(this.#builtins));
  }
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again from what was registered. */
  free() {
    __release(this.#inner);
    this.#gen = -1;
  }
  #current() {
    if (this.#gen !== __generation()) {
      this.#inner = this.#make();
      for (const [method, arg] of this.#journal) __call(() => this.#inner[method](arg));
    }
    return this.#inner;
  }
  /**
   * Registers or replaces a command; returns the entry it replaced, if any.
   * @param {CommandEntry} entry
   * @returns {CommandEntry | undefined}
   */
  register(entry) {
    const old = this.#call('register', __json(entry, 'the command entry', 'InvalidCommand', { text: false, path: 'entry' }));
    return old ? JSON.parse(old) : undefined;
  }
  /**
   * Registers or replaces a mention kind (`{ name, description? }`); returns whether one was replaced.
   * @param {string | { name: string, description?: string }} entry
   * @returns {boolean}
   */
  registerMention(entry) {
    return this.#call('registerMention', __json(typeof entry === 'string' ? { name: entry } : entry, 'the mention kind', 'InvalidCommand', { text: false, path: 'entry' }));
  }
  /**
   * Removes a command; returns whether it existed.
   * @param {string} name
   * @returns {boolean}
   */
  unregister(name) {
    return this.#call('unregister', __str(name, 'name', 'InvalidCommand'));
  }
  /** `{ commands, mentions }`. */
  list() {
    return JSON.parse(__call(() => this.#current().list()));
  }
  /**
   * Palette entries for what the user typed (`/re`, `@se`), best first.
   * @param {string} typed
   * @param {{ limit?: number }} [options]
   * @returns {import('../index.js').Completion[]}
   */
  complete(typed, options = {}) {
    const { limit = 20 } = __opts(options, 'complete()');
    return JSON.parse(__call(() => this.#current().complete(__str(typed, 'typed', 'InvalidCommand'), __num(limit, 'limit', { integer: true, min: 0 }))));
  }
  /** @internal */
  get __inner() {
    return this.#current();
  }
  /**
   * Calls a registering method, and writes it in the journal.
   * @param {string} method
   * @param {string} arg
   */
  #call(method, arg) {
    const out = __call(() => this.#current()[method](arg));
    this.#journal.push([method, arg]);
    return out;
  }
}

/** @type {CommandCatalog | undefined} */
let defaultCatalog;
/**
 * @param {unknown} catalog
 * @returns {CommandCatalog}
 */
function catalogOf(catalog) {
  if (catalog === undefined) return (defaultCatalog ??= new CommandCatalog());
  if (!(catalog instanceof CommandCatalog)) {
    throw new PromptloomError('InvalidOptions', '`catalog` must be a CommandCatalog (at catalog)', { path: 'catalog' });
  }
  return catalog;
}

/**
 * Typed text → parts: `/cmd args`, `@file:path:10-25`, `@skill:name`, `@selection`, text.
 * @param {string} text
 * @param {{ catalog?: CommandCatalog }} [options]
 * @returns {import('../index.js').Part[]}
 */
export function parseInput(text, options = {}) {
  const { catalog } = __opts(options, 'parseInput()');
  if (typeof text !== 'string') throw new PromptloomError('InvalidMessage', 'parseInput() takes a string', { path: '$' });
  return JSON.parse(__core('parseInput', text, catalogOf(catalog).__inner));
}

/**
 * A session name: a string without NUL (rows travel to the core NUL-separated).
 * @param {unknown} session
 */
function sessionName(session) {
  const s = __key(session, 'session');
  if (s.includes('\0')) throw new PromptloomError('InvalidOptions', 'a session name cannot contain NUL (U+0000) (at session)', { path: 'session' });
  return s;
}

/** A persisted conversation store over one backend. */
class MessageStore {
  /** @type {Backend} */
  #backend;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  /** @type {Map<string, string | null>} the session rows this store wrote last */
  #sessions = new Map();
  /**
   * @param {Backend} backend
   * @param {string} name
   */
  constructor(backend, name) {
    this.#backend = backend;
    this.name = name;
    this.backend = backend.kind;
  }
  /** @internal the backend (tests and the benchmark read rows through it). */
  get __backend() {
    return this.#backend;
  }
  /**
   * @internal the session row this store last wrote (undefined: unknown).
   * @param {string} session
   */
  __session(session) {
    return this.#sessions.get(session);
  }
  /**
   * @internal
   * @param {string} session
   * @param {string | null | undefined} row
   */
  __remember(session, row) {
    if (row === undefined) this.#sessions.delete(session);
    else this.#sessions.set(session, row);
  }
  /**
   * The stored message `id`, in the current shape (older rows are upgraded on read).
   * @param {string} id
   * @returns {Promise<UserMessage | null>}
   */
  async get(id) {
    return readPlanned(this.#backend, 'message', __key(id, 'id'));
  }
  /**
   * Every message of `session`, in order (one read of two key ranges).
   * @param {string} [session]
   * @returns {Promise<UserMessage[]>}
   */
  async history(session = 'default') {
    return readPlanned(this.#backend, 'history', sessionName(session));
  }
  /**
   * Every turn of `session` in order — user messages, assistant replies, tool results,
   * instructions — what `Conversation.load` and `lowerConversation` take.
   * @param {string} [session]
   * @returns {Promise<Turn[]>}
   */
  async thread(session = 'default') {
    return readPlanned(this.#backend, 'thread', sessionName(session));
  }
  /**
   * Persists a turn of any role after the session's last message (an assistant reply, tool
   * results, an instruction; what a user composed goes through submit(), which resolves
   * it first). Returns `{ id, session, seq, turn }`: `turn` is what was stored. A turn
   * already stored in this session (its metadata says so) is not written again.
   * @param {Turn} turn
   * @param {{ session?: string, id?: string, now?: () => number }} [options]
   * @returns {Promise<{ id: string, session: string, seq: number, turn: Turn }>}
   */
  async append(turn, options) {
    const { session, optsJson } = appendOptions(options);
    const json = __json(__wireTurn(turn) ?? null, 'the turn', 'InvalidMessage', { text: false, nullable: true, path: 'turn' });
    const lay = (/** @type {string | null | undefined} */ row) => decodeDone(__inbox('appendTurnInbox', [json, optsJson, row ?? '']));
    const { message, ...result } = await this.__appendLaidOut(session, lay);
    return { ...result, turn: message };
  }
  /**
   * Persists several turns after the session's last message in one write, each with the
   * next sequence number and its own id (a branch's copy of the turns it keeps, an imported
   * thread). Returns `{ ids, session, turns }`: `turns` as stored. A turn already stored in
   * this session is passed over.
   * @param {Turn[]} turns
   * @param {{ session?: string, now?: () => number }} [options]
   * @returns {Promise<{ ids: string[], session: string, turns: Turn[] }>}
   */
  async appendTurns(turns, options) {
    if (!Array.isArray(turns)) throw new PromptloomError('InvalidMessage', 'appendTurns() takes an array of turns (at turns)', { path: 'turns' });
    if (options && typeof options === 'object' && /** @type {Unchecked} */ (options).id !== undefined) {
      throw new PromptloomError('InvalidOptions', 'appendTurns() gives each turn its own id: `id` names one (at id)', { path: 'id' });
    }
    const { session, optsJson } = appendOptions(options);
    const json = __json(turns.map((t) => __wireTurn(t) ?? null), 'the turns', 'InvalidMessage', { text: false, path: 'turns' });
    const lay = (/** @type {string | null | undefined} */ row) => decodeDone(__inbox('appendTurnsInbox', [json, optsJson, row ?? '']));
    const { message, ...result } = await this.__appendLaidOut(session, lay);
    return { ...result, turns: message };
  }
  /**
   * Keeps `draft` — `{ turn?, run? }`: the reply `session` is reading so far, and the
   * relayed run reading it on a server — as the session's draft: a page that goes away
   * mid-reply finds it again with `draft()` (the turn cut: its text, marked `cut`) instead
   * of losing it. A draft stands until a turn is stored after the session's last message
   * (then it reads as none). Resolves whether anything was kept (a reply with no text yet
   * and no run is not). `Chat` does this as a reply streams.
   * @param {{ turn?: Turn, run?: string }} draft
   * @param {{ session?: string }} [options]
   * @returns {Promise<boolean>}
   */
  async saveDraft(draft, options) {
    const { turn, run } = __opts(draft, 'saveDraft()', 'InvalidMessage');
    const { session = 'default' } = __opts(options, 'saveDraft()');
    const name = sessionName(session);
    const json = __json({ ...(turn === undefined ? {} : { turn: __wireTurn(turn) ?? null }), ...(run === undefined ? {} : { run }) }, 'the draft', 'InvalidMessage', { text: false, path: 'draft' });
    return this.#draftRows(name, json);
  }
  /**
   * The reply `session` was reading when its page went away: `{ turn?, run? }` (the turn
   * cut; the relayed run to attach to), or null (none, or a turn was stored after it).
   * Append the turn to keep it in the thread.
   * @param {string} [session]
   * @returns {Promise<{ turn?: Turn, run?: string } | null>}
   */
  async draft(session = 'default') {
    return readPlanned(this.#backend, 'draft', sessionName(session));
  }
  /**
   * Drops `session`'s draft.
   * @param {string} [session]
   * @returns {Promise<void>}
   */
  async dropDraft(session = 'default') {
    await this.#draftRows(sessionName(session), '');
  }
  /**
   * Writes the core's rows of a draft (`json`; '' drops it), laid out from the session row
   * read in the same transaction.
   * @param {string} session
   * @param {string} json
   */
  #draftRows(session, json) {
    let kept = false;
    return this.__serial(async () => {
      await this.#backend.commitAfterRead([['sessions', session]], ([row]) => {
        const done = decodeDone(__inbox('draftRowsInbox', [json, session, row ?? '']));
        kept = /** @type {Unchecked} */ (done).kept === true;
        return done.batch;
      });
      return kept;
    });
  }
  /**
   * @internal Appends a turn a Conversation read already: `layText(optionsText, sessionRow)`
   * gives the core's layout of it (the rows after the session's last message).
   * @param {string} session
   * @param {(optionsText: string, sessionRow: string) => string} layText
   */
  __appendStaged(session, layText) {
    const { optsJson } = appendOptions({ session });
    return this.__appendLaidOut(sessionName(session), (/** @type {string | null | undefined} */ row) => decodeDone(__call(() => layText(optsJson, row ?? ''))));
  }
  /**
   * @internal Commits the rows `lay(sessionRow)` lays out for a turn after the session's last
   * message, one append at a time (a lost race is laid out again from the fresh row).
   * @param {string} session
   * @param {(sessionRow: string | null | undefined) => Laid} lay
   * @returns {Promise<any>}
   */
  __appendLaidOut(session, lay) {
    return this.__serial(async () => {
      let row = this.__session(session);
      if (row === undefined) row = await this.#backend.get('sessions', session);
      return commitLaidOut(this, session, row, lay(row), lay);
    });
  }
  /**
   * Summaries of the messages of `session`: `{ id, seq, part_count, metadata }`.
   * @param {string} [session]
   * @returns {Promise<import('../index.js').MessageSummary[]>}
   */
  async list(session = 'default') {
    return readPlanned(this.#backend, 'list', sessionName(session));
  }
  /**
   * One page of `session`: `{ items, page, prev, next }`. `of` is `thread` (default),
   * `history` or `list`; a page spans `pageSize` sequence numbers (a power of ten, default
   * 100: one key prefix, one scan); without `page`, the session's last.
   * @param {string} [session]
   * @param {import('../index.js').PageOptions<import('../index.js').PageOf>} [options]
   * @returns {Promise<import('../index.js').Page<unknown>>}
   */
  async page(session = 'default', options) {
    const { of = 'thread', page, pageSize = 100 } = __opts(options, 'page()');
    const at = page === undefined ? '' : String(__num(page, 'page', { integer: true, min: 0 }));
    return readPlanned(this.#backend, 'page', __str(of, 'of'), sessionName(session), at, String(__num(pageSize, 'pageSize', { integer: true, min: 1 })));
  }
  /**
   * The session page by page (non-empty pages), `order` `oldest-first` (default) or
   * `newest-first`; each read is one page. A `signal` stops it before its next read.
   * @param {string} [session]
   * @param {import('../index.js').PagesOptions<import('../index.js').PageOf>} [options]
   * @returns {AsyncGenerator<import('../index.js').Page<unknown>, void, undefined>}
   */
  async *pages(session = 'default', options) {
    const { order = 'oldest-first', signal, ...rest } = __opts(options, 'pages()');
    if (order !== 'oldest-first' && order !== 'newest-first') {
      throw new PromptloomError('InvalidOptions', `\`order\` is 'oldest-first' or 'newest-first' (at order)`, { path: 'order' });
    }
    const run = __longRun({ signal }, 'pages()');
    /** @type {number | null | undefined} */
    let at = order === 'oldest-first' ? 0 : undefined;
    for (;;) {
      run.stop();
      const p = await this.page(session, { ...rest, page: at });
      if (p.items.length > 0) yield p;
      at = order === 'oldest-first' ? p.next : p.prev;
      if (at === null) return;
    }
  }
  /**
   * A split-out attachment: `{ content_id, mime, size, data }` (data is base64), or null.
   * @param {string} contentId
   * @returns {Promise<import('../index.js').StoredBlob | null>}
   */
  async blob(contentId) {
    return readPlanned(this.#backend, 'blob', __key(contentId, 'contentId'));
  }
  /**
   * Stores a composer invocation record beside the thread's turns: the
   * `invocation_record` of a composition, or of a compose error's `details`.
   * @param {unknown} record
   */
  async recordInvocation(record) {
    const value = __json(record, 'the invocation record', 'InvalidRequest', { text: false });
    const key = __core('invocationKey', value);
    await this.#backend.commitAfterRead([], () => [{ op: 'put', table: 'skill_invocations', key, value }]);
  }
  /**
   * The invocation records of a thread, in composition order.
   * @param {string} threadId
   * @returns {Promise<unknown[]>}
   */
  async invocations(threadId) {
    return readPlanned(this.#backend, 'invocations', __key(threadId, 'threadId'));
  }
  /**
   * @internal one submit at a time per store instance (the session counter is read-modify-write).
   * @template T
   * @param {() => Promise<T>} f
   * @returns {Promise<T>}
   */
  __serial(f) {
    const run = this.#queue.then(f);
    this.#queue = run.catch(() => {});
    return run;
  }
  /** Closes the backend (IndexedDB connection). */
  close() {
    this.#backend.close();
  }
}

/**
 * Opens a message store: `backend` is "indexeddb" (browsers), "memory" (Node, edge
 * workers, tests), or a host object with async get/put/delete/list, or a Cloudflare KV
 * namespace as it is (rows under `<name>/`, so stores can share a namespace).
 * @param {{ backend?: 'indexeddb' | 'memory' | object, name?: string }} [options]
 * @returns {Promise<MessageStore>}
 */
export async function openMessageStore(options) {
  const { backend = 'memory', name = 'promptloom' } = __opts(options, 'openMessageStore()');
  __key(name, 'name');
  if (typeof name !== 'string' || name === '') throw new PromptloomError('InvalidOptions', '`name` must be a non-empty string (at name)', { path: 'name' });
  if (backend === 'memory') return new MessageStore(memoryBackend(), name);
  if (backend === 'indexeddb') return new MessageStore(await indexedDbBackend(name), name);
  if (backend && typeof backend === 'object') return new MessageStore(hostBackend(backend, name), name);
  throw new PromptloomError('InvalidOptions', '`backend` must be "indexeddb", "memory" or an object with get/put/delete/list (at backend)', { path: 'backend' });
}

/**
 * Writes rows the core laid out from the session row `row`, with no read in the
 * transaction. The head and id rows are inserts, so if another writer (another tab) took
 * the sequence number, the write fails whole and is laid out again (`relay(fresh)`) from
 * the fresh session row. Returns the summary without the batch.
 * @param {MessageStore} store
 * @param {string} session
 * @param {string | null | undefined} row the session row the rows were laid out from
 * @param {Laid} done
 * @param {(fresh: string | null) => Laid} relay
 * @returns {Promise<any>} the summary the core wrote beside the rows (a submission, an append)
 */
async function commitLaidOut(store, session, row, done, relay) {
  if (done.batch.length === 0) {
    // Nothing to write (the turn was stored before).
    const { batch: _, ...result } = done;
    return result;
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await store.__backend.commitAfterRead([], () => done.batch);
      store.__remember(session, done.batch.find((op) => op.table === 'sessions')?.value);
      const { batch: _, ...result } = done;
      return result;
    } catch (e) {
      if (!(e instanceof PromptloomError && e.details?.conflict)) throw e;
      const fresh = await store.__backend.get('sessions', session);
      try {
        // The core says whether to lay the rows out again or what to answer.
        __core('afterConflict', e.details.table, e.details.key, done.id, row ?? undefined, fresh ?? undefined, attempt);
      } catch (answer) {
        store.__remember(session, undefined);
        throw answer;
      }
      row = fresh;
      done = relay(row);
    }
  }
}

/**
 * `append()`'s options: the session and the options text the core lays out with.
 * @param {unknown} options
 */
function appendOptions(options) {
  let { session = 'default', id, now } = __opts(options, 'append()');
  session = sessionName(session);
  if (id !== undefined) id = __key(id, 'id');
  return { session, optsJson: JSON.stringify({ session, id, now: __clock(now)() }) };
}

/**
 * The core's laid-out rows: `{ ...summary, batch, message }` with each row's value in place.
 * @param {string} text
 * @returns {Laid}
 */
function decodeDone(text) {
  const pieces = text.split(FIELD);
  const out = JSON.parse(pieces[0]);
  for (const op of out.done.batch) {
    if (op.at !== undefined) op.value = pieces[op.at + 1];
  }
  out.done.message = out.message;
  return out.done;
}

/** @param {unknown} e */
function errorText(e) {
  return __said(e);
}

const EMPTY = Object.freeze({ type: 'text', text: '' });

/**
 * Asks the host for what only it knows; a thrown or rejected callback becomes `{ error }`.
 * @param {Unchecked[]} needs the core's questions
 * @param {{ resolve?: Unchecked, mentions?: Unchecked }} callbacks
 */
async function answer(needs, { resolve, mentions }) {
  /** @type {Record<string, unknown>} */
  const answers = {};
  await Promise.all(
    needs.map(async (n) => {
      /** @type {(() => unknown) | null} */
      let f;
      if (n.type === 'mention') f = mentions && typeof mentions[n.kind] === 'function' ? () => mentions[n.kind](n.target) : null;
      else f = typeof resolve === 'function' ? () => resolve(n) : null;
      if (!f) return;
      try {
        const v = await f();
        if (v !== undefined && v !== null) answers[n.part] = v;
      } catch (e) {
        answers[n.part] = { error: errorText(e) };
      }
    }),
  );
  return answers;
}

/**
 * Attachment bytes become base64; large base64 stays in JS as a slot (the core classifies it
 * from its first bytes and splices markers the glue fills in; it asks for the whole data
 * only to hash a blob or to tell text from binary).
 * @param {Unchecked} message as the caller wrote it
 * @param {import('./slots.js').Slot[]} slots
 * @param {number[]} partOf each slot's part index
 * @returns {Unchecked}
 */
function wireMessage(message, slots, partOf) {
  if (!message || typeof message !== 'object' || !Array.isArray(message.parts)) return message;
  let changed = false;
  const parts = message.parts.map((/** @type {Unchecked} */ p, /** @type {number} */ i) => {
    if (!p || typeof p !== 'object' || p.type !== 'file-attachment') return p;
    const before = slots.length;
    const q = __holdData(p, i, slots);
    if (slots.length > before) partOf[before] = i;
    changed ||= q !== p;
    return q;
  });
  return changed ? { ...message, parts } : message;
}

const MARKER = new RegExp(`${SLOT}(\\d+)${SLOT}`, 'g');


/**
 * Resolves a message (commands, mentions, attachments → blob store) and persists it before
 * anything is lowered. Returns `{ id, session, seq, message, actions, skills, warnings,
 * blobs }`; `message` is what was persisted and what lower() takes.
 * @param {UserMessage} message
 * @param {import('../index.js').SubmitOptions} options
 * @returns {Promise<import('../index.js').Submission>}
 */
export async function submit(message, options = /** @type {any} */ ({})) {
  __opts(options, 'submit()');
  const { store, catalog, resolve, mentions, session = 'default', id, now, skills, limits } = /** @type {Unchecked} */ (options);
  if (!(store instanceof MessageStore)) {
    throw new PromptloomError('InvalidOptions', 'submit() needs a `store` from openMessageStore() (at store)', { path: 'store' });
  }
  if (mentions !== undefined && (mentions === null || typeof mentions !== 'object')) {
    throw new PromptloomError('InvalidOptions', '`mentions` must map mention kinds to callbacks (at mentions)', { path: 'mentions' });
  }
  const cat = catalogOf(catalog).__inner;
  /** @type {import('./slots.js').Slot[]} */
  const slots = [];
  /** @type {number[]} */
  const partOf = [];
  const wired = wireMessage(message, slots, partOf);
  let msgJson = __json(wired ?? null, 'the message', 'InvalidMessage', { text: false, nullable: true });
  const optsJson = __json({ session, id, now: __clock(now)(), skills, limits: __limitsWire(limits) }, 'the options', 'InvalidOptions', { text: false, path: 'options' });
  /**
   * One step of the core's submit: the questions it asks, or the laid-out rows.
   * @param {string | null | undefined} row
   * @param {string} answers
   * @param {string} json
   * @returns {Unchecked}
   */
  const call = (row, answers, json) => {
    /** @type {string[]} */
    const pieces = __inbox('submitInbox', [json, optsJson, row ?? '', answers], cat).split(FIELD);
    // Host-held data: the message gets each string put in place after parsing (no large
    // JSON text to parse), the rows get it spliced into their text.
    const held = slots.length > 0 ? [...pieces[0].matchAll(MARKER)].map((m) => Number(m[1])) : [];
    const out = JSON.parse(held.length > 0 ? pieces[0].replace(MARKER, '') : pieces[0]);
    if (out.done) {
      out.done.message = out.message;
      for (const n of held) {
        const part = out.message.parts[partOf[n]];
        if (!part || !slots[n]) throw new PromptloomError('Internal', 'a data slot was lost between JS and wasm', {});
        part.data = slots[n].b64;
      }
      for (const op of out.done.batch) {
        if (op.at === undefined) continue;
        const v = pieces[op.at + 1];
        op.value = held.length > 0 && v.includes(SLOT) ? __splice(v, slots) : v;
      }
    }
    return out;
  };
  /**
   * @param {string | null | undefined} row
   * @param {string} answers
   * @param {string} [json]
   * @returns {Unchecked}
   */
  const step = (row, answers, json = msgJson) => {
    let out = call(row, answers, json);
    if (out.data && json === msgJson) {
      // The core must read these slots whole: send them inline from now on.
      /** @type {import('./slots.js').Slot[]} */
      const wanted = out.data.map((/** @type {number} */ n) => slots[n]);
      if (wanted.some((w) => !w)) throw new PromptloomError('Internal', 'the core asked for an unknown data slot', {});
      msgJson = JSON.stringify(__inlineSlots(wired, wanted));
      out = call(row, answers, msgJson);
      if (out.data) throw new PromptloomError('Internal', 'the core asked twice for data', {});
    }
    return out;
  };
  // Only commands and mentions can raise host questions: the first step sees them alone
  // (other parts become empty placeholders at the same indices), so the attachments' bytes
  // cross into wasm once.
  const questions = () => {
    const parts = /** @type {Unchecked} */ (message)?.parts;
    if (!Array.isArray(parts) || !parts.some((p) => p && (p.type === 'command' || p.type === 'mention'))) return null;
    const plan = { ...message, parts: parts.map((/** @type {Unchecked} */ p) => (p && (p.type === 'command' || p.type === 'mention') ? p : EMPTY)) };
    return step('', '', __json(plan, 'the message', 'InvalidMessage', { text: false })).needs ?? null;
  };
  return store.__serial(async () => {
    // Optimistic concurrency: lay the rows out from the session row this store last saw,
    // and write them with no read in the transaction. The head and id rows are inserts, so
    // if another writer (another tab) took the sequence number, the write fails whole and is
    // laid out again from the fresh row.
    let row = store.__session(session);
    if (row === undefined) row = await store.__backend.get('sessions', session);
    const needs = questions();
    const answersJson = needs ? __json(await answer(needs, { resolve, mentions }), "the resolver's and mention handlers' answers", 'AdapterFailed', { text: false }) : '';
    const done = (/** @type {Unchecked} */ out) => {
      if (out.needs || !out.done) throw new PromptloomError('Internal', 'the core asked the host twice', {});
      return out.done;
    };
    return commitLaidOut(store, session, row, done(step(row, answersJson)), (/** @type {string | null} */ fresh) => done(step(fresh, answersJson || '{}')));
  });
}

/**
 * The inspector's three views of one message side by side: the user view (chips), the
 * persisted shape, and the model view (the lowered body and its report).
 * @param {UserMessage} message
 * @param {import('../index.js').LowerOptions} options
 */
export async function inspect(message, options) {
  const persisted = JSON.parse(__core('normalizeMessage', __json(__inlineBytes(message), 'the message', 'InvalidMessage', { text: false })));
  const user = JSON.parse(__core('userView', JSON.stringify(persisted)));
  /** @type {{ body: unknown, report: unknown } | { error: { code: string, message: string } }} */
  let model;
  try {
    const l = await lowerAsync(message, options);
    model = { body: l.json(), report: l.report };
  } catch (e) {
    model = { error: { code: /** @type {Unchecked} */ (e)?.code ?? 'Internal', message: errorText(e) } };

  }
  return { user, persisted, model };
}
