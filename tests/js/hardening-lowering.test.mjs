// The hardening suite in Node on the `promptloom` entry (lowering, compositor, skills).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from 'promptloom';
import { hardeningConformance } from './hardening-conformance.mjs';

test('hardening suite in Node (promptloom)', async () => {
  const results = await hardeningConformance(pl, { calls: 60, seeds: [1, 2, 3] });
  assert.ok(results.length >= 8, `${results.length} checks`);
  for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
});
