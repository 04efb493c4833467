// One event-stream suite for every JS host (Node, workerd, Chromium): each recorded response
// is answered to an adapter (its `fetch` gives the recorded bytes, as the provider would),
// relayed with `stream.toResponse()` and read back with `readEventStream()`; the page must
// see what the adapter saw — the same events, the same turn, the same error code — whole,
// re-chunked and cut. It uses no Node API.

/** Deep equality of JSON values, whatever the order of object keys. */
function deepSame(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepSame(a[k], b[k]));
}

/** Reads a ResponseStream whole: its events, and its turn or its error. */
async function drain(stream) {
  const events = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events, turn: await stream.turn, error: null };
  } catch (e) {
    return { events, turn: e.turn ?? null, error: e };
  }
}

/** A ReadableStream of `bytes` in pieces cut at `cuts`. */
function pieces(bytes, cuts) {
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i + 1 >= at.length) return c.close();
      c.enqueue(bytes.slice(at[i], at[i + 1]));
      i++;
    },
  });
}

async function bytesOf(response) {
  return new Uint8Array(await response.arrayBuffer());
}

export async function eventStreamConformance(pl, { cases, objects }) {
  const results = [];
  const check = (name, ok, detail = '') => results.push({ name, ok: !!ok, detail: ok ? '' : String(detail).slice(0, 2000) });
  const model = { anthropic: 'claude-sonnet-4-5', 'openai-chat': 'gpt-4.1', 'openai-responses': 'gpt-4.1', gemini: 'gemini-2.5-flash' };
  // An adapter whose provider answers `body` (status 200), `status` and `headers` as given.
  const adapter = (provider, body, status = 200) =>
    pl.createAdapter({
      provider,
      apiKey: 'k',
      model: model[provider],
      retry: { maxRetries: 0 },
      fetch: async () => new Response(body, { status, headers: { 'content-type': 'text/event-stream' } }),
    });
  const request = '{}';

  // 1. Every recorded response: the page sees what the adapter saw.
  let bad = [];
  let n = 0;
  for (const c of cases) {
    const direct = await drain(adapter(c.provider, c.body).send(request));
    const res = adapter(c.provider, c.body).send(request).toResponse();
    if (res.headers.get('content-type') !== 'text/event-stream; charset=utf-8' || res.status !== 200) bad.push(`${c.name}: headers ${res.status} ${res.headers.get('content-type')}`);
    const wire = await bytesOf(res);
    const runs = [wire, pieces(wire, Array.from({ length: 9 }, (_, k) => Math.floor((wire.length * (k * 7 + 3)) / 67)))];
    for (const [i, source] of runs.entries()) {
      const page = await drain(pl.readEventStream(source instanceof Uint8Array ? new Response(source) : source));
      if (!deepSame(page.events, direct.events)) bad.push(`${c.name} (run ${i}): events ${JSON.stringify(page.events).slice(0, 400)} vs ${JSON.stringify(direct.events).slice(0, 400)}`);
      if ((page.error?.code ?? null) !== (direct.error?.code ?? null)) bad.push(`${c.name} (run ${i}): error ${page.error?.code} vs ${direct.error?.code}`);
      // The adapter's turn (or the turn its error carries) is the page's; an error before
      // any content carries none on the adapter side, and an empty turn naming it on the page.
      if (direct.turn) {
        if (!deepSame(page.turn, direct.turn)) bad.push(`${c.name} (run ${i}): turn ${JSON.stringify(page.turn).slice(0, 400)} vs ${JSON.stringify(direct.turn).slice(0, 400)}`);
      } else if (page.turn?.metadata?.error?.code !== direct.error?.code || page.turn.parts.length !== 0) {
        bad.push(`${c.name} (run ${i}): the turn of a failure ${JSON.stringify(page.turn)}`);
      }
      if (page.error && !(page.error instanceof pl.PromptloomError)) bad.push(`${c.name}: not a PromptloomError`);
    }
    n++;
  }
  check('every recorded response reads back the same through toResponse() and readEventStream()', n >= 40 && bad.length === 0, bad.join('\n'));

  // 1b. The connection breaks: the server kept the stream in an EventStreamLog, and the page
  // picks it up again from its last event (a replay, then the rest as the server reads it).
  // The page sees what the adapter saw, each event once; a reconnect at the very start
  // (a reload) gets all of it.
  bad = [];
  let resumes = 0;
  for (const c of cases) {
    const direct = await drain(adapter(c.provider, c.body).send(request));
    const wireLength = (await bytesOf(adapter(c.provider, c.body).send(request).toResponse())).length;
    for (const [k, breakAt] of [0, 1, Math.floor(wireLength / 3), Math.floor((wireLength * 2) / 3), wireLength - 1].entries()) {
      // Every other break, the reconnect is answered by a log made again from what this one
      // kept (a Durable Object evicted and woken), once the recording ended.
      const pieces = [];
      const restart = k % 2 === 1;
      const log = new pl.EventStreamLog(restart ? { keep: (t) => void pieces.push(t) } : undefined);
      const toPage = log.record(adapter(c.provider, c.body).send(request).toReadableStream());
      // The first connection: the bytes up to `breakAt`, then the network fails.
      const reader = toPage.getReader();
      let sent = 0;
      const first = new ReadableStream({
        async pull(ctl) {
          const { done, value } = await reader.read();
          if (done) return ctl.close();
          if (sent + value.length >= breakAt) {
            if (breakAt > sent) ctl.enqueue(value.subarray(0, breakAt - sent));
            reader.cancel().catch(() => {});
            return ctl.error(new TypeError('network error'));
          }
          sent += value.length;
          ctl.enqueue(value);
        },
      });
      const asked = [];
      const later = async (id) => {
        while (!log.finished) await new Promise((r) => setTimeout(r, 1));
        await new Promise((r) => setTimeout(r, 1));
        return new Response(new pl.EventStreamLog({ kept: pieces.join('') }).replay(id));
      };
      const stream = pl.readEventStream(new Response(first), { reconnect: (id) => (asked.push(id), restart ? later(id) : new Response(log.replay(id))) });
      const page = await drain(stream);
      if (!deepSame(page.events, direct.events)) bad.push(`${c.name} broken at ${breakAt}: events ${JSON.stringify(page.events).slice(0, 300)}`);
      if ((page.error?.code ?? null) !== (direct.error?.code ?? null)) bad.push(`${c.name} broken at ${breakAt}: error ${page.error?.code} vs ${direct.error?.code}`);
      if (direct.turn && !deepSame(page.turn, direct.turn)) bad.push(`${c.name} broken at ${breakAt}: turn`);
      if (asked.length !== 1 || stream.attempts !== 2) bad.push(`${c.name} broken at ${breakAt}: ${asked.length} reconnects, ${stream.attempts} attempts`);
      if (!log.finished) bad.push(`${c.name}: the log did not finish`);
      resumes++;
    }
  }
  {
    // A reconnect the server refuses (the run is gone): the stream ends where it broke.
    const c = cases.find((x) => x.name === 'anthropic/tool_use_with_thinking.sse');
    const wire = await bytesOf(adapter(c.provider, c.body).send(request).toResponse());
    const text = new TextDecoder().decode(wire);
    const cut = text.indexOf('\n\n', text.indexOf('"type":"text-delta"')) + 2;
    const page = await drain(pl.readEventStream(new Response(wire.subarray(0, cut)), { reconnect: () => new Response('{"code":"NotFound","message":"no such run"}', { status: 404 }) }));
    if (page.error?.code !== 'StreamTruncated') bad.push(`a refused reconnect: ${page.error?.code}`);
    // Retries run out: the stream ends where the last connection broke.
    let tries = 0;
    const again = await drain(pl.readEventStream(new Response(wire.subarray(0, cut)), { retries: 2, reconnect: () => (tries++, new Response(new Uint8Array(0))) }));
    if (again.error?.code !== 'StreamTruncated' || tries !== 2) bad.push(`retries: ${tries}, ${again.error?.code}`);
    const log = new pl.EventStreamLog();
    log.record(new Response(wire).body);
    let code = null;
    try {
      log.record(new Response(wire).body);
    } catch (e) {
      code = e.code;
    }
    if (code !== 'InvalidRequest') bad.push(`a second record(): ${code}`);
    // A log made from a kept prefix (its recorder went away mid-reply) replays what it has
    // and ends: the page reads the reply so far, StreamTruncated. It records nothing more.
    const prefix = new pl.EventStreamLog({ kept: text.slice(0, cut) });
    const short = await drain(pl.readEventStream(new Response(prefix.replay())));
    if (short.error?.code !== 'StreamTruncated' || short.turn?.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') !== "I'll read the config ") bad.push(`a kept prefix: ${short.error?.code} ${JSON.stringify(short.turn)}`);
    code = null;
    try {
      prefix.record(new Response(wire).body);
    } catch (e) {
      code = e.code;
    }
    if (code !== 'InvalidRequest') bad.push(`record() on a kept log: ${code}`);
    // `keep` failing (a storage error) is not the stream's failure.
    const throwing = new pl.EventStreamLog({ keep: () => { throw new Error('disk full'); } });
    const rejecting = new pl.EventStreamLog({ keep: () => Promise.reject(new Error('disk full')) });
    for (const l of [throwing, rejecting]) {
      const got = await drain(pl.readEventStream(new Response(l.record(new Response(wire).body))));
      if (got.error || !deepSame(got.turn, (await drain(pl.readEventStream(new Response(wire)))).turn)) bad.push(`a failing keep: ${got.error?.code}`);
    }
    for (const opts of [{ kept: 3 }, { keep: 'x' }, 'x']) {
      let k = null;
      try {
        new pl.EventStreamLog(opts);
      } catch (e) {
        k = e.code;
      }
      if (k !== 'InvalidOptions') bad.push(`new EventStreamLog(${JSON.stringify(opts)}): ${k}`);
    }
    for (const bad2 of [() => log.replay(3), () => pl.readEventStream(new Response(wire), { reconnect: 3 }), () => pl.readEventStream(new Response(wire), { retries: -1 })]) {
      let k = null;
      try {
        bad2();
      } catch (e) {
        k = e.code;
      }
      if (k !== 'InvalidOptions') bad.push(`misuse: ${k}`);
    }
  }
  check('a broken connection picks up from the server\'s EventStreamLog: every event once, the same turn; a refused reconnect ends it', resumes >= 200 && bad.length === 0, bad.join('\n'));

  // 2. A stream cut after some events: what came, then StreamTruncated with the turn so far
  // and the id to resume from.
  bad = [];
  const tool = cases.find((c) => c.name === 'anthropic/tool_use_with_thinking.sse');
  if (!tool) bad.push('no anthropic/tool_use_with_thinking.sse');
  else {
    const wire = await bytesOf(adapter(tool.provider, tool.body).send(request).toResponse());
    const text = new TextDecoder().decode(wire);
    const cut = text.indexOf('\n\n', text.indexOf('"type":"text-delta"')) + 2; // after the first text
    const stream = pl.readEventStream(new Response(new TextEncoder().encode(text.slice(0, cut))));
    const page = await drain(stream);
    const kept = page.turn?.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    if (page.error?.code !== 'StreamTruncated') bad.push(`error ${page.error?.code}`);
    if (kept !== "I'll read the config ") bad.push(`kept ${JSON.stringify(kept)}`);
    if (page.turn?.metadata.error?.code !== 'StreamTruncated') bad.push(`turn ${JSON.stringify(page.turn?.metadata)}`);
    if (stream.lastEventId !== '5' || stream.provider !== 'anthropic') bad.push(`lastEventId ${stream.lastEventId}, provider ${stream.provider}`);
    if (page.events.at(-1)?.type !== 'finish' || !page.events.some((e) => e.type === 'error' && e.code === 'StreamTruncated')) bad.push(`events ${JSON.stringify(page.events.slice(-3))}`);
  }
  // While a stream goes on, `lastEventId` follows the events read (each iterated event's id).
  if (tool) {
    const wire = await bytesOf(adapter(tool.provider, tool.body).send(request).toResponse());
    const stream = pl.readEventStream(pieces(wire, Array.from({ length: Math.ceil(wire.length / 64) }, (_, i) => i * 64)));
    const ids = [];
    for await (const _ of stream) ids.push(stream.lastEventId);
    await stream.turn;
    const numbers = ids.map(Number);
    if (ids[0] === undefined || numbers.some((x, i) => !(x >= 1) || (i > 0 && x < numbers[i - 1]))) bad.push(`ids while streaming ${JSON.stringify(ids.slice(0, 12))}`);
    if (new Set(ids).size < 5) bad.push(`the id moved ${new Set(ids).size} times over ${ids.length} events`);
    if (Number(stream.lastEventId) < numbers.at(-1)) bad.push(`the last id ${stream.lastEventId} after ${numbers.at(-1)}`);
  }
  check('a stream cut mid-way gives StreamTruncated, the turn so far and the last event id; the id follows the stream as it goes', bad.length === 0, bad.join('\n'));

  // 3. A provider failure before any content (HTTP 401): the page gets its code.
  bad = [];
  {
    const body = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    const direct = await drain(adapter('anthropic', body, 401).send(request));
    const page = await drain(pl.readEventStream(adapter('anthropic', body, 401).send(request).toResponse()));
    if (direct.error?.code !== 'AuthenticationFailed' || page.error?.code !== direct.error.code) bad.push(`${direct.error?.code} vs ${page.error?.code}`);
    if (page.error?.message !== direct.error?.message) bad.push(`${page.error?.message} vs ${direct.error?.message}`);
    if (page.error?.details.status !== 401) bad.push(`details ${JSON.stringify(page.error?.details)}`);
    if (page.turn?.metadata.error?.code !== 'AuthenticationFailed') bad.push(`turn ${JSON.stringify(page.turn)}`);
  }
  check('a provider failure before any content reaches the page with its code, message and details', bad.length === 0, bad.join('\n'));

  // 4. A server answer that is not a stream; what is not a source; an abort.
  bad = [];
  {
    const coded = await drain(pl.readEventStream(new Response(JSON.stringify({ code: 'InvalidMessage', message: 'a message needs parts' }), { status: 400 })));
    if (coded.error?.code !== 'InvalidMessage' || coded.error.message !== 'a message needs parts' || coded.error.details.status !== 400) bad.push(`coded ${coded.error?.code} ${coded.error?.message}`);
    const gateway = await drain(pl.readEventStream(new Response('<html>bad gateway</html>', { status: 502 })));
    if (gateway.error?.code !== 'AdapterFailed' || gateway.error.details.status !== 502 || gateway.error.details.retryable !== true || !gateway.error.message.includes('502')) bad.push(`gateway ${gateway.error?.code} ${JSON.stringify(gateway.error?.details)}`);
    const notOurs = await drain(pl.readEventStream(new Response('data: {"choices":[]}\n\n')));
    if (notOurs.error?.code !== 'StreamMalformed') bad.push(`not ours ${notOurs.error?.code}`);
    const empty = await drain(pl.readEventStream(new Response(null)));
    if (empty.error?.code !== 'StreamTruncated') bad.push(`empty ${empty.error?.code}`);
    for (const v of [null, 'text', {}, new Uint8Array(1)]) {
      try {
        pl.readEventStream(v);
        bad.push(`${String(v)} accepted`);
      } catch (e) {
        if (e.code !== 'InvalidOptions') bad.push(`${String(v)}: ${e.code}`);
      }
    }
    // An abort while the server is still sending: Aborted, with the turn read so far.
    const ctl = new AbortController();
    const enc = new TextEncoder();
    let sent = 0;
    const slow = new ReadableStream({
      async pull(c) {
        if (sent++ === 0) return c.enqueue(enc.encode('event: open\ndata: {"protocol":"promptloom-events","version":1,"provider":"gemini"}\n\nid: 1\ndata: {"type":"text-delta","part":0,"text":"par"}\n\n'));
        // The server is slow to send more; the user presses stop meanwhile.
        await new Promise((r) => setTimeout(r, 20));
        ctl.abort(new Error('the user pressed stop'));
      },
    });
    const aborted = await drain(pl.readEventStream(slow, { signal: ctl.signal }));
    if (aborted.error?.code !== 'Aborted' || aborted.turn?.parts[0]?.text !== 'par' || aborted.events.length !== 1) bad.push(`abort ${aborted.error?.code} ${JSON.stringify(aborted.turn)}`);
  }
  check('an HTTP refusal, a foreign or empty body, a bad source and an abort are coded errors', bad.length === 0, bad.join('\n'));

  // 5. The page that stops reading cancels the server's request.
  bad = [];
  {
    let cancelled = false;
    const never = pl.createAdapter({
      provider: 'openai-chat',
      apiKey: 'k',
      model: 'gpt-4.1',
      retry: { maxRetries: 0 },
      fetch: async (_url, init) => {
        const enc = new TextEncoder();
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(enc.encode('data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'));
              init.signal.addEventListener('abort', () => {
                cancelled = true;
                c.error(new Error('aborted'));
              });
            },
          }),
        );
      },
    });
    const body = never.send(request).toReadableStream();
    const reader = body.getReader();
    const first = await reader.read();
    const second = await reader.read();
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 10));
    const text = new TextDecoder().decode(first.value) + new TextDecoder().decode(second.value);
    if (!text.startsWith('event: open\n') || !text.includes('"text":"Hi"')) bad.push(`wire ${JSON.stringify(text)}`);
    if (!cancelled) bad.push('the request was not cancelled');
  }
  check('cancelling the relayed body cancels the request', bad.length === 0, bad.join('\n'));

  // 6. A JSON answer (`output`) relayed in 7-byte pieces: the page's object edits rebuild the
  // answer as the adapter's did, and the turns agree.
  if (objects) {
    bad = [];
    for (const c of objects) {
      const bytes = new TextEncoder().encode(c.stream);
      const mk = () =>
        pl.createAdapter({
          provider: c.provider,
          apiKey: 'k',
          model: 'm',
          retry: { maxRetries: 0 },
          fetch: async () => new Response(pieces(bytes, Array.from({ length: Math.floor(bytes.length / 7) }, (_, k) => (k + 1) * 7))),
        });
      const direct = await drain(mk().send(c.request));
      const stream = pl.readEventStream(mk().send(c.request).toResponse());
      const page = { events: [], seen: undefined };
      for await (const e of stream) {
        page.events.push(e);
        if (e.type === 'object-delta') page.seen = e.object;
      }
      const turn = await stream.turn;
      const plain = (evs) => evs.filter((e) => e.type !== 'object-delta');
      const deltas = page.events.filter((e) => e.type === 'object-delta').length;
      if (!deepSame(turn, direct.turn) || !deepSame(page.seen, c.object) || deltas < 2 || !deepSame(plain(page.events), plain(direct.events))) {
        bad.push(`${c.name}: ${deltas} deltas, ${JSON.stringify(page.seen).slice(0, 200)}`);
      }
    }
    check('a JSON answer relayed in pieces: the page rebuilds the answer from its edits, the turns agree', objects.length >= 5 && bad.length === 0, bad.join('\n'));
  }
  return results;
}
