// The skill library panel: two IndexedDB skill stores (workspace and account) merged by a
// SkillCatalog; import a JSON package or a SKILL.md, search as you type (phase 1), edit a
// package (every problem listed), export SKILL.md.
import { openSkillStore, SkillCatalog, importPackage, importSkillMd, exportSkillMd, validateSkill } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
const workspace = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-workspace' });
const account = await openSkillStore({ backend: 'indexeddb', name: 'promptloom-demo-account' });
const catalog = new SkillCatalog(workspace, account);
const storeOf = { workspace, account };

const EXAMPLES = [
  {
    name: 'Consistency Checker',
    description: 'Analyzes workspace content for contradictions and inconsistencies across pages.',
    version: '1.0.0',
    tags: ['analysis', 'worldbuilding', 'quality'],
    source: 'system',
    intent_patterns: ['check consistency', 'find contradictions', 'verify facts'],
    trigger_phrases: ['are there any contradictions', 'check for inconsistencies'],
    metadata: { framing: { artifact: 'Check Prompt' }, parameters: { type: 'object', properties: { entity_name: { type: 'string' } }, required: ['entity_name'] } },
    artifacts: [
      { kind: 'description', name: 'Overview', content: 'Finds contradictions between pages.' },
      { kind: 'prompt_template', name: 'Check Prompt', content: 'Given the claims about "{{ entity_name }}", identify any contradictions.' },
    ],
  },
  { name: 'Summarize', description: 'Summarizes the open page in three sentences.', tags: ['writing'], intent_patterns: ['summarize page'], trigger_phrases: ['tl;dr'] },
  { name: 'Release Notes', description: 'Writes release notes from merged pull requests.', tags: ['git'], trigger_phrases: ['write release notes'] },
];

let selected = null; // { name, scope }

function status(text, error = false) {
  $('lib-status').textContent = text;
  $('lib-status').className = error ? 'error' : '';
}

function showProblems(problems) {
  $('lib-problems').replaceChildren(
    ...problems.map((p) => {
      const li = document.createElement('li');
      li.className = p.severity;
      li.textContent = `${p.path}: ${p.message}`;
      return li;
    }),
  );
}

function item(entry, rec) {
  const li = document.createElement('li');
  li.setAttribute('aria-selected', String(selected?.name === entry.name));
  li.dataset.name = entry.name;
  li.append(entry.name);
  const scope = document.createElement('span');
  scope.className = 'tag';
  scope.textContent = entry.scope + (entry.overrides ? ' (overrides account)' : '');
  li.append(scope);
  if (rec) {
    const t = document.createElement('span');
    t.className = `tag ${rec.tier}`;
    t.textContent = rec.tier === 'exact' ? `exact: ${rec.trigger ?? 'name'}` : `score ${rec.score}`;
    li.append(t);
  }
  const small = document.createElement('small');
  small.textContent = entry.description ?? '';
  li.append(small);
  li.addEventListener('click', () => open(entry.name));
  return li;
}

let renders = 0;
async function render() {
  // Typing fires a render per keystroke; only the latest one may write the page.
  const mine = ++renders;
  const q = $('lib-search').value.trim();
  const all = await catalog.list();
  let rows;
  if (q === '') rows = all.map((e) => [e, null]);
  else {
    const recs = await catalog.match(q, { k: 10 });
    const byName = new Map(all.map((e) => [e.name, e]));
    rows = recs.map((r) => [byName.get(r.name), r]).filter(([e]) => e);
  }
  if (mine !== renders) return;
  $('lib-list').replaceChildren(...rows.map(([e, r]) => item(e, r)));
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  status(q === '' ? plural(all.length, 'skill', 'skills') : `${plural(rows.length, 'match', 'matches')} for “${q}”`);
}

async function open(name) {
  const skill = await catalog.get(name);
  if (!skill) return;
  selected = { name, scope: skill.scope };
  const { scope: _, ...pkg } = skill;
  $('lib-editor').value = JSON.stringify(pkg, null, 2);
  for (const b of ['lib-save', 'lib-export', 'lib-delete']) $(b).disabled = false;
  $('lib-export-out').hidden = true;
  showProblems([]);
  await render();
}

async function importFile(file) {
  const text = await file.text();
  const scope = $('lib-scope').value;
  try {
    const { skill, ...rest } = file.name.endsWith('.md') ? importSkillMd(text, {}, { dir: file.name.replace(/\/?SKILL\.md$/i, '') || undefined }) : importPackage(text);
    await storeOf[scope].put(skill);
    await open(skill.name);
    showProblems(rest.problems ?? rest.warnings ?? []);
    status(`imported “${skill.name}” into the ${scope} store`);
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
    showProblems(e.details?.problems ?? []);
  }
}

$('lib-file').addEventListener('change', (ev) => {
  const f = ev.target.files?.[0];
  if (f) importFile(f);
});
$('lib-seed').addEventListener('click', async () => {
  // Names are unique per store: an example whose name the account store already has is
  // left out (putting it would be AlreadyExists).
  let added = 0;
  for (const pkg of EXAMPLES) {
    if (await account.getByName(pkg.name)) continue;
    await account.put(pkg);
    added++;
  }
  await render();
  status(`added ${added} example skill${added === 1 ? '' : 's'} to the account store`);
});
$('lib-search').addEventListener('input', () => render().catch((e) => status(`${e.code}: ${e.message}`, true)));
$('lib-editor').addEventListener('input', () => {
  try {
    showProblems(validateSkill(JSON.parse($('lib-editor').value)).problems);
  } catch {
    showProblems([{ path: '$', message: 'not valid JSON yet', severity: 'error' }]);
  }
});
$('lib-save').addEventListener('click', async () => {
  if (!selected) return;
  try {
    const pkg = JSON.parse($('lib-editor').value);
    await storeOf[selected.scope].put(pkg);
    await open(pkg.name);
    status(`saved “${pkg.name}” in the ${selected.scope} store`);
  } catch (e) {
    status(`${e.code ?? 'InvalidSkill'}: ${e.message}`, true);
    showProblems(e.details?.problems ?? []);
  }
});
$('lib-export').addEventListener('click', () => {
  try {
    const out = exportSkillMd(JSON.parse($('lib-editor').value));
    $('lib-export-out').textContent = out.text;
    $('lib-export-out').hidden = false;
    showProblems(out.dropped);
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
  }
});
$('lib-delete').addEventListener('click', async () => {
  if (!selected) return;
  const skill = await storeOf[selected.scope].getByName(selected.name);
  if (skill) await storeOf[selected.scope].delete(skill.id);
  const gone = selected;
  selected = null;
  $('lib-editor').value = '';
  for (const b of ['lib-save', 'lib-export', 'lib-delete']) $(b).disabled = true;
  await render();
  status(`deleted “${gone.name}” from the ${gone.scope} store`);
});

await render();
window.promptloomLibraryReady = true;
