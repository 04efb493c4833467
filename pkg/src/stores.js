// Storage backends for the message store. Each one executes the rows the core lays out
// (tables of string keys → JSON text) and reads them back; none of them knows what a
// message is. Interface:
//   get(table, key) → value | null
//   scan(table, prefix) → [[key, value]] in key order
//   read({ gets: [[table, key]], scans: [[table, prefix]] }) → { gets, scans } (one
//     transaction where the backend has them)
//   commitAfterRead(reads, build) — reads rows, calls build(values) synchronously for the
//     ops to write ({ op: put | insert | delete, table, key, value }), and writes them (one
//     transaction where the backend has them). An `insert` whose key exists fails the whole
//     commit with a StoreFailed error whose details say `conflict: true`.

import { PromptloomError, __call, __module, __inbox } from './api.js';
import { FIELD, TABLES, INDEXES, VIRTUAL, DB_VERSION } from './constants.js';

/** The tables of the layout (src/store/mod.rs); the IndexedDB object stores. */
export { TABLES };

/** @import { Unchecked } from './instance.js' */
/** A row: its key and its value (JSON text). @typedef {[string, string]} Row */
/**
 * One write of a commit, as the core lays it out (`index`: the indexed fields of a row of an
 * INDEXES table).
 * @typedef {{ op: 'put' | 'insert' | 'delete', table: string, key: string, value?: string, index?: Record<string, unknown> }} WriteOp
 */
/**
 * A scan: `[table, prefix]`, the rows whose key starts with `prefix`; or one page of it,
 * `[table, prefix, after, limit]`: those whose key comes after `after` (null: from the
 * first), at most `limit`. Either in key order.
 * @typedef {[string, string] | [string, string, string | null, number]} Scan
 */
/** The rows one read asks for: `[table, key]` gets and scans. @typedef {{ gets?: [string, string][], scans?: Scan[] }} ReadQuery */
/** What a read answers: a value (or null) per get, the rows per scan. @typedef {{ gets: (string | null)[], scans: Row[][] }} ReadAnswer */
/**
 * A storage backend (see the interface at the top of this file); `values` and `byIndex`
 * only where the backend reads them faster than a scan (IndexedDB).
 * @typedef {{
 *   kind: string,
 *   get(table: string, key: string): Promise<string | null>,
 *   scan(table: string, prefix: string): Promise<Row[]>,
 *   range(table: string, prefix: string, after: string | null, limit: number): Promise<Row[]>,
 *   read(q: ReadQuery): Promise<ReadAnswer>,
 *   commitAfterRead(reads: [string, string][], build: (values: (string | null)[]) => WriteOp[]): Promise<void>,
 *   values?(table: string, prefix: string): Promise<(string | null)[]>,
 *   byIndex?(table: string, field: string, value: string): Promise<Row[]>,
 *   close(): void,
 *   db?: IDBDatabase,
 * }} Backend
 */
// The IndexedDB schema is the core's (src/store/idb_schema.rs, through constants.js): rows
// of INDEXES tables are stored as `{ v, ...fields }` (the core names the fields on each put
// as `index`); a VIRTUAL table keeps no rows (a lookup reads the unique index of the table
// it names, and writes to it are dropped: the unique index refuses a taken name or id, so
// the batch fails as a conflict, as an insert into it would).
const STORES = TABLES.filter((t) => !VIRTUAL[t]);
/** The object store a table lives in. */
const storeOf = (/** @type {string} */ t) => (VIRTUAL[t] ? VIRTUAL[t][0] : t);

/** A stored IndexedDB value as JSON text. */
const text = (/** @type {Unchecked} */ v) => (v == null ? null : typeof v === 'string' ? v : v.v);

/**
 * @param {string} message
 * @param {Unchecked} [cause] what the backend threw
 */
function storeFailed(message, cause) {
  const e = new PromptloomError('StoreFailed', message, { cause: cause ? String(cause.message ?? cause) : undefined });
  return e;
}

/**
 * A failed IndexedDB request or transaction as a PromptloomError: the DOM error's name is
 * kept (Chromium's QuotaExceededError has an empty message; its name is what says what
 * happened), and a full quota is `QuotaExceeded`.
 * @param {string} what
 * @param {Unchecked} error a DOMException (or what was thrown)
 * @param {string} [tail]
 */
