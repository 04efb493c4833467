// An edge Worker that imports `promptloom/lower` (its "workerd" export): lowers the message
// it is sent, and runs the conversation and response suites inside workerd.
import * as pl from 'promptloom/lower';
import { conversationConformance } from '../conversation-conformance.mjs';
import { responseConformance } from '../response-conformance.mjs';
import { eventStreamConformance } from '../event-stream-conformance.mjs';

function resolverFor(table) {
  return (req) => {
    const a = table[String(req.part)];
    if (!a) return null;
    if ('error' in a) throw new Error(a.error);
    if ('text' in a) return a.text;
    if ('bytes' in a) {
      const bytes = Uint8Array.from(atob(a.bytes), (c) => c.charCodeAt(0));
      return a.mime ? { bytes, mime: a.mime } : bytes;
    }
    return a.payload;
  };
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/suites') {
      const { conversations, responses, objects, mock } = await request.json();
      const results = await conversationConformance(pl, conversations);
      results.push(...responseConformance(pl, { cases: responses }));
      results.push(...(await eventStreamConformance(pl, { cases: responses, objects })));
      const conv = new pl.Conversation({ options: { provider: 'anthropic', model: 'm', maxOutputTokens: 64, stream: true } });
      conv.append({ role: 'user', parts: [{ type: 'text', text: 'from the edge' }] });
      const stream = pl.createAdapter({ provider: 'anthropic', apiKey: 'k', baseURL: mock }).send(conv.lower().body);
      const text = await stream.text();
      results.push({ name: 'the adapter streams a reply from the mock provider', ok: /from the edge/.test(text), detail: text });
      return Response.json(results);
    }
    if (url.pathname === '/relay') {
      // The README's Worker: the page posts its message, the Worker lowers it, asks the
      // provider with the key only it holds, and relays the answer as an event stream.
      const { message, provider, mock } = await request.json();
      let lowered;
      try {
        lowered = pl.lower(message, { provider, model: 'mock-model', maxOutputTokens: 256, stream: true });
      } catch (e) {
        if (e instanceof pl.PromptloomError) return Response.json({ code: e.code, message: e.message }, { status: 400 });
        throw e;
      }
      const base = provider === 'anthropic' ? mock : provider === 'gemini' ? `${mock}/v1beta` : `${mock}/v1`;
      const adapter = pl.createAdapter({ provider, apiKey: 'worker-key', baseURL: base, model: 'mock-model', retry: { initialDelayMs: 5 } });
      return adapter.send(lowered, { signal: request.signal }).toResponse({ headers: { 'access-control-allow-origin': '*' } });
    }
    const { message, options, resolve } = await request.json();
    try {
      const out = await pl.lower(message, { ...options, resolve: resolverFor(resolve ?? {}) });
      return Response.json({ body: out.body, report: out.report });
    } catch (e) {
      return Response.json({ error: { code: e.code, message: e.message } }, { status: 400 });
    }
  },
};
