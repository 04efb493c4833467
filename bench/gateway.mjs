// Benchmark: what the invocation gateway adds to a call, in one run, side by side:
//   direct             await handler(input): the floor
//   promptloom         gateway.call() on the memory state port for a contract with a
//                      validated input and output, a per-user and a global rate limit, an
//                      idempotency key (every call a new key: the record is written
//                      pending, then done), a breaker, a timeout and retries
//   ajv + cockatiel    the same policies assembled from popular JS libraries: ajv
//                      (compiled input and output validators), cockatiel (timeout, retry,
//                      circuit breaker), a token bucket and a Map of idempotency records
// Every contender calls the same async handler. Rounds alternate; the median is reported.
// Ratios, not absolute times.
import { performance } from 'node:perf_hooks';
import { ContractRegistry, createGateway, memoryState } from 'promptloom/composer';
import { writeChart } from './chart.mjs';
import Ajv from 'ajv';
import { ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleAll, retry, timeout, TimeoutStrategy, wrap } from 'cockatiel';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = Number(process.env.CALLS ?? 20_000);

const contract = {
  name: 'lookup', version: '1.0.0', description: 'Looks a title up.', owner: 'bench',
  input: { title_id: { type: 'string', required: true, regex: '^[A-Z]{4}_[0-9]{3,6}$' }, locale: { type: 'string', required: true, enum: ['en-US', 'ja-JP'] }, k: { type: 'integer', default: 10, min: 1, max: 50 } },
  output: { title_id: { type: 'string', required: true }, score: 'float' },
  errors: [{ code: 'NOT_FOUND', retry: 'do-not-retry' }],
  policy: {
    idempotent: true, idempotency_key: '{title_id}:{locale}:{k}',
    rate_limit: { per_user_per_min: 1e12, global_per_sec: 1e12 },
    timeout_ms: 1000, retry: { attempts: 2 }, circuit_breaker: { error_rate_threshold: 0.5, window_sec: 30 },
    budget: { p95_ms: 50, cost_usd: 0 },
  },
};
const handler = async (input) => ({ title_id: input.title_id, score: 0.5 });
const inputs = Array.from({ length: CALLS }, (_, i) => ({ title_id: `ABCD_${String(i).padStart(6, '0')}`, locale: 'en-US' }));

// ---- contenders -----------------------------------------------------------------------
async function direct(round) {
  for (const x of inputs) await handler({ ...x, k: 10 });
}

let gw;
async function promptloom(round) {
  const registry = new ContractRegistry();
  registry.register(contract);
  gw = createGateway({ registry, handlers: { lookup: handler }, state: memoryState(), maxRecords: 0 });
  const ctx = { surface: 'chat', user: 'u1', session: `s${round}` };
  for (const x of inputs) await gw.call('lookup', x, ctx);
}

const ajv = new Ajv({ useDefaults: true });
const checkIn = ajv.compile({ type: 'object', properties: { title_id: { type: 'string', pattern: '^[A-Z]{4}_[0-9]{3,6}$' }, locale: { enum: ['en-US', 'ja-JP'] }, k: { type: 'integer', minimum: 1, maximum: 50, default: 10 } }, required: ['title_id', 'locale'], additionalProperties: false });
const checkOut = ajv.compile({ type: 'object', properties: { title_id: { type: 'string' }, score: { type: 'number' } }, required: ['title_id'] });
function bucket(capacity, perMs) {
  let tokens = capacity;
  let at = Date.now();
  return () => {
    const now = Date.now();
    tokens = Math.min(capacity, tokens + (now - at) * perMs);
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
async function peers(round) {
  const policy = wrap(
    retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }),
    circuitBreaker(handleAll, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(5) }),
    timeout(1000, TimeoutStrategy.Aggressive),
  );
  const userLimit = bucket(1e12, 1e12 / 60_000);
  const globalLimit = bucket(1e12, 1e12 / 1000);
  const records = new Map();
  for (const x of inputs) {
    const input = { ...x };
    if (!checkIn(input)) throw new Error('invalid input');
    const key = `u1:s${round}:${input.title_id}:${input.locale}:${input.k}`;
    const r = records.get(key);
    if (r && r.done) continue;
    if (!userLimit() || !globalLimit()) throw new Error('rate limited');
    records.set(key, { done: false, at: Date.now() });
    const out = await policy.execute(() => handler(input));
    if (!checkOut(out)) throw new Error('invalid output');
    records.set(key, { done: true, out, at: Date.now() });
  }
}

// ---- run ------------------------------------------------------------------------------
const contenders = { direct, promptloom, 'ajv + cockatiel': peers };
const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (const f of Object.values(contenders)) await f(-1); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, f] of Object.entries(contenders)) {
    const t0 = performance.now();
    await f(r);
    times[name].push(performance.now() - t0);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const per = (name) => (median(times[name]) * 1000) / CALLS; // µs per call
const base = per('direct');
let table = `\nGateway overhead per call (Node ${process.version}, ${CALLS.toLocaleString('en')} calls × ${ROUNDS} rounds, median)\n\n`;
table += '| contender | µs / call | added vs direct | calls / s |\n|---|---:|---:|---:|\n';
for (const name of Object.keys(contenders)) {
  const us = per(name);
  table += `| ${name} | ${us.toFixed(2)} | ${name === 'direct' ? '—' : `+${(us - base).toFixed(2)} µs`} | ${Math.round(1e6 / us).toLocaleString('en')} |\n`;
}
const added = per('promptloom') - base;
const peer = per('ajv + cockatiel') - base;
table += `\npromptloom adds ${added.toFixed(2)} µs per call (target < 5 µs): ${(peer / added).toFixed(2)}× less than the ajv + cockatiel stack adds.\n`;
console.log(table);
writeChart('gateway', 'What a validated, rate-limited, idempotent call adds (Node)', [
  { label: 'µs added per call, beside calling the handler', bars: [
    { name: 'promptloom gateway', value: added, text: `+${added.toFixed(2)} µs` },
    { name: 'ajv + cockatiel', value: peer, text: `+${peer.toFixed(2)} µs` },
  ] },
]);
