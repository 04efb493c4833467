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
