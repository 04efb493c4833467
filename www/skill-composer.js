// The Skill Composer panel: pick a skill from the library's stores, fill its parameters in a
// form generated from its parameter schema, compose, and see the prompt with each section's
// source artifact, the subgraph shape and the invocation record (stored beside the turn in
// the demo's message store). A stored invocation can be replayed against the skill as it is
// now: the prompt is proven byte-identical, or each change is named.
import { openSkillStore, openMessageStore, SkillCatalog, compose, verifyInvocation } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
const workspace = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-workspace' });
const account = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-account' });
const catalog = new SkillCatalog(workspace, account);
const messages = await openMessageStore({ backend: 'indexeddb', name: 'promptloom-demo-skill-runs' });
let skill = null;

/** The demo skill: a framing template with a loop and conditionals, descriptions, examples, an approach. */
const DEMO = {
  name: 'Release Notes Writer',
  description: 'Writes release notes for a product version from its merged changes.',
  version: '1.4.0',
  tags: ['writing', 'release'],
  trigger_phrases: ['draft the release notes'],
  metadata: {
    framing: { artifact: 'Notes Framing' },
    parameters: {
      type: 'object',
      required: ['product', 'version'],
      properties: {
        product: { type: 'string', minLength: 1, description: 'Product name' },
        version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$', description: 'MAJOR.MINOR.PATCH' },
        audience: { enum: ['developers', 'customers'], default: 'developers' },
        breaking: { type: 'boolean', default: false, description: 'The release has breaking changes' },
        changes: { type: 'array', items: { type: 'string' }, default: ['Added offline mode', 'Fixed the sync crash'] },
      },
    },
    tool_surface: ['search_prs', 'get_pr', 'post_comment'],
    interrupts: [{ name: 'on_ambiguous_input', description: 'Ask which changes belong to the release' }, 'before_write'],
    output_schema: { type: 'object', required: ['title', 'body'] },
    max_tool_calls: 8,
  },
  artifacts: [
    { kind: 'prompt_template', name: 'Notes Framing', content: 'You write the release notes for {{ product }} {{ version }} for {{ audience }}.\n{% if breaking %}Lead with the breaking changes.\n{% endif %}Changes:\n{% for c in changes %}{{ loop.index }}. {{ c }}\n{% endfor %}' },
    { kind: 'description', name: 'Style guide', content: 'Use short sentences; start each item with a verb in the past tense.', metadata: { include_when: 'always' } },
    { kind: 'description', name: 'Customer wording', content: 'Describe what customers can now do, not which module changed.', metadata: { include_when: { parameter: 'audience', equals: 'customers' } } },
    { kind: 'description', name: 'Workspace conventions', content: 'Titles read "<Product> <version> — <summary>".', metadata: { include_when: { scope: 'workspace' } } },
    { kind: 'example', name: 'Developer notes', content: 'Input: 1. Retry on 429\nOutput: {"title": "Acme 2.3.1 — steadier uploads", "body": "- Retried uploads after rate limits."}', metadata: { tags: ['developers'] } },
    { kind: 'example', name: 'Customer notes', content: 'Input: 1. Bulk export\nOutput: {"title": "Acme 3.0.0 — export everything", "body": "- You can now export all projects at once."}', metadata: { tags: ['customers'] } },
    { kind: 'approach', name: 'Gather then write', content: 'Look up each pull request, then write.', metadata: { tools: ['search_prs', 'get_pr'] } },
  ],
};

function status(text, error = false) {
  $('sc-status').textContent = text;
  $('sc-status').className = error ? 'error' : '';
}

const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};

async function reload(select) {
  const list = await catalog.list();
  $('sc-skill').replaceChildren(el('option', { value: '', textContent: '—' }), ...list.map((s) => el('option', { value: s.name, textContent: `${s.name} (${s.scope})` })));
  if (select) $('sc-skill').value = select;
}

/** One input per parameter of the schema (enum → select, boolean → checkbox, number → number, string → text, else JSON). */
function field(name, schema, required) {
  const label = el('label', {}, `${name}${required ? ' *' : ''}${schema.description ? ` — ${schema.description}` : ''}`);
  let input;
  if (Array.isArray(schema.enum)) {
    input = el('select', {}, ...schema.enum.map((v) => el('option', { value: JSON.stringify(v), textContent: String(v) })));
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
    input.dataset.kind = 'json';
  } else if (schema.type === 'boolean') {
    input = el('input', { type: 'checkbox', checked: schema.default === true });
    input.dataset.kind = 'boolean';
  } else if (schema.type === 'integer' || schema.type === 'number') {
    input = el('input', { type: 'number', value: schema.default ?? '' });
    input.dataset.kind = 'number';
  } else if (schema.type === 'string' || schema.type === undefined) {
    input = el('input', { value: schema.default ?? '' });
    input.dataset.kind = 'string';
  } else {
    input = el('textarea', { rows: 3, value: schema.default !== undefined ? JSON.stringify(schema.default, null, 1) : '' });
    input.dataset.kind = 'json';
  }
  input.name = name;
  label.append(input);
  return label;
}

function buildForm() {
  const props = skill?.metadata?.parameters?.properties ?? {};
  const required = new Set(skill?.metadata?.parameters?.required ?? []);
  const fields = Object.entries(props).map(([n, s]) => field(n, s ?? {}, required.has(n)));
  $('sc-params').replaceChildren(el('legend', { textContent: 'Parameters' }), ...(fields.length ? fields : [el('p', { className: 'hint', textContent: 'This skill declares no parameters.' })]));
  $('sc-compose').disabled = !skill;
}

