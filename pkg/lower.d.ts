/**
 * promptloom/lower — lowering, conversations, responses and the model adapters, from a wasm
 * module built without the compositor, the stores and the skills: what an app that only
 * turns messages into provider requests and reads the replies downloads. Every name here
 * is the same in `promptloom` and `promptloom/composer`; the entries compose in any order.
 *
 * @module promptloom/lower
 */
export {
  lower, lowerAsync, lowerMany, lowerManyAsync, defaultCapabilities, normalizeMessage, resolveRequests, providers, PromptloomError,
  lowerConversation, lowerConversationAsync, Conversation,
  createResponseParser, ResponseParser, parseResponse, providerError,
  createAdapter, ResponseStream, readEventStream, EventStreamLog, relayAdapter,
  runAgent,
} from './index.js';
// The package's types, for the values above and what they take and give.
export type {
  Adapter, AdapterOptions, AgentOptions, AgentResult, ArtifactKind, ArtifactMetadata,
  ArtifactRef, Assertion, AssistantPart, AssistantTextPart, AssistantTurn, BlockNote,
  BundledFiles, CacheOption, CacheStats, Capabilities, CapabilityOverrides, CatalogEntry, Chip,
  CommandArgument, CommandEntry, CommandPart, Completion, Condition, ConversationInit, ConversationConstructor, ConversationOptions, SyncLowerOptions, SyncResolve,
  ConversationReport, Decision, DecisionPolicy, DropNote, DspyExample, EditorContextPart,
  Embed, ErrorClass, ErrorCode, FileAttachmentPart, FileRefPart, FileRefTarget, FinishReason, HostKeyValue,
  HostRequest, JsonSchema, LowerOptions, Lowered, LoweredConversation, LoweringReport,
  MatchOptions, MediaSupport, MentionAnswer, MentionPart, MentionTarget, MessageLimits,
  MessageStore, MessageSummary, Outcome, Part, Problem, PromptResult, Provider, Range,
  ReasoningPart, Recommendation, Repair, RepairCode, Resolution, Resolve, ResolveAnswer,
  ResolveRequest, ResponseEvent, ResponseMetadata, ResponseParserOptions, ResponseTurn, RetryInfo, RetryOptions,
  CallSettings, ReasoningEffort, ObjectEdit, ObjectPathStep,
  SeedDocument, SeedReport, Skill, SkillArtifact, SkillMetadata, SkillPackage, SkillSource,
  SkillStore, SkillSummary, StoredBlob, Submission, SubmitLimits, SubmitOptions, SubmitWarning,
  Citation, SyncReport, SystemTurn, TextPart, Tool, FunctionTool, StandardSchema, ToolSchema, ToolInput, ToolName, LongRunOptions, Progress, CustomTool, ProviderTool, ToolCallPart, ToolHandler, ToolResultPart, ToolTurn,
  TraceFilter, TraceInput, TraceRow, Turn, TurnReport, UnknownPart, Usage, UserMessage,
  Warning, WarningCode, WeighedSkill,
} from './index.js';
