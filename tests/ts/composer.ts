// Type-level tests of `promptloom/composer` (compiled with `tsc --noEmit --strict`).
import {
  compose, nestedRequest, lowerComposition, lowerCompositionAsync, authoringTools, runArtifact, runSkill, openSkillStore, openMessageStore, PromptloomError,
  type Composition, type ComposeRequest, type ModelAdapter, type RunResult, type McpResult, type InvocationRecord, type TraceRow, type Lowered,
} from 'promptloom/composer';

const request: ComposeRequest = {
  skill_package: { name: 'Notes', description: 'Writes notes', metadata: { framing: 'Write notes.' } },
  user_request: 'notes please',
  thread_id: 't1',
  available_tools: ['search', { name: 'get_pr', description: 'Read a PR', inputSchema: { type: 'object' } }],
  caller_capabilities: ['search', 'get_*'],
  parameters: { product: 'Acme' },
};
// @ts-expect-error: thread_id is required
const noThread: ComposeRequest = { skill_package: request.skill_package };

const model: ModelAdapter = async (r) => (r.purpose === 'shape' ? '{"kind":"loop"}' : { text: 'ok', usage: { input_tokens: 1, output_tokens: 1 } });
// With an adapter, always a Promise; without one, the composition itself.
const c: Promise<Composition> = compose(request, { adapter: model });
// An Adapter from createAdapter() plugs in too, with the model id it lowers with.
const viaAdapter: Promise<Composition> = compose(request, { adapter: createAdapter({ provider: 'anthropic' }), model: 'claude-sonnet-4-5' });
// @ts-expect-error: `model` is a model id; what calls a model is `adapter`
compose(request, { model });
void viaAdapter;
const now: Composition = compose(request);
void now;
async function use(): Promise<void> {
  const composition: Composition = await c;
  const tools: string[] = composition.subgraph.tool_availability.map((t) => t.name);
  const record: InvocationRecord = composition.invocation_record;
  const messages = await openMessageStore();
  await messages.recordInvocation(record);
  const lowered: Lowered = await lowerCompositionAsync(composition, { provider: 'anthropic', resolve: async () => null, store: messages });
  // @ts-expect-error: the synchronous form takes no store
  lowerComposition(composition, { provider: 'anthropic', store: messages });
  const synchronous: Lowered = lowerComposition(composition, { provider: 'openai-chat', system: 'House rules.' });
  void synchronous;
  const store = await openSkillStore();
  const authoring = authoringTools(store);
  const result: McpResult = await authoring.call('list_skills', {}, { composition });
  const run: RunResult = await runArtifact({ skill: 'Notes', store, artifact: 'Overview', adapter: model, model: 'claude-sonnet-4-5', sessionId: 's', now: () => Date.now(), pricing: { inputPerMtok: 3, outputPerMtok: 15 }, executors: { code: async ({ code }) => code.length } });
  const reason: string | null = run.fallbackReason;
  void reason;
  const rows: TraceRow[] = await store.traces({ sessionId: 'default' });
  const all = await runSkill({ skill: 'Notes', store, adapter: model });
  const nested: ComposeRequest = nestedRequest(request, { name: 'Sub', description: 'x' }, { toolCatalog: ['search'] });
  // @ts-expect-error: the route is one of four
  const r: RunResult['route'] = 'shell';
  void [tools, lowered, result, run, rows, all, nested, r, noThread];
  try {
    compose(request);
  } catch (e) {
    if (e instanceof PromptloomError && e.code === 'ArtifactBudgetExceeded') void e.details;
  }
}
void use;

import { prepareSkill, PreparedSkill } from 'promptloom/composer';
const prepared: PreparedSkill = prepareSkill(request.skill_package);
const name: string = prepared.name;
const { skill_package: _package, ...invocation } = request;
const again: Promise<Composition> = prepared.compose(invocation, { adapter: model });
const direct: Composition = prepared.compose(invocation);
void direct;
// @ts-expect-error: the package is the prepared one
prepared.compose(request);
void [name, again, _package, new PreparedSkill(request.skill_package)];

