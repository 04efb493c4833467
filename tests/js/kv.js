// An in-memory `wasi:keyvalue/store` for the component under jco (mapped with
// `--map wasi:keyvalue/store=…/kv.js`): one Map per bucket identifier, values as bytes.
export const buckets = new Map();

/**
 * Fault injection for the fault suites: from the `failAt`-th write (set or delete) on, every
 * write fails with `other("disk full")`; `largest` is the largest value ever set (no single
 * call may carry more than a chunk).
 */
export const fault = { writes: 0, failAt: Infinity, largest: 0 };

function write() {
  fault.writes += 1;
  if (fault.writes >= fault.failAt) throw { payload: { tag: 'other', val: 'disk full' } };
}

export class Bucket {
  constructor(map) {
    this.map = map;
  }
  get(key) {
    return this.map.get(key);
  }
  set(key, value) {
    write();
    fault.largest = Math.max(fault.largest, value.length);
    this.map.set(key, new Uint8Array(value));
  }
  delete(key) {
    write();
    this.map.delete(key);
  }
  exists(key) {
    return this.map.has(key);
  }
  listKeys(cursor) {
    // Pages of 50 keys, to exercise the cursor.
    const keys = [...this.map.keys()];
    const from = cursor === undefined ? 0 : Number(cursor);
    const page = keys.slice(from, from + 50);
    return { keys: page, cursor: from + 50 < keys.length ? BigInt(from + 50) : undefined };
  }
}

export function open(identifier) {
  if (!buckets.has(identifier)) buckets.set(identifier, new Map());
  return new Bucket(buckets.get(identifier));
}
