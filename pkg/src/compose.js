// The Skill Composer, the authoring tools and artifact dispatch: JS glue. The nine steps,
// routing, rendering, assertion checks and trace rows live in the core; this file calls the
// host's model adapter and executors, and moves rows to and from the stores.

import { PromptloomError, __inbox, __core, __json, __opts, __key, __str, __module, __generation, __call, __lowerOne, __later, __said, __list, __host, __release, __disposable, __renamed, __num, __clock, __iso, __longRun } from './api.js';


/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../composer.js').ModelAdapter} ModelAdapter */
/** @typedef {import('../composer.js').ModelRequest} ModelRequest */
/** @typedef {import('../composer.js').Composition} Composition */
/** @typedef {import('../composer.js').ComposeOptions} ComposeOptions */
/** @typedef {import('../composer.js').RunOptions} RunOptions */
/** @typedef {import('./skills.js').__SkillStore} SkillStore */
/** A host function the run calls with one argument. @typedef {(arg?: any) => unknown} HostCall */

const text = (/** @type {unknown} */ x, /** @type {string} */ what) => __json(x, what, 'InvalidRequest');

/**
 * What calls a model for the composer and the artifact runs, from `adapter`: a function
 * (`ModelAdapter`) as it is, or an Adapter from createAdapter(), whose request is lowered for
 * its provider (the system text, the prompt as the user turn, a schema as the JSON answer,
 * `model` the model id) and whose turn's text answers. `model` given as a function is the
 * old spelling: refused, naming `adapter`.
 * @param {Unchecked} options the caller's options (`adapter` and `model` are read)
 * @param {string} what
 * @returns {ModelAdapter | undefined}
 */
function modelCall(options, what) {
  const { adapter, model } = options;
  if (typeof model === 'function') {
    throw new PromptloomError('InvalidOptions', `\`model\` is a model id; what calls the model is \`adapter\`: pass ${what}'s \`{ adapter }\` (a function, or an Adapter from createAdapter()) (at model)`, { path: 'model', use: 'adapter' });
  }
  const id = model === undefined ? undefined : __str(model, 'model');
  if (adapter === undefined || adapter === null) return undefined;
  if (typeof adapter === 'function') return adapter;
  if (typeof adapter === 'object' && typeof adapter.generate === 'function' && typeof adapter.provider === 'string') {
    // The core says what the request is for the provider (the prompt as the user turn, the
    // system text, the schema as the JSON answer, which model) and what the turn answers.
    return async (/** @type {ModelRequest} */ request) => {
      const { message, options } = JSON.parse(__core('modelRequest', 'lower', __json(request, 'the model request', 'InvalidRequest'), id ?? adapter.model ?? ''));
      const turn = await adapter.generate(__lowerOne(message, { provider: adapter.provider, ...options }, 'lowerAsync'));
      return JSON.parse(__core('modelRequest', 'answer', __json(turn, "the adapter's turn", 'AdapterFailed', { text: false }), options.model ?? ''));
    };
  }
  throw new PromptloomError('InvalidOptions', '`adapter` must be a function or an Adapter from createAdapter() (at adapter)', { path: 'adapter' });
}

/**
 * Calls the host's model adapter: a string or `{ text, usage?, model? }` back.
 * @param {ModelAdapter} model
 * @param {ModelRequest} request
 * @returns {Promise<{ text: string, usage?: unknown, model?: unknown }>}
 */
async function ask(model, request) {
  /** @type {Unchecked} */
  let out;
  try {
    out = await model(request);
  } catch (e) {
    throw Object.assign(new PromptloomError('AdapterFailed', `the model adapter failed: ${__said(e)}`, { purpose: request.purpose }), { cause: e });
  }
  if (typeof out === 'string') return { text: out };
  // The answer's fields, each read once (a getter may answer differently on a second read).
  const t = out !== null && typeof out === 'object' ? out.text : undefined;
  if (typeof t === 'string') return { text: t, usage: out.usage, model: out.model };
  throw new PromptloomError('AdapterFailed', 'the model adapter must return a string or `{ text, usage?, model? }`', { purpose: request.purpose });
}

/**
 * JSON out of a model's text answer (a fenced block is unwrapped).
 * @param {string} t
 * @returns {Record<string, unknown>}
 */
function jsonAnswer(t) {
  const s = t.trim();
  const fenced = /^```[a-zA-Z]*\n([\s\S]*?)\n?```$/.exec(s);
  /** @type {unknown} */
  let v;
  try {
    v = JSON.parse(fenced ? fenced[1] : s);
  } catch {
    throw new PromptloomError('AdapterFailed', 'the model did not answer the shape question with JSON', { answer: t.slice(0, 500) });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new PromptloomError('AdapterFailed', 'the model answered the shape question with JSON that is not an object (the shape is `{ stages, ... }`)', { answer: t.slice(0, 500) });
  }
  return /** @type {Record<string, unknown>} */ (v);
}