function idbFailure(what, error, tail = '') {
  const name = error && typeof error.name === 'string' ? error.name : '';
  const message = error && error.message ? String(error.message) : '';
  const said = name && message ? `${name}: ${message}` : name || message || 'aborted';
  if (name === 'QuotaExceededError') {
    return new PromptloomError('QuotaExceeded', `${what}: the browser's storage quota for this site is used up (${said})${tail}`, { dom: name, cause: message || undefined });
  }
  return new PromptloomError('StoreFailed', `${what}: ${said}${tail}`, { dom: name || undefined, cause: message || undefined });
}

/**
 * Runs an IndexedDB read; a DOM exception (thrown or in the request) becomes a StoreFailed.
 * @template T
 * @param {() => Promise<T>} f
 * @returns {Promise<T>}
 */
async function idbRead(f) {
  try {
    return await f();
  } catch (e) {
    if (e instanceof PromptloomError) throw e;
    throw idbFailure('the IndexedDB read failed', e);
  }
}

/** @param {string} t */
function checkTable(t) {
  if (!TABLES.includes(t)) throw new PromptloomError('Internal', `unknown table ${t}`, {});
}

/**
 * @param {string | undefined} table
 * @param {string | undefined} key
 */
function conflict(table, key) {
  return new PromptloomError('StoreFailed', `the ${table} row \`${key}\` was written by another writer first; nothing was written`, { conflict: true, table, key });
}

/**
 * `read()` from get and scan, for backends without transactions.
 * @param {Backend} b
 * @param {ReadQuery} q
 * @returns {Promise<ReadAnswer>}
 */
async function readEach(b, { gets = [], scans = [] }) {
  const [g, sc] = await Promise.all([
    Promise.all(gets.map(([t, k]) => b.get(t, k))),
    Promise.all(scans.map((s) => (s.length > 2 ? b.range(s[0], s[1], s[2] ?? null, s[3] ?? Infinity) : b.scan(s[0], s[1])))),
  ]);
  return { gets: g, scans: sc };
}

/**
 * The rows of a key range's page from the range's rows in key order: those after `after`,
 * at most `limit` (for backends that read the whole range).
 * @param {Row[]} rows
 * @param {string | null} after
 * @param {number} limit
 */
function pageOf(rows, after, limit) {
  const from = after === null ? 0 : rows.findIndex(([k]) => k > after);
  return from < 0 ? [] : rows.slice(from, from + limit);
}

/**
 * The IndexedDB key range of `prefix`'s keys (after `after`, when given).
 * @param {string} prefix
 * @param {string | null} after
 */
function pageRange(prefix, after) {
  const open = after !== null && after >= prefix;
  return IDBKeyRange.bound(open ? after : prefix, prefix + '\uffff', open, false);
}

/**
 * Rows in memory (Node, edge workers, tests). A commit is all or nothing.
 * @returns {Backend}
 */
export function memoryBackend() {
  /** @type {Map<string, Map<string, string>>} */
  const tables = new Map(TABLES.map((t) => [t, new Map()]));
  /**
   * The rows of table `t` (an unknown table is an Internal error).
   * @param {string} t
   */
  const rowsOf = (t) => {
    checkTable(t);
    return /** @type {Map<string, string>} */ (tables.get(t));
  };
  return {
    kind: 'memory',
    async get(table, key) {
      return rowsOf(table).get(key) ?? null;
    },
    async scan(table, prefix) {
      /** @type {Row[]} */
      const out = [];
      for (const [k, v] of rowsOf(table)) if (k.startsWith(prefix)) out.push([k, v]);
      return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    },
    async range(table, prefix, after, limit) {
      return pageOf(await this.scan(table, prefix), after, limit);
    },
    read(q) {
      return readEach(this, q);
    },
    async commitAfterRead(reads, build) {
      const values = reads.map(([t, k]) => rowsOf(t).get(k) ?? null);
      const ops = build(values);
      for (const op of ops) {
        // Every table is checked before anything is written.
        const rows = rowsOf(op.table);
        if (op.op === 'insert' && rows.has(op.key)) throw conflict(op.table, op.key);
      }
      for (const op of ops) {
        if (op.op === 'delete') rowsOf(op.table).delete(op.key);
        else rowsOf(op.table).set(op.key, /** @type {string} */ (op.value));
      }
    },
    close() {},
  };
}

/**
 * The request that reads row `key` of `table` in transaction `t` (a virtual table: the key of the row its index finds).
 * @param {IDBTransaction} t
 * @param {string} table
 * @param {string} key
 * @returns {IDBRequest}
 */
