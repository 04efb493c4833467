// The hardening suite every JS host runs (Node, workerd, Chromium): inputs that once killed
// the wasm instance must fail with a coded error and leave it answering; a trap that still
// happens (a template building a value past the render budget) costs one call, never the
// instance; then the boundary suite. `pl` is an entry's module namespace.
import { boundary } from './boundary.mjs';
import { shapedBoundary } from './boundary-shaped.mjs';
import { boundaryCases } from './boundary-cases.mjs';

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };

function framed(content) {
  return { name: 'deep', description: 'd', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content }] };
}

/** Template sources nested deeper than the wasm stack in ways MiniJinja's parser does not count. */
export function deepTemplates(n = 10000) {
  return {
    'binary chain': `{{ ${'1 + '.repeat(n)}1 }}`,
    'unary minus': `{{ ${'-'.repeat(n)}1 }}`,
    'not chain': `{{ ${'not '.repeat(n)}x }}`,
    'filter chain': `{{ x${'|upper'.repeat(n)} }}`,
    'attribute chain': `{{ x${'.a'.repeat(n)} }}`,
    'conditional chain': `{{ 1${' if 1 else 1'.repeat(n)} }}`,
    'elif chain': `{% if a %}x${'{% elif a %}y'.repeat(n)}{% endif %}`,
  };
}

