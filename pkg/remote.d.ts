/**
 * promptloom/remote — the page's side of promptloom in a Web Worker. It loads no wasm: the
 * worker (`serveWorker` from `promptloom`) holds the instance, the stores and the adapters;
 * the page gets the functions it serves as Promises and a `Chat` whose snapshots mirror the
 * worker's.
 *
 * @module promptloom/remote
 */
import type { ChatInput, ChatOutcome, ChatRunOptions, ChatSnapshot, ChatMessage, ChatStatus, ConversationOptions, LoweredConversation, PromptloomError } from './index.js';
export { PromptloomError } from './index.js';
export type { ChatInput, ChatOutcome, ChatRunOptions, ChatSnapshot, ChatMessage, ChatStatus } from './index.js';

/** A run's options that cross to the worker: lowering settings, a lane, a run to attach to. */
export type RemoteRunOptions = Pick<ChatRunOptions, 'settings' | 'lane' | 'attach'>;

/**
 * A `Chat` running in the worker, seen from the page: the same snapshots (`getSnapshot`,
 * `subscribe`, structurally shared: a streamed token makes a new `pending` only), the same
 * actions, each answering a Promise.
 */
export interface RemoteChat {
  readonly session: string;
  readonly messages: readonly ChatMessage[];
  readonly status: ChatStatus;
  readonly error: PromptloomError | null;
  readonly getSnapshot: () => ChatSnapshot;
  readonly subscribe: (listener: () => void) => () => void;
  send(input: ChatInput, options?: RemoteRunOptions): Promise<ChatOutcome>;
  resume(options?: RemoteRunOptions): Promise<ChatOutcome>;
  regenerate(options?: RemoteRunOptions): Promise<ChatOutcome>;
  edit(id: string, input: ChatInput, options?: RemoteRunOptions): Promise<ChatOutcome>;
  stop(): Promise<void>;
  approve(callId: string, answer: boolean | { approve: boolean; reason?: string }): Promise<void>;
  lower(settings?: Partial<ConversationOptions>): Promise<LoweredConversation>;
  /** Closes the chat in the worker (a reply running is stopped). */
  close(): Promise<void>;
}

/** promptloom in a worker, seen from the page. */
export interface Remote {
  /** Runs a function the worker serves (`serveWorker({ functions })`); arguments and result are structured-cloned. */
  call<R = unknown>(name: string, ...args: unknown[]): Promise<R>;
  /** Opens a chat with the worker's factory (`serveWorker({ chat })`), which gets `init`; resolves with the thread read. */
  chat(init?: Record<string, unknown>): Promise<RemoteChat>;
  /** Stops listening; calls still waiting reject with `InstanceLost`. */
  close(): void;
}

/** Talks to a worker whose script calls `serveWorker`: a Web Worker, a MessagePort or Node's `worker_threads` Worker. */
export declare function connectWorker(worker: { postMessage(message: unknown): void; addEventListener?: Function; on?: Function }): Remote;
