// Headless Chromium (playwright-core with the system's /usr/bin/chromium) on the demo page,
// served from the repository root: what the browser tiers share.
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

/**
 * Serves the repository, opens `path` (the demo, `/www/`, by default) and waits for
 * `window[ready]`. Resolves to `{ server, browser, page, errors, close }`; `errors` collects
 * the page's uncaught errors.
 */
export async function openDemo({ ready = 'promptloomReady', viewport, path = '/www/' } = {}) {
  const server = await serve(0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage(viewport ? { viewport } : {});
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${server.url}${path}`);
  await page.waitForFunction((name) => window[name] === true, ready);
  const close = async () => {
    await browser.close();
    await server.close();
  };
  return { server, browser, page, errors, close };
}

/**
 * A page that loads nothing itself (`tests/js/blank.html`): the suites import the entry they
 * test (`/pkg/src/web.js` or `/pkg/src/composer-web.js`), so each runs on that entry's module.
 */
export function openBlank(options = {}) {
  return openDemo({ ...options, path: '/tests/js/blank.html', ready: 'blankReady' });
}
