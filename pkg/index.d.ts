/// <reference lib="esnext.disposable" />
/**
 * promptloom — multipart user messages and skills to provider-native LLM requests: lowering,
 * conversations, responses and adapters, the compositor and its stores, skills.
 *
 * Names follow one rule: the options and results of functions are camelCase; documents that
 * are stored and shared across hosts (messages, turns, skills, records) are snake_case;
 * enum values are kebab-case.
 *
 * @module promptloom
 */

/** A slice of a file: lines are 1-based and inclusive; bytes are 0-based, end exclusive. */
export interface Range {
  start: number;
  /** Last line (inclusive) or the byte after the last. Omitted: one line, or bytes to the end. */
  end?: number;
  unit?: 'line' | 'byte';
}

/** Where a file-ref points. */
export type FileRefTarget =
  | { kind: 'path'; path: string; range?: Range; mime?: string; name?: string }
  | { kind: 'url'; url: string; range?: Range; mime?: string; name?: string }
  | { kind: 'content-id'; content_id: string; range?: Range; mime?: string; name?: string };

export interface TextPart {
  type: 'text';
  text: string;
}

/** A workspace file; its body is not in the message (the resolver reads it). */
export interface FileRefPart {
  type: 'file-ref';
  ref: FileRefTarget;
}

/** An attached file: inline bytes (base64, a data URL, or bytes) or a blob in the blob store. */
export interface FileAttachmentPart {
  type: 'file-attachment';
  /** Base64, a `data:` URL (base64 or percent-encoded), or raw bytes. */
  data?: string | Uint8Array | ArrayBuffer;
  /** Bytes split out to the blob store (schema_version 2; version 1 had a top-level `content_id`). */
  blob?: { content_id: string };
  mime?: string;
  name?: string;
  size?: number;
}

/** The spec's resolution outcomes. */
export type Outcome = 'action' | 'parts' | 'pass-through' | 'skill' | 'dropped';

/** What a command or mention resolved to at submit time (persisted for the inspector and replay). */
export interface Resolution {
  outcome: Outcome;
  /** The parts the model sees in its place (none for a host action or a skill). */
  parts?: Part[];
  /** Host-facing flags, e.g. `{ intent: "search", query }`, `{ action }`, `{ skill }`. */
  flags?: Record<string, unknown>;
}

/** A slash command; submit() resolves it before lowering. */
export interface CommandPart {
  type: 'command';
  id: string;
  /** As typed (a string), positional (an array of strings), or named (an object; `raw` is the typed text). */
  args?: string | string[] | Record<string, unknown>;
  resolved?: Resolution;
}

export type MentionTarget =
  | { kind: 'skill'; name: string; [key: string]: unknown }
  | { kind: 'file'; path: string; range?: Range; [key: string]: unknown }
  | { kind: string; [key: string]: unknown };

export interface MentionPart {
  type: 'mention';
  target: MentionTarget;
  resolved?: Resolution;
}

/** State the host contributes on the user's behalf (selection, open files, cursor, …). */
export interface EditorContextPart {
  type: 'editor-context';
  kind: string;
  source?: string;
  payload: unknown;
  /** Epoch milliseconds when the host sampled this state. */
  emitted_at?: number;
}

/**
 * A part type this version does not know: kept, and lowered by its `text` if it has one. It
 * is not in the `Part` unions, so that they narrow on `type`: a message from a newer version
 * may hold one (cast a part to `UnknownPart` to read it, or to write one).
 */
export interface UnknownPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export type Part =
  | TextPart
  | FileRefPart
  | FileAttachmentPart
  | CommandPart
  | MentionPart
  | EditorContextPart;

export interface UserMessage {
  role?: 'user';
  parts: Part[];
  metadata?: { schema_version: number; [key: string]: unknown };
}

export type { Provider, ErrorClass, ErrorCode } from './src/constants.js';
import type { Provider, ErrorClass, ErrorCode } from './src/constants.js';
// The documents the core writes (reports, capabilities, response events): generated from
// the Rust types (tests/documents.rs).
export type { BlockNote, CacheReport, Call, Citation, CacheStats, Capabilities, ConversationReport, DropNote, FinishReason, IdMapping, LoweringReport, FitReport, ObjectEdit, ObjectPathStep, MediaSupport, Repair, RepairCode, ResponseEvent, TurnReport, Usage, Warning, WarningCode } from './src/documents.js';
import type { Call, Citation, CacheStats, Capabilities, ConversationReport, FinishReason, LoweringReport, MediaSupport, ResponseEvent, Usage, WarningCode } from './src/documents.js';

/** A tool definition in the neutral shape; each provider gets its own form. */
/** A function the model calls with JSON arguments (the default kind of tool). */
export interface FunctionTool<S extends ToolSchema = ToolSchema> {
  type?: 'function';
  /** `^[a-zA-Z0-9_-]{1,64}$` */
  name: string;
  description?: string;
  /**
   * The arguments' schema: JSON Schema (an object schema; Gemini receives its OpenAPI
   * subset), or a schema library's schema that speaks Standard JSON Schema (zod 4.2+,
   * ArkType), written out as JSON Schema. `runAgent` checks each call's input with a Standard
   * Schema before the handler runs, and types the handler's input from it.
   */
  inputSchema?: S;
  strict?: boolean;
}

/** A schema of a library that speaks Standard Schema (zod, ArkType, Valibot, …): what it accepts and gives. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => unknown;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** What a function tool's `inputSchema` takes. */
export type ToolSchema = { [keyword: string]: unknown } | StandardSchema<any, any>;

/** The input a tool's handler receives: its Standard Schema's output, else anything. */
export type ToolInput<T> = T extends { inputSchema: StandardSchema<any, infer O> } ? O : any;

/** The names of a list of tools. */
export type ToolName<T extends readonly Tool[]> = NonNullable<T[number]['name']> & string;

/**
 * A custom tool: the model writes free text (its call's `input` is a string), constrained
 * by `format` where the provider has it. OpenAI Responses and Chat take it natively; the
 * other providers get a function with one string argument, `input` (a `ToolAsFunction`
 * warning).
 */
export interface CustomTool {
  type: 'custom';
  name: string;
  description?: string;
  format?: { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };
}

/**
 * A provider's own tool, sent verbatim to that provider and left out for the others (a
 * `ToolDropped` warning): OpenAI Responses' `{ type: 'apply_patch' }`, `{ type: 'shell' }`,
 * `{ type: 'web_search' }`, `{ type: 'mcp', … }`; Anthropic's server tools
 * (`{ type: 'web_search_20250305', name: 'web_search' }`); Gemini's `{ googleSearch: {} }`.
 * The calls the host runs (`apply_patch`, `shell`, `local_shell`, client `tool_search`,
 * MCP approvals) come back as tool calls with a `kind`.
 */
export interface ProviderTool {
  type: 'provider';
  provider: Provider;
  tool: Record<string, unknown>;
  /** The name its calls carry (default: the definition's `name`, else its `type`). */
  name?: string;
}

export type Tool = FunctionTool | CustomTool | ProviderTool;

export type CapabilityOverrides = {
  [K in keyof Capabilities]?: Capabilities[K] extends MediaSupport ? Partial<MediaSupport> : Capabilities[K];
};

/** What lower() asks the host to resolve. */
export type ResolveRequest =
  | { type: 'file'; part: number; ref: FileRefTarget }
  | { type: 'mention'; part: number; target: MentionTarget }
  | { type: 'blob'; part: number; content_id: string };

/**
 * A resolver's answer: file text, file bytes, `{ text }`, `{ bytes, mime }`, a mention's
 * payload (any JSON), or null when there is nothing.
 */
export type ResolveAnswer =
  | string
  | Uint8Array
  | ArrayBuffer
  | { text: string; mime?: string }
  | { bytes: Uint8Array | ArrayBuffer; mime?: string }
  | Record<string, unknown>
  | null
  | undefined;

export type Resolve = (request: ResolveRequest) => ResolveAnswer | Promise<ResolveAnswer>;

/** A reasoning effort (each provider gets its nearest: a budget, a level or the effort). */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * The call settings, one set for every provider: each is written where and how the
 * provider wants it, and every setting translated, clamped, defaulted or dropped is a
 * report warning with a code (`SettingTranslated`, `SettingClamped`, `SettingDefaulted`,
 * `SettingDropped`, `SettingInUrl`, `ModelUnknown`).
 */
export interface CallSettings {
  /** The model id (Gemini's goes in the URL: the adapter's `model`). */
  model?: string;
  /** The longest answer in tokens (Anthropic requires one: the model's largest answer by default). */
  maxOutputTokens?: number;
  /** 0 to 2 (Anthropic's 0 to 1: clamped). */
  temperature?: number;
  /** 0 to 1. */
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  /** -2 to 2. */
  presencePenalty?: number;
  /** -2 to 2. */
  frequencyPenalty?: number;
  /** `'auto'`, `'none'`, `'required'`, a declared tool's name, or `{ tool }`. */
  toolChoice?: 'auto' | 'none' | 'required' | (string & {}) | { tool: string };
  parallelToolCalls?: boolean;
  /** An effort, or an effort and/or a token budget, and whether the reasoning text comes back. */
  reasoning?: ReasoningEffort | { effort?: ReasoningEffort; budgetTokens?: number; include?: boolean };
  /** The answer as JSON: `'json'` (any JSON) or following a JSON Schema. */
  output?: 'json' | { schema?: Record<string, unknown>; name?: string; description?: string; strict?: boolean };
  /** The end user's id (Anthropic `metadata.user_id`, OpenAI `safety_identifier`). */
  user?: string;
  /** String metadata (OpenAI). */
  metadata?: Record<string, string>;
  /** A streamed answer (OpenAI Chat also gets `stream_options.include_usage`). */
  stream?: boolean;
  /** Each provider family's own top-level fields, merged over the finished body last, verbatim. */
  providerOptions?: { anthropic?: Record<string, unknown>; openai?: Record<string, unknown>; gemini?: Record<string, unknown> };
  /** The model's row over (or instead of) the built-in table's. */
  modelInfo?: { contextWindow?: number; maxOutputTokens?: number; reasoning?: 'none' | 'budget' | 'effort' | 'level'; sampling?: boolean; structuredOutput?: boolean; vision?: boolean; prices?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number } };
}

