// The composer box: typed text with `/` and `@` completion from the command catalog, then
// submit (persisted in IndexedDB before anything is lowered) and the inspector's three
// views side by side: the user view (chips), the persisted shape, the model view.
import { CommandCatalog, parseInput, submit, openMessageStore, inspect } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
const input = $('compose-input');
const list = $('suggestions');

const catalog = new CommandCatalog();
catalog.register({ name: 'review', description: 'Review a file for issues', body: 'Review $1 for $2 issues.', argument_hint: '<file> [severity]', arguments: [{ name: 'file', required: true }, { name: 'severity' }], source: 'project' });
catalog.register({ name: 'explain', description: 'Explain something', body: 'Explain, step by step: $ARGUMENTS', source: 'project' });
catalog.register({ name: 'pdf', kind: 'skill', skill: 'pdf-tools', description: 'Use the PDF skill', source: 'skill' });

const store = await openMessageStore({ backend: 'indexeddb', name: 'promptloom-demo' });
const session = 'demo';

/** The token being typed at the caret: `/name` at the start, or `@…` after a space. */
function tokenAtCaret() {
  const upto = input.value.slice(0, input.selectionStart);
  const m = /(^|\s)([/@][^\s]*)$/.exec(upto);
  if (!m) return null;
  if (m[2][0] === '/' && upto.trimStart() !== m[2]) return null;
  return { text: m[2], start: upto.length - m[2].length, end: upto.length };
}

let rows = [];
let active = 0;
function renderSuggestions() {
  list.replaceChildren();
  list.hidden = rows.length === 0;
  rows.forEach((r, i) => {
    const li = document.createElement('li');
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', String(i === active));
    li.dataset.insert = r.insert;
    li.textContent = r.insert + (r.argument_hint ? ` ${r.argument_hint}` : '');
    const small = document.createElement('small');
    small.textContent = r.description ?? '';
    li.append(small);
    li.onmousedown = (e) => {
      e.preventDefault();
      choose(i);
    };
    list.append(li);
  });
}

function suggest() {
  const tok = tokenAtCaret();
  rows = tok ? catalog.complete(tok.text, { limit: 8 }) : [];
  // A token typed out in full needs no palette (and must not cover the buttons).
  if (rows.length === 1 && rows[0].insert === tok.text) rows = [];
  active = 0;
  renderSuggestions();
}

function choose(i) {
  const tok = tokenAtCaret();
  const row = rows[i];
  if (!tok || !row) return;
  const tail = row.insert.endsWith(':') ? '' : ' ';
  input.value = input.value.slice(0, tok.start) + row.insert + tail + input.value.slice(tok.end);
  const caret = tok.start + row.insert.length + tail.length;
  input.setSelectionRange(caret, caret);
  rows = [];
  renderSuggestions();
  input.focus();
}

input.addEventListener('input', suggest);
input.addEventListener('blur', () => {
  rows = [];
  renderSuggestions();
});
input.addEventListener('keydown', (e) => {
  if (list.hidden) {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      run();
    }
    return;
  }
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    e.preventDefault();
    active = (active + (e.key === 'ArrowDown' ? 1 : rows.length - 1)) % rows.length;
    renderSuggestions();
  } else if (e.key === 'Enter' || e.key === 'Tab') {
    e.preventDefault();
    choose(active);
  } else if (e.key === 'Escape') {
    rows = [];
    renderSuggestions();
  }
});

/** The host's answers: @selection is the editor-context payload from the form above. */
function payloadFromForm() {
  try {
    return JSON.parse($('ctx-payload').value);
  } catch {
    return $('ctx-payload').value;
  }
}

async function refreshCount() {
  $('history-count').textContent = `${(await store.list(session)).length} messages stored in IndexedDB`;
}

async function run() {
  const status = $('compose-status');
  try {
    const parts = parseInput(input.value, { catalog });
    const done = await submit({ role: 'user', parts }, {
      store,
      catalog,
      session,
      skills: ['pdf-tools'],
      mentions: {
        selection: () => ({ payload: payloadFromForm(), source: $('ctx-source').value || undefined }),
        open: () => [{ path: $('ref-path').value }],
        cursor: () => ({ line: 1 }),
      },
    });
    // Lower what was persisted: read it back from the store.
    const persisted = await store.get(done.id);
    const contents = $('ref-content').value;
    const views = await inspect(persisted, {
      provider: $('provider').value,
      store,
      resolve: (q) => (q.type === 'file' ? contents : null),
    });
    $('view-user').replaceChildren(...views.user.map((c) => {
      const li = document.createElement('li');
      li.dataset.type = c.type;
      li.textContent = c.label;
      if (c.detail) li.title = c.detail;
      return li;
    }));
    $('view-notes').replaceChildren(...[
      ...done.actions.map((a) => `host action: ${a.action}`),
      ...done.skills.map((s) => `skill to activate: ${s.name}`),
      ...done.warnings.map((w) => `${w.code}: ${w.message}`),
    ].map((t) => Object.assign(document.createElement('li'), { textContent: t })));
    $('view-persisted').textContent = JSON.stringify(views.persisted, null, 2);
    $('view-model').textContent = 'error' in views.model ? `${views.model.error.code}: ${views.model.error.message}` : JSON.stringify(views.model.body, null, 2);
    status.className = '';
    status.textContent = `submitted ${done.id}`;
    input.value = '';
    await refreshCount();
  } catch (e) {
    status.className = 'error';
    status.textContent = `${e.code ?? 'Error'}: ${e.message}`;
  }
}

$('compose-submit').onclick = run;
await refreshCount();
window.promptloomComposerReady = true;
