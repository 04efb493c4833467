// Benchmark: cold start in Node — a fresh process imports an entry and makes its first
// conversion of one user message to an Anthropic request body, beside the same with the
// Vercel AI SDK (`ai` + `@ai-sdk/anthropic`: the provider made, `getArgs` of the message,
// `JSON.stringify`). Each sample is a new `node` process; the child reports
// `performance.now()` (milliseconds since its process started) once the body is built, and
// the parent times the whole process. A bare `node` that exits at once is the floor.
// Contenders alternate within each round; medians over ROUNDS rounds are reported (the
// machine is noisy: compare the ratios).
//
// Then Deno: the same scripts run by `deno run` (see below).
//
// Then workerd: each contender is a Worker (`bench/cold-workers/`) bundled by wrangler as a
// user's would be; a sample starts a fresh workerd through miniflare, waits until it is
// ready and sends the first request (the entry's wasm is compiled and instantiated in
// there). A Worker that only replies is the floor.
//
// Then Chromium: each contender is a page built by Vite (a user's bundler); a sample is a
// fresh browser context (empty caches) loading it, and the page reports `performance.now()`
// (milliseconds since navigation start) once the first body is built. A page that only
// reports is the floor.
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { writeChart } from './chart.mjs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const ROUNDS = Number(process.env.ROUNDS ?? 15);
const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'node_modules/.cold-start');
mkdirSync(out, { recursive: true });

const MESSAGE = { role: 'user', parts: [{ type: 'text', text: 'Summarise the open file in two sentences.' }] };
const scripts = {
  'bare node': `console.log(performance.now());`,
  'promptloom': `import { lower } from 'promptloom';
const body = lower(${JSON.stringify(MESSAGE)}, { provider: 'anthropic' }).body;
if (!body.includes('Summarise')) throw new Error('no body');
console.log(performance.now());`,
  'promptloom/lower': `import { lower } from 'promptloom/lower';
const body = lower(${JSON.stringify(MESSAGE)}, { provider: 'anthropic' }).body;
if (!body.includes('Summarise')) throw new Error('no body');
console.log(performance.now());`,
  'promptloom/composer': `import { lower } from 'promptloom/composer';
const body = lower(${JSON.stringify(MESSAGE)}, { provider: 'anthropic' }).body;
if (!body.includes('Summarise')) throw new Error('no body');
console.log(performance.now());`,
  'AI SDK (ai + @ai-sdk/anthropic)': `import 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
const model = createAnthropic({ apiKey: 'k' })('claude-x');
const prompt = [{ role: 'user', content: [{ type: 'text', text: ${JSON.stringify(MESSAGE.parts[0].text)} }] }];
const { args } = await model.getArgs({ prompt, providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });
const body = JSON.stringify(args);
if (!body.includes('Summarise')) throw new Error('no body');
console.log(performance.now());`,
};

const files = {};
for (const [name, src] of Object.entries(scripts)) {
  const f = join(out, `${name.replace(/[^a-z0-9]+/gi, '-')}.mjs`);
  writeFileSync(f, src);
  files[name] = f;
}