function getIn(t, table, key) {
  const v = VIRTUAL[table];
  return v ? t.objectStore(v[0]).index(v[1]).getKey(key) : t.objectStore(table).get(key);
}

/**
 * A virtual row's value: the primary key found, as JSON text (what the core wrote there).
 * @param {IDBValidKey | undefined} primaryKey
 */
function pointer(primaryKey) {
  return primaryKey === undefined ? null : JSON.stringify(primaryKey);
}

/**
 * The rows of a virtual table in `range`: [index key, JSON of the primary key], in key order.
 * @param {IDBTransaction} t
 * @param {string} table
 * @param {IDBKeyRange} range
 * @returns {Promise<Row[]>}
 */
function scanIndex(t, table, range) {
  const [store, field] = VIRTUAL[table];
  return new Promise((resolve, reject) => {
    /** @type {Row[]} */
    const out = [];
    const c = t.objectStore(store).index(field).openKeyCursor(range);
    c.onsuccess = () => {
      const cur = c.result;
      if (!cur) return resolve(out);
      out.push([String(cur.key), JSON.stringify(cur.primaryKey)]);
      cur.continue();
    };
    c.onerror = () => reject(c.error);
  });
}

/**
 * Aborts a transaction that may have been aborted already (a second abort() throws).
 * @param {IDBTransaction} t
 */
function abort(t) {
  try {
    t.abort();
  } catch {
    /* already finished or aborted: onabort reports it */
  }
}

/**
 * @template T
 * @param {IDBRequest<T>} r
 * @returns {Promise<T>}
 */
function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/**
 * IndexedDB: one database per store name, one object store per table (out-of-line string
 * keys, JSON text values), one readwrite transaction per commit.
 * @param {string} name
 * @param {IDBFactory} [idb]
 * @returns {Promise<Backend>}
 */
