// The `promptloom/lower` entry in Node: its own small module (no compositor, stores or
// skills) lowers every recorded case to the same body, holds conversations and reads
// responses with the same suites as the full entries, and gives way to a larger entry
// loaded after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as pl from '../../pkg/src/lower-node.js';
import { successCases, errorCases, resolverFor, conversationCases, conversationErrors, responseCases, objectCases } from './cases.mjs';
import { conversationConformance } from './conversation-conformance.mjs';
import { responseConformance } from './response-conformance.mjs';

test('promptloom/lower: every recorded case lowers to the recorded body and report; errors keep their codes', () => {
  const cases = successCases();
  assert.ok(cases.length >= 100);
  for (const c of cases) {
    const out = pl.lower(c.message, { provider: c.provider, ...c.options, resolve: resolverFor(c.resolve) });
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(out.report, c.expected.report, `${c.name} / ${c.provider} report`);
  }
  for (const c of errorCases()) {
    if (c.expected === 'ok') {
      assert.ok(pl.lower(c.message, { provider: c.provider, ...c.options }).body);
      continue;
    }
    assert.throws(() => pl.lower(c.message, { provider: c.provider, ...c.options }), (e) => {
      assert.ok(e instanceof pl.PromptloomError);
      assert.deepEqual([e.code, e.message, e.details], [c.expected.code, c.expected.message, c.expected.details]);
      return true;
    }, `${c.name} / ${c.provider}`);
  }
});

test('promptloom/lower: the conversation suite (no store) and the response suite', async () => {
  const conv = await conversationConformance(pl, { cases: conversationCases(), errors: conversationErrors() });
  assert.ok(conv.length >= 4, `${conv.length} checks`);
  for (const r of conv) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  const res = responseConformance(pl, { cases: responseCases(), objects: objectCases() });
  assert.ok(res.length >= 5, `${res.length} checks`);
  for (const r of res) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('promptloom/lower, then promptloom: the larger module takes over; promptloom first serves promptloom/lower', () => {
  const url = (f) => JSON.stringify(new URL(`../../pkg/src/${f}`, import.meta.url).href);
  const run = (src) => JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8' }));
  const msg = JSON.stringify({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
  const [a, b, seeded, gen] = run(`
    const low = await import(${url('lower-node.js')});
    const { __generation } = await import(${url('api.js')});
    const a = low.lower(${msg}, { provider: 'gemini' }).body;
    const core = await import(${url('node.js')});
    const store = await core.openSkillStore({ seed: true });
    console.log(JSON.stringify([a, low.lower(${msg}, { provider: 'gemini' }).body, store.seeded.status, __generation()]));
  `);
  assert.equal(a, b);
  assert.equal(seeded, 'created');
  assert.equal(gen, 1, 'the lowering-only instance was replaced once');
  const [c, gen2] = run(`
    const core = await import(${url('node.js')});
    const { __generation } = await import(${url('api.js')});
    const conv = new core.Conversation();
    conv.append(${msg});
    await import(${url('lower-node.js')});
    console.log(JSON.stringify([conv.lower({ provider: 'gemini' }).body, __generation()]));
  `);
  assert.equal(c, a);
  assert.equal(gen2, 0, 'nothing replaced');
});
