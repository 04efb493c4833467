// Sessions, lanes and the approval pipeline: the same checks in Node (memory, a host KV
// object), workerd (memory, its KV namespace) and headless Chromium (IndexedDB), through
// `promptloom/composer`, and on the component in jco (through its `session` resource).
// `open()` opens a fresh skill store; `specs` holds the specs of tests/arbiter/specs by name.
import { assert, eq, checker, rejects } from './checks.mjs';

const TOOLS = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write', 'search'];

export async function sessionConformance(pl, specs, open) {
  const results = [];
  const check = checker(open, results);
  // tool-builder and skill-builder: the package's system skills, as a seeded store gives them.
  const SYSTEM = pl.seedSkillSpecs(await pl.systemSkills());
  const registry = pl.buildSkillRegistry([...SYSTEM, specs['build-feature']], { tools: TOOLS });
  const tool = (name, args) => ({ type: 'tool', name, ...(args ? { arguments: args } : {}) });
  const go = (event) => ({ type: 'transition', event });
  /** A clock the test moves. */
  const clock = (t = 1000) => {
    const c = () => t;
    c.set = (x) => (t = x);
    return c;
  };

  await check('a crashed session resumes every lane at its last accepted step', async (store) => {
    const now = clock();
    const s = await pl.openSession({ store, registry, id: 'chat-1', now });
    eq(s.hierarchy().status, 'active', 'started');
    await s.startSkill('core', 'build_feature', { feature: 'search' });
    const o = await s.propose('core', tool('choir.memory.query'));
    assert(o.accepted, 'accepted');
    eq(s.lane('core'), 'waiting_tool', 'the idle lane took request, then tool_call');
    eq(await s.laneEvent('core', 'tool_result'), 'reasoning', 'results went back');
    await s.propose('core', go('complete'));
    const refused = await s.propose('core', tool('choir.fs.write'));
    assert(!refused.accepted && refused.error.code === 'tool-not-allowed', 'fs.write refused while planning');
    now.set(2000);
    await s.heartbeat();
    const before = s.run('core');
    const logged = s.log().length;
    s.free(); // the host dies: no stop

    now.set(9000);
    const r = await pl.openSession({ store, registry, id: 'chat-1', now });
    const h = r.hierarchy();
    eq([h.status, h.recoveries, h.last_seen], ['active', 1, 9000], 'recovered');
    const log = r.log();
    eq(log.length, logged + 1, 'one event appended');
    eq([log[logged].event, log[logged].last_seen], ['recovered', 2000], 'the recovery names the last event seen');
    const after = r.run('core');
    eq([after.state, after.step, after.retries, after.log.length], [before.state, before.step, before.retries, before.log.length], 'the run resumed');
    eq(h.lanes.map((l) => [l.lane, l.state, l.skill.state, l.skill.step.n]), [['core', 'reasoning', 'plan', 3]], 'hierarchy is live');
    const next = await r.propose('core', go('complete'));
    eq(next.state, 'modify', 'it goes on');
    const again = await pl.openSession({ store, registry, id: 'chat-1', now });
    eq(again.run('core').state, 'modify', 'the step after recovery was stored too');
    eq(again.hierarchy().recoveries, 2, 'a second recovery');
    again.free();
    r.free();
  });

  await check('stop, then open again: lanes idle, runs kept, nothing stale', async (store) => {
    const now = clock(10);
    const s = await pl.openSession({ store, registry, id: 'chat-2', now });
    await s.startSkill('core', 'build_feature', { feature: 'x' });
    await s.propose('core', tool('choir.memory.query'));
    await s.stop();
    eq(s.lane('core'), 'stopped', 'stopped lane');
    const e = await rejects(s.heartbeat(), 'InvalidRequest', 'a stopped session');
    eq(e.details.reason, 'session-stopped', 'reason');
    assert(!s.stale(1), 'a stopped session is not stale');
    s.free();
    now.set(20);
    const r = await pl.openSession({ store, registry, id: 'chat-2', now });
    eq([r.hierarchy().recoveries, r.hierarchy().started_at, r.lane('core'), r.run('core').step], [0, 20, 'idle', 1], 'started again');
    now.set(20 + 5001);
    assert(r.stale(5000), 'silent past the timeout');
    assert(!r.stale(6000), 'not past a longer one');
    r.free();
  });

  await check('lane events follow the lane machine; bad names and times are coded errors', async (store) => {
    const s = await pl.openSession({ store, registry, id: 'chat-3', now: clock() });
    const e = await rejects(s.laneEvent('edge', 'tool_result'), 'InvalidRequest', 'idle lane');
    eq([e.details.reason, e.details.state, e.details.events], ['invalid-lane-event', 'idle', ['request']], 'what it takes');
    for (const [ev, to] of [['request', 'reasoning'], ['tool_call', 'waiting_tool'], ['fail', 'error'], ['request', 'reasoning'], ['response', 'idle']]) {
      eq(await s.laneEvent('edge', ev), to, ev);
    }
    await rejects(s.laneEvent('a/b', 'request'), 'InvalidRequest', 'a lane name with /');
    await rejects(pl.openSession({ store, registry, id: 'x/y' }), 'InvalidRequest', 'a session id with /');
    if (!pl.typed) {
      // What a typed interface (WIT) refuses before the call.
      await rejects(s.laneEvent(7, 'request'), 'InvalidRequest', 'a lane that is not a string');
      await rejects(pl.openSession({ store, registry: {}, id: 'x' }), 'InvalidOptions', 'not a registry');
      await rejects(pl.openSession({ store: {}, registry, id: 'x' }), 'InvalidOptions', 'not a store');
      await rejects(pl.openSession({ store, registry, id: 'chat-3c', now: () => -1 }), 'InvalidOptions', 'a negative time');
    }
    await s.startSkill('core', 'build_feature', { feature: 'x' });
    await s.laneEvent('core', 'request');
    await s.laneEvent('core', 'cancel');
    eq(s.run('core').status, 'cancelled', 'cancel cancels the lane\'s skill');
    const m = pl.sessionMachines();
    assert(pl.toMermaid(m.lane, 'idle').includes('waiting_tool --> reasoning : tool_result'), 'the lane machine draws');
    assert(pl.toMermaid(m.session).includes('active --> stopped : stopped'), 'the session machine draws');
    s.free();
  });

  await check('calls made at once are applied and stored one at a time, in call order', async (store) => {
    const s = await pl.openSession({ store, registry, id: 'chat-5', now: clock() });
    await s.startSkill('core', 'build_feature', { feature: 'x' });
    const outs = await Promise.all([s.propose('core', tool('choir.memory.query')), s.laneEvent('core', 'tool_result'), s.propose('core', go('complete')), s.heartbeat()]);
    eq([outs[0].accepted, outs[1], outs[2].state], [true, 'reasoning', 'plan'], 'in order');
    const again = await pl.openSession({ store, registry, id: 'chat-5', now: clock() });
    eq(again.log().slice(0, -1).map((e) => e.seq), s.log().map((e) => e.seq), 'every event stored');
    eq(again.run('core').state, 'plan', 'replayed');
    s.free();
    again.free();
  });

  await check('two writers of one session: the second write is a conflict and rolls back', async (store) => {
    const a = await pl.openSession({ store, registry, id: 'chat-4', now: clock(1) });
    const b = await pl.openSession({ store, registry, id: 'chat-4', now: clock(2) });
    const before = a.log().length;
    const e = await rejects(a.heartbeat(), 'StoreFailed', 'the losing writer');
    assert(e.details.conflict === true, 'a conflict');
    eq(a.log().length, before, 'the session went back to its stored log');
    const c = await pl.openSession({ store, registry, id: 'chat-4', now: clock(3) });
    eq(c.log().map((x) => x.event), ['started', 'recovered', 'recovered'], 'only the winner landed');
    a.free();
    b.free();
    c.free();
  });

  /** Runs `builder` in `lane` to its propose state and proposes `args` with `tool`. */
  const propose = async (s, lane, builder, name, args) => {
    await s.startSkill(lane, builder, {});
    for (let i = 0; i < 3; i++) await s.propose(lane, go('complete'));
    return s.propose(lane, tool(name, args));
  };
  const notes = (tools) => ({
    name: 'notes', description: 'Take notes.', initial_state: 'write',
    states: { write: { objective: 'Write.', allowed_tools: tools, transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } },
  });

  await check('proposals are stored pending, approved into a new registry or rejected, each decision once and logged', async (store) => {
    const now = clock(100);
    const s = await pl.openSession({ store, registry, id: 'build-1', now });
    const t = await propose(s, 'a', 'tool-builder', 'choir.propose.tool', { name: 'http.get', description: 'GET a URL', input_schema: { type: 'object' } });
    assert(t.accepted && t.proposal_id === 'build-1/000000000006', `the record's id is its log event's key: ${t.proposal_id}`);
    // The spec needs `http.get`, which the session's registry does not have yet.
    const early = await propose(s, 'b', 'skill-builder', 'choir.propose.skill', { spec: notes(['http.get']) });
    assert(!early.accepted && early.error.code === 'invalid-skill-spec' && early.proposal_id === undefined, 'refused before the tool exists');
    now.set(200);
    const k = await propose(s, 'c', 'skill-builder', 'choir.propose.skill', { spec: notes(['choir.fs.write']) });
    const pending = await pl.listProposals(store, { status: 'pending' });
    eq(pending.map((p) => [p.id, p.kind, p.name, p.session, p.lane, p.skill, p.proposed_at]), [
      [t.proposal_id, 'tool', 'http.get', 'build-1', 'a', 'tool-builder', 100],
      [k.proposal_id, 'skill', 'notes', 'build-1', 'c', 'skill-builder', 200],
    ], 'pending, oldest first');
    await rejects(pl.listProposals(store, { status: 'done' }), 'InvalidOptions', 'an unknown status');

    now.set(300);
    const { proposal, registry: withTool } = await pl.approveProposal(store, t.proposal_id, { registry, by: 'ana', now });
    eq([proposal.status, proposal.decided_by, proposal.decided_at], ['approved', 'ana', 300], 'approved');
    eq(registry.names().includes('notes'), false, 'the old registry is untouched');
    const again = await rejects(pl.rejectProposal(store, t.proposal_id, { by: 'bo', reason: 'late', now }), 'InvalidRequest', 'decided once');
    eq(again.details.reason, 'not-pending', 'reason');
    await rejects(pl.rejectProposal(store, k.proposal_id, { by: 'bo', reason: ' ', now }), 'InvalidOptions', 'a rejection needs a reason');
    await rejects(pl.approveProposal(store, k.proposal_id, { registry, now }), 'InvalidOptions', 'a decision names who made it');
    await rejects(pl.approveProposal(store, 'build-1/999', { registry, by: 'ana', now }), 'NotFound', 'no such proposal');

    // With the tool installed, a new session's skill-builder may propose the spec that uses it.
    const s2 = await pl.openSession({ store, registry: withTool, id: 'build-2', now });
    const u = await propose(s2, 'a', 'skill-builder', 'choir.propose.skill', { spec: notes(['http.get']) });
    assert(u.accepted, `accepted under the new registry: ${JSON.stringify(u.error)}`);
    now.set(400);
    const done = await pl.approveProposal(store, u.proposal_id, { registry: withTool, by: 'ana', now });
    assert(done.registry.names().includes('notes'), 'the skill is installed');
    now.set(500);
    const no = await pl.rejectProposal(store, k.proposal_id, { by: 'bo', reason: 'a second notes skill', now });
    eq([no.proposal.status, no.proposal.reason, no.registry], ['rejected', 'a second notes skill', undefined], 'rejected');

    eq((await pl.approvalLog(store)).map((d) => [d.id, d.decision, d.by, d.at]), [
      [t.proposal_id, 'approved', 'ana', 300],
      [u.proposal_id, 'approved', 'ana', 400],
      [k.proposal_id, 'rejected', 'bo', 500],
    ], 'every decision, in order');
    eq((await pl.listProposals(store, { status: 'pending' })).length, 0, 'nothing pending');
    // A host starting up installs every approval again, in decision order.
    const rebuilt = await pl.installApproved(store, registry);
    assert(rebuilt.names().includes('notes') && rebuilt.spec('notes').states.write.allowed_tools[0] === 'http.get', 'rebuilt');
    s.free();
    s2.free();
  });

  await check('an approval validates the payload again: nothing written when it fails', async (store) => {
    const s = await pl.openSession({ store, registry, id: 'build-3', now: clock() });
    const bad = await propose(s, 'a', 'tool-builder', 'choir.propose.tool', { name: 'has space' });
    const e = await rejects(pl.approveProposal(store, bad.proposal_id, { registry, by: 'ana' }), 'InvalidSkill', 'a bad tool name');
    eq(e.details.problems[0].code, 'invalid-tool-name', 'named');
    const k = await propose(s, 'c', 'skill-builder', 'choir.propose.skill', { spec: notes(['choir.fs.write']) });
    const narrow = pl.buildSkillRegistry(SYSTEM, { tools: TOOLS.slice(0, 2) });
    await rejects(pl.approveProposal(store, k.proposal_id, { registry: narrow, by: 'ana' }), 'InvalidSkill', 'no longer valid');
    eq((await pl.listProposals(store, { status: 'pending' })).length, 2, 'both still pending');
    eq((await pl.approvalLog(store)).length, 0, 'nothing logged');
    s.free();
  });

  return results;
}
