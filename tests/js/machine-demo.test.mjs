// The demo's skill state machine panel in headless Chromium: the diagram of a spec, its
// Mermaid text, and a scripted run animated through a session on IndexedDB (refusals
// shown, the current state and the lane's state lit, proposal records made by the built-in
// builders), then the pending proposals approved or rejected and the decisions listed,
// still there after a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openDemo } from './chromium.mjs';

let demo;
let page;

before(async () => {
  demo = await openDemo({ ready: 'promptloomMachineReady', viewport: { width: 1400, height: 1200 } });
  page = demo.page;
  assert.deepEqual(demo.errors, []);
});

after(async () => demo?.close());

test('the builders are system skills the store migration seeded from the package', async () => {
  assert.equal(await page.textContent('#sm-system'), 'System skills (seed v1, created): skill-builder, tool-builder');
  const options = await page.$$eval('#sm-spec option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('tool-builder') && options.includes('skill-builder'), options.join());
});

test('the build_feature diagram, its Mermaid text, and the scripted run played to the end', async () => {
  await page.selectOption('#sm-spec', 'build_feature');
  const states = await page.$$eval('#sm-diagram .state', (gs) => gs.map((g) => g.dataset.state));
  assert.deepEqual(states.sort(), ['done', 'modify', 'plan', 'understand', 'validate']);
  assert.match(await page.textContent('#sm-mermaid'), /^stateDiagram-v2\n {2}\[\*\] --> understand\n/);
  await page.evaluate(() => { window.promptloomMachineDelay = 10; });
  await page.click('#sm-play');
  await page.waitForFunction(() => window.promptloomMachineDone === true);
  const log = await page.$$eval('#sm-log li', (lis) => lis.map((l) => [l.className, l.textContent]));
  assert.equal(log.length, 12);
  assert.deepEqual(log[1], ['rejected', 'tool choir.fs.write refused (tool-not-allowed): allowed choir.memory.query; transitions complete']);
  assert.equal(log[3][0], 'rejected');
  assert.equal(log[11][0], 'accepted');
  assert.match(await page.textContent('#sm-status'), /^step 12: finished in done$/);
  assert.equal(await page.$eval('#sm-diagram .state.current', (g) => g.dataset.state), 'done');
});

test('skill-builder: spawning refused, an invalid spec refused, a valid one recorded for approval', async () => {
  await page.selectOption('#sm-spec', 'skill-builder');
  await page.click('#sm-play');
  await page.waitForFunction(() => window.promptloomMachineDone === true);
  const log = await page.$$eval('#sm-log li', (lis) => lis.map((l) => l.textContent));
  assert.match(log[3], /^spawn tool-builder refused \(no-spawn\)/);
  assert.match(log[5], /refused \(invalid-skill-spec\)/);
  assert.match(log[6], /proposal recorded: skill, pending approval/);
  assert.match(await page.textContent('#sm-status'), /finished in done/);
});

test('pending proposals: approved into a new registry or rejected with a reason, every decision listed, kept across a reload', async () => {
  const texts = (sel) => page.$$eval(sel, (lis) => lis.map((l) => l.firstChild.textContent.trim()));
  // The skill-builder run above proposed a spec; the tool-builder proposes a tool.
  await page.selectOption('#sm-spec', 'tool-builder');
  await page.click('#sm-play');
  await page.waitForFunction(() => window.promptloomMachineDone === true);
  assert.match(await page.textContent('#sm-lane'), /lane demo: idle$/);
  assert.deepEqual(await texts('#sm-proposals li'), ['skill build_feature (from skill-builder, step 7)', 'tool grep (from tool-builder, step 4)']);
  const decided = () => page.evaluate(() => window.promptloomMachineDecided ?? 0);
  let n = await decided();
  await page.click('#sm-proposals li:nth-child(2) button.approve');
  await page.waitForFunction((k) => (window.promptloomMachineDecided ?? 0) > k, n);
  assert.match(await page.textContent('#sm-review'), /^approved grep: the registry now has 3 skills/);
  n = await decided();
  await page.fill('#sm-reason', 'build_feature exists already');
  await page.click('#sm-proposals li:nth-child(1) button.reject');
  await page.waitForFunction((k) => (window.promptloomMachineDecided ?? 0) > k, n);
  assert.deepEqual(await page.$$eval('#sm-proposals li', (lis) => lis.map((l) => l.textContent)), ['nothing pending']);
  const decisions = await page.$$eval('#sm-decisions li', (lis) => lis.map((l) => l.textContent));
  assert.deepEqual(decisions, ['approved tool grep by demo user', 'rejected skill build_feature by demo user: build_feature exists already']);
  // The lane's state moves with the run: a tool call leaves it waiting on the tool.
  await page.selectOption('#sm-spec', 'build_feature');
  await page.click('#sm-reset');
  await page.waitForFunction(() => document.querySelector('#sm-lane').dataset.state === 'idle' && document.querySelector('#sm-log').children.length === 0);
  await page.click('#sm-step');
  await page.waitForFunction(() => document.querySelector('#sm-lane').dataset.state === 'waiting_tool');
  // Reload: the proposals and decisions are in IndexedDB.
  await page.reload();
  await page.waitForFunction(() => window.promptloomMachineReady === true);
  await page.waitForFunction(() => document.querySelectorAll('#sm-decisions li').length === 2);
  // The second open finds the store at the seed's version: nothing is written again.
  assert.equal(await page.textContent('#sm-system'), 'System skills (seed v1, current): skill-builder, tool-builder');
  assert.deepEqual(await page.$$eval('#sm-decisions li', (lis) => lis.map((l) => l.textContent)), decisions);
  assert.deepEqual(demo.errors, []);
});