export async function indexedDbBackend(name, idb = globalThis.indexedDB) {
  if (!idb) throw new PromptloomError('InvalidOptions', 'IndexedDB is not available here; use backend: "memory" or a host object', { path: 'backend' });
  const open = idb.open(name, DB_VERSION);
  // A blocked open is refused at once; the request itself cannot be cancelled, so when it
  // later goes through it is undone: its upgrade aborted, its connection closed. No
  // connection is left that nobody holds (it would block other tabs' upgrades).
  let abandoned = false;
  open.onupgradeneeded = () => {
    if (abandoned) {
      open.transaction?.abort();
      return;
    }
    const db = open.result;
    for (const t of STORES) {
      if (db.objectStoreNames.contains(t)) continue;
      const store = db.createObjectStore(t);
      for (const [field, unique] of Object.entries(INDEXES[t] ?? {})) store.createIndex(field, field, { unique });
    }
  };
  /** @type {IDBDatabase} */
  let db;
  try {
    db = await new Promise((resolve, reject) => {
      open.onsuccess = () => {
        if (abandoned) open.result.close();
        else resolve(open.result);
      };
      open.onerror = (ev) => {
        if (abandoned) ev.preventDefault();
        else reject(open.error);
      };
      open.onblocked = () => {
        abandoned = true;
        reject(Object.assign(new Error('the database is open in another tab at an older version; close it (or reload it) and open the store again'), { name: 'BlockedError' }));
      };
    });
  } catch (e) {
    throw idbFailure(`cannot open the IndexedDB database "${name}"`, e);
  }
  // Another tab upgrading the database: close this connection so the upgrade can run;
  // later calls here fail with StoreFailed instead of writing into a changing schema.
  let closed = false;
  db.onversionchange = () => {
    closed = true;
    db.close();
  };
  /**
   * @param {string[]} tables
   * @param {IDBTransactionMode} mode
   */
  const tx = (tables, mode) => {
    if (closed) throw storeFailed(`the IndexedDB database "${name}" was closed (upgraded elsewhere); open the store again`);
    return db.transaction(tables, mode);
  };
  return {
    kind: 'indexeddb',
    db,
    async get(table, key) {
      checkTable(table);
      return idbRead(() => request(getIn(tx([storeOf(table)], 'readonly'), table, key)).then((v) => (VIRTUAL[table] ? pointer(v) : text(v))));
    },
    async scan(table, prefix) {
      checkTable(table);
      return idbRead(async () => {
        const t = tx([storeOf(table)], 'readonly');
        const range = IDBKeyRange.bound(prefix, prefix + '\uffff');
        if (VIRTUAL[table]) return scanIndex(t, table, range);
        const store = t.objectStore(table);
        const [keys, values] = await Promise.all([request(store.getAllKeys(range)), request(store.getAll(range))]);
        return keys.map((k, i) => /** @type {Row} */ ([String(k), text(values[i])]));
      });
    },
    /** One page of a key range: IndexedDB starts at the key and stops at the count. */
    async range(table, prefix, after, limit) {
      checkTable(table);
      return idbRead(async () => {
        const t = tx([storeOf(table)], 'readonly');
        const range = pageRange(prefix, after);
        if (VIRTUAL[table]) return pageOf(await scanIndex(t, table, range), null, limit);
        const store = t.objectStore(table);
        const [keys, values] = await Promise.all([request(store.getAllKeys(range, limit)), request(store.getAll(range, limit))]);
        return keys.map((k, i) => /** @type {Row} */ ([String(k), text(values[i])]));
      });
    },
    /** The values of the rows whose key starts with `prefix`, in key order (no keys: one request). */
    async values(table, prefix) {
      checkTable(table);
      const range = IDBKeyRange.bound(prefix, prefix + '\uffff');
      return idbRead(async () => (await request(tx([table], 'readonly').objectStore(table).getAll(range))).map(text));
    },
    /** Rows whose indexed `field` equals `value` (tables of INDEXES only), in key order. */
    async byIndex(table, field, value) {
      checkTable(table);
      if (!(field in (INDEXES[table] ?? {}))) throw new PromptloomError('Internal', `no index ${field} on ${table}`, {});
      return idbRead(async () => {
        const index = tx([table], 'readonly').objectStore(table).index(field);
        const [keys, values] = await Promise.all([request(index.getAllKeys(value)), request(index.getAll(value))]);
        return keys.map((k, i) => /** @type {Row} */ ([String(k), text(values[i])])).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      });
    },
    read({ gets = [], scans = [] }) {
      [...gets, ...scans].forEach(([t]) => checkTable(t));
      const tables = [...new Set([...gets, ...scans].map(([t]) => storeOf(t)))];
      if (tables.length === 0) return Promise.resolve({ gets: [], scans: [] });
      return new Promise((resolve, reject) => {
        /** @type {IDBTransaction} */
        let t;
        try {
          t = tx(tables, 'readonly');
        } catch (e) {
          reject(e);
          return;
        }
        /** @type {ReadAnswer} */
        const out = { gets: new Array(gets.length), scans: new Array(scans.length) };
        try {
          gets.forEach(([table, key], i) => {
            const r = getIn(t, table, key);
            r.onsuccess = () => {
              out.gets[i] = VIRTUAL[table] ? pointer(r.result) : text(r.result);
            };
          });
          scans.forEach(([table, prefix, after = null, limit], i) => {
            // A page of a range starts after its cursor and stops at its count.
            const range = pageRange(prefix, after);
            if (VIRTUAL[table]) {
              scanIndex(t, table, range).then((rows) => (out.scans[i] = limit === undefined ? rows : rows.slice(0, limit))).catch(() => abort(t));
              return;
            }
            const store = t.objectStore(table);
            /** @type {IDBValidKey[]} */
            let keys = [];
            const rk = store.getAllKeys(range, limit);
            rk.onsuccess = () => {
              keys = rk.result;
            };
            const rv = store.getAll(range, limit);
            rv.onsuccess = () => {
              const values = rv.result;
              out.scans[i] = keys.map((k, j) => /** @type {Row} */ ([String(k), text(values[j])]));
            };
          });
        } catch (e) {
          abort(t);
          reject(idbFailure('the IndexedDB read failed', e));
          return;
        }
        t.oncomplete = () => resolve(out);
        t.onabort = () => reject(idbFailure('the IndexedDB read failed', t.error));
      });
    },
    commitAfterRead(reads, build) {
      return new Promise((resolve, reject) => {
        /** @type {IDBTransaction} */
        let t;
        try {
          t = tx(STORES, 'readwrite');
        } catch (e) {
          reject(e);
          return;
        }
        let failure = /** @type {any} */ (null);
        t.oncomplete = () => resolve(undefined);
        t.onabort = () => {
          if (!failure && t.error?.name === 'ConstraintError') failure = conflict(inserted.table, inserted.key);
          reject(failure ?? idbFailure('the IndexedDB write was aborted', t.error, '; nothing was written'));
        };
        /** @type {Partial<WriteOp>} the write that met a taken key or unique value */
        let inserted = {};
        /** @type {(string | null)[]} */
        const values = new Array(reads.length);
        let pending = reads.length;
        const write = () => {
          /** @type {WriteOp[]} */
          let ops;
          try {
            ops = build(values);
            for (const op of ops) checkTable(op.table);
          } catch (e) {
            failure = e;
            abort(t);
            return;
          }
          try {
            for (const op of ops) {
              if (VIRTUAL[op.table]) continue;
              const s = t.objectStore(op.table);
              const value = op.index && INDEXES[op.table] ? { v: op.value, ...op.index } : op.value;
              // add() fails with ConstraintError when the key exists, and any write when a
              // unique index (a skill's name, an artifact's id) already holds its value: the
              // transaction aborts and the batch is a conflict.
              /** @type {IDBRequest} */
              const r = op.op === 'put' ? s.put(value, op.key) : op.op === 'insert' ? s.add(value, op.key) : s.delete(op.key);
              r.onerror = () => {
                // Only the write that failed names the conflict (an abort errors the rest).
                if (r.error?.name === 'ConstraintError' && !inserted.table) inserted = op;
              };
            }
          } catch (e) {
            // A rejected put (a bad key, a closed store): roll back the whole batch.
            failure ??= idbFailure('the IndexedDB write failed', e, '; nothing was written');
            abort(t);
          }
        };
        if (pending === 0) write();
        try {
          reads.forEach(([table, key], i) => {
            const r = getIn(t, table, key);
            r.onsuccess = () => {
              values[i] = VIRTUAL[table] ? pointer(r.result) : text(r.result);
              if (--pending === 0) write();
            };
          });
        } catch (e) {
          failure = idbFailure('the IndexedDB read before a write failed', e, '; nothing was written');
          abort(t);
        }
      });
    },
    close() {
      closed = true;
      db.close();
    },
  };
}

