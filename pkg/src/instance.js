// The instance behind every entry: which wasm module and glue serve the calls, how a trap
// is survived (a fresh instance; objects holding the old one's state fail with
// InstanceLost), PromptloomError, and the helpers every face file crosses the boundary with
// (strings through the inbox, bytes, checked arguments, core errors as PromptloomErrors).

/**
 * wasm-bindgen's generated module for one instance: its exports differ per entry, so they
 * are looked up by name (`exported`) and typed where they are called.
 * @typedef {Record<string, any> & { __exports(): { memory: WebAssembly.Memory }, __retired?: boolean, __kill?: () => void }} Glue
 */

/**
 * A value from the caller (or a host callback), not yet checked: the function that takes it
 * checks its shape with `typeof` and throws a coded error when it is wrong.
 * @typedef {any} Unchecked
 */

/** @typedef {import('./constants.js').ErrorCode} ErrorCode */

/** @type {Glue} */
let wasm; // the active glue (wasm-bindgen's functions and classes for one instance)

// The glue of the largest entry loaded: it serves every call, except an object's made by a
// smaller entry's glue before, which finishes on it (`__on`).
/** @type {Glue} */
let primary;

/** @type {WebAssembly.Memory} */
let memory;

/** @type {() => Glue} */
let renew; // makes a fresh glue and instance, synchronously, after a trap

/** @type {string} */
let loadedEntry;

let generation = 0;

/**
 * @internal Installs the glue of an entry and how to make another one (each entry calls it
 * once). The entries share this module and one instance serves every call. Each entry's
 * module holds everything the smaller ones do (`promptloom/lower` ⊂ `promptloom` ⊂
 * `promptloom/composer`), so entries compose in any order: a larger one loaded first serves
 * the smaller ones too; loaded after a smaller one (the lazy
 * `await import('promptloom/composer')` of a skill panel), it takes over every new call.
 * Objects made before carry on: those holding wasm state (a conversation, a parser in the
 * middle of a stream, an agent run) finish on the smaller instance, which lives as long as
 * they do; those kept as JS state (catalogs, command catalogs, indexes, prepared skills,
 * contract registries) build themselves again on the larger one at their next use.
 * @param {Glue} glue
 * @param {() => Glue} fresh
 * @param {string} entry
 */
export function __setWasm(glue, fresh, entry) {
  if (primary && ENTRIES.indexOf(entry) <= ENTRIES.indexOf(loadedEntry)) return;
  if (primary) generation += 1;
  wasm = primary = glue;
  memory = glue.__exports().memory;
  renew = fresh;
  loadedEntry = entry;
}

/** @internal The glue serving calls now: an object made now keeps it (see `__on`). */
export function __glue() {
  return wasm;
}

/**
 * @internal Runs `f` on `glue` (the one an object was made by): its calls, inbox writes and
 * traps are that instance's. A glue replaced after a trap fails with `InstanceLost`.
 * @template T
 * @param {Glue} glue
 * @param {() => T} f
 * @returns {T}
 */
export function __on(glue, f) {
  if (glue === wasm) return f();
  if (glue.__retired) throw __fromCore({ instanceLost: true });
  const prev = wasm;
  wasm = glue;
  memory = glue.__exports().memory;
  try {
    return f();
  } finally {
    wasm = prev.__retired ? primary : prev;
    memory = wasm.__exports().memory;
  }
}

/**
 * @internal `__call(f)` on `glue` (the instance an object was made on): `__on(glue, () =>
 * __call(f))` without the wrapper closure when `glue` serves calls now, as it almost always
 * does.
 * @template T
 * @param {Glue} glue
 * @param {() => T} f
 * @returns {T}
 */
export function __onCall(glue, f) {
  return glue === wasm ? __call(f) : __on(glue, () => __call(f));
}

/** The entries, each module a superset of the one before. */
const ENTRIES = ['promptloom/lower', 'promptloom', 'promptloom/composer'];

/**
 * Neuters a glue that no longer serves calls: its objects fail with `InstanceLost`.
 * @param {Glue} glue
 */
function retire(glue) {
  glue.__retired = true;
  try {
    glue.__kill?.();
  } catch {
    // a glue without __kill: nothing to neuter
  }
}

