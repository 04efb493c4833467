// The demo's composer box end to end in headless Chromium: `/` and `@` completion from the
// catalog, submit into IndexedDB, the three views side by side, and the history surviving a
// reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDemo } from './chromium.mjs';
import { root } from './cases.mjs';

let demo;
let page;

before(async () => {
  demo = await openDemo({ ready: 'promptloomComposerReady', viewport: { width: 1400, height: 1200 } });
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

const suggestions = () => page.$$eval('#suggestions li', (lis) => lis.map((l) => l.dataset.insert));
const text = (sel) => page.textContent(sel);

test('typing / lists commands; choosing one and submitting shows the expanded template', async () => {
  await page.click('#compose-input');
  await page.keyboard.type('/re');
  assert.deepEqual(await suggestions(), ['/review', '/rewind']);
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('#compose-input'), '/review ');
  await page.keyboard.type('src/lib/foo.ts critical');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#compose-status').textContent.startsWith('submitted'));
  assert.equal(await text('#compose-status'), 'submitted demo/0000000001');
  assert.deepEqual(await page.$$eval('#view-user li', (l) => l.map((x) => x.textContent)), ['/review src/lib/foo.ts critical']);
  const persisted = JSON.parse(await text('#view-persisted'));
  assert.equal(persisted.parts[0].resolved.outcome, 'parts');
  const model = JSON.parse(await text('#view-model'));
  assert.deepEqual(model.messages[0].content, [{ type: 'text', text: 'Review src/lib/foo.ts for critical issues.' }]);
});

test('typing @ lists mention kinds; @selection and @file resolve through the host, in every view', async () => {
  await page.click('#compose-input');
  await page.keyboard.type('make @sel');
  assert.deepEqual(await suggestions(), ['@selection']);
  await page.keyboard.press('Tab');
  await page.keyboard.type('red, see @fi');
  assert.deepEqual(await suggestions(), ['@file:']);
  await page.keyboard.press('Enter');
  await page.keyboard.type('src/lib/foo.ts:2-3');
  await page.click('#compose-submit');
  await page.waitForFunction(() => document.querySelector('#compose-status').textContent === 'submitted demo/0000000002');
  assert.deepEqual(await page.$$eval('#view-user li', (l) => l.map((x) => x.textContent)), ['make ', '@selection', ' red, see ', '@file:src/lib/foo.ts:2-3']);
  const persisted = JSON.parse(await text('#view-persisted'));
  assert.deepEqual(persisted.parts[1].resolved.parts[0].payload, { symbol: 'f', line: 2 });
  const content = JSON.parse(await text('#view-model')).messages[0].content.map((c) => c.text);
  assert.deepEqual(content, [
    'make ',
    '<editor_context kind="selection" source="editor-1">{"line":2,"symbol":"f"}</editor_context>',
    ' red, see ',
    '```ts src/lib/foo.ts:2-3\nexport function f(x) {\n  const y = g(x);\n```',
  ]);
  await page.screenshot({ path: join(root, 'tests/js/.out/composer.png'), fullPage: true });
});

test('a host action and a bad command: the model sees nothing, errors are typed, the history survives a reload', async () => {
  await page.fill('#compose-input', '/compact keep decisions');
  await page.click('#compose-submit');
  await page.waitForFunction(() => document.querySelector('#compose-status').textContent === 'submitted demo/0000000003');
  assert.deepEqual(await page.$$eval('#view-notes li', (l) => l.map((x) => x.textContent)), ['host action: compact']);
  assert.match(await text('#view-model'), /^EmptyMessage/);
  await page.fill('#compose-input', '/review');
  await page.click('#compose-submit');
  await page.waitForFunction(() => document.querySelector('#compose-status').classList.contains('error'));
  assert.match(await text('#compose-status'), /^MissingArgument: \/review needs the argument `file`/);
  await page.reload();
  await page.waitForFunction(() => window.promptloomComposerReady === true);
  assert.equal(await text('#history-count'), '3 messages stored in IndexedDB');
});
