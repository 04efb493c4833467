// The Skill Composer suite: the same checks through every built artifact that has the JS
// API (Node, headless Chromium with IndexedDB, workerd). `fx` holds the fixtures: skill
// packages by name, compose requests by name (package included), and the compositions the
// Rust snapshots recorded for them. Model adapters and executors here are the host's
// callbacks, as an application would write them.
import { assert, eq, rejects, checker, throws } from './checks.mjs';

const NOW = '2026-11-22T10:00:00.000Z';
/** The clock the runs and imports take: NOW in epoch milliseconds. */
const clock = () => Date.parse(NOW);

/** A host model adapter that answers from a table of (purpose → answer) and logs calls. */
function adapter(answers, log = []) {
  const model = async (req) => {
    log.push(req);
    const a = answers[req.purpose];
    if (a instanceof Error) throw a;
    return typeof a === 'function' ? a(req) : a;
  };
  return { model, log };
}

export async function composerConformance(pl, openSkills, openMessages, fx) {
  const results = [];
  const check = checker(openSkills, results);
  const req = (name) => structuredClone(fx.requests[name]);

  await check('compositions equal the Rust snapshots, byte-identical twice', async () => {
    let n = 0;
    for (const [name, expected] of Object.entries(fx.expected)) {
      let got;
      try {
        got = pl.compose(req(name));
        got = got instanceof Promise ? { pending: true } : { composition: got };
      } catch (e) {
        got = { error: { code: e.code, message: e.message, details: e.details } };
      }
      if (expected.needs_shape) {
        assert(got.error?.code === 'NoModelAdapter', `${name}: a shape-delegating skill without a model is NoModelAdapter`);
      } else {
        eq(got, expected, name);
      }
      const again = (() => {
        try {
          return JSON.stringify(pl.compose(req(name)));
        } catch (e) {
          return JSON.stringify({ code: e.code, message: e.message, details: e.details });
        }
      })();
      const first = (() => {
        try {
          return JSON.stringify(pl.compose(req(name)));
        } catch (e) {
          return JSON.stringify({ code: e.code, message: e.message, details: e.details });
        }
      })();
      assert(first === again, `${name}: the same request twice gives the same bytes`);
      n++;
    }
    assert(n >= 15, 'every fixture ran');
  });

  await check('a prepared skill composes every fixture as compose() does, errors and records included', async () => {
    const outcome = (f) => {
      try {
        const c = f();
        return c instanceof Promise ? 'pending' : JSON.stringify(c);
      } catch (e) {
        return JSON.stringify({ code: e.code, message: e.message, details: e.details });
      }
    };
    let prepared = 0;
    let refused = 0;
    for (const name of Object.keys(fx.expected)) {
      const { skill_package, ...invocation } = req(name);
      let p;
      try {
        p = pl.prepareSkill(skill_package);
      } catch (e) {
        // A package that does not validate fails when prepared, as compose() fails on it
        // (compose() adds the invocation record; there is no invocation yet).
        const c = throws(() => pl.compose(req(name)), e.code, `${name}: compose() fails the same way`);
        eq(c.message, e.message, `${name}: the same message`);
        assert(e.details.invocation_record === undefined, `${name}: no record before an invocation`);
        refused++;
        continue;
      }
      assert(p instanceof pl.PreparedSkill && p.name === skill_package.name, `${name}: the prepared skill names its skill`);
      const want = outcome(() => pl.compose(req(name)));
      eq(outcome(() => p.compose(structuredClone(invocation))), want, `${name}: prepared, first`);
      eq(outcome(() => p.compose(structuredClone(invocation))), want, `${name}: prepared, again`);
      prepared++;
    }
    assert(prepared >= 12 && refused >= 1, `both kinds ran (${prepared} prepared, ${refused} refused)`);
    // The package is copied when prepared: a later change to the object is not seen.
    const { skill_package, ...invocation } = req('release-notes-developers');
    const p = pl.prepareSkill(skill_package);
    const before = JSON.stringify(p.compose(invocation));
    skill_package.name = 'Renamed';
    eq(JSON.stringify(p.compose(invocation)), before, 'the prepared package is a copy');
    throws(() => p.compose({ ...invocation, skill_package }), 'InvalidRequest', 'a package in the invocation');
    throws(() => p.compose(null), 'InvalidRequest', 'not an object');
    throws(() => pl.prepareSkill('not a package'), 'InvalidRequest', 'a string');
    // The shape question goes through the prepared skill as through compose().
    const { skill_package: planner, ...ask } = req('planner-needs-shape');
    const q = pl.prepareSkill(planner);
    throws(() => q.compose(ask), 'NoModelAdapter', 'no model');
    const shape = '{"kind": "staged", "stages": [{"name": "search", "tools": ["web_search"]}, {"name": "write", "tools": ["write_doc"]}]}';
    const viaPrepared = await q.compose(ask, { adapter: adapter({ shape }).model });
    const viaCompose = await pl.compose(req('planner-needs-shape'), { adapter: adapter({ shape }).model });
    eq(JSON.stringify(viaPrepared), JSON.stringify(viaCompose), 'the same composition after the shape answer');
  });

  await check('each error is a PromptloomError with the variant as code and the invocation record', async () => {
    const codes = {
      'consistency-checker-no-framing': 'MissingRequiredField',
      'broken-template': 'MalformedTemplate',
      'release-notes-approach-tool-missing': 'UnknownTool',
      'release-notes-bad-parameters': 'ParameterMismatch',
      'release-notes-over-budget': 'ArtifactBudgetExceeded',
      'release-notes-no-capabilities': 'CapabilityNarrowing',
    };
    for (const [name, code] of Object.entries(codes)) {
      const e = throws(() => pl.compose(req(name)), code, name);
      assert(e instanceof pl.PromptloomError && e instanceof Error, `${name}: a real Error`);
      assert(e.details.invocation_record?.error?.code === code, `${name}: the record names the variant`);
    }
    const e = throws(() => pl.compose(req('broken-template')), 'MalformedTemplate', 'line and column');
    assert(e.details.line === 3 && typeof e.details.column === 'number', 'line and column are structured');
    const b = throws(() => pl.compose(req('release-notes-over-budget')), 'ArtifactBudgetExceeded', 'budget');
    assert(b.details.suggested_trimming.fits && b.details.suggested_trimming.drop.length > 0, 'a suggested trimming');
    throws(() => pl.compose(null), 'InvalidRequest', 'not an object');
  });

  await check('runaway, recursive and huge templates end with MalformedTemplate; the instance lives on', async () => {
    const base = req('runaway-template');
    const withFraming = (content) => {
      const r = structuredClone(base);
      r.skill_package.artifacts[0].content = content;
      return r;
    };
    const cases = {
      fuel: base,
      recursion: withFraming('{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}'),
      'too-large': withFraming("{% for i in range(99999) %}{{ 'x' * 1000 }}{% endfor %}"),
    };
    for (const [reason, r] of Object.entries(cases)) {
      const t0 = Date.now();
      const e = throws(() => pl.compose(r), 'MalformedTemplate', reason);
      assert(e.details.reason === reason, `${reason}: got ${e.details.reason}`);
      assert(Date.now() - t0 < 10000, `${reason}: ends in bounded time`);
    }
    // Still alive: a good composition right after.
    assert(pl.compose(req('release-notes-developers')).prompt.text.length > 100, 'the instance still composes');
  });

  await check('planner_delegates_shape: NoModelAdapter without a model; the model answer shapes the subgraph, bounded', async () => {
    throws(() => pl.compose(req('planner-needs-shape')), 'NoModelAdapter', 'no model');
    const { model, log } = adapter({ shape: '```json\n{"kind": "staged", "stages": [{"name": "search", "tools": ["web_search"]}, {"name": "write", "tools": ["write_doc"]}]}\n```' });
    const p = pl.compose(req('planner-needs-shape'), { adapter: model });
    assert(p instanceof Promise, 'with a model: a Promise');
    const c = await p;
    assert(c.subgraph.kind === 'staged' && c.subgraph.decided_by === 'model', 'the model decided');
    eq(c.subgraph.nodes.map((n) => n.id), ['input_validation', 'stage-1', 'stage-2', 'output_validation'], 'stages');
    assert(log.length === 1 && log[0].purpose === 'shape' && log[0].prompt.includes('web_search') && log[0].schema.type === 'object', 'the question');
    // A model cannot widen: a tool the caller lacks fails the composition.
    const r = req('planner-needs-shape');
    r.caller_capabilities = ['web_search', 'write_doc'];
    await rejects(pl.compose(r, { adapter: adapter({ shape: '{"kind": "loop", "tools": ["fetch_page"]}' }).model }), 'UnknownTool', 'widening');
    await rejects(pl.compose(req('planner-needs-shape'), { adapter: adapter({ shape: 'I think a loop' }).model }), 'AdapterFailed', 'not JSON');
    await rejects(pl.compose(req('planner-needs-shape'), { adapter: adapter({ shape: new Error('503') }).model }), 'AdapterFailed', 'adapter throws');
    // A skill without the flag never calls the model; given a model, the answer is still a
    // Promise (the kind of answer follows the call, not the skill), the same composition.
    const quiet = adapter({});
    const c2 = pl.compose(req('release-notes-developers'), { adapter: quiet.model });
    assert(c2 instanceof Promise, 'a Promise with a model');
    eq(JSON.stringify(await c2), JSON.stringify(pl.compose(req('release-notes-developers'))), 'the same composition');
    assert(quiet.log.length === 0, 'no model call');
    await rejects(pl.compose({ skill_package: null }, { adapter: quiet.model }), 'InvalidRequest', 'errors are rejections with a model');
    throws(() => pl.compose({ skill_package: null }), 'InvalidRequest', 'and throws without');
  });

  await check('capability bounding: application invocations never see authoring tools; nested sub-skills take the caller\'s capabilities', async () => {
    const app = pl.compose(req('application-skill-writer'));
    eq(app.subgraph.tool_availability.map((t) => t.name), ['search'], 'authoring tools stripped');
    const auth = pl.compose(req('authoring-skill-writer'));
    eq(auth.subgraph.tool_availability.map((t) => t.name), ['create_skill', 'list_skills', 'add_artifact'], 'wired for authoring');
    const parent = req('release-notes-developers');
    const sub = { name: 'Sub', description: 'nested', metadata: { framing: 'Sub.', tool_surface: ['get_pr', 'delete_repo', 'web_search'] } };
    const nested = pl.nestedRequest(parent, sub, { toolCatalog: [{ name: 'get_pr' }, { name: 'delete_repo' }, { name: 'web_search' }], userRequest: 'look' });
    // delete_repo is in the parent's available tools but not granted to the caller.
    eq(nested.available_tools.map((t) => t.name), ['get_pr'], 'surface ∩ caller capabilities');
    assert(nested.thread_id === parent.thread_id, 'same thread');
    const c = pl.compose(nested);
    eq(c.subgraph.tool_availability.map((t) => t.name), ['get_pr'], 'the sub-composition');
  });

  await check('lowerComposition: system = framing, context and examples; user = the request; tools from the availability', async () => {
    const c = pl.compose(req('release-notes-developers'));
    const l = await pl.lowerComposition(c, { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 1024 });
    const body = JSON.parse(l.body);
    assert(typeof body.system === 'string' && body.system.startsWith('You write the release notes for Acme 5.0.0') && body.system.includes('## Examples'), 'system');
    assert(body.messages[0].content[0].text.startsWith('## Request'), 'user turn');
    eq(body.tools.map((t) => t.name), ['search_prs', 'get_pr'], 'tools');
    assert(body.tools[0].input_schema.type === 'object', 'MCP inputSchema lowered');
    const g = JSON.parse((await pl.lowerComposition(c, { provider: 'gemini' })).body);
    assert(g.systemInstruction && g.tools[0].functionDeclarations.length === 2, 'gemini');
  });

  await check('invocation records are stored beside the turn', async () => {
    const messages = await openMessages();
    try {
      const sub = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'Draft the notes' }], metadata: { schema_version: 2 } }, { store: messages, session: 'thread-1', now: () => 1 });
      const r = req('release-notes-developers');
      r.turn_id = sub.id;
      const c = pl.compose(r);
      await messages.recordInvocation(c.invocation_record);
      let failed;
      try {
        pl.compose(req('release-notes-over-budget'));
      } catch (e) {
        failed = e.details.invocation_record;
      }
      await messages.recordInvocation(failed);
      const recs = await messages.invocations('thread-1');
      assert(recs.length === 1 && recs[0].turn_id === sub.id && recs[0].outcome === 'success', 'success record');
      eq(recs[0].used_artifacts, c.used_artifacts, 'used artifacts');
      const bad = await messages.invocations('thread-3');
      assert(bad.length === 1 && bad[0].error.code === 'ArtifactBudgetExceeded', 'error record');
      assert((await messages.history('thread-1')).length === 1, 'the turn is still there');
      await rejects(messages.recordInvocation({ nope: 1 }), 'InvalidRequest', 'not a record');
    } finally {
      messages.close();
    }
  });

  await check('authoring tools: MCP descriptors, refused in application invocations, real writes in authoring ones', async (store) => {
    const tools = pl.authoringTools(store);
    eq(tools.tools.map((t) => t.name), ['create_skill', 'update_skill', 'list_skills', 'add_artifact'], 'descriptors');
    assert(tools.tools.every((t) => typeof t.description === 'string' && t.inputSchema.type === 'object'), 'MCP shape');
    const app = pl.compose(req('application-skill-writer'));
    const auth = pl.compose(req('authoring-skill-writer'));
    const create = { name: 'Timeline Check', description: 'Checks timelines', metadata: { framing: 'Check it.' } };
    const refused = await tools.call('create_skill', create, { composition: app });
    assert(refused.isError && refused.structuredContent.code === 'UnknownTool', 'application refused');
    assert((await store.list()).length === 0, 'nothing written');
    await rejects(tools.handlers.create_skill(create, { composition: app }), 'UnknownTool', 'handler refused too');
    const badArgs = await tools.call('create_skill', { name: 7 }, { composition: auth });
    assert(badArgs.isError && badArgs.structuredContent.code === 'InvalidRequest', 'inputSchema checked');
    const made = await tools.call('create_skill', create, { composition: auth });
    assert(!made.isError && made.structuredContent.name === 'Timeline Check', 'created');
    const added = await tools.call('add_artifact', { skill: 'Timeline Check', kind: 'example', name: 'One', content: 'A then B', metadata: { tags: ['dates'] } }, { composition: auth });
    assert(!added.isError, `added: ${JSON.stringify(added.structuredContent)}`);
    const listed = await tools.call('list_skills', { source: 'user' }, { composition: auth });
    eq(listed.structuredContent.map((s) => s.name), ['Timeline Check'], 'listed');
    const notGranted = await tools.call('update_skill', { name: 'Timeline Check', framing: 'x' }, { composition: auth });
    assert(notGranted.isError && notGranted.structuredContent.code === 'UnknownTool', 'update not granted to this caller');
    const full = structuredClone(auth);
    full.subgraph.tool_availability = [{ name: 'update_skill' }];
    const up = await tools.call('update_skill', { name: 'Timeline Check', framing: 'Check it twice.' }, { composition: full });
    assert(!up.isError, 'updated');
    const s = await store.getByName('Timeline Check');
    assert(s.metadata.framing === 'Check it twice.' && s.artifacts.length === 1, 'stored as asked');
  });

  await check('dispatch: every kind, the fallback, the missing executors; only the artifact that runs is loaded', async (store) => {
    await store.create(fx.packages['full-contract']);
    const loads = [];
    const getArtifact = store.getArtifact.bind(store);
    store.getArtifact = (id) => {
      loads.push(id);
      return getArtifact(id);
    };
    const params = { entity_name: 'Mara', strict: true, events: [{ date: '1900', text: 'born' }] };
    const opts = { store, skill: 'Timeline Auditor', parameters: params, sessionId: 's1', now: clock };
    const ctx = await pl.runArtifact({ ...opts, artifact: 'Overview' });
    assert(ctx.route === 'context' && ctx.output === 'Use when an author asks whether events line up.', 'description → context');
    assert(loads.length === 1, 'one artifact loaded');
    const { model, log } = adapter({ artifact: (r) => ({ text: '{"issues": [{"date": "1900", "why": "x"}]}', usage: { input_tokens: 120, output_tokens: 30 }, model: 'claude-sonnet-4-5' }), assertion: 'yes' });
    const run = await pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: model, model: 'claude-sonnet-4-5', pricing: { inputPerMtok: 3, outputPerMtok: 15 } });
    assert(run.route === 'model' && log[0].prompt === 'Audit the timeline of Mara. Be strict.\n- 1900: born\n', 'rendered then sent');
    assert(run.assertions.run === 4 && run.assertions.passed === 4 && run.warnings.length === 0, 'four assertions pass');
    const long = await pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: adapter({ artifact: JSON.stringify({ issues: [], pad: 'x'.repeat(5000) }), assertion: 'yes' }).model });
    assert(long.warnings.length === 1 && long.warnings[0].type === 'length' && long.assertions.passed === 3, 'the soft length assertion warns and the run goes on');
    assert(run.trace.input_tokens === 120 && run.trace.estimated_cost === 0.00081 && run.trace.model_id === 'claude-sonnet-4-5', 'trace cost');
    const openai = await pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: adapter({ artifact: '{"issues": [], "note": "dates 1900 1901 ok"}', assertion: 'yes' }).model, model: 'gpt-4o' });
    assert(openai.artifact.model_variant === 'openai', 'variant for the model');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Collect Events' }), 'NoExecutor', 'no sandbox');
    // The render's bounds are the caller's to set, as in compose().
    await rejects(pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: model, renderLimits: { fuel: 1 } }), 'MalformedTemplate', 'renderLimits reach the artifact render');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: model, renderLimits: { fuels: 1 } }), 'InvalidRequest', 'an unknown render limit');
    const code = await pl.runArtifact({ ...opts, artifact: 'Collect Events', executors: { code: async ({ code, language }) => ({ ran: code.includes("workspace_search('Mara')"), language }) } });
    eq(JSON.parse(code.output), { ran: true, language: 'python' }, 'sandbox got the rendered code');
    const dspy = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', executors: { dspy: async (call) => ({ template: call.template_id, state: call.state_blob }) } });
    eq(JSON.parse(dspy.output), { template: 'chain_of_thought', state: 'eyJkZW1vcyI6IFtdfQ==' }, 'dspy executor');
    loads.length = 0;
    const fb = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', adapter: adapter({ artifact: '{"issues": [{"d": "1900"}], "pad": "................................"}', assertion: 'yes' }).model });
    assert(fb.route === 'model' && fb.artifact.name === 'Audit Prompt' && fb.replaced.name === 'DSPy Auditor', 'graceful degradation');
    assert(loads.length === 1, 'only the fallback was loaded, not the dspy_module');
    assert(fb.trace.fallback_from === fb.replaced.id, 'the trace names what it stood in for');
    await rejects(pl.runArtifact({ ...opts, artifact: 'DSPy Auditor' }), 'NoModelAdapter', 'fallback without a model');
    // A dspy_module must name its fallback (an error, as the seed says) …
    const lone = { name: 'Lone', description: 'x', artifacts: [{ kind: 'dspy_module', name: 'M', content: '{"template_id": "predict"}' }] };
    const invalid = throws(() => pl.importPackage(lone, { now: clock }), 'InvalidSkill', 'no fallback_artifact');
    assert(invalid.details.problems.some((p) => p.code === 'missing-fallback' && p.severity === 'error'), 'missing-fallback is an error');
    // … and a skill object that skipped validation still fails cleanly without an executor.
    const unchecked = { id: 'lone', name: 'Lone', description: 'x', artifacts: [{ id: 'lone-m', skill_id: 'lone', kind: 'dspy_module', name: 'M', ordinal: 0, content: '{"template_id": "predict"}', metadata: {} }] };
    await rejects(pl.runArtifact({ skill: unchecked, artifact: 'M', traces: null }), 'NoExecutor', 'no fallback, no executor');
    await rejects(pl.runArtifact({ skill: unchecked, artifact: 'M', traces: null, executors: { dspy: async () => { throw new Error('down'); } } }), 'AdapterFailed', 'no fallback after a failure');
    // A whole-skill run takes the core's order: by ordinal, a fallback-only template skipped.
    const three = pl.importPackage({ name: 'Three', description: 'x', artifacts: [
      { kind: 'description', name: 'D', content: 'About.' },
      { kind: 'prompt_template', name: 'P', content: 'Ask.' },
      { kind: 'dspy_module', name: 'M', content: '{"template_id": "predict"}', metadata: { fallback_artifact: 'P' } },
    ] }, { now: clock }).skill;
    const whole = await pl.runSkill({ skill: three, traces: null, executors: { dspy: async () => ({ ok: 1 }) } });
    eq(whole.results.map((r) => r.artifact.name), ['D', 'M'], 'runSkill runs the core order');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Nope' }), 'NotFound', 'unknown artifact');
    // The handler registry: a host handler replaces the built-in one for its kind.
    const seen = [];
    const own = await pl.runArtifact({ ...opts, artifact: 'Collect Events', handlers: { code_template: async (step) => { seen.push(step.kind); return step.input.includes("workspace_search('Mara')") ? 'ran' : 'no'; } } });
    eq([own.route, own.output, seen, own.trace.route], ['handler', 'ran', ['code_template'], 'handler'], 'a host handler for code_template');
    const desc = await pl.runArtifact({ ...opts, artifact: 'Overview', handlers: { description: (step) => step.input.toUpperCase() } });
    eq(desc.output, 'USE WHEN AN AUTHOR ASKS WHETHER EVENTS LINE UP.', 'a host handler replaces context injection');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Overview', handlers: { video: async () => 1 } }), 'InvalidOptions', 'a handler for no kind');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Overview', handlers: { description: 5 } }), 'InvalidOptions', 'a handler that is no function');
    await rejects(pl.runArtifact({ ...opts, artifact: 'Overview', handlers: { description: () => { throw new Error('boom'); } } }), 'AdapterFailed', 'a failing handler');
    const odd = { id: 'odd', name: 'Odd', description: 'x', artifacts: [{ id: 'odd-v', skill_id: 'odd', kind: 'video_template', name: 'V', ordinal: 0, content: 'x', metadata: {} }] };
    const nh = await rejects(pl.runArtifact({ skill: odd, artifact: 'V', traces: null }), 'NoHandler', 'an unknown kind');
    eq(nh.details.kind, 'video_template', 'NoHandler names the kind');
  });

  await check('dspy_module: the fallback runs when the executor throws or lacks the template; optimise, stamp, re-optimise', async (store) => {
    await store.create(fx.packages['full-contract']);
    const opts = { store, skill: 'Timeline Auditor', parameters: { entity_name: 'Mara' }, sessionId: 'd1', now: clock };
    const answer = adapter({ artifact: '{"issues": [{"date": "1900"}], "pad": "................................"}', assertion: 'yes' }).model;
    const down = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', adapter: answer, executors: { dspy: async () => { throw new Error('sidecar down'); } } });
    eq([down.route, down.artifact.name, down.replaced.name, down.fallbackReason], ['model', 'Audit Prompt', 'DSPy Auditor', 'the DSPy executor failed: sidecar down'], 'a throwing executor degrades to the fallback');
    eq([down.trace.fallback_from, down.trace.fallback_reason], [down.replaced.id, down.fallbackReason], 'the trace says what it stood in for and why');
    const none = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', adapter: answer });
    eq(none.trace.fallback_reason, 'no DSPy executor is registered', 'no executor: the reason');
    const executed = [];
    const dspy = (version, templates) => ({
      execute: async (call) => {
        executed.push(call.template_id);
        return { ok: call.state_blob };
      },
      optimize: async (call) => ({ demos: call.training_data.map((e) => e.raw_output), from: call.template_id }),
      manifest: async () => ({ version, templates }),
    });
    const other = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', adapter: answer, executors: { dspy: dspy('dspy-2.6', [{ template_id: 'predict' }]) } });
    eq([other.artifact.name, other.fallbackReason, executed], ['Audit Prompt', 'the DSPy executor failed: the DSPy executor does not offer the template `chain_of_thought`', []], 'a template the manifest lacks runs the fallback');
    const ran = await pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', executors: { dspy: dspy('dspy-2.6', [{ template_id: 'chain_of_thought' }]) } });
    eq([ran.route, ran.fallbackReason, executed], ['dspy', null, ['chain_of_thought']], 'an offered template executes');
    // Re-optimisation: the shipped state blob carries no version stamp.
    const exec26 = { dspy: dspy('dspy-2.6') };
    eq((await pl.staleDspy({ store, executors: exec26 })).map((x) => [x.name, x.reason, x.optimized_with]), [['DSPy Auditor', 'unstamped', null]], 'an unstamped blob is stale');
    const stopped = new AbortController();
    stopped.abort();
    await rejects(pl.optimizeDspy({ store, skill: 'Timeline Auditor', executors: exec26, now: clock, signal: stopped.signal }), 'Aborted', 'an aborted optimisation changes nothing');
    const steps = [];
    const report = await pl.optimizeDspy({ store, skill: 'Timeline Auditor', executors: exec26, now: clock, onProgress: (p) => steps.push(p.phase) });
    eq(steps, ['optimizing', 'optimized'], 'progress');
    // The passed examples of the module and of its fallback: the three fallback runs and the
    // one execution above.
    eq(report.optimized.map((o) => [o.artifact, o.examples, o.executor_version]), [['DSPy Auditor', 4, 'dspy-2.6']], 'optimised from the traces');
    const stored = (await store.getArtifacts((await store.getByName('Timeline Auditor')).id, ['dspy_module']))[0];
    eq(JSON.parse(stored.state_blob).from, 'chain_of_thought', 'the new state blob is stored');
    eq([stored.metadata.fallback_artifact, stored.metadata.optimized], ['Audit Prompt', { executor_version: 'dspy-2.6', optimized_at: NOW, examples: 4 }], 'stamped, metadata kept');
    eq(await pl.staleDspy({ store, executors: exec26 }), [], 'current under the same version');
    eq((await pl.staleDspy({ store, executors: { dspy: dspy('dspy-3.0') } })).map((x) => [x.reason, x.optimized_with]), [['version-changed', 'dspy-2.6']], 'a version bump marks it stale');
    await rejects(pl.optimizeDspy({ store, skill: 'Timeline Auditor', executors: { dspy: async () => 1 } }), 'NoExecutor', 'optimise needs the optimize mode');
    await rejects(pl.optimizeDspy({ store, skill: 'Timeline Auditor', executors: { dspy: { ...dspy('v'), optimize: async () => { throw new Error('no GPU'); } } } }), 'AdapterFailed', 'a failed optimise');
    await rejects(pl.staleDspy({ store, executors: { dspy: { ...dspy('v'), manifest: async () => ({ templates: [] }) } } }), 'AdapterFailed', 'a manifest without a version');
    await rejects(pl.runArtifact({ ...opts, artifact: 'DSPy Auditor', executors: { dspy: 5 } }), 'InvalidOptions', 'a bad executor');
    eq(JSON.parse(stored.state_blob).demos.length, 4, 'the blob kept the examples');
  });

  await check('assertions: a hard failure stops the skill and is traced; soft ones warn', async (store) => {
    await store.create(fx.packages['full-contract']);
    const opts = { store, skill: 'Timeline Auditor', parameters: { entity_name: 'Mara' }, sessionId: 's2', now: clock };
    const notJson = adapter({ artifact: 'Looks fine to me.', assertion: 'yes' }).model;
    const e = await rejects(pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: notJson }), 'AssertionFailed', 'structural');
    assert(e.details.assertion.type === 'structural' && e.details.trace.assertions_passed < e.details.trace.assertions_run, 'details');
    const semanticNo = adapter({ artifact: '{"issues": [], "note": "..........................."}', assertion: 'No.' }).model;
    await rejects(pl.runArtifact({ ...opts, artifact: 'Audit Prompt', adapter: semanticNo }), 'AssertionFailed', 'semantic');
    const rows = await store.traces({ sessionId: 's2' });
    assert(rows.length === 2 && rows.every((r) => r.artifact_kind === 'prompt_template'), 'failures are traced');
    // runSkill stops at the hard failure with the results so far.
    const s = await rejects(pl.runSkill({ ...opts, artifacts: ['Overview', 'Audit Prompt', 'Collect Events'], adapter: notJson }), 'AssertionFailed', 'runSkill stops');
    assert(s.details.results.length === 1 && s.details.results[0].route === 'context', 'results so far');
    const ok = await pl.runSkill({ ...opts, artifacts: ['Overview', 'Audit Prompt'], adapter: adapter({ artifact: (r) => JSON.stringify({ issues: [], saw: r.prompt.slice(0, 20), pad: 'x'.repeat(5000) }), assertion: 'yes' }).model });
    assert(ok.results.length === 2 && 'Overview' in ok.outputs && ok.warnings.length === 1, 'runSkill');
  });

  await check('traces are stored per scope and export as JSON lines', async (store) => {
    const other = await openSkills();
    try {
      await store.create(fx.packages['full-contract']);
      const opts = { store, skill: 'Timeline Auditor', parameters: { entity_name: 'Mara' }, now: clock };
      await pl.runArtifact({ ...opts, artifact: 'Overview', sessionId: 'a' });
      await pl.runArtifact({ ...opts, artifact: 'Strict mode notes', sessionId: 'b' });
      const all = await store.exportTraces();
      const lines = all.trimEnd().split('\n');
      assert(lines.length === 2, 'two rows');
      const cols = Object.keys(JSON.parse(lines[0])).slice(0, 18);
      eq(cols, ['id', 'session_id', 'skill_id', 'artifact_id', 'artifact_kind', 'rendered_input', 'raw_output', 'error', 'started_at', 'completed_at', 'duration_ms', 'input_tokens', 'output_tokens', 'model_id', 'estimated_cost', 'assertions_run', 'assertions_passed', 'created_at'], 'seed columns in order');
      const first = JSON.parse(lines[0]);
      assert(first.created_at === first.completed_at, 'created_at defaults to completed_at');
      // The DSPy dataset: one example per execution that rendered output without an error.
      const text = await store.exportTraces({ format: 'dspy' });
      const dspy = text === '' ? [] : text.trimEnd().split('\n').map((l) => JSON.parse(l));
      const ok = lines.map((l) => JSON.parse(l)).filter((r) => typeof r.raw_output === 'string' && typeof r.rendered_input === 'string' && r.error == null);
      assert(ok.length >= 1, 'an execution to learn from');
      eq(dspy.map((e) => e.trace_id), ok.map((r) => r.id), 'one example per execution with output and no error');
      assert(dspy.every((e) => e.dspy_inputs[0] === 'rendered_input' && typeof e.passed === 'boolean' && e.raw_output === ok.find((r) => r.id === e.trace_id).raw_output), 'example shape');
      await rejects(store.exportTraces({ format: 'csv' }), 'InvalidOptions', 'an unknown format');
      assert((await store.traces({ sessionId: 'b' })).length === 1, 'by session');
      assert((await other.exportTraces()) === '', 'the other scope has none');
      const row = await other.recordTrace({ session_id: 'x', skill_id: 'k', artifact_id: 'a', artifact_kind: 'description', started_at: NOW });
      assert(row.id.startsWith('trace-') && row.assertions_run === 0, 'recordTrace');
      await rejects(other.recordTrace({ skill_id: 'k' }), 'InvalidRequest', 'a malformed trace');
    } finally {
      other.close();
    }
  });

  await check('trace pages follow their cursors: every row once, in start order, filtered', async (store) => {
    const at = (i) => `2026-11-22T10:00:${String(i).padStart(2, '0')}.000Z`;
    for (let i = 0; i < 25; i++) {
      for (const session_id of ['s1', 's2']) {
        await store.recordTrace({ session_id, skill_id: i % 3 === 0 ? 'k3' : 'k', artifact_id: 'a', artifact_kind: 'prompt_template', rendered_input: `in ${i}`, raw_output: 'out', started_at: at(i), completed_at: at(i) });
      }
    }
    const first = await store.tracePage({ sessionId: 's1', pageSize: 10 });
    eq(first.items.map((r) => r.rendered_input), Array.from({ length: 10 }, (_, i) => `in ${i}`), 'the first page, in start order');
    assert(typeof first.next === 'string', 'a cursor to the next page');
    const rest = [];
    for await (const p of store.tracePages({ sessionId: 's1', pageSize: 10 })) rest.push(p.items.length);
    eq(rest, [10, 10, 5], 'pages of ten');
    const all = [];
    let after = null;
    do {
      const p = await store.tracePage({ sessionId: 's1', pageSize: 7, after });
      all.push(...p.items);
      after = p.next;
    } while (after !== null);
    eq(all, await store.traces({ sessionId: 's1' }), 'the pages are the traces');
    eq((await store.tracePage({ sessionId: 's1', pageSize: 25 })).next, null, 'a page that ends the range says so');
    // Every session; a filter leaves pages short, the cursors still cover the range.
    const k3 = [];
    for await (const p of store.tracePages({ skillId: 'k3', pageSize: 7 })) k3.push(...p.items);
    eq(k3, await store.traces({ skillId: 'k3' }), 'filtered pages are the filtered traces');
    eq(await store.tracePage({ sessionId: 'nobody' }), { items: [], next: null }, 'an empty session');
    await rejects(store.tracePage({ pageSize: 0 }), 'InvalidOptions', 'a page of nothing');
    await rejects(store.tracePage({ pageSize: 10001 }), 'InvalidOptions', 'a page past the limit');
    await rejects(store.tracePage({ session_id: 's1' }), 'InvalidOptions', 'the old spelling');
    const ac = new AbortController();
    const pages = store.tracePages({ pageSize: 5, signal: ac.signal });
    await pages.next();
    ac.abort();
    await rejects(pages.next(), 'Aborted', 'an abort stops before the next read');
  });

  await check('replay: a stored invocation recomposes byte-identically, or names what changed', async (store) => {
    await store.create(fx.packages['release-notes']);
    const r = req('release-notes-memory-marks');
    const record = pl.compose(r).invocation_record;
    eq(record.memory_refs.map((m) => m.id), ['mem-1', 'mem-3'], 'memory marks: rendered items only');
    const memory = r.memory_context;
    const same = await pl.verifyInvocation(record, { store, memory });
    eq([same.identical, same.changes, same.recomposed_hash], [true, [], record.prompt_hash], 'identical');
    let asked = null;
    const viaFn = await pl.verifyInvocation(record, { store, memory: async (ids) => { asked = ids; return memory; } });
    eq([viaFn.identical, asked], [true, ['mem-1', 'mem-3']], 'memory read back by id');
    // The framing template edited in the store, a memory item gone.
    const skill = await store.getByName('Release Notes');
    const framing = skill.artifacts.find((a) => a.name === 'Notes Framing');
    await store.updateArtifact({ ...framing, content: `${framing.content}\nBe brief.` });
    const changed = await pl.verifyInvocation(record, { store, memory: memory.filter((m) => m.id !== 'mem-3') });
    eq([changed.identical, changed.changes.map((c) => [c.kind, c.change, c.name ?? c.id])], [false, [['template', 'modified', 'Notes Framing'], ['memory', 'missing', 'mem-3']]], 'named changes');
    await rejects(pl.verifyInvocation(null, { store }), 'InvalidRequest', 'no record');
    await rejects(pl.verifyInvocation(record, {}), 'InvalidOptions', 'no store');
    let failed;
    try {
      pl.compose(req('release-notes-bad-parameters'));
    } catch (e) {
      failed = e.details.invocation_record;
    }
    await rejects(pl.verifyInvocation(failed, { store }), 'InvalidRequest', 'a failed composition has no replay inputs');
  });

  // The orchestrator decision over a JS catalog (the component's skill-catalog has its own tests).
  await check('the orchestrator decision: activate (with the run order), clarify, research, direct', async (ws) => {
    const acc = await openSkills();
    try {
      await acc.create(fx.packages['consistency-checker']);
      for (const name of ['Alpha Report', 'Beta Report']) {
        await ws.create({ name, description: 'Writes the weekly sales report.', artifacts: [{ kind: 'prompt_template', name: 'main', content: 'Report' }] });
      }
      const cat = new pl.SkillCatalog(ws, acc);
      const exact = await cat.decide('are there any contradictions in chapter 2?');
      eq([exact.action, exact.reason, exact.skills.map((x) => [x.name, x.scope, x.tier])], ['activate', 'exact', [['Consistency Checker', 'account', 'exact']]], 'exact hit');
      // The run order: the dspy_module's fallback template is not a step of its own.
      eq(exact.skills[0].artifacts, ['Overview', 'Cross-Reference Script', 'DSPy Checker'], 'artifacts');
      const two = await cat.decide('weekly sales report');
      eq([two.action, two.reason, two.skills.map((x) => x.name)], ['clarify', 'ambiguous', ['Alpha Report', 'Beta Report']], 'ambiguous');
      assert(two.skills.every((x) => x.coverage === 1 && x.qualifies && x.artifacts === undefined), 'clarify lists candidates, loads nothing');
      const both = await cat.decide('weekly sales report', { policy: { maxSkills: 2 } });
      eq([both.action, both.skills.map((x) => x.artifacts)], ['activate', [['main'], ['main']]], 'maxSkills 2');
      const weak = await cat.decide('forecast sales for the next quarter');
      eq([weak.action, weak.reason], ['research', 'weak-match'], 'weak');
      eq(weak.terms, ['forecast', 'sale', 'next', 'quarter'], 'terms');
      assert(weak.scores.every((x) => x.coverage === 0.25 && !x.qualifies), 'coverage');
      eq([(await cat.decide('hello there')).action, (await cat.decide('')).reason], ['direct', 'no-terms'], 'direct');
      eq((await cat.decide('zebra')).reason, 'no-match', 'nothing matched');
      // The pure function gives the same decision from the same recommendations.
      const recs = await cat.match('weekly sales report');
      eq(pl.decide('weekly sales report', recs), two, 'decide() = catalog.decide()');
      const ix = await cat.index();
      eq(ix.decide('weekly sales report', { policy: { margin: 0 } }).action, 'clarify', 'index.decide: equal scores still contend at margin 0');
      await rejects(cat.decide('x', { policy: { activate: 2 } }), 'InvalidOptions', 'policy range');
      const e = throws(() => pl.decide('x', recs, { maxSkill: 2 }), 'InvalidOptions', 'unknown key');
      eq(e.details.path, 'maxSkill', 'path');
      const old = throws(() => pl.decide('x', recs, { max_skills: 2 }), 'InvalidOptions', 'the old spelling');
      eq([old.details.path, old.details.use], ['max_skills', 'maxSkills'], 'named');
      throws(() => pl.decide('x', [1]), 'InvalidRequest', 'malformed recommendation');
      throws(() => pl.decide('x', 'recs'), 'InvalidRequest', 'not an array');
    } finally {
      acc.close();
    }
  });

  return results;
}
