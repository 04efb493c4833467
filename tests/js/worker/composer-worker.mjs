// An edge Worker that imports the `promptloom/composer` entry as a Worker bundle would and
// runs the composer suite, or composes the request it is sent.
import { hardeningConformance } from '../hardening-conformance.mjs';
import * as pl from 'promptloom/composer';
import { composerConformance } from '../composer-conformance.mjs';
import { arbiterConformance } from '../arbiter-conformance.mjs';

let stores = 0;

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/composer-conformance') {
      // The composer suite inside workerd, on memory and on the Worker's KV namespace.
      const { fx, backend } = await request.json();
      const now = () => '2026-11-22T10:00:00Z';
      const kv = backend === 'kv';
      const skills = () => pl.openSkillStore(kv ? { backend: env.CHAT, name: `composer-${stores++}`, now } : { now });
      const messages = () => pl.openMessageStore(kv ? { backend: env.CHAT, name: `composer-msg-${stores++}` } : {});
      return Response.json(await composerConformance(pl, skills, messages, fx));
    }
    if (url.pathname === '/hardening') {
      // Inputs that once killed the instance, trap recovery and the boundary suite.
      return Response.json(await hardeningConformance(pl, await request.json()));
    }
    if (url.pathname === '/arbiter-conformance') {
      const { specs, staged } = await request.json();
      return Response.json(await arbiterConformance(pl, specs, staged));
    }
    try {
      return Response.json({ composition: pl.compose(await request.json()) });
    } catch (e) {
      return Response.json({ error: { code: e.code, message: e.message } }, { status: 400 });
    }
  },
};