export interface LowerOptions extends CallSettings {
  provider: Provider;
  /** Reads split-out attachments (`blob.content_id`) back from this store. */
  store?: MessageStore;
  /** Reads file-refs, file mentions, other mentions and content-id attachments. */
  resolve?: Resolve;
  /** The system prompt, placed where the provider wants it. */
  system?: string;
  tools?: Tool[];
  /** Merged over the provider's default capability table. */
  capabilities?: CapabilityOverrides;
  /** Bounds on what is handed in; past one, `LimitExceeded` with `details.limit`. */
  limits?: MessageLimits;
  /**
   * `openai-chat` only: the OpenAI-compatible server behind it, by name or by its base URL
   * (`'https://api.deepseek.com/v1'`). It decides whether earlier reasoning goes back:
   * `deepseek` takes `reasoning_content` in the tool loop in progress (older turns' is left
   * out, a `ReasoningLeftOut` repair), `moonshot` on every assistant message, `openrouter`
   * its own `reasoning_details` items (a part's `details`) on every assistant message; the
   * others (`openai`, the default and any unknown host, `groq`, `mistral`, `xai`, `vllm`,
   * `ollama`) take none. Every server's reasoning is read whatever this says.
   */
  compat?: 'openai' | 'deepseek' | 'moonshot' | 'openrouter' | 'groq' | 'mistral' | 'xai' | 'vllm' | 'ollama' | (string & {});
}

/** Resource limits of lowering (each a `LimitExceeded` naming it, with `max` and `actual`). */
export interface MessageLimits {
  /** Parts of one message. Default 1 000. */
  maxParts?: number;
  /** Text and attachment bytes (decoded) of one message. Default 128 MiB. */
  maxMessageBytes?: number;
  /** Turns of one conversation. Default 100 000. */
  maxTurns?: number;
}

export interface Lowered {
  /** The request body, JSON text ready to send (byte-stable for the same inputs). */
  readonly body: string;
  readonly report: LoweringReport;
  /** The body parsed as an object. */
  json(): Record<string, unknown>;
}

/** Every error promptloom throws. */
export declare class PromptloomError extends Error {
  /** Set on adapter and parser errors: the assistant turn read before the failure. */
  turn?: ResponseTurn;
  readonly name: 'PromptloomError';
  readonly code: ErrorCode;
  /**
   * What the caller can do about it (the case of the WIT `error` variant): `invalid` — the
   * input breaks its shape or a limit, the same call fails until it changes; `refused` —
   * well formed, but the state or a policy says no; `unavailable` — may succeed later
   * (`details.retry_after_ms` when known); `failed` — something the host plugged in (or did
   * not), or a response stream, failed; `internal` — a bug.
   */
  readonly class: ErrorClass;
  /** Structured details; `path` names the offending input when known. */
  readonly details: { path?: string; [key: string]: unknown };
}

/** A resolver that answers at once: what the synchronous forms (`lower`, `lowerMany`, …) take. */
export type SyncResolve = (request: ResolveRequest) => ResolveAnswer;

/** The options of the synchronous forms: a resolver that answers at once, and no store. */
export type SyncLowerOptions = Omit<LowerOptions, 'resolve' | 'store'> & { resolve?: SyncResolve; store?: undefined };

/**
 * Lowers a message, synchronously. A resolver that answers a Promise, or a `store`, is
 * refused with `InvalidOptions` naming `lowerAsync`.
 */
export declare function lower(message: UserMessage, options: SyncLowerOptions): Lowered;
/** Lowers a message, always as a Promise: the resolver may answer Promises; `store` serves the message's blobs. */
export declare function lowerAsync(message: UserMessage, options: LowerOptions): Promise<Lowered>;

/**
 * Lowers many messages (a history) with one set of options in one call into wasm: a
 * Lowered or the PromptloomError each message got, in order. Resolver requests carry
 * `message`, the message's index. Synchronous, as `lower` is.
 */
export declare function lowerMany(messages: UserMessage[], options: Omit<SyncLowerOptions, 'resolve'> & { resolve?: (request: ResolveRequest & { message?: number }) => ResolveAnswer }): Array<Lowered | PromptloomError>;
/** `lowerMany`, always as a Promise (async resolvers, a store). */
export declare function lowerManyAsync(messages: UserMessage[], options: Omit<LowerOptions, 'resolve'> & { resolve?: (request: ResolveRequest & { message?: number }) => ResolveAnswer | Promise<ResolveAnswer> }): Promise<Array<Lowered | PromptloomError>>;

/** The provider's default capability table. */
export declare function defaultCapabilities(provider: Provider): Capabilities;

/** Parses and re-serialises a message (unknown parts and metadata are kept). */
export declare function normalizeMessage(message: UserMessage): UserMessage;

/**
 * What lower() will ask the resolver for this message, in part order (file-refs, file
 * mentions, host mentions, stored attachments): the same objects `resolve` is called with.
 * Throws `InvalidMessage` when the message does not parse.
 */
export declare function resolveRequests(message: UserMessage): ResolveRequest[];

/** The providers lower() accepts. */
export declare const providers: readonly Provider[];

// ---- the compositor ----

/** A command argument (the MCP `PromptArgument` shape). */
export interface CommandArgument {
  name: string;
  description?: string;
  required?: boolean;
}

/** What every kind of command entry has. */
export interface CommandCommon {
  /** With or without the slash; 1-64 of letters, digits, `_ - . :`. */
  name: string;
  description?: string;
  /** Shown in the palette, e.g. `<file> [severity]`. */
  argument_hint?: string;
  /** Positional order for `$1`, `$2`, …; required ones fail with `MissingArgument`. */
  arguments?: CommandArgument[];
  /** `builtin`, `project`, `mcp`, `skill`, … (default `host`). */
  source?: string;
}

/**
 * A catalog entry. Templates expand `$1`…, `$ARGUMENTS` / `$@`, `${name}`, `\$`; a body
 * without a placeholder gets the arguments appended after a blank line; values are not
 * expanded again.
 */
export type CommandEntry =
  | (CommandCommon & { kind: 'action'; action?: string })
  | (CommandCommon & { kind: 'intent'; intent?: string })
  | (CommandCommon & { kind?: 'template'; body: string })
  | (CommandCommon & { kind: 'prompt'; server: string; prompt?: string })
  | (CommandCommon & { kind: 'skill'; skill?: string; body?: string });

/** A palette row from complete(). */
export interface Completion {
  name: string;
  /** What to insert into the input (`/review`, `@selection`, `@file:`). */
  insert: string;
  kind: 'action' | 'intent' | 'template' | 'prompt' | 'skill' | 'mention';
  description?: string;
  argument_hint?: string;
  arguments?: Required<Pick<CommandArgument, 'name' | 'required'>>[];
  source: string;
}

/** Slash commands and `@` mention kinds. */
export declare class CommandCatalog {
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  /** With the built-ins (/branch, /compact, /archive, /rewind, /search, @selection, @open, @cursor, @last) unless `builtins: false`. */
  constructor(options?: { builtins?: boolean });
  /** Registers or replaces a command; returns the entry it replaced. Throws `InvalidCommand`. */
  register(entry: CommandEntry): CommandEntry | undefined;
  /** Registers or replaces a mention kind; returns whether one was replaced. */
  registerMention(entry: string | { name: string; description?: string; source?: string }): boolean;
  unregister(name: string): boolean;
  list(): { commands: CommandEntry[]; mentions: { name: string; description?: string; source: string }[] };
  /** Palette rows for `/re` or `@se`: names starting with the text first, then containing it. */
  complete(typed: string, options?: { limit?: number }): Completion[];
}

/** Typed text into parts: `/cmd args` at the start, `@file:path:10-25`, `@skill:name`, `@selection`, text. */
export declare function parseInput(text: string, options?: { catalog?: CommandCatalog }): Array<Part>;

/** A question submit() puts to the host. */
export type HostRequest =
  | { type: 'mention'; part: number; kind: string; target: MentionTarget }
  | { type: 'resolve'; part: number; kind: string; target: MentionTarget }
  | { type: 'prompt'; part: number; command: string; server: string; prompt: string; arguments: Record<string, string> };

/** An editor-context answer: the payload, or an envelope with its source and time. */
export type MentionAnswer = unknown | { payload: unknown; source?: string; emitted_at?: number };

/** The MCP `GetPromptResult` (what `prompts/get` returns). */
export interface PromptResult {
  description?: string;
  messages: Array<{ role: 'user' | 'assistant'; content: Record<string, unknown> }>;
}

