// The npm package as Node users import it (`import … from 'promptloom'`, the "node"
// export), against every shared case, plus what only the JS face does: async resolvers,
// bytes, host-held large data, Error objects, and surviving bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lower, lowerAsync, lowerMany, lowerManyAsync, lowerConversation, lowerConversationAsync, Conversation, openMessageStore, defaultCapabilities, normalizeMessage, resolveRequests, providers, PromptloomError } from 'promptloom';
import { successCases, errorCases, resolverFor } from './cases.mjs';
import { __holdData } from '../../pkg/src/api.js';

const PNG_HEAD = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function bigPng(bytes) {
  const b = Buffer.alloc(bytes, 7);
  PNG_HEAD.copy(b);
  return b;
}

test('every shared case lowers to the recorded body and report', () => {
  const cases = successCases();
  assert.ok(cases.length >= 100);
  for (const c of cases) {
    const out = lower(c.message, { provider: c.provider, ...c.options, resolve: resolverFor(c.resolve) });
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(out.report, c.expected.report, `${c.name} / ${c.provider} report`);
    assert.deepEqual(out.json(), JSON.parse(c.expected.body));
  }
});

test('resolveRequests: the core plans exactly what lower() asks the resolver, for every shared case', () => {
  let asked = 0;
  for (const c of successCases()) {
    const seen = [];
    const answer = resolverFor(c.resolve);
    lower(c.message, { provider: c.provider, ...c.options, resolve: (r) => (seen.push(r), answer(r)) });
    assert.deepEqual(resolveRequests(c.message), seen, `${c.name} / ${c.provider}`);
    asked += seen.length;
  }
  assert.ok(asked >= 100, `the cases ask the resolver (${asked})`);
  const mention = { parts: [{ type: 'mention', target: { kind: 'file', path: 'a.ts', range: { start: 2 } } }, { type: 'mention', target: { kind: 'skill', name: 's' } }] };
  assert.deepEqual(resolveRequests(mention), [{ type: 'file', part: 0, ref: { kind: 'path', path: 'a.ts', range: { start: 2 } } }]);
  assert.throws(() => resolveRequests({ parts: 'x' }), (e) => e instanceof PromptloomError && e.code === 'InvalidMessage');
  assert.throws(() => resolveRequests(undefined), (e) => e instanceof PromptloomError && e.code === 'InvalidMessage');
});

