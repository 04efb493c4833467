// The demo's skill library panel end to end in headless Chromium: import a SKILL.md file
// and the seed's JSON package through the file input, search live as you type (exact
// trigger-phrase hits first), edit a package (problems listed as you type, saved), export
// SKILL.md, delete, and the library surviving a reload (IndexedDB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDemo } from './chromium.mjs';
import { root } from './cases.mjs';

let demo;
let page;

before(async () => {
  demo = await openDemo({ ready: 'promptloomLibraryReady', viewport: { width: 1400, height: 1400 } });
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

const names = () => page.$$eval('#lib-list li', (lis) => lis.map((l) => l.dataset.name));
const status = () => page.textContent('#lib-status');

test('import a SKILL.md and a JSON package; search as you type', async () => {
  await page.setInputFiles('#lib-file', join(root, 'tests/skills/skill_md/pdf-tools/SKILL.md'));
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.startsWith('imported'));
  assert.equal(await status(), 'imported “pdf-tools” into the workspace store');
  await page.selectOption('#lib-scope', 'account');
  await page.setInputFiles('#lib-file', join(root, 'tests/skills/packages/consistency-checker.json'));
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.includes('Consistency'));
  await page.click('#lib-seed');
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.startsWith('added'));
  // The imported Consistency Checker keeps its name: only the two other examples are added.
  assert.equal(await status(), 'added 2 example skills to the account store');
  assert.deepEqual(await names(), ['Consistency Checker', 'Release Notes', 'Summarize', 'pdf-tools']);
  // Live search: every keystroke re-ranks.
  await page.click('#lib-search');
  await page.keyboard.type('are there any contradictions?');
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.endsWith('for “are there any contradictions?”'));
  const first = await page.$eval('#lib-list li', (li) => ({ name: li.dataset.name, tags: [...li.querySelectorAll('.tag')].map((t) => t.textContent) }));
  assert.equal(first.name, 'Consistency Checker');
  assert.ok(first.tags.includes('exact: are there any contradictions'), JSON.stringify(first));
  await page.fill('#lib-search', 'pdf');
  await page.waitForFunction(() => document.querySelector('#lib-list li')?.dataset.name === 'pdf-tools');
});

test('edit: problems listed as you type, a valid save lands; export SKILL.md; delete', async () => {
  await page.fill('#lib-search', '');
  await page.waitForFunction(() => document.querySelectorAll('#lib-list li').length === 4);
  await page.click('#lib-list li[data-name="Summarize"]');
  await page.waitForFunction(() => document.querySelector('#lib-editor').value.includes('"Summarize"'));
  const pkg = JSON.parse(await page.inputValue('#lib-editor'));
  await page.fill('#lib-editor', JSON.stringify({ ...pkg, version: 'two' }));
  await page.dispatchEvent('#lib-editor', 'input');
  assert.deepEqual(await page.$$eval('#lib-problems li', (l) => l.map((x) => x.textContent)), ['version: `two` is not a semantic version (MAJOR.MINOR.PATCH)']);
  await page.fill('#lib-editor', JSON.stringify({ ...pkg, version: '2.0.0', description: 'Summarizes in one line.' }, null, 2));
  await page.click('#lib-save');
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.startsWith('saved'));
  assert.equal(await status(), 'saved “Summarize” in the account store');
  await page.click('#lib-export');
  const md = await page.textContent('#lib-export-out');
  assert.equal(md, '---\nname: Summarize\ndescription: Summarizes in one line.\nmetadata:\n  version: "2.0.0"\n---\n');
  // What SKILL.md cannot hold is listed.
  assert.deepEqual(await page.$$eval('#lib-problems li', (l) => l.map((x) => x.textContent)), [
    'tags: SKILL.md has no field for `tags`',
    'intent_patterns: SKILL.md has no field for `intent_patterns`',
    'trigger_phrases: SKILL.md has no field for `trigger_phrases`',
  ]);
  await page.click('#lib-delete');
  await page.waitForFunction(() => document.querySelector('#lib-status').textContent.startsWith('deleted'));
  assert.ok(!(await names()).includes('Summarize'));
});

test('the library survives a reload', async () => {
  await page.reload();
  await page.waitForFunction(() => window.promptloomLibraryReady === true);
  await page.waitForFunction(() => document.querySelectorAll('#lib-list li').length === 3);
  assert.deepEqual(await names(), ['Consistency Checker', 'Release Notes', 'pdf-tools']);
  assert.deepEqual(demo.errors, []);
});
