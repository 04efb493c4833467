// Headless Chromium (playwright-core with the system's /usr/bin/chromium): the demo page
// end to end, and every shared case through the npm package's browser entry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDemo } from './chromium.mjs';
import { successCases, errorCases, root } from './cases.mjs';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
let demo;
let page;
const out = join(root, 'tests/js/.out');

before(async () => {
  mkdirSync(out, { recursive: true });
  demo = await openDemo({ viewport: { width: 1400, height: 1000 } });
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

test('the demo lowers a text + file-ref range + image + editor context message', async () => {
  await page.click('#add-ref');
  await page.setInputFiles('#attach', { name: 'dot.png', mimeType: 'image/png', buffer: Buffer.from(PNG, 'base64') });
  await page.waitForFunction(() => document.querySelectorAll('#parts li').length === 2);
  await page.click('#add-ctx');
  for (const [provider, check] of [
    ['anthropic', (b) => {
      assert.equal(b.system, 'You are a careful code reviewer.');
      const c = b.messages[0].content;
      assert.equal(c[0].text, 'Why does this function return undefined?');
      assert.equal(c[1].text, '```ts src/lib/foo.ts:2-4\nexport function f(x) {\n  const y = g(x);\n}\n```');
      assert.deepEqual(c[2], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
      assert.equal(c[3].text, '<editor_context kind="selection" source="editor-1">{"line":2,"symbol":"f"}</editor_context>');
    }],
    ['gemini', (b) => {
      assert.deepEqual(b.contents[0].parts[2], { inlineData: { mimeType: 'image/png', data: PNG } });
      assert.equal(b.systemInstruction.parts[0].text, 'You are a careful code reviewer.');
    }],
    ['openai-responses', (b) => assert.equal(b.input[0].content[2].image_url, `data:image/png;base64,${PNG}`)],
    ['openai-chat', (b) => assert.equal(b.messages[1].content[2].image_url.url, `data:image/png;base64,${PNG}`)],
  ]) {
    await page.selectOption('#provider', provider);
    await page.click('#lower');
    await page.waitForFunction(() => document.querySelector('#body').textContent.length > 0);
    const body = JSON.parse(await page.textContent('#body'));
    check(body);
    const rules = await page.$$eval('#report tbody tr', (rows) => rows.map((r) => r.children[2].textContent));
    assert.deepEqual(rules, ['text', 'file-ref-text', 'attachment-image', 'editor-context'], provider);
    await page.evaluate(() => { document.querySelector('#body').textContent = ''; });
  }
  await page.selectOption('#provider', 'anthropic');
  await page.click('#lower');
  await page.waitForFunction(() => document.querySelector('#body').textContent.length > 0);
  await page.screenshot({ path: join(out, 'demo.png'), fullPage: true });
});

test('the demo shows a typed error for bad input and keeps working', async () => {
  await page.fill('#ref-start', '9');
  await page.fill('#ref-end', '2');
  await page.click('#add-ref');
  await page.click('#lower');
  await page.waitForFunction(() => document.querySelector('#status').classList.contains('error'));
  assert.match(await page.textContent('#status'), /^InvalidRange: range end 2 is before its start 9/);
  await page.click('#parts li:last-child button');
  await page.click('#lower');
  await page.waitForFunction(() => !document.querySelector('#status').classList.contains('error'));
});

test('every shared case through the browser entry of the npm package', async () => {
  const cases = successCases();
  const results = await page.evaluate(async (cases) => {
    const { lower } = await import('/pkg/src/web.js');
    const resolverFor = (table) => (req) => {
      const a = table[String(req.part)];
      if (!a) return null;
      if ('error' in a) throw new Error(a.error);
      if ('text' in a) return a.text;
      if ('bytes' in a) {
        const bytes = Uint8Array.from(atob(a.bytes), (c) => c.charCodeAt(0));
        return a.mime ? { bytes, mime: a.mime } : bytes;
      }
      return a.payload;
    };
    const out = [];
    for (const c of cases) {
      const r = await lower(c.message, { provider: c.provider, ...c.options, resolve: resolverFor(c.resolve) });
      out.push({ body: r.body, report: r.report });
    }
    return out;
  }, cases);
  cases.forEach((c, i) => {
    assert.equal(results[i].body, c.expected.body, `${c.name} / ${c.provider}`);
    assert.deepEqual(results[i].report, c.expected.report);
  });
  const errs = await page.evaluate(async (cases) => {
    const { lower, PromptloomError } = await import('/pkg/src/web.js');
    return cases.map((c) => {
      try {
        lower(c.message, { provider: c.provider, ...c.options });
        return 'ok';
      } catch (e) {
        return { isError: e instanceof PromptloomError && e instanceof Error, code: e.code, message: e.message, details: e.details };
      }
    });
  }, errorCases());
  errorCases().forEach((c, i) => {
    if (c.expected === 'ok') return assert.equal(errs[i], 'ok');
    assert.deepEqual(errs[i], { isError: true, ...c.expected }, `${c.name} / ${c.provider}`);
  });
});