/** @param {unknown} request */
function requestText(request) {
  if (request === null || typeof request !== 'object') throw new PromptloomError('InvalidRequest', 'compose() takes a request object', { path: '$' });
  return __json(request, 'the request', 'InvalidRequest');
}

/**
 * The request as the core's two inbox strings: the package (kept validated by its text) and the rest.
 * @param {Unchecked} request
 * @returns {string[]}
 */
function requestParts(request) {
  if (request === null || typeof request !== 'object') throw new PromptloomError('InvalidRequest', 'compose() takes a request object', { path: '$' });
  const { skill_package, ...rest } = request;
  if (skill_package == null) throw new PromptloomError('InvalidRequest', 'missing the `skill_package` object (at skill_package)', { path: 'skill_package' });
  return [text(skill_package, 'the skill package'), __json(rest, 'the request', 'InvalidRequest')];
}

/**
 * Composes a skill invocation: the nine steps of the seed, deterministic. Without `{ adapter }`
 * the `Composition` comes back synchronously (a skill with `planner_delegates_shape: true` then
 * throws `NoModelAdapter`); with `{ adapter }` (and `model`, the id an Adapter lowers with) it
 * is always a Promise, and the adapter is asked for the subgraph shape only by a skill that
 * delegates it.
 * Errors are thrown with `code` set to the variant (`MissingRequiredField`,
 * `MalformedTemplate`, `UnknownTool`, `ParameterMismatch`, `ArtifactBudgetExceeded`,
 * `CapabilityNarrowing`, …); `details.invocation_record` is the record to store.
 * @param {import('../composer.js').ComposeRequest} request
 * @param {ComposeOptions} [options]
 * @returns {Composition | Promise<Composition>}
 */
export function compose(request, options) {
  const model = modelCall(__opts(options, 'compose()'), 'compose()');
  const run = () => {
    const parts = requestParts(request);
    return finish((/** @type {Record<string, unknown> | null} */ extra) => JSON.parse(__inbox('compose', extra ? requestParts({ ...request, ...extra }) : parts)), model, request.skill_package?.name, 'compose()');
  };
  return options?.adapter === undefined ? run() : __later(run);
}

/**
 * The composition of a step answer, or (a skill that delegates its shape) a Promise that asks
 * the model adapter and composes again with its answer in `delegated_shape`.
 * @param {(extra: Record<string, unknown> | null) => Unchecked} step one composition step, with what to add to the request
 * @param {ModelAdapter | undefined} model
 * @param {unknown} skill the skill's name, for the error
 * @param {string} what
 * @returns {Composition | Promise<Composition>}
 */
function finish(step, model, skill, what) {
  const first = step(null);
  if (first.composition) return first.composition;
  const q = first.needs_shape;
  if (typeof model !== 'function') {
    throw new PromptloomError('NoModelAdapter', `this skill delegates its subgraph shape to a model (planner_delegates_shape): pass \`{ adapter }\` to ${what}`, { skill, use: 'adapter' });
  }
  return (async () => {
    const answer = await ask(model, { purpose: 'shape', system: q.system, prompt: q.prompt, schema: q.schema });
    const again = step({ delegated_shape: jsonAnswer(answer.text) });
    if (!again.composition) throw new PromptloomError('Internal', 'the composer asked for the shape twice', {});
    return again.composition;
  })();
}

/**
 * A skill package read and validated once, for many compositions: `prepared.compose(invocation)`
 * takes what `compose()` takes without `skill_package` and returns the same composition, byte
 * for byte, without sending, reading or validating the package again. A package that does not
 * validate throws here, as `compose()` would (`MalformedTemplate`, `InvalidSkill`, …). The
 * package is copied when prepared: a later change to the object is not seen (prepare it again).
 */
export class PreparedSkill {
  static {
    __disposable(this);
  }
  /** @type {string} */
  #text;
  /** @type {any} */
  #inner = null;
  #gen = -1;
  /** The skill's name. @type {string} */
  name;
  /** @param {import('../composer.js').ComposeRequest['skill_package']} skillPackage a skill package, as `compose()`'s `skill_package` */
  constructor(skillPackage) {
    if (skillPackage === null || typeof skillPackage !== 'object') throw new PromptloomError('InvalidRequest', 'prepareSkill() takes a skill package object (at skill_package)', { path: 'skill_package' });
    this.#text = text(skillPackage, 'the skill package');
    this.name = this.#current().name();
  }
  /** The core's prepared skill (made again if the wasm instance was replaced after a trap). */
  #current() {
    if (this.#inner === null || this.#gen !== __generation()) {
      const M = __module();
      if (typeof M.PreparedSkill !== 'function') __core('compose'); // throws, naming promptloom/composer
      this.#inner = __inbox((/** @type {Uint32Array} */ lens) => new M.PreparedSkill(lens), [this.#text]);
      this.#gen = __generation();
    }
    return this.#inner;
  }
  /** Releases the wasm memory now (otherwise when collected); a later `compose` prepares the package again. */
  free() {
    __release(this.#inner);
    this.#inner = null;
  }
  /**
   * Composes one invocation (`compose()`'s request without `skill_package`): the
   * `Composition`, synchronously without `{ adapter }`, always a Promise with it.
   * @param {Omit<import('../composer.js').ComposeRequest, 'skill_package'>} invocation
   * @param {ComposeOptions} [options]
   * @returns {Composition | Promise<Composition>}
   */
  compose(invocation, options) {
    const model = modelCall(__opts(options, 'compose()'), 'compose()');
    const run = () => {
      if (invocation === null || typeof invocation !== 'object') throw new PromptloomError('InvalidRequest', 'compose() takes an invocation object', { path: '$' });
      const rest = __json(invocation, 'the request', 'InvalidRequest');
      const step = (/** @type {Record<string, unknown> | null} */ extra) => {
        const inner = this.#current(); // before the inbox is written: remaking it writes there too
        return JSON.parse(__inbox((/** @type {Uint32Array} */ lens) => inner.compose(lens), [extra ? __json({ ...invocation, ...extra }, 'the request', 'InvalidRequest') : rest]));
      };
      return finish(step, model, this.name, 'compose()');
    };
    return options?.adapter === undefined ? run() : __later(run);
  }
}

