// What the tests that build apps share: a Worker bundled by wrangler as a user's would be,
// and a fresh app with the packed npm package installed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cases.mjs';

/**
 * Writes `code` as `dir/worker.mjs` with `toml` (its wrangler.toml) and bundles it with
 * `wrangler deploy --dry-run`; returns the bundle's path.
 */
export function bundledWorker(dir, code, toml) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'worker.mjs'), code);
  writeFileSync(join(dir, 'wrangler.toml'), toml);
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', join(dir, 'dist')], {
    cwd: dir,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  });
  return join(dir, 'dist/worker.js');
}

/**
 * `npm pack` of the package into `base/pack`, and a fresh app in `base/app` (`name`) with
 * it installed; returns the app's folder (with an empty `src/`).
 */
export function packedApp(base, name) {
  const packDir = join(base, 'pack');
  const app = join(base, 'app');
  mkdirSync(packDir, { recursive: true });
  mkdirSync(join(app, 'src'), { recursive: true });
  execFileSync('npm', ['pack', '--pack-destination', packDir], { cwd: join(root, 'pkg'), stdio: 'pipe' });
  const tgz = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module', dependencies: { promptloom: `file:../pack/${tgz}` } }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: app, stdio: 'pipe' });
  return app;
}