/** Size thresholds in bytes (host config). */
export interface SubmitLimits {
  /** Text attachments up to this stay inline; larger become a content-id file-ref. Default 64 KiB. */
  textInlineMax?: number;
  /** Media above this go to the blob store. Default 1 MiB. */
  blobThreshold?: number;
  /** Past this many inline bytes in a session, attachments go to the blob store. Default 20 MiB. */
  sessionInlineMax?: number;
  /** Larger attachments are refused with `TooLarge`. Default 64 MiB. */
  maxAttachmentBytes?: number;
  /** Parts of one message (`LimitExceeded`). Default 1 000. */
  maxParts?: number;
  /** Text and attachment bytes of one message (`LimitExceeded`). Default 128 MiB. */
  maxMessageBytes?: number;
  /** Attachment bytes one session keeps in the blob store (`LimitExceeded`). Default 1 GiB. */
  maxSessionBlobBytes?: number;
}

export interface SubmitOptions {
  store: MessageStore;
  catalog?: CommandCatalog;
  /** Mention kinds → callbacks returning the editor-context payload(s) (`@selection` …). */
  mentions?: Record<string, (target: MentionTarget) => MentionAnswer | MentionAnswer[] | Promise<MentionAnswer | MentionAnswer[]>>;
  /** Answers other mentions (→ editor-context `ref`) and MCP prompts (→ `PromptResult`). */
  resolve?: (request: HostRequest) => unknown | Promise<unknown>;
  /** Default `default`. */
  session?: string;
  /** Default `<session>/<seq>`. */
  id?: string;
  /** The clock: epoch milliseconds (default `Date.now`). */
  now?: () => number;
  /** The skills that exist; other skill mentions and triggers are a warning. */
  skills?: string[];
  limits?: SubmitLimits;
}

export interface SubmitWarning {
  part: number | null;
  code: WarningCode | string;
  message: string;
}

export interface Submission {
  id: string;
  session: string;
  seq: number;
  /** The persisted message: what lower() takes. */
  message: UserMessage;
  /** Host actions to run (the model never sees them). */
  actions: Array<{ part: number; command: string; action: string; args: { raw: string; positional: string[]; named: Record<string, unknown> } }>;
  /** Skills to activate through the skill flow. */
  skills: Array<{ part: number; name: string; via: 'mention' | 'command'; args?: { raw: string; positional: string[]; named: Record<string, unknown> } }>;
  warnings: SubmitWarning[];
  /** Attachments split out to the blob store. */
  blobs: Array<{ content_id: string; mime: string; size: number }>;
}

/** Resolves and persists a message before anything is lowered. */
export declare function submit(message: UserMessage, options: SubmitOptions): Promise<Submission>;

/** An async key-value object a host plugs in (an edge KV namespace, a file store). */
export interface HostKeyValue {
  get(key: string): Promise<string | null | undefined>;
  put(key: string, value: string): Promise<unknown>;
  delete(key: string): Promise<unknown>;
  /** Keys starting with `prefix`: an array, or `{ keys: [{ name }] }`. */
  list(prefix: string): Promise<string[] | { keys: Array<{ name: string }> }>;
}

export interface MessageSummary {
  id: string;
  session: string;
  seq: number;
  part_count: number;
  metadata: { schema_version: number; [key: string]: unknown };
}

export interface StoredBlob {
  content_id: string;
  mime: string;
  size: number;
  /** Base64. */
  data: string;
}

/** What a page of a message store holds: every turn, the user messages, or summaries. */
export type PageOf = 'thread' | 'history' | 'list';

/** The item type of a page of `Of`. */
export type PageItem<Of extends PageOf> = Of extends 'history' ? UserMessage : Of extends 'list' ? MessageSummary : Turn;

/** One page of a session. */
export interface Page<T> {
  items: T[];
  /** This page's number. */
  page: number;
  /** The page before, or null. */
  prev: number | null;
  /** The page after, or null. */
  next: number | null;
}

export interface PageOptions<Of extends PageOf = 'thread'> {
  /** What the items are (default `thread`). */
  of?: Of;
  /** The page (default: the session's last). */
  page?: number;
  /** Sequence numbers per page: 10, 100 (default), 1000, 10000, 100000 or 1000000. */
  pageSize?: 10 | 100 | 1000 | 10000 | 100000 | 1000000;
}

export interface PagesOptions<Of extends PageOf = 'thread'> {
  of?: Of;
  pageSize?: PageOptions['pageSize'];
  /** Default `oldest-first`. */
  order?: 'oldest-first' | 'newest-first';
  /** Stops the iteration before its next read (`Aborted`). */
  signal?: AbortSignal;
}

export interface MessageStore {
  readonly name: string;
  readonly backend: 'indexeddb' | 'memory' | 'host';
  /** In the current shape (older rows are upgraded on read). Throws `NotFound`. */
  get(id: string): Promise<UserMessage>;
  /** The user messages of `session`, in order (`thread` has every turn). */
  history(session?: string): Promise<UserMessage[]>;
  /** Every turn of `session` — user, assistant, tool, system — in order. */
  thread(session?: string): Promise<Turn[]>;
  /** Persists a turn of any role after the session's last message. */
  append(turn: Turn, options?: { session?: string; id?: string; now?: () => number }): Promise<{ id: string; session: string; seq: number; turn: Turn }>;
  /** Persists several turns after the session's last message in one write, each with its own id (a branch's copy of the turns it keeps). */
  appendTurns(turns: Turn[], options?: { session?: string; now?: () => number }): Promise<{ ids: string[]; session: string; turns: Turn[] }>;
  /**
   * Keeps `draft` — the reply `session` is reading so far, and the relayed run reading it —
   * as its draft (a page that goes away mid-reply finds it again with `draft()`); it stands
   * until a turn is stored after the session's last message. Resolves whether anything was
   * kept (a reply with no text yet and no run is not).
   */
  saveDraft(draft: { turn?: Turn; run?: string }, options?: { session?: string }): Promise<boolean>;
  /** The reply `session` was reading when its page went away (`turn` cut: text, `metadata.cut`; `run` to attach to), or null. */
  draft(session?: string): Promise<{ turn?: AssistantTurn; run?: string } | null>;
  /** Drops `session`'s draft. */
  dropDraft(session?: string): Promise<void>;
  list(session?: string): Promise<MessageSummary[]>;
  /**
   * One page of `session`, reading that page's rows only. A page spans `pageSize` sequence
   * numbers (10, 100 — the default — 1000, … 1000000: each page is one key prefix, so every
   * backend reads it with one scan); page `n` of 100 holds sequence numbers 100n … 100n+99.
   * Without `page`, the session's last page. `prev` and `next` are the neighbouring page
   * numbers, or null at either end.
   */
  page<Of extends PageOf = 'thread'>(session?: string, options?: PageOptions<Of>): Promise<Page<PageItem<Of>>>;
  /**
   * The session page by page (non-empty pages only), oldest first or newest first; the
   * items within a page are in turn order either way. A chat view reads the newest page
   * first and the older ones as the user scrolls back.
   */
  pages<Of extends PageOf = 'thread'>(session?: string, options?: PagesOptions<Of>): AsyncIterableIterator<Page<PageItem<Of>>>;
  blob(contentId: string): Promise<StoredBlob | null>;
  /**
   * Stores a composer invocation record beside the thread's turns (`promptloom/composer`
   * entry; the `invocation_record` of a composition or of a compose error's details).
   */
  recordInvocation(record: object): Promise<void>;
  /** A thread's invocation records, in composition order (`promptloom/composer` entry). */
  invocations(threadId: string): Promise<Array<Record<string, unknown>>>;
  close(): void;
}

// ---------------------------------------------------------------------------------------
// Conversations

/** Instructions in the conversation (`developer`: OpenAI's name for them). */
export interface SystemTurn {
  role: 'system' | 'developer';
  parts: Array<{ type: 'text'; text: string }>;
  metadata?: Record<string, unknown>;
}

/** Visible assistant text, with the sources it cites. */
export interface AssistantTextPart {
  type: 'text';
  text: string;
  citations?: Citation[];
}

/**
 * Reasoning with what its provider needs to accept it back: Anthropic's `signature` (or
 * `redacted` with `data`), OpenAI's reasoning item `id` and encrypted content (in
 * `signature`), Gemini's `thoughtSignature` (in `signature`). It is sent back only to the
 * provider that made it (`provider`), and dropped with a report elsewhere.
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  signature?: string;
  redacted?: boolean;
  data?: string;
  id?: string;
  provider?: 'anthropic' | 'openai' | 'openai-responses' | 'openai-chat' | 'gemini' | 'google' | (string & {});
  /** The server's own reasoning items (OpenRouter's `reasoning_details`, merged as they streamed). */
  details?: Record<string, unknown>[];
}

/** A tool call the model made; `input` is an object (a string of JSON is read as it). */
export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  input: unknown;
  /** Gemini's `thoughtSignature` on a function call. */
  signature?: string;
  provider?: string;
  /**
   * Not a function call: `custom` (a custom tool; `input` is its text) or a call of a
   * provider tool the host runs: `apply_patch` (`input`: the operation), `shell` / `local_shell`
   * (`input`: the action), `tool_search` (`input`: the arguments), `mcp_approval` (an MCP
   * server asks to run `name`; answer `true`, `false` or `{ approve, reason? }`). Its result
   * goes back in the provider's own item type (`custom_tool_call_output`,
   * `apply_patch_call_output`, `shell_call_output`, `mcp_approval_response`, …).
   */
  kind?: 'custom' | 'apply_patch' | 'shell' | 'local_shell' | 'tool_search' | 'mcp_approval' | (string & {});
  /** The provider's own item for the call, sent back verbatim to that provider. */
  data?: Record<string, unknown>;
}

