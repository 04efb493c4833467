// An edge Worker that imports the `promptloom/composer` entry as a Worker bundle would and
// runs the composer suite, or composes the request it is sent.
import { hardeningConformance } from '../hardening-conformance.mjs';
import * as pl from 'promptloom/composer';
import { composerConformance } from '../composer-conformance.mjs';
import { arbiterConformance } from '../arbiter-conformance.mjs';
import { sessionConformance } from '../session-conformance.mjs';
import { gatewayConformance } from '../gateway-conformance.mjs';

/** The gateway's state objects: one per contract (or per test state), in this Worker. */
export class GatewayState extends pl.GatewayStateObject {}

/** A contract with a shared rate limit, for the two-Worker case. */
const QUOTA = {
  name: 'quota', version: '1', description: 'Counts.', owner: 'tests',
  input: { n: { type: 'integer', required: true } }, output: { n: 'integer' },
  policy: { idempotent: true, rate_limit: { per_user_per_min: 25 }, timeout_ms: 1000, budget: { p95_ms: 50, cost_usd: 0 } },
};

let stores = 0;

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/composer-conformance') {
      // The composer suite inside workerd, on memory and on the Worker's KV namespace.
      const { fx, backend } = await request.json();
      const now = () => Date.parse('2026-11-22T10:00:00Z');
      const kv = backend === 'kv';
      const skills = () => pl.openSkillStore(kv ? { backend: env.CHAT, name: `composer-${stores++}`, now } : { now });
      const messages = () => pl.openMessageStore(kv ? { backend: env.CHAT, name: `composer-msg-${stores++}` } : {});
      return Response.json(await composerConformance(pl, skills, messages, fx));
    }
    if (url.pathname === '/hardening') {
      // Inputs that once killed the instance, trap recovery and the boundary suite.
      return Response.json(await hardeningConformance(pl, await request.json()));
    }
    if (url.pathname === '/gateway-conformance') {
      // The gateway suite on the isolate's memory, or on Durable Objects (a fresh object
      // name per state the suite asks for).
      const { contracts, port, run } = await request.json();
      let n = 0;
      const state = port === 'durable-object' ? () => { const name = `${run}-${n++}`; return pl.durableObjectState(env.GATEWAY_STATE, { objectFor: () => name }); } : () => pl.memoryState();
      return Response.json(await gatewayConformance(pl, { contracts, state, label: `${port}: ` }));
    }
    if (url.pathname === '/gateway-quota') {
      // Calls of one user against a limit whose state is one Durable Object.
      const { from, count } = await request.json();
      const registry = new pl.ContractRegistry();
      registry.register(QUOTA);
      const gw = pl.createGateway({ registry, handlers: { quota: async ({ n }) => ({ n }) }, state: pl.durableObjectState(env.GATEWAY_STATE) });
      const codes = await Promise.all(Array.from({ length: count }, (_, i) => gw.call('quota', { n: from + i }, { surface: 'chat', user: 'same' }).then(() => 'ok', (e) => e.code)));
      return Response.json(codes);
    }
    if (url.pathname === '/session-conformance') {
      // Sessions and approvals on the isolate's memory, or on the Worker's KV namespace.
      const { specs, backend } = await request.json();
      const open = () => pl.openSkillStore(backend === 'kv' ? { backend: env.CHAT, name: `sessions-${stores++}` } : {});
      return Response.json(await sessionConformance(pl, specs, open));
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
