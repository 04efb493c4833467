// Benchmarks of issue 4, printed as tables. Not part of the test command.
//
// 1. Phase-1 matching in Node through the wasm package, beside MiniSearch (BM25+, what a
//    web developer would use) on the same generated 10,000-skill catalog and queries:
//    index build time, then p50 / p99 of one match. Targets: build < 50 ms, p99 < 1 ms.
// 2. The skill store on IndexedDB in headless Chromium, beside the `idb` package (the thin
//    IndexedDB wrapper web developers use) doing the same writes and reads: put 1,000
//    skills with 4 artifacts each (one transaction per skill), then list their summaries.
//    Target: within 1.3x of idb.
// Ratios, not absolute times: contenders alternate within each round; medians are reported.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import MiniSearch from 'minisearch';
import * as pl from 'promptloom';
import { openBlank } from '../tests/js/chromium.mjs';
import { writeChart } from './chart.mjs';

const require = createRequire(import.meta.url);
const SKILLS = Number(process.env.SKILLS ?? 10000);
const QUERIES = Number(process.env.QUERIES ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PUTS = Number(process.env.PUTS ?? 1000);

// ---- a deterministic catalog ------------------------------------------------------------
let seed = 0x2545f491;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const VERBS = ['check', 'find', 'summarize', 'translate', 'review', 'audit', 'generate', 'extract', 'compare', 'format', 'plan', 'explain', 'refactor', 'test', 'document', 'classify', 'rank', 'merge', 'draft', 'verify'];
const NOUNS = ['timeline', 'contradictions', 'pages', 'code', 'pull requests', 'invoices', 'characters', 'locations', 'tables', 'citations', 'commits', 'tests', 'emails', 'notes', 'meetings', 'schemas', 'queries', 'images', 'reports', 'dependencies', 'releases', 'budgets', 'contracts', 'recipes', 'lessons'];
const ADJ = ['consistent', 'missing', 'duplicate', 'stale', 'broken', 'long', 'legal', 'financial', 'visual', 'structured', 'multilingual', 'quarterly', 'internal', 'public', 'draft'];
const FILL = ['the', 'a', 'across', 'for', 'with', 'in', 'your', 'workspace', 'project', 'document', 'quickly', 'carefully', 'and', 'or', 'from'];
const words = (n) => Array.from({ length: n }, () => (rnd() < 0.35 ? pick(FILL) : rnd() < 0.5 ? pick(NOUNS) : rnd() < 0.5 ? pick(VERBS) : pick(ADJ))).join(' ');
const skills = Array.from({ length: SKILLS }, (_, i) => {
  const v = pick(VERBS);
  const n = pick(NOUNS);
  return {
    id: `skill-${i}`,
    name: `${v} ${pick(ADJ)} ${n} ${i}`,
    description: `${v[0].toUpperCase()}${v.slice(1)}s ${n} ${words(18)}.`,
    tags: [pick(NOUNS), pick(ADJ), pick(VERBS)],
    intent_patterns: [`${v} ${n}`, `${pick(VERBS)} ${pick(NOUNS)}`],
    trigger_phrases: rnd() < 0.5 ? [`please ${v} my ${n} ${i}`] : [],
    scope: 'account',
  };
});
const queries = Array.from({ length: QUERIES }, (_, i) => {
  const s = skills[Math.floor(rnd() * SKILLS)];
  const r = i % 4;
  if (r === 0 && s.trigger_phrases.length > 0) return `hey, ${s.trigger_phrases[0]} today`;
  if (r === 1) return `${pick(VERBS)} ${pick(ADJ)} ${pick(NOUNS)}`;
  if (r === 2) return `${words(6)}`;
  return `${pick(VERBS)} ${pick(NOUNS).slice(0, 4)}`; // typing: the last word unfinished
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => (x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} µs`);

// ---- 1. matching ------------------------------------------------------------------------
function buildPromptloom() {
  return new pl.SkillIndex(skills);
}
function buildMiniSearch() {
  const m = new MiniSearch({
    fields: ['name', 'description', 'tags', 'intent_patterns', 'trigger_phrases'],
    storeFields: ['name'],
    extractField: (doc, f) => (Array.isArray(doc[f]) ? doc[f].join(' ') : doc[f]),
    searchOptions: { boost: { name: 3, trigger_phrases: 2, intent_patterns: 2, tags: 1.5 }, prefix: (term, i, terms) => i === terms.length - 1 },
  });
  m.addAll(skills);
  return m;
}

const builds = { promptloom: [], minisearch: [] };
const times = { promptloom: [], minisearch: [] };
let ix;
let mini;
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ['promptloom', 'minisearch'] : ['minisearch', 'promptloom'];
  for (const who of order) {
    const t0 = performance.now();
    if (who === 'promptloom') {
      ix?.free();
      ix = buildPromptloom();
    } else mini = buildMiniSearch();
    builds[who].push(performance.now() - t0);
  }
}
// Warm up, then time every query alone, alternating the contenders.
for (const q of queries.slice(0, 50)) {
  ix.match(q, { k: 5 });
  mini.search(q).slice(0, 5);
}
let hits = 0;
for (let round = 0; round < 3; round++) {
  for (const q of queries) {
    let t0 = performance.now();
    const a = ix.match(q, { k: 5 });
    times.promptloom.push(performance.now() - t0);
    t0 = performance.now();
    mini.search(q).slice(0, 5);
    times.minisearch.push(performance.now() - t0);
    if (round === 0 && a.length > 0) hits++;
  }
}
const exactShare = queries.filter((q) => ix.match(q, { k: 1 })[0]?.tier === 'exact').length;

console.log(`\nPhase-1 matching: ${SKILLS.toLocaleString('en')} skills, ${QUERIES} queries × 3 (Node ${process.version}, medians of ${ROUNDS} builds)\n`);
console.log('| | promptloom (wasm) | MiniSearch 7 | ratio | target |');
console.log('|---|---:|---:|---:|---|');
const bp = median(builds.promptloom);
const bm = median(builds.minisearch);
console.log(`| index build | ${ms(bp)} | ${ms(bm)} | ${(bm / bp).toFixed(1)}× faster | < 50 ms: ${bp < 50 ? 'met' : 'MISSED'} |`);
for (const [label, p] of [['match p50', 0.5], ['match p99', 0.99]]) {
  const a = pct(times.promptloom, p);
  const b = pct(times.minisearch, p);
  const target = p === 0.99 ? `< 1 ms: ${a < 1 ? 'met' : 'MISSED'}` : '';
  console.log(`| ${label} | ${ms(a)} | ${ms(b)} | ${(b / a).toFixed(1)}× faster | ${target} |`);
}
console.log(`\n(${hits} of ${QUERIES} queries had recommendations; ${exactShare} ranked an exact trigger-phrase hit first.)`);
const bar = (name, v) => ({ name, value: v, text: ms(v) });
writeChart('matching', `Phase-1 matching, ${SKILLS.toLocaleString('en')} skills (Node): promptloom vs MiniSearch`, [
  { label: 'index build', bars: [bar('promptloom', bp), bar('MiniSearch 7', bm)] },
  ...[['match p50', 0.5], ['match p99', 0.99]].map(([label, p]) => ({ label, bars: [bar('promptloom', pct(times.promptloom, p)), bar('MiniSearch 7', pct(times.minisearch, p))] })),
]);

// ---- 2. IndexedDB -----------------------------------------------------------------------
// The demo page in headless Chromium (the same launch the browser tests use).
const demo = await openBlank();
const { page } = demo;
const idbUrl = '/' + require.resolve('idb').replace(process.cwd().replace(/\/bench$/, '') + '/', '').replace(/index\.cjs$/, 'index.js');
const result = await page.evaluate(
  async ({ PUTS, ROUNDS, idbUrl }) => {
    const pl = await import('/pkg/src/web.js');
    const { openDB, deleteDB } = await import(idbUrl);
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const now = '2026-11-22T08:00:00Z';
    const pkg = (i) => ({
      id: `s-${i}`,
      name: `Skill ${i}`,
      description: `Checks things number ${i} across the workspace.`,
      tags: ['analysis', `t${i % 10}`],
      source: i % 3 === 0 ? 'system' : 'user',
      intent_patterns: ['check things'],
      trigger_phrases: [`check thing ${i}`],
      artifacts: [
        { id: `s-${i}-a`, kind: 'description', name: 'Overview', ordinal: 0, content: 'Explains what the skill does and when to use it. '.repeat(4) },
        { id: `s-${i}-b`, kind: 'prompt_template', name: 'Check', ordinal: 1, content: 'Given {{ entity }}:\n{% for c in claims %}- {{ c.text }}\n{% endfor %}Find contradictions.' },
        { id: `s-${i}-c`, kind: 'code_template', name: 'Script', ordinal: 2, content: "import inklings\npages = inklings.search('{{ q }}')\ninklings.submit(pages)" },
        { id: `s-${i}-d`, kind: 'example', name: 'Example', ordinal: 3, content: 'Input: A is 3. A is 4.\nOutput: contradiction.', metadata: { tags: ['numbers'] } },
      ],
    });
    const out = { promptloom: { put: [], list: [] }, idb: { put: [], list: [] }, floor: { put: [], list: [] } };
    let counts = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['promptloom', 'idb', 'floor'] : ['floor', 'idb', 'promptloom'];
      for (const who of order) {
        const name = `bench-${who}-${round}`;
        if (who === 'promptloom') {
          const store = await pl.openSkillStore({ backend: 'indexeddb', name, now: () => Date.parse(now) });
          let t0 = performance.now();
          for (let i = 0; i < PUTS; i++) await store.create(pkg(i));
          out.promptloom.put.push(performance.now() - t0);
          t0 = performance.now();
          const list = await store.list();
          out.promptloom.list.push(performance.now() - t0);
          counts.promptloom = list.length;
          store.close();
        } else if (who === 'floor') {
          // The rows promptloom's IndexedDB layout writes (the skill row and 4 artifact rows,
          // with unique indexes on the skill's name and the artifacts' ids), put with the
          // bare IndexedDB API.
          const db = await new Promise((resolve, reject) => {
            const o = indexedDB.open(name, 1);
            o.onupgradeneeded = () => {
              const s = o.result.createObjectStore('skills');
              s.createIndex('name', 'name', { unique: true });
              s.createIndex('source', 'source');
              const a = o.result.createObjectStore('skill_artifacts');
              a.createIndex('id', 'id', { unique: true });
              a.createIndex('skill_id', 'skill_id');
              a.createIndex('kind', 'kind');
            };
            o.onsuccess = () => resolve(o.result);
            o.onerror = () => reject(o.error);
          });
          let t0 = performance.now();
          for (let i = 0; i < PUTS; i++) {
            const { artifacts, ...skill } = pkg(i);
            await new Promise((resolve, reject) => {
              const tx = db.transaction(['skills', 'skill_artifacts'], 'readwrite');
              for (const a of artifacts) {
                const key = `${skill.id}/${a.kind}/${a.id}`;
                tx.objectStore('skill_artifacts').put({ v: JSON.stringify({ ...a, skill_id: skill.id, created_at: now, updated_at: now }), skill_id: skill.id, kind: a.kind, id: a.id }, key);
              }
              const row = JSON.stringify({ ...skill, created_at: now, updated_at: now, artifacts: artifacts.map(({ content, ...r }) => r) });
              tx.objectStore('skills').add({ v: row, name: skill.name, source: skill.source }, skill.id);
              tx.oncomplete = resolve;
              tx.onabort = () => reject(tx.error);
            });
          }
          out.floor.put.push(performance.now() - t0);
          t0 = performance.now();
          const list = await new Promise((resolve) => {
            const q = db.transaction('skills').objectStore('skills').getAll();
            q.onsuccess = () => resolve(JSON.parse(`[${q.result.map((r) => r.v).join(',')}]`).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
          });
          out.floor.list.push(performance.now() - t0);
          counts.floor = list.length;
          db.close();
        } else {
          const db = await openDB(name, 1, {
            upgrade(db) {
              const s = db.createObjectStore('skills', { keyPath: 'id' });
              s.createIndex('name', 'name', { unique: true });
              s.createIndex('source', 'source');
              const a = db.createObjectStore('skill_artifacts', { keyPath: 'id' });
              a.createIndex('skill_id', 'skill_id');
              a.createIndex('kind', 'kind');
            },
          });
          let t0 = performance.now();
          for (let i = 0; i < PUTS; i++) {
            const { artifacts, ...skill } = pkg(i);
            const tx = db.transaction(['skills', 'skill_artifacts'], 'readwrite');
            // The summary a listing shows (metadata and artifact references), as promptloom stores it.
            tx.objectStore('skills').put({ ...skill, created_at: now, updated_at: now, artifacts: artifacts.map(({ content, ...r }) => r) });
            for (const a of artifacts) tx.objectStore('skill_artifacts').put({ ...a, skill_id: skill.id, created_at: now, updated_at: now });
            await tx.done;
          }
          out.idb.put.push(performance.now() - t0);
          t0 = performance.now();
          const list = await db.getAll('skills');
          list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          out.idb.list.push(performance.now() - t0);
          counts.idb = list.length;
          db.close();
        }
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const who of ['promptloom', 'idb', 'floor']) indexedDB.deleteDatabase(`bench-${who}-${round}`);
    }
    return {
      counts,
      put: { promptloom: median(out.promptloom.put), idb: median(out.idb.put), floor: median(out.floor.put) },
      list: { promptloom: median(out.promptloom.list), idb: median(out.idb.list), floor: median(out.floor.list) },
    };
  },
  { PUTS, ROUNDS: Math.max(3, Math.min(ROUNDS, 5)), idbUrl },
);
await demo.close();

console.log(`\nSkill store on IndexedDB: ${PUTS.toLocaleString('en')} skills × 4 artifacts (headless Chromium, medians)\n`);
console.log('| operation | promptloom | idb 8 | ratio | target ≤ 1.3× | floor: the same rows, bare IndexedDB | promptloom / floor |');
console.log('|---|---:|---:|---:|---|---:|---:|');
for (const op of ['put', 'list']) {
  const a = result[op].promptloom;
  const b = result[op].idb;
  const f = result[op].floor;
  const label = op === 'put' ? `create ${PUTS} skills (one transaction each)` : `list ${PUTS} summaries`;
  console.log(`| ${label} | ${ms(a)} | ${ms(b)} | ${(a / b).toFixed(2)}× | ${a / b <= 1.3 ? 'met' : 'MISSED'} | ${ms(f)} | ${(a / f).toFixed(2)}× |`);
}
console.log(`| put + list | ${ms(result.put.promptloom + result.list.promptloom)} | ${ms(result.put.idb + result.list.idb)} | ${((result.put.promptloom + result.list.promptloom) / (result.put.idb + result.list.idb)).toFixed(2)}× | ${(result.put.promptloom + result.list.promptloom) / (result.put.idb + result.list.idb) <= 1.3 ? 'met' : 'MISSED'} |`);
if (result.counts.promptloom !== PUTS || result.counts.idb !== PUTS || result.counts.floor !== PUTS) throw new Error(`listed ${JSON.stringify(result.counts)}`);
writeChart('skill-store', `Skill store on IndexedDB, ${PUTS.toLocaleString('en')} skills × 4 artifacts (Chromium)`, ['put', 'list'].map((op) => ({
  label: op === 'put' ? `create ${PUTS} skills (one transaction each)` : `list ${PUTS} summaries`,
  bars: [bar('promptloom', result[op].promptloom), bar('idb 8', result[op].idb), bar('bare IndexedDB (floor)', result[op].floor)],
})));
