/**
 * promptloom/composer — everything `promptloom` exports, plus the Skill Composer, artifact
 * dispatch, assertions and traces (built into a second wasm module, so apps that only
 * lower messages never download the template renderer).
 *
 * @module promptloom/composer
 */
export * from './index.js';
// The composition and its parts, generated from the Rust types (tests/documents.rs).
export type { Composition, ComposedPrompt, ExitCondition, Interrupt, InvocationRecord, MemoryMark, PromptSection, RecordError, SkillRef, SubgraphEdge, SubgraphNode, SubgraphShape, UsedArtifact } from './src/documents.js';
import type { Composition, InvocationRecord, UsedArtifact } from './src/documents.js';

/**
 * The orchestrator decision from phase-1 recommendations (what `match()` returned): direct
 * answer, activate skill(s), research, or clarify — deterministic, with the scores.
 */
export function decide(query: string, recommendations: import('./index.js').Recommendation[], policy?: import('./index.js').DecisionPolicy): import('./index.js').Decision;

/** What a model is offered at one step of a running skill. */
export interface StepOffer {
  system: string;
  tools: Array<{ name: string; description?: string; inputSchema: object }>;
  /** Offered name → the tool's own name. */
  names: Record<string, string>;
}
import type { Adapter, LongRunOptions, ArtifactKind, ArtifactRef, LowerOptions, Lowered, ResolveAnswer, ResolveRequest, Skill, SkillPackage, SkillStore, SyncLowerOptions, TraceRow } from './index.js';

/** A tool the invocation may use: a name, or an MCP-style descriptor kept verbatim. */
export type ToolDescriptor = string | { name: string; description?: string; inputSchema?: object; parameters?: object; [key: string]: unknown };

/** The seed's `ComposeRequest`, plus the host's knobs. */
export interface ComposeRequest {
  /** The skill (a package or a stored skill). */
  skill_package: SkillPackage | Skill;
  /** Verbatim user text, or the scheduled task's prompt. */
  user_request?: string;
  /** Default `explicit`. */
  invocation_source?: 'explicit' | 'agent-selected' | 'scheduled';
  /** Only an `authoring` invocation gets the authoring tools: those `available_tools` lists (names suffice) and the caller's capabilities grant. */
  purpose?: 'application' | 'authoring';
  /** Omitted or null: a workspace-scope invocation. */
  channel_id?: string | null;
  /** The parent turn's thread, carried through. */
  thread_id: string;
  /** The parent turn (a message id), recorded on the invocation record. */
  turn_id?: string;
  /** Prefetched memory items. */
  memory_context?: Array<{ id: string; tier?: string; content: string }>;
  /** The caller's tools (the composer intersects them with the capabilities again). */
  available_tools?: ToolDescriptor[];
  /** Tool names, `prefix*` globs, or `*`. */
  caller_capabilities?: string[];
  /** Checked against the skill's parameter schema; schema defaults are filled in. */
  parameters?: Record<string, unknown>;
  /** The model the turn will use: selects artifacts' model variants. */
  model?: string;
  /** Few-shot example budget (default 3). */
  max_examples?: number;
  /** Context budget in estimated tokens (characters / 4). */
  context_budget?: number;
  /** The caller's own tool-call ceiling. */
  max_tool_calls?: number;
  /** Host time stamped on the invocation record (ISO 8601). */
  now?: string;
  /** The model's answer to the shape question (set by compose() itself on that path). */
  delegated_shape?: { kind: 'loop' | 'staged'; tools?: string[]; stages?: Array<{ name: string; description?: string; tools?: string[] }>; expected_tool_calls?: string[] };
  /** Bounds of the framing template's render: fuel (200 000), recursion (64), max_output bytes (1 MiB), max_value bytes (32 MiB). */
  render_limits?: { fuel?: number; recursion?: number; max_output?: number; max_value?: number };
}

/** What a model adapter is asked. */
export interface ModelRequest {
  purpose: 'shape' | 'artifact' | 'assertion';
  prompt: string;
  system?: string;
  /** JSON Schema of the expected answer (shape questions). */
  schema?: object;
  artifact?: UsedArtifact;
  model?: string;
}

/** The host's model adapter as a function: a string back, or the text with usage for traces. */
export type ModelAdapter = (request: ModelRequest) => Promise<string | { text: string; usage?: { input_tokens?: number; output_tokens?: number }; model?: string }>;

/**
 * What calls a model for the composer and the artifact runs: a `ModelAdapter` function, or an
 * `Adapter` from `createAdapter()` (each request is lowered for its provider, with `model`, the
 * model id, and its reply's text answers).
 */
