// The demo's chat panel (a `Chat`) end to end in headless Chromium, against the mock
// provider the demo's server mounts at /mock: a reply streamed token by token with a tool round trip,
// chips (file-ref with a range, an attachment, a /command, an @mention), the thread restored
// from IndexedDB after a reload (also a reload in the middle of a run), an aborted stream,
// a 429 retried, and the research SkillSpec advancing through the arbiter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDemo } from './chromium.mjs';

let demo;
let page;
before(async () => {
  demo = await openDemo({ ready: 'promptloomChatReady', viewport: { width: 1400, height: 1400 } });
  page = demo.page;
});
after(async () => demo?.close());

const roles = () => page.$$eval('#chat-thread > li:not(.live)', (l) => l.map((x) => x.dataset.role));
async function send(text, { mock = '' } = {}) {
  await page.fill('#chat-mock', mock);
  if (text !== undefined) await page.fill('#chat-input', text);
  await page.evaluate(() => { window.promptloomChatIdle = false; });
  await page.click('#chat-send');
}
const idle = () => page.waitForFunction(() => window.promptloomChatIdle === true, null, { timeout: 30000 });
async function reload() {
  await page.reload();
  await page.waitForFunction(() => window.promptloomChatReady === true);
}

test('a reply streams in token by token; the tool call and its result are shown', async () => {
  assert.deepEqual(demo.errors, []);
  await send('How is f used? @selection', { mock: 'slow=15' });
  // The live reply grows while it streams.
  await page.waitForFunction(() => (document.querySelector('#chat-thread .live .text')?.textContent.length ?? 0) > 0);
  const early = await page.$eval('#chat-thread .live .text', (e) => e.textContent.length);
  await idle();
  assert.match(await page.textContent('#chat-status'), /^final after 2 steps/);
  // The tool turn folds into the call it answers (the Chat's view).
  assert.deepEqual(await roles(), ['user', 'assistant', 'assistant']);
  const last = await page.$eval('#chat-thread > li:last-child .text', (e) => e.textContent);
  assert.ok(last.length > early);
  assert.match(await page.$eval('#chat-thread > li:nth-child(2)', (e) => e.textContent), /⚙ search\(\{"query":"How is f used\?/);
  assert.match(await page.$eval('#chat-thread > li:nth-child(2) .tool-result', (e) => e.textContent), /↳ search: \{"hits":/);
  assert.match(await page.$eval('#chat-thread > li:nth-child(1)', (e) => e.textContent), /@selection/);
  assert.deepEqual(demo.errors, []);
});

test('the thread is restored from IndexedDB after a reload', async () => {
  const before = await page.$$eval('#chat-thread > li', (l) => l.map((x) => x.textContent));
  await reload();
  assert.deepEqual(await page.$$eval('#chat-thread > li', (l) => l.map((x) => x.textContent)), before);
});

test('chips: a file-ref with its range, an attachment, a /command; a 429 is retried', async () => {
  await page.click('#chat-ref');
  await page.setInputFiles('#chat-attach', { name: 'shot.png', mimeType: 'image/png', buffer: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64') });
  await page.waitForFunction(() => document.querySelectorAll('#chat-chips .chip').length === 2);
  await send('/explain the cache', { mock: 'status=429,retry-after-ms=50,times=1' });
  await idle();
  assert.match(await page.textContent('#chat-status'), /^final/);
  const user = await page.$$eval('#chat-thread > li[data-role=user]', (l) => l.at(-1).textContent);
  assert.match(user, /\/explain/);
  assert.match(user, /file src\/lib\/foo\.ts:2-4/);
  assert.match(user, /attachment shot\.png/);
  assert.equal(await page.$$eval('#chat-chips .chip', (c) => c.length), 0);
});

test('Stop aborts the stream; the text shown so far stays in the thread', async () => {
  await page.click('#chat-clear');
  await send('Tell me a long story', { mock: 'slow=60' });
  await page.waitForFunction(() => (document.querySelector('#chat-thread .live .text')?.textContent.length ?? 0) > 0);
  await page.click('#chat-stop');
  await idle();
  assert.match(await page.textContent('#chat-status'), /^aborted/);
  assert.deepEqual(await roles(), ['user', 'assistant']);
  assert.ok((await page.$eval('#chat-thread > li:last-child .text', (e) => e.textContent)).length > 0);
});

test('a reload in the middle of a run keeps every finished step, and the chat goes on', async () => {
  await page.click('#chat-clear');
  await send('Where is h defined?', { mock: 'slow=40' });
  // The tool turn is persisted (shown with its call) before the second request streams.
  await page.waitForFunction(() => document.querySelector('#chat-thread > li:not(.live) .tool-result') && document.querySelector('#chat-thread .live .text'));
  await reload();
  assert.deepEqual(await roles(), ['user', 'assistant']);
  assert.ok(await page.$('#chat-thread > li:nth-child(2) .tool-result'));
  await send('Thanks. And g?');
  await idle();
  assert.match(await page.textContent('#chat-status'), /^final/);
  assert.deepEqual((await roles()).slice(0, 3), ['user', 'assistant', 'user']);
  assert.equal((await roles()).at(-1), 'assistant');
});

test('the research skill: the arbiter takes each call; the state machine advances to its end', async () => {
  await page.click('#chat-clear');
  await page.check('#chat-skill');
  await send('Find where g comes from');
  await idle();
  assert.match(await page.textContent('#chat-skill-state'), /^skill research: finished in report/);
  const calls = await page.$$eval('#chat-thread .tool-call', (l) => l.map((x) => x.textContent.split('(')[0]));
  assert.deepEqual(calls, ['⚙ search', '⚙ skill_transition', '⚙ skill_finish']);
  assert.match(await page.textContent('#chat-status'), /^arbiter after 3 steps/);
  await page.uncheck('#chat-skill');
  assert.deepEqual(demo.errors, []);
});

test('the stats: one row per step, its cost the core\'s (a priced model) or none; every provider from the same settings', async () => {
  await page.click('#chat-clear');
  await page.fill('#chat-model', 'claude-sonnet-4-5');
  await send('Say hi');
  await idle();
  assert.match(await page.textContent('#chat-status'), /^final/);
  const last = () => page.$$eval('#chat-stats tbody tr', (rows) => [...rows.at(-1).querySelectorAll('td')].map((td) => td.textContent));
  assert.match((await last()).at(-1), /^\$0\.\d{5}$/);
  await page.fill('#chat-model', 'mock-model');
  for (const provider of ['openai-chat', 'openai-responses', 'gemini']) {
    await page.selectOption('#chat-provider', provider);
    await send(`Hello from ${provider}`);
    await idle();
    assert.match(await page.textContent('#chat-status'), /^final/, provider);
    assert.equal((await last()).at(-1), '—');
  }
  await page.selectOption('#chat-provider', 'anthropic');
  assert.deepEqual(demo.errors, []);
});
