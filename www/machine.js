// The skill state machine panel: a SkillSpec drawn as a diagram (laid out by distance from
// the initial state), its Mermaid text, and a scripted run in a session on IndexedDB —
// every proposal checked by the arbiter, refusals shown with what would have been valid,
// the current state and the lane's state lit. The builders (tool-builder, skill-builder)
// are system skills the store's migration seeds from the package. Proposals they make wait
// in the pending list (they survive a reload) until approved — into a new registry — or
// rejected with a reason; every decision is listed.
import { buildSkillRegistry, toMermaid, openSkillStore, openSession, listProposals, approveProposal, rejectProposal, approvalLog, installApproved } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
const NS = 'http://www.w3.org/2000/svg';
const TOOLS = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write'];

const BUILD_FEATURE = {
  name: 'build_feature',
  description: 'Implement a feature end-to-end.',
  initial_state: 'understand',
  states: {
    understand: { objective: 'Clarify and restate the requirement.', allowed_tools: ['choir.memory.query'], transitions: [{ on: 'complete', to: 'plan' }] },
    plan: { objective: 'Produce an implementation plan.', allowed_tools: ['choir.memory.query'], transitions: [{ on: 'complete', to: 'modify' }, { on: 'revise', to: 'understand' }] },
    modify: { objective: 'Apply changes to files.', allowed_tools: ['choir.fs.read', 'choir.fs.write'], transitions: [{ on: 'complete', to: 'validate' }] },
    validate: { objective: 'Verify correctness.', allowed_tools: ['choir.fs.read'], transitions: [{ on: 'complete', to: 'done' }, { on: 'fail', to: 'modify' }] },
    done: { terminal: true },
  },
  max_steps: 20,
  interruptible: true,
};

/** Scripted runs: what a model might propose, including mistakes the arbiter refuses. */
const SCRIPTS = {
  build_feature: [
    { type: 'tool', name: 'choir.memory.query' },
    { type: 'tool', name: 'choir.fs.write' },
    { type: 'transition', event: 'complete' },
    { type: 'transition', event: 'deploy' },
    { type: 'transition', event: 'complete' },
    { type: 'tool', name: 'choir.fs.write' },
    { type: 'transition', event: 'complete' },
    { type: 'transition', event: 'fail' },
    { type: 'transition', event: 'complete' },
    { type: 'finish' },
    { type: 'transition', event: 'complete' },
    { type: 'finish', output: { summary: 'shipped' } },
  ],
  'skill-builder': [
    { type: 'tool', name: 'choir.fs.read' },
    { type: 'transition', event: 'complete' },
    { type: 'transition', event: 'complete' },
    { type: 'spawn', skill: 'tool-builder' },
    { type: 'transition', event: 'complete' },
    { type: 'tool', name: 'choir.propose.skill', arguments: { spec: { name: 'broken', initial_state: 'a', states: { a: { transitions: [{ on: 'go', to: 'b' }] } } } } },
    { type: 'tool', name: 'choir.propose.skill', arguments: { spec: BUILD_FEATURE } },
    { type: 'transition', event: 'complete' },
    { type: 'finish' },
  ],
};
SCRIPTS['tool-builder'] = [
  { type: 'transition', event: 'complete' },
  { type: 'transition', event: 'complete' },
  { type: 'transition', event: 'complete' },
  { type: 'tool', name: 'choir.propose.tool', arguments: { name: 'grep', description: 'Search files' } },
  { type: 'transition', event: 'complete' },
  { type: 'finish' },
];

// The account store: its migration seeds the package's system skills (once per version).
const store = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-agents', seed: true });
const seeded = store.seeded;
$('sm-system').textContent = `System skills (seed v${seeded.version}, ${seeded.status}): ${(await store.list({ source: 'system' })).map((s) => s.name).join(', ')}`;
const base = buildSkillRegistry([...(await store.skillSpecs()), BUILD_FEATURE], { tools: TOOLS });
// Approvals made before this page load are installed again.
let registry = await installApproved(store, base);
let specs = {};
let session;
let runs = 0;
let script = [];
let at = 0;