export type AdapterLike = ModelAdapter | Adapter;

/** The options of `compose()` that call a model: `adapter`, and `model`, the id it is lowered with (an `Adapter`). */
export interface ComposeOptions {
  adapter: AdapterLike;
  model?: string;
}

/**
 * The nine steps. Without `adapter`, synchronous (a skill that sets `planner_delegates_shape`
 * then throws `NoModelAdapter`); with `adapter`, always a Promise, and the model is asked for
 * the subgraph shape only by a skill that delegates it.
 * Throws `PromptloomError` with `code` = `MissingRequiredField`, `MalformedTemplate`,
 * `UnknownTool`, `ParameterMismatch`, `ArtifactBudgetExceeded`, `CapabilityNarrowing`,
 * `InvalidRequest`, `InvalidSkill`, `NoModelAdapter` or `AdapterFailed`;
 * `details.invocation_record` holds the record of a failed invocation.
 */
export declare function compose(request: ComposeRequest, options?: { adapter?: undefined; model?: string }): Composition;
export declare function compose(request: ComposeRequest, options: ComposeOptions): Promise<Composition>;

/**
 * A skill package read and validated once, for many compositions. `compose()` takes what the
 * stateless `compose()` takes without `skill_package` and returns the same composition, byte
 * for byte, without sending, reading or validating the package again. The package is copied
 * when prepared: later changes to the object are not seen.
 */
export declare class PreparedSkill {
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  /** Throws as `compose()` would on a package that does not validate (`MalformedTemplate`, `MissingRequiredField`, `InvalidSkill`, `InvalidRequest`). */
  constructor(skillPackage: SkillPackage | Skill);
  /** The skill's name. */
  readonly name: string;
  /** One invocation: synchronous without `model`, always a Promise with it (as `compose()`). A `skill_package` field is `InvalidRequest`. */
  compose(invocation: Omit<ComposeRequest, 'skill_package'> & { skill_package?: never }, options?: { adapter?: undefined; model?: string }): Composition;
  compose(invocation: Omit<ComposeRequest, 'skill_package'> & { skill_package?: never }, options: ComposeOptions): Promise<Composition>;
}

/** `new PreparedSkill(skillPackage)`. */
export declare function prepareSkill(skillPackage: SkillPackage | Skill): PreparedSkill;

/** The request for a sub-skill: same thread, `tool_surface` ∩ the top-level caller's capabilities. */
export declare function nestedRequest(parent: ComposeRequest, subSkill: SkillPackage | Skill, options?: { toolCatalog?: ToolDescriptor[]; userRequest?: string; parameters?: Record<string, unknown> }): ComposeRequest;

/**
 * The composition as a provider request: system = framing, context, examples; user = the
 * request; tools = the availability. The caller's `system` comes first, then the
 * composition's; its `tools` after the composition's. Synchronous, as `lower` is.
 */
export declare function lowerComposition(composition: Composition, options: SyncLowerOptions): Lowered;
/** `lowerComposition`, always as a Promise (an async resolver, a store). */
export declare function lowerCompositionAsync(composition: Composition, options: LowerOptions): Promise<Lowered>;

/** An MCP tool descriptor. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: object;
}

/** An MCP `CallToolResult`. */
export interface McpResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: unknown;
  isError: boolean;
}

export type AuthoringToolName = 'create_skill' | 'update_skill' | 'list_skills' | 'add_artifact';

/** The composer's authoring tools over a skill store (authoring invocations only). */
export declare function authoringTools(store: SkillStore): {
  tools: McpTool[];
  handlers: Record<AuthoringToolName, (args: Record<string, unknown>, context: { composition: Composition }) => Promise<unknown>>;
  call(name: string, args: Record<string, unknown>, context: { composition: Composition }): Promise<McpResult>;
};

/** One assertion's outcome. */
export interface AssertionOutcome {
  index: number;
  type: 'structural' | 'length' | 'pattern' | 'semantic' | string;
  severity: 'hard' | 'soft';
  description: string;
  status: 'passed' | 'failed' | 'pending';
  explanation: string | null;
  question?: string;
}

export interface AssertionReport {
  run: number;
  passed: number;
  hard_failure: number | null;
  pending: Array<{ index: number; question: string }>;
  outcomes: AssertionOutcome[];
}

/** The DSPy executor's execute mode. */
export type DspyExecute = (call: { template_id: string; content: unknown; state_blob: string | null; parameters: Record<string, unknown> }) => Promise<unknown>;

