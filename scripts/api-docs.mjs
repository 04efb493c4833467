#!/usr/bin/env node
// The JS API reference, generated from the package's types (pkg/*.d.ts) into docs/api/: one
// Markdown page per entry. TypeDoc reads declarations through the TypeScript 5 JS API (the
// repository's own TypeScript 7 is native, without one), so its pinned tools are installed
// apart, under target/apidoc, once.
//
//   node scripts/api-docs.mjs          writes docs/api/
//   node scripts/api-docs.mjs --check  fails when docs/api/ is not what the types give
//
// The Rust API reference is rustdoc's: `cargo doc --open`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const TOOLS = { typedoc: '0.28.20', 'typedoc-plugin-markdown': '4.14.1', typescript: '5.9.3' };
const ENTRIES = ['index', 'lower', 'composer', 'remote'];
const HEADER = '<!-- Generated from pkg/*.d.ts by scripts/api-docs.mjs: edit the types, then run it. -->\n\n';

/** The pinned tools, installed once under target/apidoc (again when a pin changes). */
function tools() {
  const dir = join(root, 'target/apidoc');
  const stamp = join(dir, 'pins.json');
  const want = JSON.stringify(TOOLS);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
    const specs = Object.entries(TOOLS).map(([n, v]) => `${n}@${v}`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', dir, ...specs], { stdio: ['ignore', 'ignore', 'inherit'] });
    writeFileSync(stamp, want);
  }
  return dir;
}

/** The pages the types give: `{ file: text }`. */
export function generate() {
  const dir = tools();
  const work = mkdtempSync(join(tmpdir(), 'apidoc-'));
  try {
    const files = ENTRIES.map((e) => join(root, `pkg/${e}.d.ts`));
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['esnext', 'dom'], skipLibCheck: true, strict: true, types: [] },
      files,
    }));
    const out = join(work, 'out');
    execFileSync(join(dir, 'node_modules/.bin/typedoc'), [
      '--plugin', 'typedoc-plugin-markdown', '--tsconfig', join(work, 'tsconfig.json'),
      '--entryPoints', ...files, '--out', out, '--readme', 'none', '--excludeInternal', '--disableSources',
      '--outputFileStrategy', 'modules', '--hidePageHeader', '--hideBreadcrumbs', '--treatWarningsAsErrors',
      '--name', 'promptloom',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pages = {};
    const walk = (d, rel) => {
      for (const f of readdirSync(d, { withFileTypes: true })) {
        if (f.isDirectory()) walk(join(d, f.name), `${rel}${f.name}/`);
        else pages[`${rel}${f.name}`] = HEADER + readFileSync(join(d, f.name), 'utf8');
      }
    };
    walk(out, '');
    return pages;
  } catch (e) {
    throw new Error(`typedoc failed:\n${e.stdout ?? ''}${e.stderr ?? ''}${e.stdout ? '' : e.message}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** What docs/api/ holds now: `{ file: text }`. */
export function committed() {
  const dir = join(root, 'docs/api');
  const pages = {};
  const walk = (d, rel) => {
    if (!existsSync(d)) return;
    for (const f of readdirSync(d, { withFileTypes: true })) {
      if (f.isDirectory()) walk(join(d, f.name), `${rel}${f.name}/`);
      else pages[`${rel}${f.name}`] = readFileSync(join(d, f.name), 'utf8');
    }
  };
  walk(dir, '');
  return pages;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pages = generate();
  if (process.argv.includes('--check')) {
    const now = committed();
    const stale = [...new Set([...Object.keys(pages), ...Object.keys(now)])].filter((f) => pages[f] !== now[f]);
    if (stale.length > 0) {
      console.error(`docs/api/ is stale (${stale.join(', ')}): run node scripts/api-docs.mjs`);
      process.exit(1);
    }
  } else {
    rmSync(join(root, 'docs/api'), { recursive: true, force: true });
    for (const [f, text] of Object.entries(pages)) {
      mkdirSync(join(root, 'docs/api', f, '..'), { recursive: true });
      writeFileSync(join(root, 'docs/api', f), text);
    }
    console.log(`docs/api/: ${Object.keys(pages).sort().join(', ')}`);
  }
}
