// An edge Worker that imports promptloom as a Worker bundle would (the "workerd" export) and
// lowers the message it is sent. The resolver answers from the table in the request.
import { hardeningConformance } from '../hardening-conformance.mjs';
import { faultConformance, faultyKv } from '../fault-conformance.mjs';
import * as pl from 'promptloom';
import { conformance } from '../store-conformance.mjs';
import { skillConformance } from '../skill-conformance.mjs';
import { conversationConformance } from '../conversation-conformance.mjs';
import { responseConformance } from '../response-conformance.mjs';
import { chatConformance } from '../chat-conformance.mjs';

const { lower, PromptloomError } = pl;
let stores = 0;

function resolverFor(table) {
  return (req) => {
    const a = table[String(req.part)];
    if (!a) return null;
    if ('error' in a) throw new Error(a.error);
    if ('text' in a) return a.text;
    if ('bytes' in a) {
      const bin = atob(a.bytes);
      const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
      return a.mime ? { bytes, mime: a.mime } : bytes;
    }
    return a.payload;
  };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/conformance') {
      // The message-store suite inside workerd: the in-memory backend, and the Worker's
      // own KV namespace passed as it is (each store under its own name).
      const { v1, backend } = await request.json();
      const open = () => pl.openMessageStore(backend === 'kv' ? { backend: env.CHAT, name: `store-${stores++}` } : { backend: 'memory' });
      return Response.json(await conformance(pl, open, v1));
    }
    if (url.pathname === '/chat') {
      // The Chat suite inside workerd, answered by the mock provider the test runs (the
      // Worker's own fetch); threads in memory, then in the Worker's KV namespace.
      const { mock, backend } = await request.json();
      const base = (provider) => (provider === 'anthropic' ? mock : provider === 'gemini' ? `${mock}/v1beta` : `${mock}/v1`);
      const openStore = (name) => pl.openMessageStore(backend === 'kv' ? { backend: env.CHAT, name: `${name}-${stores++}` } : { backend: 'memory', name });
      const connect = (provider, headers = {}) => ({ adapter: pl.createAdapter({ provider, apiKey: 'k', baseURL: base(provider), model: 'mock-model', headers, retry: { maxRetries: 0 } }) });
      return Response.json(await chatConformance(pl, { openStore, connect }, backend === 'kv' ? { providers: ['openai-responses'] } : {}));
    }
    if (url.pathname === '/conversation') {
      // The conversation suite inside workerd; threads in the Worker's KV namespace.
      const cases = await request.json();
      const open = () => pl.openMessageStore({ backend: env.CHAT, name: `thread-${stores++}` });
      return Response.json(await conversationConformance(pl, cases, open));
    }
    if (url.pathname === '/response') {
      // The response suite inside workerd, then a conversation streamed through the adapter
      // from the mock provider the test runs (the Worker's own fetch).
      const { cases, mock } = await request.json();
      const results = responseConformance(pl, { cases });
      const conv = new pl.Conversation({ options: { provider: 'anthropic', model: 'm', maxOutputTokens: 64, stream: true } });
      conv.append({ role: 'user', parts: [{ type: 'text', text: 'from the edge' }] });
      const stream = pl.createAdapter({ provider: 'anthropic', apiKey: 'k', baseURL: mock }).send(conv.lower().body);
      const types = [];
      for await (const ev of stream) types.push(ev.type);
      const turn = await stream.turn;
      results.push({ name: 'the adapter streams a reply from the mock provider in workerd', ok: types.includes('text-delta') && types.at(-1) === 'finish' && /from the edge/.test(await stream.text()), detail: JSON.stringify({ types, turn }) });
      return Response.json(results);
    }
    if (url.pathname === '/skill-conformance') {
      // The skill-store suite inside workerd, on memory and on the Worker's KV namespace.
      const { seed, backend } = await request.json();
      const now = () => Date.parse('2026-11-22T08:00:00Z');
      const open = () => pl.openSkillStore(backend === 'kv' ? { backend: env.CHAT, name: `skills-${stores++}`, now } : { backend: 'memory', now });
      return Response.json(await skillConformance(pl, open, seed));
    }
    if (url.pathname === '/faults') {
      // The storage fault suite over the Worker's own KV namespace, each store under its own name.
      const open = (kind, f) => {
        const backend = faultyKv(env.CHAT, f);
        const name = `faults-${stores++}`;
        return kind === 'messages' ? pl.openMessageStore({ backend, name }) : pl.openSkillStore({ backend, name, now: () => Date.parse('2026-11-23T00:00:00Z') });
      };
      return Response.json(await faultConformance(pl, open));
    }
    if (url.pathname === '/hardening') {
      // Inputs that once killed the instance, trap recovery and the boundary suite.
      return Response.json(await hardeningConformance(pl, await request.json()));
    }
    if (url.pathname === '/lazy-composer') {
      // The composer entry imported lazily after promptloom (it takes over every call), with
      // the account store seeded from the package's system skills (their data module).
      const hi = { role: 'user', parts: [{ type: 'text', text: 'hi' }] };
      const before = lower(hi, { provider: 'anthropic' }).body;
      const acc = await pl.openSkillStore({ seed: true });
      const comp = await import('promptloom/composer');
      const spec = { name: 'one', description: 'One step.', initial_state: 'a', states: { a: { objective: 'A.', allowed_tools: [], transitions: [{ on: 'complete', to: 'done' }] }, done: { terminal: true } } };
      const registry = comp.buildSkillRegistry(await acc.skillSpecs(), { tools: ['choir.memory.query', 'choir.fs.read'] });
      return Response.json({ before, after: lower(hi, { provider: 'anthropic' }).body, valid: comp.validateSkillSpec(spec).ok, names: registry.names(), seeded: acc.seeded.status });
    }
    if (url.pathname === '/match') {
      // Phase 1 at the edge: a catalog in memory, matched per request.
      const { skills, query } = await request.json();
      const ws = await pl.openSkillStore();
      const acc = await pl.openSkillStore();
      for (const s of skills) await acc.create(s);
      return Response.json(await new pl.SkillCatalog(ws, acc).match(query));
    }
    const { message, options, resolve } = await request.json();
    try {
      const out = await lower(message, { ...options, resolve: resolverFor(resolve ?? {}) });
      return new Response(JSON.stringify({ body: out.body, report: out.report }), {
        headers: { 'content-type': 'application/json' },
      });
    } catch (e) {
      const error = e instanceof PromptloomError ? { code: e.code, message: e.message, details: e.details } : { code: 'NotPromptloom', message: String(e) };
      return new Response(JSON.stringify({ error }), { status: 400, headers: { 'content-type': 'application/json' } });
    }
  },
};
