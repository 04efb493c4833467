// Skill state machines and the arbiter: JS glue. Validation, registries, the arbiter's
// rules, its log and Mermaid live in the core; this file converts. A tool proposal that is
// accepted without changing anything comes back as an empty string (no JSON either way), so
// the hot path is one call into wasm.

import { PromptloomError, __core, __call as call, __json, __str, __opts, __module } from './api.js';

/** A spec or composition argument: JSON text or an object. */
const text = (x, what) => __json(x, what, 'InvalidRequest', { path: '$' });
/** Any JSON value (null allowed), for inputs, outputs and context. */
const value = (x, what) => __json(x ?? null, what, 'InvalidRequest', { text: false, nullable: true, path: what });

/** Every problem of a SkillSpec at once: `{ ok, problems: [{ path, code, message, severity }] }`. */
export function validateSkillSpec(spec, options) {
  const { tools } = __opts(options, 'validateSkillSpec()');
  return JSON.parse(__core('validateSkillSpec', text(spec, 'the spec'), value(tools, 'tools')));
}

/**
 * Loads SkillSpecs in bulk — the seed's `skills/*.json`: `files` is `[{ path, text }]` or
 * `{ [path]: text }` (each file one spec or an array of them). Every file is read and
 * validated (against `tools` when given) before anything is returned: any problem throws
 * `InvalidSkill` whose `details.problems` lists every problem of every file (`{ file, path,
 * code, message, severity }`). → `{ specs, warnings }`, the specs in the files' order, ready for
 * `buildSkillRegistry`.
 */
