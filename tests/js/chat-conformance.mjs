// One Chat suite for every JS host: a chat over a real message store (memory in Node and
// workerd, IndexedDB in Chromium) answered by the repository's mock provider, through an
// adapter the host makes — straight to the mock, or through a relay (`endpoint`). It
// checks what a chat panel relies on: the messages as stored and reloaded, the reply
// streaming into `pending` without new `messages`, tool calls with their results, approval,
// stop (the cut reply kept and marked), regenerate and edit (branches; the old thread
// untouched), a failed reply and its retry, and the errors of misuse. It uses no Node API.

export function fail(what, got) {
  throw new Error(`${what}${got === undefined ? '' : `: ${typeof got === 'string' ? got : JSON.stringify(got)}`.slice(0, 1500)}`);
}
export const ok = (cond, what, got) => cond || fail(what, got);
export const same = (a, b, what) => ok(JSON.stringify(a) === JSON.stringify(b), what, { got: a, want: b });

/** Awaits `p` and answers its rejection's code, or fails. */
export async function code(p) {
  try {
    await p;
  } catch (e) {
    return e && e.code;
  }
  return 'no error';
}

/** The snapshots a chat goes through, recorded as they come. */
function record(chat) {
  const seen = [];
  const stop = chat.subscribe(() => seen.push(chat.getSnapshot()));
  return { seen, stop };
}

/** Waits until `cond(snapshot)`, or fails after `ms`. */
export function until(chat, cond, ms = 5000) {
  return new Promise((resolve, reject) => {
    if (cond(chat.getSnapshot())) return resolve(chat.getSnapshot());
    const t = setTimeout(() => {
      stop();
      reject(new Error(`waited ${ms} ms for the chat (status ${chat.status})`));
    }, ms);
    const stop = chat.subscribe(() => {
      const s = chat.getSnapshot();
      if (cond(s)) {
        clearTimeout(t);
        stop();
        resolve(s);
      }
    });
  });
}

const SETTINGS = {
  anthropic: { provider: 'anthropic', model: 'mock-model', maxOutputTokens: 256, stream: true },
  'openai-chat': { provider: 'openai-chat', model: 'mock-model', stream: true },
  'openai-responses': { provider: 'openai-responses', model: 'mock-model', stream: true },
  gemini: { provider: 'gemini', model: 'mock-model', stream: true },
};

