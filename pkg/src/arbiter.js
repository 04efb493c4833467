// Skill state machines and the arbiter: JS glue. Validation, registries, the arbiter's
// rules, its log and Mermaid live in the core; this file converts. A tool proposal that is
// accepted without changing anything comes back as an empty string (no JSON either way), so
// the hot path is one call into wasm.

import { PromptloomError, __core, __fromCore, __module } from './api.js';

function text(x, what) {
  if (typeof x === 'string') return x;
  if (x === null || typeof x !== 'object') throw new PromptloomError('InvalidRequest', `${what} must be an object or JSON text`, { path: '$' });
  return JSON.stringify(x);
}

function call(f) {
  try {
    return f();
  } catch (e) {
    throw __fromCore(e);
  }
}

/** Every problem of a SkillSpec at once: `{ ok, problems: [{ path, code, message, severity }] }`. */
export function validateSkillSpec(spec, { tools } = {}) {
  return JSON.parse(__core('validateSkillSpec', text(spec, 'the spec'), JSON.stringify(tools ?? null)));
}

/** The built-in specs (`tool-builder`, `skill-builder`), as data. */
export function builtinSkillSpecs() {
  return JSON.parse(__core('builtinSkillSpecs'));
}

/** An immutable registry of validated specs. */
class SkillRegistry {
  #inner;
  constructor(inner) {
    this.#inner = inner;
  }
  /** @internal */
  get __inner() {
    return this.#inner;
  }
  /** The spec names. */
  names() {
    return JSON.parse(this.#inner.names());
  }
  /** A spec, or null. */
  spec(name) {
    const s = this.#inner.spec(String(name));
    return s === '' ? null : JSON.parse(s);
  }
}

/**
 * Builds a registry: `specs`, then `overrides` (agent-specific specs replacing global ones
 * by name), the built-ins with `builtins: true`; every spec is validated against `tools`.
 * Any problem fails the build (`InvalidSkill`, `details.specs`).
 */
export function buildSkillRegistry(specs, { tools = [], overrides = [], builtins = false } = {}) {
  const M = __module();
  if (typeof M.SkillRegistry !== 'function') __core('validateSkillSpec'); // names the entry to import
  return new SkillRegistry(call(() => new M.SkillRegistry(JSON.stringify(specs ?? []), JSON.stringify(overrides ?? []), JSON.stringify(tools ?? []), !!builtins)));
}

/** The arbiter: one active skill per lane; every proposal validated, applied and logged. */
export class Arbiter {
  #a;
  #lanes = new Map();
  #registry;
  #retries;
  constructor(registry, { retries = 2 } = {}) {
    if (!(registry instanceof SkillRegistry)) throw new PromptloomError('InvalidOptions', 'new Arbiter() takes a registry from buildSkillRegistry() (at registry)', { path: 'registry' });
    this.#registry = registry;
    this.#retries = retries >>> 0;
    this.#a = call(() => new (__module().Arbiter)(registry.__inner, retries >>> 0));
  }
  /** Starts `skill` in `lane` with `input` (checked against its input_schema) → the run. */
  start(lane, skill, input = null) {
    const run = JSON.parse(call(() => this.#a.start(String(lane), String(skill), JSON.stringify(input ?? null))));
    this.#lanes.set(String(lane), { state: run.state, step: run.step });
    return run;
  }
  /**
   * A proposal — `{ type: 'tool', name, arguments? }`, `{ type: 'transition', event }`,
   * `{ type: 'finish', output? }`, `{ type: 'spawn', skill }` → `{ accepted, status, state,
   * step, error?, proposal_record? }`; a refusal's `error` lists the allowed tools and
   * transitions and the retries left.
   */
  propose(lane, proposal) {
    lane = String(lane);
    const known = this.#lanes.get(lane);
    let out;
    if (proposal && proposal.type === 'tool' && typeof proposal.name === 'string') {
      const args = proposal.arguments === undefined ? '' : JSON.stringify(proposal.arguments);
      out = call(() => this.#a.tool(lane, proposal.name, args));
      if (out === '' && known) {
        known.step++;
        return { accepted: true, status: 'running', state: known.state, step: known.step };
      }
    } else if (proposal && proposal.type === 'transition' && typeof proposal.event === 'string') {
      out = call(() => this.#a.transition(lane, proposal.event));
      if (out.charCodeAt(0) === 2 && known) {
        known.step++;
        known.state = out.slice(1);
        return { accepted: true, status: 'running', state: known.state, step: known.step };
      }
    } else {
      out = call(() => this.#a.propose(lane, JSON.stringify(proposal ?? null)));
    }
    const o = out === '' ? JSON.parse(call(() => this.#a.run(lane))) : JSON.parse(out);
    this.#lanes.set(lane, { state: o.state, step: o.step });
    return out === '' ? { accepted: true, status: o.status, state: o.state, step: o.step } : o;
  }
  /** Cancels the lane's run (refused for a skill that is not interruptible) → the run. */
  cancel(lane) {
    return JSON.parse(call(() => this.#a.cancel(String(lane))));
  }
  /** The lane's run (state, step, status, proposals, log), or null. */
  run(lane) {
    const r = this.#a.run(String(lane));
    return r === '' ? null : JSON.parse(r);
  }
  /** The lane's append-only log. */
  log(lane) {
    return this.run(lane)?.log ?? [];
  }
  /** What the model sees for its next step: the current objective only, plus `context`. */
  stepContext(lane, context = null) {
    return JSON.parse(call(() => this.#a.stepContext(String(lane), JSON.stringify(context))));
  }
  /** Session → lanes → skill → step. */
  hierarchy(session = 'default') {
    return JSON.parse(this.#a.hierarchy(String(session)));
  }
  /** Replays a log on a fresh arbiter over the same registry → the run it produces. */
  replay(log) {
    return JSON.parse(call(() => __module().replayLog(this.#registry.__inner, JSON.stringify(log ?? []), this.#retries)));
  }
}

/** A spec as a Mermaid state diagram; a run (or a state name) marks where it is. */
export function toMermaid(spec, run) {
  const current = typeof run === 'string' ? run : run?.state ?? '';
  return __core('specToMermaid', text(spec, 'the spec'), current);
}

/**
 * The SkillSpec of a composition's subgraph, to run on the arbiter: a staged subgraph's
 * stages in order (each keeping its tools), or one `work` state for a loop.
 */
export function compositionSpec(composition) {
  return JSON.parse(__core('compositionSpec', text(composition, 'the composition')));
}
