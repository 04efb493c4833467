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
let slow = false;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A stand-in service: 15-75 ms by the title (450 ms more when "slow" is ticked).
const serviceTime = (id) => 15 + ([...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 61) + (slow ? 450 : 0);
const handlers = {
  'cross-title-link': async ({ title_id }, { version }) => {
    await sleep(serviceTime(title_id));
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
$('rg-slow').addEventListener('change', () => {
  slow = $('rg-slow').checked;
});

const SVG = 'http://www.w3.org/2000/svg';
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The latency histogram of cross-title-link's calls, its p95 and the contract's p95 budget. */
function renderHistogram(records) {
  const svg = $('rg-histogram');
  svg.replaceChildren();
  const W = 420;
  const H = 180;
  const budget = registry.list().find((c) => c.name === 'cross-title-link' && c.version.startsWith('0.9')).source.policy.budget.p95_ms;
  const lat = records.filter((r) => r.contract === 'cross-title-link' && r.outcome !== 'cached').map((r) => r.latency_ms).sort((a, b) => a - b);
  const top = Math.max(budget * 1.25, (lat.at(-1) ?? 0) * 1.05);
  const bins = 24;
  const counts = new Array(bins).fill(0);
  for (const v of lat) counts[Math.min(bins - 1, Math.floor((v / top) * bins))] += 1;
  const most = Math.max(1, ...counts);
  const x = (ms) => 30 + (ms / top) * (W - 40);
  counts.forEach((c, i) => {
    const h = (c / most) * (H - 50);
    svg.append(svgEl('rect', { x: x((i * top) / bins) + 1, y: H - 25 - h, width: (W - 40) / bins - 2, height: h, fill: '#2f6fdf', 'data-count': c }));
  });
  svg.append(svgEl('line', { x1: 30, y1: H - 25, x2: W - 10, y2: H - 25, stroke: '#999' }));
  const p95 = lat.length ? lat[Math.min(lat.length - 1, Math.ceil(0.95 * lat.length) - 1)] : null;
  const mark = (ms, color, label, y) => {
    svg.append(svgEl('line', { x1: x(ms), y1: 12, x2: x(ms), y2: H - 25, stroke: color, 'stroke-dasharray': '4 3' }));
    svg.append(svgEl('text', { x: Math.min(x(ms) + 4, W - 140), y, 'font-size': 11, fill: color }, label));
  };
  mark(budget, '#c0392b', `budget p95 ${budget} ms`, 14);
  if (p95 !== null) mark(p95, '#1e7b34', `p95 ${Math.round(p95)} ms`, 28);
  svg.append(svgEl('text', { x: 30, y: H - 8, 'font-size': 11, fill: '#555' }, `latency of ${lat.length} calls, 0–${Math.round(top)} ms`));
  return { calls: lat.length, p95, budget };
}

const OUTCOME = { ok: '#2e9e55', cached: '#5b8def', RateLimited: '#e08a1e', CircuitOpen: '#c0392b' };
const BREAKER = { closed: '#cfe8d5', 'half-open': '#f5d28a', open: '#e9a29a', none: '#eee' };

/** Every call in order: its outcome above, the breaker's state at that call below. */
function renderTimeline(records) {
  const svg = $('rg-timeline');
  svg.replaceChildren();
  const W = 420;
  const shown = records.slice(-80);
  const w = Math.max(3, Math.min(14, (W - 70) / Math.max(1, shown.length)));
  svg.append(svgEl('text', { x: 0, y: 22, 'font-size': 11, fill: '#555' }, 'outcome'));
  svg.append(svgEl('text', { x: 0, y: 48, 'font-size': 11, fill: '#555' }, 'breaker'));
  shown.forEach((r, i) => {
    const x = 62 + i * w;
    svg.append(svgEl('rect', { x, y: 10, width: w - 1, height: 18, fill: OUTCOME[r.outcome] ?? '#7b241c', 'data-outcome': r.outcome }, undefined));
    svg.append(svgEl('rect', { x, y: 36, width: w - 1, height: 18, fill: BREAKER[r.breaker] ?? '#eee', 'data-breaker': r.breaker }));
  });
  // The legend: outcomes on one line, the breaker's states on the next.
  const legend = (entries, y) => entries.forEach(([k, c], i) => {
    svg.append(svgEl('rect', { x: 62 + i * 72, y, width: 10, height: 10, fill: c }));
    svg.append(svgEl('text', { x: 75 + i * 72, y: y + 9, 'font-size': 10, fill: '#333' }, k));
  });
  legend([...Object.entries(OUTCOME), ['error', '#7b241c']], 66);
  legend(Object.entries(BREAKER).slice(0, 3), 84);
  svg.append(svgEl('text', { x: 0, y: 93, 'font-size': 10, fill: '#555' }, 'breaker:'));
}

function renderCharts() {
  const records = gateway.records();
  const h = renderHistogram(records);
  renderTimeline(records);
  $('rg-stats').textContent = `${records.length} calls recorded · cross-title-link p95 ${h.p95 === null ? '—' : `${Math.round(h.p95)} ms`} against a budget of ${h.budget} ms`;
}
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
  renderCharts();
  window.promptloomRegistryIdle = true;
});
$('rg-holds').addEventListener('click', async () => {
  window.promptloomRegistryIdle = false;
  // order-inventory allows 10 calls per user per minute: the 11th of one user's is refused.
  const counts = {};
  for (let i = 0; i < 14; i++) {
    const code = await gateway.call('order-inventory', { order_id: `ORD-${(fired += 1)}` }, { surface: 'chat', user: 'user-hold' }).then(() => 'ok', (e) => e.code);
    counts[code] = (counts[code] ?? 0) + 1;
  }
  $('rg-outcomes').textContent = Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(' · ');
  renderCharts();
  window.promptloomRegistryIdle = true;
});
$('rg-query').addEventListener('input', renderPlanner);
$('rg-provider').addEventListener('change', renderPlanner);

renderContracts();
renderSplit();
renderPlanner();
renderCharts();
window.promptloomRegistryReady = true;