/**
 * A skill package read and validated once (see {@link PreparedSkill}).
 * @param {import('../composer.js').ComposeRequest['skill_package']} skillPackage
 */
export function prepareSkill(skillPackage) {
  return new PreparedSkill(skillPackage);
}

/**
 * The request for a sub-skill dispatched inside a composed subgraph: the same thread, the
 * top-level caller's capabilities, and `available_tools` = the sub-skill's `tool_surface` ∩
 * those capabilities, drawn from `toolCatalog`.
 * @param {import('../composer.js').ComposeRequest} parent
 * @param {unknown} subSkill
 * @param {{ toolCatalog?: unknown[], userRequest?: string, parameters?: Record<string, unknown> }} [options]
 * @returns {import('../composer.js').ComposeRequest}
 */
export function nestedRequest(parent, subSkill, options) {
  const { toolCatalog = [], userRequest = '', parameters = {} } = __renamed(__opts(options, 'nestedRequest()'), { user_request: 'userRequest' }, 'nestedRequest()');
  const value = (/** @type {unknown} */ v, /** @type {string} */ what) => __json(v, what, 'InvalidRequest', { text: false, nullable: true, path: what });
  return JSON.parse(__inbox('nestedRequest', [requestText(parent), text(subSkill, 'the sub-skill'), value(toolCatalog, 'toolCatalog'), __key(userRequest, 'userRequest', 'InvalidRequest'), value(parameters, 'parameters')]));
}

/**
 * `{ system, message, tools, output? }` → lower(): the composition as a provider request (its
 * output_schema as the request's `output`). Synchronous, as `lower` is; `lowerCompositionAsync`
 * takes an async resolver or a store.
 * @param {Composition} composition
 * @param {Partial<import('../index.js').SyncLowerOptions>} [options]
 * @returns {import('../index.js').Lowered}
 */
export function lowerComposition(composition, options = {}) {
  const [message, opts] = compositionLowering(composition, options);
  return __lowerOne(message, opts, 'lowerCompositionAsync');
}

/**
 * `lowerComposition`, always as a Promise (an async resolver, a store).
 * @param {Composition} composition
 * @param {Partial<import('../index.js').LowerOptions>} [options]
 * @returns {Promise<import('../index.js').Lowered>}
 */
export function lowerCompositionAsync(composition, options = {}) {
  return __later(() => {
    const [message, opts] = compositionLowering(composition, options);
    return __lowerOne(message, opts, null);
  });
}

/**
 * The composition's message and the options to lower it with.
 * @param {unknown} composition
 * @param {Unchecked} options
 * @returns {[unknown, Record<string, unknown>]}
 */
function compositionLowering(composition, options) {
  __opts(options, 'lowerComposition()');
  const system = options.system === undefined ? '' : __str(options.system, 'system');
  const tools = options.tools === undefined ? '' : __json(options.tools, '`tools`', 'InvalidOptions', { text: false, path: 'tools' });
  // The core merges the caller's system text and tools with the composition's.
  const parts = JSON.parse(__inbox('compositionLowering', [text(composition, 'the composition'), system, tools]));
  // The composition's answer schema becomes the request's output, unless the caller asks for one.
  const output = options.output === undefined && parts.output !== undefined ? { output: { schema: parts.output } } : {};
  return [parts.message, { ...options, system: parts.system, tools: parts.tools, ...output }];
}

/** @type {(value: unknown) => import('../composer.js').McpResult} */
const mcpResult = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError: false });
/** @type {(e: Unchecked) => import('../composer.js').McpResult} */
const mcpError = (e) => ({
  content: [{ type: 'text', text: `${e?.code ?? 'Internal'}: ${__said(e)}` }],
  structuredContent: { code: e?.code ?? 'Internal', message: __said(e), details: e?.details ?? {} },
  isError: true,
});

