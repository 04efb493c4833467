// A host key-value store for the Node tests: what an edge Worker passes as its KV (async
// get/put/delete/list over a Map), with an optional failure after N puts and the Cloudflare
// list shape.

/** An edge-KV-like host store (async get/put/delete/list) over a Map; `failAfter` puts, it throws. */
export function kv({ failAfter = Infinity, cloudflareList = false } = {}) {
  const m = new Map();
  let puts = 0;
  return {
    map: m,
    async get(k) {
      return m.has(k) ? m.get(k) : null;
    },
    async put(k, v) {
      if (++puts > failAfter) throw new Error('KV quota exceeded');
      m.set(k, v);
    },
    async delete(k) {
      m.delete(k);
    },
    async list(prefix) {
      const keys = [...m.keys()].filter((k) => k.startsWith(prefix));
      return cloudflareList ? { keys: keys.map((name) => ({ name })) } : keys;
    },
    heal() {
      failAfter = Infinity;
    },
    /** The next `n` puts land, then every put throws (until heal). */
    failIn(n) {
      failAfter = puts + n;
    },
  };
}

