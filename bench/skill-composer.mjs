// Benchmark: a whole Skill Composer composition in Node through the npm package
// (`promptloom/composer`, wasm), beside the same framing template rendered alone by
// nunjucks' `renderString` and by minijinja-js' `renderStr` — both parse and render on each
// call, as the stateless composer does — and the prepared forms side by side: a skill
// prepared once (`prepareSkill`) beside each template compiled once.
//
// The skill is a typical one: a framing `prompt_template` with a loop and conditionals,
// three descriptions (include_when: always, a parameter, the scope), three tagged examples,
// an approach with a tool subset, a parameter schema the composer checks with its JSON
// Schema validator, interrupts and an output schema. The composition covers all nine steps
// and returns the composition object (JSON parsed) as the JS API gives it.
//
// Ratios, not absolute times: rounds alternate between the contenders and the median
// round is reported. Not part of the test command.
import { writeChart } from './chart.mjs';
import * as pl from 'promptloom/composer';
import nunjucks from 'nunjucks';
import { Environment } from 'minijinja-js';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const ITERS = Number(process.env.ITERS ?? 2000);

const framing = `You write the release notes for {{ product }} {{ version }} for {{ audience }}, in a {{ tone }} tone.
{% if breaking > 0 %}This release has {{ breaking }} breaking change{% if breaking > 1 %}s{% endif %}; lead with them.
{% endif %}Changes:
{% for c in changes %}{{ loop.index }}. [{{ c.kind | upper }}] {{ c.text }}{% if c.pr %} (#{{ c.pr }}){% endif %}
{% endfor %}{% if audience == "customers" %}Write for people who do not read the code.{% else %}Name modules where it helps.{% endif %}`;

const changes = [
  { kind: 'feature', text: 'Added offline mode', pr: 412 },
  { kind: 'fix', text: 'Fixed the sync crash on large files', pr: 418 },
  { kind: 'breaking', text: 'Dropped Node 16 support', pr: 420 },
  { kind: 'feature', text: 'Added bulk export of projects', pr: 433 },
  { kind: 'fix', text: 'Fixed a race in the upload queue', pr: 437 },
  { kind: 'fix', text: 'Fixed dark mode contrast in the sidebar' },
  { kind: 'feature', text: 'Added keyboard shortcuts for search', pr: 441 },
  { kind: 'breaking', text: 'Renamed the `sync` option to `replicate`', pr: 450 },
];
const parameters = { product: 'Acme', version: '5.0.0', audience: 'developers', tone: 'neutral', breaking: 2, changes };

const skill = {
  name: 'Release Notes',
  description: 'Writes release notes for a product version from its merged changes.',
  version: '1.4.0',
  metadata: {
    framing: { artifact: 'Notes Framing' },
    parameters: {
      type: 'object',
      required: ['product', 'version', 'changes'],
      properties: {
        product: { type: 'string', minLength: 1 },
        version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$' },
        audience: { enum: ['developers', 'customers'], default: 'developers' },
        tone: { type: 'string' },
        breaking: { type: 'integer', minimum: 0 },
        changes: { type: 'array', minItems: 1, items: { type: 'object', required: ['kind', 'text'], properties: { kind: { enum: ['feature', 'fix', 'breaking'] }, text: { type: 'string' }, pr: { type: 'integer' } } } },
      },
    },
    tool_surface: ['search_prs', 'get_pr', 'post_comment'],
    interrupts: ['on_ambiguous_input', 'before_write'],
    output_schema: { type: 'object', required: ['title', 'body'] },
    max_tool_calls: 8,
  },
  artifacts: [
    { kind: 'prompt_template', name: 'Notes Framing', content: framing },
    { kind: 'description', name: 'Style guide', content: 'Use short sentences. Start each item with a verb in the past tense. Never invent changes that are not listed.', metadata: { include_when: 'always' } },
    { kind: 'description', name: 'Developer wording', content: 'Developers want module names and migration steps for every breaking change.', metadata: { include_when: { parameter: 'audience', equals: 'developers' } } },
    { kind: 'description', name: 'Workspace conventions', content: 'This workspace titles release notes "<Product> <version> — <one-line summary>".', metadata: { include_when: { scope: 'workspace' } } },
    { kind: 'example', name: 'Developer notes', content: 'Input: 1. [FIX] Retry on 429\nOutput: {"title": "Acme 2.3.1 — steadier uploads", "body": "- Retried uploads after rate limits (#311)."}', metadata: { tags: ['developers'] } },
    { kind: 'example', name: 'Breaking change first', content: 'Input: 1. [FIX] Faster search 2. [BREAKING] Removed v1 API\nOutput: {"title": "Acme 4.0.0 — v1 API removed", "body": "- Removed the v1 API; migrate to v2."}', metadata: { tags: ['breaking'] } },
    { kind: 'example', name: 'Feature release', content: 'Input: 1. [FEATURE] Dark mode\nOutput: {"title": "Acme 1.1.0 — dark mode", "body": "- Added dark mode."}', metadata: { tags: ['feature'] } },
    { kind: 'approach', name: 'Gather then write', content: 'Look up each listed pull request, then write.', metadata: { tools: ['search_prs', 'get_pr'] } },
  ],
};
const request = {
  skill_package: skill,
  user_request: 'Draft the release notes for Acme 5.0.0 for developers.',
  thread_id: 'thread-1',
  available_tools: [{ name: 'search_prs', description: 'Search merged pull requests' }, { name: 'get_pr', description: 'Read one pull request' }, { name: 'post_comment' }],
  caller_capabilities: ['search_prs', 'get_pr', 'post_comment'],
  parameters,
};