/**
 * A block or item the provider sent that this version does not model (a server tool's call
 * and result, a compaction, code execution), kept verbatim. It goes back, as received, to
 * the provider that sent it (`provider`: its wire name); another provider does not get it
 * (a `provider-data-dropped` note in the report).
 */
export interface ProviderDataPart {
  type: 'provider-data';
  provider: Provider | 'openai';
  data: Record<string, unknown>;
}

export type AssistantPart = AssistantTextPart | ReasoningPart | ToolCallPart | ProviderDataPart;

export interface AssistantTurn {
  role: 'assistant';
  parts: AssistantPart[];
  metadata?: Record<string, unknown>;
}

/**
 * What a tool answered: `output`, its text (a string) or its JSON (any other value, sent as
 * that JSON whatever its shape: an array of objects with a `type` is data), or `content`,
 * message parts (text, images, PDFs: native where the provider takes media in tool results,
 * a descriptor otherwise). One or the other. (Turns of schema version 1 and 2, as stored
 * threads hold them, kept parts in `output`; they are read as they were written.)
 */
export type ToolResultPart = {
  type: 'tool-result';
  call_id: string;
  /** The tool's name (taken from its call when absent). */
  name?: string;
  is_error?: boolean;
} & ({ output: unknown; content?: never } | { content: Part[]; output?: never });

export interface ToolTurn {
  role: 'tool';
  parts: ToolResultPart[];
  metadata?: Record<string, unknown>;
}

/** One turn of a conversation: the user's message is the compositor's UserMessage. */
export type Turn = SystemTurn | UserMessage | AssistantTurn | ToolTurn;

/** Prompt caching: Anthropic `cache_control` breakpoints (`ttl`), OpenAI `prompt_cache_key` (`key`). */
export type CacheOption = boolean | { breakpoints?: boolean; ttl?: '5m' | '1h'; key?: string };

/**
 * Context fit: leave the oldest turns out so the request fits the model's context window
 * (from the model table, or `modelInfo.contextWindow`) with `reserve` tokens left for the
 * answer (default: `maxOutputTokens`, else the model's largest output). Whole turns go,
 * up to a user turn, so tool calls stay with their results; system turns stay. `'mark'`
 * puts a short note where they were; `keepFirst` keeps the first user turn too. Each turn
 * left out is a `TurnDropped` repair; the estimate is `report.fit`. A last user turn that alone does not fit: `ContextTooLong`.
 */
export type FitOption = true | { reserve?: number; strategy?: 'drop' | 'mark'; /** Keep the first user turn (the task as first put) too. */ keepFirst?: boolean };

export interface ConversationOptions extends Omit<LowerOptions, 'resolve'> {
  cache?: CacheOption;
  fit?: FitOption;
}

export interface LoweredConversation {
  readonly body: string;
  readonly report: ConversationReport;
  json(): Record<string, unknown>;
}

/**
 * Lowers a whole conversation, synchronously (a resolver answering a Promise, or a `store`,
 * is refused naming `lowerConversationAsync`).
 */
export declare function lowerConversation(turns: Turn[], options: ConversationOptions & { resolve?: (request: ResolveRequest & { turn: number }) => ResolveAnswer; store?: undefined }): LoweredConversation;
/** `lowerConversation`, always as a Promise: the resolver may answer Promises; `store` serves blobs. */
export declare function lowerConversationAsync(turns: Turn[], options: ConversationOptions & { resolve?: (request: ResolveRequest & { turn: number }) => ResolveAnswer | Promise<ResolveAnswer> }): Promise<LoweredConversation>;

/** What a Conversation is made with. */
export interface ConversationInit {
  /** Persists every appended turn (then `append` answers with a Promise). */
  store?: MessageStore;
  session?: string;
  cacheBytes?: number;
  /** What `lower()` uses when it is called without options. */
  options?: ConversationOptions;
}

/**
 * Makes conversations. `new Conversation({ store })` persists its turns, and its `append`
 * answers with a Promise; without a store `append` answers at once.
 */
export interface ConversationConstructor {
  new (init: ConversationInit & { store: MessageStore }): Conversation<true>;
  new (init?: ConversationInit & { store?: undefined }): Conversation<false>;
  /** The stored thread of `session`. */
  load(init: ConversationInit & { store: MessageStore }): Promise<Conversation<true>>;
  readonly prototype: Conversation;
}

/**
 * A conversation kept in wasm with a bounded cache of its lowered turns. With a `store`,
 * each appended turn is persisted before `append` resolves.
 */
export declare const Conversation: ConversationConstructor;

/**
 * A conversation: `Persisted` is `true` for one made with a store (its `append` answers with
 * a Promise), `false` for one without (its `append` answers at once).
 */
export interface Conversation<Persisted extends boolean = boolean> {
  /**
   * Appends a turn; a user turn's file-refs are resolved now, with a resolver that answers
   * at once (an async one: `appendAsync`). The turn's index, a Promise of it with a store.
   */
  append(turn: Turn, options?: { resolve?: (request: ResolveRequest & { turn: number }) => ResolveAnswer }): Persisted extends true ? Promise<number> : number;
  /** `append`, always as a Promise: the resolver may answer Promises. */
  appendAsync(turn: Turn, options?: { resolve?: (request: ResolveRequest & { turn: number }) => ResolveAnswer | Promise<ResolveAnswer> }): Promise<number>;
  /**
   * Lowers the conversation. The body is built from the previous one (only what changed
   * crosses from wasm); the report is written when read, and can be read until 8 more
   * lowerings of the same conversation.
   */
  lower(options?: ConversationOptions): LoweredConversation;
  readonly turns: Turn[];
  /** The options given at construction (what `lower()` without options uses). */
  readonly options: ConversationOptions | undefined;
  readonly length: number;
  truncate(n: number): void;
  cacheStats(): CacheStats;
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
}

// ---------------------------------------------------------------------------------------
// The response side: parsing what a provider sends back, and model adapters

/** What the parser records in the final turn's `metadata`. */
export interface ResponseMetadata {
  provider: Provider;
  id?: string;
  model?: string;
  finish_reason?: FinishReason;
  /** The provider's own stop reason (`end_turn`, `tool_calls`, `MAX_TOKENS`, …). */
  stop_reason?: string;
  usage?: Usage;
  /** Set when something went wrong: the first error's code and message. */
  error?: { code: ErrorCode; message: string };
  refusal?: boolean;
  schema_version: number;
  [key: string]: unknown;
}

/** The assistant turn a response becomes (append it to a Conversation as it is). */
export interface ResponseTurn extends AssistantTurn {
  metadata: ResponseMetadata;
}

/** Reads one response chunk by chunk (an SSE stream, a Gemini JSON-array stream, or a whole body). */
/** Options of a response parser. */
export interface ResponseParserOptions {
  /**
   * The lowered request (its body, or the Lowered). When it asked for a JSON answer
   * (`output`), `object-delta` events carry the answer's edits and `object` (the partial
   * object so far, one object updated in place), and the turn's `metadata.object` is the
   * whole answer parsed (an `InvalidOutput` error keeps the text when it is not JSON).
   */
  request?: string | Uint8Array | Lowered;
}

export declare class ResponseParser {
  constructor(provider: Provider, options?: ResponseParserOptions);
  readonly provider: Provider;
  /** The JSON answer so far (a request that asked for one), or undefined. */
  readonly object: unknown;
  /** Feeds the next bytes (split anywhere); returns the events they complete. */
  push(chunk: Uint8Array | ArrayBuffer | ArrayBufferView | string): ResponseEvent[];
  /** Ends the response; returns the closing events (a cut call, usage, finish, a `StreamTruncated` error). */
  end(): ResponseEvent[];
  /** Ends the response (if needed) and returns the assistant turn. */
  finish(): ResponseTurn;
  /** The assistant turn as read so far. */
  readonly turn: ResponseTurn;
  /** The first error so far, or null. */
  readonly error: PromptloomError | null;
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
}

export declare function createResponseParser(provider: Provider, options?: ResponseParserOptions): ResponseParser;

/** Parses a whole response body; a provider error body throws its code. */
export declare function parseResponse(provider: Provider, body: string | Uint8Array | ArrayBuffer | object, options?: ResponseParserOptions): ResponseTurn;

/** The PromptloomError of an HTTP error response (`retry-after` read from `headers`). */
export declare function providerError(
  provider: Provider,
  response: { status: number; body?: string | object; headers?: Headers | Record<string, string>; retryAfterMs?: number },
): PromptloomError;

/** How an adapter retries 429 / 5xx / overloaded answers and network failures. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** The first backoff in ms, doubled each retry, with equal jitter (default 500). */
  initialDelayMs?: number;
  /** The cap of one backoff (default 8000). */
  maxDelayMs?: number;
  /** A provider's `retry-after` longer than this is not waited for (default 60000). */
  maxRetryAfterMs?: number;
}

