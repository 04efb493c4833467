// Benchmark: the compositor on real IndexedDB in headless Chromium, beside the physical floor.
//   submit+persist+lower   submit(10-part mixed message) into an IndexedDB store, then lower
//                          the persisted message it returns (Anthropic); the tests prove it
//                          is byte-identical to what store.get() reads back
//   … + read back          the same, lowering what store.get() reads back instead
//   floor: raw write       the same rows the submit wrote, put in one readwrite
//                          transaction with the bare IndexedDB API
//   history+lower          store.history() of a 1,000-message session, then lower every one
//                          (lowerMany: one call into wasm for the lot)
//   floor: raw read        the same two key ranges (heads, parts) read with getAll in one
//                          readonly transaction
// Ratios, not absolute times: rounds alternate between the contenders and medians are
// reported. Not part of the test command.
import { openBlank } from '../tests/js/chromium.mjs';
import { writeChart } from './chart.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const SUBMITS = Number(process.env.SUBMITS ?? 40);
const HISTORY = Number(process.env.HISTORY ?? 1000);

// The demo page in headless Chromium (the same launch the browser tests use).
const demo = await openBlank();
const { page } = demo;

const result = await page.evaluate(
  async ({ ROUNDS, SUBMITS, HISTORY }) => {
    const pl = await import('/pkg/src/web.js');
    const now = () => performance.now();
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

    // ---- the 10-part mixed message ------------------------------------------------------
    const png = new Uint8Array(24 * 1024);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    for (let i = 8; i < png.length; i++) png[i] = (i * 2654435761) >>> 24;
    const notes = new TextEncoder().encode('# Notes\n' + '- a decision worth keeping\n'.repeat(60));
    const source = Array.from({ length: 200 }, (_, i) => `  const v${i} = compute(${i}) // line ${i + 1}`).join('\n');
    const catalog = new pl.CommandCatalog();
    catalog.register({ name: 'review', body: 'Review $1 for $2 issues.', arguments: [{ name: 'file', required: true }, { name: 'severity' }] });
    const message = () => ({
      role: 'user',
      parts: [
        { type: 'text', text: 'Why does this return undefined?' },
        { type: 'command', id: '/review', args: 'src/lib/foo.ts critical' },
        { type: 'file-ref', ref: { kind: 'path', path: 'src/lib/foo.ts', range: { start: 10, end: 40 } } },
        { type: 'file-attachment', name: 'screen.png', mime: 'image/png', data: png },
        { type: 'mention', target: { kind: 'selection' } },
        { type: 'mention', target: { kind: 'file', path: 'src/lib/bar.ts', range: { start: 1, end: 20 } } },
        { type: 'mention', target: { kind: 'skill', name: 'code-review' } },
        { type: 'editor-context', kind: 'open', payload: { files: ['src/lib/foo.ts', 'src/lib/bar.ts'] } },
        { type: 'file-attachment', name: 'notes.md', mime: 'text/markdown', data: notes },
        { type: 'text', text: 'Keep the fix minimal.' },
      ],
    });
    const mentions = { selection: () => ({ payload: { symbol: 'f', line: 12 }, source: 'editor-1' }) };
    const resolve = (q) => (q.type === 'file' ? source : null);

    // ---- the raw IndexedDB floor --------------------------------------------------------
    const TABLES = ['messages', 'parts', 'blobs', 'sessions', 'ids'];
    const rawDb = await new Promise((res, rej) => {
      const o = indexedDB.open(`floor-${Math.random()}`, 1);
      o.onupgradeneeded = () => TABLES.forEach((t) => o.result.createObjectStore(t));
      o.onsuccess = () => res(o.result);
      o.onerror = () => rej(o.error);
    });
    const rawWrite = (rows, suffix) =>
      new Promise((res, rej) => {
        const t = rawDb.transaction(TABLES, 'readwrite');
        for (const [table, key, value] of rows) t.objectStore(table).put(value, key + suffix);
        t.oncomplete = res;
        t.onerror = () => rej(t.error);
      });
    const rawRead = (prefix) =>
      new Promise((res) => {
        const t = rawDb.transaction(['messages', 'parts'], 'readonly');
        const range = IDBKeyRange.bound(prefix, prefix + '\uffff');
        const out = [];
        for (const s of ['messages', 'parts']) {
          const st = t.objectStore(s);
          st.getAllKeys(range).onsuccess = (e) => out.push(e.target.result.length);
          st.getAll(range).onsuccess = (e) => out.push(e.target.result.length);
        }
        t.oncomplete = () => res(out);
      });

    // ---- submit + persist + lower vs raw write ------------------------------------------
    const store = await pl.openMessageStore({ backend: 'indexeddb', name: `bench-${Math.random()}` });
    const rowsOf = async () => {
      const rows = [];
      for (const t of TABLES) for (const [k, v] of await store.__backend.scan(t, '')) rows.push([t, k, v]);
      return rows;
    };
    // Warm up, and capture the rows one submit writes (for the floor).
    const first = await pl.submit(message(), { store, catalog, mentions, session: 'w' });
    await pl.lowerAsync(await store.get(first.id), { provider: 'anthropic', resolve, store });
    const oneSubmitRows = await rowsOf();
    for (let i = 0; i < 5; i++) {
      await rawWrite(oneSubmitRows, `-warm${i}`);
      const r = await pl.submit(message(), { store, catalog, mentions, session: 'w' });
      await pl.lowerAsync(await store.get(r.id), { provider: 'anthropic', resolve, store });
    }
    const submitTimes = [];
    const readBackTimes = [];
    const backendTimes = [];
    const writeTimes = [];
    const lowerTimes = [];
    const jobTimes = [];
    const submitted = first.message;
    let bodyBytes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let t0 = now();
      for (let i = 0; i < SUBMITS; i++) {
        const r = await pl.submit(message(), { store, catalog, mentions, session: `s${round}` });
        bodyBytes = (await pl.lowerAsync(r.message, { provider: 'anthropic', resolve, store })).body.length;
      }
      submitTimes.push((now() - t0) / SUBMITS);
      t0 = now();
      for (let i = 0; i < SUBMITS; i++) await rawWrite(oneSubmitRows, `-r${round}-${i}`);
      writeTimes.push((now() - t0) / SUBMITS);
      t0 = now();
      for (let i = 0; i < SUBMITS; i++) {
        const ops = oneSubmitRows.map(([table, key, value]) => ({ op: 'put', table, key: `${key}-b${round}-${i}`, value }));
        await store.__backend.commitAfterRead([], () => ops);
      }
      backendTimes.push((now() - t0) / SUBMITS);
      t0 = now();
      for (let i = 0; i < SUBMITS; i++) {
        const r = await pl.submit(message(), { store, catalog, mentions, session: `t${round}` });
        await pl.lowerAsync(await store.get(r.id), { provider: 'anthropic', resolve, store });
      }
      readBackTimes.push((now() - t0) / SUBMITS);
      // The lowering alone (the same call a submit row makes, on a message already submitted).
      t0 = now();
      for (let i = 0; i < SUBMITS; i++) await pl.lowerAsync(submitted, { provider: 'anthropic', resolve, store });
      lowerTimes.push((now() - t0) / SUBMITS);
      // The job's floor in one loop: the raw rows written, then the message lowered, as any
      // library that persists and then lowers does (work between commits slows them a little).
      t0 = now();
      for (let i = 0; i < SUBMITS; i++) {
        await rawWrite(oneSubmitRows, `-j${round}-${i}`);
        await pl.lowerAsync(submitted, { provider: 'anthropic', resolve, store });
      }
      jobTimes.push((now() - t0) / SUBMITS);
    }

    // ---- history of 1,000 messages + lower each vs raw read -----------------------------
    const hist = await pl.openMessageStore({ backend: 'indexeddb', name: `bench-history-${Math.random()}` });
    const small = (i) => ({
      role: 'user',
      parts: [
        { type: 'text', text: `message ${i}: what about this?` },
        { type: 'mention', target: { kind: 'file', path: 'src/a.ts', range: { start: 1, end: 3 } } },
        { type: 'editor-context', kind: 'cursor', payload: { line: i } },
        { type: 'command', id: '/review', args: `src/f${i}.ts` },
      ],
    });
    for (let i = 0; i < HISTORY; i++) await pl.submit(small(i), { store: hist, catalog, session: 'h' });
    // The floor reads the same rows: copy them into the raw database under the same keys.
    const histRows = [];
    for (const t of ['messages', 'parts']) for (const [k, v] of await hist.__backend.scan(t, 'h/')) histRows.push([t, k, v]);
    await rawWrite(histRows, '');
    const historyTimes = [];
    const readTimes = [];
    const lowerManyTimes = [];
    const historyJobTimes = [];
    let lowered = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let t0 = now();
      const msgs = await hist.history('h');
      for (const l of pl.lowerMany(msgs, { provider: 'anthropic' })) lowered += l.body.length > 0 ? 1 : 0;
      historyTimes.push(now() - t0);
      t0 = now();
      await rawRead('h/');
      readTimes.push(now() - t0);
      // lowerMany alone, on the messages already read (the lowering the history row includes).
      t0 = now();
      for (const l of pl.lowerMany(msgs, { provider: 'anthropic' })) lowered += l.body.length > 0 ? 1 : 0;
      lowerManyTimes.push(now() - t0);
      t0 = now();
      await rawRead('h/');
      for (const l of pl.lowerMany(msgs, { provider: 'anthropic' })) lowered += l.body.length > 0 ? 1 : 0;
      historyJobTimes.push(now() - t0);
    }
    store.close();
    hist.close();
    return {
      submit: median(submitTimes),
      readBack: median(readBackTimes),
      backend: median(backendTimes),
      write: median(writeTimes),
      lower: median(lowerTimes),
      lowerMany: median(lowerManyTimes),
      job: median(jobTimes),
      historyJob: median(historyJobTimes),
      history: median(historyTimes),
      read: median(readTimes),
      rowsPerSubmit: oneSubmitRows.length,
      historyRows: histRows.length,
      bodyBytes,
      lowered,
    };
  },
  { ROUNDS, SUBMITS, HISTORY },
);