/** An error from promptloom, with a stable `code` and structured `details`. */
export class PromptloomError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {Record<string, any>} [details]
   */
  constructor(code, message, details) {
    super(message);
    /** @type {'PromptloomError'} */
    this.name = 'PromptloomError';
    this.code = code;
    /** @type {Record<string, any>} */
    this.details = details ?? {};
  }

  /**
   * What the caller can do about it — `invalid`, `refused`, `unavailable`, `failed` or
   * `internal`: the core's class of `code` (the case of the WIT `error` variant), asked when
   * read; undefined for a code that is not the core's.
   */
  get class() {
    try {
      return (primary && primary.errorClass(String(this.code))) || undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * Why the core refused an allocation before trapping (`trapReason`), as an error.
 * @param {any} raw what was thrown
 */
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
  const dead = wasm;
  retire(dead);
  // A smaller entry's instance (an object made before a larger entry loaded) is not made
  // again: the larger one serves every new call already.
  if (dead === primary) primary = renew();
  wasm = primary;
  memory = primary.__exports().memory;
  generation += 1;
}

/**
 * Whether a thrown value is a wasm trap (or a stack overflow inside wasm).
 * @param {unknown} raw
 */
function isTrap(raw) {
  if (typeof WebAssembly === 'object' && raw instanceof WebAssembly.RuntimeError) return true;
  // A stack overflow is a RangeError; one raised in JS (JSON.stringify of a deep value)
  // leaves the instance whole, one raised in wasm does not (engines that name no frames
  // are taken at their word).
  // (A wasm frame reads `wasm://` or `wasm-function[…]`; the glue's own file path, which
  // holds "wasm" too, is JS.)
  return raw instanceof RangeError && /call stack/i.test(raw.message) &&
    (typeof raw.stack !== 'string' || /wasm:\/\/|wasm-function/.test(raw.stack) || !/\n\s+at /.test(raw.stack));
}

/**
 * @internal Releases a core object's wasm memory now (wasm-bindgen's object: a second
 * release, or one of a retired instance, does nothing).
 * @param {{ __wbg_ptr?: number, free(): void } | null | undefined} o
 */
export function __release(o) {
  if (o && o.__wbg_ptr) {
    try {
      o.free();
    } catch {
      // an object of a retired instance: its memory went with it
    }
  }
}

/**
 * @internal Makes a glue class disposable: `free()` releases its wasm memory at once (a
 * second call does nothing), and `[Symbol.dispose]` calls it, for the `using` statement.
 * Without either, the memory is released when the object is collected: the core object it
 * holds is registered with wasm-bindgen's FinalizationRegistry.
 * @template {abstract new (...args: any) => { free(): void }} C
 * @param {C} cls
 * @returns {C}
 */
export function __disposable(cls) {
  const dispose = typeof Symbol === 'function' ? Symbol.dispose : undefined;
  if (typeof dispose === 'symbol' && !Object.prototype.hasOwnProperty.call(cls.prototype, dispose)) {
    Object.defineProperty(cls.prototype, dispose, {
      /** @this {{ free(): void }} */
      value() {
        this.free();
      },
      writable: true,
      configurable: true,
    });
  }
  return cls;
}

const RELEASED = 'this object was released (its free(), or the end of its `using` block): make another (at this)';

/**
 * @internal A core error (its JSON wire form), a trap or a glue error as a PromptloomError.
 * @param {any} raw what the core or the glue threw (its JSON text, an Error, a trap)
 * @returns {PromptloomError}
 */
export function __fromCore(raw) {
  if (raw instanceof PromptloomError) return raw;
  if (raw instanceof Error && raw.message === 'null pointer passed to rust') {
    return new PromptloomError('InvalidOptions', RELEASED, { path: 'this', released: true });
  }
  if (raw && raw.instanceLost) {
    return new PromptloomError('InstanceLost', 'this object was made by a wasm instance that trapped and was replaced; make it again', {});
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
    return asWritten(new PromptloomError(e.code, e.message, e.details));
  } catch {
    return new PromptloomError('Internal', String(raw), {});
  }
}

/**
 * A core error about a `limits` option names the option as JS writes it (`limits.maxParts`,
 * not the core's `limits.max_parts`), in its path and its message.
 * @param {PromptloomError} err
 */
function asWritten(err) {
  const d = err.details;
  // A limit's name is the `limits` option that sets it (`maxParts`), where one does.
  if (err.code === 'LimitExceeded' && typeof d.limit === 'string' && /^max_[a-z_]+$/.test(d.limit)) d.limit = camel(d.limit);
  const p = d.path;
  if (typeof p === 'string' && p.startsWith('limits.') && p.includes('_')) {
    const js = camel(p);
    const [key, jsKey] = [p.slice(7), js.slice(7)];
    err.details.path = js;
    if (typeof d.known === 'string') d.known = d.known.split(', ').map(camel).join(', ');
    err.message = err.message.split(p).join(js).split(`\`${key}\``).join(`\`${jsKey}\``);
  }
  return err;
}

/** @param {string} s */
function camel(s) {
  return s.replace(/_([a-z])/g, (_, /** @type {string} */ c) => c.toUpperCase());
}

/**
 * @internal Calls into the glue; core errors, traps and glue errors become PromptloomErrors.
 * @template {any[]} A
 * @template R
 * @param {(...args: A) => R} fn
 * @param {A} args
 * @returns {R}
 */
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
 * @param {unknown} value
 * @param {string} what
 * @param {ErrorCode} [code]
 * @param {{ text?: boolean, path?: string, nullable?: boolean }} [options]
 * @returns {string}
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

/**
 * @internal A key argument (an id, a name, a session): a string, or a finite number as text.
 * @param {unknown} value
 * @param {string} what
 * @param {ErrorCode} [code]
 * @returns {string}
 */
export function __key(value, what, code = 'InvalidOptions') {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new PromptloomError(code, `\`${what}\` must be a string (got ${value === null ? 'null' : typeof value}) (at ${what})`, { path: what });
}

/**
 * @internal An options argument: undefined is `{}`, anything but an object a coded error.
 * @param {unknown} options
 * @param {string} what
 * @param {ErrorCode} [code]
 * @returns {Record<string, any>} its fields, which the caller checks one by one
 */
export function __opts(options, what, code = 'InvalidOptions') {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new PromptloomError(code, `${what} takes an options object (got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}) (at options)`, { path: 'options' });
  }
  return options;
}