function layout(spec) {
  const depth = { [spec.initial_state]: 0 };
  const queue = [spec.initial_state];
  while (queue.length) {
    const s = queue.shift();
    for (const t of spec.states[s]?.transitions ?? []) {
      if (!(t.to in depth)) {
        depth[t.to] = depth[s] + 1;
        queue.push(t.to);
      }
    }
  }
  const rows = {};
  const pos = {};
  for (const name of Object.keys(spec.states)) {
    const d = depth[name] ?? 0;
    rows[d] = (rows[d] ?? 0) + 1;
    pos[name] = { x: 20 + d * 190, y: 30 + (rows[d] - 1) * 80 };
  }
  return pos;
}

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function draw(spec, current) {
  const svg = $('sm-diagram');
  const pos = layout(spec);
  const w = Math.max(...Object.values(pos).map((p) => p.x)) + 140;
  const h = Math.max(...Object.values(pos).map((p) => p.y)) + 70;
  svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
  const defs = el('defs');
  const marker = el('marker', { id: 'sm-arrow', viewBox: '0 0 10 10', refX: '10', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse' });
  marker.append(el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#999' }));
  defs.append(marker);
  const parts = [defs];
  for (const [name, s] of Object.entries(spec.states)) {
    for (const t of s.transitions ?? []) {
      const a = pos[name];
      const b = pos[t.to];
      if (!a || !b) continue;
      const back = b.x <= a.x;
      const x1 = a.x + (back ? 50 : 110);
      const y1 = a.y + (back ? 36 : 18);
      const x2 = b.x + (back ? 60 : 0);
      const y2 = b.y + (back ? 36 : 18);
      const cx = (x1 + x2) / 2;
      const cy = back ? Math.max(y1, y2) + 40 : (y1 + y2) / 2;
      parts.push(el('path', { class: 'edge', d: `M ${x1} ${y1} Q ${cx} ${cy} ${x2} ${y2}` }));
      parts.push(el('text', { class: 'edge-label', x: cx - t.on.length * 3, y: back ? cy - 14 : cy - 6 }, t.on));
    }
  }
  for (const [name, s] of Object.entries(spec.states)) {
    const g = el('g', { class: `state${s.terminal ? ' terminal' : ''}${name === current ? ' current' : ''}`, 'data-state': name });
    g.append(el('rect', { x: pos[name].x, y: pos[name].y, width: 110, height: 36 }), el('text', { x: pos[name].x + 10, y: pos[name].y + 22 }, name));
    parts.push(g);
  }
  svg.replaceChildren(...parts);
  $('sm-mermaid').textContent = toMermaid(spec, current ?? '');
}

function showSpecs() {
  const chosen = $('sm-spec').value;
  specs = Object.fromEntries(registry.names().map((n) => [n, registry.spec(n)]));
  $('sm-spec').replaceChildren(...registry.names().map((n) => Object.assign(document.createElement('option'), { value: n, textContent: n })));
  if (chosen in specs) $('sm-spec').value = chosen;
}

function showLane() {
  const h = session.hierarchy();
  const lane = h.lanes[0];
  $('sm-lane').textContent = `session ${h.session} (${h.status}) · lane ${lane?.lane ?? 'demo'}: ${lane?.state ?? 'idle'}`;
  $('sm-lane').dataset.state = lane?.state ?? 'idle';
}

async function showProposals() {
  const pending = await listProposals(store, { status: 'pending' });
  $('sm-proposals').replaceChildren(...pending.map((p) => {
    const li = document.createElement('li');
    li.dataset.id = p.id;
    const approve = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Approve', className: 'approve' });
    const reject = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Reject', className: 'reject' });
    approve.addEventListener('click', () => decide(p.id, true));
    reject.addEventListener('click', () => decide(p.id, false));
    li.append(`${p.kind} ${p.name} (from ${p.skill}, step ${p.step}) `, approve, ' ', reject);
    return li;
  }));
  if (pending.length === 0) $('sm-proposals').append(Object.assign(document.createElement('li'), { textContent: 'nothing pending', className: 'empty' }));
  const log = await approvalLog(store);
  $('sm-decisions').replaceChildren(...log.map((d) => Object.assign(document.createElement('li'), { textContent: `${d.decision} ${d.kind} ${d.name} by ${d.by}${d.reason ? `: ${d.reason}` : ''}` })));
}

async function decide(id, approve) {
  try {
    if (approve) {
      const out = await approveProposal(store, id, { registry, by: 'demo user' });
      registry = out.registry;
      showSpecs();
      $('sm-review').textContent = `approved ${out.proposal.name}: the registry now has ${registry.names().length} skills (new sessions use it)`;
    } else {
      const reason = $('sm-reason').value.trim();
      await rejectProposal(store, id, { by: 'demo user', reason });
      $('sm-review').textContent = `rejected: ${reason}`;
    }
  } catch (e) {
    $('sm-review').textContent = `${e.code}: ${e.message}`;
  }
  await showProposals();
  window.promptloomMachineDecided = (window.promptloomMachineDecided ?? 0) + 1;
}

/** Resets one at a time (a change of spec and a click may come together). */
let resetting = Promise.resolve();
function reset() {
  resetting = resetting.then(fresh, fresh);
  return resetting;
}

async function fresh() {
  const name = $('sm-spec').value;
  session?.free();
  // A session per run: its log is in IndexedDB, one row per event.
  session = await openSession({ store, registry, id: `demo-${Date.now()}-${runs++}` });
  const run = await session.startSkill('demo', name, name === 'build_feature' ? { feature: 'search' } : { request: 'a timeline checker' });
  script = SCRIPTS[name] ?? [];
  at = 0;
  $('sm-log').replaceChildren();
  $('sm-status').textContent = `${name}: in ${run.state}, ${script.length} scripted proposals`;
  showLane();
  draw(specs[name], run.state);
}

async function step() {
  if (at >= script.length) return false;
  const p = script[at++];
  const o = await session.propose('demo', p);
  const what = p.type === 'tool' ? `tool ${p.name}` : p.type === 'transition' ? `transition “${p.event}”` : p.type === 'spawn' ? `spawn ${p.skill}` : 'finish';
  const li = document.createElement('li');
  li.className = o.accepted ? 'accepted' : 'rejected';
  li.textContent = o.accepted
    ? `${what} → ${o.state}${o.proposal_record ? ` (proposal recorded: ${o.proposal_record.kind}, pending approval)` : ''}`
    : `${what} refused (${o.error.code}): allowed ${o.error.allowed_tools.join(', ') || 'no tools'}; transitions ${o.error.transitions.join(', ') || 'none'}`;
  $('sm-log').append(li);
  $('sm-status').textContent = `step ${o.step}: ${o.status} in ${o.state}`;
  showLane();
  if (o.proposal_id) await showProposals();
  draw(specs[$('sm-spec').value], o.state);
  return at < script.length && o.status === 'running';
}

showSpecs();
$('sm-spec').value = 'build_feature';
$('sm-spec').addEventListener('change', reset);
$('sm-reset').addEventListener('click', reset);
$('sm-step').addEventListener('click', step);
$('sm-play').addEventListener('click', async () => {
  window.promptloomMachineDone = false;
  await reset();
  const tick = async () => {
    if (await step()) setTimeout(tick, Number(window.promptloomMachineDelay ?? 500));
    else window.promptloomMachineDone = true;
  };
  setTimeout(tick, 50);
});
await reset();
await showProposals();
window.promptloomMachineReady = true;
