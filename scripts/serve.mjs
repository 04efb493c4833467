// A small static file server for the demo (www/) and the browser tests: serves the
// repository root so the page can import the npm package's browser entry (pkg/src/web.js).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mockHandler } from './mock-provider.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
};

/**
 * Starts the server; resolves to { url, close }. Port 0 picks a free port. `routes` maps a
 * path to a handler of its own (`(req, res) => …`: a test's server side).
 */
export function serve(port = 0, host = '127.0.0.1', routes = {}) {
  // The mock provider (scripts/mock-provider.mjs) under /mock: the demo's chat talks to it
  // when no API key is given.
  const mock = mockHandler();
  const server = createServer(async (req, res) => {
    if (req.url.startsWith('/mock/')) return mock(req, res);
    const route = routes[req.url.split('?')[0]];
    if (route) return route(req, res);
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(root, path));
      if (!file.startsWith(root)) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const { port: p } = server.address();
      resolve({ url: `http://${host}:${p}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.PORT ?? 8080);
  const { url } = await serve(port);
  console.log(`promptloom demo: ${url}/www/`);
}
