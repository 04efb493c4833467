// The JS glue of promptloom: prepares a message for the wasm core (large attachment data
// stays in JS and is spliced into the body afterwards), calls the host's resolver, and turns
// core errors into PromptloomError objects. All logic about messages lives in the core.

import { FIELD, SLOT, NEEDS_DATA, FAILED, NEXT, ASK, LOST, PROVIDERS, HEAD_CHARS } from './constants.js';

let wasm; // the current glue (wasm-bindgen's functions and classes for one instance)
let memory;
let renew; // makes a fresh glue and instance, synchronously, after a trap
let loadedEntry;
let generation = 0;

/**
 * @internal Installs the glue of an entry and how to make another one (each entry calls it
 * once). The entries share this module and one instance serves every call. Each entry's
 * module holds everything the smaller ones do (`promptloom/lower` ⊂ `promptloom` ⊂
 * `promptloom/composer`), so entries compose in any order: a larger one loaded first serves
 * the smaller ones too; loaded after a smaller one (the lazy
 * `await import('promptloom/composer')` of a skill panel), it takes over. The smaller
 * instance is then released like one that trapped: objects holding its wasm state fail
 * with `InstanceLost` (make them again), objects that are JS state (stores, catalogs,
 * command catalogs, indexes) carry on.
 */
export function __setWasm(glue, fresh, entry) {
  if (wasm && ENTRIES.indexOf(entry) <= ENTRIES.indexOf(loadedEntry)) return;
  if (wasm) {
    retire(wasm);
    generation += 1;
  }
  wasm = glue;
  memory = glue.__exports().memory;
  renew = fresh;
  loadedEntry = entry;
}

/** The entries, each module a superset of the one before. */
const ENTRIES = ['promptloom/lower', 'promptloom', 'promptloom/composer'];

/** Neuters a glue that no longer serves calls: its objects fail with `InstanceLost`. */
function retire(glue) {
  try {
    glue.__kill();
  } catch {
    // a glue without __kill: nothing to neuter
  }
}

/** An error from promptloom, with a stable `code` and structured `details`. */
export class PromptloomError extends Error {
  constructor(code, message, details) {
    super(message);
    this.name = 'PromptloomError';
    this.code = code;
    this.details = details ?? {};
  }

  /**
   * What the caller can do about it — `invalid`, `refused`, `unavailable`, `failed` or
   * `internal`: the core's class of `code` (the case of the WIT `error` variant), asked when
   * read; undefined for a code that is not the core's.
   */
  get class() {
    try {
      return (wasm && wasm.errorClass(String(this.code))) || undefined;
    } catch {
      return undefined;
    }
  }
}

/** Why the core refused an allocation before trapping (`trapReason`), as an error. */
function trapError(raw) {
  let reason = 0;
  try {
    reason = typeof wasm.trapReason === 'function' ? wasm.trapReason() : 0;
  } catch {
    reason = 0;
  }
  const what = raw && raw.message ? raw.message : String(raw);
  if (reason > 0) {
    return new PromptloomError('LimitExceeded', `a template built a value of ${reason} bytes, past the render budget; nothing was kept (a fresh wasm instance serves the next call)`, { limit: 'template_value_bytes', size: reason });
  }
  if (raw instanceof RangeError) {
    return new PromptloomError('LimitExceeded', `the input nests too deeply for the call stack (${what}); a fresh wasm instance serves the next call`, { limit: 'call_stack' });
  }
  return new PromptloomError('Internal', `the wasm instance trapped (${what}); a fresh instance serves the next call`, { trap: what });
}

/**
 * A trap leaves the instance in an unknown state (its stack pointer, allocator, borrowed
 * objects): it is never called again. Its glue is killed (objects it made fail with
 * `InstanceLost`, their finalizers do nothing) and a fresh instance serves the next call.
 */
function replaceInstance() {
  retire(wasm);
  const next = renew();
  wasm = next;
  memory = next.__exports().memory;
  generation += 1;
}