import { validateSkillSpec, buildSkillRegistry, Arbiter, toMermaid, type SkillSpec, type Outcome } from 'promptloom/composer';
const spec: SkillSpec = { name: 'x', initial_state: 'a', states: { a: { transitions: [{ on: 'go', to: 'done' }] }, done: { terminal: true } } };
const ok: boolean = validateSkillSpec(spec, { tools: [] }).ok;
const arb = new Arbiter(buildSkillRegistry([spec]), { retries: 2 });
arb.start('lane', 'x');
const outcome: Outcome = arb.propose('lane', { type: 'transition', event: 'go' });
// @ts-expect-error: not a proposal type
arb.propose('lane', { type: 'jump', to: 'done' });
const diagram: string = toMermaid(spec, arb.run('lane') ?? undefined);
void [ok, outcome, diagram];
import { runAgent, Conversation, createAdapter, type StepOffer } from 'promptloom/composer';
const offer: StepOffer = arb.stepOffer('lane', [{ name: 'search', description: 'Searches.' }]);
const verdict: Outcome = arb.proposeCall('lane', { name: offer.tools[0]?.name ?? 'skill_transition', input: { event: 'go' } }, offer);
const looped = runAgent({ conversation: new Conversation(), adapter: createAdapter({ provider: 'anthropic' }), arbiter: arb, lane: 'lane', lower: { provider: 'anthropic' } });
void [verdict, looped];

import { ContractRegistry, createGateway, memoryState, type GatewayRecord, type RegisteredContract } from 'promptloom/composer';
const contracts = new ContractRegistry();
const registered: RegisteredContract = contracts.register({
  name: 'lookup', version: '1.0', description: 'Looks up.', owner: 'team',
  input: { key: { type: 'string', required: true } }, output: { value: 'string' },
  policy: { idempotent: true, timeout_ms: 100, budget: { p95_ms: 10, cost_usd: 0 } },
});
const gateway = createGateway({ registry: contracts, handlers: { lookup: async (input: { key: string }, ctx) => ({ value: `${input.key}@${ctx.attempt}` }) }, state: memoryState() });
export const looked: Promise<{ value: string }> = gateway.call<{ value: string }>('lookup', { key: 'k' }, { surface: 'chat', user: 'u', flags: ['x'] });
export const recs: GatewayRecord[] = gateway.records();
export const v: string = registered.version;
const section = contracts.plannerSection('look up a title', { provider: 'anthropic', k: 4, surface: 'chat', user: 'u' });
export const offered: string[] = Object.keys(section.names);
export const rare: number = contracts.review(recs).rarely_called.length;

import { systemSkills, seedSkillSpecs, type SeedReport } from 'promptloom/composer';
import { openSession, sessionMachines, listProposals, approveProposal, rejectProposal, approvalLog, installApproved, type Session, type LaneState, type StoredProposal } from 'promptloom/composer';
async function sessions() {
  const store = await openSkillStore({ seed: true });
  const seeded: SeedReport | null = store.seeded;
  const system: SkillSpec[] = await store.skillSpecs();
  const same: SkillSpec[] = seedSkillSpecs(await systemSkills());
  const registry = buildSkillRegistry([...system, spec], { tools: ['choir.memory.query', 'choir.fs.read'] });
  // @ts-expect-error: `builtins` is gone (the system skills are seed data)
  buildSkillRegistry(same, { builtins: true });
  const session: Session = await openSession({ store, registry, id: 'chat-1', now: () => Date.now() });
  await session.startSkill('core', 'x');
  const state: LaneState = await session.laneEvent('core', 'request');
  // @ts-expect-error: not a lane event
  await session.laneEvent('core', 'jump');
  const o = await session.propose('core', { type: 'transition', event: 'go' });
  const id: string | undefined = o.proposal_id;
  const pending: StoredProposal[] = await listProposals(store, { status: 'pending' });
  if (pending[0]) {
    const { registry: next } = await approveProposal(store, pending[0].id, { registry, by: 'ana' });
    await installApproved(store, next);
  }
  await rejectProposal(store, 'x/000000000001', { by: 'ana', reason: 'no' });
  const decisions = await approvalLog(store);
  const drawn: string = toMermaid(sessionMachines().lane, state);
  void [id, decisions, drawn, session.hierarchy().lanes[0]?.skill?.step.objective];
}
void sessions;

function released(): void {
  using skill = prepareSkill(request.skill_package);
  using contracts = new ContractRegistry();
  using registry = buildSkillRegistry([spec]);
  using arbiter = new Arbiter(registry);
  void [skill.name, contracts, arbiter];
}
void released;