/** What a DSPy executor says about itself. */
export interface DspyManifest {
  /** The executor's version: a state blob stamped by another version is stale. */
  version: string;
  /** The templates it offers (omitted: any); a dspy_module naming another runs its fallback. */
  templates?: Array<{ template_id: string; signature?: string }>;
}

/** The DSPy executor's optimise call. */
export interface DspyOptimizeCall {
  template_id: string | null;
  content: unknown;
  state_blob: string | null;
  /** Passed examples of the module and of its fallback template, from the traces. */
  training_data: Array<{ rendered_input: string; raw_output: string; score: number | null }>;
}

/** The DSPy executor's three modes (the seed's sidecar: execute, optimize, manifest). */
export interface DspyExecutor {
  execute: DspyExecute;
  /** Returns the new state blob (JSON text or an object). */
  optimize?: (call: DspyOptimizeCall) => Promise<unknown>;
  manifest?: () => Promise<DspyManifest> | DspyManifest;
}

/**
 * The host's executors: a sandbox for `code_template`, a DSPy runner for `dspy_module` (a
 * function is its execute mode). A dspy_module runs its fallback template when the DSPy
 * executor is missing, throws, or its manifest does not offer the template.
 */
export interface Executors {
  code?: (call: { code: string; language: string | null; artifact: UsedArtifact; parameters: Record<string, unknown> }) => Promise<unknown>;
  dspy?: DspyExecute | DspyExecutor;
}

export interface RunOptions {
  /** A skill object, or a skill name/id with `store` (then only the artifact that runs is loaded). */
  skill: Skill | string;
  store?: SkillStore;
  parameters?: Record<string, unknown>;
  context?: Record<string, unknown>;
  /** What calls the model (prompt templates, fallbacks, semantic assertions). */
  adapter?: AdapterLike;
  /** The model id: selects model variants, recorded in traces, lowered with for an `Adapter`. */
  model?: string;
  executors?: Executors;
  /**
   * The host's own handler per artifact kind, replacing the built-in one: it gets the
   * rendered input (templates rendered first) and returns the output.
   */
  handlers?: Partial<Record<ArtifactKind, (step: { kind: ArtifactKind; input: string; artifact: UsedArtifact; parameters: Record<string, unknown>; metadata: Record<string, unknown> }) => Promise<unknown> | unknown>>;
  sessionId?: string;
  /** Where traces go (default: `store`; `null`: nowhere). */
  traces?: SkillStore | null;
  /** Dollars per million tokens, for the trace's estimated cost. */
  pricing?: { inputPerMtok: number; outputPerMtok: number };
  /** The clock: epoch milliseconds (trace times and durations). */
  now?: () => number;
  /** The bounds of a template render, as `render_limits` in compose(). */
  renderLimits?: { fuel?: number; recursion?: number; maxOutput?: number; maxValue?: number };
}

export interface RunResult {
  output: string;
  route: 'context' | 'model' | 'code' | 'dspy' | 'handler';
  artifact: UsedArtifact;
  /** The dspy_module a fallback prompt template stood in for. */
  replaced: ArtifactRef | null;
  /** Why the fallback ran (no executor, it failed, or it does not offer the template). */
  fallbackReason: string | null;
  assertions: AssertionReport;
  /** Failed soft assertions. */
  warnings: AssertionOutcome[];
  trace: TraceRow;
}

/** Runs one artifact through its handler (throws `NoExecutor`, `NoModelAdapter`, `NoHandler`, `AssertionFailed`, `AdapterFailed`). */
export declare function runArtifact(options: RunOptions & { artifact: string }): Promise<RunResult>;

/** One difference a replay found. */
export type ReplayChange =
  | { kind: 'artifact' | 'template'; id: string; name: string; change: 'removed' | 'modified' | 'added' }
  | { kind: 'memory'; id: string; change: 'missing' | 'modified' }
  | { kind: 'parameter'; name: string; before: unknown; after: unknown }
  | { kind: 'skill'; change: string }
  | { kind: 'error'; code: string; message: string };

/**
 * Replays a stored invocation record against the skill as `store` holds it now and the
 * memory items read back by id: proves the prompt byte-identical, or names each change.
 */
export declare function verifyInvocation(
  record: InvocationRecord,
  options: { store: SkillStore; memory?: Array<{ id: string; tier?: string; content: string }> | ((ids: string[]) => Promise<Array<{ id: string; tier?: string; content: string }>> | Array<{ id: string; tier?: string; content: string }>) },
): Promise<{ identical: boolean; prompt_hash: string; recomposed_hash: string | null; changes: ReplayChange[] }>;

