// Skill state machines and the arbiter: JS glue. Validation, registries, the arbiter's
// rules, its log and Mermaid live in the core; this file converts. A tool proposal that is
// accepted without changing anything comes back as `undefined`, a transition taken with
// nothing else to say as the new state's index (no text either way; the lane keeps the
// names it has seen), so the hot path is one call into wasm.

import { PromptloomError, __core, __inbox, __call as call, __json, __str, __opts, __module, __num, __host, __generation, __release, __disposable } from './api.js';

/** @import { Unchecked } from './instance.js' */
/** @import { Backend } from './stores.js' */
/** @typedef {import('../composer.js').SkillSpec} SkillSpec */
/** @typedef {import('../composer.js').Proposal} Proposal */
/** @typedef {import('../composer.js').Outcome} Outcome */
/** @typedef {import('../composer.js').Run} Run */
/** @typedef {import('../composer.js').StepOffer} StepOffer */
/** @typedef {import('../composer.js').ToolDescriptor} ToolDescriptor */
/** A store the session and proposal functions take: anything holding a backend. @typedef {{ __backend?: Backend }} BackedStore */

/** A spec or composition argument: JSON text or an object. */
const text = (/** @type {unknown} */ x, /** @type {string} */ what) => __json(x, what, 'InvalidRequest', { path: '$' });
/** Any JSON value (null allowed), for inputs, outputs and context. */
const value = (/** @type {unknown} */ x, /** @type {string} */ what) => __json(x ?? null, what, 'InvalidRequest', { text: false, nullable: true, path: what });

/**
 * Every problem of a SkillSpec at once: `{ ok, problems: [{ path, code, message, severity }] }`.
 * @param {SkillSpec | string} spec
 * @param {{ tools?: ToolDescriptor[] | string[] }} [options]
 * @returns {{ ok: boolean, problems: import('../composer.js').SpecProblem[] }}
 */
export function validateSkillSpec(spec, options) {
  const { tools } = __opts(options, 'validateSkillSpec()');
  return JSON.parse(__inbox('validateSkillSpec', [text(spec, 'the spec')], value(tools, 'tools')));
}

/**
 * Loads SkillSpecs in bulk — the seed's `skills/*.json`: `files` is `[{ path, text }]` or
 * `{ [path]: text }` (each file one spec or an array of them). Every file is read and
 * validated (against `tools` when given) before anything is returned: any problem throws
 * `InvalidSkill` whose `details.problems` lists every problem of every file (`{ file, path,
 * code, message, severity }`). → `{ specs, warnings }`, the specs in the files' order, ready for
 * `buildSkillRegistry`.
 * @param {{ path: string, text: string }[] | Record<string, string>} files
 * @param {{ tools?: ToolDescriptor[] | string[] }} [options]
 * @returns {{ specs: SkillSpec[], warnings: import('../composer.js').SpecFileProblem[] }}
 */
export function loadSkillSpecs(files, options) {
  const { tools } = __opts(options, 'loadSkillSpecs()');
  /** @type {unknown} */
  let list = files;
  if (files !== null && typeof files === 'object' && !Array.isArray(files)) list = Object.entries(files).map(([path, text]) => ({ path, text }));
  if (!Array.isArray(list)) throw new PromptloomError('InvalidRequest', 'loadSkillSpecs() takes [{ path, text }] or { [path]: text } (at files)', { path: 'files' });
  return JSON.parse(__core('loadSkillSpecs', __json(list, 'the spec files', 'InvalidRequest', { text: false, path: 'files' }), value(tools, 'tools')));
}

