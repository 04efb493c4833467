// An edge Worker that imports promptloom as a Worker bundle would (the "workerd" export) and
// lowers the message it is sent. The resolver answers from the table in the request.
import { lower, PromptloomError } from 'promptloom';

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
  async fetch(request) {
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
