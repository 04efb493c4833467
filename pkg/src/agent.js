// The agent loop: lower, send, read, persist, run the tools, repeat. Every rule it applies
// is the core's: the conversation's lowering, the response parser, the arbiter's offer
// and verdicts; this file only sequences the host's I/O (the adapter, the tool handlers,
// the store behind the Conversation).

import { PromptloomError, __opts } from './api.js';

function invalid(message, path) {
  return new PromptloomError('InvalidOptions', `${message} (at ${path})`, { path });
}

/** The tool calls of an assistant turn that no later tool turn answers. */
function pendingCalls(turns) {
  const last = turns.length - 1;
  if (last < 0 || turns[last].role !== 'assistant') return [];
  return turns[last].parts.filter((p) => p.type === 'tool-call');
}

function addUsage(total, u) {
  if (!u) return;
  for (const [k, v] of Object.entries(u)) if (typeof v === 'number') total[k] = (total[k] ?? 0) + v;
}

/**
 * Runs a conversation until the model gives its final answer:
 * `runAgent({ conversation, adapter, tools?, handlers?, lower?, maxSteps?, signal?,
 * arbiter?, lane?, onEvent?, onTurn? })` →
 * `{ stop: 'final' | 'arbiter' | 'max_steps' | 'aborted', steps, turn, usage, run? }`.
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
 */
export async function runAgent(options) {
  const { conversation, adapter, tools = [], handlers = {}, lower = {}, maxSteps = 8, signal, arbiter, lane = 'main', onEvent, onTurn } = __opts(options, 'runAgent()');
  if (!conversation || typeof conversation.lower !== 'function' || typeof conversation.append !== 'function') throw invalid('`conversation` must be a Conversation', 'conversation');
  if (!adapter || typeof adapter.send !== 'function') throw invalid('`adapter` must be a model adapter from createAdapter()', 'adapter');
  if (!Array.isArray(tools)) throw invalid('`tools` must be an array of tool definitions', 'tools');
  if (handlers === null || typeof handlers !== 'object') throw invalid('`handlers` must be an object of functions by tool name', 'handlers');
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw invalid('`maxSteps` must be a positive integer', 'maxSteps');
  if (arbiter !== undefined && (arbiter === null || typeof arbiter.stepOffer !== 'function')) throw invalid('`arbiter` must be an Arbiter or a Session (promptloom/composer)', 'arbiter');
  // The lowering options: the conversation's own (given at construction), then `lower`.
  const base = { ...(conversation.options ?? {}), ...(lower ?? {}) };
  const usage = {};
  let steps = 0;
  /** @type {any} */
  let offer = null;
  /** @type {any} */
  let turn = null;

  const result = (stop, extra = {}) => ({ stop, steps, turn, usage, ...(arbiter ? { run: arbiter.run(lane) } : {}), ...extra });
  const running = () => !arbiter || (arbiter.run(lane)?.status ?? 'running') === 'running';

  /** Runs (or refuses) the calls; appends one tool turn with every result. */
  async function answer(calls) {
    const parts = [];
    for (const call of calls) {
      let output;
      let isError = false;
      /** @type {any} */
      let verdict = null;
      if (arbiter) {
        verdict = await arbiter.proposeCall(lane, call, offer ?? arbiter.stepOffer(lane, tools));
        if (!verdict.accepted) {
          const e = verdict.error ?? {};
          output = `The skill's arbiter refused this call: ${e.message ?? e.code ?? 'not allowed'}. Allowed tools: ${(e.allowed_tools ?? []).join(', ') || 'none'}; transitions: ${(e.transitions ?? []).join(', ') || 'none'}.`;
          isError = true;
        }
      }
      if (!isError && verdict && call.name === 'skill_transition') output = `Moved to state \`${verdict.state}\`.`;
      else if (!isError && verdict && call.name === 'skill_finish') output = `The skill finished (${verdict.status}).`;
      else if (!isError) {
        const name = verdict ? (offer?.names?.[call.name] ?? call.name) : call.name;
        const h = handlers[name];
        if (typeof h !== 'function') {
          output = `No tool named \`${name}\` is available.`;
          isError = true;
        } else {
          try {
            output = await h(call.input, { call, signal });
          } catch (e) {
            if (signal && signal.aborted) throw e;
            output = String(e && e.message ? e.message : e);
            isError = true;
          }
        }
      }
      parts.push({ type: 'tool-result', call_id: call.id, name: call.name, output: output ?? '', ...(isError ? { is_error: true } : {}) });
    }
    await conversation.append({ role: 'tool', parts });
  }

  // A thread reloaded after a crash: calls left unanswered run first.
  const pending = pendingCalls(conversation.turns);
  if (pending.length > 0) {
    if (arbiter) offer = arbiter.stepOffer(lane, tools);
    await answer(pending);
    if (!running()) return result('arbiter');
  }

  for (;;) {
    if (steps >= maxSteps) return result('max_steps');
    if (signal && signal.aborted) return result('aborted', { error: new PromptloomError('Aborted', 'the request was aborted', {}) });
    let opts = { ...base, tools: tools.length > 0 ? tools : base.tools };
    if (opts.tools === undefined) delete opts.tools;
    if (arbiter) {
      offer = arbiter.stepOffer(lane, tools);
      opts = { ...base, tools: offer.tools, system: base.system ? `${base.system}\n\n${offer.system}` : offer.system };
      if (opts.tools.length === 0) delete opts.tools;
    }
    const body = conversation.lower(opts).body;
    steps += 1;
    const stream = adapter.send(body, { signal });
    try {
      for await (const ev of stream) if (onEvent) onEvent(ev, steps);
      turn = await stream.turn;
    } catch (e) {
      if (e instanceof PromptloomError && e.code === 'Aborted') {
        const cut = /** @type {PromptloomError & { turn?: any }} */ (e);
        // What was shown stays in the thread: its text, without calls cut mid-way.
        const kept = (cut.turn?.parts ?? []).filter((p) => p.type === 'text' || p.type === 'reasoning');
        if (kept.some((p) => p.type === 'text' && p.text)) {
          turn = { ...cut.turn, parts: kept };
          await conversation.append(turn);
        }
        return result('aborted', { error: e });
      }
      throw e;
    }
    await conversation.append(turn);
    addUsage(usage, turn.metadata?.usage);
    if (onTurn) onTurn(turn, steps);
    const calls = turn.parts.filter((p) => p.type === 'tool-call');
    if (calls.length === 0) return result('final');
    await answer(calls);
    if (!running()) return result('arbiter');
  }
}