/** Whether a thrown value is a wasm trap (or a stack overflow inside wasm). */
function isTrap(raw) {
  if (typeof WebAssembly === 'object' && raw instanceof WebAssembly.RuntimeError) return true;
  // A stack overflow is a RangeError; one raised in JS (JSON.stringify of a deep value)
  // leaves the instance whole, one raised in wasm does not (engines that name no frames
  // are taken at their word).
  return raw instanceof RangeError && /call stack/i.test(raw.message) &&
    (typeof raw.stack !== 'string' || /wasm/.test(raw.stack) || !/\n\s+at /.test(raw.stack));
}

/** @internal A core error (its JSON wire form), a trap or a glue error as a PromptloomError. */
export function __fromCore(raw) {
  if (raw instanceof PromptloomError) return raw;
  if (raw && raw.instanceLost) {
    return new PromptloomError('InstanceLost', 'this object was made by a wasm instance that was replaced (one that trapped, or a smaller entry\'s once a larger one loaded and took over every call: promptloom after promptloom/lower, promptloom/composer after either); make it again', {});
  }
  if (isTrap(raw)) {
    const e = trapError(raw);
    replaceInstance();
    return e;
  }
  if (raw instanceof Error) {
    if (/^expected instance of /.test(raw.message)) {
      return new PromptloomError(generation > 0 ? 'InstanceLost' : 'InvalidOptions', `${raw.message}: pass an object this promptloom instance made`, {});
    }
    return new PromptloomError('InvalidOptions', `an argument has the wrong type: ${raw.message}`, {});
  }
  try {
    const e = JSON.parse(String(raw));
    return new PromptloomError(e.code, e.message, e.details);
  } catch {
    return new PromptloomError('Internal', String(raw), {});
  }
}

/** @internal Calls into the glue; core errors, traps and glue errors become PromptloomErrors. */
export function __call(fn, ...args) {
  if (!wasm) throw new PromptloomError('Internal', 'promptloom is not initialised yet', {});
  try {
    return fn(...args);
  } catch (raw) {
    throw __fromCore(raw);
  }
}
const call = __call;

/** @internal How many times the instance was replaced after a trap (tests read it). */
export function __generation() {
  return generation;
}

/**
 * @internal `value` as JSON text for the core: a string is taken as JSON text when `text`
 * allows; anything JSON cannot hold (undefined, a function, a cycle, a BigInt, nesting
 * past the engine's stack) is a PromptloomError with `code` naming the argument.
 */
export function __json(value, what, code = 'InvalidOptions', { text = true, path = '$', nullable = false } = {}) {
  if (typeof value === 'string' && text) return value;
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint' || (value === null && !nullable)) {
    throw new PromptloomError(code, `${what} is missing or not a JSON value (got ${value === null ? 'null' : typeof value}) (at ${path})`, { path });
  }
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (e instanceof RangeError) {
      throw new PromptloomError('LimitExceeded', `${what} nests too deeply to be written as JSON (at ${path})`, { path, limit: 'depth' });
    }
    throw new PromptloomError(code, `${what} cannot be written as JSON: ${e && e.message ? e.message : e} (at ${path})`, { path });
  }
}

/** @internal A key argument (an id, a name, a session): a string, or a finite number as text. */
export function __key(value, what, code = 'InvalidOptions') {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new PromptloomError(code, `\`${what}\` must be a string (got ${value === null ? 'null' : typeof value}) (at ${what})`, { path: what });
}

/** @internal An options argument: undefined is `{}`, anything but an object a coded error. */
export function __opts(options, what, code = 'InvalidOptions') {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new PromptloomError(code, `${what} takes an options object (got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}) (at options)`, { path: 'options' });
  }
  return options;
}

/** @internal A string argument: strings pass, anything else is a coded error naming it. */
export function __str(value, what, code = 'InvalidOptions', path = what) {
  if (typeof value === 'string') return value;
  throw new PromptloomError(code, `\`${what}\` must be a string (got ${value === null ? 'null' : typeof value}) (at ${path})`, { path });
}

