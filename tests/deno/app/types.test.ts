// The package's types under Deno's own type checker (this file is checked before it runs):
// each entry's declarations resolve from node_modules, and the calls below type-check and
// give the values their types promise.
import { lower, Conversation, createResponseParser, PromptloomError } from 'promptloom/lower';
import type { Lowered, UserMessage } from 'promptloom';

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

Deno.test('the package types type-check in Deno and describe what the calls return', async () => {
  const message: UserMessage = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const lowered: Lowered = lower(message, { provider: 'openai-chat', model: 'gpt-x' });
  check(lowered.body === '{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}', lowered.body);
  const conv = new Conversation({ options: { provider: 'anthropic' } });
  conv.append(message);
  check(typeof conv.lower().body === 'string', 'conversation body');
  const parser = createResponseParser('anthropic');
  parser.push('event: message_start\ndata: {"type":"message_start","message":{"id":"m","role":"assistant","model":"x","content":[]}}\n\n');
  parser.end();
  check(parser.finish().role === 'assistant', 'parsed turn');
  try {
    lower(message, { provider: 'nope' as 'anthropic' });
    check(false, 'no error');
  } catch (e) {
    check(e instanceof PromptloomError && e.code === 'InvalidOptions', String(e));
  }
  const composer = await import('promptloom/composer');
  const report = composer.validateSkillSpec({ name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } });
  check(report.ok === true, JSON.stringify(report));
});
