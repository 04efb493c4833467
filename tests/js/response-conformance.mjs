// One response suite for every JS host (Node, workerd, Chromium): each recorded-shape
// response through createResponseParser, whole and re-chunked (bytes and strings, split
// inside lines, UTF-8 sequences and JSON strings), through parseResponse, and hostile bytes
// that must end in coded errors while the instance keeps answering. It uses no Node API.

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function feed(pl, provider, pieces) {
  const p = pl.createResponseParser(provider);
  const events = [];
  for (const c of pieces) events.push(...p.push(c));
  events.push(...p.end());
  const turn = p.finish();
  const error = p.error;
  p.free();
  return { events, turn, error };
}

/** Deep equality of JSON values, whatever the order of object keys. */
function deepSame(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepSame(a[k], b[k]));
}

export function responseConformance(pl, { cases, objects }) {
  const results = [];
  const check = (name, ok, detail = '') => results.push({ name, ok: !!ok, detail: ok ? '' : String(detail).slice(0, 2000) });
  const enc = new TextEncoder();

  if (objects) {
    // A request that asked for JSON: the answer streams as object edits, in pieces of any
    // size, and ends whole in the turn's metadata.object.
    const bad = [];
    for (const c of objects) {
      for (const n of [1, 7, 64, c.stream.length]) {
        const p = pl.createResponseParser(c.provider, { request: c.request });
        let seen;
        let deltas = 0;
        for (let i = 0; i < c.stream.length; i += n) {
          for (const e of p.push(c.stream.slice(i, i + n))) if (e.type === 'object-delta') (seen = e.object), deltas++;
        }
        p.end();
        const turn = p.finish();
        if (!deepSame(p.object, c.object) || !deepSame(turn.metadata.object, c.object) || seen !== p.object || deltas === 0) bad.push(`${c.name} (pieces of ${n}): ${JSON.stringify(p.object).slice(0, 300)}`);
        p.free();
      }
      const whole = pl.parseResponse(c.provider, c.stream, { request: c.request });
      if (!deepSame(whole.metadata.object, c.object)) bad.push(`${c.name} (parseResponse): ${JSON.stringify(whole.metadata.object).slice(0, 300)}`);
    }
    check('a JSON answer streams as object edits and ends in metadata.object', objects.length >= 5 && bad.length === 0, bad.join('\n'));
  }

  let bad = [];
  for (const c of cases) {
    const bytes = enc.encode(c.body);
    const runs = {
      whole: [bytes],
      string: [c.body],
      every3: Array.from({ length: Math.ceil(bytes.length / 3) }, (_, i) => bytes.subarray(i * 3, i * 3 + 3)),
      strings5: Array.from({ length: Math.ceil(c.body.length / 5) }, (_, i) => c.body.slice(i * 5, i * 5 + 5)),
    };
    for (const [how, pieces] of Object.entries(runs)) {
      const got = feed(pl, c.provider, pieces);
      if (!same(got.events, c.expected.events) || !same(got.turn, c.expected.turn)) bad.push(`${c.name} (${how}): ${JSON.stringify(got.events).slice(0, 400)}`);
      const code = got.error ? got.error.code : null;
      if (code !== (c.expected.error ? c.expected.error.code : null)) bad.push(`${c.name} (${how}): error ${code}`);
    }
  }
  check('every recorded response gives the recorded events and turn, whole and re-chunked', bad.length === 0, bad.join('\n'));

  bad = [];
  for (const c of cases) {
    const fatal = c.expected.error && c.expected.error.code !== 'InvalidToolInput' ? c.expected.error.code : null;
    try {
      const turn = pl.parseResponse(c.provider, c.body);
      if (fatal) bad.push(`${c.name}: no error (wanted ${fatal})`);
      else if (!same(turn, c.expected.turn)) bad.push(`${c.name}: ${JSON.stringify(turn)}`);
    } catch (e) {
      if (!(e instanceof pl.PromptloomError) || e.code !== fatal) bad.push(`${c.name}: ${e.code}: ${e.message}`);
    }
  }
  check('parseResponse gives the turn, or throws the provider error with its code', bad.length === 0, bad.join('\n'));

  // The turn goes back: appended to a conversation and lowered for its provider.
  bad = [];
  for (const c of cases.filter((x) => !x.expected.error)) {
    const conv = new pl.Conversation();
    conv.append({ role: 'user', parts: [{ type: 'text', text: 'go' }] });
    conv.append(c.expected.turn);
    try {
      JSON.parse(conv.lower({ provider: c.provider }).body);
    } catch (e) {
      bad.push(`${c.name}: ${e.code}: ${e.message}`);
    }
    conv.free();
  }
  check('each final turn is accepted back by a Conversation and lowered', bad.length === 0, bad.join('\n'));

  // Hostile input: wrong types are coded errors; random bytes end in coded events.
  bad = [];
  const p = pl.createResponseParser('anthropic');
  for (const v of [null, undefined, 42, {}, [1, 2], () => 1, 10n]) {
    try {
      p.push(v);
      bad.push(`push(${typeof v}) did not throw`);
    } catch (e) {
      if (!(e instanceof pl.PromptloomError) || e.code !== 'InvalidOptions') bad.push(`push(${typeof v}): ${e}`);
    }
  }
  for (const v of ['bedrock', null, 7]) {
    try {
      pl.createResponseParser(v);
      bad.push(`createResponseParser(${v}) did not throw`);
    } catch (e) {
      if (!(e instanceof pl.PromptloomError) || e.code !== 'InvalidOptions') bad.push(`createResponseParser(${v}): ${e}`);
    }
  }
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const provs = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];
  for (let round = 0; round < 300; round++) {
    const c = cases[Math.floor(rnd() * cases.length)];
    const b = enc.encode(c.body);
    for (let k = 0; k < 6; k++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
    const got = feed(pl, provs[round % 4], [b.subarray(0, Math.floor(rnd() * b.length)), b.subarray(Math.floor(b.length / 2))]);
    if (!got.turn || got.turn.role !== 'assistant') bad.push(`round ${round}: no turn`);
    for (const ev of got.events) if (ev.type === 'error' && typeof ev.code !== 'string') bad.push(`round ${round}: an error event without a code`);
  }
  const again = feed(pl, cases[0].provider, [enc.encode(cases[0].body)]);
  if (!same(again.turn, cases[0].expected.turn)) bad.push('the instance answers differently after hostile input');
  check('hostile chunks end in coded errors; the instance answers the same afterwards', bad.length === 0, bad.join('\n'));
  return results;
}