export interface AdapterOptions {
  provider: Provider;
  apiKey?: string;
  /** Extra headers (they win over the adapter's). */
  headers?: Record<string, string>;
  /** The SDK convention: Anthropic without a version, OpenAI ending in `/v1`, Gemini in `/v1beta`. */
  baseURL?: string;
  /**
   * Gemini: the model (it goes in the URL). Optional when each request is sent as its
   * `Lowered` with the `model` setting (its `report.call` wins).
   */
  model?: string;
  /**
   * Gemini: stream (default) or `generateContent`; a `Lowered` with the `stream` setting
   * decides for itself. The others stream when the body says `"stream": true`.
   */
  stream?: boolean;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Anthropic from a browser page or a Web Worker of one: the CORS header (default: on in a browser, off in Node, Deno, Bun and workerd). */
  browser?: boolean;
  /** Anthropic's `anthropic-version`. */
  apiVersion?: string;
  /**
   * Silence allowed while waiting for the answer or between two chunks of it (default
   * 120000 ms; 0: none). Before any content it is a retryable `AdapterFailed`; after it the
   * stream is cut (`StreamTruncated`, what came is kept).
   */
  idleTimeoutMs?: number;
}

/**
 * One request's answer: iterate it for the events; `turn` is the final assistant turn.
 * A provider error, a cut or malformed stream or an abort throws a PromptloomError whose
 * `turn` holds what was read.
 */
export declare class ResponseStream implements AsyncIterable<ResponseEvent> {
  [Symbol.asyncIterator](): AsyncIterator<ResponseEvent>;
  /** The events in batches: one array per network chunk the parser completed. */
  batches(): AsyncIterableIterator<ResponseEvent[]>;
  readonly turn: Promise<ResponseTurn>;
  text(): Promise<string>;
  /** Attempts made (retries + 1). */
  readonly attempts: number;
  /** The HTTP status of the answer read. */
  readonly status: number;
  /** The provider whose answer this is (from `readEventStream`: once the stream said). */
  readonly provider: Provider | undefined;
  /** From `relayAdapter` with `reconnect`: the run the reply belongs to (`x-promptloom-run`). */
  run?: string;
  /**
   * From `readEventStream`: the id of the last event read whole, as the stream goes and once
   * it ended (or failed), which a reconnect asks to resume after (SSE's `Last-Event-ID`).
   */
  readonly lastEventId: string | undefined;
  /**
   * The answer as the event stream a page reads with `readEventStream()` (the
   * `promptloom-events` protocol, version 1: SSE bytes). It consumes this stream: the
   * events as they come, then the final turn; a failure ends it with its error event and
   * the turn read before it. Cancelling the readable cancels the request.
   */
  toReadableStream(): ReadableStream<Uint8Array>;
  /**
   * `toReadableStream()` as an HTTP response: status 200, `content-type: text/event-stream;
   * charset=utf-8`, `cache-control: no-cache, no-transform`; `init` adds headers or sets
   * the status.
   */
  toResponse(init?: ResponseInit): Response;
}

/**
 * Reads the event stream a server wrote with `stream.toResponse()`: the same events, the
 * same final turn and the same errors as the server's adapter gave (a provider error throws
 * its code). A server answer that is not a stream (an HTTP error) throws the server's
 * `{ code, message }` or `AdapterFailed`; a stream cut before its end throws
 * `StreamTruncated` with the turn read so far in `error.turn`.
 */
export declare function readEventStream(
  source: Response | Promise<Response> | ReadableStream<Uint8Array>,
  options?: {
    signal?: AbortSignal;
    /**
     * A connection that breaks before the turn is picked up again: answer the server's
     * replay from `lastEventId` (an `EventStreamLog`'s); each event is seen once.
     */
    reconnect?: (lastEventId: string | undefined) => Response | Promise<Response> | ReadableStream<Uint8Array>;
    /** Reconnects allowed (default 3). */
    retries?: number;
  },
): ResponseStream;

/**
 * The page half of a relay: an adapter that posts each lowered body to `endpoint` (a server
 * that sends it with its own adapter and key, and answers `stream.toResponse()`) and reads
 * the event stream back with `readEventStream`.
 */
export declare function relayAdapter(options: {
  endpoint: string | URL;
  provider: Provider;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /**
   * Pick a broken reply up again (true: up to 3 reconnects; a number: that many): each
   * request names its run (`x-promptloom-run`), and a reconnect is a `GET` of `endpoint`
   * with the run and `last-event-id`, which a server answers with its `EventStreamLog`'s replay.
   */
  reconnect?: boolean | number;
  /** The run ids (default: random UUIDs). */
  nonce?: () => string;
}): Adapter;

/**
 * The server's copy of an event stream, for pages that reconnect: `record(readable)` passes
 * the stream on to the page and keeps its frames (read to the end even if the page goes
 * away); `replay(lastEventId)` is what a reconnecting page is sent — the `open` event, the
 * events after that id, then the rest as it comes. Keep it where the run lives (a Durable
 * Object, a server's memory); with `keep` and `kept`, it outlives the process.
 */
export declare class EventStreamLog {
  constructor(options?: {
    /** The text an earlier log kept (what `keep` was given, joined): this log is that recording, ended. */
    kept?: string;
    /** Called with each piece of text recorded, in order: append it to storage (a Promise it answers is not awaited). */
    keep?: (text: string) => unknown;
  });
  /** Whether the recorded stream ended. */
  readonly finished: boolean;
  /** Keeps the frames of `readable` (`stream.toReadableStream()`); returns the stream to send the page. */
  record(readable: ReadableStream<Uint8Array>): ReadableStream<Uint8Array>;
  /** What a page that read up to event `lastEventId` (none: nothing) is sent, until the stream ends. */
  replay(lastEventId?: string | null): ReadableStream<Uint8Array>;
}

/** A chat's state: `loading` until the thread is read, `submitted` while a request waits, `streaming`, `awaiting-approval` (a tool asks), `ready`, or `error` (the last run failed). */
export type ChatStatus = 'loading' | 'ready' | 'submitted' | 'streaming' | 'awaiting-approval' | 'error';

/** A part of a chat message as a panel shows it. */
export type ChatPart =
  /** A user message's part: the compositor's chip (`label` is what the user sees). */
  | { part: number; type: string; label: string; detail?: string }
  | { type: 'text'; text: string; citations?: Citation[] }
  | { type: 'reasoning'; text: string; redacted?: true }
  | {
      type: 'tool-call';
      id: string;
      name: string;
      /** The arguments (undefined while they stream: `inputText` holds them so far). */
      input: unknown;
      inputText?: string;
      kind?: string;
      state: 'input-streaming' | 'input-available' | 'approval-requested' | 'output-available' | 'output-error';
      /** The tool's answer (`output-available`). */
      output?: unknown;
      /** The tool's answer as message parts, as chips. */
      content?: Array<{ part: number; type: string; label: string; detail?: string }>;
      /** What the tool (or a refusal) said (`output-error`). */
      error?: string;
    }
  /** Tool results that answer no call of the message before (`role: 'tool'`). */
  | { type: 'tool-result'; call_id: string; name?: string; state: 'output-available' | 'output-error'; output?: unknown; content?: unknown[]; error?: string };

/** One message of a chat: a turn of the thread as a panel shows it (tool results folded into their calls). */
export interface ChatMessage {
  /** The stored turn's id (`<session>/<seq>`); `pending` for the reply streaming. */
  id: string;
  /** The turn's index in the thread (absent on the pending reply). */
  turn?: number;
  role: 'user' | 'assistant' | 'tool' | 'system' | 'developer';
  parts: ChatPart[];
  /** An assistant message: `done`, `cut` (the user stopped it: what was shown is kept), `streaming`, or `error` (the pending reply of a failed run). */
  status?: 'done' | 'cut' | 'streaming' | 'error';
  finish_reason?: FinishReason;
  usage?: Partial<Usage>;
  model?: string;
  /** The JSON answer so far (a request with `output`). */
  object?: unknown;
  /** When it was stored (epoch ms). */
  at?: number;
}

/** What `getSnapshot()` answers: frozen, a new object on every change, the unchanged messages shared. */
export interface ChatSnapshot {
  /** The thread shown (a regenerate or an edit moves to a branch: `<root>~<nonce>`). */
  readonly session: string;
  readonly status: ChatStatus;
  /** The settled messages (a streamed token leaves this array as it was). */
  readonly messages: readonly ChatMessage[];
  /** The reply streaming, or null. */
  readonly pending: ChatMessage | null;
  readonly error: PromptloomError | null;
  /**
   * The relayed run of the request in flight (`endpoint` with `reconnect`), or null: keep it
   * (beside the thread) to attach to the reply after a reload, `resume({ attach: run })`.
   */
  readonly run: string | null;
}

/** What `send` and `edit` take: the message's parts, a message, or text. */
export type ChatInput = string | Part[] | UserMessage;

/** A chat tool: a tool definition, and whether each call waits for the user's approval. */
export type ChatTool = Tool & { needsApproval?: boolean };