/** A dspy_module whose state blob needs re-optimising. */
export interface StaleDspy {
  skill_id: string;
  artifact_id: string;
  name: string;
  reason: 'version-changed' | 'unstamped';
  /** The executor version that made the blob, if stamped. */
  optimized_with: string | null;
}

/** The dspy_modules of a store whose state blob another executor version made (by its manifest). */
export declare function staleDspy(options: { store: SkillStore; executors: Executors }): Promise<StaleDspy[]>;

/** Optimises a skill's dspy_modules (or one) from its traces; stores the stamped state blobs. */
export declare function optimizeDspy(options: { store: SkillStore; skill: Skill | string; artifact?: string; executors: Executors; traces?: SkillStore | null; now?: () => number } & LongRunOptions): Promise<{ optimized: Array<{ artifact: string; artifact_id: string; examples: number; executor_version: string }> }>;

/** Runs a skill's artifacts in order; a hard assertion failure stops it. */
export declare function runSkill(options: RunOptions & { artifacts?: string[] }): Promise<{ outputs: Record<string, string>; results: RunResult[]; warnings: AssertionOutcome[] }>;

/** A SkillSpec: a skill as a deterministic state machine. */
export interface SkillSpec {
  name: string;
  description?: string;
  initial_state: string;
  input_schema?: object;
  output_schema?: object;
  states: Record<string, { objective?: string; allowed_tools?: string[]; transitions?: Array<{ on: string; to: string }>; terminal?: boolean }>;
  /** Model steps before forced termination (default 50). */
  max_steps?: number;
  /** Whether a run can be cancelled (default true). */
  interruptible?: boolean;
}

export interface SpecProblem {
  path: string;
  code: 'missing-initial-state' | 'unknown-state' | 'no-terminal' | 'terminal-with-transitions' | 'unreachable-state' | 'no-path-to-terminal' | 'unknown-tool' | 'invalid-schema' | 'duplicate-event' | 'missing-field' | 'wrong-type' | string;
  message: string;
  severity: 'error' | 'warning';
}

/** Every problem of a spec at once; `tools` omitted skips the tool-registry check. */
export declare function validateSkillSpec(spec: SkillSpec | string, options?: { tools?: string[] }): { ok: boolean; problems: SpecProblem[] };
/** A problem of a spec file in a bulk load. */
export interface SpecFileProblem extends SpecProblem {
  /** The file's path as given. */
  file: string;
}

/**
 * Loads SkillSpecs in bulk (the seed's `skills/*.json`): every file read and validated
 * before anything is returned; any problem throws `InvalidSkill` with `details.problems`
 * (every problem of every file). The specs come back in the files' order.
 */
export declare function loadSkillSpecs(files: Array<{ path: string; text: string }> | Record<string, string>, options?: { tools?: string[] }): { specs: SkillSpec[]; warnings: SpecFileProblem[] };

/** An immutable registry of validated specs. */
export interface SkillRegistry {
  /** Releases the wasm memory now (otherwise when collected); the object cannot be used after. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  names(): string[];
  spec(name: string): SkillSpec | null;
  /** The summary for the model's system prompt: a heading, then `- <name>: <description>` per skill, by name ("" when empty). */
  summary(): string;
}
/**
 * Builds a registry (overrides replace specs by name); throws `InvalidSkill` listing every
 * failing spec. The system skills' specs come from a seeded store (`store.skillSpecs()`) or
 * `seedSkillSpecs(await systemSkills())`.
 */
export declare function buildSkillRegistry(specs: SkillSpec[], options?: { tools?: string[]; overrides?: SkillSpec[] }): SkillRegistry;

export type Proposal =
  | { type: 'tool'; name: string; arguments?: unknown }
  | { type: 'transition'; event: string }
  | { type: 'finish'; output?: unknown }
  | { type: 'spawn'; skill: string };

export type RunStatus = 'running' | 'finished' | 'cancelled' | 'terminated' | 'failed';

export interface ProposalRecord {
  kind: 'tool' | 'skill';
  payload: unknown;
  status: 'pending';
  step: number;
}

export interface Outcome {
  accepted: boolean;
  status: RunStatus;
  state: string;
  step: number;
  /** A refusal: its code and what would have been valid. */
  error?: { code: 'tool-not-allowed' | 'invalid-transition' | 'not-terminal' | 'output-mismatch' | 'no-spawn' | 'invalid-skill-spec'; message: string; allowed_tools: string[]; transitions: string[]; terminal: boolean; retries_left: number; problems?: SpecProblem[] };
  proposal_record?: ProposalRecord;
}