await demo.close();

const ms = (x) => `${x.toFixed(2)} ms`;
console.log(`\nCompositor on IndexedDB, headless Chromium (median of ${ROUNDS} rounds)\n`);
console.log('| operation | promptloom | raw IndexedDB floor | ratio | target |');
console.log('|---|---:|---:|---:|---:|');
console.log(`| submit + persist + lower, 10-part mixed message (${result.rowsPerSubmit} rows, ${result.bodyBytes} B body) | ${ms(result.submit)} | ${ms(result.write)} | ${(result.submit / result.write).toFixed(2)}× | ≤ 1.3× |`);
console.log(`| (the same rows through promptloom's IndexedDB backend alone) | ${ms(result.backend)} | ${ms(result.write)} | ${(result.backend / result.write).toFixed(2)}× | |`);
console.log(`| … lowering what store.get() reads back | ${ms(result.readBack)} | ${ms(result.write)} | ${(result.readBack / result.write).toFixed(2)}× | |`);
console.log(`| history of ${HISTORY} messages read back + each lowered (${result.historyRows} rows) | ${ms(result.history)} | ${ms(result.read)} | ${(result.history / result.read).toFixed(2)}× | ≤ 1.3× |`);
// The floor of the job itself: the raw IndexedDB work plus the lowering alone (any library that
// persists a message and then lowers it pays both); what promptloom adds above it is the rest.
const f1 = result.write + result.lower;
const f2 = result.read + result.lowerMany;
console.log(`\nFloor of the job: raw IndexedDB + the lowering alone, measured in the same rounds\n`);
console.log('| operation | lowering alone | raw floor + lowering alone (sum) | raw + lowering in one loop | that / raw floor | promptloom / it |');
console.log('|---|---:|---:|---:|---:|---:|');
console.log(`| submit + persist + lower | ${ms(result.lower)} (\`lower()\`) | ${ms(f1)} | ${ms(result.job)} | ${(result.job / result.write).toFixed(2)}× | ${(result.submit / result.job).toFixed(2)}× |`);
console.log(`| history read + lowerMany | ${ms(result.lowerMany)} (\`lowerMany()\` of ${HISTORY}) | ${ms(f2)} | ${ms(result.historyJob)} | ${(result.historyJob / result.read).toFixed(2)}× | ${(result.history / result.historyJob).toFixed(2)}× |`);
writeChart('compositor', 'Compositor on IndexedDB (Chromium): promptloom vs the raw IndexedDB floor', [
  { label: 'submit + persist + lower, 10-part mixed message', bars: [
    { name: 'promptloom', value: result.submit, text: ms(result.submit) },
    { name: 'raw IndexedDB floor', value: result.write, text: ms(result.write) },
  ] },
  { label: `history of ${HISTORY} messages read back + each lowered`, bars: [
    { name: 'promptloom', value: result.history, text: ms(result.history) },
    { name: 'raw IndexedDB floor', value: result.read, text: ms(result.read) },
  ] },
]);
