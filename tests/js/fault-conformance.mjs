// The storage fault suite every JS host runs: each write of submit, append, skill create,
// put, update, delete, addArtifact and deleteArtifact fails in turn (then every later one,
// as a store that went down), and each read in turn; after every fault, readers see the
// state before the call (while the store is still down, and after it heals), and the same
// call then lands. `open(faults)` opens a store over a backend wired to `faults` (see
// `faultyKv` for host KV objects; the Chromium suite patches IndexedDB the same way).

/** The fault switch: counts writes and reads, fails from the armed position on. */
export function faults() {
  const f = {
    writes: 0,
    reads: 0,
    failWrite: Infinity,
    failRead: Infinity,
    write() {
      f.writes += 1;
      if (f.writes >= f.failWrite) throw new Error(`injected write fault at write ${f.writes}`);
    },
    read() {
      f.reads += 1;
      if (f.reads >= f.failRead) throw new Error(`injected read fault at read ${f.reads}`);
    },
    arm({ write = Infinity, read = Infinity }) {
      f.writes = 0;
      f.reads = 0;
      f.failWrite = write;
      f.failRead = read;
    },
    heal() {
      f.failWrite = Infinity;
      f.failRead = Infinity;
    },
  };
  return f;
}

/**
 * A host KV object (get/put/delete/list over `host`) whose calls go through `f`; an edge KV
 * namespace stays one (its paged list is passed through).
 */
export function faultyKv(host, f) {
  const edge = typeof host.getWithMetadata === 'function' ? { getWithMetadata: (...a) => host.getWithMetadata(...a) } : {};
  return {
    ...edge,
    async get(k) {
      f.read();
      return host.get(k);
    },
    async put(k, v) {
      f.write();
      return host.put(k, v);
    },
    async delete(k) {
      f.write();
      return host.delete(k);
    },
    async list(...a) {
      f.read();
      return host.list(...a);
    },
  };
}

const TEXT = (t) => ({ role: 'user', parts: [{ type: 'text', text: t }] });
const NOW = () => '2026-11-23T00:00:00Z';

function skill(name, n, extra = '') {
  return {
    id: `skill-${name}`,
    name,
    description: `Does ${name}${extra}`,
    version: '1.0.0',
    artifacts: Array.from({ length: n }, (_, i) => ({ id: `${name}-a${i}`, kind: 'description', name: `Part ${i}`, content: `Part ${i} of ${name}${extra}` })),
  };
}