export interface LogEvent {
  seq: number;
  kind: 'started' | 'proposal' | 'cancelled';
  skill?: string;
  input?: unknown;
  proposal?: Proposal;
  accepted: boolean;
  rejected?: string;
  from: string;
  to: string;
  status: RunStatus;
}

export interface Run {
  skill: string;
  state: string;
  step: number;
  retries: number;
  status: RunStatus;
  input: unknown;
  output: unknown;
  reason: 'retry-budget-exhausted' | 'max-steps' | 'cancelled' | null;
  proposals: ProposalRecord[];
  state_calls: Array<{ tool: string; arguments: unknown }>;
  log: LogEvent[];
}

/** The arbiter: one active skill per lane; every proposal validated, applied and logged. */
export declare class Arbiter {
  /** Releases the wasm memory now (otherwise when collected); the object cannot be used after. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  constructor(registry: SkillRegistry, options?: { retries?: number });
  start(lane: string, skill: string, input?: unknown): Run;
  propose(lane: string, proposal: Proposal): Outcome;
  cancel(lane: string): Run;
  run(lane: string): Run | null;
  log(lane: string): LogEvent[];
  stepContext(lane: string, context?: unknown): { skill: string; state: string; objective: string; allowed_tools: string[]; transitions: string[]; terminal: boolean; step: number; max_steps: number; retries_left: number; context: unknown; step_context: { calls: Array<{ tool: string; arguments: unknown }> } };
  /**
   * What the model is offered for the lane's next step: the objective as `system` text, the
   * state's allowed tools (described by `tools`) under provider-safe names, and the
   * `skill_transition` / `skill_finish` tools; `names` maps offered names back.
   */
  stepOffer(lane: string, tools?: Array<{ name: string; description?: string; inputSchema?: object }>): StepOffer;
  /** Proposes what a model's tool call asks, under the names of `offer`. */
  proposeCall(lane: string, toolCall: { name: string; input?: unknown }, offer: StepOffer): Outcome;
  hierarchy(session?: string): { session: string; lanes: Array<{ lane: string; skill: { name: string; state: string; status: RunStatus; step: { n: number; objective: string } } }> };
  replay(log: LogEvent[]): Run;
}

/** A lane's state in the lane machine (`sessionMachines().lane`). */
export type LaneState = 'idle' | 'reasoning' | 'waiting_tool' | 'error' | 'stopped';
/** What a host tells a lane. */
export type LaneEvent = 'request' | 'tool_call' | 'tool_result' | 'response' | 'fail' | 'cancel';

/** One event of a session's append-only log. */
export type SessionLogEvent =
  | { seq: number; at: number; type: 'session'; event: 'started' | 'heartbeat' | 'stopped' | 'recovered'; last_seen?: number }
  | { seq: number; at: number; type: 'lane'; lane: string; event: LaneEvent; from: LaneState; to: LaneState }
  | { seq: number; at: number; type: 'skill'; lane: string; event: LogEvent; proposal_id?: string };

/** Session → lanes → skill → step, live. */
export interface SessionHierarchy {
  session: string;
  status: 'active' | 'stopped';
  started_at: number;
  last_seen: number;
  recoveries: number;
  events: number;
  lanes: Array<{ lane: string; state: LaneState; events: LaneEvent[]; skill: { name: string; state: string; status: RunStatus; step: { n: number; objective: string } } | null }>;
}

/**
 * A session over a store: lifecycle (start, heartbeat, stop, crash recovery), lanes in the
 * lane machine, one skill per lane under the arbiter; every change is in the store's log
 * before the call returns (a failed write leaves the session as its stored log says).
 */
export interface Session {
  readonly id: string;
  readonly registry: SkillRegistry;
  laneEvent(lane: string, event: LaneEvent): Promise<LaneState>;
  startSkill(lane: string, skill: string, input?: unknown): Promise<Run>;
  /** `proposal_id` names the proposal record an accepted `choir.propose.*` call made. */
  propose(lane: string, proposal: Proposal): Promise<Outcome & { proposal_id?: string }>;
  proposeCall(lane: string, toolCall: { name: string; input?: unknown }, offer: StepOffer): Promise<Outcome & { proposal_id?: string }>;
  cancel(lane: string): Promise<Run>;
  heartbeat(): Promise<void>;
  stop(): Promise<void>;
  stale(timeoutMs: number): boolean;
  hierarchy(): SessionHierarchy;
  log(): SessionLogEvent[];
  lane(lane: string): LaneState;
  run(lane: string): Run | null;
  stepContext(lane: string, context?: unknown): ReturnType<Arbiter['stepContext']>;
  stepOffer(lane: string, tools?: Array<{ name: string; description?: string; inputSchema?: object }>): StepOffer;
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
}

