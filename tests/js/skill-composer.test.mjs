// The Skill Composer through the npm package's Node entry: the composer suite on memory
// stores, and on host KV objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { composerConformance } from './composer-conformance.mjs';
import { composerFixtures } from './composer-fixtures.mjs';
import { kv } from './host-kv.mjs';

const fx = composerFixtures();
const now = () => '2026-11-22T10:00:00Z';

function report(results) {
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.error}`);
  assert.ok(results.length >= 11);
}

test('composer conformance: memory backends', async () => {
  report(await composerConformance(pl, () => pl.openSkillStore({ now }), () => pl.openMessageStore(), fx));
});

test('composer conformance: host KV objects', async () => {
  report(await composerConformance(pl, () => pl.openSkillStore({ backend: kv(), name: 'ws', now }), () => pl.openMessageStore({ backend: kv() }), fx));
});