const SEARCH = { name: 'search', description: 'Searches the docs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };

/**
 * @param {any} pl the package
 * @param {{ openStore: (name: string) => Promise<any>, connect: (provider: string, headers?: Record<string, string>) => object, lastRequest?: () => Promise<string> }} host
 *   `connect` gives the Chat's `adapter` or `endpoint` option (`{ adapter }` / `{ endpoint, headers }`);
 *   `lastRequest`, where the host sees the provider's requests, the body of the last one
 * @param {{ providers?: string[] }} [options]
 */
export async function chatConformance(pl, host, { providers = Object.keys(SETTINGS) } = {}) {
  const results = [];
  let n = 0;
  const scenario = async (name, f) => {
    try {
      await f();
      results.push({ name, ok: true, detail: '' });
    } catch (e) {
      results.push({ name, ok: false, detail: String(e && e.stack ? e.stack : e).slice(0, 2000) });
    }
  };
  let lastStore = null;
  const open = async (provider, extra = {}, headers) => {
    const store = extra.store ?? (await host.openStore(`chat-${++n}`));
    lastStore = store;
    return pl.Chat.open({ store, session: 'chat', settings: SETTINGS[provider], ...host.connect(provider, headers), ...extra });
  };

  for (const provider of providers) {
    await scenario(`${provider}: a message is stored, shown and answered; the reply streams into pending; a reload shows the same`, async () => {
      const chat = await open(provider);
      same(chat.getSnapshot().messages, [], 'a new thread is empty');
      ok(chat.status === 'ready', 'status after open', chat.status);
      const { seen, stop } = record(chat);
      const out = await chat.send('How do I stream?');
      stop();
      ok(out.stop === 'final', 'the run ends final', out);
      ok(out.submission && out.submission.id === 'chat/0000000001', 'the submission is returned', out.submission?.id);
      const m = chat.messages;
      ok(m.length === 2, 'two messages', m);
      same(m[0].parts.map((p) => p.label), ['How do I stream?'], 'the user message as chips');
      ok(m[0].role === 'user' && m[0].id === 'chat/0000000001', 'the user message is the stored one', m[0]);
      ok(m[1].role === 'assistant' && m[1].status === 'done' && m[1].id === 'chat/0000000002', 'the reply as stored', m[1]);
      const text = m[1].parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
      ok(/You said: "How do I stream\?"/.test(text), 'the reply text', text);
      // The statuses, in order, and the stream into `pending`.
      const statuses = seen.map((s) => s.status).filter((s, i, a) => s !== a[i - 1]);
      same(statuses, ['submitted', 'streaming', 'submitted', 'ready'], 'the statuses');
      const streaming = seen.filter((s) => s.status === 'streaming');
      ok(streaming.length > 3, 'several snapshots while streaming', streaming.length);
      ok(streaming.every((s) => s.messages === streaming[0].messages), 'streaming a token does not make new messages');
      const growing = streaming.map((s) => s.pending.parts.filter((p) => p && p.type === 'text').map((p) => p.text).join(''));
      ok(growing.every((t, i) => i === 0 || t.startsWith(growing[i - 1])), 'the pending text grows', growing);
      ok(growing.at(-1) === text, 'the last pending text is the reply', { last: growing.at(-1), text });
      ok(seen.every((s) => Object.isFrozen(s)), 'snapshots are frozen');
      ok(seen.at(-1).pending === null && seen.at(-1).messages[0] === streaming[0].messages[0], 'the user message object is shared across snapshots');
      // A reload (another Chat on the same store) shows the same messages.
      const reloaded = await open(provider, { store: lastStore });
      same(reloaded.messages, m, 'a reload shows the same messages');
    });
  }

  const provider = providers[0];

  await scenario('tool calls run through handlers; results fold into their calls; reloaded the same', async () => {
    const calls = [];
    const chat = await open(provider, { tools: [SEARCH], handlers: { search: async (input) => (calls.push(input), { hits: 3 }) } });
    const out = await chat.send('Find the stream docs');
    ok(out.stop === 'final', 'final', out);
    same(calls, [{ query: 'Find the stream docs' }], 'the handler got the input');
    const m = chat.messages;
    same(m.map((x) => x.role), ['user', 'assistant', 'assistant'], 'the roles (the tool turn folded into its call)');
    const call = m[1].parts.find((p) => p.type === 'tool-call');
    ok(call && call.name === 'search' && call.state === 'output-available', 'the call has its result', call);
    same(call.output, { hits: 3 }, 'the output');
    ok(/The tool answered/.test(m[2].parts.map((p) => p.text ?? '').join('')), 'the final answer', m[2]);
    const reloaded = await open(provider, { store: lastStore, tools: [SEARCH], handlers: {} });
    same(reloaded.messages, m, 'reloaded the same');
  });

  await scenario('a tool that needs approval waits; a refusal is the call error result; an approval runs it', async () => {
    const calls = [];
    const tools = [{ ...SEARCH, needsApproval: true }];
    const handlers = { search: async (input) => (calls.push(input), 'found') };
    const chat = await open(provider, { tools, handlers });
    const first = chat.send('Look it up');
    const waiting = await until(chat, (s) => s.status === 'awaiting-approval');
    const part = waiting.messages.at(-1).parts.find((p) => p.type === 'tool-call');
    ok(part && part.state === 'approval-requested', 'the call shows approval-requested', part);
    ok((await code(chat.send('again'))) === 'InvalidRequest', 'no send while waiting');
    chat.approve(part.id, { approve: false, reason: 'not now' });
    const out = await first;
    ok(out.stop === 'final', 'the run goes on to a final answer', out);
    same(calls, [], 'the handler did not run');
    const denied = chat.messages[1].parts.find((p) => p.type === 'tool-call');
    ok(denied.state === 'output-error' && /denied.*not now/.test(denied.error), 'the refusal is the error result', denied);
    const second = chat.send('Look it up again');
    const w2 = await until(chat, (s) => s.status === 'awaiting-approval');
    chat.approve(w2.messages.at(-1).parts.find((p) => p.type === 'tool-call').id, true);
    await second;
    same(calls, [{ query: 'Look it up again' }], 'approved: the handler ran');
    ok(chat.messages.at(-2).parts.find((p) => p.type === 'tool-call').state === 'output-available', 'approved: output-available');
    ok((() => {
      try {
        chat.approve('nope', true);
      } catch (e) {
        return e.code === 'NotFound';
      }
    })(), 'approving an unknown call is NotFound');
  });

  await scenario('a reload while a call waits for approval: the call shows unanswered; resume() asks again and runs it', async () => {
    const calls = [];
    const tools = [{ ...SEARCH, needsApproval: true }];
    const handlers = { search: async (input) => (calls.push(input), 'found') };
    const chat = await open(provider, { tools, handlers });
    const run = chat.send('Look it up');
    await until(chat, (s) => s.status === 'awaiting-approval');
    const store = lastStore;
    // The page goes away: a new Chat reads the thread (the first one is stopped).
    const reloaded = await open(provider, { store, tools, handlers });
    const call = reloaded.messages.at(-1).parts.find((p) => p.type === 'tool-call');
    ok(call && call.state === 'input-available', 'the unanswered call', reloaded.messages.at(-1));
    chat.stop();
    await run;
    const resumed = reloaded.resume();
    const w = await until(reloaded, (s) => s.status === 'awaiting-approval');
    ok(w.messages.at(-1).parts.find((p) => p.type === 'tool-call').state === 'approval-requested', 'asked again');
    reloaded.approve(call.id, true);
    const out = await resumed;
    ok(out.stop === 'final', 'the run ends', out);
    same(calls, [{ query: 'Look it up' }], 'the handler ran once, after the approval');
    same(reloaded.messages.map((m) => m.role), ['user', 'assistant', 'assistant'], 'the thread');
  });

  await scenario('stop() keeps what was streamed, marked cut, stored and reloaded so', async () => {
    const chat = await open(provider, {}, { 'x-mock': 'slow=20' });
    const run = chat.send('Tell me a long story');
    await until(chat, (s) => s.pending && s.pending.parts.some((p) => p && p.type === 'text' && p.text.length > 0));
    chat.stop();
    const out = await run;
    ok(out.stop === 'aborted', 'the run stops aborted', out);
    const last = chat.messages.at(-1);
    ok(last.role === 'assistant' && last.status === 'cut', 'the reply is kept, marked cut', last);
    ok(last.parts.some((p) => p.type === 'text' && p.text.length > 0), 'with its text', last);
    ok(chat.status === 'ready' && chat.getSnapshot().pending === null, 'ready again', chat.getSnapshot());
    const reloaded = await open(provider, { store: lastStore });
    same(reloaded.messages, chat.messages, 'reloaded: the cut reply is there');
  });

  await scenario('a page that goes away mid-reply: its draft comes back cut on the next open; an ended reply leaves none', async () => {
    const chat = await open(provider, { draft: 0 }, { 'x-mock': 'stall=14' });
    const store = lastStore;
    const run = chat.send('Tell me a long story');
    const textOf = (m) => m.parts.filter((p) => p && p.type === 'text').map((p) => p.text).join('');
    await until(chat, (s) => s.pending && textOf(s.pending).length > 0);
    // The stream stalls (the page is as good as gone): its draft is what it had read.
    let draft = null;
    for (let i = 0; i < 200 && !(draft && textOf(draft) === textOf(chat.getSnapshot().pending)); i++) {
      await new Promise((r) => setTimeout(r, 10));
      draft = (await store.draft('chat'))?.turn ?? null;
    }
    ok(draft && draft.role === 'assistant' && draft.metadata.cut === true, 'the draft, cut', draft);
    ok(textOf(draft) === textOf(chat.getSnapshot().pending), 'the draft holds what was shown', { draft: textOf(draft), shown: textOf(chat.getSnapshot().pending) });
    const locks = typeof globalThis.navigator?.locks?.request === 'function';
    const other = await open(provider, { store });
    if (locks) {
      // Where the host has Web Locks, the page still reading holds the session's: another
      // page opening the thread leaves the draft to it.
      same(other.messages.map((m) => m.role), ['user'], 'the draft is left to the page reading it');
      chat.stop();
      await run;
      const after = await open(provider, { store });
      same(after.messages.map((m) => [m.role, m.status ?? '']).slice(1), [['assistant', 'cut']], 'then the reply it kept, once');
    } else {
      same(other.messages.map((m) => m.role), ['user', 'assistant'], 'the reload shows the reply');
      ok(other.messages[1].status === 'cut' && textOf(other.messages[1]) === textOf(draft), 'cut, with the draft\'s text', other.messages[1]);
      ok((await store.draft('chat')) === null, 'the draft was taken into the thread');
      same((await store.thread('chat')).map((t) => t.role), ['user', 'assistant'], 'stored once');
      chat.stop();
      await run;
    }
    // A reply that ends (or fails) leaves no draft.
    const done = await open(provider, { draft: 0 });
    await done.send('Short one');
    ok((await lastStore.draft('chat')) === null, 'no draft after a reply that ended');
    const failing = await open(provider, { draft: 0 }, { 'x-mock': 'cut=8' });
    const f = await failing.send('This one breaks');
    ok(f.stop === 'error', 'the reply failed', f);
    ok((await lastStore.draft('chat')) === null, 'no draft after a reply that failed');
  });

  if (host.connect(provider).endpoint !== undefined) {
    await scenario('a reloaded reply whose run the server lost: the reply so far is shown, cut; a server that fails otherwise keeps the draft to attach again', async () => {
      const store = await host.openStore(`chat-${++n}`);
      await store.append({ role: 'user', parts: [{ type: 'text', text: 'Tell me a long story' }] }, { session: 'chat' });
      const so_far = { role: 'assistant', parts: [{ type: 'text', text: 'Once upon a' }] };
      const lost = `lost-${n}`;
      await store.saveDraft({ run: lost, turn: so_far }, { session: 'chat' });
      const textOf = (m) => m.parts.filter((p) => p && p.type === 'text').map((p) => p.text).join('');
      const chat = await open(provider, { store, reconnect: true });
      ok(chat.getSnapshot().run === lost, 'the snapshot names the draft\'s run', chat.getSnapshot());
      same(chat.messages.map((m) => m.role), ['user'], 'nothing appended before the attach');
      if (host.downHeaders) {
        // The server is down (not a lost run): the draft stays, and so does the run.
        const down = await open(provider, { store, reconnect: true, headers: { ...host.connect(provider).headers, ...host.downHeaders } });
        const d = await down.resume({ attach: down.getSnapshot().run });
        ok(d.stop === 'error' && d.error.code !== 'NotFound', 'the attach failed', d);
        ok(down.getSnapshot().run === chat.getSnapshot().run, 'the run is still there to attach to', down.getSnapshot());
        const kept = (await store.draft('chat'))?.turn;
        ok(kept && kept.metadata.cut === true && textOf(kept) === 'Once upon a', 'the draft is kept', kept);
      }
      const out = await chat.resume({ attach: chat.getSnapshot().run });
      ok(out.stop === 'error' && out.error.code === 'NotFound', 'the server no longer has the run', out);
      same(chat.messages.map((m) => [m.role, m.status ?? '']), [['user', ''], ['assistant', 'cut']], 'the reply so far, cut');
      ok(textOf(chat.messages[1]) === 'Once upon a', 'with its text', chat.messages[1]);
      ok(chat.getSnapshot().run === null && chat.getSnapshot().pending === null, 'no run, nothing pending', chat.getSnapshot());
      ok((await store.draft('chat')) === null, 'the draft is gone');
      same((await store.thread('chat')).map((t) => [t.role, t.metadata?.cut === true]), [['user', false], ['assistant', true]], 'stored once, cut');
      const reloaded = await open(provider, { store, reconnect: true });
      same(reloaded.messages, chat.messages, 'a reload shows the same');
    });

    await scenario('a draft with a run, opened by a chat that does not reconnect: the reply so far is appended', async () => {
      const store = await host.openStore(`chat-${++n}`);
      await store.append({ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }, { session: 'chat' });
      await store.saveDraft({ run: 'r-plain', turn: { role: 'assistant', parts: [{ type: 'text', text: 'Hel' }] } }, { session: 'chat' });
      const chat = await open(provider, { store });
      ok(chat.getSnapshot().run === null, 'no run to attach to', chat.getSnapshot());
      same(chat.messages.map((m) => [m.role, m.status ?? '']), [['user', ''], ['assistant', 'cut']], 'appended, cut');
      ok((await store.draft('chat')) === null, 'the draft is gone');
    });
  }

  await scenario('regenerate() branches: the new session keeps the user message, the old thread is untouched', async () => {
    const chat = await open(provider, { nonce: () => 'r1' });
    await chat.send('First question');
    await chat.send('Second question');
    const before = chat.messages;
    const out = await chat.regenerate();
    ok(out.stop === 'final', 'final', out);
    ok(chat.session === 'chat~r1', 'the branch session', chat.session);
    same(chat.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant'], 'the roles');
    same(chat.messages.slice(0, 3).map((m) => m.parts), before.slice(0, 3).map((m) => m.parts), 'the kept turns');
    ok(chat.messages[3].id === 'chat~r1/0000000004', 'the new reply is in the branch', chat.messages[3].id);
    const old = await lastStore.thread('chat');
    ok(old.length === 4, 'the old session keeps its four turns', old.length);
    const reloaded = await open(provider, { store: lastStore, session: 'chat~r1' });
    same(reloaded.messages, chat.messages, 'the branch reloads the same');
  });

  await scenario('edit() branches from before the edited message and sends the new one', async () => {
    let k = 0;
    const chat = await open(provider, { nonce: () => `e${++k}` });
    await chat.send('Alpha');
    await chat.send('Beta');
    const beta = chat.messages[2];
    await chat.edit(beta.id, 'Gamma');
    ok(chat.session === 'chat~e1', 'the branch', chat.session);
    same(chat.messages.map((m) => m.parts[0].label ?? m.parts.find((p) => p.type === 'text')?.text.slice(0, 12)), ['Alpha', 'You said: "A', 'Gamma', 'You said: "G'], 'the branch thread');
    // An edit of the first message: an empty branch, then the message.
    await chat.edit(chat.messages[0].id, 'Delta');
    ok(chat.session === 'chat~e2', 'a branch of a branch stays one level deep', chat.session);
    same(chat.messages.map((m) => m.role), ['user', 'assistant'], 'only the new exchange');
    ok((await code(chat.edit(chat.messages[1].id, 'x'))) === 'InvalidRequest', "editing the assistant's message is refused");
    ok((await code(chat.edit('chat/9', 'x'))) === 'NotFound', 'editing an unknown message is NotFound');
  });

  await scenario('a failed reply: status error with the code, the user message kept; regenerate() retries it in the same session', async () => {
    const chat = await open(provider, {}, { 'x-mock': 'status=400,times=1', 'x-mock-id': `chat-${Date.now()}-${Math.random()}` });
    const out = await chat.send('Will this fail?');
    ok(out.stop === 'error' && out.error && out.error.code === 'ProviderRejected', 'the error', out);
    ok(chat.status === 'error' && chat.error.code === 'ProviderRejected', 'status error', chat.getSnapshot());
    same(chat.messages.map((m) => m.role), ['user'], 'the user message is kept');
    const again = await chat.regenerate();
    ok(again.stop === 'final', 'the retry answers', again);
    ok(chat.session === 'chat', 'no branch: nothing was dropped', chat.session);
    same(chat.messages.map((m) => m.role), ['user', 'assistant'], 'answered');
    ok(chat.error === null && chat.status === 'ready', 'the error is cleared');
  });

  await scenario("a run's own settings go over the chat's; a mismatched adapter is refused before anything is stored; observers and lower()", async () => {
    const seen = { events: 0, turns: [] };
    const chat = await open(provider, { onEvent: () => void seen.events++, onTurn: (t, step) => void seen.turns.push([t.role, step]) });
    const out = await chat.send('Short, please', { settings: { system: 'Answer in one line.', maxOutputTokens: 64 } });
    ok(out.stop === 'final', 'final', out);
    // A host that sees the provider's requests checks what was sent.
    if (host.lastRequest) ok((await host.lastRequest()).includes('Answer in one line.'), 'the run\'s system text was sent', await host.lastRequest());
    ok((await code(chat.send('x', { settings: { provider: provider === 'gemini' ? 'anthropic' : 'gemini' } }))) === 'InvalidOptions', 'a provider the adapter does not call');
    ok((await code(chat.send('x', { adapter: {} }))) === 'InvalidOptions', 'not an adapter');
    ok((await code(chat.resume({ attach: 'run-1' }))) === 'InvalidOptions', 'attach without a relay that reconnects');
    same(chat.messages.map((m) => m.role), ['user', 'assistant'], 'nothing more stored');
    ok(seen.events > 3, 'onEvent saw the events', seen.events);
    same(seen.turns, [['assistant', 1]], 'onTurn saw the reply');
    ok(out.steps === 1 && out.usage && out.usage.output_tokens > 0, 'the outcome has steps and usage', out);
    const lowered = chat.lower({ system: 'Next time: two lines.' });
    ok(lowered.body.includes('Next time: two lines.') && lowered.body.includes('Short, please'), 'lower() is the thread as the next request', lowered.body);
  });

  await scenario('misuse is a coded error; nothing is stored', async () => {
    const store = await host.openStore(`chat-${++n}`);
    const conn = host.connect(provider);
    const bad = [
      [{}, 'InvalidOptions'],
      [{ store }, 'InvalidOptions'],
      [{ store, settings: { provider } }, 'InvalidOptions'],
      [{ store, settings: SETTINGS[provider], ...conn, tools: 'x' }, 'InvalidOptions'],
      [{ store, settings: SETTINGS[provider], adapter: {} }, 'InvalidOptions'],
      [{ store, settings: SETTINGS[provider], ...conn, nonce: 3 }, 'InvalidOptions'],
    ];
    for (const [init, want] of bad) {
      let got = 'no error';
      try {
        new pl.Chat(init);
      } catch (e) {
        got = e.code;
      }
      ok(got === want, `new Chat(${JSON.stringify(Object.keys(init))})`, got);
    }
    const chat = await pl.Chat.open({ store, session: 'chat', settings: SETTINGS[provider], ...conn });
    ok((await code(chat.send({ parts: 'nope' }))) === 'InvalidMessage', 'a malformed message');
    ok((await code(chat.regenerate())) === 'InvalidRequest', 'nothing to regenerate');
    ok(chat.status === 'ready' && chat.messages.length === 0, 'nothing shown', chat.getSnapshot());
    same(await store.thread('chat'), [], 'nothing stored');
    const first = chat.send('one');
    ok((await code(chat.send('two'))) === 'InvalidRequest', 'one run at a time');
    await first;
    ok(chat.messages.length === 2, 'the first run went through', chat.messages.length);
  });

  return results;
}