export interface ChatInit<T extends readonly ChatTool[] = ChatTool[]> {
  /** The message store the thread lives in (`openMessageStore`). */
  store: MessageStore;
  /** The thread (default `default`). */
  session?: string;
  /** The lowering options of every request (`provider` included; model, tokens, system, caching, fit, …). */
  settings: ConversationOptions;
  /** An adapter that calls the provider (`createAdapter`), or… */
  adapter?: Adapter;
  /** …the URL of a server that relays it (`relayAdapter`): the key stays there. */
  endpoint?: string | URL;
  /** Headers of the requests to `endpoint`. */
  headers?: Record<string, string>;
  /** With `endpoint`: pick a broken reply up again from the server's `EventStreamLog` (see `relayAdapter`). */
  reconnect?: boolean | number;
  /** Tools offered to the model; `needsApproval: true` makes each call wait for `approve`. */
  tools?: T;
  /** Handlers by tool name, as `runAgent` takes them. */
  handlers?: { [N in ToolName<T>]?: ToolHandler<ToolInput<Extract<T[number], { name: N }>>> };
  /** Model requests per message at most (default 8). */
  maxSteps?: number;
  /** Commands and mention kinds of the messages sent (`submit`). */
  catalog?: CommandCatalog;
  resolve?: SubmitOptions['resolve'];
  mentions?: SubmitOptions['mentions'];
  /** A unique id for each branch's session (default: random). */
  nonce?: () => string;
  /** An Arbiter or a Session running a SkillSpec in `lane` (`promptloom/composer`), as `runAgent` takes them: every call is proposed to it first. */
  arbiter?: AgentOptions['arbiter'];
  lane?: string;
  /** Sees every event of every request, with its step (as `runAgent`'s). */
  onEvent?: (event: ResponseEvent, step: number) => void | Promise<void>;
  /** Sees each assistant turn as it ends, with its step. */
  onTurn?: (turn: ResponseTurn, step: number) => void | Promise<void>;
  /**
   * The reply streaming is saved as the thread's draft at most every `draft` ms (default
   * 500; `false`: never), so a page reloaded mid-reply shows it, cut — or, with `endpoint`
   * and `reconnect`, names the relayed run in its snapshot's `run` (attach to it).
   */
  draft?: number | false;
}

/** One run's options over the chat's own (`send`, `regenerate`, `edit`, `resume`). */
export interface ChatRunOptions {
  /** Lowering options over the chat's `settings` (another model, a system text; a `provider` with its `adapter`). */
  settings?: Partial<ConversationOptions>;
  /** Another adapter for this run. */
  adapter?: Adapter;
  /** An Arbiter or a Session running a SkillSpec in `lane`, for this run. */
  arbiter?: AgentOptions['arbiter'];
  lane?: string;
  /**
   * `resume` after a reload: the first request attaches to this relayed run (a snapshot's
   * `run`), whose reply the server is reading, instead of asking the provider again.
   */
  attach?: string;
}

/** How a `send`, `regenerate` or `edit` ended. */
export interface ChatOutcome {
  /** `actions`: the message was host actions only (`/branch`, …), not sent; `error`: the run failed (`error`). */
  stop: AgentResult['stop'] | 'actions' | 'error';
  /** Model requests made. */
  steps?: number;
  /** Token counts summed over the steps. */
  usage?: Partial<Usage>;
  /** The stored message (`send` and `edit`). */
  submission?: Submission;
  error?: PromptloomError;
}

/**
 * A chat over one thread of a message store, for any UI: `messages` as a panel shows them,
 * the reply streaming into `pending`, `send` (stored before anything is sent), `stop`,
 * `regenerate` and `edit` (branches: the old thread stays), tool approval, and
 * `subscribe` / `getSnapshot` for React's `useSyncExternalStore`, Vue, Svelte or the DOM.
 */
export declare class Chat<const T extends readonly ChatTool[] = ChatTool[]> {
  constructor(init: ChatInit<T>);
  /** A chat with its thread read. */
  static open<const T extends readonly ChatTool[] = ChatTool[]>(init: ChatInit<T>): Promise<Chat<T>>;
  /** Resolves once the thread is read. */
  readonly ready: Promise<void>;
  readonly session: string;
  readonly messages: readonly ChatMessage[];
  readonly status: ChatStatus;
  readonly error: PromptloomError | null;
  /** The current state (a stable function: pass it as it is). */
  readonly getSnapshot: () => ChatSnapshot;
  /** Calls `listener` after every change; returns the function that stops it (a stable function). */
  readonly subscribe: (listener: () => void) => () => void;
  /** Stores the message, shows it and streams the reply. A message that cannot be stored rejects. */
  send(input: ChatInput, options?: ChatRunOptions): Promise<ChatOutcome>;
  /** Runs the thread on with no new message: calls a reload left unanswered first (approval asked again), or an answer to the last user message. */
  resume(options?: ChatRunOptions): Promise<ChatOutcome>;
  /** Stops the reply; what was shown is kept, marked `cut`. */
  stop(): void;
  /** Answers the last user message again (in a branch when a reply is dropped). */
  regenerate(options?: ChatRunOptions): Promise<ChatOutcome>;
  /** Replaces user message `id` in a branch and sends it. */
  edit(id: string, input: ChatInput, options?: ChatRunOptions): Promise<ChatOutcome>;
  /** The thread lowered as the next request would send it (`settings` over the chat's): body and report. */
  lower(settings?: Partial<ConversationOptions>): LoweredConversation;
  /** Answers a tool call waiting for approval. */
  approve(callId: string, answer: boolean | { approve: boolean; reason?: string }): void;
}

/** What `serveWorker` serves to the page's `connectWorker` (`promptloom/remote`). */
export interface ServeWorkerOptions {
  /**
   * Makes the chat the page opens with `remote.chat(init)`: a `Chat`, or the options of one
   * (the store, the adapter, handlers and observers live here; `init` is what the page sent).
   */
  chat?: (init: any) => Chat | ChatInit | Promise<Chat | ChatInit>;
  /** Functions the page runs with `remote.call(name, …args)`; arguments and results are structured-cloned. */
  functions?: Record<string, (...args: any[]) => unknown>;
  /** Where the page's messages come from (default: the worker's global scope): a MessagePort, or Node's `parentPort`. */
  port?: { postMessage(message: unknown): void; addEventListener?: Function; on?: Function };
}

/**
 * Serves promptloom from a Web Worker to the page's `connectWorker` (`promptloom/remote`):
 * the chats its factory makes (their snapshots go to the page as patches) and `functions`.
 * Returns the function that stops serving.
 */
export declare function serveWorker(options: ServeWorkerOptions): () => void;

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  error: PromptloomError;
}

/** What `send` and `generate` take beside the body. */
export interface SendOptions {
  signal?: AbortSignal;
  onRetry?: (info: RetryInfo) => void;
}

export interface Adapter {
  readonly provider: Provider;
  /** The model given to `createAdapter()`, if any. */
  readonly model: string | undefined;
  /** The adapter's own URL (undefined for Gemini without a `model`: each Lowered names it). */
  readonly url: string | undefined;
  /**
   * Posts the lowered body's bytes as they are. Given a `Lowered` (from `lower`,
   * `lowerConversation`, `Conversation.lower`), the URL follows the model and streaming
   * it was lowered with (`report.call`), and a JSON answer (`output`) is read as it comes.
   */
  send(body: string | Uint8Array | { body: string; report?: { call?: Call } }, options?: SendOptions & { attach?: string }): ResponseStream;
  /** Sends and waits for the whole answer: the assistant turn (`send(body).turn`). */
  generate(body: string | Uint8Array | { body: string; report?: { call?: Call } }, options?: SendOptions): Promise<ResponseTurn>;
}

export declare function createAdapter(options: AdapterOptions): Adapter;

/** A tool handler of the agent loop: its output goes back as the tool result (a throw: an error result). */
export type ToolHandler<I = any> = (input: I, context: { call: ToolCallPart; signal?: AbortSignal }) => unknown | Promise<unknown>;

export interface AgentOptions<T extends readonly Tool[] = Tool[]> {
  conversation: Conversation;
  adapter: Adapter;
  /** Tool definitions offered to the model (`{ name, description?, inputSchema? }`). */
  tools?: T;
  /** Handlers by tool name; each one's input is typed from its tool's Standard Schema. */
  handlers?: { [N in ToolName<T>]?: ToolHandler<ToolInput<Extract<T[number], { name: N }>>> };
  /** The lowering options of every step, over the conversation's own (provider, params, system, …). */
  lower?: Partial<ConversationOptions>;
  /** Model requests at most (default 8). */
  maxSteps?: number;
  signal?: AbortSignal;
  /** An Arbiter or a Session (promptloom/composer) running a SkillSpec in `lane`: every call is proposed to it first (a Session stores each proposal in its log). */
  arbiter?: { stepOffer(lane: string, tools?: unknown[]): unknown; proposeCall(lane: string, call: unknown, offer: any): unknown; run(lane: string): unknown };
  lane?: string;
  onEvent?: (event: ResponseEvent, step: number) => void;
  onTurn?: (turn: ResponseTurn, step: number) => void;
}

export interface AgentResult {
  /** `final`: the model answered without tool calls; `arbiter`: the skill's run ended. */
  stop: 'final' | 'arbiter' | 'max-steps' | 'aborted';
  steps: number;
  /** The last assistant turn. */
  turn: ResponseTurn | null;
  /** Token counts summed over the steps. */
  usage: Partial<Usage>;
  /**
   * The final answer parsed as JSON, when the request asked for one (the `output` setting
   * in the options `lower` gives): the last turn's `metadata.object`.
   */
  object?: unknown;
  /** The arbiter's run, when there is one. */
  run?: unknown;
  error?: PromptloomError;
}

/** Runs a conversation turn by turn until the final answer (see docs/responses.md, the agent loop). */
export declare function runAgent<const T extends readonly Tool[] = Tool[]>(options: AgentOptions<T>): Promise<AgentResult>;

