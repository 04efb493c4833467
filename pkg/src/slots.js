// Attachment data held in JS: large base64 (or bytes) stays on this side as a slot — the
// core sees its first bytes and its length — and is spliced into the body the core writes;
// what the core reads whole (text, by the core's media class) is never held. Resolver
// answers are turned into the wire answers the core reads.

import { SLOT, HEAD_CHARS } from './constants.js';
import { PromptloomError, __module, __bytesOf, __json } from './instance.js';

// Attachment data at least this long stays in JS (a "slot"): the core sees its first bytes
// and length, and the body is spliced together here. When the core must read a slot whole
// (text, or unlabelled bytes that may be text) it says so, and the call is made again with
// that data inline.
const SLOT_MIN_CHARS = 1024;

/** @import { Unchecked } from './instance.js' */
/**
 * Where attachment data held in JS stands in a message or an answer: its index, its first
 * characters and its decoded length (what the core reads in its place).
 * @typedef {{ $slot: number, head: string, len: number, mime?: string }} SlotMarker
 */
/**
 * Base64 data held in JS: the data, what to send instead when the core asks for it whole,
 * and its marker.
 * @typedef {{ b64: string, inline: Unchecked, slot: SlotMarker }} Slot
 */
/** The wire answer to one resolver request, as the core reads it. @typedef {Record<string, unknown>} WireAnswer */

/**
 * @param {Uint8Array} u8
 * @returns {string}
 */
function toBase64(u8) {
  const native = /** @type {Uint8Array & { toBase64?: () => string }} */ (u8);
  if (typeof native.toBase64 === 'function') return native.toBase64();
  if (typeof Buffer === 'function') {
    return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
  }
  let bin = '';
  for (let i = 0; i < u8.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, /** @type {any} */ (u8.subarray(i, i + 0x8000)));
  }
  return btoa(bin);
}

/**
 * @param {unknown} v
 * @param {string} [what]
 */
function asBytes(v, what = 'data') {
  return __bytesOf(v, what, 'InvalidData');
}

/**
 * A base64 string (or base64 data URL) that can stay in JS: split off a data-URL header,
 * check the characters that could end the JSON string or break it, and the length. Anything
 * else goes to the core, which cleans or rejects it with a precise error.
 * @param {string} s
 * @returns {{ b64: string, mime: string | undefined } | null}
 */
