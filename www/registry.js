// The contract registry panel: contracts registered from their YAML, the canary split of
// chat users moved at run time, calls through the gateway with a handler that can fail (the
// breaker of each version read from the memory state port), and the planner's tool section
// generated from the registry for the message and provider chosen.
import { ContractRegistry, createGateway, memoryState } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);

const CROSS_TITLE_LINK = `
name: cross-title-link
version: 0.9
description: |
  Given a manga title, return semantically and behaviorally related titles
  using a graph + hybrid retrieval.
owner: team-discovery@example.com
input:
  title_id: { type: string, required: true, regex: "^[A-Z]{4}_[0-9]{3,6}$" }
  locale:   { type: string, required: true, enum: [en-US, ja-JP, ko-KR] }
  k:        { type: integer, default: 10, min: 1, max: 50 }
output:
  recommendations:
    type: array
    items: { title_id: string, similarity: float, reason: string }
errors:
  - { code: TITLE_NOT_FOUND, retry: do-not-retry }
  - { code: GRAPH_TIMEOUT, retry: retry-once }
policy:
  idempotent: true
  idempotency_key: "{title_id}:{locale}:{k}"
  rate_limit: { per_user_per_min: 60, global_per_sec: 5000 }
  timeout_ms: 800
  retry: { attempts: 1, backoff: exponential, base_ms: 10 }
  circuit_breaker: { error_rate_threshold: 0.05, window_sec: 30, min_calls: 10 }
  budget: { p95_ms: 510, cost_usd: 0.0014 }
capabilities_required:
  - feature_flag: cross_title_link_enabled
`;
const CROSS_TITLE_LINK_1 = CROSS_TITLE_LINK.replace('version: 0.9', 'version: 1.0.0\nsurfaces: [chat, voice]\ncanary: { chat: 5 }');
const OTHERS = [
  {
    name: 'review-sentiment', version: '1.5', description: 'Summarizes the sentiment of reader reviews of a title over a time window.', owner: 'team-reviews',
    input: { title_id: { type: 'string', required: true }, window_days: { type: 'integer', default: 30, min: 1, max: 365 } },
    output: { sentiment: { type: 'string', required: true, enum: ['positive', 'mixed', 'negative'] }, summary: 'string' },
    policy: { idempotent: true, idempotency_key: '{title_id}:{window_days}', timeout_ms: 600, budget: { p95_ms: 600, cost_usd: 0.0011 } },
  },
  {
    name: 'order-inventory', version: '4.0', description: 'Places a hold on the inventory of an order.', owner: 'team-orders', surfaces: ['chat', 'voice'],
    input: { order_id: { type: 'string', required: true, regex: '^ORD-[0-9]+$' } }, output: { hold_id: { type: 'string', required: true } },
    policy: { idempotent: false, idempotency_key: '{order_id}', rate_limit: { per_user_per_min: 10 }, timeout_ms: 300, budget: { p95_ms: 180, cost_usd: 0.0002 } },
  },
];

const registry = new ContractRegistry();
registry.register(CROSS_TITLE_LINK);
registry.register(CROSS_TITLE_LINK_1);
for (const c of OTHERS) registry.register(c);

const state = memoryState();
let failing = false;
const handlers = {
  'cross-title-link': async ({ title_id }, { version }) => {
    if (failing) throw Object.assign(new Error('upstream unavailable'), { status: 503 });
    return version === '1.0.0' ? { recommendations: [] } : { recommendations: [{ title_id: 'VGLD_002', similarity: 0.8, reason: `related to ${title_id}` }] };
  },
  'review-sentiment': async () => ({ sentiment: 'positive', summary: 'Readers love it.' }),
  'order-inventory': async ({ order_id }) => ({ hold_id: `H-${order_id}` }),
};
const gateway = createGateway({ registry, handlers, state });
const CHAT = { surface: 'chat', flags: ['cross_title_link_enabled'] };
let fired = 0;

function renderContracts() {
  const body = $('rg-contracts').querySelector('tbody');
  body.textContent = '';
  for (const c of registry.list()) {
    const tr = document.createElement('tr');
    const cb = state.get(`cb:${c.name}@${c.version}`);
    const cells = [c.name, c.version, c.surfaces.join(', ') || 'any', Object.entries(c.canary).map(([s, p]) => `${s} ${p}%`).join(', ') || '—', cb ? cb.s : 'closed'];
    cells.forEach((t, i) => {
      const td = document.createElement('td');
      td.textContent = t;
      if (i === 4) td.className = t;
      tr.append(td);
    });
    body.append(tr);
  }
}

function renderSplit() {
  const n = 1000;
  let on = 0;
  for (let i = 0; i < n; i++) if (registry.resolve('cross-title-link', { surface: 'chat', user: `user-${i}` }).version === '1.0.0') on += 1;
  $('rg-split').textContent = `${on} of ${n} chat users on 1.0.0, the rest on 0.9.0`;
}

function renderPlanner() {
  const s = registry.plannerSection($('rg-query').value, { provider: $('rg-provider').value, ...CHAT, user: 'demo-user' });
  $('rg-catalog').textContent = s.catalog;
  $('rg-planner').textContent = JSON.stringify(s.tools, null, 2);
}

$('rg-canary').addEventListener('change', () => {
  const p = Math.max(0, Math.min(100, Number($('rg-canary').value) || 0));
  registry.setCanary('cross-title-link', '1.0.0', 'chat', p);
  renderSplit();
  renderContracts();
});
$('rg-fail').addEventListener('change', () => {
  failing = $('rg-fail').checked;
});
$('rg-fire').addEventListener('click', async () => {
  window.promptloomRegistryIdle = false;
  const counts = {};
  for (let i = 0; i < 20; i++) {
    const user = `user-${i}`;
    const code = await gateway
      .call('cross-title-link', { title_id: `DEMO_${String((fired += 1)).padStart(6, '0')}`, locale: 'en-US' }, { ...CHAT, user, version: '0.9' })
      .then(() => 'ok', (e) => e.code);
    counts[code] = (counts[code] ?? 0) + 1;
  }
  $('rg-outcomes').textContent = Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(' · ');
  renderContracts();
  window.promptloomRegistryIdle = true;
});
$('rg-query').addEventListener('input', renderPlanner);
$('rg-provider').addEventListener('change', renderPlanner);

renderContracts();
renderSplit();
renderPlanner();
window.promptloomRegistryReady = true;