const samples = Object.fromEntries(Object.keys(scripts).map((n) => [n, { inside: [], whole: [] }]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, f] of Object.entries(files)) {
    const t0 = performance.now();
    const text = execFileSync(process.execPath, [f], { encoding: 'utf8', cwd: here, stdio: ['ignore', 'pipe', 'ignore'] });
    samples[name].whole.push(performance.now() - t0);
    samples[name].inside.push(Number(text.trim()));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const floor = median(samples['bare node'].whole);
const sdk = median(samples['AI SDK (ai + @ai-sdk/anthropic)'].whole) - floor;
console.log(`Cold start in Node ${process.version}, ${ROUNDS} fresh processes each (medians)\n`);
console.log('| contender | to first body, in the process | whole process | above bare node | vs the AI SDK |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, s] of Object.entries(samples)) {
  const whole = median(s.whole);
  const above = whole - floor;
  const vs = name === 'bare node' ? '—' : `${(above / sdk).toFixed(2)}×`;
  console.log(`| ${name} | ${median(s.inside).toFixed(1)} ms | ${whole.toFixed(1)} ms | ${name === 'bare node' ? '—' : `${above.toFixed(1)} ms`} | ${vs} |`);
}

// ---- Deno -------------------------------------------------------------------------------
// The same scripts run by Deno (the `deno` dev package) from bench/, whose package.json and
// node_modules it uses as a Deno app would; V8's code cache is off (`--no-code-cache`), so
// every sample is a first run. A Deno that only prints is the floor.
const deno = join(here, '..', 'node_modules/.bin/deno');
const denoOut = join(here, '.cold-deno');
mkdirSync(denoOut, { recursive: true });
const denoFiles = {};
for (const [name, src] of Object.entries(scripts)) {
  const label = name === 'bare node' ? 'bare deno' : name;
  const f = join(denoOut, `${label.replace(/[^a-z0-9]+/gi, '-')}.mjs`);
  writeFileSync(f, src);
  denoFiles[label] = f;
}
const DROUNDS = Number(process.env.DENO_ROUNDS ?? ROUNDS);
const denoSamples = Object.fromEntries(Object.keys(denoFiles).map((n) => [n, []]));
for (let r = 0; r < DROUNDS; r++) {
  for (const [name, f] of Object.entries(denoFiles)) {
    const t0 = performance.now();
    const text = execFileSync(deno, ['run', '--allow-read', '--allow-env', '--allow-sys', '--no-check', '--no-code-cache', f], {
      encoding: 'utf8', cwd: here, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' }, stdio: ['ignore', 'pipe', 'ignore'],
    });
    denoSamples[name].push(performance.now() - t0);
    if (!text.trim()) throw new Error(`${name}: no output in Deno`);
  }
}
const denoVersion = execFileSync(deno, ['--version'], { encoding: 'utf8' }).split('\n')[0];
const denoFloor = median(denoSamples['bare deno']);
const denoSdk = median(denoSamples['AI SDK (ai + @ai-sdk/anthropic)']) - denoFloor;
console.log(`\nCold start in ${denoVersion}, ${DROUNDS} fresh processes each, no code cache (medians)\n`);
console.log('| contender | whole process | above bare deno | vs the AI SDK |');
console.log('|---|---:|---:|---:|');
for (const [name, xs] of Object.entries(denoSamples)) {
  const above = median(xs) - denoFloor;
  console.log(`| ${name} | ${median(xs).toFixed(1)} ms | ${name === 'bare deno' ? '—' : `${above.toFixed(1)} ms`} | ${name === 'bare deno' ? '—' : `${(above / denoSdk).toFixed(2)}×`} |`);
}

// ---- workerd ----------------------------------------------------------------------------
const { Miniflare } = await import('miniflare');
const WORKERS = { 'bare Worker': 'bare', promptloom: 'promptloom', 'promptloom/lower': 'promptloom-lower', 'promptloom/composer': 'promptloom-composer', 'AI SDK (ai + @ai-sdk/anthropic)': 'ai-sdk' };
const wrangler = join(here, '..', 'node_modules/.bin/wrangler');
const bundles = {};
for (const [name, w] of Object.entries(WORKERS)) {
  const dir = join(out, 'workers', w);
  execFileSync(wrangler, ['deploy', '--dry-run', '--config', `wrangler-${w}.toml`, '--outdir', dir], {
    cwd: join(here, 'cold-workers'),
    env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false' },
    stdio: 'pipe',
  });
  bundles[name] = join(dir, `${w}.js`);
}
const WROUNDS = Number(process.env.WORKERD_ROUNDS ?? 7);
const edge = Object.fromEntries(Object.keys(WORKERS).map((n) => [n, []]));
for (let r = 0; r < WROUNDS; r++) {
  for (const [name, scriptPath] of Object.entries(bundles)) {
    const t0 = performance.now();
    const mf = new Miniflare({ modules: true, scriptPath, modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }], compatibilityDate: '2025-01-01' });
    await mf.ready;
    const res = await mf.dispatchFetch('http://bench.test/');
    const body = await res.text();
    edge[name].push(performance.now() - t0);
    await mf.dispose();
    if (name !== 'bare Worker' && !body.includes('Summarise')) throw new Error(`${name}: no body`);
  }
}
const edgeFloor = median(edge['bare Worker']);
const edgeSdk = median(edge['AI SDK (ai + @ai-sdk/anthropic)']) - edgeFloor;
console.log(`\nCold start in workerd (miniflare: a fresh runtime, ready, first request), ${WROUNDS} samples each (medians)\n`);
console.log('| contender | to the first reply | above a bare Worker | vs the AI SDK |');
console.log('|---|---:|---:|---:|');
for (const [name, xs] of Object.entries(edge)) {
  const above = median(xs) - edgeFloor;
  console.log(`| ${name} | ${median(xs).toFixed(1)} ms | ${name === 'bare Worker' ? '—' : `${above.toFixed(1)} ms`} | ${name === 'bare Worker' ? '—' : `${(above / edgeSdk).toFixed(2)}×`} |`);
}