/** A store any session or proposal function takes (a skill store or a message store, any backend). */
export type SessionStore = import('./index.js').SkillStore | import('./index.js').MessageStore;

/**
 * Opens session `id`: new → started; its log ending while active (a crash) → recovered,
 * every lane resumed at its last accepted step; stopped → started again. `now()` gives
 * epoch milliseconds (Date.now by default). A log the registry no longer replays is
 * `StoreFailed` (`details.reason: "log-diverged"`).
 */
export declare function openSession(options: { store: SessionStore; registry: SkillRegistry; id: string; now?: () => number; retries?: number }): Promise<Session>;
/** The session and lane machines as SkillSpec-shaped data, to draw with `toMermaid`. */
export declare function sessionMachines(): { session: SkillSpec; lane: SkillSpec };

/** A proposal record in the approval pipeline. */
export interface StoredProposal {
  /** The key of the log event that made it (`<session>/<seq>`, zero-padded). */
  id: string;
  kind: 'tool' | 'skill';
  name: string;
  payload: unknown;
  status: 'pending' | 'approved' | 'rejected';
  session: string;
  lane: string;
  skill: string;
  step: number;
  proposed_at: number;
  decided_at?: number;
  decided_by?: string;
  reason?: string;
  /** An approved skill that replaced one of the same name. */
  replaces?: boolean;
}
/** One logged decision. */
export interface ApprovalDecision {
  id: string;
  kind: 'tool' | 'skill';
  name: string;
  decision: 'approved' | 'rejected';
  by: string;
  reason: string;
  at: number;
}
/** Proposal records, oldest first. */
export declare function listProposals(store: SessionStore, options?: { status?: 'pending' | 'approved' | 'rejected' }): Promise<StoredProposal[]>;
/**
 * Approves a pending proposal: validated again against `registry`, then installed into a
 * new registry (returned; the old one is untouched). Decided before → `InvalidRequest`
 * (`not-pending`); no longer valid → `InvalidSkill`, nothing written.
 */
export declare function approveProposal(store: SessionStore, id: string, options: { registry: SkillRegistry; by: string; now?: () => number }): Promise<{ proposal: StoredProposal; registry: SkillRegistry }>;
/** Rejects a pending proposal (a `reason` is required). */
export declare function rejectProposal(store: SessionStore, id: string, options: { by: string; reason: string; now?: () => number }): Promise<{ proposal: StoredProposal }>;
/** Every decision, oldest first. */
export declare function approvalLog(store: SessionStore): Promise<ApprovalDecision[]>;
/** `registry` with every approved proposal installed, in decision order. */
export declare function installApproved(store: SessionStore, registry: SkillRegistry): Promise<SkillRegistry>;

/** A spec as a Mermaid state diagram; a run (or a state name) marks where it is. */
export declare function toMermaid(spec: SkillSpec | string, run?: Run | string): string;

/** The SkillSpec of a composition's subgraph (stages in order, each keeping its tools). */
export declare function compositionSpec(composition: Composition): SkillSpec;

// ---------------------------------------------------------------------------------------
// Skill contracts, the registry and the invocation gateway.

/** A compact field: `{ type, required, regex, enum, default, min, max, items, fields }`, or a type name. */
export type ContractField =
  | 'string' | 'integer' | 'int' | 'number' | 'float' | 'boolean' | 'bool' | 'object' | 'array' | 'any'
  | {
      type: string;
      required?: boolean;
      regex?: string;
      enum?: unknown[];
      default?: unknown;
      min?: number;
      max?: number;
      items?: ContractField | Record<string, ContractField>;
      fields?: Record<string, ContractField>;
      description?: string;
      format?: string;
      nullable?: boolean;
    };

