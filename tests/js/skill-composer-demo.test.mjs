// The demo's Skill Composer panel end to end in headless Chromium: add the demo skill to the
// IndexedDB library, fill the form generated from its parameter schema, compose, and read the
// prompt's sections with their source artifacts, the subgraph and the invocation record;
// the stored invocation replayed (identical, then a named change after an edit);
// a bad parameter shows the ParameterMismatch with its violations. And the composer suite on
// IndexedDB stores in the same page (the demo runs on the `promptloom/composer` module).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDemo } from './chromium.mjs';
import { composerFixtures, arbiterSpecs } from './composer-fixtures.mjs';

let demo;
let page;

before(async () => {
  demo = await openDemo({ ready: 'promptloomSkillComposerReady', viewport: { width: 1400, height: 1600 } });
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

const status = () => page.textContent('#sc-status');

test('pick the demo skill, fill the generated form, compose: sections with their sources, subgraph, record', async () => {
  await page.click('#sc-demo');
  await page.waitForFunction(() => document.querySelector('#sc-status').textContent.startsWith('Release Notes Writer'));
  // The form follows the schema: a text input, an enum select, a checkbox, a JSON field.
  const fields = await page.$$eval('#sc-params [name]', (xs) => xs.map((x) => [x.name, x.tagName.toLowerCase(), x.type || '']));
  assert.deepEqual(fields, [
    ['audience', 'select', 'select-one'],
    ['breaking', 'input', 'checkbox'],
    ['changes', 'textarea', 'textarea'],
    ['product', 'input', 'text'],
    ['version', 'input', 'text'],
  ]);
  await page.fill('#sc-params [name=product]', 'Acme');
  await page.fill('#sc-params [name=version]', '5.0.0');
  await page.selectOption('#sc-params [name=audience]', '"customers"');
  await page.check('#sc-params [name=breaking]');
  await page.click('#sc-compose');
  await page.waitForFunction(() => document.querySelector('#sc-status').textContent.startsWith('composed'));
  const sections = await page.$$eval('.sc-section', (xs) => xs.map((x) => [x.dataset.kind, x.dataset.source]));
  assert.deepEqual(sections, [
    ['framing', 'Notes Framing'],
    ['heading', ''],
    ['description', 'Style guide'],
    ['description', 'Customer wording'],
    ['description', 'Workspace conventions'],
    ['heading', ''],
    ['example', 'Customer notes'],
    ['request', ''],
  ]);
  const framing = await page.textContent('.sc-section.framing');
  assert.match(framing, /for Acme 5\.0\.0 for customers\.\nLead with the breaking changes\.\nChanges:\n1\. Added offline mode\n2\. Fixed the sync crash/);
  const subgraph = await page.textContent('#sc-subgraph');
  assert.match(subgraph, /loop subgraph \(decided by approach\); tools: search_prs, get_pr; exit: output_schema, at most 8 tool calls/);
  assert.deepEqual(await page.$$eval('#sc-subgraph li', (xs) => xs.map((x) => x.dataset.node)), ['input_validation', 'planner', 'executor', 'output_validation']);
  const record = JSON.parse(await page.textContent('#sc-record'));
  assert.equal(record.outcome, 'success');
  assert.equal(record.skill_name, 'Release Notes Writer');
  assert.ok(record.used_artifacts.length >= 5);
  assert.match(await status(), /invocation records? in this thread/);
});

test('replay the stored invocation: identical, then the edited framing template is named', async () => {
  await page.click('#sc-verify');
  await page.waitForFunction(() => document.querySelector('#sc-replay').textContent !== '');
  assert.match(await page.textContent('#sc-replay'), /^identical: the prompt recomposes byte for byte \(sha256-/);
  // Edit the stored framing template, as another tab would.
  await page.evaluate(async () => {
    const { openSkillStore } = await import('/pkg/src/composer-web.js');
    const ws = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-workspace' });
    const s = await ws.getByName('Release Notes Writer');
    const a = s.artifacts.find((x) => x.name === 'Notes Framing');
    await ws.updateArtifact({ ...a, content: `${a.content}Keep it short.\n` });
    ws.close();
  });
  await page.evaluate(() => { document.querySelector('#sc-replay').textContent = ''; });
  await page.click('#sc-verify');
  await page.waitForFunction(() => document.querySelector('#sc-replay').textContent !== '');
  assert.equal(await page.textContent('#sc-replay'), 'changed: template modified Notes Framing');
});

test('a parameter that breaks the schema shows ParameterMismatch with its violations', async () => {
  await page.fill('#sc-params [name=version]', 'five');
  await page.click('#sc-compose');
  await page.waitForFunction(() => document.querySelector('#sc-status').className === 'error');
  assert.match(await status(), /^ParameterMismatch: .*\n\/version: the string does not match the pattern/);
  const record = JSON.parse(await page.textContent('#sc-record'));
  assert.equal(record.error.code, 'ParameterMismatch');
});

test('composer conformance: IndexedDB skill and message stores', async () => {
  const results = await page.evaluate(async (fx) => {
    const pl = await import('/pkg/src/composer-web.js');
    const { composerConformance } = await import('/tests/js/composer-conformance.mjs');
    let n = 0;
    const now = () => Date.parse('2026-11-22T10:00:00Z');
    return composerConformance(
      pl,
      () => pl.openSkillStore({ backend: 'indexeddb', name: `composer-skills-${n++}`, now }),
      () => pl.openMessageStore({ backend: 'indexeddb', name: `composer-messages-${n++}` }),
      fx,
    );
  }, composerFixtures());
  assert.ok(results.length >= 11);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('session conformance in Chromium: sessions and proposals on IndexedDB', async () => {
  const results = await page.evaluate(async (specs) => {
    const pl = await import('/pkg/src/composer-web.js');
    const { sessionConformance } = await import('/tests/js/session-conformance.mjs');
    let n = 0;
    return sessionConformance(pl, specs, () => pl.openSkillStore({ backend: 'indexeddb', name: `sessions-${n++}` }));
  }, arbiterSpecs());
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('arbiter conformance in Chromium', async () => {
  const results = await page.evaluate(async ([specs, staged]) => {
    const pl = await import('/pkg/src/composer-web.js');
    const { arbiterConformance } = await import('/tests/js/arbiter-conformance.mjs');
    return arbiterConformance(pl, specs, staged);
  }, [arbiterSpecs(), composerFixtures().requests['timeline-openai-staged']]);
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});
