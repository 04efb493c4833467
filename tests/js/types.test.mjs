// Types: the package's .d.ts compiles under `tsc --strict` with the usage in tests/ts/api.ts,
// and every recorded body type-checks against the providers' official SDK request types
// (@anthropic-ai/sdk, openai, @google/genai), with excess-property checks on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { successCases, conversationCases, root } from './cases.mjs';
import * as plc from '../../pkg/src/composer-node.js';
import * as pln from '../../pkg/src/node.js';
import * as pll from '../../pkg/src/lower-node.js';
import * as plr from '../../pkg/src/remote.js';
import { composerFixtures } from './composer-fixtures.mjs';
import { responseCases } from './cases.mjs';

// A body lowered without a model (most recorded cases) is complete but for it: the model
// (and Anthropic's max_tokens) may be absent; every field the settings write is checked.
const TYPES = {
  anthropic: 'Omit<MessageCreateParamsBase, "model" | "max_tokens"> & Partial<Pick<MessageCreateParamsBase, "model" | "max_tokens">>',
  'openai-chat': 'Omit<ChatCompletionCreateParamsBase, "model"> & Partial<Pick<ChatCompletionCreateParamsBase, "model">>',
  'openai-responses': 'ResponseCreateParamsBase',
  gemini: 'GeminiRequest',
};
/** A Chat body for a server that takes reasoning back (`compat`): OpenAI's type plus `reasoning_content` or `reasoning_details` on assistant messages. */
const COMPAT_CHAT = 'Omit<ChatCompletionCreateParamsBase, "model" | "messages"> & Partial<Pick<ChatCompletionCreateParamsBase, "model">> & { messages: Array<Exclude<ChatCompletionMessageParam, ChatCompletionAssistantMessageParam> | (ChatCompletionAssistantMessageParam & { reasoning_content?: string; reasoning_details?: Array<Record<string, unknown>> })> }';

/** Gemini's enum strings written as the SDK's enum members (its enums are nominal). */
const geminiEnums = (text) => text
  .replace(/"type":"([A-Z]+)"/g, '"type":Type.$1')
  .replace(/"language":"([A-Z_]+)"/g, '"language":Language.$1')
  .replace(/"outcome":"([A-Z_]+)"/g, '"outcome":Outcome.$1')
  .replace(/"thinkingLevel":"([A-Z]+)"/g, '"thinkingLevel":ThinkingLevel.$1')
  .replace(/"mode":"([A-Z]+)"/g, '"mode":FunctionCallingConfigMode.$1');

