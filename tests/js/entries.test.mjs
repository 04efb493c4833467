// The two entries share one JS glue and one instance serves every call. They compose in any
// order: `promptloom` first and then a lazy `await import('promptloom/composer')` (a skill
// panel opened later) hands every call to the composer's module; the composer first serves
// the base entry too. Objects made before carry on: those holding the base instance's wasm
// state (a conversation, a parser mid-stream, an agent run) finish there; those that are JS
// state move to the composer's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { baseThenComposer, MESSAGE, BODY, SPEC } from './entries-scenario.mjs';

const ENTRY = { promptloom: '../../pkg/src/node.js', 'promptloom/composer': '../../pkg/src/composer-node.js' };

test('promptloom first, then a lazy promptloom/composer: every function of both works; every object made before carries on', async () => {
  await baseThenComposer((entry) => import(ENTRY[entry]), assert);
});

// A chat's agent loop running when the composer loads: the reply streams in from the mock
// provider, the composer entry is imported between two events, and the run finishes on the
// base instance with the tool call and the final answer, as it would without the import.
test('promptloom/lower first, an agent run in flight when promptloom/composer loads: it finishes on its instance', () => {
  const url = (f) => JSON.stringify(new URL(f, import.meta.url).href);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const low = await import(${url('../../pkg/src/lower-node.js')});
    const { startMockProvider, mockBaseURL } = await import(${url('../../scripts/mock-provider.mjs')});
    const mock = await startMockProvider();
    const run = async (onEvent) => {
      const chat = new low.Conversation({ options: { provider: 'openai-chat', model: 'gpt-5', stream: true } });
      chat.append({ role: 'user', parts: [{ type: 'text', text: 'Search the docs for streaming' }] });
      const adapter = low.createAdapter({ provider: 'openai-chat', apiKey: 'k', baseURL: mockBaseURL(mock.url, 'openai-chat') });
      const out = await low.runAgent({ conversation: chat, adapter, onEvent, tools: [{ name: 'search', description: 'Search.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }], handlers: { search: async ({ query }) => 'found ' + query } });
      return [out.stop, out.steps, chat.turns.map((t) => t.role).join(','), out.turn.parts.at(-1).text, chat.lower().body.length];
    };
    const alone = await run();
    let comp;
    const during = await run(async (ev, step) => { if (!comp && ev.type === 'text-delta') comp = await import(${url('../../pkg/src/composer-node.js')}); });
    await mock.close();
    console.log(JSON.stringify({ alone, during, composed: comp.compose({ skill_package: { name: 'x', description: 'y', metadata: { framing: 'Hi.' } }, thread_id: 't' }).prompt.text.length > 0 }));
  `], { encoding: 'utf8', cwd: fileURLToPath(new URL('.', import.meta.url)) });
  const { alone, during, composed } = JSON.parse(out);
  assert.equal(alone[0], 'final');
  assert.deepEqual(during, alone);
  assert.ok(composed);
});

test('promptloom/composer first, then promptloom: one instance serves both, nothing is replaced', () => {
  const url = (f) => JSON.stringify(new URL(`../../pkg/src/${f}`, import.meta.url).href);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const comp = await import(${url('composer-node.js')});
    const { __generation } = await import(${url('api.js')});
    const conv = new comp.Conversation();
    conv.append(${JSON.stringify(MESSAGE)});
    const core = await import(${url('node.js')});
    console.log(JSON.stringify([core.lower(${JSON.stringify(MESSAGE)}, { provider: 'anthropic' }).body, conv.lower({ provider: 'anthropic' }).body, comp.validateSkillSpec(${JSON.stringify(SPEC)}).ok, __generation()]));
  `], { encoding: 'utf8', cwd: fileURLToPath(new URL('.', import.meta.url)) });
  assert.deepEqual(JSON.parse(out), [BODY, BODY, true, 0]);
});

test('with only promptloom loaded, a call that needs the composer module names the import', () => {
  const url = JSON.stringify(new URL('../../pkg/src/node.js', import.meta.url).href);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const core = await import(${url});
    const index = new core.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]);
    try { index.decide('write the release notes'); console.log('no error'); } catch (e) { console.log(JSON.stringify([e.code, e.details.needs, e.message])); }
  `], { encoding: 'utf8' });
  const [code, needs, message] = JSON.parse(out);
  assert.deepEqual([code, needs], ['InvalidOptions', 'promptloom/composer']);
  assert.match(message, /import "promptloom\/composer"/);
});
