// An in-memory `wasi:keyvalue/store` for the component under jco (mapped with
// `--map wasi:keyvalue/store=…/kv.js`): one Map per bucket identifier, values as bytes.
export const buckets = new Map();

export class Bucket {
  constructor(map) {
    this.map = map;
  }
  get(key) {
    return this.map.get(key);
  }
  set(key, value) {
    this.map.set(key, new Uint8Array(value));
  }
  delete(key) {
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
