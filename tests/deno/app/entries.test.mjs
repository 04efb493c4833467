// `promptloom` first, then a lazy `await import('promptloom/composer')`, in Deno (the packed
// package installed into node_modules, imported by name): the message store suite on the
// memory backend with the base entry; the entries scenario every host runs
// (tests/js/entries-scenario.mjs); then the composer's suites (the arbiter, sessions, the
// gateway) on the module that took over.
import assert from 'node:assert/strict';
import { v1, gatewayContracts } from '../../js/cases.mjs';
import { conformance } from '../../js/store-conformance.mjs';
import { arbiterConformance } from '../../js/arbiter-conformance.mjs';
import { sessionConformance } from '../../js/session-conformance.mjs';
import { gatewayConformance } from '../../js/gateway-conformance.mjs';
import { arbiterSpecs, composerFixtures } from '../../js/composer-fixtures.mjs';
import { baseThenComposer } from '../../js/entries-scenario.mjs';
import { chatConformance } from '../../js/chat-conformance.mjs';
import { remoteConformance } from '../../js/remote-conformance.mjs';
import { startMockProvider, mockBaseURL } from '../../../scripts/mock-provider.mjs';

const ok = (results, atLeast) => {
  assert.ok(results.length >= atLeast, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error ?? r.detail}`);
};

Deno.test('Chat in Deno: the chat suite, answered by the mock provider over HTTP', async () => {
  const pl = await import('promptloom');
  const mock = await startMockProvider();
  try {
    const openStore = (name) => pl.openMessageStore({ backend: 'memory', name });
    const connect = (provider, headers = {}) => ({ adapter: pl.createAdapter({ provider, apiKey: 'k', baseURL: mockBaseURL(mock.url, provider), model: 'mock-model', headers, retry: { maxRetries: 0 } }) });
    ok(await chatConformance(pl, { openStore, connect }), 10);
  } finally {
    await mock.close();
  }
});

// promptloom in a Web Worker (Deno's, a module worker importing the packed package),
// seen from here through promptloom/remote: the suite Node and Chromium run too.
Deno.test('promptloom in a Web Worker: calls, errors and a chat seen through promptloom/remote', async () => {
  const remote = await import('promptloom/remote');
  const { PromptloomError } = await import('promptloom');
  const mock = await startMockProvider();
  try {
    const worker = () => new Worker(new URL('./remote-worker.mjs', import.meta.url), { type: 'module' });
    ok(await remoteConformance({ connectWorker: remote.connectWorker, PromptloomError }, { worker, mock: mock.url }), 6);
  } finally {
    await mock.close();
  }
});

Deno.test('promptloom then a lazy promptloom/composer in Deno: both entries, their suites, objects made before', async () => {
  const core = await import('promptloom');
  ok(await conformance(core, () => core.openMessageStore({ backend: 'memory' }), v1), 10);
  const { comp } = await baseThenComposer((entry) => import(entry), assert);
  ok(await arbiterConformance(comp, arbiterSpecs(), composerFixtures().requests['timeline-openai-staged']), 6);
  ok(await sessionConformance(comp, arbiterSpecs(), () => comp.openSkillStore({ backend: 'memory' })), 6);
  ok(await gatewayConformance(comp, { contracts: gatewayContracts(), state: () => comp.memoryState() }), 30);
});