export declare function openMessageStore(options?: { backend?: 'indexeddb' | 'memory' | HostKeyValue; name?: string }): Promise<MessageStore>;

/** The user view of one part. */
export interface Chip {
  part: number;
  type: string;
  label: string;
  detail?: string;
}

/** The inspector's three views of one message. */
export declare function inspect(
  message: UserMessage,
  options: LowerOptions,
): Promise<{
  user: Chip[];
  persisted: UserMessage;
  model: { body: Record<string, unknown>; report: LoweringReport } | { error: { code: ErrorCode; message: string } };
}>;

// ---- Skill packages, the skill store, the catalog --------------------------------------

/** The six artifact kinds. */
export type ArtifactKind = 'description' | 'prompt_template' | 'code_template' | 'dspy_module' | 'approach' | 'example';

/** Where a skill came from. */
export type SkillSource = 'system' | 'community' | 'user';

/**
 * A condition (`include_when` on descriptions, `when` on approaches and interrupts):
 * always, never, the invocation's scope, a parameter (present, or equal to a value), or a
 * combination.
 */
export type Condition =
  | 'always'
  | 'never'
  | { scope: 'workspace' | 'channel' }
  | { parameter: string; equals?: unknown }
  | { any: Condition[] }
  | { all: Condition[] }
  | { not: Condition };

/** An assertion on an artifact's output (checked by the composer's dispatcher). */
export type Assertion = { severity?: 'hard' | 'soft' } & (
  | { type: 'structural'; check?: 'json_schema'; schema: JsonSchema }
  | { type: 'length'; check?: 'char_range' | 'token_range' | 'word_range'; min?: number; max?: number }
  | { type: 'pattern'; check?: string; pattern: string; must_match?: boolean }
  | { type: 'semantic'; check?: 'llm_eval'; prompt: string; expected?: string }
);

/** A JSON Schema document (checked for well-formedness on import). */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** Kind-specific artifact metadata; unknown keys are kept. */
export interface ArtifactMetadata {
  /** `description`: when the composer includes it. */
  include_when?: Condition;
  /** `example`: tags the composer matches against. */
  tags?: string[];
  /** `dspy_module`: the `prompt_template` to run without a host DSPy executor. */
  fallback_artifact?: string;
  /** `approach`: ordered stages (a staged subgraph). */
  stages?: Array<{ name: string; tools?: string[]; description?: string }>;
  /** `approach`: the tool subset for invocations it applies to (`when`). */
  tools?: string[];
  when?: Condition;
  /** Output assertions. */
  assertions?: Assertion[];
  /** Bundled `SKILL.md` files: their relative path, `include_when: "never"`, and `encoding: "base64"` for binary. */
  path?: string;
  encoding?: 'base64';
  [key: string]: unknown;
}

/** One artifact (a `skill_artifacts` row). */
export interface SkillArtifact {
  id: string;
  skill_id: string;
  kind: ArtifactKind;
  name: string;
  ordinal: number;
  content: string;
  /** null (or "default") is the default variant; else a model family key. */
  model_variant: string | null;
  metadata: ArtifactMetadata;
  state_blob: string | null;
  created_at: string;
  updated_at: string;
}

