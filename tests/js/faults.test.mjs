// The storage fault suite in Node over host KV objects (both list shapes): every write and
// read position of every kind of write fails in turn; readers never see a call half done,
// and the call then lands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from 'promptloom';
import { faultConformance, faultyKv } from './fault-conformance.mjs';
import { kv } from './host-kv.mjs';

for (const cloudflareList of [false, true]) {
  test(`fault suite: host KV object (${cloudflareList ? 'edge-style list' : 'array list'})`, async () => {
    const open = (kind, f) => {
      const backend = faultyKv(kv({ cloudflareList }), f);
      return kind === 'messages' ? pl.openMessageStore({ backend, name: 'm' }) : pl.openSkillStore({ backend, name: 's', now: () => Date.parse('2026-11-23T00:00:00Z') });
    };
    const results = await faultConformance(pl, open);
    assert.ok(results.length >= 16, `${results.length} checks`);
    for (const r of results) assert.ok(r.ok, `${r.name}\n${r.detail}`);
  });
}