/** The calls under test: each with its setup (run without faults) and what readers see. */
function scenarios(pl) {
  const messages = async (s) => ({
    history: await s.history(),
    thread: await s.thread('chat'),
    explicit: await s.get('client-42').catch((e) => e.code),
  });
  const skills = async (s) => ({
    list: await s.list(),
    a: await s.get('skill-alpha'),
    b: await s.getByName('beta'),
    art: await s.getArtifact('alpha-a1'),
    art9: await s.getArtifact('alpha-new'),
  });
  return [
    {
      name: 'submit with an explicit id',
      kind: 'messages',
      setup: (s) => pl.submit(TEXT('one'), { store: s, now: () => 1 }),
      call: (s) => pl.submit({ role: 'user', parts: [{ type: 'text', text: 'two' }, { type: 'text', text: 'three' }] }, { store: s, id: 'client-42', now: () => 2 }),
      view: messages,
    },
    {
      name: 'append (an assistant turn)',
      kind: 'messages',
      setup: (s) => s.append(TEXT('hi'), { session: 'chat', now: () => 1 }),
      call: (s) => s.append({ role: 'assistant', parts: [{ type: 'text', text: 'hello' }, { type: 'tool-call', id: 'c1', name: 'search', input: { q: 'x' } }] }, { session: 'chat', now: () => 2 }),
      view: messages,
    },
    {
      name: 'skill create',
      kind: 'skills',
      setup: (s) => s.create(skill('beta', 1)),
      call: (s) => s.create(skill('alpha', 3)),
      view: skills,
    },
    {
      name: 'skill put over an existing skill',
      kind: 'skills',
      setup: (s) => s.create(skill('alpha', 3)),
      call: (s) => s.put(skill('alpha', 2, ' (v2)')),
      view: skills,
    },
    {
      name: 'skill update',
      kind: 'skills',
      setup: (s) => s.create(skill('alpha', 2)),
      call: (s) => s.update({ id: 'skill-alpha', name: 'alpha', description: 'Renamed description', version: '1.1.0' }),
      view: skills,
    },
    {
      name: 'skill delete',
      kind: 'skills',
      setup: async (s) => {
        await s.create(skill('alpha', 3));
        await s.create(skill('beta', 1));
      },
      call: (s) => s.delete('skill-alpha'),
      view: skills,
    },
    {
      name: 'addArtifact',
      kind: 'skills',
      setup: (s) => s.create(skill('alpha', 2)),
      call: (s) => s.addArtifact({ id: 'alpha-new', skill_id: 'skill-alpha', kind: 'description', name: 'New', content: 'new part' }),
      view: skills,
    },
    {
      name: 'deleteArtifact',
      kind: 'skills',
      setup: (s) => s.create(skill('alpha', 3)),
      call: (s) => s.deleteArtifact('alpha-a1'),
      view: skills,
    },
  ];
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Runs every scenario with a write fault at each position and a read fault at each
 * position. `open(kind, f)` opens a fresh store (`kind`: "messages" or "skills") wired to
 * the fault switch `f`. Returns `[{ name, ok, detail }]`.
 */
export async function faultConformance(pl, open) {
  const results = [];
  for (const sc of scenarios(pl)) {
    // The reference: what readers see before and after the call without faults.
    const f0 = faults();
    const ref = await open(sc.kind, f0);
    await sc.setup(ref);
    const before = await sc.view(ref);
    f0.arm({});
    await sc.call(ref);
    const calls = { writes: f0.writes, reads: f0.reads };
    const after = await sc.view(ref);
    for (const [what, limit] of [['write', calls.writes], ['read', calls.reads]]) {
      let failed = 0;
      let detail = '';
      try {
        for (let n = 1; n <= limit; n++) {
          const f = faults();
          const s = await open(sc.kind, f);
          await sc.setup(s);
          f.arm({ [what]: n });
          let err = null;
          try {
            await sc.call(s);
          } catch (e) {
            err = e;
          }
          if (err === null) continue; // this position was not reached (a shorter path)
          failed += 1;
          if (err.code !== 'StoreFailed') throw new Error(`${what} ${n}: expected StoreFailed, got ${err.code}: ${err.message}`);
          if (what === 'write') {
            // The store is still down: readers see the state before the call.
            f.failRead = Infinity;
            const down = await sc.view(s);
            if (!same(down, before)) throw new Error(`${what} ${n}: while the store is down, readers see ${JSON.stringify(down).slice(0, 400)}`);
          }
          f.heal();
          const healed = await sc.view(s);
          if (!same(healed, before)) throw new Error(`${what} ${n}: after the store heals, readers see ${JSON.stringify(healed).slice(0, 400)}`);
          await sc.call(s);
          const done = await sc.view(s);
          if (!same(done, after)) throw new Error(`${what} ${n}: the retry left ${JSON.stringify(done).slice(0, 400)}`);
        }
        if (failed === 0 && limit > 0) throw new Error(`no ${what} fault was ever hit (${limit} ${what}s)`);
        detail = `${failed} ${what} positions`;
        results.push({ name: `${sc.name}: every ${what} position`, ok: true, detail });
      } catch (e) {
        results.push({ name: `${sc.name}: every ${what} position`, ok: false, detail: String(e && e.stack ? e.stack : e) });
      }
    }
  }
  return results;
}