/**
 * A tool call's arguments as JSON text (an object; anything JSON cannot hold is InvalidRequest).
 * @param {unknown} args
 */
function argsText(args) {
  if (args === undefined || args === null) return '{}';
  if (typeof args !== 'object' || Array.isArray(args)) throw new PromptloomError('InvalidRequest', `a tool's arguments are an object (got ${Array.isArray(args) ? 'an array' : typeof args}) (at args)`, { path: 'args' });
  return __json(args, "the tool's arguments", 'InvalidRequest', { text: false, path: 'args' });
}

/**
 * The composer's authoring tools over a skill store, for authoring conversations:
 * `{ tools, call(name, args, { composition }), handlers }`. `tools` are MCP descriptors
 * (`name`, `description`, `inputSchema`); `call` returns an MCP `CallToolResult`. A call is
 * refused (`UnknownTool`) unless `composition` is an authoring composition that lists the
 * tool — an application invocation can never reach them.
 * @param {SkillStore} store
 */
export function authoringTools(store) {
  if (!store || typeof store.create !== 'function' || typeof store.list !== 'function') {
    throw new PromptloomError('InvalidOptions', 'authoringTools() takes a skill store from openSkillStore() (at store)', { path: 'store' });
  }
  /** @type {import('../composer.js').McpTool[]} */
  const tools = JSON.parse(__core('authoringTools'));
  /**
   * One authoring step of the core: the arguments checked, what to write (or list) made.
   * @param {string} s
   * @param {string} name
   * @param {unknown} args
   * @param {string} [other]
   * @returns {string}
   */
  const step = (s, name, args, other = '') => __inbox('authoringStep', [s, name, argsText(args), other, store.__now()]);
  const byName = async (/** @type {unknown} */ name) => {
    const s = await store.getByName(__str(name, 'name', 'InvalidRequest'));
    if (!s) throw new PromptloomError('NotFound', `no skill is named \`${name}\` in this scope`, { name });
    return s;
  };
  /** @type {Record<string, (args: Unchecked) => Promise<unknown>>} */
  const run = {
    create_skill: async (args) => store.create(JSON.parse(step('create', 'create_skill', args))),
    update_skill: async (args) => store.update(JSON.parse(step('update', 'update_skill', args, JSON.stringify(await byName(args.name))))),
    list_skills: async (args) => JSON.parse(step('list', 'list_skills', args, JSON.stringify(await store.list()))),
    add_artifact: async (args) => store.addArtifact(JSON.parse(step('artifact', 'add_artifact', args, JSON.stringify(await byName(args.skill))))),
  };
  /**
   * @param {string} name
   * @param {unknown} args
   * @param {Unchecked} composition
   */
  const authorize = (name, args, composition) => {
    if (composition === null || typeof composition !== 'object') {
      throw new PromptloomError('UnknownTool', `\`${name}\` needs the composition of the invocation that calls it`, { tool: name });
    }
    step('authorize', name, args, __json({ purpose: composition.purpose, subgraph: { tool_availability: composition.subgraph?.tool_availability ?? [] } }, 'the composition', 'InvalidRequest', { text: false, path: 'composition' }));
  };
  /** @type {Record<string, (args: unknown, context?: { composition?: object }) => Promise<unknown>>} */
  const handlers = {};
  for (const t of tools) {
    handlers[t.name] = async (/** @type {unknown} */ args, /** @type {{ composition?: object } | undefined} */ context) => {
      const { composition } = __opts(context ?? undefined, `${t.name}()`);
      // The arguments, read once (as the JSON the tool's schema checks).
      const read = args === undefined || args === null ? {} : JSON.parse(argsText(args));
      authorize(t.name, read, composition);
      return run[t.name](read);
    };
  }
  return {
    tools,
    handlers,
    /**
     * Runs a tool call; errors come back as an MCP result with `isError: true`.
     * @param {string} name
     * @param {unknown} args
     * @param {{ composition?: object }} [context]
     * @returns {Promise<import('../composer.js').McpResult>}
     */
    async call(name, args, context) {
      try {
        const { composition } = __opts(context ?? undefined, 'call()');
        if (typeof name !== 'string' || !Object.hasOwn(handlers, name)) throw new PromptloomError('UnknownTool', `\`${typeof name === 'string' ? name : typeof name}\` is not an authoring tool`, { tool: typeof name === 'string' ? name : null });
        return mcpResult(await handlers[name](args, { composition }));
      } catch (e) {
        return mcpError(e);
      }
    },
  };
}

/**
 * The DSPy executor in its three modes: `executors.dspy` is a function (execute only) or
 * `{ execute, optimize?, manifest? }`.
 * @param {Unchecked} executors
 * @returns {{ execute: HostCall, optimize?: HostCall, manifest?: HostCall } | null}
 */
