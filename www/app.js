// The demo: builds a user message from the form, lowers it with promptloom's browser build,
// and shows the body and the report. File-ref contents come from the form (the host's
// resolver in a real editor would read the workspace).
import { lower } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
const parts = [];
const files = new Map(); // path -> contents, for the resolver

function describe(p) {
  switch (p.type) {
    case 'text': return `text: ${p.text.slice(0, 60)}`;
    case 'file-ref': return `file-ref: ${p.ref.path}${p.ref.range ? `:${p.ref.range.start}-${p.ref.range.end}` : ''}`;
    case 'file-attachment': return `file-attachment: ${p.name} (${p.mime || 'unknown type'}, ${p.data.length} bytes)`;
    case 'editor-context': return `editor-context: ${p.kind}${p.source ? ` from ${p.source}` : ''}`;
    default: return p.type;
  }
}

function renderParts() {
  const ol = $('parts');
  ol.replaceChildren();
  parts.forEach((p, i) => {
    const li = document.createElement('li');
    li.textContent = describe(p);
    const rm = document.createElement('button');
    rm.type = 'button';
    rm.textContent = '×';
    rm.title = 'remove';
    rm.onclick = () => { parts.splice(i, 1); renderParts(); };
    li.append(rm);
    ol.append(li);
  });
}

$('add-ref').onclick = () => {
  const path = $('ref-path').value.trim();
  const start = Number($('ref-start').value);
  const end = Number($('ref-end').value);
  files.set(path, $('ref-content').value);
  parts.push({ type: 'file-ref', ref: { kind: 'path', path, range: { start, end } } });
  renderParts();
};

$('attach').onchange = async (ev) => {
  const file = ev.target.files[0];
  if (!file) return;
  const data = new Uint8Array(await file.arrayBuffer());
  parts.push({ type: 'file-attachment', data, mime: file.type, name: file.name, size: file.size });
  renderParts();
  ev.target.value = '';
};

$('add-ctx').onclick = () => {
  let payload;
  try {
    payload = JSON.parse($('ctx-payload').value);
  } catch {
    payload = $('ctx-payload').value;
  }
  parts.push({ type: 'editor-context', kind: $('ctx-kind').value, source: $('ctx-source').value || undefined, payload, emitted_at: Date.now() });
  renderParts();
};

function show(out) {
  $('status').className = '';
  $('status').textContent = `${out.body.length} characters`;
  $('body').textContent = JSON.stringify(out.json(), null, 2);
  const tbody = $('report').querySelector('tbody');
  tbody.replaceChildren();
  out.report.blocks.forEach((b, i) => {
    const tr = document.createElement('tr');
    for (const v of [i, b.part, b.rule, b.mime ?? '']) {
      const td = document.createElement('td');
      td.textContent = String(v);
      tr.append(td);
    }
    tbody.append(tr);
  });
  const ul = $('warnings');
  ul.replaceChildren();
  for (const d of out.report.dropped) {
    const li = document.createElement('li');
    li.textContent = `part ${d.part} dropped (${d.rule}): ${d.reason}`;
    ul.append(li);
  }
  for (const w of out.report.warnings) {
    const li = document.createElement('li');
    li.textContent = `${w.code}${w.part === null ? '' : ` (part ${w.part})`}: ${w.message}`;
    ul.append(li);
  }
}

$('lower').onclick = async () => {
  const text = $('text').value;
  const message = {
    role: 'user',
    parts: [...(text ? [{ type: 'text', text }] : []), ...parts],
    metadata: { schema_version: 1 },
  };
  try {
    const out = await lower(message, {
      provider: $('provider').value,
      system: $('system').value || undefined,
      resolve: (req) => (req.type === 'file' ? files.get(req.ref.path) ?? null : null),
    });
    show(out);
  } catch (e) {
    $('status').className = 'error';
    $('status').textContent = `${e.code ?? 'Error'}: ${e.message}`;
    $('body').textContent = '';
  }
};

window.promptloomReady = true;
