// The package as a new user installs it: `npm pack`, installed into a fresh app (no
// workspace link, no repository paths), then used by name from Node, from Bun, from a
// TypeScript file under `tsc --strict` with Node's own module resolution, and from a Worker
// bundled by wrangler and run in workerd. (The Vite app in Chromium is tests/js/vite.test.mjs;
// the Deno app is the `deno` tier.) This catches what only the packed files show: the
// `files` list, the exports map and its conditions, the types' paths, the licenses.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { root } from './cases.mjs';

const base = join(root, 'tests/js/.out/packed');
const app = join(base, 'app');
const bin = (name) => join(root, 'node_modules/.bin', name);

// One script, run as it is by Node and by Bun: every entry by name, a lowering, the
// compositor, a streamed reply read from memory, the composer loaded after the base entry.
const MAIN = `import { lower, PromptloomError, CommandCatalog, parseInput, submit, openMessageStore, Conversation, createAdapter } from 'promptloom';
import { lower as lowerOnly } from 'promptloom/lower';
import models from 'promptloom/models.json' with { type: 'json' };

const out = [];
out.push(lower({ parts: [{ type: 'text', text: 'hi' }] }, { provider: 'anthropic', model: 'claude-sonnet-4-5' }).body);
out.push(lowerOnly({ parts: [{ type: 'text', text: 'hi' }] }, { provider: 'gemini' }).body);
try {
  lower({ parts: [{ type: 'command', id: '/x' }] }, { provider: 'openai-chat' });
} catch (e) {
  out.push(e instanceof PromptloomError ? e.code : 'not a PromptloomError');
}
const catalog = new CommandCatalog();
const store = await openMessageStore({ backend: 'memory' });
const done = await submit({ parts: parseInput('/search cats', { catalog }) }, { store, catalog, now: () => 1700000000000 });
out.push(done.message.parts[0].resolved.flags.intent, (await store.history()).length);
const sse = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hel"}}]}\\n\\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\\n\\ndata: [DONE]\\n\\n';
const adapter = createAdapter({ provider: 'openai-chat', fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }) });
const chat = new Conversation({ options: { provider: 'openai-chat', model: 'gpt-5', stream: true } });
chat.append({ role: 'user', parts: [{ type: 'text', text: 'hi' }] });
out.push(await adapter.send(chat.lower().body).text());
const { compose } = await import('promptloom/composer');
const c = compose({ skill_package: { name: 'Hello', description: 'Greets.', metadata: { framing: { artifact: 'F' }, parameters: { type: 'object', properties: { who: { type: 'string' } } } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: 'Hello {{ who }}.' }] }, thread_id: 't', parameters: { who: 'you' } });
out.push(c.prompt.text.split('\\n')[0], typeof models);
console.log(JSON.stringify(out));
`;

const EXPECTED = [
  '{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}',
  '{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}',
  'UnresolvedCommand',
  'search',
  1,
  'Hello',
  'Hello you.',
  'object',
];

before(() => {
  rmSync(base, { recursive: true, force: true });
  mkdirSync(join(base, 'pack'), { recursive: true });
  mkdirSync(app, { recursive: true });
  execFileSync('npm', ['pack', '--pack-destination', join(base, 'pack')], { cwd: join(root, 'pkg'), stdio: 'pipe' });
  const tgz = readdirSync(join(base, 'pack')).find((f) => f.endsWith('.tgz'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module', dependencies: { promptloom: `file:../pack/${tgz}` } }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: app, stdio: 'pipe' });
  writeFileSync(join(app, 'main.mjs'), MAIN);
});

test('the packed files: README, both licenses, the types, the three wasm modules; nothing from the repository', () => {
  const pkg = join(app, 'node_modules/promptloom');
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'index.d.ts', 'lower.d.ts', 'composer.d.ts', 'src/documents.d.ts', 'dist/wasm/promptloom_bg.wasm', 'dist/wasm/promptloom_lower_bg.wasm', 'dist/wasm/promptloom_composer_bg.wasm']) {
    assert.ok(existsSync(join(pkg, f)), f);
  }
  for (const f of ['Cargo.toml', 'tests', 'docs', 'dist/wasm/promptloom_bg.wasm.d.ts']) assert.ok(!existsSync(join(pkg, f)), `${f} is not shipped`);
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  assert.equal(manifest.license, 'MIT OR Apache-2.0');
  assert.ok(manifest.repository && manifest.homepage && manifest.keywords.length > 0);
});

test('Node: every entry by name from the installed package', () => {
  const text = execFileSync('node', ['main.mjs'], { cwd: app, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(text), EXPECTED);
});

test('Bun: the same script, the same answers', () => {
  const text = execFileSync(bin('bun'), ['main.mjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0', DO_NOT_TRACK: '1' } });
  assert.deepEqual(JSON.parse(text), EXPECTED);
});

test('TypeScript: a strict app with Node\'s module resolution sees the types of every entry', () => {
  writeFileSync(join(app, 'main.ts'), `import { lower, type Lowered, type PromptloomError } from 'promptloom';
import { lower as lowerOnly } from 'promptloom/lower';
import { compose, type Composition } from 'promptloom/composer';

const a: Lowered = lower({ role: 'user', parts: [{ type: 'text', text: 'hi' }] }, { provider: 'anthropic' });
const b: string = lowerOnly({ role: 'user', parts: [] }, { provider: 'gemini' }).body;
const c: Composition = compose({ skill_package: { name: 'n', description: 'd', artifacts: [] }, thread_id: 't' });
const code = (e: PromptloomError): string => e.code;
// @ts-expect-error: not a provider
lower({ role: 'user', parts: [] }, { provider: 'openai' });
export { a, b, c, code };
`);
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: false, types: [] }, files: ['main.ts'] }));
  execFileSync(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: app, stdio: 'pipe' });
});

test('a Worker bundled by wrangler from the installed package, run in workerd', async () => {
  writeFileSync(join(app, 'worker.mjs'), `import { lower } from 'promptloom';
export default { async fetch(request) { return new Response(lower(await request.json(), { provider: 'openai-responses' }).body); } };
`);
  writeFileSync(join(app, 'wrangler.toml'), 'name = "fresh-worker"\nmain = "worker.mjs"\ncompatibility_date = "2025-01-01"\n');
  execFileSync(bin('wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], { cwd: app, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' }, stdio: 'pipe' });
  const mf = new Miniflare({ modules: true, scriptPath: join(app, 'dist/worker.js'), modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }], compatibilityDate: '2025-01-01' });
  try {
    const res = await mf.dispatchFetch('http://x/', { method: 'POST', body: JSON.stringify({ parts: [{ type: 'text', text: 'hi' }] }) });
    assert.equal(await res.text(), '{"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}');
  } finally {
    await mf.dispose();
  }
});
