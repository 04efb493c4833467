// The agent loop: a driver of the core's machine (src/agent.rs). The core decides every
// step — the calls left unanswered by a reloaded thread, each request's lowering options,
// the texts a refusal, a transition, a finish or an unknown tool sends back, what an
// aborted reply keeps, when the loop stops; this file only performs the host's I/O (the
// adapter, the tool handlers, the arbiter, the store behind the Conversation).

import { PromptloomError, __opts, __module, __call, __json, __said, __host, __hostAsync, __on, __glue, __toolsWire } from './api.js';
import { AGENT_EVENTS as EVENTS, AGENT_MAX_STEPS } from './constants.js';

/** @import { Unchecked } from './instance.js' */
/** @typedef {import('../index.js').ResponseEvent} ResponseEvent */

/**
 * @param {string} message
 * @param {string} path
 */
function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/**
 * @param {unknown} f
 * @param {string} path
 * @returns {Function | undefined}
 */
const fn = (f, path) => {
  if (f !== undefined && typeof f !== 'function') throw invalid(`\`${path}\` must be a function`, path);
  return /** @type {Function | undefined} */ (f);
};

/**
 * An observer (`onEvent`, `onTurn`) as the run calls it: what it throws, or the Promise it
 * answers rejects with, stops the run as `AdapterFailed` naming it; a Promise is waited for.
 * @param {Function | undefined} f
 * @param {string} path
 * @returns {((...args: unknown[]) => Promise<unknown> | undefined) | undefined}
 */
const observer = (f, path) => f && ((...args) => {
  const r = __host(f, path, ...args);
  return r && typeof r.then === 'function' ? __hostAsync(() => r, path) : undefined;
});

/**
 * A Standard Schema's verdict on a tool call's input: `{ value }`, or `{ issues }` as one line.
 * @param {(input: unknown) => Unchecked} validate the schema's `~standard.validate`
 * @param {unknown} input
 * @returns {Promise<{ value?: unknown, issues?: string }>}
 */
async function checked(validate, input) {
  /** @type {Unchecked} */
  let r;
  try {
    r = await validate(input);
  } catch (e) {
    return { issues: __said(e) };
  }
  if (r && Array.isArray(r.issues) && r.issues.length > 0) {
    /** @typedef {{ message: string, path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }} Issue */
    const where = (/** @type {Issue} */ i) => (Array.isArray(i.path) && i.path.length > 0 ? `${i.path.map((/** @type {Unchecked} */ p) => (p !== null && typeof p === 'object' ? p.key : p)).join('.')}: ` : '');
    return { issues: r.issues.map((/** @type {Issue} */ i) => `${where(i)}${i.message}`).join('; ') };
  }
  return { value: r ? r.value : input };
}

/**
 * Runs a conversation until the model gives its final answer:
 * `runAgent({ conversation, adapter, tools?, handlers?, lower?, maxSteps?, signal?,
 * arbiter?, lane?, onEvent?, onTurn? })` →
 * `{ stop: 'final' | 'arbiter' | 'max-steps' | 'aborted', steps, turn, usage, object?, run? }`.
 *
 * Each step lowers the conversation (`lower`: the lowering options, `tools`: the tool
 * definitions), sends it with `adapter`, reads the stream (`onEvent(event, step)` sees
 * every event), appends the assistant turn, runs each tool call with `handlers[name](input,
 * { call, signal })` (a throw is an error result) and appends the results — each append
 * persisted (a Conversation with a store) before the next request, so a reload resumes the
 * thread: calls left unanswered are run first. With an `arbiter` and a `lane` running a
 * SkillSpec, the model is offered the state's tools and `skill_transition` /
 * `skill_finish`; every call is proposed to the arbiter first and a refusal goes back to the
 * model as an error result with the arbiter's reason; the loop stops when the run ends.
 * `arbiter` may also be a Session (`openSession`): every proposal is then in the session's
 * stored log, with the lane's moves, before the tool runs.
 * @param {import('../index.js').AgentOptions<any>} options
 * @returns {Promise<import('../index.js').AgentResult>}
 */
