// The two entries share one JS glue: the first loaded serves every call. Loading
// `promptloom` and then `promptloom/composer` in one app is a clear error at the first
// composer call, never a broken object (wasm-bindgen objects cannot cross modules).
import { test } from 'node:test';
import assert from 'node:assert/strict';

test('promptloom first, then promptloom/composer: the composer calls say what to import', async () => {
  const core = await import('../../pkg/src/node.js');
  const comp = await import('../../pkg/src/composer-node.js');
  const { body } = core.lower({ role: 'user', parts: [{ type: 'text', text: 'hi' }] }, { provider: 'anthropic' });
  assert.equal(body, '{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}');
  assert.throws(
    () => comp.compose({ skill_package: { name: 'x', description: 'y', metadata: { framing: 'z' } }, thread_id: 't' }),
    (e) => e.code === 'InvalidOptions' && e.details.needs === 'promptloom/composer' && /loaded first/.test(e.message),
  );
});
