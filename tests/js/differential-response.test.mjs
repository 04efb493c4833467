// The response side against the AI SDK's: every recorded response of tests/response, read by
// promptloom (`createResponseParser`, `parseResponse`) and by the `@ai-sdk/*` provider model
// of the same API (`doStream` for a stream, `doGenerate` for a whole body) through a stub
// `fetch` answering the recorded bytes. What a loop acts on must agree: the visible text,
// the reasoning text, the client tool calls (id, name, input), the URLs the text cites, the
// token counts and the finish reason. Each case where they differ is in KNOWN with the reason; every KNOWN entry
// must still differ, so a fix on either side shows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as pl from 'promptloom';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const ROOT = new URL('../..', import.meta.url).pathname;
const DIR = join(ROOT, 'tests/response');

// case (provider/file) → field → why the two readings differ.
const KNOWN = {
  'anthropic/beta_compaction_usage.json': {
    text: 'a compaction block: the AI SDK reads its summary as answer text; promptloom keeps the block as a provider-data part (sent back to Anthropic as the compaction) and the text is the answer alone',
  },
  'anthropic/inputs_at_start.sse': {
    sources: 'a web search with no citation in the text: the AI SDK lists every search result as a source; promptloom\'s are the citations of the text (the results stay in the web_search_tool_result part)',
  },
  'anthropic/overloaded_mid_stream.sse': {
    usage: 'an error event mid-stream: the AI SDK ends without a finish part (no token counts); promptloom keeps the counts message_start gave',
    finish: 'the same: promptloom finishes with error (the overloaded_error), the AI SDK gives no finish',
  },
  'anthropic/truncated_in_tool_input.sse': {
    calls: 'a stream cut inside a tool input: promptloom keeps the cut call (its raw text, with a StreamTruncated error) so the turn reads back; the AI SDK drops it',
    usage: 'the stream is cut: the AI SDK ends without a finish part (no token counts); promptloom keeps the counts message_start gave',
    finish: 'the same: promptloom finishes with error (StreamTruncated), the AI SDK gives no finish',
  },
  'gemini/truncated.sse': {
    finish: 'the stream stops before a finishReason: promptloom finishes with error (StreamTruncated), the AI SDK with other',
  },
  'gemini/streamed_call_args.sse': {
    calls: 'Gemini 3 streams a call\'s arguments as partialArgs over chunks; promptloom assembles them, this AI SDK version does not',
  },
  'gemini/streamed_call_then_text.sse': {
    calls: 'the call\'s arguments come as partialArgs: promptloom assembles them, this AI SDK version does not',
    finish: 'Gemini says STOP after a call: promptloom gives tool-calls so a loop runs the call; the AI SDK gives stop here (its partialArgs call does not count as one)',
  },
  'openai-chat/compat_mistral_content_chunks.json': {
    refused: 'Magistral answers with content as an array of thinking and text chunks; the AI SDK\'s response schema wants a string and refuses the body',
  },
  'openai-chat/compat_mistral_content_chunks.sse': {
    text: 'Magistral streams content as an array of chunks; the AI SDK expects a string and reads no text',
    reasoning: 'the thinking chunks are reasoning for promptloom; the AI SDK reads none',
  },
  'openai-chat/compat_openrouter_reasoning_details.json': {
    reasoning: 'OpenRouter puts reasoning in reasoning / reasoning_details, which the OpenAI Chat model of the AI SDK does not read',
  },
  'openai-chat/compat_openrouter_reasoning_details.sse': {
    reasoning: 'OpenRouter puts reasoning in reasoning / reasoning_details, which the OpenAI Chat model of the AI SDK does not read',
  },
  'openai-chat/custom_tool_call.json': {
    refused: 'a custom tool call (type custom, free-text input): the AI SDK\'s response schema has only function calls and refuses the body; promptloom reads it with kind custom',
  },
  'openai-chat/legacy_function_call.sse': {
    calls: 'the deprecated single function_call of older servers: promptloom reads it as a call, the AI SDK\'s Chat model reads tool_calls only',
  },
  'openai-chat/no_done_marker.sse': {
    reasoning: 'DeepSeek\'s reasoning_content: promptloom reads it, the OpenAI Chat model of the AI SDK does not',
    usage: 'the last event has no closing blank line: the AI SDK does not dispatch it, as the SSE rules say for an event cut at the end (no counts, no finish reason); promptloom reads a last event whose JSON is whole',
    finish: 'the same last event: stop for promptloom, other for the AI SDK',
  },
  'openai-responses/host_tools.json': {
    calls: 'shell, local shell, client tool search and MCP approval calls: promptloom gives each as a tool call with its kind; the AI SDK gives the ones whose tools were declared with it (none here)',
    finish: 'the same calls: tool-calls for promptloom, stop for the AI SDK, which saw none',
  },
  'openai-responses/custom_and_apply_patch.sse': {
    calls: 'custom and apply_patch calls: promptloom gives each as a tool call with its kind; the AI SDK only when the tools were declared with it (none here)',
  },
  'openai-responses/reasoning_text_body.json': {
    reasoning: 'a reasoning item with its text in content (reasoning_text, open-weight models): promptloom reads it, the AI SDK reads a whole body\'s summary only',
  },
  'openai-responses/reasoning_and_call.sse': {
    reasoning: 'two reasoning summary parts: promptloom separates them with a blank line, the AI SDK runs them together ("…file.**Reading**…")',
  },
};

