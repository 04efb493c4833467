// The skill-store conformance suite: the same checks against every backend (memory and host
// KV objects in Node, IndexedDB in headless Chromium, memory and a KV namespace in workerd,
// `wasi:keyvalue` through the component). Environment-agnostic: it gets the package, a way
// to open a fresh store, and the seed's Consistency Checker package (text); it returns one
// result per check.

import { assert, checker, eq, rejects } from './checks.mjs';

const TABLES = ['skills', 'skill_names', 'skill_artifacts', 'artifact_ids'];

/** Every skill row, to prove a failure wrote nothing. */
async function rows(store) {
  const b = store.__backend;
  const out = {};
  for (const t of TABLES) out[t] = await b.scan(t, '');
  return JSON.stringify(out);
}

const NOW = '2026-11-22T08:00:00.000Z';

/**
 * Runs the suite. `open()` resolves to a fresh, empty store whose clock says NOW; `seedText`
 * is the seed's package JSON. Returns [{ name, ok, error? }].
 */
export async function skillConformance(pl, open, seedText) {
  const seed = JSON.parse(seedText);
  const { skill: imported } = pl.importPackage(seedText, { now: () => Date.parse(NOW) });
  const results = [];
  const check = checker(open, results);

  await check('a new store is empty; unknown ids and names are null', async (s) => {
    eq(await s.list(), [], 'list');
    assert((await s.get('nope')) === null, 'get');
    assert((await s.getByName('nope')) === null, 'getByName');
    assert((await s.getArtifact('nope')) === null, 'getArtifact');
    eq(await s.getArtifacts('nope'), [], 'getArtifacts');
  });

  await check('create: the seed package reads back equal, by id and by name', async (s) => {
    const summary = await s.create(seed);
    eq(summary.artifacts.map((a) => a.kind), ['description', 'prompt_template', 'code_template', 'dspy_module'], 'summary refs');
    assert(summary.artifacts.every((a) => a.content === undefined), 'summaries carry no content');
    eq(await s.get(imported.id), imported, 'get');
    eq(await s.getByName('Consistency Checker'), imported, 'getByName');
    const list = await s.list();
    eq(list.map((x) => x.name), ['Consistency Checker'], 'list');
    eq(list[0], summary, 'list = create result');
  });

  await check('list is in code point order of (name, id) on every backend, as the core sorts', async (s) => {
    // UTF-16 order would put the emoji (a surrogate pair) before the fullwidth letter.
    for (const name of ['\u{1F600} smile', '\uFF5A wide', 'a plain', 'B upper']) {
      await s.create({ name, description: `the ${name} skill`, artifacts: [{ kind: 'prompt_template', name: 'main', content: 'Hi' }] });
    }
    eq((await s.list()).map((x) => x.name), ['B upper', 'a plain', '\uFF5A wide', '\u{1F600} smile'], 'order');
  });

  await check('phase 2: artifacts load per kind and one by one', async (s) => {
    await s.create(seed);
    const t = await s.getArtifacts(imported.id, ['prompt_template', 'dspy_module']);
    eq(t.map((a) => a.name), ['Check Prompt', 'DSPy Checker'], 'by kind');
    eq(await s.getArtifact(t[1].id), t[1], 'one artifact');
    eq((await s.getArtifacts(imported.id)).length, 4, 'all kinds');
  });

  await check('names and ids are unique per store; a refused create writes nothing', async (s) => {
    await s.create(seed);
    const before = await rows(s);
    await rejects(s.create(seed), 'AlreadyExists', 'same id');
    await rejects(s.create({ ...seed, id: 'other' }), 'AlreadyExists', 'same name');
    eq(await rows(s), before, 'rows after refusals');
  });

  await check('an invalid package lists every problem and writes nothing', async (s) => {
    await s.create(seed);
    const before = await rows(s);
    const bad = { ...seed, id: 'bad', name: 'Bad', version: '1', artifacts: [{ kind: 'prompt_template', name: 'x', content: '{{ oops' }, { kind: 'dspy_module', name: 'd', content: '{"template_id":"p"}', metadata: { fallback_artifact: 'nope' } }] };
    const e = await rejects(s.put(bad), 'InvalidSkill', 'put');
    eq(e.details.problems.map((p) => p.path), ['version', 'artifacts[0].content', 'artifacts[1].metadata.fallback_artifact'], 'every problem');
    eq(await rows(s), before, 'rows');
  });

  await check('artifacts: add, unique (name, variant), update (kind change), delete', async (s) => {
    await s.create(seed);
    const a = await s.addArtifact({ skill_id: imported.id, kind: 'prompt_template', name: 'Check Prompt', model_variant: 'anthropic', content: 'Claude: {{ entity_name }}' });
    assert(a.created_at === NOW, 'stamped');
    await rejects(s.addArtifact({ skill_id: imported.id, kind: 'example', name: 'Check Prompt', content: 'x' }), 'AlreadyExists', 'default variant taken');
    await rejects(s.addArtifact({ skill_id: 'nope', kind: 'example', name: 'x', content: 'x' }), 'NotFound', 'unknown skill');
    const u = await s.updateArtifact({ ...a, kind: 'example', content: 'now an example' });
    eq([u.kind, u.created_at], ['example', NOW], 'updated');
    eq((await s.getArtifacts(imported.id, ['example'])).map((x) => x.content), ['now an example'], 'moved to example');
    eq((await s.getArtifacts(imported.id, ['prompt_template'])).length, 1, 'left prompt_template');
    await s.deleteArtifact(a.id);
    assert((await s.getArtifact(a.id)) === null, 'deleted');
    eq(await s.get(imported.id), imported, 'back to the seed');
  });

  await check('the fallback target cannot be deleted from under its dspy_module', async (s) => {
    await s.create(seed);
    const [check] = await s.getArtifacts(imported.id, ['prompt_template']);
    const before = await rows(s);
    await rejects(s.deleteArtifact(check.id), 'InvalidSkill', 'delete fallback target');
    eq(await rows(s), before, 'rows');
  });

  await check('update: metadata and rename keep the artifacts', async (s) => {
    await s.create(seed);
    const { artifacts: _, ...meta } = seed;
    const r = await s.update({ ...meta, name: 'Renamed', tags: ['x'] });
    eq(r.artifacts.length, 4, 'refs kept');
    assert((await s.getByName('Consistency Checker')) === null, 'old name free');
    eq((await s.getByName('Renamed')).tags, ['x'], 'new name');
    await s.create({ ...seed, id: 'second' });
    await rejects(s.update({ ...meta, name: 'Consistency Checker' }), 'AlreadyExists', 'rename onto a taken name');
  });

  await check('put replaces a package whole; delete cascades', async (s) => {
    await s.put(seed);
    const v2 = { ...seed, version: '1.1.0', artifacts: seed.artifacts.filter((a) => a.kind !== 'code_template') };
    await s.put(v2);
    const got = await s.get(imported.id);
    eq([got.version, got.artifacts.length], ['1.1.0', 3], 'replaced');
    const d = await s.delete(imported.id);
    eq(d, { deleted: imported.id, artifacts: 3 }, 'delete result');
    for (const t of TABLES) eq(await s.__backend.scan(t, ''), [], `no ${t} rows left`);
    await rejects(s.delete(imported.id), 'NotFound', 'delete twice');
  });

  await check('list filters by source, tags and enabled; many skills list by name', async (s) => {
    for (let i = 0; i < 25; i++) {
      await s.create({ name: `Skill ${String(i).padStart(2, '0')}`, description: `number ${i}`, source: i % 3 === 0 ? 'system' : 'user' });
    }
    const all = await s.list();
    eq(all.length, 25, 'count');
    eq(all.map((x) => x.name), [...all.map((x) => x.name)].sort(), 'by name');
    eq((await s.list({ source: 'system' })).length, 9, 'system');
    // Tags and enabled, by the core's rule (ListFilter), on every backend.
    await s.create({ name: 'Tagged On', description: 'x', tags: ['pdf', 'ocr'], source: 'system' });
    await s.create({ name: 'Tagged Off', description: 'x', tags: ['pdf'], metadata: { enabled: false } });
    eq((await s.list({ tags: ['pdf'] })).map((x) => x.name), ['Tagged Off', 'Tagged On'], 'tags');
    eq((await s.list({ tags: ['pdf', 'ocr'], source: 'system' })).map((x) => x.name), ['Tagged On'], 'tags and source');
    eq((await s.list({ enabled: false })).map((x) => x.name), ['Tagged Off'], 'disabled only');
    eq((await s.list({ enabled: true })).length, 26, 'enabled only');
    await rejects(s.list({ tags: 'pdf' }), 'InvalidOptions', 'tags must be an array');
    await rejects(s.list({ colour: 'red' }), 'InvalidOptions', 'an unknown filter');
  });

  await check('SKILL.md import → store → export round trip', async (s) => {
    const md = '---\nname: pdf-tools\ndescription: Work with PDFs.\nallowed-tools: Bash(python3:*) Read\nmetadata:\n  version: "2.0.0"\n---\n# PDF\nRun the script.\n';
    const { skill } = pl.importSkillMd(md, { 'scripts/x.py': 'print(1)\n', 'assets/logo.bin': new Uint8Array([0, 1, 2, 255]) }, { dir: 'pdf-tools', now: () => Date.parse(NOW) });
    await s.create(skill);
    const back = await s.getByName('pdf-tools');
    eq(back, skill, 'stored');
    const out = pl.exportSkillMd(back);
    // Lossless for what SKILL.md holds: the export imports back to the same skill.
    eq(pl.importSkillMd(out.text, out.files, { dir: 'pdf-tools', now: () => Date.parse(NOW) }).skill, skill, 'export → import');
    assert(out.text.endsWith('---\n# PDF\nRun the script.\n'), 'body kept byte for byte');
    eq(out.files['scripts/x.py'], 'print(1)\n', 'text file');
    eq([...out.files['assets/logo.bin']], [0, 1, 2, 255], 'binary file');
  });

  await check('system skills: the package seed migrates a store once, upgrades in place, never downgrades', async (s) => {
    const doc = await pl.systemSkills();
    eq(doc.skills.map((x) => x.name), ['tool-builder', 'skill-builder'], 'the package seed');
    const r = await s.seed(doc);
    eq([r.status, r.version, r.previous, r.upserted, r.removed], ['created', 1, 0, ['tool-builder', 'skill-builder'], []], 'created');
    eq((await s.list({ source: 'system' })).map((x) => x.name), ['skill-builder', 'tool-builder'], 'listed as system skills');
    const specs = await s.skillSpecs();
    eq(specs.map((x) => x.name), ['skill-builder', 'tool-builder'], 'their specs, by name');
    eq(specs, pl.seedSkillSpecs(doc), 'the seed document gives the same specs');
    const stored = await rows(s);
    eq((await s.seed(doc)).status, 'current', 'the same version again');
    assert(stored === (await rows(s)), 'a current store is not written');
    // Version 2: tool-builder changed, skill-builder dropped.
    const v2 = JSON.parse(JSON.stringify(doc));
    v2.version = 2;
    v2.skills[0].description = 'Tool builder, version 2.';
    v2.skills.splice(1, 1);
    const u = await s.seed(v2);
    eq([u.status, u.previous, u.upserted, u.removed], ['upgraded', 1, ['tool-builder'], ['skill-builder']], 'upgraded');
    eq((await s.getByName('tool-builder')).description, 'Tool builder, version 2.', 'replaced in place');
    assert((await s.getByName('skill-builder')) === null, 'the dropped one is deleted');
    eq((await s.seed(doc)).status, 'newer', 'an older seed changes nothing');
    const before = await rows(s);
    const e = await rejects(s.seed({ version: 3, skills: [{ name: 'x', source: 'user' }] }), 'InvalidSkill', 'an invalid seed');
    assert(e.details.problems.some((p) => p.path === 'skills[0].source' && p.code === 'not-system'), 'names the problem');
    assert(before === (await rows(s)), 'an invalid seed writes nothing');
  });

  return results;
}