function dspyModes(executors) {
  const d = executors.dspy;
  if (d === undefined || d === null) return null;
  if (typeof d === 'function') return { execute: d };
  if (typeof d !== 'object' || typeof d.execute !== 'function') throw new PromptloomError('InvalidOptions', '`executors.dspy` must be a function, or { execute, optimize?, manifest? } (at executors.dspy)', { path: 'executors.dspy' });
  for (const m of ['optimize', 'manifest']) {
    if (d[m] !== undefined && typeof d[m] !== 'function') throw new PromptloomError('InvalidOptions', `\`executors.dspy.${m}\` must be a function (at executors.dspy.${m})`, { path: `executors.dspy.${m}` });
  }
  return d;
}

/**
 * The skill (or its summary) to pick artifacts from, and a loader for their content.
 * @param {Unchecked} skill a skill object, or a skill name with `store`
 * @param {Unchecked} store
 * @returns {Promise<{ summary: Unchecked, load: (ref: { id: string }) => Promise<unknown> }>}
 */
async function source(skill, store) {
  if (skill && typeof skill === 'object') {
    const artifacts = skill.artifacts ?? [];
    if (Array.isArray(skill) || ArrayBuffer.isView(skill) || !Array.isArray(artifacts)) {
      throw new PromptloomError('InvalidSkill', '`skill` is a skill object (`{ name, artifacts: [...] }`) or a skill name with `store` (at skill)', { path: 'skill' });
    }
    const byId = new Map(__list(artifacts, 'skill.artifacts', 'InvalidSkill').map((a) => [a?.id, a]));
    return { summary: skill, load: async (/** @type {{ id: string }} */ ref) => byId.get(ref.id) ?? null };
  }
  if (!store || typeof store.summary !== 'function') {
    throw new PromptloomError('InvalidOptions', 'pass `skill` as a skill object, or as a name with `store` (a skill store)', { path: 'skill' });
  }
  const summary = await store.summary(__key(skill, 'skill'));
  if (!summary) throw new PromptloomError('NotFound', `no skill \`${skill}\` in the store`, { skill });
  return { summary, load: (/** @type {{ id: string }} */ ref) => store.getArtifact(ref.id) };
}

/**
 * The artifact of `kind` (named `name`, or the one the core's rule picks for `modelId`).
 * @param {string} summaryJson
 * @param {unknown} name
 * @param {string} kind
 * @param {unknown} modelId
 * @returns {Unchecked} the artifact reference
 */
function pick(summaryJson, name, kind, modelId) {
  const artifact = name === undefined ? '' : __key(name, 'artifact');
  return JSON.parse(__inbox('pickArtifact', [summaryJson, artifact, kind, modelId == null ? '' : __key(modelId, 'modelId')]));
}

/**
 * Calls a host executor mode; what it throws becomes the message a failure names.
 * @param {HostCall} f
 * @param {unknown} [arg]
 * @returns {Promise<{ out?: unknown, failed?: string }>}
 */
async function callExecutor(f, arg) {
  try {
    return { out: await f(arg) };
  } catch (e) {
    return { failed: __said(e) };
  }
}

/**
 * A host answer as the payload of an `output` event, or a message for `failed`.
 * @param {unknown} out
 * @returns {[string, string]}
 */
function answered(out) {
  try {
    return ['output', JSON.stringify(out ?? null) ?? 'null'];
  } catch (e) {
    return ['failed', `the answer cannot be written as JSON: ${__said(e)}`];
  }
}

/**
 * Calls a host function; what it throws becomes the `failed` event's message.
 * @param {HostCall} f
 * @param {unknown} [arg]
 * @returns {Promise<[string, string]>}
 */
async function settle(f, arg) {
  try {
    return answered(await f(arg));
  } catch (e) {
    return ['failed', __said(e)];
  }
}

/**
 * A run's result as JS reads it (`fallback_reason` → `fallbackReason`; its documents as they are).
 * @param {Unchecked} r
 */
function runResult(r) {
  if (r === null || typeof r !== 'object' || !('fallback_reason' in r)) return r;
  const { fallback_reason: fallbackReason, ...rest } = r;
  return { ...rest, fallbackReason };
}

/**
 * A run's `pricing` (dollars per million tokens) in the core's spelling.
 * @param {Unchecked} pricing
 */
function pricingWire(pricing) {
  if (pricing === undefined || pricing === null) return undefined;
  __opts(pricing, 'pricing');
  __renamed(pricing, { input_per_mtok: 'inputPerMtok', output_per_mtok: 'outputPerMtok' }, '`pricing`');
  return { input_per_mtok: __num(pricing.inputPerMtok, 'pricing.inputPerMtok', { min: 0 }), output_per_mtok: __num(pricing.outputPerMtok, 'pricing.outputPerMtok', { min: 0 }) };
}

/**
 * A run's `renderLimits` in the core's spelling (the core checks the values).
 * @param {Unchecked} limits
 */
