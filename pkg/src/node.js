// Node entry: the wasm file is read from the package and compiled synchronously.
import { readFileSync } from 'node:fs';
import { initSync } from '../dist/wasm/promptloom.js';
import * as core from '../dist/wasm/promptloom.js';
import { __setWasm } from './api.js';

const exports = initSync({ module: readFileSync(new URL('../dist/wasm/promptloom_bg.wasm', import.meta.url)) });
__setWasm(core, exports, 'promptloom');

export { lower, lowerMany, defaultCapabilities, normalizeMessage, providers, PromptloomError } from './api.js';
export { CommandCatalog, parseInput, submit, openMessageStore, inspect } from './compositor.js';
export { lowerConversation, Conversation } from './conversation.js';
export { validateSkill, importPackage, importSkillMd, exportSkillMd, modelFamily, selectVariant, openSkillStore, SkillIndex, SkillCatalog } from './skills.js';
