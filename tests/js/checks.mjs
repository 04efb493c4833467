// Assertions shared by the conformance suites. They run in Node, in headless Chromium, in
// workerd and against the component, so they use no test-runner API: a failed check throws.

export function assert(cond, what) {
  if (!cond) throw new Error(`assertion failed: ${what}`);
}
/** JSON text with object keys sorted (key order is not part of a message's meaning). */
export function canon(v) {
  return JSON.stringify(v, (_, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}
export function eq(a, b, what) {
  const x = canon(a);
  const y = canon(b);
  if (x !== y) throw new Error(`${what}: ${x.slice(0, 400)} !== ${y.slice(0, 400)}`);
}
/** Runs `f`, which must throw an error with `code`; returns the error. */
export function throws(f, code, what) {
  try {
    f();
  } catch (e) {
    if (e.code !== code) throw new Error(`${what}: expected ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`${what}: expected ${code}, nothing was thrown`);
}

export async function rejects(p, code, what) {
  try {
    await p;
  } catch (e) {
    if (e.code !== code) throw new Error(`${what}: expected ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`${what}: expected ${code}, nothing was thrown`);
}


/**
 * A suite's check runner: each check gets a fresh store from `open()`, closed afterwards;
 * its outcome is pushed to `results` as `{ name, ok, error? }` (a failure does not stop
 * the suite).
 */
export function checker(open, results) {
  return async (name, f) => {
    let store;
    try {
      store = await open();
      await f(store);
      results.push({ name, ok: true });
    } catch (e) {
      results.push({ name, ok: false, error: String(e && e.stack ? e.stack : e) });
    } finally {
      try {
        store?.close();
      } catch {
        /* closed already */
      }
    }
  };
}
