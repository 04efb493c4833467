// The response side in Node through the npm package: the recorded responses (the Rust
// snapshots are the oracle), and the model adapters against the local mock provider
// (scripts/mock-provider.mjs) over real HTTP: streams of every provider, a whole
// conversation with a tool round trip, retries with retry-after, backoff, a 4xx that is not
// retried, an abort mid-stream and during a retry wait, a cut stream, a malformed event.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from 'promptloom';
import { responseCases, objectCases } from './cases.mjs';
import { responseConformance } from './response-conformance.mjs';
import { eventStreamConformance } from './event-stream-conformance.mjs';
import { startMockProvider, mockBaseURL } from '../../scripts/mock-provider.mjs';

const PROVIDERS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];
let mock;
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await mock.close();
});

test('response conformance in Node: recorded events and turns, re-chunked, parseResponse, hostile bytes', () => {
  const results = responseConformance(pl, { cases: responseCases(), objects: objectCases() });
  assert.equal(results.length, 5);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

test('event streams in Node: every recorded response relayed with toResponse() reads back the same with readEventStream(), and picks up from an EventStreamLog after a break', async () => {
  const results = await eventStreamConformance(pl, { cases: responseCases(), objects: objectCases() });
  assert.equal(results.length, 7);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});

const fast = { initialDelayMs: 5, maxDelayMs: 20 };
function adapter(provider, extra = {}) {
  return pl.createAdapter({ provider, apiKey: 'test-key', baseURL: mockBaseURL(mock.url, provider), model: 'mock-model', retry: fast, ...extra });
}
const settings = (provider) => (provider === 'gemini' ? {} : provider === 'anthropic' ? { model: 'mock-model', maxOutputTokens: 256, stream: true } : { model: 'mock-model', stream: true });
const tools = [{ name: 'search', description: 'Searches the docs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }];

for (const provider of PROVIDERS) {
  test(`${provider}: a conversation with a tool round trip through the adapter and the mock provider`, async () => {
    const conv = new pl.Conversation({ options: { provider, tools, ...settings(provider) } });
    conv.append({ role: 'user', parts: [{ type: 'text', text: 'How do I stream?' }] });
    const first = adapter(provider).send(conv.lower().body);
    const seen = [];
    for await (const ev of first) seen.push(ev);
    const turn = await first.turn;
    assert.ok(seen.some((e) => e.type === 'text-delta'), JSON.stringify(seen));
    assert.ok(seen.some((e) => e.type === 'tool-call-end' && e.name === 'search' && e.input.query === 'How do I stream?'));
    assert.equal(seen.at(-1).type, 'finish');
    assert.equal(seen.at(-1).reason, 'tool-calls');
    assert.equal(turn.metadata.finish_reason, 'tool-calls');
    assert.ok(turn.metadata.usage.input_tokens > 0);
    const call = turn.parts.find((p) => p.type === 'tool-call');
    conv.append(turn);
    conv.append({ role: 'tool', parts: [{ type: 'tool-result', call_id: call.id, name: call.name, output: 'Use createAdapter().send().' }] });
    // What was lowered is what goes on the wire.
    const body = conv.lower().body;
    const second = adapter(provider).send(body);
    assert.equal(mock.requests.at(-1)?.body === body, false); // not sent until iterated or awaited
    const text = await second.text();
    assert.equal(mock.requests.at(-1).body, body);
    assert.match(text, /The tool answered\. Here is what it said: .*createAdapter/);
    const headers = mock.requests.at(-1).headers;
    if (provider === 'anthropic') {
      assert.equal(headers['x-api-key'], 'test-key');
      assert.equal(headers['anthropic-version'], '2023-06-01');
    } else if (provider === 'gemini') {
      assert.equal(headers['x-goog-api-key'], 'test-key');
      assert.match(mock.requests.at(-1).url, /models\/mock-model:streamGenerateContent\?alt=sse$/);
    } else assert.equal(headers.authorization, 'Bearer test-key');
    conv.free();
  });
}

test('a non-streaming body gets a whole JSON answer, read by the same adapter', async () => {
  const { body } = pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], { provider: 'openai-chat', model: 'm' });
  const s = adapter('openai-chat').send(body);
  const turn = await s.turn;
  assert.match(turn.parts[0].text, /You said: "hi"/);
  const g = pl.createAdapter({ provider: 'gemini', baseURL: mockBaseURL(mock.url, 'gemini'), model: 'gemini-x', stream: false });
  const t2 = await g.send(pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'yo' }] }], { provider: 'gemini' }).body).turn;
  assert.match(t2.parts.find((p) => p.type === 'text').text, /You said: "yo"/);
  assert.match(mock.requests.at(-1).url, /:generateContent$/);
});