/**
 * The keys a host store's `list()` answered (an array of keys, or `{ keys: [{ name }] }`).
 * @param {Unchecked} listed
 * @returns {(string | null)[]}
 */
function keysOf(listed) {
  const items = Array.isArray(listed) ? listed : listed && Array.isArray(listed.keys) ? listed.keys : null;
  if (!items) throw storeFailed('the host store\'s list() must return an array of keys (or { keys: [...] })');
  return items.map((/** @type {Unchecked} */ k) => (typeof k === 'string' ? k : k && typeof k.name === 'string' ? k.name : k && typeof k.key === 'string' ? k.key : null));
}

/**
 * A Cloudflare KV namespace (it has getWithMetadata): list({ prefix, cursor }) in pages.
 * @param {Unchecked} host
 */
function isEdgeKv(host) {
  return typeof host.getWithMetadata === 'function';
}

/**
 * Every key under `prefix` (a KV namespace's pages followed).
 * @param {Unchecked} host the host's store
 * @param {string} prefix
 */
async function listAll(host, prefix) {
  if (!isEdgeKv(host)) return keysOf(await host.list(prefix));
  /** @type {(string | null)[]} */
  const keys = [];
  /** @type {string | undefined} */
  let cursor;
  for (;;) {
    const page = await host.list({ prefix, cursor });
    keys.push(...keysOf(page));
    if (page.list_complete !== false || !page.cursor) return keys;
    cursor = page.cursor;
  }
}

/**
 * A commit plan's text (`<phase><S|D><key>\0[<value>\0]` per write) by phase.
 * @param {string} text
 */
function planOf(text) {
  /** @type {{ b: Array<[string, string | null]>, a: Array<[string, string | null]>, e: Array<[string, string | null]>, g: Array<[string, string | null]> }} */
  const out = { b: [], a: [], e: [], g: [] };
  let at = 0;
  while (at < text.length) {
    const phase = text[at];
    const set = text[at + 1] === 'S';
    const k = text.indexOf('\0', at + 2);
    const key = text.slice(at + 2, k);
    at = k + 1;
    /** @type {string | null} */
    let value = null;
    if (set) {
      const v = text.indexOf('\0', at);
      value = text.slice(at, v);
      at = v + 1;
    }
    out[/** @type {'b' | 'a' | 'e' | 'g'} */ (phase)].push([key, value]);
  }
  return out;
}

