// Writes pkg/README.md, the npm package's page, from README.md: the same page, with links to
// the repository's files made absolute (the guides are not in the package; the license
// files are). `node scripts/pkg-readme.mjs`; tests/js/readme.test.mjs fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const repo = JSON.parse(readFileSync(`${root}pkg/package.json`, 'utf8')).homepage.replace(/#readme$/, '');
const inPackage = new Set(['LICENSE-MIT', 'LICENSE-APACHE']);

/** The npm page for the README's text. */
export function pkgReadme(text) {
  return text.replace(/\]\(((?!https?:|#)[^)\s]+)\)/g, (all, path) => {
    if (inPackage.has(path)) return all;
    const kind = path.endsWith('/') ? 'tree' : 'blob';
    return `](${repo}/${kind}/main/${path.replace(/\/$/, '')})`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(`${root}pkg/README.md`, pkgReadme(readFileSync(`${root}README.md`, 'utf8')));
}
