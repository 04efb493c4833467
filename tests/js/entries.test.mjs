// The two entries share one JS glue and one instance serves every call. They compose in any
// order: `promptloom` first and then a lazy `await import('promptloom/composer')` (a skill
// panel opened later) hands every call to the composer's module; the composer first serves
// the base entry too. Objects holding the base instance's wasm state fail clearly
// (`InstanceLost`); objects that are JS state carry on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { baseThenComposer, MESSAGE, BODY, SPEC } from './entries-scenario.mjs';

const ENTRY = { promptloom: '../../pkg/src/node.js', 'promptloom/composer': '../../pkg/src/composer-node.js' };

test('promptloom first, then a lazy promptloom/composer: every function of both works; JS-state objects carry on', async () => {
  await baseThenComposer((entry) => import(ENTRY[entry]), assert);
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