export async function runAgent(options) {
  const { conversation, adapter, tools = [], handlers = {}, lower = {}, maxSteps = AGENT_MAX_STEPS, signal, arbiter, lane = 'main' } = __opts(options, 'runAgent()');
  if (!conversation || typeof conversation.lower !== 'function' || typeof conversation.append !== 'function') throw invalid('`conversation` must be a Conversation', 'conversation');
  if (!adapter || typeof adapter.send !== 'function') throw invalid('`adapter` must be a model adapter from createAdapter()', 'adapter');
  if (!Array.isArray(tools)) throw invalid('`tools` must be an array of tool definitions', 'tools');
  if (handlers === null || typeof handlers !== 'object') throw invalid('`handlers` must be an object of functions by tool name', 'handlers');
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw invalid('`maxSteps` must be a positive integer', 'maxSteps');
  if (arbiter !== undefined && (arbiter === null || typeof arbiter.stepOffer !== 'function')) throw invalid('`arbiter` must be an Arbiter or a Session (promptloom/composer)', 'arbiter');
  if (lower !== null && typeof lower !== 'object') throw invalid('`lower` must be an object of lowering options', 'lower');
  const onEvent = observer(fn(options.onEvent, 'onEvent'), 'onEvent');
  const onTurn = observer(fn(options.onTurn, 'onTurn'), 'onTurn');
  const json = (/** @type {unknown} */ v, /** @type {string} */ path) => (v == null ? '' : __json(v, `\`${path}\``, 'InvalidOptions', { text: false, path }));
  // The tools as the model is offered them (a Standard JSON Schema written out as JSON
  // Schema); a Standard Schema also checks each call's input before its handler runs.
  const offered = __toolsWire(tools);
  const checks = new Map();
  for (const t of tools) {
    const v = t && t.inputSchema && t.inputSchema['~standard'] && t.inputSchema['~standard'].validate;
    if (typeof v === 'function') checks.set(t.name, v);
  }
  const M = __module();
  const run = __call(() => new M.AgentRunCore(json(conversation.options, 'conversation.options'), json(lower, 'lower'), json(offered, 'tools'), maxSteps, arbiter !== undefined));
  // The run finishes on the instance it started on, if a larger entry loads meanwhile.
  const glue = __glue();
  /** @type {(event: keyof typeof EVENTS, payload?: string) => Unchecked} the core's next action */
  const next = (event, payload = '') => JSON.parse(__on(glue, () => __call(() => run.next(EVENTS[event], payload))));
  /** @type {unknown} */
  let offer = null;
  /** @type {any} */
  let turn = null;
  let steps = 0;
  /** @type {PromptloomError | null} */
  let cut = null;
  try {
    const turns = conversation.turns;
    let action = next('start', turns.length > 0 ? JSON.stringify(turns[turns.length - 1]) : '');
    for (;;) {
      switch (action.do) {
        case 'offer':
          offer = arbiter.stepOffer(lane, offered);
          action = next('offer', JSON.stringify(offer));
          break;
        case 'propose':
          action = next('verdict', __json(await arbiter.proposeCall(lane, action.call, offer), "the arbiter's verdict", 'AdapterFailed', { text: false, path: 'arbiter' }));
          break;
        case 'tool': {
          const h = handlers[action.name];
          if (typeof h !== 'function') {
            action = next('no-tool');
            break;
          }
          let input = action.call.input;
          const check = checks.get(action.name);
          if (check) {
            // What the schema says of the input goes back to the model as the error result.
            const said = await checked(check, input);
            if (said.issues) {
              action = next('failed', `the input does not match the tool's schema: ${said.issues}`);
              break;
            }
            input = said.value;
          }
          /** @type {unknown} */
          let out;
          try {
            out = await h(input,
 { call: action.call, signal });
          } catch (e) {
            if (signal && signal.aborted) throw e;
            action = next('failed', __said(e));
            break;
          }
          action = next('output', __json(out ?? null, 'the tool output', 'InvalidRequest', { text: false, nullable: true, path: action.name }));
          break;
        }
        case 'append':
          // No turn: the reply just received. A cut reply's kept part is the run's last turn.
          if (action.turn !== undefined && cut) turn = action.turn;
          await conversation.append(action.turn ?? turn);
          if (action.turn === undefined && onTurn) {
            const p = onTurn(turn, steps);
            if (p) await p;
          }
          action = next('appended');
          break;
        case 'send': {
          if (signal && signal.aborted) {
            cut = new PromptloomError('Aborted', 'the request was aborted', {});
            action = next('aborted');
            break;
          }
          const body = conversation.lower(action.options).body;
          const step = action.step;
          const stream = __host(() => adapter.send(body, { signal }), 'adapter.send');
          if (stream === null || typeof stream !== 'object' || typeof stream[Symbol.asyncIterator] !== 'function') {
            throw new PromptloomError('AdapterFailed', '`adapter.send` must answer a ResponseStream (an async iterable of events with `turn`) (at adapter.send)', { path: 'adapter.send', callback: 'adapter.send' });
          }
          try {
            if (typeof stream.__consume === 'function') {
              // A ResponseStream hands each event over as it is read (no Promise per event).
              turn = await stream.__consume(onEvent ? (/** @type {ResponseEvent} */ ev) => onEvent(ev, step) : () => {});
            } else {
              for await (const ev of stream) {
                const p = onEvent && onEvent(ev, step);
                if (p) await p;
              }
              turn = await stream.turn;
            }
          } catch (e) {
            if (e instanceof PromptloomError && e.code === 'Aborted') {
              cut = e;
              const partial = /** @type {PromptloomError & { turn?: any }} */ (e).turn;
              action = next('cut', partial ? JSON.stringify(partial) : '');
              break;
            }
            throw e;
          }
          steps = step;
          action = next('received', __json(turn, "the adapter's turn", 'AdapterFailed', { text: false, path: 'adapter' }));
          break;
        }
        case 'status':
          action = next('status', String((arbiter.run(lane)?.status ?? 'running') === 'running'));
          break;
        case 'done':
          return { stop: action.stop, steps: action.steps, turn, usage: action.usage, ...(turn && turn.metadata && turn.metadata.object !== undefined ? { object: turn.metadata.object } : {}), ...(arbiter ? { run: arbiter.run(lane) } : {}), ...(action.stop === 'aborted' ? { error: /** @type {PromptloomError} */ (cut) } : {}) };
        default:
          throw new PromptloomError('Internal', `the agent run asked for \`${action.do}\``, {});
      }
    }
  } finally {
    run.free();
  }
}
