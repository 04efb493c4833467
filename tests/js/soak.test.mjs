// One instance, a million mixed calls (lower, lowerMany, submit, parseInput, import,
// validate, match, compose, arbiter, conversations, hostile inputs): the wasm memory stops
// growing after warm-up. SOAK_CALLS sets the count (default 1 000 000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pl from '../../pkg/src/composer-node.js';
import { __module } from '../../pkg/src/api.js';

const CALLS = Number(process.env.SOAK_CALLS ?? 1_000_000);
const memory = () => __module().__exports().memory.buffer.byteLength;

test(`${CALLS.toLocaleString('en')} mixed calls in one instance: wasm memory flat after warm-up`, async () => {
  const tools = ['choir.memory.query', 'choir.fs.read', 'choir.fs.write', 'search'];
  const registry = pl.buildSkillRegistry(pl.seedSkillSpecs(await pl.systemSkills()), { tools });
  const skill = { name: 'notes', description: 'Writes release notes', metadata: { framing: { artifact: 'F' } }, artifacts: [{ kind: 'prompt_template', name: 'F', content: 'Notes for {{ version }}: {% for c in changes %}- {{ c }}\n{% endfor %}' }] };
  const md = '---\nname: pdf-tools\ndescription: Work with PDFs.\nallowed-tools: Read\n---\n# PDF\nUse it.\n';
  const index = new pl.SkillIndex([{ id: 'a', name: 'release-notes', description: 'Writes release notes', trigger_phrases: ['draft the notes'] }, { id: 'b', name: 'pdf', description: 'Reads PDF files' }]);
  const catalog = new pl.CommandCatalog();
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const msg = (i) => ({ role: 'user', parts: [{ type: 'text', text: `question ${i}` }, { type: 'file-attachment', mime: 'image/png', data: png }] });
  let store = await pl.openMessageStore();
  let conv = new pl.Conversation();
  let arbiter = new pl.Arbiter(registry);
  const ops = [
    (i) => pl.lower(msg(i), { provider: pl.providers[i % 4], system: 'Be brief.' }),
    (i) => pl.lowerMany([msg(i), msg(i + 1)], { provider: 'gemini' }),
    (i) => pl.parseInput(`/review src/a${i}.ts and @file:src/b.ts:1-${i % 50}`, { catalog }),
    (i) => index.match(i % 2 ? 'draft the notes' : 'pdf files', { k: 2 }),
    () => pl.importSkillMd(md, {}, { now: () => Date.parse('2026-11-23T00:00:00Z') }),
    () => pl.validateSkill(skill),
    (i) => pl.compose({ skill_package: skill, user_request: 'x', thread_id: `t${i % 7}`, parameters: { version: `${i}`, changes: ['a', 'b'] } }),
    (i) => {
      conv.append(msg(i));
      conv.append({ role: 'assistant', parts: [{ type: 'text', text: `answer ${i}` }] });
      const out = conv.lower({ provider: 'anthropic' });
      if (conv.length > 40) {
        conv.free();
        conv = new pl.Conversation();
      }
      return out;
    },
    (i) => {
      const lane = `lane-${i % 3}`;
      arbiter.cancel(lane).catch?.(() => {});
      return arbiter.stepContext(lane);
    },
    (i) => {
      try {
        pl.lower({ role: 'user', parts: [{ type: 'text', text: 'a\uD800' }, null, 5] }, { provider: 'nope' });
      } catch (e) {
        assert.ok(e.code);
      }
      try {
        pl.normalizeMessage(i % 2 ? undefined : { parts: 'x' });
      } catch (e) {
        assert.ok(e.code);
      }
    },
  ];
  const run = async (from, to) => {
    for (let i = from; i < to; i++) {
      const op = ops[i % ops.length];
      try {
        const r = op(i);
        if (r && typeof r.then === 'function') await r;
      } catch (e) {
        if (!e.code) throw e;
      }
      if (i % 997 === 0) {
        // Submits are async (the store): a few, then the store starts over.
        await pl.submit(msg(i), { store, now: () => i });
        if (i % (997 * 50) === 0) {
          store.close();
          store = await pl.openMessageStore();
          arbiter = new pl.Arbiter(registry);
        }
      }
    }
  };
  const warm = Math.min(100_000, Math.floor(CALLS / 5));
  await run(0, warm);
  const after = memory();
  await run(warm, CALLS);
  const end = memory();
  assert.equal(end, after, `wasm memory grew from ${after} to ${end} bytes after warm-up`);
});
