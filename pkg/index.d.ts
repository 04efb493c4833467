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
  | { kind: 'path'; path: string; range?: Range; mime?: string }
  | { kind: 'url'; url: string; range?: Range; mime?: string }
  | { kind: 'content-id'; content_id: string; range?: Range; mime?: string };

export interface TextPart {
  type: 'text';
  text: string;
}

/** A workspace file; its body is not in the message (the resolver reads it). */
export interface FileRefPart {
  type: 'file-ref';
  ref: FileRefTarget;
}

/** An attached file: inline bytes (base64, a data URL, or bytes) or a content id. */
export interface FileAttachmentPart {
  type: 'file-attachment';
  /** Base64, a `data:` URL (base64 or percent-encoded), or raw bytes. */
  data?: string | Uint8Array | ArrayBuffer;
  /** A blob-store id, read back through the resolver. */
  content_id?: string;
  mime?: string;
  name?: string;
  size?: number;
}

/** A slash command; it must be resolved before lowering. */
export interface CommandPart {
  type: 'command';
  id: string;
  args?: unknown;
}

export type MentionTarget =
  | { kind: 'skill'; name: string; [key: string]: unknown }
  | { kind: 'file'; path: string; range?: Range; [key: string]: unknown }
  | { kind: string; [key: string]: unknown };

export interface MentionPart {
  type: 'mention';
  target: MentionTarget;
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
  | 'NotText';

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

/** The provider's default capability table. */
export declare function defaultCapabilities(provider: Provider): Capabilities;

/** Parses and re-serialises a message (unknown parts and metadata are kept). */
export declare function normalizeMessage(message: UserMessage): UserMessage;

/** The providers lower() accepts. */
export declare const providers: readonly Provider[];
