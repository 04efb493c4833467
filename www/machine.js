// The skill state machine panel: a SkillSpec drawn as a diagram (laid out by distance from
// the initial state), its Mermaid text, and a scripted run through the arbiter — every
// proposal checked, refusals shown with what would have been valid, the current state lit.
import { buildSkillRegistry, builtinSkillSpecs, Arbiter, toMermaid } from '../pkg/src/composer-web.js';

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

const registry = buildSkillRegistry([BUILD_FEATURE], { tools: TOOLS, builtins: true });
const specs = Object.fromEntries(registry.names().map((n) => [n, registry.spec(n)]));
let arbiter;
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

function reset() {
  const name = $('sm-spec').value;
  arbiter = new Arbiter(registry);
  const run = arbiter.start('demo', name, name === 'build_feature' ? null : { request: 'a timeline checker' });
  script = SCRIPTS[name] ?? [];
  at = 0;
  $('sm-log').replaceChildren();
  $('sm-status').textContent = `${name}: in ${run.state}, ${script.length} scripted proposals`;
  draw(specs[name], run.state);
}

function step() {
  if (at >= script.length) return false;
  const p = script[at++];
  const o = arbiter.propose('demo', p);
  const what = p.type === 'tool' ? `tool ${p.name}` : p.type === 'transition' ? `transition “${p.event}”` : p.type === 'spawn' ? `spawn ${p.skill}` : 'finish';
  const li = document.createElement('li');
  li.className = o.accepted ? 'accepted' : 'rejected';
  li.textContent = o.accepted
    ? `${what} → ${o.state}${o.proposal_record ? ` (proposal recorded: ${o.proposal_record.kind}, pending approval)` : ''}`
    : `${what} refused (${o.error.code}): allowed ${o.error.allowed_tools.join(', ') || 'no tools'}; transitions ${o.error.transitions.join(', ') || 'none'}`;
  $('sm-log').append(li);
  $('sm-status').textContent = `step ${o.step}: ${o.status} in ${o.state}`;
  draw(specs[$('sm-spec').value], o.state);
  return at < script.length && o.status === 'running';
}

$('sm-spec').replaceChildren(...registry.names().map((n) => Object.assign(document.createElement('option'), { value: n, textContent: n })));
$('sm-spec').addEventListener('change', reset);
$('sm-reset').addEventListener('click', reset);
$('sm-step').addEventListener('click', step);
$('sm-play').addEventListener('click', () => {
  reset();
  const tick = () => {
    if (step()) setTimeout(tick, Number(window.promptloomMachineDelay ?? 500));
    else window.promptloomMachineDone = true;
  };
  window.promptloomMachineDone = false;
  setTimeout(tick, 50);
});
reset();
window.promptloomMachineReady = true;