test('recorded bodies and lowered compositions satisfy the official SDK request types, and the package types compile', async () => {
  let src = `// Generated from tests/snapshots by tests/js/types.test.mjs.
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsBase } from '@anthropic-ai/sdk/resources/messages';
import type { MessageCreateParamsBase as BetaMessageCreateParamsBase } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam, ChatCompletionAssistantMessageParam } from 'openai/resources/chat/completions';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import { Type, ThinkingLevel, FunctionCallingConfigMode, Language, Outcome, type Content, type Tool, type GenerationConfig, type ToolConfig } from '@google/genai';
/** The generateContent REST body, from @google/genai's own types. */
interface GeminiRequest { contents: Content[]; systemInstruction?: Content; tools?: Tool[]; generationConfig?: GenerationConfig; toolConfig?: ToolConfig }
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { GenerateContentResponse } from '@google/genai';
import type { ResponseTurn, ResponseEvent } from 'promptloom';
/** Gemini's response as data (the SDK class adds getters). */
type GeminiResponse = Pick<GenerateContentResponse, 'candidates' | 'usageMetadata' | 'modelVersion' | 'responseId' | 'promptFeedback'>;
/**
 * A recorded response: every key it has must exist in the SDK type with a value of that
 * type (excess-property checks stay on); keys newer than the recording may be absent, and
 * an SDK enum may be written as its string value (as it is on the wire).
 */
type Loose<T> = T extends string ? T | \`\${T}\` : T extends readonly (infer U)[] ? Loose<U>[] : T extends object ? { [K in keyof T]?: Loose<T[K]> } : T;
`;
  let n = 0;
  for (const c of successCases()) {
    const body = JSON.parse(c.expected.body);
    let text = JSON.stringify(body);
    // TypeScript enums are nominal: write Gemini schema types as the SDK's own \`Type\` members
    // (whose values are exactly these strings), so the check proves each one is a member.
    if (c.provider === 'gemini') text = geminiEnums(text);
    src += `export const b${n++}: ${TYPES[c.provider]} = ${text}; // ${c.name} / ${c.provider}\n`;
  }
  // Every recorded conversation body.
  let k = 0;
  for (const c of conversationCases()) {
    const body = JSON.parse(c.expected.body);
    let text = JSON.stringify(body);
    if (c.provider === 'gemini') text = geminiEnums(text);
    const type = c.name.startsWith('compat_') && c.provider === 'openai-chat' ? COMPAT_CHAT : TYPES[c.provider];
    src += `export const v${k++}: ${type} = ${text}; // conversation ${c.name} / ${c.provider}\n`;
  }
  assert.ok(k >= 70);
  // Every composition of the composer fixtures, lowered for each provider.
  const fx = composerFixtures();
  let m = 0;
  for (const [name, expected] of Object.entries(fx.expected)) {
    if (!expected.composition) continue;
    for (const provider of Object.keys(TYPES)) {
      const l = await plc.lowerComposition(expected.composition, { provider });
      let text = JSON.stringify(JSON.parse(l.body));
      if (provider === 'gemini') text = geminiEnums(text);
      src += `export const c${m++}: ${TYPES[provider]} = ${text}; // composition ${name} / ${provider}\n`;
    }
  }
  assert.ok(m >= 20);
  // The recorded responses are the providers' own shapes: every whole body and every
  // stream event type-checks against the SDKs' response types; every final turn against
  // ResponseTurn, every event against ResponseEvent, and each turn sent back against the
  // request types.
  const WHOLE = { anthropic: 'Loose<Anthropic.Message>', 'openai-chat': 'Loose<ChatCompletion>', 'openai-responses': 'Loose<OpenAIResponse>', gemini: 'Loose<GeminiResponse>' };
  const EVENT = { anthropic: 'Loose<Anthropic.RawMessageStreamEvent>', 'openai-chat': 'Loose<ChatCompletionChunk>', 'openai-responses': 'Loose<ResponseStreamEvent>', gemini: 'Loose<GeminiResponse>' };
  let r = 0;
  for (const c of responseCases()) {
    if (c.expected.error && c.expected.error.code !== 'InvalidToolInput') continue;
    const file = c.name.split('/')[1];
    // An OpenAI-compatible server's extension (`reasoning_content`, Mistral's content chunks)
    // is not OpenAI's type; a `beta_` recording is checked against the SDK's beta types.
    const compat = file.startsWith('no_done_marker') || file.startsWith('compat_');
    const beta = file.startsWith('beta_') && c.provider === 'anthropic';
    let items;
    const whole = beta ? 'Loose<Anthropic.Beta.BetaMessage>' : WHOLE[c.provider];
    const event = beta ? 'Loose<Anthropic.Beta.BetaRawMessageStreamEvent>' : EVENT[c.provider];
    if (file.endsWith('.json')) items = [[whole, c.body.trim()]];
    else if (file.endsWith('.json.stream')) items = JSON.parse(c.body).map((x) => [event, JSON.stringify(x)]);
    else items = c.body.split('\n').filter((l) => l.startsWith('data: {')).map((l) => [event, l.slice(6)]);
    // Anthropic's keep-alive `ping` is documented but not in the SDK's event union, nor are
    // the apply_patch diff events (newer than the installed openai types).
    items = items.filter(([, text]) => !compat && !/^\{"type": ?"(ping|response\.apply_patch_call_operation_diff\.[a-z]+)"/.test(text));
    // A custom tool call's output item carries `status` (the AI SDK's schema requires it),
    // which the openai types' ResponseCustomToolCall does not list.
    const unstatus = (x) => {
      if (Array.isArray(x)) x.forEach(unstatus);
      else if (x && typeof x === 'object') {
        if (x.type === 'custom_tool_call') delete x.status;
        Object.values(x).forEach(unstatus);
      }
      return x;
    };
    items = items.map(([type, text]) => [type, c.provider === 'openai-responses' ? JSON.stringify(unstatus(JSON.parse(text))) : text]);
    for (const [type, text] of items) src += `export const r${r++}: ${type} = ${text}; // response ${c.name}\n`;
    src += `export const t${n}: ResponseTurn = ${JSON.stringify(c.expected.turn)}; // turn ${c.name}\n`;
    src += `export const e${n}: ResponseEvent[] = ${JSON.stringify(c.expected.events)}; // events ${c.name}\n`;
    const conv = plc.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'go' }] }, c.expected.turn], { provider: c.provider });
    let back = JSON.stringify(JSON.parse(conv.body));
    if (c.provider === 'gemini') back = geminiEnums(back);
    const sent = beta ? 'Omit<BetaMessageCreateParamsBase, "model" | "max_tokens">' : TYPES[c.provider];
    src += `export const b${n++}: ${sent} = ${back}; // turn sent back ${c.name}\n`;
  }
  assert.ok(r >= 60, `${r} response items`);
  mkdirSync(join(root, 'tests/js/.out'), { recursive: true });
  writeFileSync(join(root, 'tests/js/.out/sdk-bodies.ts'), src);
  try {
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(root, 'tests/ts/tsconfig.json')], { stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
  assert.ok(n >= 100);
});