/**
 * @internal Refuses an option's old spelling, naming the new one (`renames`: old → new);
 * before 1.0 nothing is read under two names.
 * @template {Record<string, any>} O
 * @param {O} options
 * @param {Record<string, string>} renames
 * @param {string} what
 * @returns {O}
 */
export function __renamed(options, renames, what) {
  for (const old in renames) {
    if (options[old] !== undefined) {
      const use = renames[old];
      throw new PromptloomError('InvalidOptions', `${what} takes \`${use}\` now, not \`${old}\` (at ${old})`, { path: old, use });
    }
  }
  return options;
}

/**
 * @internal The one shape of time an option takes: `now`, a function answering epoch
 * milliseconds (`Date.now` when left out). A number or a string (the old shapes) is refused
 * naming it; an answer that is not a time is `AdapterFailed`.
 * @param {unknown} now
 * @param {string} [what]
 * @returns {() => number}
 */
export function __clock(now, what = 'now') {
  if (now === undefined || now === null) return Date.now;
  if (typeof now !== 'function') {
    throw new PromptloomError('InvalidOptions', `\`${what}\` is a clock: a function answering epoch milliseconds, e.g. \`() => 1700000000000\` (got ${typeName(now)}) (at ${what})`, { path: what, use: 'a function answering epoch milliseconds' });
  }
  return () => {
    const t = __host(now, what);
    if (typeof t !== 'number' || !Number.isFinite(t) || Math.abs(t) > 8.64e15) {
      throw new PromptloomError('AdapterFailed', `\`${what}\` must answer epoch milliseconds (got ${typeof t === 'number' ? t : typeName(t)}) (at ${what})`, { path: what, callback: what });
    }
    return t;
  };
}

/**
 * @internal A `limits` option in the core's spelling: each camelCase key (`maxParts`) as the
 * core names it (`max_parts`); a snake_case key, the old spelling, is refused naming the new.
 * @param {Record<string, unknown> | null | undefined} limits
 * @param {string} [what]
 */