function parameters() {
  const out = {};
  for (const input of $('sc-params').querySelectorAll('[name]')) {
    const k = input.dataset.kind;
    if (k === 'boolean') out[input.name] = input.checked;
    else if (input.value === '') continue;
    else if (k === 'number') out[input.name] = Number(input.value);
    else if (k === 'json') out[input.name] = JSON.parse(input.value);
    else out[input.name] = input.value;
  }
  return out;
}

const list = (v) => v.split(',').map((s) => s.trim()).filter(Boolean);

function showComposition(c) {
  $('sc-prompt').replaceChildren(
    ...c.prompt.sections.map((s) => {
      const box = el('div', { className: `sc-section ${s.kind}` });
      box.dataset.kind = s.kind;
      const src = s.artifact ? `${s.artifact.kind} · ${s.artifact.name}` : s.kind === 'heading' ? 'fixed header' : s.kind === 'request' ? 'the invocation' : 'prose framing';
      box.dataset.source = s.artifact ? s.artifact.name : '';
      box.append(el('span', { className: 'sc-source', textContent: `${src} · ~${s.tokens} tokens` }), el('div', { textContent: s.text }));
      return box;
    }),
  );
  const g = c.subgraph;
  $('sc-subgraph').replaceChildren(
    el('p', { textContent: `${g.kind} subgraph (decided by ${g.decided_by}); tools: ${g.tool_availability.map((t) => t.name).join(', ') || 'none'}; exit: ${c.exit_condition.kind}${c.exit_condition.max_tool_calls ? `, at most ${c.exit_condition.max_tool_calls} tool calls` : ''}` }),
    el('ol', {}, ...g.nodes.map((n) => {
      const li = el('li', { textContent: n.name ? `${n.id} (${n.name})` : n.id });
      li.dataset.node = n.id;
      if (n.tools.length) li.append(el('span', { className: 'tag', textContent: n.tools.join(', ') }));
      for (const i of n.interrupts) li.append(el('span', { className: 'tag', textContent: `interrupt: ${i}` }));
      return li;
    })),
    el('p', { textContent: g.edges.map((e) => `${e.from} → ${e.to} (${e.on})`).join(' · ') }),
  );
  $('sc-record').textContent = JSON.stringify(c.invocation_record, null, 2);
}

$('sc-skill').addEventListener('change', async () => {
  const name = $('sc-skill').value;
  const entry = name ? await catalog.get(name) : null;
  if (entry) delete entry.scope;
  skill = entry;
  buildForm();
  status(skill ? `${skill.name} ${skill.version}: ${skill.artifacts.length} artifacts` : '');
});

$('sc-demo').addEventListener('click', async () => {
  if (!(await workspace.getByName(DEMO.name))) await workspace.create(DEMO);
  catalog.refresh?.();
  await reload(DEMO.name);
  $('sc-skill').dispatchEvent(new Event('change'));
});

$('sc-reload').addEventListener('click', () => reload($('sc-skill').value));

$('sc-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!skill) return;
  const request = {
    skill_package: skill,
    user_request: $('sc-request').value,
    thread_id: 'demo-thread',
    channel_id: $('sc-channel').value || null,
    model: $('sc-model').value || undefined,
    available_tools: list($('sc-tools').value),
    caller_capabilities: list($('sc-caps').value),
    now: new Date().toISOString(),
  };
  let c;
  try {
    request.parameters = parameters();
    c = await compose(request);
  } catch (e) {
    $('sc-prompt').replaceChildren();
    $('sc-subgraph').replaceChildren();
    $('sc-record').textContent = e.details?.invocation_record ? JSON.stringify(e.details.invocation_record, null, 2) : '';
    if (e.details?.invocation_record) await messages.recordInvocation(e.details.invocation_record);
    const more = e.details?.violations ? `\n${e.details.violations.map((v) => `${v.instance_path || '/'}: ${v.message}`).join('\n')}` : '';
    status(`${e.code ?? 'Error'}: ${e.message}${more}`, true);
    return;
  }
  showComposition(c);
  await messages.recordInvocation(c.invocation_record);
  const n = (await messages.invocations('demo-thread')).length;
  status(`composed ${c.prompt.text.length} characters from ${c.used_artifacts.length} artifacts; ${n} invocation record${n === 1 ? '' : 's'} in this thread`);
});

$('sc-verify').addEventListener('click', async () => {
  // The last successful record of the thread, replayed against the skill as stored now.
  const records = (await messages.invocations('demo-thread')).filter((r) => r.outcome === 'success');
  const last = records.at(-1);
  const out = $('sc-replay');
  if (!last) {
    out.textContent = 'No successful invocation is stored yet: compose first.';
    return;
  }
  try {
    const store = (await workspace.get(last.skill_id)) ? workspace : account;
    const r = await verifyInvocation(last, { store });
    out.className = r.identical ? '' : 'error';
    out.textContent = r.identical
      ? `identical: the prompt recomposes byte for byte (${r.prompt_hash.slice(0, 19)}…)`
      : `changed: ${r.changes.map((c) => `${c.kind} ${c.change ?? ''} ${c.name ?? c.id ?? c.code ?? ''}`.replace(/\s+/g, ' ').trim()).join('; ')}`;
  } catch (e) {
    out.className = 'error';
    out.textContent = `${e.code ?? 'Error'}: ${e.message}`;
  }
});

await reload();
window.promptloomSkillComposerReady = true;
