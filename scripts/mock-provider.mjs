// A local stand-in for the four providers' HTTP APIs (loopback only), for the tests, the
// benchmark and the demo: it answers Anthropic Messages, OpenAI Chat Completions and
// Responses, and Gemini generateContent / streamGenerateContent with streams shaped as the
// providers send them (text, reasoning, tool calls, usage), or whole bodies when the request
// does not stream. It can be told to fail with the `x-mock` request header:
//   x-mock: status=429,retry-after=1,times=2   the first 2 requests with this header value
//                                              get HTTP 429 (retry-after: 1 s), then normal
//   x-mock: status=500 | status=400 | status=529 | status=503
//   x-mock: cut=5            the stream stops after 5 events (the connection closes)
//   x-mock: malformed=3      the 3rd event's data is not JSON
//   x-mock: slow=50          50 ms between events
//   x-mock: stall=5          after 5 events nothing more comes; the connection stays open
//   x-mock: overloaded-first=1  a stream that opens with a provider error event (Anthropic
//                                `overloaded_error`, others their error shapes), once
// What the model "says": with tools in the request and no tool result after the last user
// turn, it calls the first tool; otherwise it answers with text about the last user text.
//   node scripts/mock-provider.mjs [--port 8787]

import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

/** A reply plan: reasoning text, answer text, tool calls. */
export function planFor(provider, request, salt = '1') {
  const tools = toolNames(provider, request);
  const last = lastUser(provider, request);
  // A running skill (tools from an arbiter's offer): finish when offered, move on after a
  // tool answered, else call the state's first tool.
  if (tools.includes('skill_finish')) {
    return { reasoning: 'The objective is met.', text: 'Done.', calls: [{ id: `call_mock_finish_${salt}`, name: 'skill_finish', input: { output: { summary: last.text.slice(0, 80) } } }] };
  }
  if (tools.includes('skill_transition') && (last.afterTool || tools.length === 1)) {
    const event = transitionEvents(provider, request)[0] ?? 'done';
    return { reasoning: 'This state is done.', text: '', calls: [{ id: `call_mock_transition_${salt}`, name: 'skill_transition', input: { event } }] };
  }
  if (tools.length > 0 && !last.afterTool) {
    return {
      reasoning: `The user asked: "${last.text.slice(0, 60)}". The ${tools[0]} tool can help.`,
      text: `Let me use ${tools[0]}.`,
      calls: [{ id: `call_mock_${salt}`, name: tools[0], input: { query: last.text.slice(0, 80) || 'anything' } }],
    };
  }
  // A request that asks for a JSON answer gets one (the words of the last user text).
  const wantsJson = request.response_format || request.text?.format || request.output_config?.format || request.generationConfig?.responseMimeType === 'application/json';
  if (wantsJson) {
    const words = last.text.split(/\s+/).filter(Boolean);
    return { reasoning: 'Answering in JSON.', text: JSON.stringify({ said: last.text, words: words.length, first: words[0] ?? null }), calls: [] };
  }
  const text = last.afterTool
    ? `The tool answered. Here is what it said: ${last.text.slice(0, 200)}`
    : `You said: "${last.text}". This answer comes from the promptloom mock provider, streamed word by word so the page can show it arriving.`;
  return { reasoning: 'Answering directly.', text, calls: [] };
}

function toolNames(provider, r) {
  const t = r.tools ?? [];
  if (provider === 'gemini') return t.flatMap((x) => (x.functionDeclarations ?? []).map((f) => f.name));
  if (provider === 'openai-chat') return t.map((x) => x.function?.name ?? x.name).filter(Boolean);
  return t.map((x) => x.name).filter(Boolean);
}

/** The `event` enum of the offered `skill_transition` tool. */
function transitionEvents(provider, r) {
  const t = r.tools ?? [];
  const defs = provider === 'gemini' ? t.flatMap((x) => x.functionDeclarations ?? []) : t.map((x) => x.function ?? x);
  const d = defs.find((x) => x.name === 'skill_transition');
  const schema = d?.input_schema ?? d?.parameters ?? {};
  return schema.properties?.event?.enum ?? [];
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c) => c.text ?? (typeof c.content === 'string' ? c.content : '') ?? '').join(' ');
}

