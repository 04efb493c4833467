// One conversation suite for every JS host (Node, workerd, Chromium): the recorded cases
// byte for byte through lowerConversation and through a Conversation fed turn by turn, the
// error cases with their codes and paths, a thread persisted in a message store and read
// back, and an instance that keeps answering after bad input. It uses no Node API: the
// host passes the package, the cases and a store opener; it returns one result per check.

function tableResolver(resolve) {
  return (req) => {
    const a = (resolve[req.turn] ?? {})[String(req.part)];
    if (!a) return null;
    if ('error' in a) throw new Error(a.error);
    if ('text' in a) return a.text;
    if ('bytes' in a) return { base64: a.bytes, mime: a.mime };
    return a.payload;
  };
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export async function conversationConformance(pl, { cases, errors }, openStore) {
  const results = [];
  const check = (name, ok, detail = '') => results.push({ name, ok: !!ok, detail: ok ? '' : String(detail).slice(0, 2000) });

  let bodies = 0;
  let bad = [];
  for (const c of cases) {
    const resolve = tableResolver(c.resolve);
    const out = await pl.lowerConversation(c.turns, { provider: c.provider, ...c.options, resolve });
    if (out.body !== c.expected.body || !same(out.report, c.expected.report)) bad.push(`${c.name}/${c.provider}: ${out.body}`);
    else bodies++;
  }
  check('lowerConversation gives every recorded body and report', bad.length === 0 && bodies === cases.length, bad.join('\n'));

  bad = [];
  for (const c of cases) {
    const conv = new pl.Conversation();
    for (const [i, t] of c.turns.entries()) {
      const r = c.resolve[i];
      await conv.append(t, r ? { resolve: (req) => tableResolver(c.resolve)({ ...req, turn: i }) } : {});
      // After every turn: the body the stateless form gives for the turns so far (the
      // conversation sends each body as the change from the last one).
      let want;
      try {
        want = (await pl.lowerConversation(c.turns.slice(0, i + 1), { provider: c.provider, ...c.options, resolve: tableResolver(c.resolve) })).body;
      } catch (e) {
        want = e.code;
      }
      let got;
      try {
        got = conv.lower({ provider: c.provider, ...c.options }).body;
      } catch (e) {
        got = e.code;
      }
      if (got !== want) bad.push(`${c.name}/${c.provider} after turn ${i}: ${got}`);
    }
    const out = conv.lower({ provider: c.provider, ...c.options });
    if (out.body !== c.expected.body || !same(out.report, c.expected.report)) bad.push(`${c.name}/${c.provider}: ${out.body}`);
    // Lowering again serves every turn from the cache: the same bytes.
    const stats = conv.cacheStats();
    if (conv.lower({ provider: c.provider, ...c.options }).body !== out.body || conv.cacheStats().hits < stats.hits + c.turns.length) bad.push(`${c.name}/${c.provider}: cache`);
    // Another provider and back: each body whole and right.
    const other = cases.find((x) => x.name === c.name && x.provider !== c.provider);
    if (conv.lower({ provider: other.provider, ...other.options }).body !== other.expected.body) bad.push(`${c.name}: switching to ${other.provider}`);
    if (conv.lower({ provider: c.provider, ...c.options }).body !== c.expected.body) bad.push(`${c.name}: switching back to ${c.provider}`);
    conv.free();
  }
  check('a Conversation fed turn by turn gives the same bytes, and serves them from its cache', bad.length === 0, bad.join('\n'));

  bad = [];
  for (const c of errors) {
    try {
      await pl.lowerConversation(c.turns, { provider: c.provider, ...c.options });
      bad.push(`${c.name}/${c.provider}: no error`);
    } catch (e) {
      if (!(e instanceof pl.PromptloomError) || e.code !== c.expected.code || e.message !== c.expected.message || !same(e.details, c.expected.details)) {
        bad.push(`${c.name}/${c.provider}: ${e.code} ${e.message} ${JSON.stringify(e.details)}`);
      }
    }
  }
  check('conversation errors carry the recorded code, message and path', bad.length === 0, bad.join('\n'));

  // Bad input names the turn and part; the instance keeps answering byte for byte.
  const first = cases[0];
  const before = (await pl.lowerConversation(first.turns, { provider: first.provider, ...first.options, resolve: tableResolver(first.resolve) })).body;
  const hostile = [
    [[{ role: 'user', parts: [{ type: 'text', text: 'a' }] }, { role: 'tool', parts: [{ type: 'tool-result', output: 1 }] }], 'InvalidMessage', 'turns[1].parts[0].call_id'],
    ['not turns', 'InvalidMessage', 'turns'],
    [[{ role: 'assistant', parts: [{ type: 'tool-call', id: 'x', name: '' }] }], 'InvalidMessage', 'turns[0].parts[0].name'],
  ];
  bad = [];
  for (const [turns, code, path] of hostile) {
    try {
      pl.lowerConversation(turns, { provider: 'anthropic' });
      bad.push(`${path}: no error`);
    } catch (e) {
      if (e.code !== code || e.details?.path !== path) bad.push(`${path}: ${e.code} ${JSON.stringify(e.details)}`);
    }
  }
  try {
    const cyclic = { role: 'user', parts: [] };
    cyclic.parts.push({ type: 'text', text: 'x', self: cyclic });
    pl.lowerConversation([cyclic], { provider: 'anthropic' });
    bad.push('cyclic: no error');
  } catch (e) {
    if (e.code !== 'InvalidMessage') bad.push(`cyclic: ${e.code}`);
  }
  const after = (await pl.lowerConversation(first.turns, { provider: first.provider, ...first.options, resolve: tableResolver(first.resolve) })).body;
  check('bad turns fail with a code naming turn and part; the instance answers the same afterwards', bad.length === 0 && before === after, bad.join('\n'));

  if (openStore) {
    // A thread persisted turn by turn, read back, lowered: the recorded body.
    const c = cases.find((x) => x.name === 'tool_round_trip' && x.provider === 'anthropic');
    const store = await openStore();
    const conv = new pl.Conversation({ store, session: 'chat-1' });
    for (const t of c.turns) await conv.append(t);
    const live = conv.lower({ provider: c.provider, ...c.options }).body;
    const back = await pl.Conversation.load({ store, session: 'chat-1' });
    const thread = await store.thread('chat-1');
    const roles = thread.map((t) => t.role).join(',');
    const reloaded = back.lower({ provider: c.provider, ...c.options }).body;
    check('a thread persisted by a Conversation reads back in order and lowers to the same bytes', live === c.expected.body && reloaded === c.expected.body && roles === 'user,assistant,tool,assistant,user', `${roles}\n${reloaded}`);
    // A user message submit() persisted is not written twice when a Conversation appends it.
    const done = await pl.submit({ role: 'user', parts: [{ type: 'text', text: 'again' }] }, { store, session: 'chat-1', now: () => 1 });
    await back.append(done.message);
    const n = (await store.thread('chat-1')).length;
    check('a submitted message appended to a Conversation is stored once', n === 6 && back.length === 6, `${n} stored, ${back.length} held`);
    const history = await store.history('chat-1');
    check('history keeps the user messages of a thread', history.length === 3 && history.every((m) => m.role === 'user'), JSON.stringify(history.map((m) => m.role)));
    let err;
    try {
      await store.append({ role: 'tool', parts: [{ type: 'tool-result' }] }, { session: 'chat-1' });
    } catch (e) {
      err = e;
    }
    const still = (await store.thread('chat-1')).length;
    check('a bad turn is refused by the store with its path; nothing is written', err?.code === 'InvalidMessage' && err?.details?.path === 'parts[0].call_id' && still === 6, `${err?.code} ${JSON.stringify(err?.details)} ${still}`);
    store.close?.();
  }
  return results;
}