test('the settings a request was lowered with pick the URL; generate() returns the whole turn', async () => {
  const base = mockBaseURL(mock.url, 'gemini');
  const g = pl.createAdapter({ provider: 'gemini', apiKey: 'k', baseURL: base });
  const msg = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  // The same adapter serves two models, streamed and whole, from each Lowered's report.call.
  const streamed = pl.lower(msg, { provider: 'gemini', model: 'gemini-2.5-flash', stream: true });
  assert.deepEqual(streamed.report.call, { model: 'gemini-2.5-flash', stream: true });
  const turn = await g.generate(streamed);
  assert.match(turn.parts.find((p) => p.type === 'text').text, /You said: "hi"/);
  assert.match(mock.requests.at(-1).url, /models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/);
  const conv = new pl.Conversation({ options: { provider: 'gemini', model: 'gemini-2.5-pro' } });
  conv.append(msg);
  const whole = conv.lower();
  assert.deepEqual(whole.report.call, { model: 'gemini-2.5-pro' });
  // No `stream` setting: the adapter's own (streaming by default).
  await g.generate(whole);
  assert.match(mock.requests.at(-1).url, /models\/gemini-2\.5-pro:streamGenerateContent\?alt=sse$/);
  await g.generate(pl.lower(msg, { provider: 'gemini', model: 'gemini-2.5-pro', stream: false }));
  assert.match(mock.requests.at(-1).url, /models\/gemini-2\.5-pro:generateContent$/);
  conv.free();
  // An adapter's model is the default; a Lowered naming another wins.
  const fixed = pl.createAdapter({ provider: 'gemini', baseURL: base, model: 'gemini-2.0-flash', stream: false });
  await fixed.generate(pl.lower(msg, { provider: 'gemini' }).body);
  assert.match(mock.requests.at(-1).url, /models\/gemini-2\.0-flash:generateContent$/);
  await fixed.generate(pl.lower(msg, { provider: 'gemini', model: 'gemini-2.5-flash' }));
  assert.match(mock.requests.at(-1).url, /models\/gemini-2\.5-flash:generateContent$/);
  // The other providers read model and stream in the body; generate() gives the turn too.
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses']) {
    const a = pl.createAdapter({ provider, apiKey: 'k', baseURL: mockBaseURL(mock.url, provider) });
    const t = await a.generate(pl.lower(msg, { provider, model: provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4.1', stream: true }));
    assert.match(t.parts.find((p) => p.type === 'text').text, /You said: "hi"/, provider);
    assert.equal(t.metadata.finish_reason, 'stop');
  }
  // A failure rejects generate() with the coded error.
  const failing = pl.createAdapter({ provider: 'anthropic', baseURL: mockBaseURL(mock.url, 'anthropic'), retry: { maxRetries: 0 }, headers: { 'x-mock': 'status=400', 'x-mock-id': 'gen400' } });
  await assert.rejects(failing.generate(pl.lower(msg, { provider: 'anthropic', model: 'claude-sonnet-4-5' })), (e) => e instanceof pl.PromptloomError && typeof e.code === 'string');
});

const hi = (provider) => pl.lowerConversation([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], { provider, ...settings(provider) }).body;

test('429 with retry-after is retried after the wait the provider asked for', async () => {
  for (const provider of PROVIDERS) {
    const retries = [];
    const s = adapter(provider, { headers: { 'x-mock': 'status=429,retry-after-ms=30,times=1', 'x-mock-id': provider } }).send(hi(provider), { onRetry: (r) => retries.push(r) });
    const turn = await s.turn;
    assert.equal(s.attempts, 2, provider);
    assert.equal(retries.length, 1);
    assert.equal(retries[0].delayMs, 30);
    assert.equal(retries[0].error.code, 'RateLimited');
    assert.match(turn.parts.find((p) => p.type === 'text').text, /You said/);
  }
});

test('5xx and overloaded answers are retried with jittered backoff until the budget is spent', async () => {
  const ok = adapter('anthropic', { headers: { 'x-mock': 'status=529,times=2', 'x-mock-id': 'a1' } }).send(hi('anthropic'));
  await ok.turn;
  assert.equal(ok.attempts, 3);
  const delays = [];
  const spent = adapter('openai-chat', { headers: { 'x-mock': 'status=500', 'x-mock-id': 'b1' }, retry: { ...fast, maxRetries: 2 } }).send(hi('openai-chat'), { onRetry: (r) => delays.push(r.delayMs) });
  await assert.rejects(spent.turn, (e) => e instanceof pl.PromptloomError && e.code === 'ProviderError' && e.details.status === 500);
  assert.equal(spent.attempts, 3);
  assert.equal(delays.length, 2);
  assert.ok(delays[0] >= 2 && delays[0] <= 5 && delays[1] >= 5 && delays[1] <= 10, String(delays));
  // A retry-after past the policy's limit is not waited for.
  const late = adapter('gemini', { headers: { 'x-mock': 'status=429,retry-after=3600', 'x-mock-id': 'c1' } }).send(hi('gemini'));
  await assert.rejects(late.turn, (e) => e.code === 'RateLimited' && e.details.retry_after_ms === 3600000);
  assert.equal(late.attempts, 1);
});

test('a 4xx is not retried and carries the provider error', async () => {
  for (const provider of PROVIDERS) {
    const s = adapter(provider, { headers: { 'x-mock': 'status=400', 'x-mock-id': `d-${provider}` } }).send(hi(provider));
    await assert.rejects(
      async () => {
        for await (const _ of s);
      },
      (e) => e instanceof pl.PromptloomError && e.code === 'ProviderRejected' && e.details.status === 400 && e.details.provider === provider,
    );
    assert.equal(s.attempts, 1);
  }
  const auth = adapter('anthropic', { headers: { 'x-mock': 'status=401' } }).send(hi('anthropic'));
  await assert.rejects(auth.turn, (e) => e.code === 'AuthenticationFailed');
});

test('a stream that opens with an overloaded error is retried; one that breaks after content is not', async () => {
  for (const provider of PROVIDERS) {
    const s = adapter(provider, { headers: { 'x-mock': 'overloaded-first=1,times=1', 'x-mock-id': `o-${provider}` } }).send(hi(provider));
    const events = [];
    for await (const ev of s) events.push(ev);
    assert.equal(s.attempts, 2, provider);
    assert.ok(!events.some((e) => e.type === 'error'), JSON.stringify(events));
  }
  for (const provider of PROVIDERS) {
    const s = adapter(provider, { headers: { 'x-mock': 'cut=3', 'x-mock-id': `cut-${provider}` } }).send(hi(provider));
    const events = [];
    await assert.rejects(
      async () => {
        for await (const ev of s) events.push(ev);
      },
      (e) => e.code === 'StreamTruncated' && e.turn && e.turn.metadata.error.code === 'StreamTruncated',
    );
    assert.equal(s.attempts, 1, provider);
    assert.ok(events.some((e) => e.type === 'reasoning-delta' || e.type === 'text-delta'), provider);
    assert.equal(events.at(-1).type, 'finish');
  }
});

test('a malformed event is an error event; the rest of the stream is kept and the iteration ends with StreamMalformed', async () => {
  const s = adapter('anthropic', { headers: { 'x-mock': 'malformed=4' } }).send(hi('anthropic'));
  const events = [];
  let err;
  try {
    for await (const ev of s) events.push(ev);
  } catch (e) {
    err = e;
  }
  assert.equal(err.code, 'StreamMalformed');
  assert.ok(events.some((e) => e.type === 'error' && e.code === 'StreamMalformed'));
  assert.match(err.turn.parts.find((p) => p.type === 'text').text, /You said/);
  await assert.rejects(s.turn, (e) => e === err);
});

test('AbortSignal cancels the stream mid-way and the retry wait', async () => {
  const ctl = new AbortController();
  const s = adapter('openai-responses', { headers: { 'x-mock': 'slow=20' } }).send(hi('openai-responses'), { signal: ctl.signal });
  const events = [];
  await assert.rejects(
    async () => {
      for await (const ev of s) {
        events.push(ev);
        if (ev.type === 'text-delta') ctl.abort(new Error('user pressed stop'));
      }
    },
    (e) => e instanceof pl.PromptloomError && e.code === 'Aborted' && /user pressed stop/.test(e.message) && e.turn.parts.some((p) => p.type === 'text'),
  );
  const ctl2 = new AbortController();
  const waiting = adapter('anthropic', { headers: { 'x-mock': 'status=429,retry-after=30' }, retry: { maxRetryAfterMs: 60000 } }).send(hi('anthropic'), { signal: ctl2.signal, onRetry: () => setTimeout(() => ctl2.abort(), 20) });
  const t0 = Date.now();
  await assert.rejects(waiting.turn, (e) => e.code === 'Aborted');
  assert.ok(Date.now() - t0 < 5000);
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(adapter('gemini').send(hi('gemini'), { signal: pre.signal }).turn, (e) => e.code === 'Aborted');
});

test('batches(): the same events, one array per chunk the parser completed', async () => {
  const one = [];
  for await (const ev of adapter('openai-responses').send(hi('openai-responses'))) one.push(ev);
  const batches = [];
  const s = adapter('openai-responses').send(hi('openai-responses'));
  for await (const b of s.batches()) batches.push(b);
  assert.ok(batches.length >= 1 && batches.every((b) => Array.isArray(b) && b.length > 0));
  assert.deepEqual(batches.flat(), one);
  assert.throws(() => s[Symbol.asyncIterator](), (e) => e.code === 'InvalidOptions');
  assert.equal((await s.turn).metadata.finish_reason, 'stop');
});

test('a consumer that breaks off the iteration cancels the request', async () => {
  const s = adapter('anthropic', { headers: { 'x-mock': 'slow=20' } }).send(hi('anthropic'));
  let n = 0;
  for await (const ev of s) if (ev.type === 'text-delta' && ++n === 2) break;
  await assert.rejects(s.turn, (e) => e.code === 'Aborted' && /stopped reading/.test(e.message) && e.turn.parts.length > 0);
});

test('silence past idleTimeoutMs: retried before any content, a cut stream after it', async () => {
  // The first event (message_start) comes at once, then nothing for 2 s.
  const silent = adapter('anthropic', { idleTimeoutMs: 250, retry: { maxRetries: 1, initialDelayMs: 1 }, headers: { 'x-mock': 'slow=2000' } }).send(hi('anthropic'));
  const t0 = Date.now();
  await assert.rejects(silent.turn, (e) => e.code === 'AdapterFailed' && e.details.timeout_ms === 250 && /(sent nothing for|no answer from anthropic within) 250 ms/.test(e.message));
  assert.equal(silent.attempts, 2);
  assert.ok(Date.now() - t0 < 1900);
  // Content came, then silence: the stream is cut, what came is kept.
  const stalled = adapter('openai-chat', { idleTimeoutMs: 400, headers: { 'x-mock': 'stall=4' } }).send(hi('openai-chat'));
  await assert.rejects(stalled.turn, (e) => e.code === 'StreamTruncated' && /You said/.test(e.turn.parts[0].text));
  assert.equal(stalled.attempts, 1);
  assert.throws(() => pl.createAdapter({ provider: 'anthropic', idleTimeoutMs: -1 }), (e) => e.code === 'InvalidOptions' && e.details.path === 'idleTimeoutMs');
});

test('a network failure is retried, then reported as AdapterFailed', async () => {
  let calls = 0;
  const flaky = pl.createAdapter({
    provider: 'openai-chat',
    baseURL: mockBaseURL(mock.url, 'openai-chat'),
    retry: fast,
    fetch: (url, init) => (++calls === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(url, init)),
  });
  const s = flaky.send(hi('openai-chat'));
  assert.match(await s.text(), /You said/);
  assert.equal(s.attempts, 2);
  const dead = pl.createAdapter({ provider: 'anthropic', baseURL: 'http://127.0.0.1:9', retry: { maxRetries: 1, initialDelayMs: 1 } });
  await assert.rejects(dead.send(hi('anthropic')).turn, (e) => e.code === 'AdapterFailed' && e.details.retryable === true);
});

test('adapter options and bodies are checked with coded errors', () => {
  const bad = (o, path) => assert.throws(() => pl.createAdapter(o), (e) => e instanceof pl.PromptloomError && e.code === 'InvalidOptions' && e.details.path === path);
  bad({ provider: 'bedrock' }, 'provider');
  // Gemini without a model: each Lowered names it; a bare body cannot.
  const g = pl.createAdapter({ provider: 'gemini' });
  assert.equal(g.url, undefined);
  assert.throws(() => g.send('{}'), (e) => e.code === 'InvalidOptions' && e.details.path === 'model' && /model/.test(e.message));
  bad({ provider: 'gemini', baseURL: 'ftp://x' }, 'base_url');
  bad({ provider: 'anthropic', baseURL: 'ftp://x' }, 'base_url');
  bad({ provider: 'anthropic', fetch: 3 }, 'fetch');
  assert.throws(() => pl.createAdapter({ provider: 'anthropic', retry: { maxRetries: -1 } }), (e) => e.code === 'InvalidOptions');
  assert.throws(() => adapter('anthropic').send(42), (e) => e.code === 'InvalidOptions' && e.details.path === 'body');
  assert.equal(pl.createAdapter({ provider: 'openai-responses' }).url, 'https://api.openai.com/v1/responses');
});

test('providerError maps an HTTP error response the way the adapter does', () => {
  const e = pl.providerError('anthropic', { status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', headers: new Headers({ 'retry-after': '2' }) });
  assert.equal(e.code, 'Overloaded');
  assert.equal(e.details.retry_after_ms, 2000);
  assert.equal(pl.providerError('openai-chat', { status: 400, body: { error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'too long' } } }).code, 'ContextTooLong');
  assert.equal(pl.providerError('gemini', { status: 502, body: '<html>' }).code, 'ProviderError');
});
