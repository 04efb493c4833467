// The skill state machine suite: the same checks in Node, workerd and headless Chromium
// through `promptloom/composer`. `specs` holds the specs of tests/arbiter/specs by name.
import { assert, eq, checker, throws } from './checks.mjs';

const TOOLS = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write', 'search'];

export async function arbiterConformance(pl, specs, staged) {
  const results = [];
  const check = checker(async () => ({ close() {} }), results);
  const tool = (name) => ({ type: 'tool', name });
  const go = (event) => ({ type: 'transition', event });
  // tool-builder and skill-builder: the package's system skills (data, not built in).
  const SYSTEM = pl.seedSkillSpecs(await pl.systemSkills());

  await check('validation lists every problem with its rule', async () => {
    const rules = {
      'broken-missing-initial': 'missing-initial-state',
      'broken-unknown-target': 'unknown-state',
      'broken-no-terminal': 'no-terminal',
      'broken-terminal-with-transitions': 'terminal-with-transitions',
      'broken-unreachable': 'unreachable-state',
      'broken-trap': 'no-path-to-terminal',
      'broken-unknown-tool': 'unknown-tool',
      'broken-duplicate-event': 'duplicate-event',
    };
    for (const [name, code] of Object.entries(rules)) {
      const r = pl.validateSkillSpec(specs[name], { tools: TOOLS });
      assert(!r.ok && r.problems.length === 1 && r.problems[0].code === code, `${name}: ${JSON.stringify(r.problems)}`);
    }
    assert(pl.validateSkillSpec(specs['build-feature'], { tools: TOOLS }).ok, 'the seed example is valid');
    assert(pl.validateSkillSpec(specs['broken-everything'], { tools: TOOLS }).problems.length >= 8, 'every problem at once');
    assert(pl.validateSkillSpec(specs['broken-unknown-tool']).ok, 'without a tool registry the tools are not checked');
  });

  await check('spec files load in bulk: in order, or every problem of every file and nothing loaded', async () => {
    const files = { 'skills/z.json': JSON.stringify(specs['build-feature']), 'skills/a.json': JSON.stringify([specs['broken-trap'], specs['broken-unknown-tool']]), 'skills/m.json': 'not json', 'skills/n.json': JSON.stringify(specs['build-feature']) };
    const e = throws(() => pl.loadSkillSpecs(files, { tools: TOOLS }), 'InvalidSkill', 'bad files');
    eq(e.details.problems.map((p) => [p.file, p.path, p.code]), [
      ['skills/a.json', '[0].states.pit', 'no-path-to-terminal'],
      ['skills/a.json', '[1].states.a.allowed_tools[1]', 'unknown-tool'],
      ['skills/m.json', '$', 'invalid-json'],
      ['skills/n.json', 'name', 'duplicate-name'],
    ], 'every problem');
    const ok = pl.loadSkillSpecs([{ path: 'skills/z.json', text: JSON.stringify(specs['build-feature']) }, { path: 'skills/a.json', text: JSON.stringify(specs['broken-unknown-tool']) }]);
    eq(ok.specs.map((x) => x.name), ['build_feature', 'tooly'], 'in order, tools unchecked without a registry');
    eq(pl.buildSkillRegistry(ok.specs.slice(0, 1), { tools: TOOLS }).names(), ['build_feature'], 'ready for a registry');
    throws(() => pl.loadSkillSpecs('skills/*.json'), 'InvalidRequest', 'not files');
    throws(() => pl.loadSkillSpecs([{ path: 'a.json' }]), 'InvalidRequest', 'a file without text');
  });

  await check('registries: fail fast, agent overrides by name, system skills as data', async () => {
    const e = throws(() => pl.buildSkillRegistry([specs['build-feature'], specs['broken-trap']], { tools: TOOLS }), 'InvalidSkill', 'invalid set');
    assert(e.details.specs.length === 1 && e.details.specs[0].name === 'trap', 'names the failing spec');
    const mine = { ...specs['build-feature'], description: 'the agent copy' };
    const r = pl.buildSkillRegistry([...SYSTEM, specs['build-feature']], { tools: TOOLS, overrides: [mine] });
    eq(r.names(), ['build_feature', 'skill-builder', 'tool-builder'], 'names');
    assert(r.spec('build_feature').description === 'the agent copy', 'the override wins');
    const summary = r.summary().trimEnd().split('\n');
    eq(summary.map((l) => l.split(':')[0]), ['Skills you can start', '- build_feature', '- skill-builder', '- tool-builder'], 'summary lines');
    assert(summary[1] === '- build_feature: the agent copy', 'the summary shows the override');
    eq(SYSTEM.map((s) => s.name), ['skill-builder', 'tool-builder'], 'the system skills\' specs, by name');
    const e2 = throws(() => pl.buildSkillRegistry([], { tools: TOOLS, builtins: true }), 'InvalidOptions', 'builtins is gone');
    assert(e2.message.includes('seedSkillSpecs(await systemSkills())'), 'says where the specs are now');
  });

  await check('the arbiter: allowlists, transitions, finish, spawn, retries, max_steps, cancel, one skill per lane', async () => {
    const reg = pl.buildSkillRegistry([...SYSTEM, specs['build-feature']], { tools: TOOLS });
    const a = new pl.Arbiter(reg);
    throws(() => a.start('core', 'build_feature', {}), 'ParameterMismatch', 'input schema');
    a.start('core', 'build_feature', { feature: 'x' });
    throws(() => a.start('core', 'tool-builder', {}), 'InvalidRequest', 'lane busy');
    eq(a.propose('core', tool('choir.memory.query')), { accepted: true, status: 'running', state: 'understand', step: 1 }, 'allowed tool');
    const no = a.propose('core', tool('choir.fs.write'));
    assert(!no.accepted && no.error.code === 'tool-not-allowed', 'forbidden tool');
    eq([no.error.allowed_tools, no.error.transitions, no.error.retries_left], [['choir.memory.query'], ['complete'], 2], 'what would be valid');
    eq(a.propose('core', go('complete')), { accepted: true, status: 'running', state: 'plan', step: 3 }, 'transition');
    assert(a.propose('core', go('deploy')).error.code === 'invalid-transition', 'no such transition');
    assert(a.propose('core', { type: 'finish' }).error.code === 'not-terminal', 'finish too early');
    assert(a.propose('core', { type: 'spawn', skill: 'tool-builder' }).error.code === 'no-spawn', 'no spawning');
    const r = a.run('core');
    assert(r.status === 'failed' && r.reason === 'retry-budget-exhausted', 'past the retry budget, no error transition: failed');
    throws(() => a.propose('core', go('complete')), 'InvalidRequest', 'a run that ended');
    // The error transition, then finishing with the output checked.
    a.start('core', 'build_feature', { feature: 'x' });
    for (const e of ['complete', 'complete']) a.propose('core', go(e));
    for (let i = 0; i < 3; i++) a.propose('core', tool('search'));
    assert(a.run('core').state === 'plan', 'the error transition was taken');
    for (const e of ['complete', 'complete', 'complete']) a.propose('core', go(e));
    assert(a.propose('core', { type: 'finish', output: {} }).error.code === 'output-mismatch', 'output schema');
    assert(a.propose('core', { type: 'finish', output: { summary: 'ok' } }).status === 'finished', 'finished');
    // max_steps.
    a.start('core', 'build_feature', { feature: 'x' });
    let o;
    for (let i = 0; i < 25 && (!o || o.status === 'running'); i++) o = a.propose('core', go(i % 2 ? 'revise' : 'complete'));
    assert(o.status === 'terminated' && o.step === 20 && a.run('core').reason === 'max-steps', 'max_steps');
    // Cancel.
    a.start('core', 'build_feature', { feature: 'x' });
    assert(a.cancel('core').status === 'cancelled', 'interruptible');
    const stiff = pl.buildSkillRegistry([{ ...specs['build-feature'], name: 'stiff', interruptible: false }], { tools: TOOLS });
    const b = new pl.Arbiter(stiff);
    b.start('edge', 'stiff', { feature: 'x' });
    const c = throws(() => b.cancel('edge'), 'InvalidRequest', 'not interruptible');
    assert(c.details.reason === 'not-interruptible', 'reason');
  });

  await check('proposal records from the built-ins; the log replays exactly; the step context holds one objective', async () => {
    const reg = pl.buildSkillRegistry([...SYSTEM, specs['build-feature']], { tools: TOOLS });
    const a = new pl.Arbiter(reg);
    a.start('core', 'skill-builder', { request: 'a checker' });
    for (const e of ['complete', 'complete', 'complete']) a.propose('core', go(e));
    const bad = a.propose('core', { type: 'tool', name: 'choir.propose.skill', arguments: { spec: specs['broken-trap'] } });
    assert(bad.error.code === 'invalid-skill-spec' && bad.error.problems[0].code === 'no-path-to-terminal', 'the validator guards the proposal');
    const good = a.propose('core', { type: 'tool', name: 'choir.propose.skill', arguments: { spec: specs['build-feature'] } });
    assert(good.proposal_record.kind === 'skill' && good.proposal_record.status === 'pending', 'a proposal record');
    const log = a.log('core');
    assert(log[0].kind === 'started' && log.length === 6, `log: ${log.length}`);
    const replayed = a.replay(log);
    eq(replayed, a.run('core'), 'replay');
    a.start('edge', 'build_feature', { feature: 'x' });
    const ctx = a.stepContext('edge', { memory: ['m1'] });
    const text = JSON.stringify(ctx);
    assert(ctx.objective === 'Clarify and restate the requirement.' && !text.includes('Produce an implementation plan'), 'one objective only');
    eq(a.hierarchy('s1').lanes.map((l) => [l.lane, l.skill.name]), [['core', 'skill-builder'], ['edge', 'build_feature']], 'hierarchy');
  });

  await check('quiet transitions name the state they reach: revisits, a lane restarted with another skill, refusals', async () => {
    const reg = pl.buildSkillRegistry([...SYSTEM, specs['build-feature']], { tools: TOOLS });
    const a = new pl.Arbiter(reg);
    a.start('l', 'build_feature', { feature: 'x' });
    const seen = [];
    for (const e of ['complete', 'revise', 'complete', 'complete', 'error', 'complete', 'complete', 'fail']) {
      const o = a.propose('l', go(e));
      assert(o.accepted && o.status === 'running', `${e}: ${JSON.stringify(o)}`);
      eq(o.state, a.run('l').state, `the answer to ${e} names the run's state`);
      seen.push(`${o.state}@${o.step}`);
    }
    eq(seen, ['plan@1', 'understand@2', 'plan@3', 'modify@4', 'plan@5', 'modify@6', 'validate@7', 'modify@8'], 'states and steps');
    for (const e of ['complete', 'complete']) a.propose('l', go(e));
    eq(a.propose('l', { type: 'finish', output: { summary: 'done' } }).status, 'finished', 'the run ends');
    // The same lane, another skill: its states are other names at the same indexes.
    a.start('l', 'skill-builder', { request: 'a checker' });
    const o = a.propose('l', go('complete'));
    eq([o.state, o.step], [a.run('l').state, 1], 'the new skill\'s state');
    assert(!seen.some((s) => s.startsWith(`${o.state}@`)), `not a name of the old skill: ${o.state}`);
    const bad = a.propose('l', go('no-such-event'));
    assert(!bad.accepted && bad.error.code === 'invalid-transition' && bad.state === o.state, JSON.stringify(bad));
    // The log (refusal included) replays to the same place.
    const r = a.replay(a.log('l'));
    eq([r.state, r.step], [o.state, 2], 'replayed');
    // Two lanes stepped in turn, and a failed step between steps of one lane: each step
    // lands in the lane it names.
    a.start('m', 'build_feature', { feature: 'y' });
    const before = a.run('l').step;
    eq(a.propose('m', go('complete')).state, 'plan', 'm moves');
    eq(a.propose('m', tool('choir.memory.query')).step, 2, 'm again (a quiet tool call)');
    throws(() => a.propose('nobody', go('complete')), 'NotFound', 'a lane with no run');
    eq(a.propose('m', go('complete')).state, 'modify', 'm after the failed step');
    a.propose('l', tool('no-such-tool'));
    eq([a.run('l').step, a.run('m').step], [before + 1, 3], 'each lane counted its own steps');
    throws(() => a.propose('nobody', tool('search')), 'NotFound', 'a tool in a lane with no run');
    eq(a.propose('m', go('complete')).state, 'validate', 'm after another failed step');
  });

  await check('Mermaid: the diagram and the current state', async () => {
    const m = pl.toMermaid(specs['build-feature'], { state: 'plan' });
    assert(m.startsWith('stateDiagram-v2\n  [*] --> understand\n') && m.includes('  plan --> understand : revise\n') && m.includes('  done --> [*]\n') && m.endsWith('  class plan current\n'), m);
  });

  await check('a composed staged subgraph runs on the arbiter, within the composition\'s tools', async () => {
    const c = pl.compose(staged);
    const spec = pl.compositionSpec(c);
    eq(Object.keys(spec.states).sort(), ['done', 'stage-1', 'stage-2', 'stage-3'], 'the stages and done');
    eq(spec.initial_state, 'stage-1', 'starts at the first stage');
    const tools = c.subgraph.tool_availability.map((t) => t.name);
    const a = new pl.Arbiter(pl.buildSkillRegistry([spec], { tools }));
    a.start('core', spec.name, null);
    assert(a.propose('core', { type: 'tool', name: 'workspace_search' }).accepted, 'a stage tool');
    assert(!a.propose('core', { type: 'tool', name: 'submit' }).accepted, 'a later stage\'s tool');
    assert(!a.propose('core', { type: 'tool', name: 'send_email' }).accepted, 'outside the composition');
    for (let i = 0; i < 3; i++) a.propose('core', { type: 'transition', event: 'complete' });
    assert(a.run('core').state === 'done', 'done');
  });

  return results;
}