function lastUser(provider, r) {
  if (provider === 'gemini') {
    const c = r.contents ?? [];
    const last = c[c.length - 1] ?? { parts: [] };
    const tool = (last.parts ?? []).find((p) => p.functionResponse);
    if (tool) return { text: JSON.stringify(tool.functionResponse.response ?? {}), afterTool: true };
    return { text: (last.parts ?? []).map((p) => p.text ?? '').join(' ').trim(), afterTool: false };
  }
  if (provider === 'openai-responses') {
    const items = Array.isArray(r.input) ? r.input : [{ role: 'user', content: r.input ?? '' }];
    const last = items[items.length - 1] ?? {};
    if (last.type === 'function_call_output') return { text: String(last.output ?? ''), afterTool: true };
    return { text: textOf(last.content).trim(), afterTool: false };
  }
  const m = r.messages ?? [];
  const last = m[m.length - 1] ?? {};
  if (last.role === 'tool') return { text: textOf(last.content), afterTool: true };
  if (Array.isArray(last.content)) {
    const res = last.content.find((c) => c.type === 'tool_result');
    if (res) return { text: textOf(res.content), afterTool: true };
  }
  return { text: textOf(last.content).trim(), afterTool: false };
}

/** Splits text into word-sized deltas (spaces kept). */
export function words(text) {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Splits a string into pieces of `n` characters. */
function pieces(s, n) {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

const sse = (event, data) => (event ? `event: ${event}\ndata: ${JSON.stringify(data)}\n\n` : `data: ${JSON.stringify(data)}\n\n`);

/**
 * The events (SSE text, one string per event) a provider streams for `plan`, or its whole
 * body when `stream` is false. `argChunk`: characters per tool-argument delta.
 */
export function encode(provider, plan, { stream = true, model = 'mock-1', argChunk = 12 } = {}) {
  const usage = { input: 42, output: 7 + words(plan.text).length + plan.calls.length * 10 };
  if (provider === 'anthropic') {
    const blocks = [];
    if (plan.reasoning) blocks.push({ type: 'thinking', thinking: plan.reasoning, signature: 'bW9jay1zaWduYXR1cmU=' });
    if (plan.text) blocks.push({ type: 'text', text: plan.text });
    for (const c of plan.calls) blocks.push({ type: 'tool_use', id: c.id.replace('call_', 'toolu_'), name: c.name, input: c.input });
    const stop = plan.calls.length ? 'tool_use' : 'end_turn';
    if (!stream) {
      return { id: 'msg_mock', type: 'message', role: 'assistant', model, content: blocks, stop_reason: stop, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: usage.output } };
    }
    const ev = [sse('message_start', { type: 'message_start', message: { id: 'msg_mock', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1 } } })];
    blocks.forEach((b, index) => {
      if (b.type === 'thinking') {
        ev.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
        for (const w of words(b.thinking)) ev.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: w } }));
        ev.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } }));
      } else if (b.type === 'text') {
        ev.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
        for (const w of words(b.text)) ev.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: w } }));
      } else {
        ev.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }));
        for (const p of pieces(JSON.stringify(b.input), argChunk)) ev.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } }));
      }
      ev.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    });
    ev.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } }));
    ev.push(sse('message_stop', { type: 'message_stop' }));
    return ev;
  }
  if (provider === 'openai-chat') {
    const calls = plan.calls.map((c, i) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) }, index: i }));
    const finish = calls.length ? 'tool_calls' : 'stop';
    const u = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
    if (!stream) {
      return { id: 'chatcmpl-mock', object: 'chat.completion', created: 1763900000, model, choices: [{ index: 0, message: { role: 'assistant', content: plan.text || null, refusal: null, ...(calls.length ? { tool_calls: calls.map(({ index, ...c }) => c) } : {}) }, finish_reason: finish, logprobs: null }], usage: u };
    }
    const chunk = (delta, finish_reason = null, extra = {}) => sse(null, { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1763900000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra });
    const ev = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const w of words(plan.text)) ev.push(chunk({ content: w }));
    for (const c of calls) {
      ev.push(chunk({ tool_calls: [{ index: c.index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
      for (const p of pieces(c.function.arguments, argChunk)) ev.push(chunk({ tool_calls: [{ index: c.index, function: { arguments: p } }] }));
    }
    ev.push(chunk({}, finish));
    ev.push(sse(null, { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1763900000, model, choices: [], usage: u }));
    ev.push('data: [DONE]\n\n');
    return ev;
  }
  if (provider === 'openai-responses') {
    const output = [];
    if (plan.reasoning) output.push({ id: 'rs_mock', type: 'reasoning', summary: [{ type: 'summary_text', text: plan.reasoning }], encrypted_content: 'ZW5jcnlwdGVkLW1vY2s=' });
    if (plan.text) output.push({ id: 'msg_mock', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: plan.text, annotations: [] }] });
    for (const c of plan.calls) output.push({ id: `fc_${c.id}`, type: 'function_call', status: 'completed', call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) });
    const u = { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output };
    const response = (status, out, extra = {}) => ({ id: 'resp_mock', object: 'response', created_at: 1763900000, status, model, output: out, ...extra });
    if (!stream) return response('completed', output, { usage: u });
    let seq = 0;
    const e = (type, data) => sse(type, { type, sequence_number: seq++, ...data });
    const ev = [e('response.created', { response: response('in_progress', []) })];
    output.forEach((item, output_index) => {
      if (item.type === 'reasoning') {
        ev.push(e('response.output_item.added', { output_index, item: { id: item.id, type: 'reasoning', summary: [] } }));
        for (const w of words(item.summary[0].text)) ev.push(e('response.reasoning_summary_text.delta', { item_id: item.id, output_index, summary_index: 0, delta: w }));
      } else if (item.type === 'message') {
        ev.push(e('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }));
        for (const w of words(item.content[0].text)) ev.push(e('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: w, logprobs: [] }));
      } else {
        ev.push(e('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } }));
        for (const p of pieces(item.arguments, argChunk)) ev.push(e('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: p }));
      }
      ev.push(e('response.output_item.done', { output_index, item }));
    });
    ev.push(e('response.completed', { response: response('completed', output, { usage: u }) }));
    return ev;
  }
  // gemini
  const usageMetadata = { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output };
  const chunk = (parts, finishReason) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }], usageMetadata, modelVersion: model, responseId: 'mockResp1' });
  const parts = [];
  if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
  if (plan.text) parts.push({ text: plan.text });
  plan.calls.forEach((c, i) => parts.push({ functionCall: { name: c.name, args: c.input }, ...(i === 0 ? { thoughtSignature: 'bW9jay1nZW1pbmktc2ln' } : {}) }));
  if (!stream) return chunk(parts, 'STOP');
  const ev = [];
  if (plan.reasoning) ev.push(sse(null, chunk([{ text: plan.reasoning, thought: true }])));
  for (const w of words(plan.text)) ev.push(sse(null, chunk([{ text: w }])));
  const callParts = parts.filter((p) => p.functionCall);
  ev.push(sse(null, chunk(callParts, 'STOP')));
  return ev;
}

/** The error body each provider sends with an HTTP status. */
export function errorBody(provider, status) {
  const anthropicType = { 400: 'invalid_request_error', 401: 'authentication_error', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error', 503: 'overloaded_error' }[status] ?? 'api_error';
  if (provider === 'anthropic') return { type: 'error', error: { type: anthropicType, message: `mock ${status}` }, request_id: 'req_mock' };
  if (provider === 'gemini') {
    const s = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' }[status] ?? 'INTERNAL';
    return { error: { code: status, message: `mock ${status}`, status: s } };
  }
  const t = { 400: ['invalid_request_error', null], 401: ['invalid_request_error', 'invalid_api_key'], 429: ['requests', 'rate_limit_exceeded'], 500: ['server_error', null] }[status] ?? ['server_error', null];
  return { error: { message: `mock ${status}`, type: t[0], param: null, code: t[1] } };
}

/** The provider error event a stream opens with (x-mock: overloaded-first). */
function errorEvent(provider) {
  if (provider === 'anthropic') return sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  if (provider === 'openai-responses') return sse('error', { type: 'error', sequence_number: 0, code: 'server_error', message: 'mock overloaded', param: null });
  if (provider === 'gemini') return sse(null, { error: { code: 503, message: 'mock overloaded', status: 'UNAVAILABLE' } });
  return sse(null, { error: { message: 'mock overloaded', type: 'server_error', param: null, code: null } });
}

function route(method, url) {
  if (method !== 'POST') return null;
  const path = url.split('?')[0];
  if (path.endsWith('/v1/messages')) return { provider: 'anthropic' };
  if (path.endsWith('/chat/completions')) return { provider: 'openai-chat' };
  if (path.endsWith('/responses')) return { provider: 'openai-responses' };
  const g = /\/models\/([\w.-]+):(streamGenerateContent|generateContent)$/.exec(path);
  if (g) return { provider: 'gemini', model: g[1], stream: g[2] === 'streamGenerateContent' };
  return null;
}

function parseMock(h) {
  const o = {};
  for (const kv of String(h ?? '').split(',')) {
    const [k, v] = kv.split('=').map((s) => s.trim());
    if (k) o[k] = v === undefined ? true : Number.isNaN(Number(v)) ? v : Number(v);
  }
  return o;
}

/**
 * The mock as a request handler (`handler.requests` lists what it received), for a server
 * of its own or mounted under a prefix of another (the demo's server serves it at `/mock`).
 */
export function mockHandler() {
  const counts = new Map();
  const requests = [];
  const handler = (req, res) => {
    // A page on another local origin (the demo, the browser tests) may call it.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', 'retry-after, retry-after-ms');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-methods': 'POST', 'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*', 'access-control-max-age': '600' }).end();
      return;
    }
    const r = route(req.method, req.url);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({ url: req.url, headers: req.headers, body: raw });
      if (!r) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such endpoint"}}');
        return;
      }
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody(r.provider, 400)));
        return;
      }
      const mock = parseMock(req.headers['x-mock']);
      const key = `${req.headers['x-mock'] ?? ''}|${req.headers['x-mock-id'] ?? ''}`;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      const active = mock.times === undefined || n <= mock.times;
      if (mock.status && active) {
        const headers = { 'content-type': 'application/json' };
        if (mock['retry-after'] !== undefined) headers['retry-after'] = String(mock['retry-after']);
        if (mock['retry-after-ms'] !== undefined) headers['retry-after-ms'] = String(mock['retry-after-ms']);
        res.writeHead(mock.status, headers).end(JSON.stringify(errorBody(r.provider, mock.status)));
        return;
      }
      const stream = r.provider === 'gemini' ? r.stream : body.stream === true;
      const model = r.model ?? body.model ?? 'mock-1';
      // Call ids differ per request, as the providers' do (derived from the request).
      const plan = planFor(r.provider, body, createHash('sha256').update(raw).digest('hex').slice(0, 12));
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(encode(r.provider, plan, { stream: false, model })));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      let events = encode(r.provider, plan, { stream: true, model });
      // The providers' first event says nothing yet (Gemini's first chunk is already content).
      if (mock['overloaded-first'] && active) events = r.provider === 'gemini' ? [errorEvent(r.provider)] : [events[0], errorEvent(r.provider)];
      let closed = false;
      res.on('close', () => {
        closed = true;
      });
      for (let i = 0; i < events.length && !closed; i++) {
        if (mock.stall !== undefined && active && i >= mock.stall) {
          // The connection stays open and nothing more comes (until the client gives up).
          await new Promise((f) => res.on('close', f));
          return;
        }
        if (mock.cut !== undefined && active && i >= mock.cut) {
          // What was written reaches the client, then the connection breaks.
          await new Promise((f) => setTimeout(f, 20));
          res.destroy();
          return;
        }
        let ev = events[i];
        if (mock.malformed !== undefined && active && i + 1 === mock.malformed) ev = ev.replace(/data: \{/, 'data: {oops');
        await new Promise((f) => res.write(ev, f));
        if (mock.slow) await new Promise((f) => setTimeout(f, mock.slow));
      }
      res.end();
    });
  };
  handler.requests = requests;
  return handler;
}

/** Starts the mock on 127.0.0.1 (`port` 0: any free port). Resolves `{ url, port, requests, close }`. */
export function startMockProvider({ port = 0 } = {}) {
  const handler = mockHandler();
  const requests = handler.requests;
  const server = createServer(handler);
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const p = server.address().port;
      resolve({
        url: `http://127.0.0.1:${p}`,
        port: p,
        requests,
        close: () => new Promise((f) => {
          server.closeAllConnections?.();
          server.close(() => f());
        }),
      });
    });
  });
}

/** The base URL each provider's adapter takes on the mock (the SDKs' conventions). */
export function mockBaseURL(url, provider) {
  if (provider === 'anthropic') return url;
  if (provider === 'gemini') return `${url}/v1beta`;
  return `${url}/v1`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8787;
  const m = await startMockProvider({ port });
  console.log(`mock provider on ${m.url} (anthropic: ${m.url}, openai: ${m.url}/v1, gemini: ${m.url}/v1beta)`);
}
