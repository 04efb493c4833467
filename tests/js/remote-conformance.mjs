// One suite for promptloom in a worker, seen from the page (`connectWorker`, promptloom/remote)
// — Node's worker_threads, Deno's and Chromium's Web Workers. The worker serves
// tests/js/remote-serve.mjs: a Chat over a store (IndexedDB in Chromium) answered by the
// repository's mock provider, and three functions. It checks what a page relies on: a call
// whose work runs while the page's event loop goes on, errors with their codes, a chat whose
// mirrored snapshots are the worker's (streamed tokens share `messages`; the messages equal
// a reload's from the store), approval, stop, regenerate, edit, and misuse. No Node API.

import { fail, ok, same, code, until } from './chat-conformance.mjs';

/**
 * @param {{ connectWorker: Function, PromptloomError: Function }} remote promptloom/remote (and the error class the page sees)
 * @param {{ worker: () => any, mock: string, backend?: string }} host `worker` starts a worker running remote-worker.mjs
 */
export async function remoteConformance({ connectWorker, PromptloomError }, host) {
  const results = [];
  const scenario = async (name, f) => {
    try {
      await f();
      results.push({ name, ok: true, detail: '' });
    } catch (e) {
      results.push({ name, ok: false, detail: String(e && e.stack ? e.stack : e).slice(0, 2000) });
    }
  };
  const worker = host.worker();
  const remote = connectWorker(worker);
  let n = 0;
  const init = (extra = {}) => ({ mock: host.mock, backend: host.backend ?? 'memory', session: `s${++n}`, ...extra });

  await scenario('call(): a function served by the worker runs there while the page goes on; its result crosses', async () => {
    let ticks = 0;
    let running = true;
    const tick = () => {
      if (!running) return;
      ticks++;
      setTimeout(tick, 0);
    };
    tick();
    const names = await remote.call('index', 10000);
    running = false;
    ok(Array.isArray(names) && names.length === 3 && names.every((x) => typeof x === 'string'), 'the matches', names);
    ok(ticks >= 3, 'the page ran its own tasks while the worker built the index', ticks);
    const lowered = await remote.call('lower', { parts: [{ type: 'text', text: 'hello' }] }, { provider: 'anthropic', model: 'claude-sonnet-4-5', maxOutputTokens: 64 });
    ok(typeof lowered.body === 'string' && JSON.parse(lowered.body).messages[0].content[0].text === 'hello', 'the lowered body', lowered.body);
  });

  await scenario('call(): errors cross with their code; what cannot cross is InvalidOptions', async () => {
    let err = null;
    try {
      await remote.call('lower', { parts: [] }, { provider: 'anthropic', model: 'm' });
    } catch (e) {
      err = e;
    }
    ok(err instanceof PromptloomError && err.code === 'EmptyMessage' && typeof err.message === 'string', 'the core error, a PromptloomError', err && { code: err.code, message: err.message });
    ok((await code(remote.call('nope'))) === 'NotFound', 'an unknown function is NotFound');
    try {
      await remote.call('fail');
      fail('a throw rejects');
    } catch (e) {
      ok(e.code === 'Internal' && /a plain throw/.test(e.message), 'a plain throw is Internal with its message', { code: e.code, message: e.message });
    }
    ok((await code(remote.call('lower', { parts: [] }, { resolve: () => 1 }))) === 'InvalidOptions', 'a function argument is InvalidOptions');
    ok((await code(remote.call(1))) === 'InvalidOptions', 'a name that is not a string');
  });

  await scenario('chat(): the snapshots are the worker chat\'s — streaming shares messages, the result equals a reload', async () => {
    const i = init();
    const chat = await remote.chat(i);
    ok(chat.status === 'ready' && chat.session === i.session, 'ready, the session', chat.getSnapshot());
    same(chat.messages, [], 'a new thread');
    const seen = [];
    const stop = chat.subscribe(() => seen.push(chat.getSnapshot()));
    const out = await chat.send('How do I stream?');
    stop();
    ok(out.stop === 'final' && out.submission.id === `${i.session}/0000000001`, 'the outcome', out);
    const m = chat.messages;
    same(m.map((x) => x.role), ['user', 'assistant'], 'the messages');
    ok(m[1].status === 'done' && m[0].id === out.submission.id, 'as stored', m);
    const text = m[1].parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    ok(/You said: "How do I stream\?"/.test(text), 'the reply', text);
    const streaming = seen.filter((s) => s.status === 'streaming');
    ok(streaming.length > 3, 'several streamed snapshots', streaming.length);
    ok(streaming.every((s) => s.messages === streaming[0].messages), 'a streamed token makes no new messages');
    const growing = streaming.map((s) => s.pending.parts.filter((p) => p && p.type === 'text').map((p) => p.text).join(''));
    ok(growing.every((t, k) => k === 0 || t.startsWith(growing[k - 1])) && growing.at(-1) === text, 'the pending text grows into the reply', growing);
    ok(seen.every((s) => Object.isFrozen(s)), 'frozen snapshots');
    ok(seen.at(-1).messages[0] === streaming[0].messages[0], 'the user message object is shared');
    // A reload: another chat on the same session reads the thread from the store.
    const again = await remote.chat({ ...i });
    same(again.messages, m, 'the mirror equals the thread read back');
    const lowered = await chat.lower({ system: 'Be brief.' });
    ok(typeof lowered.body === 'string' && lowered.body.includes('Be brief.'), 'lower() with settings', lowered.body);
    await again.close();
  });

  await scenario('chat(): a tool waiting for approval; approve() from the page runs it; an unknown call is NotFound', async () => {
    const chat = await remote.chat(init({ tools: true }));
    const run = chat.send('Look it up');
    const w = await until(chat, (s) => s.status === 'awaiting-approval');
    const part = w.messages.at(-1).parts.find((p) => p.type === 'tool-call');
    ok(part && part.state === 'approval-requested', 'approval-requested', part);
    ok((await code(chat.send('again'))) === 'InvalidRequest', 'no send while waiting');
    ok((await code(chat.approve('nope', true))) === 'NotFound', 'an unknown call');
    await chat.approve(part.id, true);
    const out = await run;
    ok(out.stop === 'final', 'final', out);
    const call = chat.messages[1].parts.find((p) => p.type === 'tool-call');
    ok(call.state === 'output-available', 'the call answered', call);
    same(call.output, { hits: ['Look it up.md'] }, 'the handler\'s output');
  });

  await scenario('chat(): stop() keeps the reply marked cut; regenerate() and edit() branch', async () => {
    const i = init({ headers: { 'x-mock': 'slow=20' } });
    const chat = await remote.chat(i);
    const run = chat.send('Tell me a long story');
    await until(chat, (s) => s.pending && s.pending.parts.some((p) => p && p.type === 'text' && p.text.length > 0));
    await chat.stop();
    const out = await run;
    ok(out.stop === 'aborted' && out.error instanceof PromptloomError && out.error.code === 'Aborted', 'aborted, with the error', out);
    ok(chat.messages.at(-1).status === 'cut' && chat.getSnapshot().pending === null, 'cut', chat.getSnapshot());
    const quick = await remote.chat(init());
    await quick.send('First question');
    const r = await quick.regenerate();
    ok(r.stop === 'final' && /~b\d+$/.test(quick.session), 'regenerate: a branch', quick.session);
    same(quick.messages.map((x) => x.role), ['user', 'assistant'], 'the branch');
    const e = await quick.edit(quick.messages[0].id, 'Another question');
    ok(e.stop === 'final', 'edit', e);
    ok(/Another question/.test(quick.messages[1].parts.map((p) => p.text ?? '').join('')), 'the edited reply', quick.messages);
  });

  await scenario('chat(): a failed reply\'s error crosses into the snapshot; misuse is refused on the page', async () => {
    const chat = await remote.chat(init({ headers: { 'x-mock': 'status=400' } }));
    const out = await chat.send('hello');
    ok(out.stop === 'error' && out.error instanceof PromptloomError && out.error.code === 'ProviderRejected', 'the error', out.error && out.error.code);
    ok(chat.status === 'error' && chat.error instanceof PromptloomError && chat.error.code === 'ProviderRejected', 'the snapshot\'s error', chat.error);
    ok((await code(chat.send('x', { adapter: {} }))) === 'InvalidOptions', 'an adapter per run lives in the worker');
    ok((await code(remote.chat(null))) === 'InvalidOptions', 'init must be an object');
    ok((() => {
      try {
        connectWorker({});
      } catch (e2) {
        return e2.code === 'InvalidOptions';
      }
    })(), 'connectWorker needs a worker');
  });

  remote.close();
  ok((await code(remote.call('index', 1))) === 'InstanceLost', 'a closed connection');
  if (typeof worker.terminate === 'function') await worker.terminate();
  return results;
}
