// The four providers side by side: one short conversation (instructions, a question with a
// code selection, a tool call and its result, a follow-up) lowered for each provider with
// prompt caching on. Each column shows the body's bytes, the cached prefix the previous
// request already sent (report.cache.prefix_bytes) shaded, and the keys only that provider's
// body has highlighted. The bodies and the report are the package's; this file only lays
// them out.
import { lowerConversation, providers } from '../pkg/src/composer-web.js';

const $ = (id) => document.getElementById(id);
export const TURNS = [
  { role: 'system', parts: [{ type: 'text', text: 'You are a careful code reviewer.' }] },
  {
    role: 'user',
    parts: [
      { type: 'text', text: 'Why does f return undefined?' },
      { type: 'editor-context', kind: 'selection', source: 'editor-1', payload: { path: 'src/lib/foo.ts', text: 'const y = g(x);' } },
    ],
  },
  { role: 'assistant', parts: [{ type: 'tool-call', id: 'call_1', name: 'read_file', input: { path: 'src/lib/foo.ts' } }] },
  { role: 'tool', parts: [{ type: 'tool-result', call_id: 'call_1', output: 'export function f(x) {\n  const y = g(x);\n}' }] },
  { role: 'user', parts: [{ type: 'text', text: 'And how do I fix it?' }] },
];
export const TOOLS = [{ name: 'read_file', description: 'Reads a workspace file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
export const MODELS = { anthropic: 'claude-sonnet-4-5', 'openai-chat': 'gpt-5', 'openai-responses': 'gpt-5', gemini: 'gemini-2.5-pro' };
const enc = new TextEncoder();

/**
 * The body pretty-printed, one entry per line with the byte offset its first token has in
 * the compact body (so the cached prefix can be shaded line by line) and the key it starts
 * with. Null when re-serialising does not give the body's own bytes back.
 */
function lines(body) {
  const value = JSON.parse(body);
  if (JSON.stringify(value) !== body) return null;
  const out = [];
  let at = 0; // bytes of the compact body written so far
  const push = (indent, text, compact, key) => {
    out.push({ text: '  '.repeat(indent) + text, at, key });
    at += enc.encode(compact).length;
  };
  const walk = (v, indent, lead, keyText, key, comma) => {
    const prefix = keyText === undefined ? '' : `${keyText}:`;
    if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v) ? v.map((x) => [undefined, x]) : Object.entries(v);
      const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
      if (entries.length === 0) return push(indent, `${prefix}${open}${close}${comma}`, `${lead}${prefix}${open}${close}`, key);
      push(indent, `${prefix}${open}`, `${lead}${prefix}${open}`, key);
      entries.forEach(([k, x], i) => walk(x, indent + 1, i > 0 ? ',' : '', k === undefined ? undefined : JSON.stringify(k), k ?? key, i < entries.length - 1 ? ',' : ''));
      push(indent, `${close}${comma}`, close, undefined);
    } else {
      push(indent, `${prefix}${JSON.stringify(v)}${comma}`, `${lead}${prefix}${JSON.stringify(v)}`, key);
    }
  };
  walk(value, 0, '', undefined, undefined, '');
  return at === enc.encode(body).length ? out : null;
}

/** Every key a body uses (at any depth). */
function keys(body) {
  const set = new Set();
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) set.add(k), walk(x);
  };
  walk(JSON.parse(body));
  return set;
}

function render() {
  const lowered = providers.map((provider) => {
    const { body, report } = lowerConversation(TURNS, { provider, model: MODELS[provider], tools: TOOLS, cache: true });
    return { provider, body, report };
  });
  const keySets = lowered.map((l) => keys(l.body));
  const grid = $('pv-grid');
  grid.replaceChildren();
  lowered.forEach((l, i) => {
    const own = new Set([...keySets[i]].filter((k) => !keySets.some((s, j) => j !== i && s.has(k))));
    const bytes = enc.encode(l.body).length;
    const prefix = l.report.cache?.prefix_bytes ?? 0;
    const col = document.createElement('div');
    col.className = 'pv-col';
    col.dataset.provider = l.provider;
    const head = document.createElement('h3');
    head.textContent = l.provider;
    const meta = document.createElement('p');
    meta.className = 'pv-meta';
    meta.textContent = `${bytes.toLocaleString('en')} bytes · cached prefix ${prefix.toLocaleString('en')} (${Math.round((100 * prefix) / bytes)} %) · ${own.size} keys of its own`;
    const pre = document.createElement('pre');
    const ls = lines(l.body);
    if (ls === null) pre.textContent = l.body;
    else {
      for (const line of ls) {
        const span = document.createElement('span');
        span.textContent = line.text + '\n';
        if (line.at < prefix) span.classList.add('cached');
        if (line.key !== undefined && own.has(line.key)) span.classList.add('own');
        pre.append(span);
      }
    }
    col.append(head, meta, pre);
    grid.append(col);
  });
  $('pv-summary').textContent = lowered.map((l) => `${l.provider} ${enc.encode(l.body).length} B`).join(' · ');
}

render();
window.promptloomProvidersReady = true;
