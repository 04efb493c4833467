// The `promptloom/composer` entry (workerd): everything the `promptloom` entry has, plus the
// Skill Composer, artifact dispatch, assertions and traces, from the module built with them.
// Edge entry (Cloudflare workerd, wrangler, miniflare): the `.wasm` import is a compiled
// WebAssembly.Module there, instantiated synchronously.
import wasmModule from '../dist/wasm/promptloom_composer_bg.wasm';
import { initSync } from '../dist/wasm/promptloom_composer.js';
import * as core from '../dist/wasm/promptloom_composer.js';
import { __setWasm } from './api.js';

const exports = initSync({ module: wasmModule });
__setWasm(core, exports, 'promptloom/composer');

export { lower, lowerMany, defaultCapabilities, normalizeMessage, providers, PromptloomError } from './api.js';
export { CommandCatalog, parseInput, submit, openMessageStore, inspect } from './compositor.js';
export { lowerConversation, Conversation } from './conversation.js';
export { validateSkill, importPackage, importSkillMd, exportSkillMd, modelFamily, selectVariant, openSkillStore, SkillIndex, SkillCatalog } from './skills.js';
export { compose, nestedRequest, lowerComposition, authoringTools, runArtifact, runSkill } from './compose.js';
export { validateSkillSpec, builtinSkillSpecs, buildSkillRegistry, Arbiter, toMermaid, compositionSpec } from './arbiter.js';