export async function hardeningConformance(pl, { calls = 40, seeds = [1, 2], shapedCalls = calls } = {}) {
  const results = [];
  const alive = () => pl.lower(MESSAGE, { provider: 'anthropic' }).body;
  const healthy = alive();
  const check = async (name, f) => {
    try {
      const detail = await f();
      if (alive() !== healthy) throw new Error('the instance answers differently afterwards');
      results.push({ name, ok: true, detail });
    } catch (e) {
      results.push({ name, ok: false, detail: `${e && e.code ? `${e.code}: ` : ''}${e && e.stack ? e.stack : e}` });
    }
  };
  const fails = async (f, code, pattern) => {
    let out;
    try {
      out = await f();
    } catch (e) {
      if (e.code !== code) throw new Error(`expected ${code}, got ${e.code}: ${e.message}`);
      if (pattern && !pattern.test(e.message)) throw new Error(`the message does not say what is wrong: ${e.message}`);
      return e.message;
    }
    throw new Error(`expected ${code}, got a result: ${JSON.stringify(out).slice(0, 200)}`);
  };
  const md = (meta) => `---\nname: deep\ndescription: d\nmetadata:\n  ${meta}\n---\nbody\n`;

  await check('every error has the class of its code (what the caller can do; the WIT variant\'s case)', async () => {
    const seen = [];
    const caught = (f) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      throw new Error('no error');
    };
    const errors = [
      caught(() => pl.lower({ role: 'user', parts: [] }, { provider: 'anthropic' })),
      caught(() => pl.lower(MESSAGE, { provider: 'nope' })),
      pl.providerError('anthropic', { status: 429, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' }),
      pl.providerError('openai-chat', { status: 401, body: '{}' }),
      pl.providerError('gemini', { status: 500, body: '{}' }),
    ];
    for (const e of errors) seen.push(`${e.code}:${e.class}`);
    const want = ['EmptyMessage:invalid', 'InvalidOptions:invalid', 'RateLimited:unavailable', 'AuthenticationFailed:refused', 'ProviderError:unavailable'];
    if (JSON.stringify(seen) !== JSON.stringify(want)) throw new Error(`${seen.join(' ')}`);
    if (new pl.PromptloomError('NotOurs', 'x', {}).class !== undefined) throw new Error('a code that is not the core\'s has a class');
    if (new pl.PromptloomError('InstanceLost', 'x', {}).class !== 'failed') throw new Error('InstanceLost is not failed');
    return seen.join(' ');
  });

  await check('A: SKILL.md with 10,000 nested `? ` keys is InvalidSkill', () =>
    fails(() => pl.importSkillMd(md(`${'? '.repeat(10000)}x`)), 'InvalidSkill', /nest deeper than 64|mapping key must be text/));
  await check('A: 26 levels of complex keys answer at once (no exponential key text)', async () => {
    const t0 = Date.now();
    const m = await fails(() => pl.importSkillMd(md(`${'? '.repeat(26)}x`)), 'InvalidSkill', /mapping key must be text/);
    const ms = Date.now() - t0;
    if (ms > 1000) throw new Error(`took ${ms} ms`);
    return m;
  });
  await check('A: a 3,000-level block map is InvalidSkill and later calls work', () => {
    let yaml = '---\nname: deep\ndescription: d\nmetadata:\n';
    for (let i = 0; i < 3000; i++) yaml += `${' '.repeat(i + 1)}k:\n`;
    return fails(() => pl.importSkillMd(`${yaml}---\nbody\n`), 'InvalidSkill', /nest deeper than 64/);
  });
  await check('B: templates nested 10,000 deep are MalformedTemplate in validateSkill', async () => {
    for (const [name, src] of Object.entries(deepTemplates())) {
      const v = pl.validateSkill({ name: 'deep', description: 'd', artifacts: [{ kind: 'prompt_template', name: 'F', content: src }] });
      if (v.valid !== false || !v.problems.some((p) => /operators|elif/.test(p.message))) throw new Error(`${name}: ${JSON.stringify(v).slice(0, 300)}`);
    }
  });
  await check('B: … and in skillStore.create (nothing stored)', async () => {
    const store = await pl.openSkillStore();
    for (const [name, src] of Object.entries(deepTemplates())) {
      await fails(() => store.create(framed(src)), 'InvalidSkill').catch((e) => {
        throw new Error(`${name}: ${e.message}`);
      });
    }
    const left = await store.list();
    if (left.length !== 0) throw new Error(`${left.length} skills stored`);
  });
  if (pl.compose) {
    await check('B: … and in compose', async () => {
      for (const [name, src] of Object.entries(deepTemplates())) {
        await fails(() => pl.compose({ skill_package: framed(src), user_request: 'x', thread_id: 't' }), 'MalformedTemplate', /operators|elif/).catch((e) => {
          throw new Error(`${name}: ${e.message}`);
        });
      }
    });
    await check('C: a self-concatenating template stops at the value budget with LimitExceeded; compose works after', async () => {
      const src = `{% set s = "ab" %}${'{% set s = s ~ s %}'.repeat(40)}{{ s|length }}`;
      const t0 = Date.now();
      const m = await fails(() => pl.compose({ skill_package: framed(src), user_request: 'x', thread_id: 't' }), 'LimitExceeded', /value of \d+ bytes/);
      const ms = Date.now() - t0;
      if (ms > 3000) throw new Error(`took ${ms} ms`);
      const again = pl.compose({ skill_package: framed('Hello {{ 1 + 1 }}'), user_request: 'x', thread_id: 't' });
      if (!again.prompt.text.includes('Hello 2')) throw new Error(`compose after the trap: ${again.prompt.text}`);
      return `${m} (${ms} ms)`;
    });
    await check('E: objects of a replaced instance fail with InstanceLost; catalogs and indexes are rebuilt', async () => {
      const registry = pl.buildSkillRegistry(pl.seedSkillSpecs(await pl.systemSkills()), { tools: ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'] });
      const arbiter = new pl.Arbiter(registry);
      const conv = new pl.Conversation();
      conv.append(MESSAGE);
      const catalog = new pl.CommandCatalog();
      catalog.register({ name: 'deploy', description: 'Deploy the app', body: 'Deploy $1.' });
      const index = new pl.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes' }]);
      const before = JSON.stringify(index.match('release'));
      await fails(() => pl.compose({ skill_package: framed(`{% set s = "ab" %}${'{% set s = s ~ s %}'.repeat(40)}`), user_request: 'x', thread_id: 't' }), 'LimitExceeded');
      await fails(() => arbiter.start('lane', 'tool-builder'), 'InstanceLost');
      await fails(() => conv.lower({ provider: 'anthropic' }), 'InstanceLost');
      await fails(() => registry.names(), 'InstanceLost');
      if (!catalog.list().commands.some((c) => c.name === 'deploy')) throw new Error('the catalog lost its command');
      if (JSON.stringify(index.match('release')) !== before) throw new Error('the index answers differently');
      arbiter.free?.();
      conv.free();
      // A fresh registry and arbiter work.
      const fresh = new pl.Arbiter(pl.buildSkillRegistry(pl.seedSkillSpecs(await pl.systemSkills()), { tools: ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'] }));
      if (fresh.run('lane') !== null) throw new Error('a fresh arbiter has a run');
    });
  }
  await check('D: exportTraces with a non-string filter is InvalidOptions', async () => {
    const store = await pl.openSkillStore();
    return fails(() => store.exportTraces({ skill_id: { length: -1 } }), 'InvalidOptions', /skill_id/);
  });
  await check('a lone surrogate in a text part says so', () =>
    fails(() => pl.lower({ role: 'user', parts: [{ type: 'text', text: 'a\uD800b' }] }, { provider: 'anthropic' }), 'InvalidMessage', /surrogate/));
  await check('a NUL in a session name says so', async () => {
    const store = await pl.openMessageStore();
    return fails(() => store.history('a\u0000b'), 'InvalidOptions', /NUL/);
  });
  await check('normalizeMessage takes attachment bytes, as lower does', () => {
    const m = pl.normalizeMessage({ role: 'user', parts: [{ type: 'file-attachment', data: new Uint8Array([1, 2, 3]), mime: 'image/png' }] });
    if (m.parts[0].data !== 'AQID') throw new Error(JSON.stringify(m));
  });
  await check('resource limits: named, configurable, LimitExceeded at their edges', async () => {
    const parts = (n) => ({ role: 'user', parts: Array.from({ length: n }, () => ({ type: 'text', text: 'abcd' })) });
    pl.lower(parts(3), { provider: 'anthropic', limits: { maxParts: 3, maxMessageBytes: 12 } });
    const limitOf = async (f) => {
      try {
        await f();
      } catch (e) {
        if (e.code !== 'LimitExceeded') throw new Error(`expected LimitExceeded, got ${e.code}: ${e.message}`);
        return `${e.details.limit}:${e.details.max}:${e.details.actual}`;
      }
      throw new Error('no error');
    };
    const got = [
      await limitOf(() => pl.lower(parts(4), { provider: 'anthropic', limits: { maxParts: 3 } })),
      await limitOf(() => pl.lower(parts(4), { provider: 'gemini', limits: { maxMessageBytes: 15 } })),
      await limitOf(() => pl.lowerConversation([parts(1), { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] }, parts(1)], { provider: 'openai-chat', limits: { maxTurns: 2 } })),
      await limitOf(async () => pl.submit(parts(5), { store: await pl.openMessageStore(), limits: { maxParts: 4 } })),
    ];
    const want = ['maxParts:3:4', 'maxMessageBytes:15:16', 'maxTurns:2:3', 'maxParts:4:5']; // named as the limits option is written
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(JSON.stringify(got));
    if (pl.compose) {
      const loop = framed('{% for i in range(1000) %}{{ i }}{% endfor %}');
      pl.compose({ skill_package: loop, user_request: 'x', thread_id: 't' });
      await fails(() => pl.compose({ skill_package: loop, user_request: 'x', thread_id: 't', render_limits: { fuel: 50 } }), 'MalformedTemplate', /fuel/);
    }
  });
  for (const seed of seeds) {
    await check(`boundary: every export fed hostile arguments (seed ${seed})`, async () => {
      const r = await boundary(pl, { seed, calls });
      if (r.failures.length > 0) throw new Error(`${r.failures.length} of ${r.calls} calls failed without a code:\n${r.failures.slice(0, 20).join('\n')}`);
      if (r.before !== r.after) throw new Error('the instance answers differently after the hostile calls');
      return `${r.calls} calls`;
    });
  }
  await check('boundary: the reproductions of the boundary issue, each a coded error', async () => {
    const r = await boundaryCases(pl);
    const bad = r.filter((c) => !c.ok);
    if (bad.length > 0) throw new Error(bad.map((c) => `${c.name}: ${c.detail}`).join('\n'));
    return `${r.length} cases`;
  });
  for (const seed of seeds) {
    await check(`boundary: every callable, one place of a valid call made hostile (seed ${seed})`, async () => {
      const r = await shapedBoundary(pl, { seed: seed + 100, calls: shapedCalls });
      if (r.missing.length > 0) throw new Error(`callables without a shape in tests/js/boundary-shaped.mjs (add one): ${r.missing.join(', ')}`);
      if (r.failures.length > 0) throw new Error(`${r.failures.length} of ${r.calls} calls failed without a documented code:\n${r.failures.slice(0, 20).join('\n')}`);
      if (r.unhandled.length > 0) throw new Error(`${r.unhandled.length} promises rejected with nobody listening:\n${r.unhandled.slice(0, 10).join('\n')}`);
      if (r.before !== r.after) throw new Error('the instance answers differently after the hostile calls');
      return `${r.calls} calls over ${r.callables} callables`;
    });
  }
  return results;
}
