// Edge entry (Cloudflare workerd, wrangler, miniflare): the `.wasm` import is a compiled
// WebAssembly.Module there, instantiated synchronously.
import wasmModule from '../dist/wasm/promptloom_bg.wasm';
import { initSync } from '../dist/wasm/promptloom.js';
import * as core from '../dist/wasm/promptloom.js';
import { __setWasm } from './api.js';

const exports = initSync({ module: wasmModule });
__setWasm(core, exports, 'promptloom');

export { lower, lowerMany, defaultCapabilities, normalizeMessage, providers, PromptloomError } from './api.js';
export { CommandCatalog, parseInput, submit, openMessageStore, inspect } from './compositor.js';
export { lowerConversation, Conversation } from './conversation.js';
export { validateSkill, importPackage, importSkillMd, exportSkillMd, modelFamily, selectVariant, openSkillStore, SkillIndex, SkillCatalog } from './skills.js';
