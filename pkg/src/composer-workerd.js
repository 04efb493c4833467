// The `promptloom/composer` entry (workerd): everything the `promptloom` entry has, plus the
// Skill Composer, artifact dispatch, assertions and traces, from the module built with them.
// Edge entry (Cloudflare workerd, wrangler, miniflare): the `.wasm` import is a compiled
// WebAssembly.Module there, instantiated synchronously.
import wasmModule from '../dist/wasm/promptloom_composer_bg.wasm';
import { createGlue } from '../dist/wasm/promptloom_composer.js';
import { __setWasm } from './api.js';

// A fresh instance is made from the module if one ever traps.
const fresh = () => {
  const glue = createGlue();
  glue.initSync({ module: wasmModule });
  return glue;
};
__setWasm(fresh(), fresh, 'promptloom/composer');

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
export { SkillIndex, SkillCatalog, decide } from './catalog.js';
export { compose, prepareSkill, PreparedSkill, nestedRequest, lowerComposition, lowerCompositionAsync, authoringTools, runArtifact, runSkill, optimizeDspy, staleDspy, verifyInvocation } from './compose.js';
export { validateSkillSpec, loadSkillSpecs, buildSkillRegistry, Arbiter, toMermaid, compositionSpec, openSession, sessionMachines, listProposals, approveProposal, rejectProposal, approvalLog, installApproved } from './arbiter.js';
export { ContractRegistry, Gateway, createGateway, checkContract, applyGatewayState, recordsToOtel, memoryState, indexedDbState, durableObjectState, GatewayStateObject } from './gateway.js';
