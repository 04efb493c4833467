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