function renderLimitsWire(limits) {
  if (limits === undefined || limits === null) return undefined;
  __opts(limits, 'renderLimits');
  __renamed(limits, { max_output: 'maxOutput', max_value: 'maxValue' }, '`renderLimits`');
  const { maxOutput, maxValue, ...rest } = limits;
  return { ...rest, ...(maxOutput === undefined ? {} : { max_output: maxOutput }), ...(maxValue === undefined ? {} : { max_value: maxValue }) };
}

/**
 * Drives the core's artifact run (src/artifact_run.rs): every rule — the artifact picked,
 * the route, the DSPy manifest and fallbacks, the render, the assertions, the trace row and
 * its key, the result and its errors — is the core's; this performs the I/O it asks for.
 * @param {Unchecked} options the caller's run options, checked here
 * @param {string} names the artifact names' JSON (runSkill), or ''
 * @param {string} what
 * @returns {Promise<any>} the run's result (or the skill run's)
 */
async function drive(options, names, what) {
  __opts(options, what);
  __renamed(options, { session_id: 'sessionId', render_limits: 'renderLimits', modelId: 'model', clock: 'now' }, what);
  const model = modelCall(options, what);
  const now = __clock(options.now);
  if (options.executors !== undefined && (options.executors === null || typeof options.executors !== 'object')) throw new PromptloomError('InvalidOptions', '`executors` must be an object of functions (at executors)', { path: 'executors' });
  if (options.sessionId !== undefined) __key(options.sessionId, 'sessionId');
  const { skill, store, artifact, parameters = {}, context, executors = {}, sessionId } = options;
  const traces = options.traces === undefined ? store : options.traces;
  if (traces != null && typeof traces.__putTrace !== 'function') throw new PromptloomError('InvalidOptions', '`traces` must be a skill store from openSkillStore() (at traces)', { path: 'traces' });
  const handlers = options.handlers ?? {};
  if (handlers === null || typeof handlers !== 'object' || Array.isArray(handlers)) throw new PromptloomError('InvalidOptions', '`handlers` must be an object of functions by artifact kind (at handlers)', { path: 'handlers' });
  for (const [k, f] of Object.entries(handlers)) {
    if (typeof f !== 'function') throw new PromptloomError('InvalidOptions', `\`handlers.${k}\` must be a function (at handlers.${k})`, { path: `handlers.${k}` });
  }
  const dspy = dspyModes(executors);
  if (executors.code !== undefined && typeof executors.code !== 'function') throw new PromptloomError('InvalidOptions', '`executors.code` must be a function (at executors.code)', { path: 'executors.code' });
  const { summary, load } = await source(skill, store);
  const config = {
    skill: summary,
    artifact: artifact === undefined ? undefined : __key(artifact, 'artifact'),
    model_id: options.model,
    executors: { model: model !== undefined, code: typeof executors.code === 'function', dspy: dspy !== null, manifest: typeof dspy?.manifest === 'function', handlers: Object.keys(handlers) },
    parameters,
    context,
    session_id: sessionId,
    pricing: pricingWire(options.pricing),
    render_limits: renderLimitsWire(options.renderLimits),
  };
  const M = __module();
  if (typeof M.ArtifactRunCore !== 'function') __core('pickArtifact'); // throws, naming promptloom/composer
  const run = __inbox((/** @type {Uint32Array} */ lens) => new M.ArtifactRunCore(lens), [__json(config, 'the run options', 'InvalidOptions', { text: false }), names]);
  try {
    /** @type {Unchecked} the core's next action */
    let a = JSON.parse(run.first());
    const next = (/** @type {string} */ event, payload = '') => JSON.parse(__call(() => run.next(event, payload)));
    for (;;) {
      if (a.do === 'done') {
        if (a.error) {
          const d = a.error.details;
          throw new PromptloomError(a.error.code, a.error.message, d && Array.isArray(d.results) ? { ...d, results: d.results.map(runResult) } : d);
        }
        return Array.isArray(a.result?.results) ? { ...a.result, results: a.result.results.map(runResult) } : runResult(a.result);
      }
      if (a.do === 'load') {
        const art = await load({ id: a.id });
        a = next('loaded', art ? __json(art, 'the artifact', 'InvalidSkill', { text: false, path: 'skill.artifacts' }) : '');
      } else if (a.do === 'time') {
        const ms = now();
        a = next('time', JSON.stringify({ now: __iso(ms), ms }));
      } else if (a.do === 'manifest') {
        a = next(...(await settle(/** @type {HostCall} */ (dspy?.manifest))));
      } else if (a.do === 'trace') {
        if (traces) await traces.__putTrace(a.key, a.row);
        a = next('stored');
      } else if (a.do === 'call') {
        // The core asks only for the executors the config says are there.
        const f = /** @type {HostCall} */ (a.executor === 'model' ? model : a.executor === 'code' ? executors.code : a.executor === 'dspy' ? dspy?.execute : handlers[a.kind]);
        a = next(...(await settle(f, a.request)));
      } else throw new PromptloomError('Internal', `the artifact run asked for \`${a.do}\``, {});
    }
  } finally {
    run.free();
  }
}