test('lowerMany: every shared case of a provider and options in one call, the same bytes as lower()', async () => {
  const groups = new Map();
  for (const c of successCases()) {
    const key = `${c.provider} ${JSON.stringify(c.options)}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  let n = 0;
  for (const cases of groups.values()) {
    const opts = { provider: cases[0].provider, ...cases[0].options };
    for (const async of [false, true]) {
      const resolve = (req) => resolverFor(cases[req.message].resolve, { async })(req);
      const out = async ? await lowerManyAsync(cases.map((c) => c.message), { ...opts, resolve }) : lowerMany(cases.map((c) => c.message), { ...opts, resolve });
      cases.forEach((c, i) => {
        assert.ok(!(out[i] instanceof PromptloomError), `${c.name}: ${out[i].message}`);
        assert.equal(out[i].body, c.expected.body, `${c.name} / ${c.provider}`);
        assert.deepEqual(out[i].report, c.expected.report);
      });
      n += cases.length;
    }
  }
  assert.ok(n >= 200);
  // A message that fails gets its error in place; the others are lowered.
  const mixed = lowerMany([{ parts: [{ type: 'text', text: 'a' }] }, { parts: [] }, { parts: [{ type: 'command', id: '/x' }] }, { parts: [{ type: 'text', text: 'b' }] }], { provider: 'gemini' });
  assert.deepEqual(mixed.map((r) => (r instanceof PromptloomError ? r.code : JSON.parse(r.body).contents[0].parts[0].text)), ['a', 'EmptyMessage', 'UnresolvedCommand', 'b']);
  assert.deepEqual(lowerMany([], { provider: 'anthropic' }), []);
  assert.throws(() => lowerMany([], { provider: 'bedrock' }), (e) => e.code === 'InvalidOptions');
  assert.throws(() => lowerMany('x', { provider: 'anthropic' }), (e) => e.code === 'InvalidMessage');
});

test('large text attachments, as bytes or base64, are read into the body in one call', () => {
  const text = '# Notes\n' + '- a line worth keeping\n'.repeat(200);
  const bytes = new TextEncoder().encode(text);
  for (const data of [bytes, Buffer.from(bytes).toString('base64')]) {
    for (const label of [{ mime: 'text/markdown' }, { name: 'notes.md' }, {}]) {
      const out = lower({ parts: [{ type: 'file-attachment', data, ...label }] }, { provider: 'openai-chat' });
      assert.ok(out.body.includes(JSON.stringify(text.slice(0, 200)).slice(1, -1)), JSON.stringify(label));
      assert.equal(out.report.blocks[0].rule, 'attachment-text');
    }
  }
});

test('an async resolver gives the same result, through lowerAsync', async () => {
  for (const c of successCases().filter((c) => Object.keys(c.resolve).length > 0)) {
    const pending = lowerAsync(c.message, { provider: c.provider, ...c.options, resolve: resolverFor(c.resolve, { async: true }) });
    assert.ok(pending instanceof Promise);
    const out = await pending;
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
  }
});

// What a function returns depends on which function, and for compose() and a Conversation on
// their arguments, never on the data: the synchronous forms refuse what would need a Promise,
// naming the async form; the async forms answer a Promise even when nothing is asked, and
// their errors are rejections.
test('the synchronous and async forms: the kind of answer follows the call, not the message', async () => {
  const ref = { role: 'user', parts: [{ type: 'file-ref', ref: { kind: 'path', path: 'a.ts' } }] };
  const plain = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const later = async () => 'export const a = 1;\n';
  const refused = (use, path) => (e) => e instanceof PromptloomError && e.code === 'InvalidOptions' && e.details.use === use && e.details.path === path && e.message.includes(`${use}()`);
  const unheard = [];
  const onUnhandled = (r) => unheard.push(r);
  process.on('unhandledRejection', onUnhandled);
  try {
    assert.throws(() => lower(ref, { provider: 'anthropic', resolve: later }), refused('lowerAsync', 'resolve'));
    assert.throws(() => lower(ref, { provider: 'anthropic', resolve: async () => { throw new Error('down'); } }), refused('lowerAsync', 'resolve'));
    assert.throws(() => lowerMany([plain, ref], { provider: 'gemini', resolve: later }), refused('lowerManyAsync', 'resolve'));
    assert.throws(() => lowerConversation([ref], { provider: 'openai-chat', resolve: later }), refused('lowerConversationAsync', 'resolve'));
    const store = await openMessageStore({ backend: 'memory' });
    assert.throws(() => lower(plain, { provider: 'anthropic', store }), refused('lowerAsync', 'store'));
    assert.throws(() => lowerMany([], { provider: 'anthropic', store }), refused('lowerManyAsync', 'store'));
    assert.throws(() => lowerConversation([plain], { provider: 'anthropic', store }), refused('lowerConversationAsync', 'store'));
    // The async forms: a Promise whatever the message holds, and rejections, not throws.
    const sync = lower(plain, { provider: 'anthropic' });
    for (const p of [lowerAsync(plain, { provider: 'anthropic' }), lowerAsync(plain, { provider: 'anthropic', resolve: later, store })]) {
      assert.ok(p instanceof Promise);
      assert.equal((await p).body, sync.body);
    }
    assert.equal((await lowerAsync(ref, { provider: 'anthropic', resolve: later })).body.includes('export const a = 1;'), true);
    const bad = lowerAsync({ parts: [{ type: 'command', id: '/x' }] }, { provider: 'anthropic' });
    assert.ok(bad instanceof Promise);
    await assert.rejects(bad, (e) => e.code === 'UnresolvedCommand');
    await assert.rejects(lowerAsync(plain, { provider: 'bedrock' }), (e) => e.code === 'InvalidOptions');
    assert.ok((await lowerManyAsync([plain], { provider: 'gemini' }))[0].body);
    assert.ok(lowerConversationAsync([plain], { provider: 'gemini' }) instanceof Promise);
    // A Conversation without a store answers at once; appendAsync always with a Promise.
    const chat = new Conversation();
    assert.equal(chat.append(plain), 0);
    assert.throws(() => chat.append(ref, { resolve: later }), refused('appendAsync', 'resolve'));
    assert.equal(chat.length, 1, 'the refused turn was not kept');
    const n = chat.appendAsync(ref, { resolve: later });
    assert.ok(n instanceof Promise);
    assert.equal(await n, 1);
    assert.equal(await chat.appendAsync(plain), 2);
    await assert.rejects(chat.appendAsync({ role: 'robot', parts: [] }), (e) => e instanceof PromptloomError);
    assert.match(chat.lower({ provider: 'anthropic' }).body, /export const a = 1;/);
    // With a store, append answers with a Promise, whatever the turn.
    const kept = new Conversation({ store, session: 's' });
    const first = kept.append(plain);
    assert.ok(first instanceof Promise);
    assert.equal(await first, 0);
    chat.free();
    kept.free();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(unheard, [], 'no Promise a refused resolver answered is left to reject unheard');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('every error case throws a PromptloomError with the recorded code and message', () => {
  for (const c of errorCases()) {
    if (c.expected === 'ok') {
      assert.ok(lower(c.message, { provider: c.provider, ...c.options }).body);
      continue;
    }
    assert.throws(
      () => lower(c.message, { provider: c.provider, ...c.options }),
      (e) => {
        assert.ok(e instanceof PromptloomError && e instanceof Error, 'a real Error');
        assert.equal(e.code, c.expected.code);
        assert.equal(e.message, c.expected.message);
        assert.deepEqual(e.details, c.expected.details);
        return true;
      },
      `${c.name} / ${c.provider}`,
    );
  }
});

test('a 1 MB image stays in JS and splices to the same body as the inline path', () => {
  const png = bigPng(1 << 20);
  const b64 = png.toString('base64');
  for (const provider of providers) {
    const msg = { role: 'user', parts: [{ type: 'text', text: 'x' }, { type: 'file-attachment', data: b64, mime: 'image/png', name: 'a.png' }] };
    const sliced = lower(msg, { provider, capabilities: { images: { max_bytes: 8 << 20 } } });
    // A higher inline-text limit makes the glue pass the data through wasm instead.
    const inline = lower(msg, { provider, capabilities: { images: { max_bytes: 8 << 20 }, inline_text_max_bytes: 4 << 20 } });
    assert.equal(sliced.body, inline.body, provider);
    assert.ok(sliced.body.includes(b64));
    const asBytes = lower({ ...msg, parts: [msg.parts[0], { ...msg.parts[1], data: png }] }, { provider, capabilities: { images: { max_bytes: 8 << 20 } } });
    assert.equal(asBytes.body, sliced.body, `${provider} from Uint8Array`);
    const dataUrl = lower({ ...msg, parts: [msg.parts[0], { ...msg.parts[1], data: `data:image/png;base64,${b64}` }] }, { provider, capabilities: { images: { max_bytes: 8 << 20 } } });
    assert.equal(dataUrl.body, sliced.body, `${provider} from a data URL`);
  }
});

test('the glue holds back only data the core never reads whole, by the core\'s rules (SVG is text; data URL headers)', () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg">' + '<rect width="1" height="1"/>'.repeat(200) + '</svg>';
  const b64 = Buffer.from(svg).toString('base64');
  for (const label of [{ mime: 'image/svg+xml' }, { name: 'logo.svg' }]) {
    const slots = [];
    __holdData({ type: 'file-attachment', data: b64, ...label }, 0, slots);
    assert.equal(slots.length, 0, `an SVG is read whole by the core (${JSON.stringify(label)})`);
    const out = lower({ parts: [{ type: 'file-attachment', data: b64, ...label }] }, { provider: 'anthropic' });
    assert.ok(out.body.includes('<rect width=\\"1\\"'), 'the SVG goes in as text');
  }
  const png = bigPng(4096).toString('base64');
  const slots = [];
  const held = __holdData({ type: 'file-attachment', data: `DATA:Image/PNG;name=a.png;BASE64,${png}` }, 0, slots);
  assert.equal(slots.length, 1, 'a base64 data URL stays in JS');
  assert.equal(held.data.mime, 'image/png', 'its media type as the core reads the header');
  for (const data of [`data:image/png,${png}`, `data:image/png;charset=base64,${png}`]) {
    const none = [];
    __holdData({ type: 'file-attachment', data }, 0, none);
    assert.equal(none.length, 0, `not a base64 data URL: ${data.slice(0, 30)}`);
  }
});

test('large data that could break the JSON string is never spliced', () => {
  const b64 = bigPng(400 << 10).toString('base64');
  const evil = b64.slice(0, 1000) + '","x":"' + b64.slice(1007);
  assert.throws(
    () => lower({ role: 'user', parts: [{ type: 'file-attachment', data: evil, mime: 'image/png' }] }, { provider: 'anthropic' }),
    (e) => e.code === 'InvalidData',
  );
  const wrapped = b64.replace(/(.{76})/g, '$1\n');
  const out = lower({ role: 'user', parts: [{ type: 'file-attachment', data: wrapped, mime: 'image/png' }] }, { provider: 'gemini' });
  assert.ok(out.body.includes(b64), 'line-wrapped base64 is cleaned by the core');
});

test('a large file-ref image read as bytes is spliced; a large text file read as bytes is text', () => {
  const png = bigPng(600 << 10);
  const text = Buffer.from('line\n'.repeat(100000));
  const out = lower(
    { role: 'user', parts: [{ type: 'file-ref', ref: { kind: 'path', path: 'big.png' } }, { type: 'file-ref', ref: { kind: 'path', path: 'big.log', range: { start: 2, end: 3 } } }] },
    { provider: 'anthropic', resolve: (r) => (r.ref.path === 'big.png' ? png : text) },
  );
  const body = out.json();
  assert.equal(body.messages[0].content[0].source.data, png.toString('base64'));
  assert.equal(body.messages[0].content[1].text, '```log big.log:2-3\nline\nline\n```');
});

test('bad input never kills the instance', () => {
  const garbage = [null, 1, 'x', [], {}, { parts: 3 }, { parts: [null] }, { parts: [{ type: 7 }] },
    { parts: [{ type: 'file-ref', ref: { kind: 'path', path: 'a', range: { start: -1 } } }] },
    { parts: [{ type: 'file-attachment', data: { $slot: 99, head: 'AAAA', len: 3 } }] },
    { parts: [{ type: 'file-attachment', data: '%%%%' }] },
    { parts: [{ type: 'editor-context', kind: 'x' }] }];
  for (const g of garbage) {
    for (const provider of providers) {
      assert.throws(() => lower(g, { provider }), (e) => e instanceof PromptloomError && typeof e.code === 'string', JSON.stringify(g));
    }
  }
  assert.throws(() => lower({ parts: [] }, { provider: 'nope' }), (e) => e.code === 'InvalidOptions');
  assert.throws(() => lower({ parts: [] }), (e) => e.code === 'InvalidOptions');
  assert.throws(() => lower({ parts: [] }, { provider: 'gemini', resolve: 3 }), (e) => e.code === 'InvalidOptions');
  // Still alive.
  assert.equal(lower({ parts: [{ type: 'text', text: 'ok' }] }, { provider: 'openai-chat' }).body, '{"messages":[{"role":"user","content":"ok"}]}');
});

test('random part soup lowers or fails with a code, and the instance keeps working', () => {
  let seed = 42;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const pick = (a) => a[rnd(a.length)];
  const values = [null, 0, -1, 1e300, '', 'x', '<editor_context>', [], {}, { kind: 'path' }, { start: 5, end: 1 }, 'data:,', 'data:image/png;base64,', 'AAAA'];
  const types = ['text', 'file-ref', 'file-attachment', 'command', 'mention', 'editor-context', 'future-thing'];
  const keys = ['text', 'ref', 'data', 'mime', 'name', 'size', 'kind', 'payload', 'target', 'source', 'emitted_at', 'id', 'content_id'];
  for (let i = 0; i < 2000; i++) {
    const parts = Array.from({ length: 1 + rnd(4) }, () => {
      const p = { type: pick(types) };
      for (let k = 0; k < 3; k++) p[pick(keys)] = pick(values);
      return p;
    });
    try {
      const out = lower({ role: 'user', parts }, { provider: pick(providers) });
      JSON.parse(out.body);
    } catch (e) {
      assert.ok(e instanceof PromptloomError && e.code !== 'Internal', `${e.code}: ${e.message}`);
    }
  }
  assert.ok(lower({ parts: [{ type: 'text', text: 'still here' }] }, { provider: 'gemini' }).body.includes('still here'));
});

test('capabilities, round trip and package metadata', async () => {
  const caps = defaultCapabilities('anthropic');
  assert.deepEqual(caps.images.mimes, ['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
  assert.equal(caps.images.max_bytes, 5 * 1024 * 1024);
  const m = { role: 'user', parts: [{ type: 'future-part', foo: [1, 2] }, { type: 'text', text: 'a' }], metadata: { schema_version: 2, thread: 't' } };
  assert.deepEqual(normalizeMessage(m), m);
  // A version-1 message comes back in the current shape (the read-time adapter).
  const v1 = { role: 'user', parts: [{ type: 'file-attachment', content_id: 'sha256-x', name: 'a.png' }], metadata: { schema_version: 1 } };
  assert.deepEqual(normalizeMessage(v1), { role: 'user', parts: [{ type: 'file-attachment', blob: { content_id: 'sha256-x' }, name: 'a.png' }], metadata: { schema_version: 2 } });
  const pkg = (await import('promptloom/package.json', { with: { type: 'json' } })).default;
  assert.equal(pkg.exports['.'].types, './index.d.ts');
  assert.deepEqual(Object.keys(pkg.exports['.']), ['types', 'workerd', 'browser', 'node', 'default']);
});
