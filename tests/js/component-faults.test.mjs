// The WASI component in jco over a `wasi:keyvalue` bucket that fails (tests/js/kv.js): every
// write position of submit (with an explicit id) and of skill create, put, update and delete
// fails in turn — readers see the state before the call, and the call then lands — and
// large values (1, 3, 10, 64 MB) are stored in chunks no single host call exceeds.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './cases.mjs';
import { fault } from './kv.js';

let compositor;
let skills;
before(async () => {
  const out = join(root, 'tests/js/.out/component-faults');
  execFileSync(join(root, 'node_modules/.bin/jco'), ['transpile', join(root, 'target/component/promptloom.wasm'), '-o', out, '--quiet', '--map', 'wasi:keyvalue/store=../../kv.js', '--map', 'promptloom:core/handlers=../../handlers.js'], { stdio: 'pipe' });
  const mod = await import(pathToFileURL(join(out, 'promptloom.js')).href);
  compositor = mod.compositor;
  skills = mod.skills;
});

const NOW = '2026-11-23T00:00:00Z';
const CATALOG = { builtins: true, commands: [], mentions: [] };
let buckets = 0;

/** The call's value, or the WIT error's tag. */
function attempt(f) {
  try {
    return { ok: f() };
  } catch (e) {
    if (e && e.payload && typeof e.payload.code === 'string') return { err: e.payload.code, message: e.payload.message };
    throw e;
  }
}

function skill(name, n, extra = '') {
  return JSON.stringify({
    id: `skill-${name}`,
    name,
    description: `Does ${name}${extra}`,
    version: '1.0.0',
    artifacts: Array.from({ length: n }, (_, i) => ({ id: `${name}-a${i}`, kind: 'description', name: `Part ${i}`, content: `Part ${i} of ${name}${extra}` })),
  });
}

const submit = (s, text, opts) => {
  const step = s.submit(JSON.stringify({ role: 'user', parts: [{ type: 'text', text }] }), CATALOG, JSON.stringify(opts), undefined);
  assert.equal(step.tag, 'done');
  return JSON.parse(step.val);
};

const SCENARIOS = [
  {
    name: 'submit with an explicit id',
    open: (b) => compositor.MessageStore.open(b),
    setup: (s) => submit(s, 'one', { now: 1 }),
    call: (s) => submit(s, 'two', { now: 2, id: 'client-42' }),
    view: (s) => [s.history('default'), attempt(() => s.get('client-42'))],
  },
  {
    name: 'skill create',
    open: (b) => skills.SkillStore.open(b),
    setup: (s) => s.create(skill('beta', 1), NOW),
    call: (s) => s.create(skill('alpha', 3), NOW),
    view: (s) => [s.list(), s.get('skill-alpha'), s.getByName('beta'), s.getArtifact('alpha-a1')],
  },
  {
    name: 'skill put over an existing skill',
    open: (b) => skills.SkillStore.open(b),
    setup: (s) => s.create(skill('alpha', 3), NOW),
    call: (s) => s.put(skill('alpha', 2, ' (v2)'), NOW),
    view: (s) => [s.list(), s.get('skill-alpha'), s.getArtifact('alpha-a2')],
  },
  {
    name: 'skill update',
    open: (b) => skills.SkillStore.open(b),
    setup: (s) => s.create(skill('alpha', 2), NOW),
    call: (s) => s.update(JSON.stringify({ id: 'skill-alpha', name: 'alpha', description: 'Renamed', version: '1.1.0' }), NOW),
    view: (s) => [s.list(), s.get('skill-alpha')],
  },
  {
    name: 'skill delete',
    open: (b) => skills.SkillStore.open(b),
    setup: (s) => s.create(skill('alpha', 3), NOW),
    call: (s) => s.delete('skill-alpha'),
    view: (s) => [s.list(), s.get('skill-alpha'), s.getArtifact('alpha-a0')],
  },
];

for (const sc of SCENARIOS) {
  test(`jco: every write position of ${sc.name} fails in turn; readers never see it half done; the call then lands`, () => {
    const ref = sc.open(`faults-${buckets++}`);
    sc.setup(ref);
    const before = JSON.stringify(sc.view(ref));
    fault.writes = 0;
    sc.call(ref);
    const writes = fault.writes;
    const after = JSON.stringify(sc.view(ref));
    assert.ok(writes >= 3, `${writes} writes`);
    for (let n = 1; n <= writes; n++) {
      const s = sc.open(`faults-${buckets++}`);
      sc.setup(s);
      fault.writes = 0;
      fault.failAt = n;
      const r = attempt(() => sc.call(s));
      assert.equal(r.err, 'store-failed', `write ${n}: ${JSON.stringify(r).slice(0, 200)}`);
      assert.equal(JSON.stringify(sc.view(s)), before, `write ${n}: readers while the bucket is down`);
      fault.failAt = Infinity;
      assert.equal(JSON.stringify(sc.view(s)), before, `write ${n}: readers after it heals`);
      sc.call(s);
      assert.equal(JSON.stringify(sc.view(s)), after, `write ${n}: the retry`);
    }
  });
}

test('jco: texts of 1, 3, 10 and 64 MB are stored in chunks and read back whole', () => {
  const s = compositor.MessageStore.open(`large-${buckets++}`);
  fault.largest = 0;
  for (const mb of [1, 3, 10, 64]) {
    const text = `${mb}:`.padEnd(mb << 20, 'abcdefghij');
    const done = submit(s, text, { now: mb });
    const got = JSON.parse(s.get(done.id));
    assert.equal(JSON.stringify(got.parts).length > text.length, true, `${mb} MB`);
    const blobPart = got.parts.find((p) => p.type === 'file-ref' || p.type === 'file-attachment');
    const back = blobPart ? JSON.parse(s.blob(blobPart.ref?.content_id ?? blobPart.blob?.content_id)).data : got.parts[0].text;
    const decoded = blobPart ? Buffer.from(back, 'base64').toString('utf8') : back;
    assert.equal(decoded.length, text.length, `${mb} MB read back`);
    assert.equal(decoded, text);
  }
  assert.ok(fault.largest <= 256 * 1024 + 64, `the largest single write carried ${fault.largest} bytes`);
});
