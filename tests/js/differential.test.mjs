// The call settings against the AI SDK's: each settings case of tests/lower/inputs lowered by
// promptloom and, with the same settings as AI SDK call options, by each `@ai-sdk/*`
// provider's `getArgs` (the request body it would send). The messages are left aside; every
// other field that differs must be in KNOWN below, with the reason (a provider's documented
// rule, or a choice of ours), and every entry of KNOWN must still differ: a new difference
// and a vanished one both fail.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { lower } from 'promptloom';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const ROOT = new URL('../..', import.meta.url).pathname;
const DIR = join(ROOT, 'tests/lower/inputs');
const CASES = readdirSync(DIR).filter((f) => f.startsWith('settings_') && f !== 'settings_provider_options.json');

const sdkModel = (provider, id) => {
  const fetch = () => Promise.reject(new Error('not sent'));
  if (provider === 'anthropic') return createAnthropic({ apiKey: 'k', fetch })(id);
  if (provider === 'openai-chat') return createOpenAI({ apiKey: 'k', fetch }).chat(id);
  if (provider === 'openai-responses') return createOpenAI({ apiKey: 'k', fetch }).responses(id);
  return createGoogleGenerativeAI({ apiKey: 'k', fetch })(id.replace(/^models\//, ''));
};

/** Our settings as the AI SDK's call options (what a user of both would write). */
function callOptions(provider, o) {
  const c = {};
  for (const k of ['maxOutputTokens', 'temperature', 'topP', 'topK', 'stopSequences', 'seed', 'presencePenalty', 'frequencyPenalty']) if (o[k] !== undefined) c[k] = o[k];
  if (o.tools) c.tools = o.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
  if (typeof o.toolChoice === 'string') c.toolChoice = ['auto', 'none', 'required'].includes(o.toolChoice) ? { type: o.toolChoice } : { type: 'tool', toolName: o.toolChoice };
  if (o.output === 'json') c.responseFormat = { type: 'json' };
  else if (o.output) c.responseFormat = { type: 'json', schema: o.output.schema, name: o.output.name, description: o.output.description };
  const po = {};
  const r = o.reasoning;
  if (provider === 'anthropic') {
    if (r?.budgetTokens) po.anthropic = { thinking: { type: 'enabled', budgetTokens: r.budgetTokens } };
    if (o.user) po.anthropic = { ...po.anthropic };
  } else if (provider === 'gemini') {
    if (r) po.google = { thinkingConfig: { ...(r.budgetTokens ? { thinkingBudget: r.budgetTokens } : {}), ...(r.effort ? { thinkingLevel: r.effort } : {}), ...(r.include ? { includeThoughts: true } : {}) } };
  } else {
    po.openai = {};
    if (r?.effort) po.openai.reasoningEffort = r.effort;
    if (o.parallelToolCalls !== undefined) po.openai.parallelToolCalls = o.parallelToolCalls;
    if (o.user) po.openai.user = o.user;
    if (o.output?.strict !== undefined) po.openai.strictJsonSchema = o.output.strict;
    if (o.metadata) po.openai.metadata = o.metadata;
    if (r?.include) po.openai.reasoningSummary = 'auto';
    const own = o.providerOptions?.openai ?? {};
    if (own.store !== undefined) po.openai.store = own.store;
  }
  if (provider === 'anthropic' && o.parallelToolCalls === false) po.anthropic = { ...po.anthropic, disableParallelToolUse: true };
  c.providerOptions = po;
  return c;
}

const CONTENT = new Set(['messages', 'contents', 'input', 'system', 'systemInstruction', 'tools', 'model', 'stream', 'stream_options']);
/** Every leaf path of `v` (arrays by index), outside the message content. */
function leaves(v, path = '', out = new Map()) {
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0) out.set(path, Array.isArray(v) ? '[]' : '{}');
    for (const k of keys) {
      if (path === '' && CONTENT.has(k)) continue;
      leaves(v[k], path ? `${path}.${k}` : k, out);
    }
  } else out.set(path, JSON.stringify(v));
  return out;
}

// case → provider → path → why it differs. `ours` / `sdk`: the value each side writes
// (absent: undefined). Checked both ways.
const KNOWN = JSON.parse(readFileSync(new URL('./differential-known.json', import.meta.url), 'utf8'));

for (const file of CASES) {
  const name = file.slice(0, -5);
  test(`the settings of ${name} beside the AI SDK's getArgs`, async () => {
    const c = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
    const found = {};
    for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
      const o = { ...c.options, ...(c.byProvider?.[provider] ?? {}) };
      const ours = JSON.parse(lower(c.message, { provider, ...o }).body);
      const model = sdkModel(provider, o.model);
      const { args } = await model.getArgs({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }], headers: {}, userSuppliedBetas: new Set(), ...callOptions(provider, o) });
      const a = leaves(ours);
      const b = leaves(args);
      const diff = {};
      for (const p of new Set([...a.keys(), ...b.keys()])) {
        if (a.get(p) !== b.get(p)) diff[p] = { ours: a.get(p), sdk: b.get(p) };
      }
      found[provider] = diff;
    }
    if (process.env.DIFF_DUMP) appendFileSync(process.env.DIFF_DUMP, `${JSON.stringify({ [name]: found })}\n`);
    const known = KNOWN[name] ?? {};
    for (const provider of Object.keys(found)) {
      const k = known[provider] ?? {};
      for (const [p, d] of Object.entries(found[provider])) {
        assert.ok(k[p], `${name} / ${provider}: \`${p}\` differs (ours ${d.ours}, the AI SDK's ${d.sdk}) and KNOWN does not say why`);
        assert.deepEqual({ ours: d.ours, sdk: d.sdk }, { ours: k[p].ours, sdk: k[p].sdk }, `${name} / ${provider}: ${p}`);
      }
      for (const p of Object.keys(k)) assert.ok(found[provider][p], `${name} / ${provider}: \`${p}\` no longer differs: take it out of KNOWN`);
    }
  });
}
