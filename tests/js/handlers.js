// The `promptloom:core/handlers` import of the component under jco (mapped with
// `--map promptloom:core/handlers=…/handlers.js`): each test sets `host` to its handlers,
// its clock and its waits. An error answer is thrown as `{ payload }` (jco's result form).
export const host = {
  handlers: {},
  now: () => Date.now(),
  sleeps: [],
};

export function invoke(contract, version, input, context) {
  const h = host.handlers[`${contract}@${version}`] ?? host.handlers[contract];
  if (!h) throw { payload: JSON.stringify({ code: 'NoHandler', message: `no handler for ${contract}`, retryable: false }) };
  const out = h(JSON.parse(input), JSON.parse(context));
  if (out && out.fail) throw { payload: JSON.stringify(out.fail) };
  return JSON.stringify(out);
}

export function nowMs() {
  return host.now();
}

export function sleepMs(ms) {
  host.sleeps.push(ms);
}

// What agent and artifact runs ask of the host: each test sets `host.send(provider, body,
// step)` (bytes back), `host.tools` (name → function of the call; a throw is a failure),
// `host.complete(request)` and `host.execute(executor, input)`.
host.send = null;
host.tools = {};
host.complete = null;
host.execute = null;

export function sendRequest(provider, body, step) {
  try {
    return host.send(provider, body, step);
  } catch (e) {
    throw { payload: String(e && e.message ? e.message : e) };
  }
}

export function callTool(name, call) {
  const t = host.tools[name];
  if (!t) return undefined;
  try {
    return { tag: 'ok', val: JSON.stringify(t(JSON.parse(call)) ?? null) };
  } catch (e) {
    return { tag: 'err', val: String(e && e.message ? e.message : e) };
  }
}

export function complete(request) {
  try {
    return JSON.stringify(host.complete(JSON.parse(request)));
  } catch (e) {
    throw { payload: String(e && e.message ? e.message : e) };
  }
}

export function execute(executor, input) {
  try {
    return JSON.stringify(host.execute(executor, JSON.parse(input)) ?? null);
  } catch (e) {
    throw { payload: String(e && e.message ? e.message : e) };
  }
}
