// The `promptloom/lower` entry in headless Chromium, in a page of its own: every recorded
// case, the conversation suite and the response suite on the lowering-only module; then
// `promptloom/composer` imported lazily in the same page takes over.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBlank } from './chromium.mjs';
import { successCases, conversationCases, conversationErrors, responseCases, objectCases } from './cases.mjs';

let blank;
after(async () => blank?.close());

test('promptloom/lower in Chromium: recorded bodies, conversations, responses; a lazy promptloom/composer after it', async () => {
  blank = await openBlank();
  const out = await blank.page.evaluate(async ({ cases, conversations, responses, objects }) => {
    const pl = await import('/pkg/src/lower-web.js');
    const wasm = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm'));
    const bodies = [];
    for (const c of cases) {
      const table = c.resolve ?? {};
      const resolve = (req) => {
        const a = table[String(req.part)];
        if (!a) return null;
        if ('text' in a) return a.text;
        if ('bytes' in a) {
          const bytes = Uint8Array.from(atob(a.bytes), (x) => x.charCodeAt(0));
          return a.mime ? { bytes, mime: a.mime } : bytes;
        }
        if ('error' in a) throw new Error(a.error);
        return a.payload;
      };
      try {
        bodies.push(pl.lower(c.message, { provider: c.provider, ...c.options, resolve }).body);
      } catch (e) {
        bodies.push(`error ${e.code}: ${e.message}`);
      }
    }
    const { conversationConformance } = await import('/tests/js/conversation-conformance.mjs');
    const { responseConformance } = await import('/tests/js/response-conformance.mjs');
    const { eventStreamConformance } = await import('/tests/js/event-stream-conformance.mjs');
    const results = [...(await conversationConformance(pl, conversations)), ...responseConformance(pl, { cases: responses, objects }), ...(await eventStreamConformance(pl, { cases: responses, objects }))];
    // A chat streaming a reply when the skill panel's entry loads: it finishes on its instance.
    const chat = new pl.Conversation();
    chat.append({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
    const parser = pl.createResponseParser('anthropic');
    const sse = ['event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"claude","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":0}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n', 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'];
    parser.push(sse[0]);
    const comp = await import('/pkg/src/composer-web.js');
    parser.push(sse[1]);
    chat.append(parser.finish());
    const finished = [chat.length, JSON.parse(chat.lower({ provider: 'openai-chat' }).body).messages.map((m) => m.content)];
    const spec = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };
    const late = [comp.validateSkillSpec(spec).ok, pl.lower({ role: 'user', parts: [{ type: 'text', text: 'x' }] }, { provider: 'gemini' }).body];
    return { wasm, bodies, results, late, finished };
  }, { cases: successCases(), conversations: { cases: conversationCases(), errors: conversationErrors() }, responses: responseCases(), objects: objectCases() });
  assert.equal(out.wasm.length, 1, out.wasm.join());
  assert.match(out.wasm[0], /promptloom_lower_bg\.wasm$/, 'the page fetched the lowering-only module alone');
  const cases = successCases();
  cases.forEach((c, i) => assert.equal(out.bodies[i], c.expected.body, `${c.name} / ${c.provider}`));
  assert.ok(out.results.length >= 8, `${out.results.length} checks`);
  for (const r of out.results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  assert.deepEqual(out.late, [true, '{"contents":[{"role":"user","parts":[{"text":"x"}]}]}']);
  assert.deepEqual(out.finished, [2, ['hi', 'Hello']]);
  assert.deepEqual(blank.errors.map(String), []);
});

test('the package in a module Web Worker of a page: it loads, lowers, and its adapter sends Anthropic the browser CORS header', async () => {
  blank ??= await openBlank();
  const got = await blank.page.evaluate(async () => {
    const worker = new Worker('/tests/js/worker-probe.mjs', { type: 'module' });
    const out = await new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => resolve(data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage('go');
    });
    worker.terminate();
    return out;
  });
  assert.equal(got.window, 'undefined');
  assert.equal(got.headers['anthropic-dangerous-direct-browser-access'], 'true');
  assert.equal(got.body, '{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}');
});
