// The worker of tests/js/remote-conformance.mjs: promptloom (`pl`, imported by name by each
// host's worker script) served to the page with serveWorker — a chat over a memory store
// (IndexedDB in Chromium) answered by the mock provider (its URL is the page's
// `init.mock`), a tool that waits for approval, and three functions: a lowering, an index
// of many skills (work the page must not wait on), and a plain throw.

/**
 * @param {any} pl the package
 * @param {any} [port] where the page's messages come from (the worker's scope by default)
 */
export function serveTests(pl, port) {
  const { serveWorker, openMessageStore, createAdapter, lower, SkillIndex } = pl;
  let store;
  return serveWorker({
    ...(port ? { port } : {}),
    chat: async ({ mock, session, backend = 'memory', headers, tools = false }) => {
      store ??= await openMessageStore(backend === 'indexeddb' ? { backend, name: 'remote-chat' } : { backend });
      const provider = 'anthropic';
      return {
        store,
        session,
        settings: { provider, model: 'claude-sonnet-4-5', maxOutputTokens: 256, stream: true },
        adapter: createAdapter({ provider, apiKey: 'k', baseURL: mock, headers, retry: { maxRetries: 0 } }),
        tools: tools ? [{ name: 'search', description: 'Searches the docs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } } }, needsApproval: true }] : [],
        handlers: { search: async ({ query }) => ({ hits: [`${query}.md`] }) },
        nonce: (() => {
          let n = 0;
          return () => `b${++n}`;
        })(),
      };
    },
    functions: {
      lower: (message, options) => lower(message, options),
      index: (n) => {
        const skills = Array.from({ length: n }, (_, i) => ({ name: `skill-${i}`, description: `Skill number ${i} reviews ${i % 7 === 0 ? 'pull requests' : 'documents'} and writes notes.` }));
        const index = new SkillIndex(skills);
        return index.match('review the pull request', { k: 3 }).map((r) => r.name);
      },
      fail: () => {
        throw new Error('a plain throw');
      },
    },
  });
}