// ---- Chromium ---------------------------------------------------------------------------
const { build, preview } = await import('vite');
const { chromium } = await import('playwright-core');
const first = `const msg = { role: 'user', parts: [{ type: 'text', text: 'Summarise the open file in two sentences.' }] };`;
const report = `document.title = String(performance.now()); window.done = true;`;
const PAGES = {
  'blank page': `document.body.textContent = 'Summarise'; ${report}`,
  'promptloom/lower': `import { lower } from 'promptloom/lower';\n${first}\ndocument.body.textContent = lower(msg, { provider: 'anthropic' }).body;\n${report}`,
  promptloom: `import { lower } from 'promptloom';\n${first}\ndocument.body.textContent = lower(msg, { provider: 'anthropic' }).body;\n${report}`,
  'promptloom/composer': `import { lower } from 'promptloom/composer';\n${first}\ndocument.body.textContent = lower(msg, { provider: 'anthropic' }).body;\n${report}`,
  'AI SDK (ai + @ai-sdk/anthropic)': `import 'ai';\nimport { createAnthropic } from '@ai-sdk/anthropic';\nconst model = createAnthropic({ apiKey: 'k' })('claude-x');\nconst prompt = [{ role: 'user', content: [{ type: 'text', text: 'Summarise the open file in two sentences.' }] }];\nconst { args } = await model.getArgs({ prompt, providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });\ndocument.body.textContent = JSON.stringify(args);\n${report}`,
};
// The part of each entry's start that is its module's bytes: a page that only fetches and
// compiles the entry's .wasm (streaming, as the entry does), with no glue, instance or call.
const wasmOf = { 'promptloom/lower': 'promptloom_lower_bg.wasm', promptloom: 'promptloom_bg.wasm', 'promptloom/composer': 'promptloom_composer_bg.wasm' };
for (const [entry, file] of Object.entries(wasmOf)) {
  // From bench/node_modules/.cold-start/pages/<page>/src/ to pkg/dist/wasm/.
  PAGES[`fetch + compile only: ${entry}`] = `const m = await WebAssembly.compileStreaming(fetch(new URL('../../../../../../pkg/dist/wasm/${file}', import.meta.url)));\ndocument.body.textContent = 'Summarise ' + WebAssembly.Module.exports(m).length;\n${report}`;
}
const servers = {};
for (const [name, src] of Object.entries(PAGES)) {
  const app = join(out, 'pages', name.replace(/[^a-z0-9]+/gi, '-'));
  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'index.html'), '<!doctype html><html><body><script type="module" src="/src/main.js"></script></body></html>');
  writeFileSync(join(app, 'src/main.js'), src);
  await build({ root: app, logLevel: 'silent', build: { target: 'es2022' } });
  servers[name] = await preview({ root: app, preview: { port: 0, host: '127.0.0.1' }, logLevel: 'silent' });
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const PROUNDS = Number(process.env.PAGE_ROUNDS ?? 9);
const pages = Object.fromEntries(Object.keys(PAGES).map((n) => [n, []]));
try {
  for (let r = 0; r < PROUNDS; r++) {
    for (const [name, server] of Object.entries(servers)) {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(server.resolvedUrls.local[0]);
      await page.waitForFunction(() => window.done === true, null, { timeout: 20000 });
      if (!(await page.textContent('body')).includes('Summarise')) throw new Error(`${name}: no body`);
      pages[name].push(Number(await page.title()));
      await ctx.close();
    }
  }
} finally {
  await browser.close();
  for (const s of Object.values(servers)) await s.close();
}
const pageFloor = median(pages['blank page']);
const pageSdk = median(pages['AI SDK (ai + @ai-sdk/anthropic)']) - pageFloor;
console.log(`\nCold start in Chromium (a Vite-built page in a fresh context: navigation start to the first body), ${PROUNDS} samples each (medians)\n`);
console.log('| contender | to the first body | above a blank page | vs the AI SDK |');
console.log('|---|---:|---:|---:|');
for (const [name, xs] of Object.entries(pages)) {
  if (name.startsWith('fetch + compile only')) continue;
  const above = median(xs) - pageFloor;
  console.log(`| ${name} | ${median(xs).toFixed(1)} ms | ${name === 'blank page' ? '—' : `${above.toFixed(1)} ms`} | ${name === 'blank page' ? '—' : `${(above / pageSdk).toFixed(2)}×`} |`);
}
console.log(`\nOf that, each entry's module fetched and compiled alone (a page with no glue, instance or call)\n`);
console.log('| entry | fetch + compile above a blank page | its whole cold start above a blank page | the rest (glue, instance, first call) |');
console.log('|---|---:|---:|---:|');
for (const entry of Object.keys(wasmOf)) {
  const fc = median(pages[`fetch + compile only: ${entry}`]) - pageFloor;
  const whole = median(pages[entry]) - pageFloor;
  console.log(`| ${entry} | ${fc.toFixed(1)} ms | ${whole.toFixed(1)} ms | ${(whole - fc).toFixed(1)} ms |`);
}
// The chart: per host, each contender's cost above the host's floor.
const above = (xs, floor) => Math.max(0, median(xs) - floor);
const hostPanel = (label, entries, floorName, floor) => ({
  label,
  bars: entries.filter(([name]) => name !== floorName).map(([name, xs]) => ({ name, value: above(xs, floor), text: `${above(xs, floor).toFixed(1)} ms` })),
});
writeChart('cold-start', 'Cold start to the first body, above each host\'s floor (ms)', [
  hostPanel('Node (fresh process), above bare node', Object.entries(samples).map(([n, s]) => [n, s.whole]), 'bare node', floor),
  hostPanel('Deno (fresh process, no code cache), above bare deno', Object.entries(denoSamples), 'bare deno', denoFloor),
  hostPanel('workerd (fresh runtime), above a bare Worker', Object.entries(edge), 'bare Worker', edgeFloor),
  hostPanel('Chromium (Vite page, fresh context), above a blank page', Object.entries(pages).filter(([n]) => !n.startsWith('fetch + compile only')), 'blank page', pageFloor),
]);
