/**
 * promptloom — multipart user messages to provider-native LLM request bodies.
 *
 * Field names follow the compositor wire format (snake_case fields, kebab-case part types).
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
  parts?: Array<Part | UnknownPart>;
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

/** A part type this version does not know: kept, and lowered by its `text` if it has one. */
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
  parts: Array<Part | UnknownPart>;
  metadata?: { schema_version: number; [key: string]: unknown };
}

export type Provider = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/** A tool definition in the neutral shape; each provider gets its own form. */
export interface Tool {
  /** `^[a-zA-Z0-9_-]{1,64}$` */
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). Gemini receives its OpenAPI subset. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export interface MediaSupport {
  mimes: string[];
  /** The largest item, counted as sent: base64 characters (4/3 of the bytes). */
  max_bytes: number;
  urls: boolean;
}

/** What a target accepts natively. Override any part of it per model. */
export interface Capabilities {
  images: MediaSupport;
  pdf: MediaSupport;
  audio: MediaSupport;
  video: MediaSupport;
  max_images: number;
  /** Base64 characters of inline media per request. */
  max_request_bytes: number;
  inline_text_max_bytes: number;
  text_documents: boolean;
  /** Tool named in descriptors, by exact media type or class (`image`, `pdf`, `audio`, `video`, `text`, `binary`, `url`). */
  tool_routes: Record<string, string>;
}

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

export interface LowerOptions {
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
  /** Top-level body fields written first, verbatim (`model`, `max_tokens`, …). */
  params?: Record<string, unknown>;
}

export interface BlockNote {
  /** Index of the source part. */
  part: number;
  /** The rule applied: `text`, `file-ref-text`, `attachment-image`, `attachment-descriptor`, `editor-context`, … */
  rule: string;
  mime?: string;
}

export interface DropNote {
  part: number;
  rule: string;
  reason: string;
}

export type WarningCode =
  | 'MimeMismatch'
  | 'UnsupportedMedia'
  | 'UnrecognizedMedia'
  | 'TooLarge'
  | 'RequestLimit'
  | 'Unresolved'
  | 'ResolverFailed'
  | 'RangeClamped'
  | 'UnknownPartType'
  | 'UnresolvedMention'
  | 'SchemaKeyDropped'
  | 'NotText'
  | 'UnknownSkill'
  | 'PromptRole';

export interface Warning {
  /** The part, or null for options (tools). */
  part: number | null;
  code: WarningCode;
  message: string;
}

/** Every decision the lowering made: one note per output block, every drop and fallback. */
export interface LoweringReport {
  provider: Provider;
  blocks: BlockNote[];
  dropped: DropNote[];
  warnings: Warning[];
}

export interface Lowered {
  /** The request body, JSON text ready to send (byte-stable for the same inputs). */
  readonly body: string;
  readonly report: LoweringReport;
  /** The body parsed as an object. */
  json(): Record<string, unknown>;
}

export type ErrorCode =
  | 'InvalidMessage'
  | 'InvalidOptions'
  | 'UnresolvedCommand'
  | 'InvalidRange'
  | 'InvalidData'
  | 'EmptyMessage'
  | 'InvalidCommand'
  | 'MissingArgument'
  | 'TooLarge'
  | 'StoreFailed'
  | 'NotFound'
  | 'InvalidSkill'
  | 'AlreadyExists'
  | 'SyncFailed'
  | 'Internal';

/** Every error promptloom throws. */
export declare class PromptloomError extends Error {
  readonly name: 'PromptloomError';
  readonly code: ErrorCode;
  /** Structured details; `path` names the offending input when known. */
  readonly details: { path?: string; [key: string]: unknown };
}

/** Lowers a message; synchronous when the resolver (if any) is synchronous. */
export declare function lower(message: UserMessage, options: LowerOptions & { resolve?: (request: ResolveRequest) => ResolveAnswer }): Lowered;
/** Lowers a message with an async resolver. */
export declare function lower(message: UserMessage, options: LowerOptions & { resolve: (request: ResolveRequest) => Promise<ResolveAnswer> }): Promise<Lowered>;
/** Lowers a message; a Promise when any resolver answer is a Promise. */
export declare function lower(message: UserMessage, options: LowerOptions): Lowered | Promise<Lowered>;

/**
 * Lowers many messages (a history) with one set of options in one call into wasm: a
 * Lowered or the PromptloomError each message got, in order. Resolver requests carry
 * `message`, the message's index. A Promise when any resolver answer is.
 */
export declare function lowerMany(messages: UserMessage[], options: LowerOptions & { resolve?: (request: ResolveRequest & { message?: number }) => ResolveAnswer }): Array<Lowered | PromptloomError>;
export declare function lowerMany(messages: UserMessage[], options: LowerOptions): Array<Lowered | PromptloomError> | Promise<Array<Lowered | PromptloomError>>;

/** The provider's default capability table. */
export declare function defaultCapabilities(provider: Provider): Capabilities;

/** Parses and re-serialises a message (unknown parts and metadata are kept). */
export declare function normalizeMessage(message: UserMessage): UserMessage;

/** The providers lower() accepts. */
export declare const providers: readonly Provider[];

// ---- the compositor ----

/** A command argument (the MCP `PromptArgument` shape). */
export interface CommandArgument {
  name: string;
  description?: string;
  required?: boolean;
}

interface CommandCommon {
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
  text_inline_max?: number;
  /** Media above this go to the blob store. Default 1 MiB. */
  blob_threshold?: number;
  /** Past this many inline bytes in a session, attachments go to the blob store. Default 20 MiB. */
  session_inline_max?: number;
  /** Larger attachments are refused with `TooLarge`. Default 64 MiB. */
  max_attachment_bytes?: number;
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
  /** The host clock in epoch ms (default `Date.now()`). */
  now?: number;
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

export interface MessageStore {
  readonly name: string;
  readonly backend: 'indexeddb' | 'memory' | 'host';
  /** In the current shape (older rows are upgraded on read). Throws `NotFound`. */
  get(id: string): Promise<UserMessage>;
  history(session?: string): Promise<UserMessage[]>;
  list(session?: string): Promise<MessageSummary[]>;
  blob(contentId: string): Promise<StoredBlob | null>;
  close(): void;
}

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