function slotable(s) {
  let b64 = s;
  let mime;
  if (s.length > 5 && s.slice(0, 5).toLowerCase() === 'data:') {
    const comma = s.indexOf(',');
    if (comma < 0 || comma > 512) return null;
    // The core reads the header (`media::parse_data_url`), as it reads a data URL it is given.
    const m = __module().dataUrlMime(s.slice(0, comma + 1));
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

/**
 * Keeps base64 data in JS; `inline` is what to send instead if the core asks for it.
 * @param {Slot[]} slots
 * @param {string} b64
 * @param {string | undefined} mime
 * @param {unknown} inline
 * @returns {SlotMarker}
 */
function slotOf(slots, b64, mime, inline) {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  /** @type {SlotMarker} */
  const slot = { $slot: slots.length, head: b64.slice(0, HEAD_CHARS), len: (b64.length / 4) * 3 - pad };
  if (mime) slot.mime = mime;
  slots.push({ b64, inline, slot });
  return slot;
}

/**
 * A text answer: the text travels beside the JSON (no escaping), named by index.
 * @param {(string | Uint8Array)[]} texts
 * @param {string} text
 * @param {string} [mime]
 * @returns {WireAnswer}
 */
function textAnswer(texts, text, mime) {
  texts.push(text);
  /** @type {WireAnswer} */
  const a = { text_at: texts.length - 1 };
  if (mime) a.mime = mime;
  return a;
}

/**
 * Turns a resolver's answer into the wire answer the core reads.
 * @param {Unchecked} v what the resolver answered
 * @param {Slot[]} slots
 * @param {(string | Uint8Array)[]} texts
 * @param {string} kind the request's `type`
 * @returns {WireAnswer | undefined}
 */
function answer(v, slots, texts, kind) {
  if (v === null || v === undefined) return undefined;
  // A mention's payload is the handler's own value: read once, as JSON.
  if (kind === 'mention') return { payload: JSON.parse(__json(v, "a mention handler's answer", 'AdapterFailed', { text: false, path: 'mentions' })) };
  if (typeof v === 'string') return textAnswer(texts, v);
  let bytes = asBytes(v);
  let mime;
  if (!bytes && typeof v === 'object') {
    if (typeof v.text === 'string') return textAnswer(texts, v.text, typeof v.mime === 'string' ? v.mime : undefined);
    if (typeof v.base64 === 'string') {
      /** @type {WireAnswer} */
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
  /** @type {WireAnswer} */
  const a = b64.length < SLOT_MIN_CHARS ? { bytes: b64 } : { slot: slotOf(slots, b64, undefined, { bytes: b64 }) };
  if (mime) a.mime = mime;
  return a;
}

/**
 * @internal An attachment part with its data ready for the core: bytes become base64, and
 * large base64 stays in JS as a slot (the core sees its head and length). Text is read
 * whole by the core (it goes into the body decoded), so it is never held back. Returns the
 * part itself when nothing changes.
 * @param {Unchecked} p an attachment part as the caller wrote it
 * @param {number} i its index
 * @param {Slot[]} slots
 * @returns {Unchecked}
 */
export function __holdData(p, i, slots) {
  const textual = (typeof p.mime === 'string' || typeof p.name === 'string') &&
    __module().mediaClass(typeof p.mime === 'string' ? p.mime : '', typeof p.name === 'string' ? p.name : '') === 'text';
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

/**
 * A message with its large attachment data held in JS (`__holdData`), or the message itself.
 * @param {Unchecked} message as the caller wrote it
 * @param {Slot[]} slots
 * @returns {Unchecked}
 */
function prepare(message, slots) {
  if (!message || typeof message !== 'object' || !Array.isArray(message.parts)) return message;
  // Most messages have no attachment: nothing to copy.
  if (!message.parts.some(isAttachment)) return message;
  let changed = false;
  const parts = message.parts.map((/** @type {Unchecked} */ p, /** @type {number} */ i) => {
    if (!p || typeof p !== 'object' || p.type !== 'file-attachment') return p;
    const q = __holdData(p, i, slots);
    changed ||= q !== p;
    return q;
  });
  // The message is only copied when a part changed (data moved to a slot).
  return changed ? { ...message, parts } : message;
}

const isAttachment = (/** @type {Unchecked} */ p) => p !== null && typeof p === 'object' && p.type === 'file-attachment';

/**
 * @internal A message with attachment bytes written as base64 (nothing held back).
 * @param {Unchecked} message as the caller wrote it
 * @returns {Unchecked}
 */
export function __inlineBytes(message) {
  if (!message || typeof message !== 'object' || !Array.isArray(message.parts)) return message;
  let changed = false;
  const parts = message.parts.map((/** @type {Unchecked} */ p) => {
    const bytes = p && typeof p === 'object' && p.type === 'file-attachment' ? asBytes(p.data) : null;
    if (!bytes) return p;
    changed = true;
    return { ...p, data: toBase64(bytes) };
  });
  return changed ? { ...message, parts } : message;
}

/**
 * @internal Puts the data of the slots the core asked for back inline (in parts and answers).
 * @param {Unchecked} value a prepared message, part list or answer
 * @param {Slot[]} wanted
 * @returns {Unchecked}
 */
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

/**
 * @internal Puts the host-held data back where the core wrote `SLOT n SLOT` markers.
 * @param {string} body
 * @param {Slot[]} slots
 * @returns {string}
 */
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

export { toBase64 as __toBase64, asBytes as __asBytes, answer as __answer, prepare as __prepare };
