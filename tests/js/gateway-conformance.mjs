// One gateway suite for every JS host (Node, Chromium, workerd): the seed's contract and
// the test contracts (tests/contracts) registered through the npm package, then calls
// through createGateway with real async handlers on the state port the host gives —
// validation, capabilities, canaries, idempotency, rate limits under concurrent calls,
// breakers, timeouts that cancel the handler, retries by error class, aborts, fallbacks,
// the composition patterns, records and the registration check. It uses no Node API.

const CODES = new Set(['InvalidContract', 'InvalidInput', 'CapabilityDenied', 'RateLimited', 'CircuitOpen', 'Sunset', 'Timeout', 'InvalidOutput', 'HandlerFailed', 'InFlight', 'NoHandler', 'NotFound', 'Aborted', 'InvalidOptions', 'AlreadyExists']);

/** A contract with short timeouts for the timing cases. */
const FAST = {
  name: 'fast-lookup',
  version: '1.0.0',
  description: 'Looks a key up; short timeout, retries, a breaker.',
  owner: 'tests',
  input: { key: { type: 'string', required: true } },
  output: { value: { type: 'string', required: true } },
  errors: [
    { code: 'MISSING', retry: 'do-not-retry' },
    { code: 'FLAKY', retry: 'retry-once' },
  ],
  policy: {
    idempotent: true,
    timeout_ms: 60,
    retry: { attempts: 2, backoff: 'fixed', base_ms: 5 },
    circuit_breaker: { error_rate_threshold: 0.5, window_sec: 60, min_calls: 6, open_sec: 60 },
    budget: { p95_ms: 40, cost_usd: 0.001 },
  },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function gatewayConformance(pl, { contracts, state, label = '' }) {
  const results = [];
  const check = (name, ok, detail = '') => results.push({ name: `${label}${name}`, ok: !!ok, detail: ok ? '' : String(detail).slice(0, 2000) });
  const codeOf = async (p) => {
    try {
      await p;
      return 'ok';
    } catch (e) {
      return e instanceof pl.PromptloomError ? e.code : `not a PromptloomError: ${e}`;
    }
  };
  const errOf = async (p) => {
    try {
      await p;
      return null;
    } catch (e) {
      return e;
    }
  };

  // Registration: the seed's YAML as written, the others, one invalid.
  const registry = new pl.ContractRegistry();
  const seed = registry.register(contracts['valid/cross-title-link.yaml']);
  for (const f of ['valid/cross-title-link-1.0.yaml', 'valid/order-inventory-backup.yaml', 'valid/order-inventory.json']) registry.register(contracts[f]);
  // The planner section: every provider's tool shape, as the Rust snapshot recorded it.
  const bad0 = [];
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const got = registry.plannerSection('related titles for Berserk', { provider, surface: 'chat', user: 'u1', flags: ['cross_title_link_enabled'], tier: 'adult', now: () => 0 });
    if (JSON.stringify(got) !== JSON.stringify(contracts.planner[provider])) bad0.push(`${provider}: ${JSON.stringify(got).slice(0, 300)}`);
  }
  check('the planner section matches the Rust snapshot for every provider', bad0.length === 0, bad0.join('\n'));
  registry.register(FAST);
  check('the seed contract registers as written', seed.version === '0.9.0' && seed.input_schema.properties.k.default === 10, JSON.stringify(seed).slice(0, 300));
  const bad = await errOf(Promise.resolve().then(() => registry.register(contracts['invalid/bad-regex-and-defaults.yaml'])));
  check('an invalid contract lists every problem with its path', bad?.code === 'InvalidContract' && bad.details.problems.map((p) => p.path).join() === 'input.code.regex,input.k.default,input.lo.min,input.locale.default', JSON.stringify(bad?.details));
  check('a version registered twice is AlreadyExists', (await codeOf(Promise.resolve().then(() => registry.register(FAST)))) === 'AlreadyExists');
  check('checkContract reads without registering', pl.checkContract(contracts['invalid/no-owner-no-budget.yaml']).problems.length === 2);

  const runs = {};
  const signals = [];
  const count = (k) => (runs[k] = (runs[k] ?? 0) + 1);
  // The abort cases act once the handler runs (a state backend such as IndexedDB takes its
  // own time before the call reaches it); `handlerReached` resolves then, or after 2 s.
  let reached = null;
  const handlerReached = () => Promise.race([new Promise((resolve) => { reached = resolve; }), sleep(2000)]);
  const handlers = {
    'cross-title-link': async (input, info) => {
      count(`ctl:${input.title_id}`);
      if (info.version === '1.0.0') return { nodes: [input.title_id], edges: [] };
      return { recommendations: [{ title_id: 'VGLD_002', similarity: 0.8, reason: `k=${input.k}` }] };
    },
    'order-inventory': async (input) => {
      count(`oi:${input.order_id}`);
      if (input.order_id === 'ORD-500') throw Object.assign(new Error('region down'), { code: 'REGION_DOWN' });
      return { hold_id: `H-${input.order_id}` };
    },
    'order-inventory-backup': async (input) => ({ hold_id: `B-${input.order_id}` }),
    'fast-lookup': async (input, info) => {
      count(`fast:${input.key}`);
      signals.push(info.signal);
      if (input.key === 'slow') await sleep(200);
      if (input.key.startsWith('missing')) throw Object.assign(new Error('no such key'), { code: 'MISSING' });
      if (input.key.startsWith('flaky')) throw Object.assign(new Error('try again'), { code: 'FLAKY' });
      if (input.key.startsWith('down')) throw Object.assign(new Error('upstream 503'), { status: 503 });
      if (input.key === 'wrong') return { value: 42 };
      if (input.key === 'abortable') {
        reached?.();
        await new Promise((resolve, reject) => info.signal.addEventListener('abort', () => reject(info.signal.reason), { once: true }));
      }
      if (input.key.startsWith('wait')) await sleep(Number(input.key.slice(4)));
      return { value: `v:${input.key}` };
    },
  };
  const t = 1_700_000_000_000;
  const gw = pl.createGateway({ registry, handlers, state: state(), now: () => t });
  const base = { surface: 'chat', user: 'u1', session: 's1', flags: ['cross_title_link_enabled'], tier: 'adult' };
  const chat = { ...base, version: '0.9' };
  // Each group of timing cases gets its own state (breakers and limits start clean).
  const fresh = () => pl.createGateway({ registry, handlers, state: state() });

  // One call: defaults filled, output back; the capability and input checks.
  const out = await gw.call('cross-title-link', { title_id: 'BRSK_001', locale: 'en-US' }, chat);
  check('a call returns the handler output, defaults filled in', out.recommendations[0].reason === 'k=10', JSON.stringify(out));
  const noFlag = await errOf(gw.call('cross-title-link', { title_id: 'BRSK_001', locale: 'en-US' }, { ...chat, flags: [] }));
  check('a missing feature flag is CapabilityDenied', noFlag?.code === 'CapabilityDenied' && noFlag.details.reason === 'feature_flag', noFlag);
  const badInput = await errOf(gw.call('cross-title-link', { title_id: 'nope', locale: 'en-US', extra: true }, chat));
  check('a wrong input is InvalidInput with the violations', badInput?.code === 'InvalidInput' && badInput.details.violations.length >= 2, JSON.stringify(badInput?.details));
  check('an unknown contract is NotFound', (await codeOf(gw.call('no-such', {}, chat))) === 'NotFound');
  const noHandler = pl.createGateway({ registry, handlers: {}, state: state() });
  check('a contract without a handler is NoHandler', (await codeOf(noHandler.call('fast-lookup', { key: 'a' }, chat))) === 'NoHandler');
  check('bad call options are InvalidOptions', (await codeOf(gw.call('fast-lookup', { key: 'a' }, { surface: 'chat' }))) === 'InvalidOptions');

  // Idempotency: the duplicate is answered from the record.
  for (let i = 0; i < 3; i++) await gw.call('cross-title-link', { title_id: 'ABCD_001', locale: 'en-US' }, chat);
  await gw.call('cross-title-link', { title_id: 'ABCD_001', locale: 'en-US' }, { ...chat, session: 's2' });
  check('an idempotent duplicate never calls the handler twice (per scope)', runs['ctl:ABCD_001'] === 2, JSON.stringify(runs));
  check('the duplicate is recorded as cached', gw.records().filter((r) => r.outcome === 'cached').length === 2, JSON.stringify(gw.records().map((r) => r.outcome)));

  // Rate limit: 70 concurrent calls of one user against 60 per minute.
  const many = await Promise.all(Array.from({ length: 70 }, (_, i) => codeOf(gw.call('cross-title-link', { title_id: `RATE_${String(i).padStart(3, '0')}`, locale: 'en-US' }, { ...chat, user: 'burst' }))));
  const ok = many.filter((c) => c === 'ok').length;
  check('rate limits hold under concurrent calls', ok === 60 && many.filter((c) => c === 'RateLimited').length === 10, many.join());
  const limited = await errOf(gw.call('cross-title-link', { title_id: 'RATE_999', locale: 'en-US' }, { ...chat, user: 'burst' }));
  check('RateLimited says when to retry', limited?.code === 'RateLimited' && limited.details.retry_after_ms > 0 && limited.details.scope === 'user', JSON.stringify(limited?.details));

  // Canary: 5 % of chat users on 1.0, deterministic per user; changed at run time.
  let on = 0;
  const N = 20_000;
  for (let i = 0; i < N; i++) if (registry.resolve('cross-title-link', { surface: 'chat', user: `user-${i}`, now: () => 0 }).version === '1.0.0') on += 1;
  check('a canary takes its percent of the surface (±1 %)', Math.abs(on / N - 0.05) <= 0.01, on / N);
  const firstV = registry.resolve('cross-title-link', { surface: 'chat', user: 'stable-user' }).version;
  check('a user never flips version', Array.from({ length: 20 }, () => registry.resolve('cross-title-link', { surface: 'chat', user: 'stable-user' }).version).every((v) => v === firstV));
  registry.setCanary('cross-title-link', '1.0.0', 'chat', 100);
  check('the canary changes at run time', registry.resolve('cross-title-link', { surface: 'chat', user: 'stable-user' }).version === '1.0.0');
  registry.setCanary('cross-title-link', '1.0.0', 'chat', 5);

  // Retries by class, timeouts, invalid outputs.
  const fast = { surface: 'batch', user: 'u9' };
  const live = fresh();
  check('do-not-retry runs once', (await codeOf(fresh().call('fast-lookup', { key: 'missing-1' }, fast))) === 'HandlerFailed' && runs['fast:missing-1'] === 1);
  check('retry-once runs twice', (await codeOf(fresh().call('fast-lookup', { key: 'flaky-1' }, fast))) === 'HandlerFailed' && runs['fast:flaky-1'] === 2);
  check('an undeclared 5xx retries as the policy allows (attempts: 2)', (await codeOf(fresh().call('fast-lookup', { key: 'down-1' }, fast))) === 'HandlerFailed' && runs['fast:down-1'] === 3, runs['fast:down-1']);
  const before = signals.length;
  const slow = await errOf(live.call('fast-lookup', { key: 'slow' }, fast));
  check('a handler past timeout_ms is Timeout after the retries, and its signal is aborted', slow?.code === 'Timeout' && runs['fast:slow'] === 3 && signals.slice(before).every((s) => s.aborted), `${slow?.code} ${runs['fast:slow']}`);
  check('an output outside the schema is InvalidOutput', (await codeOf(fresh().call('fast-lookup', { key: 'wrong' }, fast))) === 'InvalidOutput');

  // Abort: the caller's signal reaches the handler.
  const ac = new AbortController();
  const started = handlerReached();
  const pending = fresh().call('fast-lookup', { key: 'abortable' }, { ...fast, signal: ac.signal });
  await started;
  ac.abort();
  const aborted = await errOf(pending);
  check('an abort ends the call with Aborted and fires the handler signal', aborted?.code === 'Aborted' && signals.at(-1).aborted, aborted);

  // Breaker: failures open it; then calls never reach the handler.
  const br = fresh();
  for (let i = 0; i < 4; i++) await codeOf(br.call('fast-lookup', { key: `down-b${i}` }, fast));
  const before2 = Object.values(runs).reduce((a, b) => a + b, 0);
  const open = await errOf(br.call('fast-lookup', { key: 'healthy' }, fast));
  const after2 = Object.values(runs).reduce((a, b) => a + b, 0);
  check('an open breaker never lets a call through', open?.code === 'CircuitOpen' && before2 === after2 && open.details.retry_after_ms > 0, `${open?.code} ${before2} ${after2}`);

  // Fallback: REGION_DOWN goes to the backup contract.
  const fb = await gw.call('order-inventory', { order_id: 'ORD-500' }, base);
  const fbRec = gw.records().at(-1);
  check('a fallback-to error calls the fallback contract', fb.hold_id === 'B-ORD-500' && fbRec.fallback_from[0] === 'order-inventory@4.0.0', JSON.stringify(fbRec));

  // Composition patterns.
  const pg = fresh();
  const t0 = Date.now();
  const par = await pg.parallel([{ name: 'fast-lookup', input: { key: 'wait30' } }, { name: 'fast-lookup', input: { key: 'wait45' } }], { surface: 'voice', user: 'p' });
  const took = Date.now() - t0;
  check('parallel fan-out: every output, latency of the slowest', par[1].value === 'v:wait45' && took < 75 + 40, took);
  const seq = await pg.sequence([{ name: 'fast-lookup', input: { key: 'a1' } }, { name: 'fast-lookup', input: (prev) => ({ key: `${prev.value}-next` }) }], { surface: 'voice', user: 'p' });
  check('sequential: the output of A feeds B', seq[1].value === 'v:v:a1-next', JSON.stringify(seq));
  const cond = await pg.conditional({ name: 'fast-lookup', input: { key: 'intent' } }, (label) => (label.value === 'v:intent' ? { name: 'fast-lookup', input: { key: 'chosen' } } : null), { surface: 'voice', user: 'p' });
  check('conditional: the classifier picks the call', cond.called === 'fast-lookup' && cond.output.value === 'v:chosen');
  const begun = handlerReached();
  const spec = pg.speculate('fast-lookup', { key: 'abortable' }, { surface: 'voice', user: 'p' });
  await begun;
  spec.cancel();
  check('speculative: cancel reaches the handler and the result is Aborted', (await codeOf(spec.result)) === 'Aborted' && signals.at(-1).aborted);

  // Records and their OpenTelemetry export.
  const recs = [...live.records(), ...br.records()];
  const spans = pl.recordsToOtel(recs).resourceSpans[0].scopeSpans[0].spans;
  check('one record per call, exported as OTLP spans', recs.length === spans.length && spans.every((s) => s.traceId.length === 32 && s.spanId.length === 16) && recs.some((r) => r.budget_overrun), JSON.stringify(recs.at(-1)));
  check('every failure is a typed code', recs.every((r) => r.outcome === 'ok' || r.outcome === 'cached' || CODES.has(r.outcome)), recs.map((r) => r.outcome).join());

  // Registration's handler check with a synthetic input.
  const vg = pl.createGateway({ registry, handlers: { ...handlers, 'order-inventory': async () => ({ hold: 1 }) }, state: state() });
  const vErr = await errOf(vg.verify('order-inventory'));
  check('verify() fails a handler whose synthetic output breaks the schema', vErr?.code === 'InvalidContract' && vErr.details.problems[0].code === 'invalid-output', JSON.stringify(vErr?.details));
  const phases = [];
  const checked = await gw.verify('cross-title-link', { onProgress: (p) => phases.push(`${p.phase}:${p.done}/${p.total}`) });
  check('verify() reports its progress', phases.join(' ') === 'checking:0/2 checking:1/2 checked:2/2', phases.join(' '));
  const stopped = new AbortController();
  stopped.abort();
  check('verify() with an aborted signal stops with Aborted', (await errOf(gw.verify('cross-title-link', { signal: stopped.signal })))?.code === 'Aborted');
  check('verify() passes the real handlers (synthetic input from the schema or the example)', checked.length === 2 && checked.every((c) => c.ok) && /^[A-Z]{4}_[0-9]{3,6}$/.test(checked[0].input.title_id), JSON.stringify(checked));

  // The overlap audit and the review.
  const review = registry.review(recs, { minCallsPerDay: 1 });
  check('the registry review lists contracts never called', review.rarely_called.some((r) => r.contract === 'order-inventory-backup' || r.contract === 'cross-title-link'), JSON.stringify(review));
  check('the overlap audit compares descriptions (lexical without vectors)', Array.isArray(registry.overlapAudit({ threshold: 0.3 })));

  // Output adapters: callers pinned to a sunset 0.9 get 1.0's graph in 0.9's shape.
  registry.setSunset('cross-title-link', '0.9', '2020-01-01');
  const adapted = await fresh().call('cross-title-link', { title_id: 'ADPT_001', locale: 'en-US' }, chat);
  registry.setSunset('cross-title-link', '0.9', null);
  check('a sunset version is served by the newer one through its output adapter', Array.isArray(adapted.recommendations) && adapted.recommendations.length === 0, JSON.stringify(adapted));

  // Sunset.
  registry.setSunset('order-inventory-backup', '1.0.0', '2020-01-01');
  check('a sunset version refuses calls with Sunset', (await codeOf(fresh().call('order-inventory-backup', { order_id: 'ORD-1' }, base))) === 'Sunset');
  registry.setSunset('order-inventory-backup', '1.0.0', null);
  // A declared error's HTTP class decides its retry when nothing else does (5xx once, 4xx never).
  {
    const reg = new pl.ContractRegistry();
    reg.register({ ...FAST, name: 'http-class', errors: [{ code: 'UPSTREAM_DOWN', http: 503 }, { code: 'NO_SUCH_KEY', http: 404 }], policy: { ...FAST.policy, circuit_breaker: undefined } });
    let runs = 0;
    const g = pl.createGateway({ registry: reg, handlers: { 'http-class': async (input) => { runs += 1; throw Object.assign(new Error('down'), { code: input.key }); } }, state: state() });
    const got = [];
    for (const key of ['UPSTREAM_DOWN', 'NO_SUCH_KEY']) {
      runs = 0;
      got.push(`${key}:${await codeOf(g.call('http-class', { key }, { surface: 'chat', user: `u-${key}` }))}:${runs}`);
    }
    check('a declared 5xx is retried once, a 4xx never', got.join() === 'UPSTREAM_DOWN:HandlerFailed:2,NO_SUCH_KEY:HandlerFailed:1', got.join());
  }
  return results;
}