/**
 * A host-supplied store: an object with async get(key), put(key, value), delete(key) and
 * list(prefix) (keys, or { keys: [{ name }] }), or a Cloudflare KV namespace as it is. Rows
 * live under `<name>/<table>:<key>`, so several stores can share one namespace. Such a
 * store has no transactions: the core plans each commit with an undo journal and chunks
 * large values (src/store/kv.rs); this backend executes the plan. A commit that fails is
 * rolled back before the next read or write, so no reader sees it half done, and it can be
 * retried.
 * @param {Unchecked} host the host's store (its methods are checked here)
 * @param {string} name
 * @returns {Backend}
 */
export function hostBackend(host, name) {
  for (const m of ['get', 'put', 'delete', 'list']) {
    if (typeof host[m] !== 'function') {
      throw new PromptloomError('InvalidOptions', `a host store needs async get, put, delete and list methods; ${m} is missing`, { path: `backend.${m}` });
    }
  }
  /**
   * @template T
   * @param {string} what
   * @param {() => Promise<T>} f
   * @returns {Promise<T>}
   */
  const wrap = async (what, f) => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof PromptloomError) throw e;
      throw storeFailed(`the host store failed in ${what}: ${e?.message ?? e}`, e);
    }
  };
  const prefix = `${name}/`;
  const at = (/** @type {string} */ table, /** @type {string} */ key) => `${prefix}${table}:${key}`;
  const journalKey = `${prefix}~journal`;
  /** @type {Promise<unknown>} */
  let queue = Promise.resolve();
  let clean = false; // no journal pending (checked on first use and after a failed commit)
  let overlay = /** @type {Map<string, any> | null} */ (null); // while a roll-back cannot be written: raw key → old raw value | null

  /**
   * A stored raw value as the row's value: a chunked row (U+0001 first) is joined.
   * @param {string} rest the row's table and key
   * @param {unknown} raw what the host store holds under it
   * @returns {Promise<string | null>}
   */
  async function valueOf(rest, raw) {
    if (raw == null) return null;
    const s = String(raw);
    if (s.charCodeAt(0) !== 1) return s;
    const keys = __call(() => __module().kvChunks(prefix, rest, s));
    if (keys === '') return s;
    const parts = await Promise.all(keys.split('\0').map((/** @type {string} */ k) => host.get(k)));
    const lost = parts.findIndex((p) => p == null);
    if (lost >= 0) throw storeFailed(`the row \`${rest}\` is missing a chunk`);
    return parts.map(String).join('');
  }
  /** @param {Array<[string, string | null]>} writes */
  async function run(writes) {
    for (const [k, v] of writes) {
      if (v === null) await host.delete(k);
      else await host.put(k, v);
    }
  }
  async function recover() {
    if (clean) return;
    const raw = await host.get(journalKey);
    if (raw != null) {
      const journal = await valueOf('~journal', raw);
      const writes = JSON.parse(__call(() => __module().kvUndo(prefix, journal, String(raw))));
      try {
        await run(writes);
      } catch (e) {
        const err = storeFailed(`an interrupted write could not be rolled back yet: ${e?.message ?? e}`, e);
        err.details.pending = true;
        throw err;
      }
    }
    clean = true;
    overlay = null;
  }
  /**
   * Reads wait for the commit in flight and roll back a pending one; while the store
   * refuses the roll-back, they read the old rows through the journal: never half a commit.
   */
  const ready = () =>
    queue.then(recover).catch(async (e) => {
      if (!(e instanceof PromptloomError) || !e.details.pending) throw e;
      const raw = await host.get(journalKey);
      const journal = await valueOf('~journal', raw);
      overlay = journal == null ? null : new Map(Object.entries(JSON.parse(__call(() => __module().kvOverlay(journal)))));
    });
  /** A raw value as readers see it (through the overlay while a roll-back is pending). */
  const rawGet = (/** @type {string} */ k) => (overlay && overlay.has(k) ? Promise.resolve(overlay.get(k)) : host.get(k));

  return {
    kind: 'host',
    get(table, key) {
      checkTable(table);
      return wrap('get', async () => {
        await ready();
        return valueOf(`${table}:${key}`, await rawGet(at(table, key)));
      });
    },
    scan(table, prefix_) {
      return this.range(table, prefix_, null, Infinity);
    },
    /** One page of a key range: the keys are listed, and only the page's values are read. */
    range(table, prefix_, after, limit) {
      checkTable(table);
      return wrap('list', async () => {
        await ready();
        const full = at(table, prefix_);
        const strip = at(table, '').length;
        const listed = /** @type {string[]} */ ((await listAll(host, full)).filter((k) => typeof k === 'string' && k.startsWith(full)));
        if (overlay) for (const [k, v] of overlay) if (v !== null && k.startsWith(full)) listed.push(k);
        const sorted = [...new Set(listed)].sort();
        const from = after === null ? 0 : sorted.findIndex((k) => k.slice(strip) > after);
        const keys = from < 0 ? [] : sorted.slice(from, from + limit);
        const raws = await Promise.all(keys.map((k) => rawGet(k)));
        const values = await Promise.all(raws.map((/** @type {unknown} */ v, /** @type {number} */ i) => valueOf(`${table}:${keys[i].slice(strip)}`, v)));
        /** @type {Row[]} */
        const out = [];
        keys.forEach((k, i) => {
          const v = values[i];
          if (v != null) out.push([k.slice(strip), v]);
        });
        return out;
      });
    },
    read(q) {
      return readEach(this, q);
    },
    commitAfterRead(reads, build) {
      // One commit at a time per instance: the read and the writes must not interleave.
      const run_ = queue.then(() =>
        wrap('put', async () => {
          await recover();
          const values = await Promise.all(reads.map(([t, k]) => host.get(at(t, k)).then((/** @type {unknown} */ v) => valueOf(`${t}:${k}`, v))));
          const ops = build(values);
          for (const op of ops) checkTable(op.table);
          const keys = [...new Set(ops.map((op) => at(op.table, op.key)))];
          if (keys.some((k) => k.includes('\0'))) throw storeFailed('a key holds NUL (U+0000), which a host store cannot take; nothing was written');
          const raws = await Promise.all(keys.map((k) => host.get(k)));
          let olds = '';
          keys.forEach((k, i) => {
            if (raws[i] != null) olds += `${k}\0${raws[i]}\0`;
          });
          let text = '';
          for (const op of ops) text += `${op.op[0]}${op.table}\0${op.key}\0${op.op === 'delete' ? '' : op.value}\0`;
          const plan = planOf(__call(() => __module().kvPlan(prefix, text, olds)));
          await run(plan.b);
          try {
            await run(plan.a);
            await run(plan.e);
          } catch (e) {
            clean = false;
            await recover().catch(() => {}); // now if the store lets us, else before the next access
            throw e;
          }
          for (const [k] of plan.g) await host.delete(k).catch(() => {});
        }),
      );
      queue = run_.catch(() => {});
      return run_;
    },
    close() {},
  };
}

