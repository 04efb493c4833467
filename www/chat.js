// The chat panel: compose a message with chips (file-refs with ranges, attachments, editor
// context, /commands, @mentions) and send it through a `Chat`: it is stored in IndexedDB
// first, the reply streams in token by token, tool calls show with their results, and with
// the research skill ticked every call goes through the arbiter. The thread is restored on
// reload. Everything here is display and wiring; the state and the rules are the package's.
import { CommandCatalog, parseInput, openMessageStore, createAdapter, Chat, buildSkillRegistry, Arbiter } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
// The thread's session (a new chat starts another one).
let SESSION = localStorage.getItem('promptloom-chat-session') ?? 'chat';
const FILES = {
  'src/lib/foo.ts': "import { g } from './g';\nexport function f(x) {\n  const y = g(x);\n}\nexport const h = 1;\n",
  'README.md': '# demo\nA workspace with one library file.\n',
};
const TOOLS = [
  { name: 'search', description: 'Searches the workspace for text.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  { name: 'read_file', description: 'Reads a workspace file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
];
const HANDLERS = {
  search: ({ query = '' } = {}) => {
    const words = String(query).toLowerCase().split(/\W+/).filter((w) => w.length > 2);
    const hits = Object.entries(FILES).flatMap(([path, text]) => text.split('\n').map((line, i) => ({ path, line: i + 1, text: line }))).filter((h) => words.some((w) => h.text.toLowerCase().includes(w)));
    return { hits: hits.slice(0, 5), total: hits.length };
  },
  read_file: ({ path } = {}) => {
    if (!(path in FILES)) throw new Error(`no file ${path}`);
    return FILES[path];
  },
};
// The research skill: search first, then report; the arbiter checks every step.
const SPEC = {
  name: 'research',
  description: 'Search the workspace, then report what was found.',
  initial_state: 'search',
  states: {
    search: { objective: 'Search the workspace for what the user asked about.', allowed_tools: ['search'], transitions: [{ on: 'found', to: 'report' }] },
    report: { objective: 'Report what you found.', allowed_tools: [], transitions: [], terminal: true },
  },
};

const catalog = new CommandCatalog();
catalog.register({ name: 'explain', description: 'Explain something', body: 'Explain, step by step: $ARGUMENTS', source: 'project' });
const store = await openMessageStore({ backend: 'indexeddb', name: 'promptloom-chat' });
let pending = []; // chips added with the buttons

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A chip for one part being composed (not sent yet), as the user sees it. */
function chip(p) {
  switch (p.type) {
    case 'text':
      return el('span', 'chip text', p.text);
    case 'file-ref': {
      const g = p.ref?.range;
      return el('span', 'chip ref', `file ${p.ref?.path ?? p.ref?.uri ?? ''}${g ? `:${g.start}-${g.end}` : ''}`);
    }
    case 'file-attachment':
      return el('span', 'chip attachment', `attachment ${p.name ?? p.mime ?? ''}`);
    default:
      return el('span', 'chip', p.type);
  }
}

/** A sent part: the chip the core's view gives (`label`, `detail`). */
function sentChip(c) {
  const cls = { 'file-ref': 'ref', 'file-attachment': 'attachment', 'editor-context': 'context' }[c.type] ?? c.type;
  const prefix = { 'file-ref': 'file ', 'file-attachment': 'attachment ', 'editor-context': 'context ' }[c.type] ?? '';
  const detail = c.type === 'command' && c.detail ? ` → ${c.detail}` : '';
  return el('span', `chip ${cls}`, `${prefix}${c.label}${detail}`);
}

const output = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

function renderMessage(m) {
  const li = el('li', `turn ${m.role}${m.id === 'pending' ? ' live' : ''}`);
  li.dataset.role = m.role;
  if (m.role === 'user') {
    for (const c of m.parts) li.append(sentChip(c));
    return li;
  }
  for (const p of m.parts) {
    if (!p) continue;
    if (p.type === 'text') li.append(el('div', 'text', p.text));
    else if (p.type === 'reasoning') {
      const d = el('details', 'reasoning');
      d.append(el('summary', '', 'reasoning'), el('div', '', p.text));
      li.append(d);
    } else if (p.type === 'tool-call') {
      li.append(el('div', 'tool-call', `⚙ ${p.name}(${p.input === undefined ? p.inputText ?? '' : JSON.stringify(p.input)})`));
      if (p.state === 'output-available') li.append(el('div', 'tool-result', `↳ ${p.name}: ${output(p.output ?? p.content)}`));
      else if (p.state === 'output-error') li.append(el('div', 'tool-result error', `↳ ${p.name}: ${p.error}`));
    } else if (p.type === 'tool-result') {
      li.append(el('div', `tool-result${p.state === 'output-error' ? ' error' : ''}`, `↳ ${p.name ?? p.call_id}: ${p.error ?? output(p.output ?? p.content)}`));
    }
  }
  if (m.status === 'cut') li.append(el('div', 'hint', 'stopped'));
  return li;
}

// Each message object is rendered once: a streamed token makes a new `pending` only, and
// the messages it did not touch are the same objects (the snapshot shares them).
const rendered = new WeakMap();
function renderThread() {
  const { messages, pending: live } = chat.getSnapshot();
  const shown = live ? [...messages, live] : messages;
  $('chat-thread').replaceChildren(...shown.map((m) => {
    let li = rendered.get(m);
    if (!li) rendered.set(m, (li = renderMessage(m)));
    return li;
  }));
}

function renderChips() {
  $('chat-chips').replaceChildren(...pending.map((p, i) => {
    const c = chip(p);
    const x = el('button', 'remove', '×');
    x.type = 'button';
    x.onclick = () => {
      pending.splice(i, 1);
      renderChips();
    };
    c.append(x);
    return c;
  }));
}

function adapter() {
  const provider = $('chat-provider').value;
  const key = $('chat-key').value.trim();
  let base = $('chat-base').value.trim();
  if (!key && !base) base = `${location.origin}/mock`;
  if (base.startsWith('/')) base = location.origin + base;
  // The mock, like the SDKs: OpenAI's base ends in /v1, Gemini's in /v1beta.
  if (base && !key && base.endsWith('/mock')) base += provider === 'anthropic' ? '' : provider === 'gemini' ? '/v1beta' : '/v1';
  const mock = $('chat-mock').value.trim();
  return createAdapter({ provider, apiKey: key || undefined, baseURL: base || undefined, model: $('chat-model').value, headers: mock ? { 'x-mock': mock, 'x-mock-id': String(Date.now()) } : {}, retry: { initialDelayMs: 200 } });
}

// The same settings for every provider: the core puts each where its provider takes it
// (Gemini's model and streaming go in the URL the adapter builds).
const lowerOptions = () => ({ provider: $('chat-provider').value, model: $('chat-model').value, maxOutputTokens: 1024, stream: true, system: 'You are a coding assistant in a small TypeScript workspace.' });

// The stats of this page's model calls (one row per step; the cost is the core's, from its
// model table's list prices), and the last lowering's report.
const stepRows = [];

function renderStats() {
  const table = $('chat-stats');
  const body = table.querySelector('tbody');
  body.replaceChildren(...stepRows.slice(-12).map((r) => {
    const tr = el('tr');
    for (const t of [String(r.step), r.ttft === null ? '—' : `${Math.round(r.ttft)} ms`, String(r.usage.input_tokens ?? '—'), String(r.usage.cached_tokens ?? 0), String(r.usage.output_tokens ?? '—'), String(r.calls), typeof r.cost === 'number' ? `$${r.cost.toFixed(5)}` : '—']) tr.append(el('td', '', t));
    return tr;
  }));
  table.hidden = stepRows.length === 0;
}

function status(text, cls = '') {
  $('chat-status').textContent = text;
  $('chat-status').className = cls;
}

// Per step: when its first event and its first text arrived, then its usage.
let stepStart = performance.now();
let first = null;
const onEvent = (ev) => {
  if (first === null && (ev.type === 'text-delta' || ev.type === 'tool-call-start' || ev.type === 'tool-call-end')) first = performance.now() - stepStart;
  if (ev.type === 'start') status('streaming…');
};
const onTurn = (turn) => {
  stepRows.push({ step: stepRows.length + 1, ttft: first, usage: turn.metadata?.usage ?? {}, cost: turn.metadata?.cost, calls: turn.parts.filter((p) => p.type === 'tool-call').length });
  first = null;
  stepStart = performance.now();
};

let chat;
async function openChat(session) {
  chat = await Chat.open({
    store,
    session,
    adapter: adapter(),
    settings: lowerOptions(),
    tools: TOOLS,
    handlers: HANDLERS,
    catalog,
    resolve: (req) => (req.ref?.path ? FILES[req.ref.path] ?? null : null),
    mentions: { selection: () => ({ payload: { path: 'src/lib/foo.ts', lines: [2, 4], text: FILES['src/lib/foo.ts'].split('\n').slice(1, 4).join('\n') }, source: 'editor-1' }) },
    maxSteps: 6,
    onEvent,
    onTurn,
  });
  chat.subscribe(renderThread);
  renderThread();
}

/** What the lowering changed so the provider accepts the thread, from its report. */
function renderReport() {
  try {
    const { report } = chat.lower(lowerOptions());
    const notes = [...report.repairs.map((r) => `repair ${r.code} (turn ${r.turn}): ${r.message}`), ...report.ids.map((m) => `id ${m.from} → ${m.to}`)];
    $('chat-report').textContent = notes.length ? notes.join('\n') : `no repairs, no id mappings for ${report.provider}`;
  } catch (e) {
    $('chat-report').textContent = `${e.code}: ${e.message}`;
  }
}

async function send() {
  if (chat.status !== 'ready' && chat.status !== 'error') return;
  const typed = $('chat-input').value.trim() ? parseInput($('chat-input').value, { catalog }) : [];
  const parts = [...typed, ...pending];
  if (parts.length === 0) return;
  $('chat-send').disabled = true;
  $('chat-stop').disabled = false;
  try {
    let arbiter;
    if ($('chat-skill').checked) {
      arbiter = new Arbiter(buildSkillRegistry([SPEC], { tools: ['search'] }));
      arbiter.start('chat', 'research', null);
      skillState(arbiter);
    }
    // The message is stored first (commands and mentions resolved), then answered: each
    // run takes the panel's provider, model and mock settings as they are now.
    const run = chat.send({ role: 'user', parts }, { adapter: adapter(), settings: lowerOptions(), ...(arbiter ? { arbiter, lane: 'chat' } : {}) });
    $('chat-input').value = '';
    pending = [];
    renderChips();
    stepStart = performance.now();
    const out = await run;
    renderStats();
    renderReport();
    if (arbiter) skillState(arbiter);
    if (out.stop === 'error') status(`${out.error.code}: ${out.error.message}`, 'error');
    else status(`${out.stop} after ${out.steps} step${out.steps === 1 ? '' : 's'}${out.usage?.input_tokens ? ` · ${out.usage.input_tokens} in / ${out.usage.output_tokens} out tokens` : ''}`, out.stop);
  } catch (e) {
    status(`${e.code ?? 'Error'}: ${e.message}`, 'error');
  } finally {
    $('chat-send').disabled = false;
    $('chat-stop').disabled = true;
    window.promptloomChatIdle = true;
  }
}

function skillState(arbiter) {
  const run = arbiter.run('chat');
  $('chat-skill-state').textContent = run ? `skill ${run.skill}: ${run.status} in ${run.state} (step ${run.step})` : '';
}

$('chat-send').onclick = () => {
  window.promptloomChatIdle = false;
  send();
};
$('chat-stop').onclick = () => chat.stop();
$('chat-input').onkeydown = (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    $('chat-send').click();
  }
};
$('chat-ref').onclick = () => {
  pending.push({ type: 'file-ref', ref: { kind: 'path', path: 'src/lib/foo.ts', range: { start: 2, end: 4 } } });
  renderChips();
};
$('chat-attach').onchange = async () => {
  const f = $('chat-attach').files[0];
  if (!f) return;
  pending.push({ type: 'file-attachment', data: new Uint8Array(await f.arrayBuffer()), mime: f.type || 'application/octet-stream', name: f.name });
  renderChips();
  $('chat-attach').value = '';
};
$('chat-clear').onclick = async () => {
  if (chat.status !== 'ready' && chat.status !== 'error') return;
  SESSION = `chat-${Date.now()}`;
  localStorage.setItem('promptloom-chat-session', SESSION);
  await openChat(SESSION);
  status('');
  $('chat-skill-state').textContent = '';
};

await openChat(SESSION);
window.promptloomChatIdle = true;
window.promptloomChatReady = true;