export function __limitsWire(limits, what = 'limits') {
  if (limits === undefined || limits === null) return limits;
  __opts(limits, `\`${what}\``);
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const k of Object.keys(limits)) {
    if (k.includes('_')) {
      const use = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      throw new PromptloomError('InvalidOptions', `\`${what}\` takes \`${use}\` now, not \`${k}\` (at ${what}.${k})`, { path: `${what}.${k}`, use });
    }
    out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = limits[k];
  }
  return out;
}

/**
 * @internal Tool definitions as the core reads them. A function tool's `inputSchema` is JSON
 * Schema, or the schema of a library that speaks Standard JSON Schema (zod 4.2+, ArkType,
 * Valibot through its converter), written out here as JSON Schema (draft 2020-12, without its
 * `$schema` line). Other values pass for the core to judge (it refuses `parameters` and
 * `input_schema`, the providers' spellings, naming `inputSchema`).
 * @param {unknown} tools
 * @param {string} [what]
 */
export function __toolsWire(tools, what = 'tools') {
  if (!Array.isArray(tools)) return tools;
  let out = tools;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (t === null || typeof t !== 'object' || (t.type !== undefined && t.type !== 'function')) continue;
    const at = `${what}[${i}]`;
    const s = t.inputSchema;
    if (s === null || typeof s !== 'object' || !s['~standard']) continue;
    const json = __jsonSchemaOf(s, `${at}.inputSchema`);
    if (out === tools) out = tools.slice();
    out[i] = { ...t, inputSchema: json };
  }
  return out;
}

/**
 * @internal The JSON Schema of a Standard JSON Schema (the input it accepts).
 * @param {{ '~standard': { jsonSchema?: { input?: (o: { target: string }) => unknown } } }} schema
 * @param {string} path
 * @returns {Record<string, unknown>}
 */
export function __jsonSchemaOf(schema, path) {
  const convert = schema['~standard'].jsonSchema;
  if (!convert || typeof convert.input !== 'function') {
    throw new PromptloomError('InvalidOptions', `this schema speaks Standard Schema but not Standard JSON Schema, so it cannot be sent to a model (zod 4.2+ and ArkType speak both; Valibot through toStandardJsonSchema()): pass its JSON Schema (at ${path})`, { path });
  }
  let json;
  try {
    json = convert.input({ target: 'draft-2020-12' });
  } catch (e) {
    throw new PromptloomError('InvalidOptions', `the schema cannot be written as JSON Schema: ${__said(e)} (at ${path})`, { path });
  }
  if (json === null || typeof json !== 'object') throw new PromptloomError('InvalidOptions', `the schema's JSON Schema is not an object (at ${path})`, { path });
  const { $schema: _, ...rest } = /** @type {Record<string, unknown>} */ (json);
  return rest;
}

/**
 * @internal A long operation's `signal` and `onProgress`: `stop()` throws `Aborted` (the
 * signal's reason as `cause`) once the signal has fired; `tell(phase, done, total)` calls
 * the observer with `{ phase, done, total }` (what it throws is `AdapterFailed` naming it).
 * @param {{ signal?: unknown, onProgress?: unknown }} options
 * @param {string} what
 */
export function __longRun(options, what) {
  const signal = __signal(options.signal);
  const observer = __fn(options.onProgress, 'onProgress');
  return {
    signal,
    stop() {
      if (signal && signal.aborted) {
        throw Object.assign(new PromptloomError('Aborted', `${what} was aborted; what it had done so far stays`, { path: 'signal' }), { cause: signal.reason });
      }
    },
    /**
     * @param {string} phase
     * @param {number} done
     * @param {number} total
     */
    tell(phase, done, total) {
      if (observer) __host(observer, 'onProgress', { phase, done, total });
    },
  };
}

/**
 * @internal The ISO 8601 text of epoch milliseconds (what documents store).
 * @param {number} ms
 */
export function __iso(ms) {
  return new Date(ms).toISOString();
}

/**
 * @internal A string argument: strings pass, anything else is a coded error naming it.
 * @param {unknown} value
 * @param {string} what
 * @param {ErrorCode} [code]
 * @param {string} [path]
 * @returns {string}
 */
export function __str(value, what, code = 'InvalidOptions', path = what) {
  if (typeof value === 'string') return value;
  throw new PromptloomError(code, `\`${what}\` must be a string (got ${value === null ? 'null' : typeof value}) (at ${path})`, { path });
}