/** A contract document (what `skills/<name>.yaml` holds), as an object. */
export interface ContractDocument {
  name: string;
  /** Semantic version; `0.9` reads as `0.9.0`. */
  version: string | number;
  description: string;
  owner: string;
  /** Compact fields, or a JSON Schema of an object. */
  input: Record<string, ContractField> | object;
  output: Record<string, ContractField> | object;
  errors?: Array<string | { code: string; retry?: 'do-not-retry' | 'retry-once' | 'retry' | 'fallback-to'; fallback_to?: string }>;
  policy: {
    idempotent: boolean;
    /** `{field}` placeholders over the input (`{title_id}:{locale}`). */
    idempotency_key?: string;
    idempotency_ttl_sec?: number;
    /** `per_user_per_min`, `per_tenant_per_sec`, `global_per_sec`, … */
    rate_limit?: Record<string, number>;
    timeout_ms: number;
    retry?: { attempts?: number; backoff?: 'exponential' | 'fixed' | 'none'; base_ms?: number; max_ms?: number };
    circuit_breaker?: { error_rate_threshold?: number; window_sec?: number; min_calls?: number; open_sec?: number };
    budget: { p95_ms: number; p99_ms?: number; cost_usd: number };
  };
  capabilities_required?: Array<{ feature_flag?: string | string[]; tier?: string | string[] }> | { feature_flag?: string | string[]; tier?: string | string[] };
  backing_service?: { endpoint: string; health_check?: string } | string;
  examples?: Array<{ input: unknown; output?: unknown; note?: string }>;
  surfaces?: string[];
  /** Percent of each surface's users sent to this version (`{ chat: 5 }`). */
  canary?: Record<string, number>;
  /** A date or RFC 3339 time after which calls fail with `Sunset`. */
  sunset?: string;
  deprecated?: boolean;
  /**
   * For callers of older versions: how this version's output reads in their shape, by
   * version — `"$/pointer"`, `"$root/pointer"`, `{ $each: "/list", $map: … }`, literals.
   */
  output_adapters?: Record<string, unknown>;
}

/** A registered contract version, as the registry lists it. */
export interface RegisteredContract {
  name: string;
  version: string;
  description: string;
  owner: string | null;
  input_schema: object;
  output_schema: object;
  surfaces: string[];
  canary: Record<string, number>;
  sunset: string | null;
  deprecated: boolean;
  idempotent: boolean;
  source: ContractDocument;
}

/** A registration problem. */
export interface ContractProblem {
  path: string;
  code: string;
  message: string;
  severity: 'error' | 'warning';
}

/** Contract versions side by side, pins per surface, canaries and sunsets. */
export declare class ContractRegistry {
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  constructor();
  /** YAML text, JSON text or an object; throws `InvalidContract` with `details.problems`. */
  register(contract: string | ContractDocument): RegisteredContract;
  unregister(name: string, version?: string | null): boolean;
  has(name: string): boolean;
  list(): RegisteredContract[];
  pins(): Array<{ surface: string; name: string; range: string }>;
  get(name: string, version: string): RegisteredContract;
  resolve(name: string, options: { surface: string; user: string; version?: string; now?: () => number }): RegisteredContract;
  setCanary(name: string, version: string, surface: string, percent: number): void;
  setSunset(name: string, version: string, at: string | null): void;
  pin(surface: string, name: string, range: string | null): void;
  /** What the planner sees for a message: the top-K contracts the caller may call, in the provider's tool shape. */
  plannerSection(message: string, options: PlannerOptions): PlannerSection;
  /** Contract embeddings for the router (one length); false when the lengths differ. */
  setVectors(vectors: Record<string, number[]>): boolean;
  /** Pairs of contracts whose descriptions are too alike (embeddings when given, else lexical). */
  overlapAudit(options?: { vectors?: Record<string, number[]>; threshold?: number }): Array<{ a: string; b: string; similarity: number; by: 'embedding' | 'lexical' }>;
  /** Owner-less, deprecated and rarely-called contracts, from call records. */
  review(records: GatewayRecord[], options?: { minCallsPerDay?: number }): {
    ownerless: string[];
    deprecated: Array<{ contract: string; deprecated: boolean; sunset: string | null }>;
    rarely_called: Array<{ contract: string; calls: number; per_day: number }>;
    days: number;
  };
}

export interface PlannerOptions {
  provider: 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';
  /** How many contracts to inline (default 8). */
  k?: number;
  /** Estimated tokens the tools may take (default 6,000). */
  tokenBudget?: number;
  surface?: string;
  user?: string;
  tier?: string;
  flags?: string[];
  /** Contract names already offered (a `request_more_tools` call pages past them). */
  exclude?: string[];
  queryVector?: number[];
  /** The clock: epoch milliseconds. */
  now?: () => number;
}

export interface PlannerSection {
  /** The provider's `tools` value. */
  tools: unknown[];
  /** One line per inlined contract, for the system prompt. */
  catalog: string;
  /** Offered tool name → `name@version`. */
  names: Record<string, string>;
  /** Candidates left out (reachable through `request_more_tools`). */
  more: number;
  /** Estimated tokens of `tools`. */
  tokens: number;
}

/** Who calls, from where. */
export interface CallOptions {
  surface: string;
  user: string;
  session?: string;
  tenant?: string;
  tier?: string;
  flags?: string[] | Record<string, boolean>;
  /** A version or range to call (`0.9`, `^1`, `=1.0.0`). */
  version?: string;
  /** The idempotency scope; default: the session when given, else the day. */
  scope?: 'session' | 'day';
  signal?: AbortSignal;
}

