#!/usr/bin/env node
// Every benchmark in one run, written to BENCHMARKS.md: the size report and its chart, then
// each benchmark's tables. Each benchmark runs `--runs N` times (default 3) as separate
// processes; a figure in a table is the median of the runs with their min–max beside it
// (these machines are noisy: read the ratios and their spread, not single times). The
// charts are the ones the last run drew. Run through `./scripts/bench.sh`, which builds and
// installs first.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeChart } from './chart.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bench = join(root, 'bench');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Math.max(1, Number(arg('--runs', '3')) | 0);
const ONLY = arg('--only', '');
// Each run's output is kept in target/bench-runs/<name>.<i>.txt; `--reuse` writes the page
// from the kept outputs without running anything (after a change to this page's layout).
const KEPT = join(root, 'target/bench-runs');
const REUSE = process.argv.includes('--reuse');

/** The benchmarks, in the order of the page: what each measures, and how it is run. */
const BENCHES = [
  ['lower', 'Lowering one message', 'A user message to a request body string (Node), beside the AI SDK.', ['lower.mjs']],
  ['conversation', 'A chat, turn by turn', "A chat's cost per new turn (Node), beside the AI SDK's conversion of the whole prompt.", ['conversation.mjs']],
  ['stream', 'Reading streams', 'An Anthropic SSE stream of about 1,800 events read by the response parser and the adapter (Node), beside the AI SDK\'s streamText.', ['--expose-gc', 'stream.mjs']],
  ['relay', 'Relaying a reply to a page', 'The same reply written by a server for a page and read back there (toResponse + readEventStream), beside the AI SDK\'s toUIMessageStreamResponse + readUIMessageStream (Node).', ['relay.mjs']],
  ['chat-render', 'A chat panel rendering a reply', "A 2,000-token reply rendered by React 19 through Chat and useSyncExternalStore, beside the AI SDK's useChat (Chromium), with the floor and the parts.", ['chat-render.mjs']],
  ['partial-object', 'A JSON answer as it streams', 'Object edits per delta (Node), beside the AI SDK\'s parsePartialJson.', ['partial-object.mjs']],
  ['compose', 'The compositor on IndexedDB', 'submit and reads in headless Chromium, beside the raw IndexedDB floor.', ['compose.mjs']],
  ['skills', 'Skills', 'Phase-1 matching beside MiniSearch (Node); the skill store beside idb (Chromium).', ['skills.mjs']],
  ['skill-composer', 'The Skill Composer', 'A whole composition beside nunjucks and minijinja-js rendering the framing alone (Node).', ['skill-composer.mjs']],
  ['arbiter', 'Skill state machines', 'Validation and proposals beside XState v5 (Node).', ['arbiter.mjs']],
  ['gateway', 'The invocation gateway', 'What a validated, rate-limited, idempotent call adds beside calling the handler, and beside ajv + cockatiel (Node).', ['gateway.mjs']],
  ['token-estimate', 'Token estimates', 'The core\'s estimate beside the providers\' tokenizers (Node).', ['token-estimate.mjs']],
  ['cold-start', 'Cold start', 'A fresh Node process, a fresh workerd and a fresh Chromium context importing each entry and making its first body, beside the AI SDK.', ['cold-start.mjs']],
  ['serde-wasm-bindgen', 'Crossing the boundary', 'JS values crossing as JSON text (what the faces do) beside serde-wasm-bindgen (Node).', ['serde-wasm-bindgen.mjs']],
];