/**
 * What a thrown or answered value says, without trusting its `message` or `toString`.
 * @param {unknown} e
 * @returns {string}
 */
export function __said(e) {
  try {
    const m = e !== null && typeof e === 'object' && 'message' in e && typeof e.message === 'string' ? e.message : e;
    return typeof m === 'string' ? m : String(m);
  } catch {
    return `a ${typeof e} that cannot be printed`;
  }
}

/** @param {unknown} v */
function typeName(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/**
 * @internal A host function failed: what it threw becomes `AdapterFailed` naming it (the
 * thrown value as `cause`); a PromptloomError it threw passes as it is.
 * @param {unknown} e
 * @param {string} what
 * @returns {PromptloomError}
 */
export function __hostFailed(e, what) {
  if (e instanceof PromptloomError) return e;
  const err = new PromptloomError('AdapterFailed', `${what} failed: ${__said(e)} (at ${what})`, { path: what, callback: what });
  err.cause = e;
  return err;
}

/**
 * @internal Calls the host function `f` (named `what`) once; what it throws is `AdapterFailed`.
 * @param {Function} f
 * @param {string} what
 * @param {unknown[]} args
 * @returns {any} what the host answered, unchecked (the caller checks it)
 */
export function __host(f, what, ...args) {
  let r;
  try {
    r = f(...args);
  } catch (e) {
    throw __hostFailed(e, what);
  }
  // A Promise where a value was wanted is refused by the caller; its rejection must not go
  // unobserved (in Node that ends the process).
  if (r !== null && (typeof r === 'object' || typeof r === 'function') && r instanceof Promise) r.catch(() => {});
  return r;
}

/**
 * @internal `__host` for a function that may answer a Promise: awaited, its rejection coded too.
 * @param {Function} f
 * @param {string} what
 * @param {unknown[]} args
 * @returns {Promise<any>} what the host answered, unchecked (the caller checks it)
 */
export async function __hostAsync(f, what, ...args) {
  try {
    return await f(...args);
  } catch (e) {
    throw __hostFailed(e, what);
  }
}

/**
 * @internal An optional function argument: undefined/null give `fallback`; anything else not a function is a coded error.
 * @template {Function | undefined} [F=undefined]
 * @param {unknown} value
 * @param {string} what
 * @param {F} [fallback]
 * @param {ErrorCode} [code]
 * @returns {Function | F}
 */
export function __fn(value, what, fallback = undefined, code = 'InvalidOptions') {
  if (value === undefined || value === null) return /** @type {F} */ (fallback);
  if (typeof value === 'function') return value;
  throw new PromptloomError(code, `\`${what}\` must be a function (got ${typeName(value)}) (at ${what})`, { path: what });
}

/**
 * @internal An optional AbortSignal (anything with `aborted` and `addEventListener`).
 * @param {unknown} value
 * @param {string} [what]
 * @returns {AbortSignal | undefined}
 */
export function __signal(value, what = 'signal') {
  if (value === undefined || value === null) return undefined;
  const v = /** @type {any} */ (value);
  if (typeof v === 'object' && typeof v.aborted === 'boolean' && typeof v.addEventListener === 'function' && typeof v.removeEventListener === 'function') return v;
  throw new PromptloomError('InvalidOptions', `\`${what}\` must be an AbortSignal (got ${typeName(value)}) (at ${what})`, { path: what });
}

/**
 * @internal An array argument without holes: anything else is a coded error naming it.
 * @param {unknown} value
 * @param {string} what
 * @param {ErrorCode} [code]
 * @returns {any[]}
 */
export function __list(value, what, code = 'InvalidOptions') {
  if (!Array.isArray(value)) throw new PromptloomError(code, `\`${what}\` must be an array (got ${typeName(value)}) (at ${what})`, { path: what });
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw new PromptloomError(code, `\`${what}\` has a hole at ${i} (at ${what}[${i}])`, { path: `${what}[${i}]` });
  }
  return value;
}

/**
 * @internal A finite number argument (optionally an integer at least `min`).
 * @param {unknown} value
 * @param {string} what
 * @param {{ integer?: boolean, min?: number }} [options]
 * @param {ErrorCode} [code]
 * @returns {number}
 */