function sdkModel(provider, body, stream) {
  // An error body comes with the HTTP status the provider sends it with.
  let status = 200;
  if (!stream) {
    const e = JSON.parse(body).error;
    if (e) status = typeof e.code === 'number' ? e.code : e.type === 'overloaded_error' ? 529 : 400;
  }
  const fetch = async () =>
    new Response(body, {
      status,
      headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' },
    });
  if (provider === 'anthropic') return createAnthropic({ apiKey: 'k', fetch })('claude-sonnet-4-5');
  if (provider === 'openai-chat') return createOpenAI({ apiKey: 'k', fetch }).chat('gpt-4.1');
  if (provider === 'openai-responses') return createOpenAI({ apiKey: 'k', fetch }).responses('gpt-5.1');
  return createGoogleGenerativeAI({ apiKey: 'k', fetch })('gemini-2.5-flash');
}

const PROMPT = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
const UNIFIED = { stop: 'stop', length: 'length', 'tool-calls': 'tool-calls', 'content-filter': 'content-filter', error: 'error', other: 'other', unknown: 'other' };

/** What the AI SDK read: text, reasoning, client calls, usage, finish (or the error it threw). */
async function sdkRead(provider, body, stream) {
  const model = sdkModel(provider, body, stream);
  const out = { text: '', reasoning: [], calls: [], sources: [], usage: null, finish: null };
  const usage = (u) => {
    const r = {
      input: typeof u?.inputTokens === 'object' ? u.inputTokens?.total ?? null : u?.inputTokens ?? null,
      output: typeof u?.outputTokens === 'object' ? u.outputTokens?.total ?? null : u?.outputTokens ?? null,
    };
    return r.input === null && r.output === null ? null : r;
  };
  const finish = (f) => UNIFIED[typeof f === 'object' && f !== null ? f.unified : f] ?? String(f);
  const call = (c) => (c.toolCallId === undefined ? { name: c.toolName, input: parse(c.input) } : { id: c.toolCallId, name: c.toolName, input: parse(c.input) });
  try {
    if (stream) {
      const { stream: s } = await model.doStream({ prompt: PROMPT });
      const reader = s.getReader();
      for (;;) {
        const { done, value: p } = await reader.read();
        if (done) break;
        if (p.type === 'text-delta') out.text += p.delta;
        else if (p.type === 'reasoning-start') out.reasoning.push('');
        else if (p.type === 'reasoning-delta') out.reasoning[out.reasoning.length - 1] += p.delta;
        else if (p.type === 'tool-call' && !p.providerExecuted) out.calls.push(call({ ...p, toolCallId: provider === 'gemini' ? undefined : p.toolCallId }));
        else if (p.type === 'source' && p.sourceType === 'url') out.sources.push(p.url);
        else if (p.type === 'finish') {
          out.usage = usage(p.usage);
          out.finish = finish(p.finishReason);
        }
      }
    } else {
      const r = await model.doGenerate({ prompt: PROMPT });
      if (provider === 'gemini') for (const p of r.content) if (p.type === 'tool-call') p.toolCallId = undefined;
      for (const p of r.content) {
        if (p.type === 'text') out.text += p.text;
        else if (p.type === 'reasoning') out.reasoning.push(p.text);
        else if (p.type === 'tool-call' && !p.providerExecuted) out.calls.push(call(p));
        else if (p.type === 'source' && p.sourceType === 'url') out.sources.push(p.url);
      }
      out.usage = usage(r.usage);
      out.finish = finish(r.finishReason);
    }
  } catch (e) {
    return { threw: e?.name ?? 'Error' };
  }
  // Reasoning parts (an OpenAI summary part, an Anthropic thinking block) joined as
  // promptloom joins them.
  out.reasoning = out.reasoning.filter((r) => r !== '').join('\n\n');
  out.sources = [...new Set(out.sources)].sort();
  return out;
}

