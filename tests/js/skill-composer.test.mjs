// The Skill Composer through the npm package's Node entry: the composer suite on memory
// stores, and on host KV objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { composerConformance } from './composer-conformance.mjs';
import { composerFixtures } from './composer-fixtures.mjs';
import { kv } from './host-kv.mjs';

const fx = composerFixtures();
const now = () => Date.parse('2026-11-22T10:00:00Z');

function report(results) {
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  assert.ok(results.length >= 11);
}

test('composer conformance: memory backends', async () => {
  report(await composerConformance(pl, () => pl.openSkillStore({ now }), () => pl.openMessageStore(), fx));
});

test('composer conformance: host KV objects', async () => {
  report(await composerConformance(pl, () => pl.openSkillStore({ backend: kv(), name: 'ws', now }), () => pl.openMessageStore({ backend: kv() }), fx));
});

// The Rust driver's scripted artifact and skill runs (tests/artifact_run) through runArtifact
// and runSkill: the same calls, traces, results and errors.
import { artifactCases, scriptedHost } from './artifact-cases.mjs';

/** A JS run result in the core's spelling (JS reads `fallbackReason`; the snapshot has the core's field). */
function wireResult(r) {
  if (r === null || typeof r !== 'object') return r;
  if (Array.isArray(r.results)) return { ...r, results: r.results.map(wireResult) };
  if (!('fallbackReason' in r)) return r;
  const { fallbackReason, ...rest } = r;
  return { ...rest, fallback_reason: fallbackReason };
}

test('the scripted artifact runs match the core driver', async () => {
  for (const c of artifactCases()) {
    const skill = pl.importPackage(c.pkg, { now: () => Date.parse(c.now) }).skill;
    for (const [i, run] of c.runs.entries()) {
      const h = scriptedHost(run);
      const ex = run.executors ?? {};
      const options = {
        skill,
        artifact: run.artifact,
        model: run.model_id,
        parameters: run.parameters,
        context: run.context,
        sessionId: run.session_id,
        pricing: run.pricing && { inputPerMtok: run.pricing.input_per_mtok, outputPerMtok: run.pricing.output_per_mtok },
        adapter: ex.model ? (request) => h.answer('model', request) : undefined,
        executors: {
          code: ex.code ? (request) => h.answer('code', request) : undefined,
          dspy: ex.dspy ? { execute: (request) => h.answer('dspy', request), manifest: ex.manifest ? () => h.answer('dspy-manifest', null) : undefined } : undefined,
        },
        handlers: Object.fromEntries((ex.handlers ?? []).map((k) => [k, (request) => h.answer('handler', request, k)])),
        // One clock: the tick's time (its text and its milliseconds are the same instant).
        now: () => Date.parse(h.time().now),
        traces: { __putTrace: async (key, row) => h.traces.push({ key, row }) },
      };
      const want = c.expected[i];
      let got;
      try {
        const result = 'skill_run' in run ? await pl.runSkill({ ...options, artifacts: run.skill_run ?? undefined }) : await pl.runArtifact(options);
        got = { name: run.name, calls: h.calls, traces: h.traces, result: wireResult(result) };
      } catch (e) {
        assert.ok(e instanceof pl.PromptloomError, `${run.name}: ${e}`);
        got = { name: run.name, calls: h.calls, traces: h.traces, error: { code: e.code, message: e.message, details: e.details && Array.isArray(e.details.results) ? { ...e.details, results: e.details.results.map(wireResult) } : e.details } };
      }
      assert.deepEqual(got, want, run.name);
      assert.ok(h.done(), `${run.name}: every answer asked for`);
    }
  }
});

// An Adapter from createAdapter() wherever a model is called: the composer's and the
// artifact run's requests are lowered for its provider (with `model`) and sent through it to
// the mock provider; the reply's text answers. A function as `model`, the old spelling, is
// refused naming `adapter`.
test('an Adapter from createAdapter() plugs in where a model is called: a composition and an artifact run against the mock provider', async () => {
  const { startMockProvider, mockBaseURL, planFor } = await import('../../scripts/mock-provider.mjs');
  const mock = await startMockProvider();
  try {
    for (const provider of ['anthropic', 'openai-responses', 'gemini']) {
      const adapter = pl.createAdapter({ provider, apiKey: 'k', baseURL: mockBaseURL(mock.url, provider), stream: false });
      const model = provider === 'anthropic' ? 'claude-sonnet-4-5' : provider === 'gemini' ? 'gemini-2.5-flash' : 'gpt-4.1';
      const { skill } = pl.importPackage({ name: 'Greeter', description: 'Greets.', artifacts: [{ kind: 'prompt_template', name: 'Hello', content: 'Say hello to {{ who }}.' }] }, { now });
      const run = await pl.runArtifact({ skill, artifact: 'Hello', parameters: { who: 'Ada' }, adapter, model, traces: null, now });
      const sent = JSON.parse(mock.requests.at(-1).body);
      assert.equal(run.route, 'model', provider);
      assert.equal(run.output, planFor(provider, sent).text, provider);
      assert.equal(run.trace.model_id, model, provider);
      assert.match(JSON.stringify(sent), /Say hello to Ada\./, provider);
      if (provider !== 'gemini') assert.equal(sent.model, model, provider);
      else assert.match(mock.requests.at(-1).url, new RegExp(model), provider);
    }
    // The shape question of a delegating skill goes through the Adapter too, its schema as the
    // request's structured output (the mock answers such a request with JSON of that schema).
    const adapter = pl.createAdapter({ provider: 'openai-chat', apiKey: 'k', baseURL: mockBaseURL(mock.url, 'openai-chat'), stream: false });
    const before = mock.requests.length;
    const req = fx.requests['planner-needs-shape'];
    const shaped = await pl.compose(req, { adapter, model: 'gpt-4.1' });
    assert.equal(shaped.subgraph.decided_by, 'model');
    assert.equal(mock.requests.length, before + 1);
    assert.equal(JSON.parse(mock.requests.at(-1).body).response_format.type, 'json_schema', 'the shape schema is the request output');
    assert.throws(() => pl.compose(req, { model: async () => '{}' }), (e) => e.code === 'InvalidOptions' && e.details.use === 'adapter');
    await assert.rejects(pl.runArtifact({ skill: 'G', modelId: 'x' }), (e) => e.code === 'InvalidOptions' && e.details.use === 'model');
  } finally {
    await mock.close();
  }
});