export function __num(value, what, { integer = false, min = -Infinity } = {}, code = 'InvalidOptions') {
  if (typeof value === 'number' && Number.isFinite(value) && value >= min && (!integer || Number.isInteger(value))) return value;
  const want = integer ? `an integer${min > -Infinity ? ` of at least ${min}` : ''}` : `a finite number${min > -Infinity ? ` of at least ${min}` : ''}`;
  throw new PromptloomError(code, `\`${what}\` must be ${want} (got ${typeof value === 'number' ? value : typeName(value)}) (at ${what})`, { path: what });
}

/**
 * @internal Bytes of a Uint8Array, ArrayBuffer or view (the same memory, not a copy), or
 * null for anything else; a detached buffer is a coded error naming the argument.
 * @param {unknown} chunk
 * @param {string} what
 * @param {ErrorCode} [code]
 * @returns {Uint8Array | null}
 */
export function __bytesOf(chunk, what, code = 'InvalidOptions') {
  try {
    // A view over a detached buffer reads as empty; making another view over it throws.
    if (chunk instanceof Uint8Array) return chunk.length > 0 ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, 0);
    if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    return chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : null;
  } catch (e) {
    if (e instanceof TypeError) throw new PromptloomError(code, `${what} is a detached ArrayBuffer (its bytes were transferred away) (at ${what})`, { path: what });
    throw e;
  }
}

const encoder = new TextEncoder();

/**
 * @internal Writes strings into the core's inbox and calls the core function `name` (or the
 * function itself, for constructors and methods) with their byte lengths (and any `extra`
 * arguments); core errors become PromptloomErrors.
 * @param {string | Function} name
 * @param {(string | Uint8Array)[]} strings
 * @param {unknown[]} extra
 * @returns {any} what the core function answers
 */
export function __inbox(name, strings, ...extra) {
  return call(viaInbox, name, strings, ...extra);
}

/**
 * @internal Calls a core export by name; core errors become PromptloomErrors.
 * @param {string} name
 * @param {unknown[]} args
 * @returns {any} what the core function answers
 */
export function __core(name, ...args) {
  return call((...a) => exported(name)(...a), ...args);
}

/**
 * A core export; one only the composer module has is a clear error in the other.
 * @param {string} name
 * @returns {Function}
 */
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

/**
 * `strings` are strings, or UTF-8 already encoded (a Uint8Array, copied as it is).
 * @param {string | Function} name
 * @param {(string | Uint8Array)[]} strings
 * @param {unknown[]} extra
 */
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
 * @template R
 * @param {(length: number) => R} f
 * @param {unknown} chunk
 * @param {string} what
 * @returns {R}
 */
export function __withBytes(f, chunk, what) {
  if (!wasm) throw new PromptloomError('Internal', 'promptloom is not initialised yet', {});
  /** @type {Uint8Array | null} */
  let bytes = null;
  if (typeof chunk !== 'string') {
    bytes = __bytesOf(chunk, what);
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
    const text = /** @type {string} */ (chunk);
    const max = text.length * 3;
    const ptr = wasm.inbox(max);
    const { written } = encoder.encodeInto(text, new Uint8Array(memory.buffer, ptr, max));
    return f(written);
  });
}

/** @type {Uint8Array | null} a view over the memory's buffer (a new one when it grows or the instance changes) */
let bytesView = null;

/**
 * @internal `__on(glue, () => __withBytes(f, chunk, what))` without its closures when
 * `glue` serves calls now and `chunk` is a Uint8Array with bytes (each chunk of a stream,
 * as a reader hands it): one inbox write and one call.
 * @template R
 * @param {Glue} glue
 * @param {(length: number) => R} f
 * @param {unknown} chunk
 * @param {string} what
 * @returns {R}
 */
export function __onBytes(glue, f, chunk, what) {
  if (glue !== wasm || !(chunk instanceof Uint8Array) || chunk.length === 0) return __on(glue, () => __withBytes(f, chunk, what));
  try {
    const ptr = wasm.inbox(chunk.length);
    let view = bytesView;
    if (view === null || view.buffer !== memory.buffer) view = bytesView = new Uint8Array(memory.buffer);
    view.set(chunk, ptr);
    return f(chunk.length);
  } catch (raw) {
    throw __fromCore(raw);
  }
}

export { encoder as __encoder };