/**
 * Reads what `query` (a read's kind, then its fields) asks of a message store or a skill
 * store: the core plans the rows (`store::reads`: which keys, which prefixes), the backend
 * reads them, the core makes the answer or plans the next read.
 * @param {Backend} backend
 * @param {string[]} query
 * @returns {Promise<any>} the answer's JSON parsed (its shape is the query's)
 */
export async function readPlanned(backend, ...query) {
  // The query's text form: its kind and fields, each ended by FIELD (src/store/reads.rs).
  // No stored key holds a NUL (submit and the stores refuse them), so none is asked for.
  if (query.some((f) => f.includes(FIELD))) throw new PromptloomError('InvalidOptions', 'a key cannot contain NUL (U+0000)', {});
  let step = __inbox('readStepInbox', [query.map((f) => f + FIELD).join('')]);
  while (step[0] === 'R') {
    const cut = step.indexOf(FIELD);
    const { gets, scans } = await backend.read(JSON.parse(step.slice(1, cut)));
    step = __inbox('readStepInbox', [step.slice(cut + 1), plannedRowsText(gets, scans)]);
  }
  return JSON.parse(step.slice(1));
}

/**
 * The rows a backend read, NUL-framed for the core (values are JSON text: no raw NUL).
 * @param {(string | null)[]} gets
 * @param {Row[][]} scans
 */
function plannedRowsText(gets, scans) {
  let text = `${gets.length}${FIELD}`;
  for (const v of gets) text += v == null ? `-${FIELD}` : `+${v}${FIELD}`;
  for (const rows of scans) {
    text += `${rows.length}${FIELD}`;
    for (const [k, v] of rows) text += `${k}${FIELD}${v}${FIELD}`;
  }
  return text;
}

