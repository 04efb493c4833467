// The boundary suite: every exported function and method of a promptloom entry fed
// generated hostile arguments (wrong types, deep nesting, huge and broken strings, cycles,
// BigInt, null-prototype objects, bad callbacks). Every call must return, or fail with an
// Error carrying a known `code`; afterwards the instance answers byte-identically.
// `pl` is the entry's module namespace; runs wherever a JS host runs the package.

import { ERROR_CODES } from '../../pkg/src/constants.js';

/** The codes the core can answer with (written from `ErrorKind::ALL`). */
export const CODES = ERROR_CODES;

/** A seeded xorshift generator. */
export function rng(seed) {
  let s = BigInt(seed) || 1n;
  const mask = (1n << 64n) - 1n;
  return {
    next() {
      s ^= (s << 13n) & mask;
      s ^= s >> 7n;
      s ^= (s << 17n) & mask;
      return Number(s & 0xffffffffn);
    },
    below(n) {
      return n <= 0 ? 0 : this.next() % n;
    },
    pick(xs) {
      return xs[this.below(xs.length)];
    },
  };
}

function deep(n, leaf) {
  let v = leaf;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

function deepObject(n) {
  let v = { type: 'text', text: 'x' };
  for (let i = 0; i < n; i++) v = { parts: [v], role: 'user' };
  return v;
}

const TEXT = { type: 'text', text: 'hi' };
const MESSAGE = { role: 'user', parts: [TEXT] };

/** The pool of hostile values (a function so each run gets fresh objects). */
export function hostile() {
  const cyclic = { role: 'user', parts: [] };
  cyclic.parts.push(cyclic);
  cyclic.self = cyclic;
  const nullProto = Object.create(null);
  nullProto.role = 'user';
  const badJson = { toJSON() { throw new Error('no JSON for you'); } };
  const bigText = 'x'.repeat(1 << 20);
  return [
    undefined, null, true, false, 0, -1, 1.5, NaN, Infinity, -0, 2 ** 53, 10n,
    '', 'x', 'not json', '{', '[', '{"a":', 'null', '[]', '{}', '"\uD800"', '\uD800', '\uDC00x',
    'a\0b', '\u0001\u0002\u0003\u0004', '../../etc/passwd', bigText,
    Symbol('s'), () => {}, () => { throw new Error('callback failed'); }, async () => { throw new Error('async failed'); },
    () => Promise.resolve(5), () => 5, () => ({ text: 5 }),
    [], [null], [1, 2, 3], [[[]]], deep(10000, 1), deepObject(5000),
    {}, { length: -1 }, { length: 2 ** 40 }, cyclic, nullProto, badJson,
    new Uint8Array([0, 1, 255]), new ArrayBuffer(3), new Date(0), /re/, new Map(), new Set([1]),
    MESSAGE, { role: 'user', parts: null }, { role: 'user', parts: [null, 1, 'x', {}] },
    { role: 'user', parts: [{ type: 'text', text: '\uD800' }] },
    { role: 'user', parts: [{ type: 'file-attachment', data: new Uint8Array(16), mime: 'image/png' }] },
    { role: 'assistant', parts: [{ type: 'tool-call', id: 'c', name: 'n', input: 10n }] },
    { provider: 'anthropic' }, { provider: 'nope' }, { provider: 'gemini', tools: 'x', providerOptions: cyclic },
    { provider: 'anthropic', resolve: 5 }, { provider: 'openai-chat', system: deep(5000, 'x') },
    { id: 'x', name: 'x', description: 'd', artifacts: null }, { id: 'x', name: 'x', artifacts: [{ kind: 'prompt_template', content: '{{' }] },
    { skill_package: { name: 'a' }, thread_id: 5 }, { now: 5 }, { dir: 5, now: {} }, { k: -1, vector: 'x', blend: 'y' },
    { skill_id: { length: -1 }, session_id: 5 }, { store: {} }, { backend: 'memory', name: { length: -1 } },
    [[1, 2], [3]], [[NaN, Infinity]], [{ name: 5 }],
  ];
}

/** Runs `f`, awaiting a returned Promise; returns the failure or null. */
async function attempt(f) {
  try {
    const out = f();
    if (out && typeof out.then === 'function') await out;
    return null;
  } catch (e) {
    return e;
  }
}

function check(failures, name, args, e) {
  if (e === null) return;
  const code = e && e.code;
  if (!(e instanceof Error) || typeof code !== 'string' || !CODES.includes(code) || code === 'InstanceLost' || code === 'Internal') {
    failures.push(`${name}(${args}): ${e && e.name}: ${code} ${String(e && e.message).slice(0, 160)}`);
  }
}

function describe(v) {
  if (typeof v === 'string') return v.length > 40 ? `string(${v.length})` : JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'symbol' || typeof v === 'function') return typeof v;
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 60)}…` : s;
  } catch {
    return Array.isArray(v) ? 'array(unprintable)' : 'object(unprintable)';
  }
}

/** What every later run must answer byte-identically. */
export async function reference(pl) {
  const out = [];
  out.push(pl.lower(MESSAGE, { provider: 'anthropic', system: 'Be brief.' }).body);
  out.push(pl.lower(MESSAGE, { provider: 'gemini' }).body);
  out.push(pl.lowerConversation([MESSAGE, { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] }, MESSAGE], { provider: 'openai-responses' }).body);
  if (pl.parseInput) {
    out.push(JSON.stringify(pl.parseInput('/help me', {})));
    out.push(JSON.stringify(pl.validateSkill({ name: 'a', description: 'b', artifacts: [] })));
    out.push(JSON.stringify(pl.importSkillMd('---\nname: a\ndescription: b\n---\nbody\n', {}, { now: () => Date.parse('2026-01-01T00:00:00Z') }).skill));
  }
  if (pl.compose) {
    const skill = { name: 'n', description: 'd', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: 'Hi {{ user_request }}' }] };
    out.push(pl.compose({ skill_package: skill, user_request: 'x', thread_id: 't' }).prompt.text);
  }
  return out.join('\n---\n');
}

/**
 * The suite: `calls` generated calls per function; returns `{ calls, failures, before,
 * after }` (the reference answers before and after).
 */
export async function boundary(pl, { seed = 7, calls = 60 } = {}) {
  const r = rng(seed);
  const failures = [];
  let made = 0;
  const before = await reference(pl);
  const pool = hostile();
  const args = (n) => Array.from({ length: n }, () => r.pick(pool));

  const fns = Object.entries(pl).filter(([k, v]) => typeof v === 'function' && !/^[A-Z]/.test(k));
  for (const [name, f] of fns) {
    for (let i = 0; i < calls; i++) {
      const a = args(r.below(4));
      made += 1;
      check(failures, name, a.map(describe).join(', '), await attempt(() => f(...a)));
    }
  }

  // Classes: the constructor with hostile arguments, then every method of a good object.
  const objects = {
    CommandCatalog: () => new pl.CommandCatalog(),
    SkillIndex: () => new pl.SkillIndex([{ name: 'a', description: 'find things' }]),
    Conversation: () => new pl.Conversation(),
    SkillCatalog: async () => new pl.SkillCatalog(await pl.openSkillStore(), await pl.openSkillStore({ name: 'acct' })),
    MessageStore: () => pl.openMessageStore(),
    SkillStore: () => pl.openSkillStore(),
    ResponseParser: () => new pl.ResponseParser('anthropic'),
  };
  if (pl.Arbiter) {
    const system = pl.seedSkillSpecs(await pl.systemSkills());
    objects.Arbiter = () => new pl.Arbiter(pl.buildSkillRegistry(system, { tools: ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'] }));
    objects.SkillRegistry = () => pl.buildSkillRegistry(system, { tools: ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'] });
  }
  for (const [cls, make] of Object.entries(objects)) {
    const C = pl[cls];
    if (typeof C === 'function') {
      for (let i = 0; i < calls; i++) {
        const a = args(r.below(4));
        made += 1;
        check(failures, `new ${cls}`, a.map(describe).join(', '), await attempt(() => new C(...a)));
      }
    }
    const obj = await make();
    const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(obj)).filter((m) => m !== 'constructor' && !m.startsWith('__') && m !== 'free' && m !== 'close' && typeof Object.getOwnPropertyDescriptor(Object.getPrototypeOf(obj), m).value === 'function');
    for (const m of methods) {
      for (let i = 0; i < calls; i++) {
        const a = args(r.below(4));
        made += 1;
        check(failures, `${cls}.${m}`, a.map(describe).join(', '), await attempt(() => obj[m](...a)));
      }
    }
  }
  // An adapter (its fetch answers locally): send() with hostile arguments, and its stream read.
  const adapter = pl.createAdapter({ provider: 'openai-chat', retry: { maxRetries: 0 }, fetch: async () => new Response('data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n') });
  for (let i = 0; i < calls; i++) {
    const a = args(r.below(3));
    made += 1;
    check(failures, 'adapter.send', a.map(describe).join(', '), await attempt(async () => {
      const s = adapter.send(...a);
      await s.turn;
    }));
  }
  const after = await reference(pl);
  return { calls: made, failures, before, after };
}
