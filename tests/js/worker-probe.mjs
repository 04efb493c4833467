// A module Web Worker a Chromium test starts (tests/js/lower-browser.test.mjs): the package
// loads there as on a page, and its adapter knows it runs in a browser (Anthropic's CORS
// header), though a worker has no `window`.
// The handler first, the package after it: a message must not arrive before a handler.
const loading = import('/pkg/src/web.js');

self.onmessage = async () => {
  const pl = await loading;
  let headers = null;
  const adapter = pl.createAdapter({
    provider: 'anthropic',
    apiKey: 'k',
    fetch: async (_url, init) => {
      headers = init.headers;
      return new Response('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    },
  });
  await adapter.send(pl.lower({ parts: [{ type: 'text', text: 'from a worker' }] }, { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 16 })).turn.catch(() => {});
  postMessage({ headers, window: typeof window, body: pl.lower({ parts: [{ type: 'text', text: 'hi' }] }, { provider: 'gemini' }).body });
};