/** What a handler receives beside the input. */
export interface HandlerContext {
  contract: string;
  version: string;
  attempt: number;
  /** The gateway-made key the backing service de-duplicates by. */
  idempotencyKey: string | null;
  traceId: string;
  surface?: string;
  user?: string;
  session?: string | null;
  tenant?: string | null;
  /** Fires on the call's timeout and on the caller's abort. */
  signal: AbortSignal;
  /** Set when `verify()` sends a synthetic input. */
  synthetic?: boolean;
}

/** A contract's backing handler: throw an error with `code`, `status` or `retryable` to fail. */
export type ContractHandler = (input: any, context: HandlerContext) => unknown | Promise<unknown>;

/** One call's observability record. */
export interface GatewayRecord {
  trace_id: string;
  contract: string;
  version: string | null;
  surface: string;
  user: string;
  /** `ok`, `cached`, or the error code. */
  outcome: string;
  error_code: string | null;
  start_ms: number;
  end_ms: number;
  latency_ms: number;
  handler_ms: number;
  attempts: number;
  retries: number;
  cost_usd: number;
  breaker: 'closed' | 'open' | 'half-open' | 'none';
  budget_overrun: boolean;
  fallback_from: string[];
  idempotency_key: string | null;
  /** The older version whose output shape the caller got through an output adapter. */
  adapted_to: string | null;
}

/** Where limits, breakers and idempotency records live. */
export type GatewayStatePort =
  | { kind: 'memory'; get(key: string): unknown }
  | { kind?: string; transact(keys: string[], op: object, now: number): unknown | Promise<unknown> };

export declare function memoryState(): { kind: 'memory'; get(key: string): unknown };
export declare function indexedDbState(options?: { name?: string; indexedDB?: IDBFactory }): GatewayStatePort & { close(): void };
/** `namespace`: a Durable Object namespace binding of a class extending GatewayStateObject. */
export declare function durableObjectState(namespace: { idFromName(name: string): unknown; get(id: unknown): { fetch(url: string, init?: RequestInit): Promise<Response> } }, options?: { objectFor?: (keys: string[], op: object) => string }): GatewayStatePort;
/** Extend and export it from your Worker, and bind it as a Durable Object. */
export declare class GatewayStateObject {
  constructor(state: { storage: any }, env?: unknown);
  fetch(request: Request): Promise<Response>;
}
/** One state transaction over values a custom port read → the writes and the result. */
export declare function applyGatewayState(op: object, values: Array<string | null>, now: number): { writes: Array<[string, string | null]>; result: object };
export declare function recordsToOtel(records: GatewayRecord[]): { resourceSpans: unknown[] };
export declare function checkContract(contract: string | ContractDocument): { ok: boolean; problems: ContractProblem[]; contract?: RegisteredContract };

export interface GatewayOptions {
  registry: ContractRegistry;
  /** By contract name or `name@version`. */
  handlers?: Record<string, ContractHandler>;
  state?: GatewayStatePort;
  now?: () => number;
  random?: () => number;
  maxRecords?: number;
  onRecord?: (record: GatewayRecord) => void;
}

export interface GatewayStep {
  name: string;
  input?: unknown;
  options?: Partial<CallOptions>;
}

/** Every contract call goes through it. */
export declare class Gateway {
  constructor(options: GatewayOptions);
  readonly registry: ContractRegistry;
  call<T = unknown>(name: string, input: unknown, options: CallOptions): Promise<T>;
  records(): GatewayRecord[];
  otel(): { resourceSpans: unknown[] };
  /** Phases: `checking` per contract, `checked`; the signal reaches each handler. */
  verify(name?: string, options?: LongRunOptions): Promise<Array<{ name: string; version: string; input: unknown; ok: boolean }>>;
  sequence(steps: Array<Omit<GatewayStep, 'input'> & { input?: unknown | ((prev: unknown, outputs: unknown[]) => unknown) }>, options: CallOptions): Promise<unknown[]>;
  parallel(calls: GatewayStep[], options: CallOptions): Promise<unknown[]>;
  conditional(classify: GatewayStep, route: (label: any) => GatewayStep | null | Promise<GatewayStep | null>, options: CallOptions): Promise<{ label: unknown; output: unknown; called: string | null }>;
  speculate<T = unknown>(name: string, input: unknown, options: CallOptions): { result: Promise<T>; cancel(): void };
}

export declare function createGateway(options: GatewayOptions): Gateway;
