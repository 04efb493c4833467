// The `promptloom/lower` entry (web): lowering, conversations, responses and the model
// adapters, from a module built without the compositor, the stores and the skills — for an
// app that only turns messages into requests and reads the replies.
// Browser / bundler entry: the wasm file is fetched next to this module (bundlers follow the
// `new URL(…, import.meta.url)` reference) and instantiated before the module finishes
// loading (top-level await).
import { createGlue } from '../dist/wasm/promptloom_lower.js';
import { __setWasm } from './api.js';

const first = createGlue();
await first.default({ module_or_path: new URL('../dist/wasm/promptloom_lower_bg.wasm', import.meta.url) });
// A fresh instance is made from the compiled module if one ever traps.
const module = first.__module();
__setWasm(first, () => {
  const glue = createGlue();
  glue.initSync({ module });
  return glue;
}, 'promptloom/lower');

export { lower, lowerAsync, lowerMany, lowerManyAsync, defaultCapabilities, normalizeMessage, resolveRequests, providers, PromptloomError } from './api.js';
export { lowerConversation, lowerConversationAsync, Conversation } from './conversation.js';
export { createResponseParser, ResponseParser, parseResponse, providerError } from './response.js';
export { createAdapter } from './adapter.js';
export { ResponseStream } from './response-stream.js';
export { readEventStream, EventStreamLog, relayAdapter } from './event-stream.js';
export { runAgent } from './agent.js';
