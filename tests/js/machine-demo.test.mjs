// The demo's skill state machine panel in headless Chromium: the diagram of a spec, its
// Mermaid text, and a scripted run animated through the arbiter (refusals shown, the
// current state lit, proposal records made by the built-in skill-builder).
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