test("the package's own JS (pkg/src) type-checks (checkJs, strict, noImplicitAny; the generated glue excepted)", () => {
  // Every parameter and variable of the glue has a type: one the compiler infers, or one
  // its JSDoc names (`Unchecked` where a value from the caller is checked by hand).
  const config = JSON.parse(readFileSync(join(root, 'tests/ts/tsconfig.pkg.json'), 'utf8')).compilerOptions;
  assert.equal(config.strict, true);
  assert.equal(config.noImplicitAny, true);
  try {
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(root, 'tests/ts/tsconfig.pkg.json')], { stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc on pkg/src failed:\n${e.stdout}${e.stderr}`);
  }
});

test('every export of each entry is declared in its .d.ts, and every declared value is exported', () => {
  // tsc reads the declarations; the runtime names come from the modules themselves. A name
  // the JS exports without a type fails `pl.name`; a declared value the JS lacks is named
  // by the `Missing` check.
  let src = `// Generated by tests/js/types.test.mjs: each entry's runtime exports against its types.\n`;
  for (const [spec, mod, alias, least] of [['promptloom', pln, 'pl', 25], ['promptloom/composer', plc, 'plc', 25], ['promptloom/lower', pll, 'pll', 15], ['promptloom/remote', plr, 'plr', 2]]) {
    const names = Object.keys(mod).sort();
    assert.ok(names.length >= least, `${spec}: ${names.length} exports`);
    src += `import * as ${alias} from '${spec}';\n`;
    src += names.map((k) => `export const ${alias}_${k} = ${alias}.${k};`).join('\n') + '\n';
    src += `type ${alias}Runtime = ${names.map((k) => JSON.stringify(k)).join(' | ')};\n`;
    src += `type ${alias}Missing = Exclude<keyof typeof ${alias}, ${alias}Runtime>;\n`;
    src += `export const ${alias}_none_missing: [${alias}Missing] extends [never] ? true : ${alias}Missing = true;\n`;
  }
  mkdirSync(join(root, 'tests/js/.out'), { recursive: true });
  writeFileSync(join(root, 'tests/js/.out/exports.ts'), src);
  try {
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(root, 'tests/ts/tsconfig.exports.json')], { stdio: 'pipe' });
  } catch (e) {
    assert.fail(`the entries and their types differ:\n${e.stdout}${e.stderr}`);
  }
});

// The naming rule (README, Conventions), checked on the declarations: an options or result
// type is camelCase; snake_case fields belong to documents — what is stored or exchanged by
// every host, as the core writes it — and no type mixes the two. A new type with snake_case
// fields must be a document (add it here, saying so) or be renamed.
const DOCUMENTS = new Set([
  'ChatMessage',
  // messages, turns and their parts; what a store keeps and lists
  'EditorContextPart', 'ToolResultPart', 'ResponseMetadata', 'MessageSummary', 'StoredBlob',
  // skills, their artifacts and traces; the seed's formats
  'ArtifactMetadata', 'SkillArtifact', 'SkillMetadata', 'Skill', 'ArtifactRef', 'TraceInput', 'TraceRow', 'DspyExample', 'DspyOptimizeCall', 'StaleDspy',
  // the composer's request and reports; state machines, their runs, logs and proposals
  'ComposeRequest', 'AssertionReport', 'SkillSpec', 'Outcome', 'Run', 'SessionHierarchy', 'StoredProposal',
  // contracts and gateway records
  'ContractDocument', 'RegisteredContract', 'GatewayRecord',
  // the core's completion entries and command catalog entries (the same in the WIT
  // compositor; `argument_hint` is the command frontmatter's field)
  'Completion', 'CommandCommon',
]);
// None mixes today; a type listed here would be a known exception, with its reason.
const MIXED_FOR_NOW = new Set([]);

test('the naming rule holds in the declarations: options and results camelCase, documents snake_case, nothing mixed', () => {
  const bad = [];
  for (const file of ['pkg/index.d.ts', 'pkg/composer.d.ts']) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/^export (?:interface|type) (\w+)[^\n]*\{\n([\s\S]*?)^\}/gm)) {
      const [, name, body] = m;
      const props = [...body.matchAll(/^ {2}(?:readonly )?([A-Za-z_][A-Za-z0-9_]*)\??:/gm)].map((p) => p[1]);
      const snake = props.filter((p) => p.includes('_'));
      const camel = props.filter((p) => /[a-z][A-Z]/.test(p));
      if (MIXED_FOR_NOW.has(name)) continue;
      if (snake.length > 0 && camel.length > 0) bad.push(`${file} ${name} mixes ${snake[0]} and ${camel[0]}`);
      else if (snake.length > 0 && !DOCUMENTS.has(name)) bad.push(`${file} ${name} is not a document but has ${snake.join(', ')}`);
    }
    // Inline options of a function: camelCase.
    for (const m of text.matchAll(/options\??: \{([^{}]*)\}/g)) {
      for (const k of m[1].matchAll(/([A-Za-z_][A-Za-z0-9_]*)\??:/g)) if (k[1].includes('_')) bad.push(`${file}: an inline option \`${k[1]}\``);
    }
  }
  assert.deepEqual(bad, []);
});