/**
 * Runs one artifact of a skill through its handler: `description` → context;
 * `prompt_template` → rendered, then `model`; `code_template` → rendered, then
 * `executors.code` (none by default: `NoExecutor`); `dspy_module` → `executors.dspy`, else
 * its `fallback_artifact` through `model`, else `NoExecutor`. Only the artifact that runs is
 * loaded from the store. Assertions in its metadata are checked (semantic ones ask
 * `model`); a hard failure throws `AssertionFailed`, a soft one is returned in `warnings`.
 * A trace row is recorded in `traces` (a skill store; `store` by default).
 * @param {RunOptions} options
 * @returns {Promise<import('../composer.js').RunResult>}
 */
export async function runArtifact(options = /** @type {RunOptions} */ ({})) {
  return drive(options, '', 'runArtifact()');
}

/**
 * Runs a skill's artifacts in order (default: every description, prompt_template,
 * code_template and dspy_module by ordinal, without the prompt templates that are a
 * dspy_module's fallback). Each later template sees the earlier outputs as `outputs`. A hard
 * assertion failure stops the skill (`AssertionFailed`, with the results so far in
 * `details.results`); soft failures are collected in `warnings`.
 * @param {Omit<RunOptions, 'artifact'> & { artifacts?: string[] }} options
 * @returns {Promise<{ results: import('../composer.js').RunResult[], warnings: unknown[] }>}
 */
export async function runSkill(options = /** @type {any} */ ({})) {
  __opts(options, 'runSkill()');
  const { artifacts } = options;
  if (artifacts !== undefined && !Array.isArray(artifacts)) throw new PromptloomError('InvalidOptions', '`artifacts` must be an array of artifact names (at artifacts)', { path: 'artifacts' });
  return drive({ ...options, artifact: undefined }, artifacts === undefined ? 'null' : __json(artifacts, '`artifacts`', 'InvalidOptions', { text: false, path: 'artifacts' }), 'runSkill()');
}

/**
 * The DSPy executor's manifest (`{ version, templates? }`) as JSON text, or AdapterFailed.
 * @param {ReturnType<typeof dspyModes>} dspy
 * @param {string} what
 */
async function manifestOf(dspy, what) {
  if (!dspy?.manifest) throw new PromptloomError('NoExecutor', `${what} needs the DSPy executor's manifest mode (executors.dspy.manifest)`, { executor: 'dspy' });
  const got = await callExecutor(dspy.manifest);
  if (got.failed !== undefined) throw new PromptloomError('AdapterFailed', `the DSPy executor's manifest failed: ${got.failed}`, { executor: 'dspy' });
  return __json(got.out ?? null, "the DSPy executor's manifest", 'AdapterFailed', { nullable: true });
}

/**
 * @param {Unchecked} store
 * @param {string} what
 * @returns {SkillStore}
 */
function skillStore(store, what) {
  if (!store || typeof store.getArtifacts !== 'function' || typeof store.updateArtifact !== 'function') {
    throw new PromptloomError('InvalidOptions', `${what} takes \`store\`, a skill store from openSkillStore() (at store)`, { path: 'store' });
  }
  return store;
}

/**
 * The `dspy_module` artifacts of `store` to re-optimise: those whose state blob another
 * executor version made (or no version stamped), by the executor's manifest —
 * `[{ skill_id, artifact_id, name, reason: 'version-changed' | 'unstamped', optimized_with }]`.
 * @param {{ store: SkillStore, executors?: import('../composer.js').Executors }} options
 * @returns {Promise<import('../composer.js').StaleDspy[]>}
 */
export async function staleDspy(options = /** @type {any} */ ({})) {
  __opts(options, 'staleDspy()');
  const store = skillStore(options.store, 'staleDspy()');
  const manifest = await manifestOf(dspyModes(options.executors ?? {}), 'staleDspy()');
  /** @type {unknown[]} */
  const artifacts = [];
  for (const s of await store.list()) {
    if (s.artifacts.some((a) => a.kind === 'dspy_module')) artifacts.push(...(await store.getArtifacts(s.id, ['dspy_module'])));
  }
  return JSON.parse(__inbox('dspyStale', [JSON.stringify(artifacts), manifest]));
}

/**
 * Optimises a skill's `dspy_module` artifacts (or the one named `artifact`) with the DSPy
 * executor's optimize mode: the training data are the passed examples of the module and of
 * its fallback template in the traces (`traces`, `store` by default); the state blob it
 * returns is stored on the artifact, stamped `metadata.optimized = { executor_version,
 * optimized_at, examples }` from the manifest.
 * @param {{ store: SkillStore, skill: unknown, executors?: import('../composer.js').Executors, artifact?: string, traces?: SkillStore | null, now?: () => number } & import('../index.js').LongRunOptions} options
 */