/** One process's output (stderr shown, the AI SDK's warnings left out). */
function runOnce(args) {
  const r = spawnSync(process.execPath, args, { cwd: bench, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}` } });
  const err = (r.stderr ?? '').split('\n').filter((l) => l && !l.startsWith('AI SDK Warning')).join('\n');
  if (err) process.stderr.write(err + '\n');
  if (r.status !== 0) throw new Error(`bench/${args.at(-1)} failed (${r.status ?? r.signal})`);
  return r.stdout;
}

/** The output as blocks: `{ text }` lines, or `{ table: string[][] }` rows of cells. */
function blocks(out) {
  const list = [];
  for (const line of out.split('\n')) {
    const last = list.at(-1);
    if (line.startsWith('|')) {
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      if (last && last.table) last.table.push(cells);
      else list.push({ table: [cells] });
    } else if (!line.startsWith('(chart:')) {
      if (last && last.text !== undefined) last.text.push(line);
      else list.push({ text: [line] });
    }
  }
  return list;
}

const TIME = { ns: 1e-3, 'µs': 1, us: 1, ms: 1e3, s: 1e6 };
const NUM = /^([≥≤~<>+]?)\s*(-?\d[\d,]*(?:\.\d+)?)\s*(ns|µs|us|ms|s|KB|MB|B|×|x|%|k)?$/;

/** A cell's figure as `{ prefix, value, unit }` (times in µs), or null. */
function figure(text) {
  const m = NUM.exec(text);
  if (!m) return null;
  const n = Number(m[2].replace(/,/g, ''));
  const unit = m[3] ?? '';
  return unit in TIME ? { prefix: m[1], value: n * TIME[unit], unit: 'time' } : { prefix: m[1], value: n, unit };
}

function digits(v) {
  const a = Math.abs(v);
  return a >= 100 ? 0 : a >= 10 ? 1 : 2;
}

/** A time in µs, written in the unit that suits it. */
function time(us) {
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(digits(us / 1e3))} ms`;
  if (a >= 1 || a === 0) return `${us.toFixed(digits(us))} µs`;
  return `${(us * 1e3).toFixed(0)} ns`;
}

/** One cell over the runs: the text when every run agrees; a median with its range when the figures differ; else each text with its count. */
function merge(texts) {
  if (texts.every((t) => t === texts[0])) return texts[0];
  const figs = texts.map(figure);
  if (figs.every((f) => f && f.unit === figs[0].unit && f.prefix === figs[0].prefix)) {
    const vs = figs.map((f) => f.value).sort((a, b) => a - b);
    const med = vs[Math.floor(vs.length / 2)];
    const unit = figs[0].unit;
    // Non-time figures keep the precision the benchmark printed them with.
    const places = Math.max(...texts.map((t) => (/\.(\d+)/.exec(t.replace(/,/g, ''))?.[1].length ?? 0)));
    const w = (v) => (unit === 'time' ? time(v) : `${v.toFixed(places)}${unit === '×' || unit === '%' || unit === 'x' ? '' : unit ? ' ' : ''}${unit}`);
    const bare = (v) => (unit === 'time' ? time(v) : v.toFixed(places));
    return `${figs[0].prefix}${w(med)} <sub>${bare(vs[0])}–${bare(vs.at(-1))}</sub>`;
  }
  // A figure with words after it (`212.0 (range 203.6–220.8)`, `22.1× faster`): the figure
  // merged, then the words of the run whose figure is the median.
  const lead = texts.map((t) => /^(\S+(?: (?:ns|µs|us|ms|s|KB|MB))?)( .+)$/.exec(t));
  if (lead.every((m) => m && figure(m[1]))) {
    const order = lead.map((m, i) => [figure(m[1]).value, i]).sort((a, b) => a[0] - b[0]);
    const mid = order[Math.floor(order.length / 2)][1];
    const merged = merge(lead.map((m) => m[1]));
    return merged.replace(/( <sub>|$)/, `${lead[mid][2]}$1`);
  }
  const counts = new Map();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => `${t} ×${n}`).join(', ');
}

