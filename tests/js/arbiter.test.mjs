// Skill state machines through the npm package's `promptloom/composer` entry in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { arbiterConformance } from './arbiter-conformance.mjs';
import { arbiterSpecs, composerFixtures } from './composer-fixtures.mjs';

test('arbiter conformance in Node', async () => {
  const results = await arbiterConformance(pl, arbiterSpecs(), composerFixtures().requests['timeline-openai-staged']);
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
});

test('the arbiter is not in the promptloom entry', async () => {
  const core = await import('../../pkg/src/node.js');
  assert.equal(core.Arbiter, undefined);
  assert.equal(core.validateSkillSpec, undefined);
});