/** The composer's contract and format extras of a skill; unknown keys are kept. */
export interface SkillMetadata {
  /** Prose, or the name of a prompt_template (rendered) / description or approach (prose) artifact. */
  framing?: string | { artifact: string };
  /** JSON Schema of the invocation parameters (an object schema). */
  parameters?: JsonSchema;
  tool_surface?: string[];
  requires_tools?: boolean;
  interrupts?: Array<string | { name: string; when?: Condition; description?: string }>;
  output_schema?: JsonSchema;
  max_tool_calls?: number;
  planner_delegates_shape?: boolean;
  model_preference?: string;
  license?: string;
  compatibility?: string;
  /** The SKILL.md `metadata` map. */
  labels?: Record<string, string>;
  /** SKILL.md frontmatter keys outside the Agent Skills spec, kept for export. */
  frontmatter?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A skill package with its artifacts. */
export interface Skill {
  id: string;
  name: string;
  description: string;
  version: string;
  tags: string[];
  source: SkillSource;
  author: string | null;
  created_at: string;
  updated_at: string;
  intent_patterns: string[];
  trigger_phrases: string[];
  marketplace_id: string | null;
  sync_etag: string | null;
  metadata: SkillMetadata;
  artifacts: SkillArtifact[];
}

/** A package as written by hand or received: only `name` and `description` are required. */
export type SkillPackage = Partial<Omit<Skill, 'artifacts'>> & {
  name: string;
  description: string;
  artifacts?: Array<Partial<SkillArtifact> & { kind: ArtifactKind; name: string; content: string }>;
};

/** An artifact without its content. */
export interface ArtifactRef {
  id: string;
  kind: ArtifactKind;
  name: string;
  ordinal: number;
  model_variant: string | null;
  fallback?: string;
}

/** What listings return: metadata and artifact references, no content. */
export type SkillSummary = Omit<Skill, 'artifacts'> & { artifacts: ArtifactRef[] };

/** One problem of a package, with its JSON path and a stable code. */
export interface Problem {
  path: string;
  code: string;
  message: string;
  severity: 'error' | 'warning';
}

export declare function validateSkill(skill: SkillPackage | string): { valid: boolean; problems: Problem[] };
export declare function importPackage(pkg: SkillPackage | string, options?: { now?: () => number }): { skill: Skill; warnings: Problem[] };
export type BundledFiles = Record<string, string | Uint8Array | ArrayBuffer> | Array<{ path: string; content: string | Uint8Array }>;
export declare function importSkillMd(text: string, files?: BundledFiles, options?: { dir?: string; now?: () => number }): { skill: Skill; problems: Problem[] };
export declare function exportSkillMd(skill: Skill | SkillPackage): { text: string; files: Record<string, string | Uint8Array>; dropped: Problem[] };
export declare function modelFamily(model: string): string;
export declare function selectVariant<A extends SkillArtifact>(artifacts: A[], model: string): A | undefined;

export interface SkillStore {
  readonly name: string;
  readonly backend: 'indexeddb' | 'memory' | 'host';
  readonly version: number;
  /** Summaries by name; every given filter must hold (`enabled` reads `metadata.enabled` as matching does). */
  list(options?: { source?: SkillSource; tags?: string[]; enabled?: boolean }): Promise<SkillSummary[]>;
  get(id: string): Promise<Skill | null>;
  getByName(name: string): Promise<Skill | null>;
  getArtifacts(skillId: string, kinds?: ArtifactKind[]): Promise<SkillArtifact[]>;
  getArtifact(id: string): Promise<SkillArtifact | null>;
  /** Throws `AlreadyExists` when the id or name is taken, `InvalidSkill` listing every problem. */
  create(skill: SkillPackage | Skill): Promise<SkillSummary>;
  put(skill: SkillPackage | Skill): Promise<SkillSummary>;
  update(skill: SkillPackage | Skill): Promise<SkillSummary>;
  delete(id: string): Promise<{ deleted: string; artifacts: number }>;
  addArtifact(artifact: Partial<SkillArtifact> & { skill_id: string; kind: ArtifactKind; name: string; content: string }): Promise<SkillArtifact>;
  updateArtifact(artifact: Partial<SkillArtifact> & { id: string; skill_id: string; kind: ArtifactKind; name: string; content: string }): Promise<SkillArtifact>;
  deleteArtifact(id: string): Promise<{ deleted: string }>;
  /** The summary of the skill with this name or id (no artifact content), or null. */
  summary(nameOrId: string): Promise<SkillSummary | null>;
  /** Records an execution trace; returns the stored row (`promptloom/composer` entry). */
  recordTrace(trace: TraceInput): Promise<TraceRow>;
  /** Trace rows, by session / skill / artifact (`promptloom/composer` entry). */
  traces(filter?: TraceFilter): Promise<TraceRow[]>;
  /**
   * Trace rows as JSON lines, the seed's columns first; with `format: "dspy"`, a DSPy
   * evaluation dataset instead (`promptloom/composer` entry).
   */
  exportTraces(filter?: TraceFilter & { format?: 'jsonl' | 'dspy' }): Promise<string>;
  /**
   * One page of traces in key order (a session's in start order): at most `pageSize` rows
   * (default 100, at most 10,000) after the cursor `after` (a page's `next`; none: the
   * first page), filtered as `traces()` is. The backend reads one key range; a filter can
   * leave a page short, or empty, before the end (`promptloom/composer` entry).
   */
  tracePage(options?: TraceFilter & { after?: string | null; pageSize?: number }): Promise<TracePage>;
  /**
   * The traces page by page (the non-empty pages), following the cursors; each read is one
   * page, and an aborted `signal` stops it before the next (`promptloom/composer` entry).
   */
  tracePages(options?: TraceFilter & { pageSize?: number; signal?: AbortSignal }): AsyncIterableIterator<TracePage>;
  /**
   * Migrates the store to a system skills seed (`await systemSkills()`, or a host's own):
   * only skills the seed wrote are replaced or deleted; a store at this version or a newer
   * one is left alone. Throws `InvalidSkill` (every problem) for an invalid seed, before any write.
   * This is the bulk import: `onProgress` hears `{ phase: 'writing', done, total }` before
   * each skill's write and once all are written; an aborted `signal` stops it before the
   * next write (`Aborted`; the skills written stay, and seeding again finishes the job,
   * since the store's seed version is written last).
   */
  seed(document: SeedDocument | string, options?: LongRunOptions): Promise<SeedReport>;
  /** The SkillSpecs this store's enabled skills carry in `metadata.skill_spec`, by name. */
  skillSpecs(): Promise<import('./composer.js').SkillSpec[]>;
  /** What `openSkillStore({ seed })` did; null when opened without `seed`. */
  seeded: SeedReport | null;
  close(): void;
}

/** A system skills seed: the package's `system-skills.json`, or a host's own. */
export interface SeedDocument {
  /** A positive integer; a store migrates when its recorded version is older. */
  version: number;
  /** Skill packages, `source: "system"`; a state machine carries its SkillSpec in `metadata.skill_spec`. */
  skills: SkillPackage[];
}

/** What a seed migration did to a store. */
export interface SeedReport {
  status: 'created' | 'upgraded' | 'current' | 'newer';
  version: number;
  /** The version the store was at (0: never seeded). */
  previous: number;
  upserted: string[];
  unchanged: string[];
  /** System skills the seed dropped, deleted. */
  removed: string[];
  /** Seed skills not written (a skill of the store's own holds the id or name). */
  skipped: Array<{ name: string; problems: Problem[] }>;
}

/** The package's system skills (`tool-builder`, `skill-builder`): the seed a store's migration writes; loaded on first use. */
export declare function systemSkills(): Promise<SeedDocument>;
/** The SkillSpecs a seed document carries, by name (no store needed). Throws `InvalidSkill` for an invalid seed. */
export declare function seedSkillSpecs(document: SeedDocument | string): import('./composer.js').SkillSpec[];

export interface TraceFilter {
  sessionId?: string;
  skillId?: string;
  artifactId?: string;
}

/** One page of traces: its rows, and the cursor of the next page (`null` at the end). */
export interface TracePage {
  items: TraceRow[];
  /** Pass it as `after` to read the next page; null when the traces end here. */
  next: string | null;
}

/** What a host records of one artifact execution. */
export interface TraceInput {
  session_id: string;
  skill_id: string;
  artifact_id: string;
  artifact_kind: ArtifactKind;
  started_at: string;
  rendered_input?: string;
  raw_output?: string;
  error?: string;
  completed_at?: string;
  duration_ms?: number;
  input_tokens?: number;
  output_tokens?: number;
  model_id?: string;
  /** USD per million tokens; fills `estimated_cost`. */
  pricing?: { input_per_mtok: number; output_per_mtok: number };
  assertions_run?: number;
  assertions_passed?: number;
  assertions?: unknown[];
  route?: string;
  /** When the row was made (default: `completed_at`, else `started_at`). */
  created_at?: string;
  fallback_from?: string;
  /** Why a dspy_module's fallback template ran. */
  fallback_reason?: string;
}

/** A stored trace row: the seed's `skill_execution_traces` columns. */
export interface TraceRow {
  id: string;
  session_id: string;
  skill_id: string;
  artifact_id: string;
  artifact_kind: ArtifactKind;
  rendered_input: string | null;
  raw_output: string | null;
  error: string | null;
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  model_id: string | null;
  estimated_cost: number | null;
  assertions_run: number;
  assertions_passed: number;
  /** When the row was made. */
  created_at: string;
  assertions?: unknown[];
  route?: string;
  fallback_from?: string;
  /** Why a dspy_module's fallback template ran. */
  fallback_reason?: string;
}

/**
 * One line of `exportTraces({ format: "dspy" })`: an execution that gave output without an
 * error, as a DSPy example (`dspy.Example(**row).with_inputs(*row["dspy_inputs"])`).
 */
export interface DspyExample {
  rendered_input: string;
  raw_output: string;
  /** Every assertion held. */
  passed: boolean;
  /** Assertions passed / run; null when none ran. */
  score: number | null;
  skill_id: string;
  artifact_id: string;
  trace_id: string;
  dspy_inputs: ['rendered_input'];
}

/**
 * Opens a skill store. `seed: true` migrates it to the package's system skills (open the
 * account scope with it), or pass a seed document of your own; the report is `store.seeded`.
 */
export declare function openSkillStore(options?: { backend?: 'indexeddb' | 'memory' | HostKeyValue; name?: string; now?: () => number; seed?: boolean | SeedDocument }): Promise<SkillStore>;

export type CatalogEntry = SkillSummary & {
  scope: 'workspace' | 'account';
  overrides?: { scope: 'account'; id: string; version: string; source: SkillSource };
};

export interface Recommendation {
  id: string;
  name: string;
  scope: string;
  score: number;
  tier: 'exact' | 'scored';
  matched: Partial<Record<'name' | 'trigger_phrases' | 'intent_patterns' | 'tags' | 'description', string[]>>;
  trigger?: string;
  similarity?: number;
}

/** How the orchestrator decision weighs recommendations (the core's defaults in brackets). */
export interface DecisionPolicy {
  /** Share of the query's content terms a scored skill must match to be activated [0.5]. */
  activate?: number;
  /** A qualifying skill within this fraction of the best score contends with it [0.15]. */
  margin?: number;
  /** How many skills one decision activates; more contenders ask to clarify [1]. */
  maxSkills?: number;
  /** The embedding similarity that qualifies a skill on its own [0.8]. */
  similarity?: number;
}

/** One recommendation as the decision weighed it. */
export interface WeighedSkill {
  id: string;
  name: string;
  scope: string;
  score: number;
  tier: 'exact' | 'scored';
  /** Share of the query's content terms it matched. */
  coverage: number;
  /** Whether it qualified for activation. */
  qualifies: boolean;
  trigger?: string;
  similarity?: number;
  /** For an activated skill (from a catalog): the artifacts its run loads, in order. */
  artifacts?: string[];
}

/** The orchestrator decision (seed phase 2) and the scores that led to it. */
export interface Decision {
  action: 'direct' | 'activate' | 'research' | 'clarify';
  reason: 'exact' | 'scored' | 'ambiguous' | 'weak-match' | 'no-match' | 'no-terms';
  /** Activated, offered to choose from (clarify), or partly matched (research); empty for direct. */
  skills: WeighedSkill[];
  /** Every recommendation, weighed, in rank order. */
  scores: WeighedSkill[];
  /** The query's content terms (stemmed, stop words dropped). */
  terms: string[];
}

export interface MatchOptions {
  k?: number;
  /** The last word also matches as a prefix (search as you type); default true. */
  prefix?: boolean;
}

export declare class SkillIndex {
  constructor(summaries: Array<Partial<SkillSummary> & { id: string; name: string }>, options?: { vectors?: ArrayLike<number>[] });
  readonly size: number;
  setVectors(vectors: ArrayLike<number>[]): void;
  match(query: string, options?: MatchOptions & { vector?: ArrayLike<number>; blend?: number }): Recommendation[];
  /** `match()` then `decide()` with `options.policy` (the decision is built into the `promptloom/composer` module). */
  decide(query: string, options?: MatchOptions & { vector?: ArrayLike<number>; blend?: number; policy?: DecisionPolicy }): Decision;
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
}

export interface SyncReport {
  status: 'updated' | 'not-modified' | 'offline';
  etag: string | null;
  error?: string;
  upserted: string[];
  unchanged: string[];
  shadowed: string[];
  skipped: Array<{ name: string; problems: Problem[] }>;
}

export type Embed = (texts: string[], options: { signal?: AbortSignal }) => ArrayLike<number>[] | Promise<ArrayLike<number>[]>;

/** Where a long operation is: its phase, and how much of how much is done. */
export interface Progress {
  phase: string;
  done: number;
  total: number;
}

/**
 * The options every long operation takes: `signal` stops it with `Aborted` at its next step
 * (what it had done stays, and is said in each operation's documentation), and `onProgress`
 * hears each step.
 */
export interface LongRunOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export declare class SkillCatalog {
  /** Releases the wasm memory now (otherwise when collected); the next use builds it again. */
  free(): void;
  /** `free()`, for the `using` statement. */
  [Symbol.dispose](): void;
  constructor(workspace: SkillStore, account: SkillStore, options?: { embed?: Embed; blend?: number });
  readonly workspace: SkillStore;
  readonly account: SkillStore;
  list(): Promise<CatalogEntry[]>;
  get(name: string): Promise<(Skill & { scope: 'workspace' | 'account' }) | null>;
  load(name: string, kinds?: ArtifactKind[]): Promise<SkillArtifact[] | null>;
  /** Phases: `listed`, then with `embed` `embedding` and `embedded` (the signal reaches `embed`). */
  index(options?: { refresh?: boolean } & LongRunOptions): Promise<SkillIndex>;
  match(query: string, options?: MatchOptions): Promise<Recommendation[]>;
  /** Phase 1 then the orchestrator decision (built into the `promptloom/composer` module); an activated skill lists the `artifacts` its run loads. */
  decide(query: string, options?: MatchOptions & { policy?: DecisionPolicy }): Promise<Decision>;
  refresh(): void;
  /** The SkillSpecs both stores' enabled skills carry (a workspace fork wins by name), by name: for `buildSkillRegistry`. */
  skillSpecs(): Promise<import('./composer.js').SkillSpec[]>;
  /** Phases: `fetched`, `written`; the signal reaches `fetch`, and an abort before the writes changes nothing. */
  syncMarketplace(url: string, options?: { fetch?: (url: string, init: { headers: Record<string, string>; signal?: AbortSignal }) => Promise<Response>; now?: () => number } & LongRunOptions): Promise<SyncReport>;
}
