// Browser / bundler entry: the wasm file is fetched next to this module (bundlers such as
// Vite and webpack follow the `new URL(…, import.meta.url)` reference) and instantiated
// before the module finishes loading (top-level await).
import { createGlue } from '../dist/wasm/promptloom.js';
import { __setWasm } from './api.js';

const first = createGlue();
await first.default({ module_or_path: new URL('../dist/wasm/promptloom_bg.wasm', import.meta.url) });
// A fresh instance is made from the compiled module if one ever traps.
const module = first.__module();
__setWasm(first, () => {
  const glue = createGlue();
  glue.initSync({ module });
  return glue;
}, 'promptloom');

export { lower, lowerAsync, lowerMany, lowerManyAsync, defaultCapabilities, normalizeMessage, resolveRequests, providers, PromptloomError } from './api.js';
export { CommandCatalog, parseInput, submit, openMessageStore, inspect } from './compositor.js';
export { lowerConversation, lowerConversationAsync, Conversation } from './conversation.js';
export { createResponseParser, ResponseParser, parseResponse, providerError } from './response.js';
export { createAdapter } from './adapter.js';
export { ResponseStream } from './response-stream.js';
export { readEventStream, EventStreamLog, relayAdapter } from './event-stream.js';
export { runAgent } from './agent.js';
export { Chat } from './chat.js';
export { serveWorker } from './worker.js';
export { validateSkill, importPackage, importSkillMd, exportSkillMd, modelFamily, selectVariant, openSkillStore, systemSkills, seedSkillSpecs } from './skills.js';
export { SkillIndex, SkillCatalog } from './catalog.js';
