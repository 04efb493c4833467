// promptloom in a worker, seen from the page (promptloom/remote), in Node: the worker is a
// worker_threads Worker running tests/js/remote-worker.mjs (`serveWorker` on its
// parentPort), answered by the mock provider over HTTP. The same suite runs in Deno and in
// Chromium with Web Workers (tests/deno/app/entries.test.mjs, tests/js/chat-apps.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { connectWorker } from 'promptloom/remote';
import { PromptloomError } from 'promptloom';
import { remoteConformance } from './remote-conformance.mjs';
import { startMockProvider } from '../../scripts/mock-provider.mjs';

let mock;
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await mock.close();
});

test('promptloom in a worker_threads Worker: calls, errors and a chat seen from the page', async () => {
  const results = await remoteConformance({ connectWorker, PromptloomError }, { worker: () => new Worker(new URL('./remote-worker.mjs', import.meta.url)), mock: mock.url });
  const failed = results.filter((r) => !r.ok);
  assert.deepEqual(failed, [], failed.map((r) => `${r.name}\n${r.detail}`).join('\n\n'));
  assert.ok(results.length >= 6, `${results.length} scenarios`);
});
