// The WASI component in jco (transpiled to JS, run in Node with the preview2 shims): every
// shared case lowers to the recorded body; errors are the WIT `error` variant.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { successCases, errorCases, root } from './cases.mjs';

let lowering;
before(async () => {
  const out = join(root, 'tests/js/.out/component');
  execFileSync(join(root, 'node_modules/.bin/jco'), ['transpile', join(root, 'target/component/promptloom.wasm'), '-o', out, '--quiet'], { stdio: 'pipe' });
  const mod = await import(pathToFileURL(join(out, 'promptloom.js')).href);
  lowering = mod.lowering;
});

function resolved(table) {
  return Object.entries(table)
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([part, a]) => {
      let content;
      if ('text' in a) content = { tag: 'text', val: a.text };
      else if ('bytes' in a) content = { tag: 'bytes', val: { data: new Uint8Array(Buffer.from(a.bytes, 'base64')), mime: a.mime } };
      else if ('payload' in a) content = { tag: 'payload', val: JSON.stringify(a.payload) };
      else if ('error' in a) content = { tag: 'failed', val: a.error };
      else content = { tag: 'missing' };
      return { part: Number(part), content };
    });
}

function call(c) {
  const o = c.options;
  return lowering.lower(JSON.stringify(c.message), {
    provider: c.provider,
    system: o.system,
    tools: o.tools && JSON.stringify(o.tools),
    capabilities: o.capabilities && JSON.stringify(o.capabilities),
    params: o.params && JSON.stringify(o.params),
    resolved: resolved(c.resolve),
  });
}

test('every shared case lowers in jco to the recorded body', () => {
  for (const c of successCases()) {
    const out = call(c);
    assert.equal(out.body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(JSON.parse(out.report), c.expected.report);
  }
});

test('errors are the WIT error variant with the recorded message and details', () => {
  const kebab = (code) => code.replace(/[A-Z]/g, (m, i) => (i ? '-' : '') + m.toLowerCase());
  for (const c of errorCases()) {
    if (c.expected === 'ok') {
      assert.ok(call(c).body);
      continue;
    }
    assert.throws(
      () => call(c),
      (e) => {
        assert.equal(e.payload.tag, kebab(c.expected.code), `${c.name} / ${c.provider}`);
        assert.equal(e.payload.val.message, c.expected.message);
        assert.deepEqual(JSON.parse(e.payload.val.details), c.expected.details);
        return true;
      },
    );
  }
  assert.equal(call({ message: { parts: [{ type: 'text', text: 'alive' }] }, provider: 'anthropic', options: {}, resolve: {} }).body,
    '{"messages":[{"role":"user","content":[{"type":"text","text":"alive"}]}]}');
});