export function loadSkillSpecs(files, options) {
  const { tools } = __opts(options, 'loadSkillSpecs()');
  let list = files;
  if (files !== null && typeof files === 'object' && !Array.isArray(files)) list = Object.entries(files).map(([path, text]) => ({ path, text }));
  if (!Array.isArray(list)) throw new PromptloomError('InvalidRequest', 'loadSkillSpecs() takes [{ path, text }] or { [path]: text } (at files)', { path: 'files' });
  return JSON.parse(__core('loadSkillSpecs', __json(list, 'the spec files', 'InvalidRequest', { text: false, path: 'files' }), value(tools, 'tools')));
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
    return JSON.parse(call(() => this.#inner.names()));
  }
  /** The summary for the model's system prompt: `- <name>: <description>` per skill, by name. */
  summary() {
    return call(() => this.#inner.summary());
  }
  /** A spec, or null. */
  spec(name) {
    const n = __str(name, 'name', 'InvalidRequest');
    const s = call(() => this.#inner.spec(n));
    return s === '' ? null : JSON.parse(s);
  }
}

/**
 * Builds a registry: `specs`, then `overrides` (agent-specific specs replacing global ones
 * by name), the built-ins with `builtins: true`; every spec is validated against `tools`.
 * Any problem fails the build (`InvalidSkill`, `details.specs`).
 */
export function buildSkillRegistry(specs, options) {
  const { tools = [], overrides = [], builtins = false } = __opts(options, 'buildSkillRegistry()');
  const M = __module();
  if (typeof M.SkillRegistry !== 'function') __core('validateSkillSpec'); // names the entry to import
  const args = [value(specs ?? [], 'specs'), value(overrides ?? [], 'overrides'), value(tools ?? [], 'tools'), !!builtins];
  return new SkillRegistry(call(() => new M.SkillRegistry(...args)));
}

/** The arbiter: one active skill per lane; every proposal validated, applied and logged. */
export class Arbiter {
  #a;
  #lanes = new Map();
  #registry;
  #retries;
  constructor(registry, options) {
    const { retries = 2 } = __opts(options, 'new Arbiter()');
    if (!(registry instanceof SkillRegistry)) throw new PromptloomError('InvalidOptions', 'new Arbiter() takes a registry from buildSkillRegistry() (at registry)', { path: 'registry' });
    this.#registry = registry;
    this.#retries = Number(retries) >>> 0;
    this.#a = call(() => new (__module().Arbiter)(registry.__inner, this.#retries));
  }
  /** Starts `skill` in `lane` with `input` (checked against its input_schema) → the run. */
  start(lane, skill, input = null) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const args = [lane, __str(skill, 'skill', 'InvalidRequest'), value(input, 'input')];
    const run = JSON.parse(call(() => this.#a.start(...args)));
    this.#lanes.set(lane, { state: run.state, step: run.step });
    return run;
  }
  /**
   * A proposal — `{ type: 'tool', name, arguments? }`, `{ type: 'transition', event }`,
   * `{ type: 'finish', output? }`, `{ type: 'spawn', skill }` → `{ accepted, status, state,
   * step, error?, proposal_record? }`; a refusal's `error` lists the allowed tools and
   * transitions and the retries left.
   */
  propose(lane, proposal) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const known = this.#lanes.get(lane);
    let out;
    if (proposal && proposal.type === 'tool' && typeof proposal.name === 'string') {
      const args = proposal.arguments === undefined ? '' : value(proposal.arguments, 'proposal.arguments');
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
      const p = value(proposal, 'proposal');
      out = call(() => this.#a.propose(lane, p));
    }
    const o = out === '' ? JSON.parse(call(() => this.#a.run(lane))) : JSON.parse(out);
    this.#lanes.set(lane, { state: o.state, step: o.step });
    return out === '' ? { accepted: true, status: o.status, state: o.state, step: o.step } : o;
  }
  /** Cancels the lane's run (refused for a skill that is not interruptible) → the run. */
  cancel(lane) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    return JSON.parse(call(() => this.#a.cancel(lane)));
  }
  /** The lane's run (state, step, status, proposals, log), or null. */
  run(lane) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const r = call(() => this.#a.run(lane));
    return r === '' ? null : JSON.parse(r);
  }
  /** The lane's append-only log. */
  log(lane) {
    return this.run(lane)?.log ?? [];
  }
  /** What the model sees for its next step: the current objective only, plus `context`. */
  stepContext(lane, context = null) {
    const args = [__str(lane, 'lane', 'InvalidRequest'), value(context, 'context')];
    return JSON.parse(call(() => this.#a.stepContext(...args)));
  }
  /**
   * What the model is offered for the lane's next step: `{ system, tools, names }` — the
   * objective as system text, the state's allowed tools (described by `tools`, the host's
   * `{ name, description?, input_schema? }` list) under provider-safe names, and the
   * `skill_transition` / `skill_finish` tools. Lower the next request with them.
   */
  stepOffer(lane, tools = []) {
    const args = [__str(lane, 'lane', 'InvalidRequest'), value(tools, 'tools')];
    return JSON.parse(call(() => this.#a.stepOffer(...args)));
  }
  /** Proposes what a model's tool call asks (`{ name, input }`), under the names of `offer`. */
  proposeCall(lane, toolCall, offer) {
    const { name, input } = __opts(toolCall, 'proposeCall()', 'InvalidRequest');
    const p = __core('callProposal', __str(name, 'name', 'InvalidRequest'), value(input ?? {}, 'input'), value(offer?.names ?? {}, 'names'));
    return this.propose(lane, JSON.parse(p));
  }
  /** Session → lanes → skill → step. */
  hierarchy(session = 'default') {
    session = __str(session, 'session', 'InvalidRequest');
    return JSON.parse(call(() => this.#a.hierarchy(session)));
  }
  /** Replays a log on a fresh arbiter over the same registry → the run it produces. */
  replay(log) {
    const l = value(log ?? [], 'log');
    return JSON.parse(call(() => __module().replayLog(this.#registry.__inner, l, this.#retries)));
  }
}

/** A spec as a Mermaid state diagram; a run (or a state name) marks where it is. */
export function toMermaid(spec, run) {
  const state = typeof run === 'string' ? run : run && typeof run === 'object' ? run.state : undefined;
  const current = typeof state === 'string' ? state : '';
  return __core('specToMermaid', text(spec, 'the spec'), current);
}

/**
 * The SkillSpec of a composition's subgraph, to run on the arbiter: a staged subgraph's
 * stages in order (each keeping its tools), or one `work` state for a loop.
 */
export function compositionSpec(composition) {
  return JSON.parse(__core('compositionSpec', text(composition, 'the composition')));
}