/** An immutable registry of validated specs. */
class SkillRegistry {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's SkillRegistry */
  #inner;
  /** @param {any} inner wasm-bindgen's SkillRegistry */
  constructor(inner) {
    this.#inner = inner;
  }
  /** Frees the wasm memory now (otherwise when collected); an arbiter made from it keeps its own. */
  free() {
    __release(this.#inner);
  }
  /** @internal */
  get __inner() {
    return this.#inner;
  }
  /**
   * The spec names.
   * @returns {string[]}
   */
  names() {
    return JSON.parse(call(() => this.#inner.names()));
  }
  /**
   * The summary for the model's system prompt: `- <name>: <description>` per skill, by name.
   * @returns {string}
   */
  summary() {
    return call(() => this.#inner.summary());
  }
  /**
   * A spec, or null.
   * @param {string} name
   * @returns {SkillSpec | null}
   */
  spec(name) {
    const n = __str(name, 'name', 'InvalidRequest');
    const s = call(() => this.#inner.spec(n));
    return s === '' ? null : JSON.parse(s);
  }
}

/**
 * Builds a registry: `specs`, then `overrides` (agent-specific specs replacing global ones
 * by name); every spec is validated against `tools`. Any problem fails the build
 * (`InvalidSkill`, `details.specs`). The system skills' specs (`tool-builder`,
 * `skill-builder`) come from a seeded store: `await catalog.skillSpecs()`, or
 * `seedSkillSpecs(await systemSkills())` without one.
 * @param {SkillSpec[] | Record<string, SkillSpec>} specs
 * @param {{ tools?: ToolDescriptor[] | string[], overrides?: SkillSpec[] }} [options]
 * @returns {SkillRegistry}
 */
export function buildSkillRegistry(specs, options) {
  const { tools = [], overrides = [], builtins } = __opts(options, 'buildSkillRegistry()');
  if (builtins !== undefined) {
    throw new PromptloomError('InvalidOptions', '`builtins` is gone: tool-builder and skill-builder are system skills now. Pass their specs with yours: `await store.skillSpecs()` of a store opened with `seed: true`, or `seedSkillSpecs(await systemSkills())` (at builtins)', { path: 'builtins' });
  }
  const M = __module();
  if (typeof M.SkillRegistry !== 'function') __core('validateSkillSpec'); // names the entry to import
  const args = [value(specs ?? [], 'specs'), value(overrides ?? [], 'overrides'), value(tools ?? [], 'tools')];
  return new SkillRegistry(call(() => new M.SkillRegistry(...args)));
}

/** The arbiter: one active skill per lane; every proposal validated, applied and logged. */
export class Arbiter {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's Arbiter */
  #a;
  /** @type {Map<string, { state: string, step: number, names: Map<number, string> }>} where each lane is, as far as this side knows */
  #lanes = new Map();
  /** @type {SkillRegistry} */
  #registry;
  /** @type {number} */
  #retries;
  // The lane of the last tool or transition call the core answered: it keeps that lane's
  // name, so the next step in the same lane does not send it again.
  /** @type {string | undefined} */
  #lane;
  /**
   * @param {SkillRegistry} registry
   * @param {{ retries?: number }} [options]
   */
  constructor(registry, options) {
    const { retries = 2 } = __opts(options, 'new Arbiter()');
    if (!(registry instanceof SkillRegistry)) throw new PromptloomError('InvalidOptions', 'new Arbiter() takes a registry from buildSkillRegistry() (at registry)', { path: 'registry' });
    this.#registry = registry;
    this.#retries = __num(retries, 'retries', { integer: true, min: 0 });
    this.#a = call(() => new (__module().Arbiter)(registry.__inner, this.#retries));
  }
  /** Frees the wasm memory now (otherwise when collected): the arbiter's lanes and runs go with it. */
  free() {
    __release(this.#a);
  }
  /**
   * Starts `skill` in `lane` with `input` (checked against its input_schema) → the run.
   * @param {string} lane
   * @param {string} skill
   * @param {unknown} [input]
   * @returns {Run}
   */
  start(lane, skill, input = null) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const args = [lane, __str(skill, 'skill', 'InvalidRequest'), value(input, 'input')];
    const run = JSON.parse(call(() => this.#a.start(...args)));
    this.#lanes.set(lane, { state: run.state, step: run.step, names: new Map() });
    return run;
  }
  /**
   * A proposal — `{ type: 'tool', name, arguments? }`, `{ type: 'transition', event }`,
   * `{ type: 'finish', output? }`, `{ type: 'spawn', skill }` → `{ accepted, status, state,
   * step, error?, proposal_record? }`; a refusal's `error` lists the allowed tools and
   * transitions and the retries left.
   * @param {string} lane
   * @param {Proposal} proposal
   * @returns {Outcome}
   */
  propose(lane, proposal) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const known = this.#lanes.get(lane);
    /** @type {string | undefined} the outcome's JSON, when the core wrote one */
    let out;
    /** @type {Unchecked} */
    const pr = proposal;
    if (pr && pr.type === 'tool' && typeof pr.name === 'string') {
      const args = pr.arguments === undefined ? '' : value(pr.arguments, 'proposal.arguments');
      const same = lane === this.#lane;
      this.#lane = undefined; // unknown until the core answers
      out = same ? call(() => this.#a.toolAgain(pr.name, args)) : call(() => this.#a.tool(lane, pr.name, args));
      this.#lane = lane;
      if (out === undefined && known) {
        known.step++;
        return { accepted: true, status: 'running', state: known.state, step: known.step };
      }
    } else if (pr && pr.type === 'transition' && typeof pr.event === 'string') {
      // n > 0: taken quietly, to the state of index n - 1; 0: the outcome waits in wasm.
      const same = lane === this.#lane;
      this.#lane = undefined;
      /** @type {number} */
      const n = same ? call(() => this.#a.transitionAgain(pr.event)) : call(() => this.#a.transition(lane, pr.event));
      this.#lane = lane;
      if (n > 0 && known) {
        known.step++;
        let name = known.names.get(n);
        if (name === undefined) known.names.set(n, (name = /** @type {string} */ (call(() => this.#a.stateName(lane)))));
        known.state = name;
        return { accepted: true, status: 'running', state: name, step: known.step };
      }
      if (n === 0) out = call(() => this.#a.takeOutcome());
    } else {
      const p = value(proposal, 'proposal');
      out = call(() => this.#a.propose(lane, p));
    }
    // Accepted with nothing to report but not known here (a lane started before a replay):
    // the run says where it is.
    const quiet = out === undefined;
    const o = JSON.parse(quiet ? call(() => this.#a.run(lane)) : out);
    this.#lanes.set(lane, { state: o.state, step: o.step, names: known?.names ?? new Map() });
    return quiet ? { accepted: true, status: o.status, state: o.state, step: o.step } : o;
  }
  /**
   * Cancels the lane's run (refused for a skill that is not interruptible) → the run.
   * @param {string} lane
   * @returns {Run}
   */
  cancel(lane) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    return JSON.parse(call(() => this.#a.cancel(lane)));
  }
  /**
   * The lane's run (state, step, status, proposals, log), or null.
   * @param {string} lane
   * @returns {Run | null}
   */
  run(lane) {
    lane = __str(lane, 'lane', 'InvalidRequest');
    const r = call(() => this.#a.run(lane));
    return r === '' ? null : JSON.parse(r);
  }
  /**
   * The lane's append-only log.
   * @param {string} lane
   * @returns {import('../composer.js').LogEvent[]}
   */
  log(lane) {
    return this.run(lane)?.log ?? [];
  }
  /**
   * What the model sees for its next step: the current objective only, plus `context`.
   * @param {string} lane
   * @param {unknown} [context]
   */
  stepContext(lane, context = null) {
    const l = __str(lane, 'lane', 'InvalidRequest');
    const c = value(context, 'context');
    return JSON.parse(call(() => this.#a.stepContext(l, c)));
  }
  /**
   * What the model is offered for the lane's next step: `{ system, tools, names }` — the
   * objective as system text, the state's allowed tools (described by `tools`, the host's
   * `{ name, description?, input_schema? }` list) under provider-safe names, and the
   * `skill_transition` / `skill_finish` tools. Lower the next request with them.
   * @param {string} lane
   * @param {ToolDescriptor[]} [tools]
   * @returns {StepOffer}
   */
  stepOffer(lane, tools = []) {
    const l = __str(lane, 'lane', 'InvalidRequest');
    const t = value(tools, 'tools');
    return JSON.parse(call(() => this.#a.stepOffer(l, t)));
  }
  /**
   * Proposes what a model's tool call asks (`{ name, input }`), under the names of `offer`.
   * @param {string} lane
   * @param {{ name: string, input?: unknown }} toolCall
   * @param {StepOffer} [offer]
   * @returns {Outcome}
   */
  proposeCall(lane, toolCall, offer) {
    const { name, input } = __opts(toolCall, 'proposeCall()', 'InvalidRequest');
    const p = __core('callProposal', __str(name, 'name', 'InvalidRequest'), value(input ?? {}, 'input'), value(offer?.names ?? {}, 'names'));
    return this.propose(lane, JSON.parse(p));
  }
  /**
   * Session → lanes → skill → step.
   * @param {string} [session]
   */
  hierarchy(session = 'default') {
    session = __str(session, 'session', 'InvalidRequest');
    return JSON.parse(call(() => this.#a.hierarchy(session)));
  }
  /**
   * Replays a log on a fresh arbiter over the same registry → the run it produces.
   * @param {import('../composer.js').LogEvent[]} log
   * @returns {Run}
   */
  replay(log) {
    const l = value(log ?? [], 'log');
    return JSON.parse(call(() => __module().replayLog(this.#registry.__inner, l, this.#retries)));
  }
}

/**
 * A spec as a Mermaid state diagram; a run (or a state name) marks where it is.
 * @param {SkillSpec | string} spec
 * @param {Run | { state?: string } | string | null} [run]
 * @returns {string}
 */
export function toMermaid(spec, run) {
  const state = typeof run === 'string' ? run : run && typeof run === 'object' ? run.state : undefined;
  const current = typeof state === 'string' ? state : '';
  return __core('specToMermaid', text(spec, 'the spec'), current);
}

/**
 * The SkillSpec of a composition's subgraph, to run on the arbiter: a staged subgraph's
 * stages in order (each keeping its tools), or one `work` state for a loop.
 * @param {import('../composer.js').Composition | string} composition
 * @returns {SkillSpec}
 */
export function compositionSpec(composition) {
  return JSON.parse(__core('compositionSpec', text(composition, 'the composition')));
}

/**
 * The backend of a store (`openSkillStore` / `openMessageStore`), for sessions and proposals.
 * @param {unknown} store
 * @param {string} what
 * @returns {Backend}
 */
function backendOf(store, what) {
  const b = store && typeof store === 'object' ? /** @type {BackedStore} */ (store).__backend : undefined;
  if (!b || typeof b.commitAfterRead !== 'function') {
    throw new PromptloomError('InvalidOptions', `${what} needs \`store\`: a store from openSkillStore() or openMessageStore() (at store)`, { path: 'store' });
  }
  return b;
}

/**
 * The host's clock: `now()` → epoch milliseconds (Date.now by default).
 * @param {unknown} now
 * @param {string} what
 * @returns {() => number}
 */
function clockOf(now, what) {
  if (now === undefined) return Date.now;
  if (typeof now !== 'function') throw new PromptloomError('InvalidOptions', `${what}: \`now\` must be a function returning epoch milliseconds (at now)`, { path: 'now' });
  return () => {
    const t = __host(now, 'now');
    if (typeof t !== 'number' || !Number.isFinite(t)) throw new PromptloomError('AdapterFailed', `${what}: \`now\` must answer epoch milliseconds (got ${typeof t}) (at now)`, { path: 'now', callback: 'now' });
    return t;
  };
}

/**
 * A session (the seed's session → lane → skill → step): it starts, heartbeats and stops;
 * its lanes move through the lane machine (`idle`, `reasoning`, `waiting_tool`, `error`,
 * `stopped`) on the host's events and the arbiter's; each lane runs one skill under the
 * arbiter. Every change is appended to the session's log in the store before the call
 * returns: a write that fails leaves the session as its stored log says (nothing is lost
 * or half-kept), and a session opened again after a crash resumes every lane at its last
 * accepted step.
 */
class Session {
  static {
    __disposable(this);
  }
  /** @type {any} wasm-bindgen's Session */
  #s;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  /** @type {Backend} */
  #backend;
  /** @type {() => number} */
  #now;
  /** @type {SkillRegistry} */
  #registry;
  /**
   * @internal
   * @param {any} s wasm-bindgen's Session
   * @param {Backend} backend
   * @param {() => number} now
   * @param {SkillRegistry} registry
   */
  constructor(s, backend, now, registry) {
    this.#s = s;
    this.#backend = backend;
    this.#now = now;
    this.#registry = registry;
    this.id = JSON.parse(call(() => s.call('hierarchy', '', '', '', 0))).session;
  }
  /** The registry its skills run under. */
  get registry() {
    return this.#registry;
  }
  /**
   * A read: one call into the session.
   * @param {string} op
   * @param {string} [lane]
   * @param {string} [a]
   * @returns {string}
   */
  #read(op, lane = '', a = '') {
    return call(() => this.#s.call(op, lane, a, '', 0));
  }
  /**
   * A change: one call, then its log rows written before it returns. Changes run one at a
   * time in call order (each waits for the write before it), so concurrent callers never
   * interleave a session's log.
   * @param {string} op
   * @param {string} lane
   * @param {string} [a]
   * @param {string} [b]
   * @returns {Promise<string>}
   */
  #step(op, lane, a = '', b = '') {
    const run = async () => {
      const out = call(() => this.#s.call(op, lane, a, b, this.#now()));
      await saveSession(this.#s, this.#backend);
      return out;
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => {});
    return p;
  }
  /**
   * A host event on `lane` (`request`, `tool_call`, `tool_result`, `response`, `fail`, `cancel`) → its new state.
   * @param {string} lane
   * @param {import('../composer.js').LaneEvent} event
   * @returns {Promise<import('../composer.js').LaneState>}
   */
  async laneEvent(lane, event) {
    const state = await this.#step('lane_event', __str(lane, 'lane', 'InvalidRequest'), __str(event, 'event', 'InvalidRequest'));
    return /** @type {import('../composer.js').LaneState} */ (state);
  }
  /**
   * Starts `skill` in `lane` with `input` → the run.
   * @param {string} lane
   * @param {string} skill
   * @param {unknown} [input]
   * @returns {Promise<Run>}
   */
  async startSkill(lane, skill, input = null) {
    return JSON.parse(await this.#step('start', __str(lane, 'lane', 'InvalidRequest'), __str(skill, 'skill', 'InvalidRequest'), value(input, 'input')));
  }
  /**
   * The model's proposal in `lane` (`{ type: tool | transition | finish | spawn, … }`),
   * validated by the arbiter → the outcome; `proposal_id` names the proposal record an
   * accepted `choir.propose.*` call made (pending approval).
   * @param {string} lane
   * @param {Proposal} proposal
   * @returns {Promise<Outcome>}
   */
  async propose(lane, proposal) {
    return JSON.parse(await this.#step('propose', __str(lane, 'lane', 'InvalidRequest'), value(proposal, 'proposal')));
  }
  /**
   * Proposes what a model's tool call asks (`{ name, input }`), under the names of `offer`.
   * @param {string} lane
   * @param {{ name: string, input?: unknown }} toolCall
   * @param {StepOffer} [offer]
   * @returns {Promise<Outcome>}
   */
  async proposeCall(lane, toolCall, offer) {
    const { name, input } = __opts(toolCall, 'proposeCall()', 'InvalidRequest');
    const p = __core('callProposal', __str(name, 'name', 'InvalidRequest'), value(input ?? {}, 'input'), value(offer?.names ?? {}, 'names'));
    return this.propose(lane, JSON.parse(p));
  }
  /**
   * Cancels the lane's running skill (refused for one that is not interruptible) → the run.
   * @param {string} lane
   * @returns {Promise<Run>}
   */
  async cancel(lane) {
    return JSON.parse(await this.#step('cancel', __str(lane, 'lane', 'InvalidRequest')));
  }
  /** Logs a heartbeat (call it on an interval; `stale()` reads it). */
  async heartbeat() {
    await this.#step('heartbeat', '');
  }
  /** Stops the session: every lane is `stopped`; open it again to resume. */
  async stop() {
    await this.#step('stop', '');
  }
  /**
   * Whether the active session has logged nothing for `timeoutMs` (another host may open and recover it).
   * @param {number} timeoutMs
   * @returns {boolean}
   */
  stale(timeoutMs) {
    const timeout = __num(timeoutMs, 'timeoutMs', { min: 0 });
    return call(() => this.#s.stale(this.#now(), timeout));
  }
  /** Session → lanes (state, the events it takes) → skill → step, live. */
  hierarchy() {
    return JSON.parse(this.#read('hierarchy'));
  }
  /** The session's log (what the store holds). */
  log() {
    return JSON.parse(this.#read('log'));
  }
  /**
   * A lane's state.
   * @param {string} lane
   */
  lane(lane) {
    return this.#read('lane', __str(lane, 'lane', 'InvalidRequest'));
  }
  /**
   * The lane's run (state, step, status, proposals, log), or null.
   * @param {string} lane
   * @returns {Run | null}
   */
  run(lane) {
    const r = this.#read('run', __str(lane, 'lane', 'InvalidRequest'));
    return r === '' ? null : JSON.parse(r);
  }
  /**
   * What the model sees for the lane's next step: the current objective only, plus `context`.
   * @param {string} lane
   * @param {unknown} [context]
   */
  stepContext(lane, context = null) {
    return JSON.parse(this.#read('step_context', __str(lane, 'lane', 'InvalidRequest'), value(context, 'context')));
  }
  /**
   * What the model is offered for the lane's next step: `{ system, tools, names }`.
   * @param {string} lane
   * @param {ToolDescriptor[]} [tools]
   * @returns {StepOffer}
   */
  stepOffer(lane, tools = []) {
    return JSON.parse(this.#read('step_offer', __str(lane, 'lane', 'InvalidRequest'), value(tools, 'tools')));
  }
  /** Frees the wasm side (the log stays in the store). */
  free() {
    __release(this.#s);
  }
}

/**
 * Writes a session's new log rows (inserts: another writer of the same session makes it a conflict); on failure the session goes back to its stored log.
 * @param {any} s wasm-bindgen's Session
 * @param {Backend} backend
 */
async function saveSession(s, backend) {
  const ops = JSON.parse(s.call('ops', '', '', '', 0));
  if (ops.length === 0) return;
  try {
    await backend.commitAfterRead([], () => ops);
  } catch (e) {
    s.rollback();
    throw e;
  }
  s.saved();
}

/**
 * Opens session `id` on `store` (a skill or message store, any backend): a new session
 * starts; one whose log ends while it was active (its host crashed) is recovered — the log
 * replayed through the arbiter, every lane resumed at its last accepted step, `recovered`
 * logged; a stopped one starts again. `registry` is the skills' registry; `now()` gives
 * epoch milliseconds (Date.now by default).
 * @param {{ store: BackedStore, registry: SkillRegistry, id: string, now?: () => number, retries?: number }} options
 * @returns {Promise<Session>}
 */
export async function openSession(options) {
  const { store, registry, id, now, retries = 2 } = __opts(options, 'openSession()');
  const backend = backendOf(store, 'openSession()');
  if (!(registry instanceof SkillRegistry)) throw new PromptloomError('InvalidOptions', 'openSession() takes a registry from buildSkillRegistry() (at registry)', { path: 'registry' });
  const clock = clockOf(now, 'openSession()');
  const sid = __str(id, 'id', 'InvalidOptions');
  const rows = await backend.scan('session_log', `${sid}/`);
  const M = __module();
  const s = call(() => M.Session.open(registry.__inner, __num(retries, 'retries', { integer: true, min: 0 }), sid, JSON.stringify(rows), clock()));
  try {
    await saveSession(s, backend);
  } catch (e) {
    s.free();
    throw e;
  }
  return new Session(s, backend, clock, registry);
}

/** The session and lane machines as SkillSpec-shaped data (`{ session, lane }`), to draw with `toMermaid`. */
export function sessionMachines() {
  return JSON.parse(__core('sessionMachines'));
}

/**
 * Proposal records in `store` (`status`: pending, approved or rejected; all by default), oldest first.
 * @param {BackedStore} store
 * @param {{ status?: 'pending' | 'approved' | 'rejected' }} [options]
 * @returns {Promise<import('../composer.js').StoredProposal[]>}
 */
export async function listProposals(store, options) {
  const { status } = __opts(options, 'listProposals()');
  const rows = await backendOf(store, 'listProposals()').scan('skill_proposals', '');
  return JSON.parse(__core('readProposals', JSON.stringify(rows), status == null ? '' : __str(status, 'status', 'InvalidOptions'), false));
}

/**
 * Every approval decision in `store`, oldest first (`{ id, kind, name, decision, by, reason, at }`).
 * @param {BackedStore} store
 * @returns {Promise<import('../composer.js').ApprovalDecision[]>}
 */
export async function approvalLog(store) {
  const rows = await backendOf(store, 'approvalLog()').scan('approval_log', '');
  return JSON.parse(__core('readProposals', JSON.stringify(rows), '', true));
}

/**
 * Reads, decides and writes one proposal in one transaction where the backend has them.
 * @param {unknown} store
 * @param {unknown} id
 * @param {Record<string, unknown>} decision
 * @param {SkillRegistry} registry
 * @param {string} what
 * @returns {Promise<{ proposal: import('../composer.js').StoredProposal, registry?: SkillRegistry }>}
 */
async function decideOn(store, id, decision, registry, what) {
  const backend = backendOf(store, what);
  const pid = __str(id, 'id', 'InvalidOptions');
  /** @type {any} wasm-bindgen's decision, made inside the write */
  let d;
  await backend.commitAfterRead([['skill_proposals', pid]], ([row]) => {
    d?.free();
    d = call(() => __module().decideProposal(pid, row ?? undefined, JSON.stringify(decision), registry.__inner));
    return JSON.parse(d.json()).ops;
  });
  if (!d) throw new PromptloomError('Internal', 'the store wrote a proposal decision without reading its row', {});
  try {
    const { row } = JSON.parse(d.json());
    const next = d.registry();
    return { proposal: row, ...(next ? { registry: new SkillRegistry(next) } : {}) };
  } finally {
    d.free();
  }
}

/**
 * @param {unknown} registry
 * @param {string} what
 * @returns {SkillRegistry}
 */
function registryOpt(registry, what) {
  if (!(registry instanceof SkillRegistry)) throw new PromptloomError('InvalidOptions', `${what} takes \`registry\` from buildSkillRegistry() (at registry)`, { path: 'registry' });
  return registry;
}

/**
 * Approves a pending proposal: its payload is validated again against `registry` (a
 * SkillSpec against its tools; a tool manifest's name and schema), then installed → `{
 * proposal, registry }`, the registry a new one with it (the old one is untouched: open
 * new sessions with the new one). The decision is logged. A proposal decided before is
 * `InvalidRequest` (`not-pending`); one that no longer validates is `InvalidSkill`, nothing
 * written.
 * @param {BackedStore} store
 * @param {string} id
 * @param {{ registry: SkillRegistry, by?: string, now?: () => number }} options
 */
export function approveProposal(store, id, options) {
  const { registry, by, now } = __opts(options, 'approveProposal()');
  const r = registryOpt(registry, 'approveProposal()');
  return decideOn(store, id, { approve: true, by, at: clockOf(now, 'approveProposal()')() }, r, 'approveProposal()');
}

/**
 * The registry a rejection is decided against when none is given (it installs nothing).
 * @type {[SkillRegistry, number] | undefined}
 */
let noSkills;

/**
 * Rejects a pending proposal with a `reason` → `{ proposal }`; the decision is logged.
 * @param {BackedStore} store
 * @param {string} id
 * @param {{ registry?: SkillRegistry, by?: string, reason?: string, now?: () => number }} [options]
 */
export async function rejectProposal(store, id, options) {
  const { by, reason, now, registry } = __opts(options, 'rejectProposal()');
  // The empty registry is made once per instance (a replaced instance's one is lost).
  if (!noSkills || noSkills[1] !== __generation()) noSkills = [buildSkillRegistry([], {}), __generation()];
  const r = registry ?? noSkills[0];
  return decideOn(store, id, { approve: false, by, reason, at: clockOf(now, 'rejectProposal()')() }, registryOpt(r, 'rejectProposal()'), 'rejectProposal()');
}

/**
 * `registry` with every proposal approved in `store` installed, in decision order (for a host starting up).
 * @param {BackedStore} store
 * @param {SkillRegistry} registry
 * @returns {Promise<SkillRegistry>}
 */
export async function installApproved(store, registry) {
  const rows = await backendOf(store, 'installApproved()').scan('skill_proposals', '');
  const r = registryOpt(registry, 'installApproved()');
  return new SkillRegistry(call(() => __module().installApproved(r.__inner, JSON.stringify(rows))));
}