export async function optimizeDspy(options = /** @type {any} */ ({})) {
  __opts(options, 'optimizeDspy()');
  const run = __longRun(options, 'optimizeDspy()');
  run.stop();
  const store = skillStore(options.store, 'optimizeDspy()');
  const dspy = dspyModes(options.executors ?? {});
  if (!dspy?.optimize) throw new PromptloomError('NoExecutor', "optimizeDspy() needs the DSPy executor's optimize mode (executors.dspy.optimize)", { executor: 'dspy' });
  const manifest = await manifestOf(dspy, 'optimizeDspy()');
  const traces = options.traces === undefined ? store : options.traces;
  if (traces !== null && (typeof traces !== 'object' || typeof traces.exportTraces !== 'function')) throw new PromptloomError('InvalidOptions', '`traces` must be a skill store from openSkillStore(), or null (at traces)', { path: 'traces' });
  const { summary } = await source(options.skill, store);
  const summaryJson = __json(summary, 'the skill', 'InvalidSkill', { text: false, path: 'skill' });
  const refs = options.artifact === undefined ? (summary.artifacts ?? []).filter((/** @type {any} */ a) => a.kind === 'dspy_module') : [pick(summaryJson, options.artifact, 'dspy_module', '')];
  const dataset = traces ? await traces.exportTraces({ skillId: summary.id, format: 'dspy' }) : '';
  const now = options.now === undefined ? store.__now() : __iso(__clock(options.now)());
  const optimized = [];
  for (const [i, ref] of /** @type {Unchecked[]} */ (refs).entries()) {
    run.stop();
    run.tell('optimizing', i, refs.length);
    const art = await store.getArtifact(ref.id);
    if (!art) throw new PromptloomError('NotFound', `the artifact \`${ref.name}\` is not stored`, { artifact: ref.id });
    const fallback = ref.fallback ? pick(summaryJson, ref.fallback, 'prompt_template', '') : null;
    const call = JSON.parse(__inbox('dspyOptimizeCall', [JSON.stringify(art), dataset, fallback?.id ?? '']));
    const got = await callExecutor(/** @type {HostCall} */ (dspy.optimize), call);
    if (got.failed !== undefined) throw new PromptloomError('AdapterFailed', `the DSPy executor's optimize failed on \`${art.name}\`: ${got.failed}`, { artifact: art.name });
    const blob = __json(got.out ?? null, 'the state blob optimize returned', 'AdapterFailed', { text: false, nullable: true });
    const stamped = JSON.parse(__inbox('dspyStamp', [JSON.stringify(art), blob, manifest, now], call.training_data.length));
    await store.updateArtifact(stamped);
    optimized.push({ artifact: art.name, artifact_id: art.id, examples: call.training_data.length, executor_version: stamped.metadata.optimized.executor_version });
  }
  run.tell('optimized', refs.length, refs.length);
  return { optimized };
}

/**
 * Replays a stored invocation record: recomposes it from the record's inputs, the skill as
 * `store` holds it now (read by the record's `skill_id`, else its name) and the memory items
 * read back by id (`memory`: the items, or `(ids) => items`, sync or async), and proves
 * the prompt byte-identical — `{ identical, prompt_hash, recomposed_hash, changes }` — or
 * names each change (`artifact`, `template`, `memory`, `parameter`, `skill`, `error`).
 * @param {Unchecked} record the invocation record, checked here
 * @param {{ store: SkillStore, memory?: unknown[] | ((ids: string[]) => unknown[] | Promise<unknown[]>) }} options
 */
export async function verifyInvocation(record, options = /** @type {any} */ ({})) {
  __opts(options, 'verifyInvocation()');
  if (record === null || typeof record !== 'object' || Array.isArray(record)) throw new PromptloomError('InvalidRequest', 'verifyInvocation() takes an invocation record object (at record)', { path: 'record' });
  const { store, memory } = options;
  if (!store || typeof store.get !== 'function' || typeof store.getByName !== 'function') throw new PromptloomError('InvalidOptions', 'verifyInvocation() takes `store`, a skill store from openSkillStore() (at store)', { path: 'store' });
  const skill = (typeof record.skill_id === 'string' ? await store.get(record.skill_id) : null) ?? (typeof record.skill_name === 'string' ? await store.getByName(record.skill_name) : null);
  if (!skill) throw new PromptloomError('NotFound', `the skill \`${record.skill_name ?? record.skill_id}\` of this record is not in the store`, { skill: record.skill_id ?? null });
  const ids = Array.isArray(record.memory_refs) ? record.memory_refs.map((/** @type {any} */ m) => m?.id) : [];
  /** @type {unknown} */
  let items = [];

  if (typeof memory === 'function') items = ids.length > 0 ? await memory(ids) : [];
  else if (memory !== undefined && memory !== null) items = memory;
  const recordText = __json(record, 'the record', 'InvalidRequest', { text: false, path: 'record' });
  const memoryText = __json(items ?? [], 'the memory items', 'InvalidRequest', { text: false, path: 'memory' });
  return JSON.parse(__inbox('verifyInvocation', [recordText, JSON.stringify(skill), memoryText]));
}
