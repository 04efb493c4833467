// Skill state machines, sessions and the approval pipeline through the npm package's
// `promptloom/composer` entry in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { arbiterConformance } from './arbiter-conformance.mjs';
import { arbiterSpecs, composerFixtures } from './composer-fixtures.mjs';
import { sessionConformance } from './session-conformance.mjs';
import { kv } from './host-kv.mjs';

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

const report = (results) => {
  assert.ok(results.length >= 6);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
};

test('session conformance in Node: memory backend', async () => {
  report(await sessionConformance(pl, arbiterSpecs(), () => pl.openSkillStore({ backend: 'memory' })));
});

test('session conformance in Node: host KV object', async () => {
  report(await sessionConformance(pl, arbiterSpecs(), () => pl.openSkillStore({ backend: kv(), name: 'agents' })));
});

test('a host store failing mid-write: the session keeps only what is stored, and reopens from it', async () => {
  const host = kv();
  const store = await pl.openSkillStore({ backend: host, name: 'agents' });
  const registry = pl.buildSkillRegistry([arbiterSpecs()['build-feature']], { tools: ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'] });
  let t = 1;
  const s = await pl.openSession({ store, registry, id: 'f', now: () => t++ });
  await s.startSkill('core', 'build_feature', { feature: 'x' });
  const kept = s.log().length;
  host.failIn(1); // the journal lands, the log rows do not
  await assert.rejects(s.propose('core', { type: 'tool', name: 'choir.memory.query' }), (e) => e.code === 'StoreFailed');
  assert.equal(s.log().length, kept, 'the unstored step is gone from memory too');
  assert.equal(s.run('core').step, 0);
  assert.equal(s.lane('core'), 'idle');
  host.heal();
  const o = await s.propose('core', { type: 'tool', name: 'choir.memory.query' });
  assert.ok(o.accepted);
  s.free();
  const r = await pl.openSession({ store, registry, id: 'f', now: () => t++ });
  assert.equal(r.run('core').step, 1);
  assert.equal(r.lane('core'), 'waiting_tool');
  assert.equal(r.hierarchy().recoveries, 1);
  r.free();
});