// Attachment data at least this long stays in JS (a "slot"): the core sees its first bytes
// and length, and the body is spliced together here. When the core must read a slot whole
// (text, or unlabelled bytes that may be text) it says so, and the call is made again with
// that data inline.
const SLOT_MIN_CHARS = 1024;

function toBase64(u8) {
  if (typeof u8.toBase64 === 'function') return u8.toBase64();
  if (typeof Buffer === 'function') {
    return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
  }
  let bin = '';
  for (let i = 0; i < u8.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

function asBytes(v) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  return null;
}

/**
 * A base64 string (or base64 data URL) that can stay in JS: split off a data-URL header,
 * check the characters that could end the JSON string or break it, and the length. Anything
 * else goes to the core, which cleans or rejects it with a precise error.
 */
function slotable(s) {
  let b64 = s;
  let mime;
  if (s.length > 5 && s.slice(0, 5).toLowerCase() === 'data:') {
    const comma = s.indexOf(',');
    if (comma < 0 || comma > 512) return null;
    // The core reads the header (`media::parse_data_url`), as it reads a data URL it is given.
    const m = wasm.dataUrlMime(s.slice(0, comma + 1));
    if (m === undefined) return null;
    mime = m || undefined;
    b64 = s.slice(comma + 1);
  }
  if (b64.length % 4 !== 0) return null;
  // `"` and `\\` could end or escape the JSON string; a newline marks line-wrapped base64,
  // which the core cleans. (A search for one character is far cheaper than a full scan.)
  if (b64.includes('"') || b64.includes('\\') || b64.includes('\n')) return null;
  if (!/^[A-Za-z0-9+/]{2}[A-Za-z0-9+/=]{2}$/.test(b64.slice(-4))) return null;
  return { b64, mime };
}

/** Keeps base64 data in JS; `inline` is what to send instead if the core asks for it. */
function slotOf(slots, b64, mime, inline) {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const slot = { $slot: slots.length, head: b64.slice(0, HEAD_CHARS), len: (b64.length / 4) * 3 - pad };
  if (mime) slot.mime = mime;
  slots.push({ b64, inline, slot });
  return slot;
}

/** A text answer: the text travels beside the JSON (no escaping), named by index. */
function textAnswer(texts, text, mime) {
  texts.push(text);
  const a = { text_at: texts.length - 1 };
  if (mime) a.mime = mime;
  return a;
}

/** Turns a resolver's answer into the wire answer the core reads. */
function answer(v, slots, texts, kind) {
  if (v === null || v === undefined) return undefined;
  if (kind === 'mention') return { payload: v };
  if (typeof v === 'string') return textAnswer(texts, v);
  let bytes = asBytes(v);
  let mime;
  if (!bytes && typeof v === 'object') {
    if (typeof v.text === 'string') return textAnswer(texts, v.text, typeof v.mime === 'string' ? v.mime : undefined);
    if (typeof v.base64 === 'string') {
      const a = v.base64.length < SLOT_MIN_CHARS ? { bytes: v.base64 } : { slot: slotOf(slots, v.base64, undefined, { bytes: v.base64 }) };
      if (typeof v.mime === 'string') a.mime = v.mime;
      return a;
    }
    bytes = asBytes(v.bytes ?? v.data);
    mime = typeof v.mime === 'string' ? v.mime : undefined;
  }
  if (!bytes) {
    throw new PromptloomError('InvalidOptions', 'a resolver must return a string, bytes, { text }, { bytes, mime } or null', {});
  }
  const b64 = toBase64(bytes);
  const a = b64.length < SLOT_MIN_CHARS ? { bytes: b64 } : { slot: slotOf(slots, b64, undefined, { bytes: b64 }) };
  if (mime) a.mime = mime;
  return a;
}

/**
 * @internal The resolver requests of each message or turn in `json` (a JSON array): the
 * core plans them (`lower::requests`), one list per item, each request the object the
 * host's resolver is called with (`{ type, part, ref | target | content_id }`).
 */
export function __requests(json) {
  return JSON.parse(__inbox('resolveRequestsInbox', [json]));
}

/**
 * @internal An attachment part with its data ready for the core: bytes become base64, and
 * large base64 stays in JS as a slot (the core sees its head and length). Text is read
 * whole by the core (it goes into the body decoded), so it is never held back. Returns the
 * part itself when nothing changes.
 */
export function __holdData(p, i, slots) {
  const textual = (typeof p.mime === 'string' || typeof p.name === 'string') &&
    wasm.mediaClass(typeof p.mime === 'string' ? p.mime : '', typeof p.name === 'string' ? p.name : '') === 'text';
  if (p.data && typeof p.data === 'object' && !ArrayBuffer.isView(p.data) && !(p.data instanceof ArrayBuffer)) {
    throw new PromptloomError('InvalidMessage', '`data` must be a base64 string, a data URL or bytes (at parts[' + i + '].data)', { path: `parts[${i}].data` });
  }
  const bytes = asBytes(p.data);
  if (bytes) {
    const b64 = toBase64(bytes);
    return { ...p, data: b64.length < SLOT_MIN_CHARS || textual ? b64 : slotOf(slots, b64, undefined, b64) };
  }
  if (typeof p.data === 'string' && p.data.length >= SLOT_MIN_CHARS && !textual) {
    const ok = slotable(p.data);
    if (ok) return { ...p, data: slotOf(slots, ok.b64, ok.mime, p.data) };
  }
  return p;
}

function prepare(message, slots) {
  if (!message || typeof message !== 'object' || !Array.isArray(message.parts)) return message;
  // Most messages have no attachment: nothing to copy.
  if (!message.parts.some(isAttachment)) return message;
  let changed = false;
  const parts = message.parts.map((p, i) => {
    if (!p || typeof p !== 'object' || p.type !== 'file-attachment') return p;
    const q = __holdData(p, i, slots);
    changed ||= q !== p;
    return q;
  });
  // The message is only copied when a part changed (data moved to a slot).
  return changed ? { ...message, parts } : message;
}

const isAttachment = (p) => p !== null && typeof p === 'object' && p.type === 'file-attachment';

/**
 * The options the core reads, as JSON (`resolve` and `store` stay in JS); `cache` only for
 * conversations. A value JSON cannot hold is a coded error.
 */
function optionsJson(options, what = 'lower()', conversation = false) {
  if (!options || typeof options !== 'object') {
    throw new PromptloomError('InvalidOptions', `${what} needs an options object with a provider (at $)`, { path: '$' });
  }
  const { provider, system, tools, capabilities, params, cache, limits } = options;
  if (options.resolve !== undefined && typeof options.resolve !== 'function') {
    throw new PromptloomError('InvalidOptions', '`resolve` must be a function (at resolve)', { path: 'resolve' });
  }
  try {
    return JSON.stringify(conversation ? { provider, system, tools, capabilities, params, cache, limits } : { provider, system, tools, capabilities, params, limits });
  } catch (e) {
    throw new PromptloomError('InvalidOptions', `the options cannot be written as JSON: ${e && e.message ? e.message : e} (at options)`, { path: 'options' });
  }
}

/** The result of lower(): the body text, the report, and the body as an object. */
class Lowered {
  #report;
  constructor(body, reportJson) {
    this.body = body;
    this.#report = reportJson;
  }
  /** Every decision the lowering made (parsed on first access). */
  get report() {
    if (typeof this.#report === 'function') this.#report = this.#report();
    if (typeof this.#report === 'string') this.#report = JSON.parse(this.#report);
    return this.#report;
  }
  toJSON() {
    return { body: this.body, report: this.report };
  }
  /** The body parsed as an object. */
  json() {
    return JSON.parse(this.body);
  }
}

const encoder = new TextEncoder();

/**
 * @internal Writes strings into the core's inbox and calls the core function `name` (or the
 * function itself, for constructors and methods) with their byte lengths (and any `extra`
 * arguments); core errors become PromptloomErrors.
 */
export function __inbox(name, strings, ...extra) {
  return call(viaInbox, name, strings, ...extra);
}

/** @internal Calls a core export by name; core errors become PromptloomErrors. */
export function __core(name, ...args) {
  return call((...a) => exported(name)(...a), ...args);
}

/** A core export; one only the composer module has is a clear error in the other. */
function exported(name) {
  const f = wasm[name];
  if (typeof f !== 'function') {
    const needs = loadedEntry === 'promptloom' ? 'promptloom/composer' : 'promptloom';
    throw new PromptloomError('InvalidOptions', `\`${name}\` is not in the module of the "${loadedEntry}" entry, the only one loaded: import "${needs}" (statically or with \`await import()\`; once loaded it serves every call)`, { needs, loaded: loadedEntry });
  }
  return f;
}

/** @internal The wasm-bindgen module (for its classes). */
export function __module() {
  if (!wasm) throw new PromptloomError('Internal', 'promptloom is not initialised yet', {});
  return wasm;
}

export { toBase64 as __toBase64, asBytes as __asBytes, optionsJson as __optionsJson, answer as __answer, Lowered as __Lowered, withStore as __withStore, encoder as __encoder };

// `strings` are strings, or UTF-8 already encoded (a Uint8Array, copied as it is).
function viaInbox(name, strings, ...extra) {
  const f = typeof name === 'function' ? name : exported(name);
  let max = 0;
  for (const s of strings) max += typeof s === 'string' ? s.length * 3 : s.length;
  const ptr = wasm.inbox(max);
  const view = new Uint8Array(memory.buffer, ptr, max);
  const lens = new Uint32Array(strings.length);
  let at = 0;
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i];
    let written;
    if (typeof s === 'string') {
      written = encoder.encodeInto(s, at === 0 ? view : view.subarray(at)).written;
    } else {
      view.set(s, at);
      written = s.length;
    }
    lens[i] = written;
    at += written;
  }
  return f(lens, ...extra);
}

/**
 * @internal Writes response bytes (a Uint8Array, an ArrayBuffer or view, or a string) into
 * the inbox and calls `f(length)`; core errors, traps and glue errors become PromptloomErrors.
 */
export function __withBytes(f, chunk, what) {
  if (!wasm) throw new PromptloomError('Internal', 'promptloom is not initialised yet', {});
  /** @type {Uint8Array | null} */
  let bytes = null;
  if (typeof chunk !== 'string') {
    bytes = chunk instanceof Uint8Array ? chunk : ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : null;
    if (!bytes) {
      throw new PromptloomError('InvalidOptions', `${what} must be a Uint8Array, an ArrayBuffer or a string (got ${chunk === null ? 'null' : typeof chunk}) (at ${what})`, { path: what });
    }
  }
  return call(() => {
    if (bytes) {
      const ptr = wasm.inbox(bytes.length);
      new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
      return f(bytes.length);
    }
    const max = chunk.length * 3;
    const ptr = wasm.inbox(max);
    const { written } = encoder.encodeInto(chunk, new Uint8Array(memory.buffer, ptr, max));
    return f(written);
  });
}

/** @internal A message with attachment bytes written as base64 (nothing held back). */
export function __inlineBytes(message) {
  if (!message || typeof message !== 'object' || !Array.isArray(message.parts)) return message;
  let changed = false;
  const parts = message.parts.map((p) => {
    const bytes = p && typeof p === 'object' && p.type === 'file-attachment' ? asBytes(p.data) : null;
    if (!bytes) return p;
    changed = true;
    return { ...p, data: toBase64(bytes) };
  });
  return changed ? { ...message, parts } : message;
}

/** @internal Puts the data of the slots the core asked for back inline (in parts and answers). */
export function __inlineSlots(value, wanted) {
  if (Array.isArray(value)) return value.map((v) => __inlineSlots(v, wanted));
  if (value && typeof value === 'object') {
    for (const w of wanted) {
      if (value.data === w.slot) return { ...value, data: w.inline };
      if (value.slot === w.slot) {
        const { slot: _, ...rest } = value;
        return { ...rest, ...w.inline };
      }
    }
    if (value.parts) return { ...value, parts: __inlineSlots(value.parts, wanted) };
  }
  return value;
}

/** @internal Puts the host-held data back where the core wrote `SLOT n SLOT` markers. */
export function __splice(body, slots) {
  if (slots.length === 0) return body;
  // Concatenation (not join) lets the engine link the large strings instead of copying.
  const pieces = body.split(SLOT);
  let out = pieces[0];
  for (let k = 1; k < pieces.length; k += 2) {
    const held = slots[Number(pieces[k])];
    if (!held) throw new PromptloomError('Internal', 'a data slot was lost between JS and wasm', {});
    out = out + held.b64 + pieces[k + 1];
  }
  return out;
}

/**
 * One core call for every message (`json`: their JSON); a Lowered or a PromptloomError per
 * message. With `first` = ASK (a resolver not asked yet) the core may answer
 * `{ id, requests }` instead: what to ask the resolver, one list per message, while it
 * keeps the parsed messages under `id`; `pending` = that id lowers them with the answers.
 */
function finish(messages, json, opts, answers, slots, texts, first, pending) {
  const answersJson = first ?? (texts.length === 0 && answers.every((a) => Object.keys(a).length === 0) ? '' : JSON.stringify(answers));
  let out;
  if (pending !== undefined) {
    out = __inbox('lowerPendingInbox', [answersJson, ...texts], pending);
    // A newer plan replaced the kept messages: send them again.
    if (out === LOST) out = undefined;
  }
  out ??= __inbox('lowerManyInbox', [json, opts, answersJson, ...texts]);
  if (out[0] === ASK) {
    const nul = out.indexOf(FIELD);
    return { id: Number(out.slice(1, nul)), requests: JSON.parse(out.slice(nul + 1)) };
  }
  if (out[0] === NEEDS_DATA) {
    const wanted = out.slice(1).split(',').map((n) => slots[Number(n)]);
    if (wanted.some((w) => !w)) throw new PromptloomError('Internal', 'the core asked for an unknown data slot', {});
    const answers2 = answers.map((a) => {
      const b = {};
      for (const [k, v] of Object.entries(a)) b[k] = __inlineSlots(v, wanted);
      return b;
    });
    out = __inbox('lowerManyInbox', [JSON.stringify(messages.map((m) => __inlineSlots(m, wanted))), opts, JSON.stringify(answers2), ...texts]);
    if (out[0] === NEEDS_DATA) throw new PromptloomError('Internal', 'the core asked twice for data', {});
  }
  return out.split(NEXT).map((seg) => {
    if (seg[0] === FAILED) return __fromCore(seg.slice(1));
    const nul = seg.indexOf(FIELD);
    return new Lowered(__splice(seg.slice(nul + 1), slots), seg.slice(0, nul));
  });
}

/** Asks the resolver for every request of every message, then lowers them in one call. */
function lowerAll(messages, options, many) {
  const opts = optionsJson(options);
  const slots = [];
  const texts = [];
  const prepared = messages.map((m) => prepare(m, slots));
  const json = __json(prepared, 'the message', 'InvalidMessage', { text: false });
  const answers = prepared.map(() => ({}));
  const resolve = withStore(options.resolve, options.store);
  const ready = () => finish(prepared, json, opts, answers, slots, texts);
  if (!resolve) return ready();
  // The core plans what to ask; a message that asks nothing is lowered in the same call.
  const planned = finish(prepared, json, opts, answers, slots, texts, ASK);
  if (!planned.requests) return planned;
  const lists = planned.requests;
  const pending = [];
  try {
    ask(lists, many, resolve, answers, slots, texts, pending);
  } catch (e) {
    // A synchronous answer was refused: the Promises already started are abandoned, and
    // their own failures must not surface later as unhandled rejections.
    for (const p of pending) p.catch(() => {});
    throw e;
  }
  const lowerKept = () => finish(prepared, json, opts, answers, slots, texts, undefined, planned.id);
  if (pending.length === 0) return lowerKept();
  return Promise.all(pending).then(lowerKept);
}

/** Asks the resolver for every request; async answers are collected in `pending`. */
function ask(lists, many, resolve, answers, slots, texts, pending) {
  lists.forEach((requests, i) => {
    for (const r of requests) {
      const request = many ? { ...r, message: i } : r;
      let v;
      try {
        v = resolve(request);
      } catch (e) {
        answers[i][r.part] = { error: String(e && e.message ? e.message : e) };
        continue;
      }
      if (v && typeof v.then === 'function') {
        pending.push(
          Promise.resolve(v).then(
            (x) => {
              const a = answer(x, slots, texts, r.type);
              if (a) answers[i][r.part] = a;
            },
            (e) => {
              answers[i][r.part] = { error: String(e && e.message ? e.message : e) };
            },
          ),
        );
      } else {
        const a = answer(v, slots, texts, r.type);
        if (a) answers[i][r.part] = a;
      }
    }
  });
}

function one(results) {
  const r = results[0];
  if (r instanceof PromptloomError) throw r;
  return r;
}

/**
 * Lowers a user message to a provider request body.
 * Returns `{ body, report, json() }`, or a Promise of it when the resolver is async.
 */
export function lower(message, options) {
  const out = lowerAll([message], options, false);
  return typeof out.then === 'function' ? out.then(one) : one(out);
}

/**
 * Lowers many messages (a history) with one set of options in one call into wasm. Returns
 * one entry per message, in order: a Lowered, or the PromptloomError that message got (a
 * message that is only a host action has no content for the model). A Promise when any
 * resolver answer is. Resolver requests carry `message`, the message's index.
 */
export function lowerMany(messages, options) {
  if (!Array.isArray(messages)) throw new PromptloomError('InvalidMessage', 'lowerMany() takes an array of messages', { path: '$' });
  if (messages.length === 0) {
    __inbox('lowerManyInbox', ['[]', optionsJson(options), '']); // the options are still checked
    return [];
  }
  return lowerAll(messages, options, true);
}

/** A resolver that answers blob requests from a message store, and the rest with `resolve`. */
function withStore(resolve, store) {
  if (!store) return resolve;
  if (typeof store.blob !== 'function') {
    throw new PromptloomError('InvalidOptions', '`store` must be a message store from openMessageStore() (at store)', { path: 'store' });
  }
  return (request) => {
    if (request.type !== 'blob') return resolve ? resolve(request) : null;
    return store.blob(request.content_id).then((b) => (b ? { base64: b.data, mime: b.mime } : resolve ? resolve(request) : null));
  };
}

/** The default capability table of a provider (what it accepts natively, limits, routes). */
export function defaultCapabilities(provider) {
  return JSON.parse(call((p) => wasm.defaultCapabilities(p), __str(provider, 'provider')));
}

/** Parses a message and returns its normalised wire form (unknown parts are kept). */
export function normalizeMessage(message) {
  return JSON.parse(call((m) => wasm.normalizeMessage(m), __json(__inlineBytes(message), 'the message', 'InvalidMessage', { text: false })));
}

/**
 * What lower() will ask the resolver for this message (the core plans it), in part order:
 * the objects `resolve` is called with.
 */
export function resolveRequests(message) {
  return JSON.parse(call((m) => wasm.resolveRequests(m), __json(__inlineBytes(message), 'the message', 'InvalidMessage', { text: false })));
}

/** The providers lower() accepts. */
export const providers = PROVIDERS;
