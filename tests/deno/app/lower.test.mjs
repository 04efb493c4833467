// The `promptloom/lower` entry in Deno, as a Deno app with a package.json uses it: the
// packed npm package installed into node_modules and imported by name. Every recorded case
// gives the Rust snapshot's body byte for byte, the error cases their codes, the conversation
// and response suites pass (the event stream relayed with toResponse() and read back with
// readEventStream() too); then `promptloom/composer`, imported lazily, takes over.
import assert from 'node:assert/strict';
import { successCases, errorCases, resolverFor, conversationCases, conversationErrors, responseCases, objectCases } from '../../js/cases.mjs';
import { conversationConformance } from '../../js/conversation-conformance.mjs';
import { responseConformance } from '../../js/response-conformance.mjs';
import { eventStreamConformance } from '../../js/event-stream-conformance.mjs';

const SPEC = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };

Deno.test('promptloom/lower in Deno: recorded bodies and errors, conversations, responses; a lazy promptloom/composer after it', async () => {
  const pl = await import('promptloom/lower');
  const cases = successCases();
  assert.ok(cases.length >= 40, `${cases.length} cases`);
  for (const c of cases) {
    const body = pl.lower(c.message, { provider: c.provider, ...c.options, resolve: resolverFor(c.resolve) }).body;
    assert.equal(body, c.expected.body, `${c.name} / ${c.provider}`);
  }
  for (const c of errorCases()) {
    let got = 'ok';
    try {
      pl.lower(c.message, { provider: c.provider, ...c.options });
    } catch (e) {
      assert.ok(e instanceof pl.PromptloomError, `${c.name}: ${e}`);
      got = { code: e.code, message: e.message };
    }
    if (c.expected === 'ok') assert.equal(got, 'ok', `${c.name} / ${c.provider}`);
    else assert.equal(got.code, c.expected.code, `${c.name} / ${c.provider}`);
  }
  const results = [...(await conversationConformance(pl, { cases: conversationCases(), errors: conversationErrors() })), ...responseConformance(pl, { cases: responseCases(), objects: objectCases() }), ...(await eventStreamConformance(pl, { cases: responseCases(), objects: objectCases() }))];
  assert.ok(results.length >= 8, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);

  const comp = await import('promptloom/composer');
  assert.equal(comp.validateSkillSpec(SPEC).ok, true);
  assert.equal(pl.lower({ role: 'user', parts: [{ type: 'text', text: 'x' }] }, { provider: 'gemini' }).body, '{"contents":[{"role":"user","parts":[{"text":"x"}]}]}');
});
