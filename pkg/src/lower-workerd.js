// The `promptloom/lower` entry (workerd): lowering, conversations, responses and the model
// adapters, from a module built without the compositor, the stores and the skills.
// Edge entry (Cloudflare workerd, wrangler, miniflare): the `.wasm` import is a compiled
// WebAssembly.Module there, instantiated synchronously.
import wasmModule from '../dist/wasm/promptloom_lower_bg.wasm';
import { createGlue } from '../dist/wasm/promptloom_lower.js';
import { __setWasm } from './api.js';

// A fresh instance is made from the module if one ever traps.
const fresh = () => {
  const glue = createGlue();
  glue.initSync({ module: wasmModule });
  return glue;
};
__setWasm(fresh(), fresh, 'promptloom/lower');

export { lower, lowerAsync, lowerMany, lowerManyAsync, defaultCapabilities, normalizeMessage, resolveRequests, providers, PromptloomError } from './api.js';
export { lowerConversation, lowerConversationAsync, Conversation } from './conversation.js';
export { createResponseParser, ResponseParser, parseResponse, providerError } from './response.js';
export { createAdapter } from './adapter.js';
export { ResponseStream } from './response-stream.js';
export { readEventStream, EventStreamLog, relayAdapter } from './event-stream.js';
export { runAgent } from './agent.js';
