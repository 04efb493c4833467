// An edge Worker that imports promptloom as a Worker bundle would (the "workerd" export) and
// lowers the message it is sent. The resolver answers from the table in the request.
import * as pl from 'promptloom';
import { conformance } from '../store-conformance.mjs';

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
