// Measurement: JS values crossing into and out of wasm as JSON text (what every promptloom
// face does: JSON.stringify → serde_json in, serde_json → JSON.parse out) against
// serde-wasm-bindgen (the JS object read field by field into serde_json::Value, and back
// as plain objects). Built with the `swb-bench` feature into target/swb-bench (never in
// the package). Rounds alternate between the two paths; medians; ratios, not times.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const root = new URL('..', import.meta.url).pathname;
const out = `${root}target/swb-bench`;
if (!existsSync(`${out}/pkg/promptloom.js`) || process.env.REBUILD) {
  const env = { ...process.env, CARGO_TARGET_DIR: out };
  execFileSync('cargo', ['build', '--release', '--lib', '--target', 'wasm32-unknown-unknown', '--features', 'swb-bench'], { cwd: root, env, stdio: 'inherit' });
  execFileSync('wasm-bindgen', ['--target', 'nodejs', '--out-dir', `${out}/pkg`, `${out}/wasm32-unknown-unknown/release/promptloom.wasm`], { cwd: root, stdio: 'inherit' });
  writeFileSync(`${out}/pkg/package.json`, '{ "type": "commonjs" }\n');
}
const w = createRequire(import.meta.url)(`${out}/pkg/promptloom.js`);

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const ROUND_MS = Number(process.env.ROUND_MS ?? 120);

const text = (t) => ({ type: 'text', text: t });
const source = Array.from({ length: 1500 }, (_, i) => `  const v${i} = compute(${i}); // line ${i}`).join('\n');
const payloads = {
  'one message (text + selection + editor context)': {
    role: 'user',
    parts: [text('Why does this fail?'), { type: 'file-ref', ref: { kind: 'path', path: 'src/a.ts', range: { start: 10, end: 25 } } }, { type: 'editor-context', kind: 'selection', payload: { node: 'rect-1', x: 10, y: 20 } }],
    metadata: { schema_version: 2 },
  },
  'a 20-turn conversation with tool calls': Array.from({ length: 20 }, (_, i) =>
    i % 3 === 1
      ? { role: 'assistant', parts: [text(`step ${i}`), { type: 'tool-call', id: `c${i}`, name: 'search', input: { q: `query ${i}`, k: 5 } }] }
      : i % 3 === 2
        ? { role: 'tool', parts: [{ type: 'tool-result', call_id: `c${i - 1}`, output: `result ${i} `.repeat(20) }] }
        : { role: 'user', parts: [text(`question ${i} `.repeat(10))] },
  ),
  'a message holding a 64 KB file text': { role: 'user', parts: [text('Review this.'), { type: 'text', text: source.slice(0, 65536) }] },
  'a skill package (10 artifacts)': {
    name: 'pdf', description: 'Work with PDF files', version: '1.0.0', tags: ['pdf', 'docs'],
    metadata: { parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    artifacts: Array.from({ length: 10 }, (_, i) => ({ kind: i === 0 ? 'prompt_template' : 'approach', name: `a${i}`, content: `Step ${i}: {{ user_request }} `.repeat(30) })),
  },
};

function rate(f) {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ROUND_MS) {
    for (let i = 0; i < 20; i++) f();
    n += 20;
    t = performance.now();
  }
  return (t - t0) / n;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;

console.log('| document | direction | JSON text | serde-wasm-bindgen | swb / text |');
console.log('|---|---|---:|---:|---:|');
for (const [name, doc] of Object.entries(payloads)) {
  // Both paths read the same document (checked), then are timed in alternating rounds.
  const nodes = w.swbTextIn(JSON.stringify(doc));
  if (w.swbValueIn(doc) !== nodes || nodes < 5) throw new Error(`${name}: the two paths read different documents`);
  w.swbHold(JSON.stringify(doc));
  const back = JSON.stringify(w.swbValueOut());
  if (back !== JSON.stringify(JSON.parse(w.swbTextOut()))) throw new Error(`${name}: the two paths wrote different documents`);
  const paths = {
    in: [() => w.swbTextIn(JSON.stringify(doc)), () => w.swbValueIn(doc)],
    out: [() => JSON.parse(w.swbTextOut()), () => w.swbValueOut()],
  };
  for (const [dir, [viaText, viaValue]] of Object.entries(paths)) {
    const a = [];
    const b = [];
    for (let r = 0; r < ROUNDS; r++) {
      a.push(rate(viaText));
      b.push(rate(viaValue));
    }
    const [ta, tb] = [median(a), median(b)];
    console.log(`| ${name} | ${dir} | ${us(ta)} | ${us(tb)} | ${(tb / ta).toFixed(2)}× |`);
  }
}