/** JSON with object keys sorted (argument objects compare by content, not key order). */
function canonical(v) {
  return JSON.stringify(v, (_, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : x,
  );
}

function parse(input) {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/** What promptloom read, in the same terms. */
function ourRead(provider, body, stream) {
  let turn;
  try {
    if (stream) {
      const p = pl.createResponseParser(provider);
      p.push(body);
      turn = p.finish();
      p.free();
    } else {
      turn = pl.parseResponse(provider, body);
    }
  } catch (e) {
    return { threw: e?.code ?? 'Error' };
  }
  const m = turn.metadata;
  const text = turn.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  const reasoning = turn.parts.filter((p) => p.type === 'reasoning' && p.text !== '').map((p) => p.text).join('\n\n');
  const calls = turn.parts.filter((p) => p.type === 'tool-call').map((c) => ({ id: c.id, name: c.name, input: c.input }));
  // Gemini gives calls no ids: each side makes its own, so they are not compared.
  if (provider === 'gemini') for (const c of calls) delete c.id;
  const usage = m.usage ? { input: m.usage.input_tokens, output: m.usage.output_tokens } : null;
  // The URLs the text cites (the AI SDK's url sources).
  const sources = [...new Set(turn.parts.flatMap((p) => (p.type === 'text' ? (p.citations ?? []) : [])).filter((c) => c.type === 'url').map((c) => c.url))].sort();
  return { text, reasoning, calls, sources, usage, finish: m.finish_reason ?? null };
}

const CASES = [];
for (const provider of readdirSync(DIR)) {
  for (const file of readdirSync(join(DIR, provider))) {
    // Gemini's JSON-array stream is read by promptloom only; error bodies are compared below.
    if (file.endsWith('.json.stream')) continue;
    CASES.push({ provider, file, stream: file.endsWith('.sse') });
  }
}

for (const { provider, file, stream } of CASES) {
  const name = `${provider}/${file}`;
  test(`${name}: read as the AI SDK reads it`, async () => {
    const body = readFileSync(join(DIR, provider, file), 'utf8');
    const ours = ourRead(provider, body, stream);
    const sdk = await sdkRead(provider, body, stream);
    const known = KNOWN[name] ?? {};
    if (ours.threw || sdk.threw) {
      // An error body: both sides refuse it (or KNOWN says why only one does).
      if (known.refused) assert.ok(!ours.threw && sdk.threw, `${name}: KNOWN says only the AI SDK refuses it`);
      else assert.ok(ours.threw && sdk.threw, `${name}: only one side refused it: ours ${JSON.stringify(ours)} sdk ${JSON.stringify(sdk)}`);
      return;
    }
    assert.ok(!known.refused, `${name}: the AI SDK reads it now; remove refused from KNOWN`);
    // The AI SDK gives Gemini calls made-up ids; ids are compared where the provider gave them.
    const diffs = [];
    for (const field of ['text', 'reasoning', 'calls', 'sources', 'usage', 'finish']) {
      const a = canonical(ours[field]);
      const b = canonical(sdk[field]);
      if (known[field] && a === b) diffs.push(`${field} is now the same on both sides; remove it from KNOWN`);
      if (!known[field] && a !== b) diffs.push(`${field} differs: promptloom ${a}, the AI SDK ${b}`);
    }
    assert.deepEqual(diffs, [], `${name}:\n${diffs.join('\n')}`);
  });
}

test('every KNOWN entry names a recorded case', () => {
  const names = new Set(CASES.map((c) => `${c.provider}/${c.file}`));
  for (const k of Object.keys(KNOWN)) assert.ok(names.has(k), `KNOWN names ${k}, which is not a recorded case`);
});