/** The runs' outputs as one: tables merged cell by cell where their shapes agree, the text of the last run. */
function combine(outputs) {
  const runs = outputs.map(blocks);
  const last = runs.at(-1);
  const same = runs.every((r) => r.length === last.length && r.every((b, i) => (b.table ? last[i].table && b.table.length === last[i].table.length && b.table.every((row, j) => row.length === last[i].table[j].length) : !last[i].table)));
  const out = [];
  for (const [i, b] of last.entries()) {
    if (!b.table) {
      out.push(b.text.join('\n'));
      continue;
    }
    const rows = b.table.map((row, j) => {
      if (!same || j < 2) return row;
      return row.map((_, k) => merge(runs.map((r) => r[i].table[j][k])));
    });
    out.push(rows.map((r) => `| ${r.join(' | ')} |`).join('\n'));
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** The size report, and its chart: each entry's wasm module (gzip) against the size issue's target. */
function sizes() {
  const text = execFileSync(process.execPath, [join(root, 'scripts/size.mjs')], { cwd: root, encoding: 'utf8' });
  const table = text.split('\n').filter((l) => l.startsWith('|')).join('\n');
  const gz = (label) => {
    const row = table.split('\n').find((l) => l.includes(label));
    const m = row && /\| \d+ \([\d.]+ KB\) \| (\d+) \(/.exec(row);
    return m ? Number(m[1]) / 1024 : NaN;
  };
  const entries = [
    ['promptloom/lower', gz('web wasm, lowering only'), 120],
    ['promptloom', gz('web wasm (pkg/'), 274],
    ['promptloom/composer', gz('web wasm with the composer'), 450],
    ['WASI component', gz('WASI component (target'), null],
    ['WASI component, lowering only', gz('lowering only (promptloom-lowering'), null],
  ];
  writeChart('sizes', 'Each entry\'s wasm module (KB, gzip -9), beside the size issue\'s target', entries.map(([label, kb, target]) => ({
    label,
    bars: [
      { name: 'promptloom', value: kb, text: `${kb.toFixed(1)} KB` },
      ...(target ? [{ name: 'target', value: target, text: `target ${target} KB` }] : []),
    ],
  })));
  const rows = entries.map(([label, kb, target]) => `| ${label} | ${kb.toFixed(1)} KB | ${target ? `${target} KB` : '—'} |`).join('\n');
  return { table, entries: `| entry | wasm (gzip) | target |\n|---|---:|---:|\n${rows}` };
}

function machine() {
  const sh = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '?';
    }
  };
  const c = cpus();
  return {
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    dirty: sh('git', ['status', '--porcelain', '--untracked-files=no']) !== '',
    cpu: `${c.length} × ${c[0]?.model ?? '?'}`,
    mem: `${Math.round(totalmem() / 2 ** 30)} GB`,
    node: process.version,
    chromium: sh('chromium', ['--version']),
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  };
}

const m = machine();
const size = sizes();
const sections = [];
for (const [name, title, what, args] of BENCHES) {
  if (ONLY && !ONLY.split(',').includes(name)) continue;
  const outputs = [];
  for (let i = 0; i < RUNS; i++) {
    const kept = join(KEPT, `${name}.${i}.txt`);
    if (REUSE) {
      outputs.push(readFileSync(kept, 'utf8'));
      continue;
    }
    process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${name}: run ${i + 1} of ${RUNS}\n`);
    const out = runOnce(args);
    mkdirSync(KEPT, { recursive: true });
    writeFileSync(kept, out);
    outputs.push(out);
  }
  const chart = readFileSync(join(bench, `${name}.mjs`), 'utf8').match(/writeChart\('([\w-]+)'/g)?.map((s) => s.slice(12, -1)) ?? [];
  sections.push(`## ${title}\n\n${what} \`node bench/${args.at(-1)}\`.\n\n${combine(outputs)}\n${chart.map((c) => `\n![${title}](bench/charts/${c}.svg)\n`).join('')}`);
}

const page = `# Size and speed

Every table and chart on this page comes from one run of \`./scripts/bench.sh\` (\`node
bench/report.mjs --runs ${RUNS}\`), side by side with the named peers in the same process.
Each benchmark ran ${RUNS} time${RUNS > 1 ? 's' : ''} as a separate process; a figure that
differed between runs is their median with the min–max range in small type. The charts
are the last run's. These machines are noisy: read the ratios and their spread.

| | |
|---|---|
| date | ${m.date} |
| commit | \`${m.commit}\`${m.dirty ? ' (with uncommitted changes)' : ''} |
| machine | ${m.cpu}, ${m.mem} |
| Node | ${m.node} |
| Chromium | ${m.chromium} |

## Sizes

Each entry's wasm module, gzip -9, beside the targets of the size issue (the JS glue is in
the table below it):

${size.entries}

![Sizes](bench/charts/sizes.svg)

Every artifact (raw, gzip -9, brotli 11):

${size.table}

${sections.join('\n')}
## History

How each figure got where it is — the optimisation diary, issue by issue — is in
[bench/HISTORY.md](bench/HISTORY.md).
`;
writeFileSync(join(root, 'BENCHMARKS.md'), page);
console.log(`BENCHMARKS.md: ${sections.length} benchmarks, ${RUNS} run${RUNS > 1 ? 's' : ''} each`);