const env = new Environment();
env.addTemplate('framing', framing);
const compiled = nunjucks.compile(framing);
const { skill_package: _package, ...invocation } = request;
const prepared = pl.prepareSkill(request.skill_package);
// The floor of any API that hands the composition back as a JS object: its JSON text parsed
// (the text as the core writes it, decoded once outside the loop), and that beside the
// framing render alone, compiled once: the one step minijinja-js's row also does.
const compositionText = JSON.stringify(pl.compose(request));
const contenders = {
  'promptloom compose() — all nine steps': () => pl.compose(request),
  'promptloom prepared.compose() — all nine steps, package prepared once': () => prepared.compose(invocation),
  'minijinja-js renderStr — framing only': () => env.renderStr(framing, parameters),
  'minijinja-js renderTemplate — framing only, compiled once': () => env.renderTemplate('framing', parameters),
  'nunjucks renderString — framing only': () => nunjucks.renderString(framing, parameters),
  'nunjucks compiled render — framing only, compiled once': () => compiled.render(parameters),
  'floor: JSON.parse of the composition text alone': () => JSON.parse(compositionText),
  'floor: minijinja-js renderTemplate + JSON.parse of the composition text': () => [env.renderTemplate('framing', parameters), JSON.parse(compositionText)],
};

// The three agree on the framing text (the composer's framing section, trailing newline trimmed).
const composed = pl.compose(request);
if (JSON.stringify(prepared.compose(invocation)) !== JSON.stringify(composed)) throw new Error('the prepared skill composes differently');
const section = composed.prompt.sections[0].text;
const renders = [env.renderStr(framing, parameters), env.renderTemplate('framing', parameters), nunjucks.renderString(framing, parameters), compiled.render(parameters)];
if (renders.some((r) => section !== r.trimEnd())) {
  console.error({ section, renders });
  throw new Error('the framing renders differ');
}
const shape = [composed.prompt.sections.filter((s) => s.kind === 'description').length, composed.prompt.sections.filter((s) => s.kind === 'example').length];
if (shape[0] !== 3 || shape[1] !== 3) throw new Error(`expected 3 descriptions and 3 examples, got ${shape}`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (const f of Object.values(contenders)) for (let i = 0; i < 200; i++) f(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order = Object.entries(contenders);
  if (r % 2) order.reverse();
  for (const [name, f] of order) {
    const t0 = performance.now();
    for (let i = 0; i < ITERS; i++) f();
    times[name].push(((performance.now() - t0) * 1000) / ITERS);
  }
}
const base = median(times['minijinja-js renderStr — framing only']);
let out = `\nSkill Composer in Node (${ITERS} calls × ${ROUNDS} rounds; median round, µs per call; framing ${framing.length} chars, ${changes.length} changes; prompt ${composed.prompt.text.length} chars)\n\n`;
out += '| contender | µs / call | vs minijinja-js framing render |\n|---|---:|---:|\n';
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs);
  out += `| ${name} | ${m.toFixed(1)} (range ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}) | ${(m / base).toFixed(2)}× |\n`;
}
console.log(out);
const target = median(times['promptloom compose() — all nine steps']) < base;
console.log(`target (a whole composition faster than minijinja-js renders the framing alone): ${target ? 'met' : 'missed'}`);
const prep = median(times['promptloom prepared.compose() — all nine steps, package prepared once']);
const mjOnce = median(times['minijinja-js renderTemplate — framing only, compiled once']);
console.log(`prepared beside prepared: a whole composition of a prepared skill is ${(prep / mjOnce).toFixed(2)}× minijinja-js rendering the framing compiled once (${(prep / base).toFixed(2)}× its renderStr)`);
const floor = median(times['floor: minijinja-js renderTemplate + JSON.parse of the composition text']);
console.log(`floor: rendering the framing (compiled once) and parsing the ${compositionText.length}-char composition into objects, without any of the other steps, is ${(floor / base).toFixed(2)}× minijinja-js renderStr`);
writeChart('skill-composer', 'Skill Composer (Node): a whole composition vs rendering the framing alone', [
  { label: 'µs per call', bars: Object.entries(times).map(([name, xs]) => ({ name: name.replace(' — ', ': '), value: median(xs), text: `${median(xs).toFixed(1)} µs` })) },
]);
