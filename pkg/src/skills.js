// Skill packages and the skill store: JS glue. Validation, the row layout, write plans and
// the seed migration live in the core; this file moves rows between the core and a storage
// backend. The catalog (matching, decisions, marketplace sync) is catalog.js.

import { PromptloomError, __fromCore, __core, __inbox, __module, __toBase64, __asBytes, __json, __key, __opts, __str, __call, __generation, __encoder, __list, __clock, __iso, __renamed, __longRun, __said, __num } from './api.js';
import { memoryBackend, indexedDbBackend, hostBackend, readPlanned } from './stores.js';
import { FIELD } from './constants.js';


/** @import { Unchecked } from './instance.js' */
/** @import { Backend, Row, WriteOp } from './stores.js' */
/** @typedef {import('../index.js').Skill} Skill */
/** @typedef {import('../index.js').SkillSummary} SkillSummary */
/** @typedef {import('../index.js').SkillArtifact} SkillArtifact */
/** @typedef {ReturnType<typeof import('./instance.js').__longRun>} LongRun */

const json = (/** @type {unknown} */ x, /** @type {string} */ what) => __json(x, what, 'InvalidSkill');

/**
 * A skill or artifact argument as an object: JSON text is parsed (a coded error if it is not JSON).
 * @param {unknown} x
 * @param {string} what
 * @returns {Record<string, unknown>}
 */
function object(x, what) {
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch (e) {
      throw new PromptloomError('InvalidSkill', `${what} is not valid JSON: ${__said(e)} (at $)`, { path: '$' });
    }
  }
  if (x === null || typeof x !== 'object' || Array.isArray(x)) {
    throw new PromptloomError('InvalidSkill', `${what} must be an object or JSON text of one (at $)`, { path: '$' });
  }
  return /** @type {Record<string, unknown>} */ (x);
}

/** A trace filter's old spellings, and what replaced them. */
const TRACE_FILTER = { session_id: 'sessionId', skill_id: 'skillId', artifact_id: 'artifactId' };

/**
 * The time a `now` option answers, as the ISO 8601 text documents store.
 * @param {unknown} now
 * @param {string} [what]
 */
function clock(now, what = 'now') {
  return __iso(__clock(now, what)());
}

/**
 * Rows as the core reads them: `key NUL value NUL …` (JSON text never holds a raw NUL).
 * @param {Row[]} rows
 */
function rowsText(rows) {
  let s = '';
  for (const [k, v] of rows) s += `${k}\0${v}\0`;
  return s;
}

/**
 * @template T
 * @param {() => T} f
 * @returns {T}
 */
function call(f) {
  try {
    return f();
  } catch (e) {
    throw __fromCore(e);
  }
}

/**
 * Every problem of a skill package: `{ valid, problems: [{ path, code, message, severity }] }`.
 * @param {Skill | string} skill
 * @returns {{ valid: boolean, problems: import('../index.js').Problem[] }}
 */
export function validateSkill(skill) {
  return JSON.parse(__core('validateSkill', json(skill, 'the skill')));
}

/**
 * Imports a JSON skill package (the seed's format): `{ skill, warnings }`; throws `InvalidSkill` listing every problem.
 * @param {import('../index.js').SkillPackage | string} pkg
 * @param {{ now?: () => number }} [options]
 * @returns {{ skill: Skill, warnings: import('../index.js').Problem[] }}
 */
export function importPackage(pkg, options) {
  const { now } = __opts(options, 'importPackage()');
  return JSON.parse(__core('importPackage', json(pkg, 'the skill package'), clock(now)));
}

const utf8 = typeof TextDecoder === 'function' ? new TextDecoder('utf-8', { fatal: true }) : null;

/**
 * Bundled files: `{ path: string | bytes }` or `[{ path, content }]` → the core's list.
 * @param {Unchecked} files
 * @returns {{ path: string, content: string, base64: boolean }[]}
 */
function bundled(files) {
  if (files == null) return [];
  if (typeof files !== 'object') throw new PromptloomError('InvalidOptions', '`files` must be an object of path → content or an array of { path, content } (at files)', { path: 'files' });
  /** @type {[unknown, unknown][]} */
  const entries = Array.isArray(files) ? files.map((/** @type {Unchecked} */ f) => [f?.path, f?.content]) : Object.entries(files);
  return entries.map(([path, content], i) => {
    if (typeof path !== 'string') throw new PromptloomError('InvalidOptions', `files[${i}] needs a path`, { path: `files[${i}].path` });
    if (typeof content === 'string') return { path, content, base64: false };
    const bytes = __asBytes(content, `files.${path}`);
    if (!bytes) throw new PromptloomError('InvalidOptions', `the file \`${path}\` must be a string or bytes`, { path: `files.${path}` });
    // Text files passed as bytes stay text; anything else is kept as base64.
    if (utf8 && !bytes.includes(0)) {
      try {
        return { path, content: utf8.decode(bytes), base64: false };
      } catch {
        /* not UTF-8: binary */
      }
    }
    return { path, content: __toBase64(bytes), base64: true };
  });
}

/**
 * Imports an Agent Skills `SKILL.md` and the files bundled beside it: `{ skill, problems }`
 * (problems are where the file breaks the spec without making it unusable); throws
 * `InvalidSkill` otherwise.
 * @param {string} text
 * @param {import('../index.js').BundledFiles} [files]
 * @param {{ dir?: string, now?: () => number }} [options]
 * @returns {{ skill: Skill, problems: import('../index.js').Problem[] }}
 */
export function importSkillMd(text, files, options) {
  const { dir, now } = __opts(options, 'importSkillMd()');
  if (typeof text !== 'string') throw new PromptloomError('InvalidSkill', 'importSkillMd() takes the SKILL.md text', { path: '$' });
  const d = dir == null ? '' : __str(dir, 'dir');
  return JSON.parse(__core('importSkillMd', text, JSON.stringify(bundled(files)), d, clock(now)));
}

/**
 * @param {string} b64
 * @returns {Uint8Array}
 */
function fromBase64(b64) {
  const U8 = /** @type {typeof Uint8Array & { fromBase64?: (s: string) => Uint8Array }} */ (Uint8Array);
  if (typeof U8.fromBase64 === 'function') return U8.fromBase64(b64);
  if (typeof Buffer === 'function') return new Uint8Array(Buffer.from(b64, 'base64'));
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/**
 * Writes a skill as `SKILL.md`: `{ text, files: { path: string | Uint8Array }, dropped }`.
 * @param {Skill | string} skill
 */
export function exportSkillMd(skill) {
  const out = JSON.parse(__core('exportSkillMd', json(skill, 'the skill')));
  /** @type {Record<string, string | Uint8Array>} */
  const files = {};
  for (const f of out.files) files[f.path] = f.base64 ? fromBase64(f.content) : f.content;
  return { text: out.text, files, dropped: out.dropped };
}

/**
 * The model family (`anthropic`, `openai`, `gemini`, …) of a model id or provider name.
 * @param {string} model
 * @returns {string}
 */
export function modelFamily(model) {
  return __core('modelFamily', __key(model, 'model', 'InvalidSkill'));
}

/**
 * The variant of one artifact to use for `model` (exact family → default → first by ordinal).
 * @param {SkillArtifact[]} artifacts
 * @param {string} model
 * @returns {SkillArtifact | undefined}
 */
export function selectVariant(artifacts, model) {
  if (!Array.isArray(artifacts)) throw new PromptloomError('InvalidSkill', 'selectVariant() takes an array of artifacts', { path: '$' });
  const i = __core('selectVariant', json(artifacts, 'the artifacts'), __key(model, 'model', 'InvalidSkill'));
  return i < 0 ? undefined : artifacts[i];
}

const STALE = 'promptloom:stale';

/**
 * Summaries in the core's listing order (by name, then id, in code point order).
 * @param {SkillSummary[]} list
 * @returns {SkillSummary[]}
 */
function byName(list) {
  if (list.length < 2) return list;
  const order = __module().summaryOrder(list.map((s) => s.name).join(FIELD), list.map((s) => s.id).join(FIELD));
  return Array.from(/** @type {Uint32Array} */ (order), (i) => list[i]);
}

/**
 * Skill rows → summaries sorted by name. The rows are the core's own JSON: they are parsed
 * here in one go (the engine's JSON parser), and only a row that does not hold the summary
 * shape goes through the core, which names what is wrong with it.
 * @param {(Row | [null, string])[]} rows `[null, value]` rows when the backend read values only
 * @param {Backend} backend
 * @returns {SkillSummary[] | Promise<SkillSummary[]>}
 */
function summaries(rows, backend) {
  if (rows.length === 0) return [];
  /** @type {Unchecked[] | null} */
  let list;
  try {
    list = JSON.parse(`[${rows.map((r) => r[1]).join(',')}]`);
  } catch {
    list = null;
  }
  const ok = list && list.length === rows.length && list.every((/** @type {Unchecked} */ s) => s && typeof s.id === 'string' && typeof s.name === 'string' && Array.isArray(s.artifacts));
  if (ok) return byName(/** @type {SkillSummary[]} */ (list));
  // A malformed row: the core names it (with its key, read again when it was not kept).
  return (async () => JSON.parse(__inbox('skillSummaries', [rowsText(rows[0][0] === null ? await backend.scan('skills', '') : /** @type {Row[]} */ (rows))])))();
}

/** A skill store over one backend: the seed's repository operations. */
class SkillStore {
  /** @type {Backend} */
  #backend;
  /** @type {() => string} */
  #now;
  /** Increases with every write through this instance (catalogs rebuild their index on change). */
  version = 0;
  /** What `openSkillStore({ seed })` did: the migration's report, or null when opened without one. @type {object | null} */
  seeded = null;
  /**
   * @param {Backend} backend
   * @param {string} name
   * @param {() => string} now the clock, as ISO 8601 text
   */
  constructor(backend, name, now) {
    this.#backend = backend;
    this.#now = now;
    this.name = name;
    this.backend = backend.kind;
  }
  /** @internal */
  get __backend() {
    return this.#backend;
  }
  /** @internal */
  __now() {
    return this.#now();
  }
  /**
   * Summaries (metadata and artifact references, no content), by name; `{ source, tags,
   * enabled }` filter by the core's rule (skill::model::ListFilter).
   * @param {{ source?: import('../index.js').SkillSource, tags?: string[], enabled?: boolean }} [options]
   * @returns {Promise<SkillSummary[]>}
   */
  async list(options) {
    const filter = __opts(options, 'list()');
    const { source } = filter;
    const b = this.#backend;
    const byIndex = typeof source === 'string' && b.byIndex;
    // Anything but a source read from the index goes through the core's filter.
    const core = Object.keys(filter).some((k) => filter[k] !== undefined && !(k === 'source' && byIndex));
    const filterText = core ? __json(filter, 'the filter', 'InvalidOptions', { text: false, path: 'options' }) : '';
    /** @type {(Row | [null, string])[]} */
    let rows;
    if (byIndex) rows = await byIndex('skills', 'source', source);
    else if (b.values) rows = (await b.values('skills', '')).map((v) => /** @type {[null, string]} */ ([null, v]));
    else rows = await b.scan('skills', '');
    const out = await summaries(rows, b);
    return core ? JSON.parse(__inbox('filterSkills', [JSON.stringify(out), filterText])) : out;
  }
  /**
   * The skill with all its artifacts, or null.
   * @param {string} id
   * @returns {Promise<Skill | null>}
   */
  async get(id) {
    return readPlanned(this.#backend, 'skill', __key(id, 'id'));
  }
  /**
   * The summary (metadata and artifact references, no content) of the skill with this name
   * or id, or null: one or two reads, no artifact rows.
   * @param {string} nameOrId
   * @returns {Promise<SkillSummary | null>}
   */
  async summary(nameOrId) {
    return readPlanned(this.#backend, 'summary', __key(nameOrId, 'nameOrId'));
  }
  /**
   * The skill named `name`, or null.
   * @param {string} name
   * @returns {Promise<Skill | null>}
   */
  async getByName(name) {
    return readPlanned(this.#backend, 'skill_by_name', __key(name, 'name'));
  }
  /**
   * Phase 2: one skill's artifacts of the given kinds (all when omitted), by ordinal.
   * @param {string} skillId
   * @param {import('../index.js').ArtifactKind[] | null} [kinds]
   * @returns {Promise<SkillArtifact[]>}
   */
  async getArtifacts(skillId, kinds) {
    const list = kinds === undefined || kinds === null ? [] : __list(kinds, 'kinds').map((k, /** @type {number} */ i) => __key(k, `kinds[${i}]`));
    return readPlanned(this.#backend, 'artifacts', __key(skillId, 'skillId'), ...list);
  }
  /**
   * One artifact by id, or null.
   * @param {string} id
   * @returns {Promise<SkillArtifact | null>}
   */
  async getArtifact(id) {
    return readPlanned(this.#backend, 'artifact', __key(id, 'id'));
  }
  /**
   * Creates a skill with its artifacts (one transaction); its id and name must be free. Returns the summary.
   * @param {Skill | string} skill
   * @returns {Promise<SkillSummary>}
   */
  create(skill) {
    return this.#write({ op: 'create', skill: object(skill, 'the skill') });
  }
  /**
   * Creates or replaces a skill with its artifacts (one transaction). Returns the summary.
   * @param {Skill | string} skill
   * @returns {Promise<SkillSummary>}
   */
  put(skill) {
    return this.#write({ op: 'put', skill: object(skill, 'the skill') });
  }
  /**
   * Updates a skill's metadata; its artifacts stay. Returns the summary.
   * @param {Partial<Skill> | string} skill
   * @returns {Promise<SkillSummary>}
   */
  update(skill) {
    return this.#write({ op: 'update', skill: object(skill, 'the skill') });
  }
  /**
   * Deletes a skill and all its artifacts: `{ deleted, artifacts }`.
   * @param {string} id
   * @returns {Promise<{ deleted: boolean, artifacts: number }>}
   */
  delete(id) {
    return this.#write({ op: 'delete', id: __key(id, 'id') });
  }
  /**
   * Adds an artifact (`skill_id` names its skill). Returns the stored artifact.
   * @param {SkillArtifact | string} artifact
   * @returns {Promise<SkillArtifact>}
   */
  addArtifact(artifact) {
    return this.#write({ op: 'add_artifact', artifact: object(artifact, 'the artifact') });
  }
  /**
   * Replaces an artifact (same id). Returns the stored artifact.
   * @param {SkillArtifact | string} artifact
   * @returns {Promise<SkillArtifact>}
   */
  updateArtifact(artifact) {
    return this.#write({ op: 'update_artifact', artifact: object(artifact, 'the artifact') });
  }
  /**
   * Deletes an artifact: `{ deleted }`.
   * @param {string} id
   * @returns {Promise<{ deleted: boolean }>}
   */
  deleteArtifact(id) {
    return this.#write({ op: 'delete_artifact', id: __key(id, 'id') });
  }
  /**
   * Records an execution trace (the seed's columns: session_id, skill_id, artifact_id,
   * artifact_kind, rendered_input, raw_output, error, started_at, completed_at,
   * duration_ms, input_tokens, output_tokens, model_id, assertions_run, assertions_passed;
   * `pricing: { input_per_mtok, output_per_mtok }` fills estimated_cost). Returns the row.
   * @param {import('../index.js').TraceInput} trace
   * @returns {Promise<import('../index.js').TraceRow>}
   */
  async recordTrace(trace) {
    const { key, row } = JSON.parse(__inbox('traceRow', [__json(trace, 'the trace', 'InvalidOptions', { text: false })]));
    await this.__putTrace(key, row);
    return row;
  }
  /**
   * @internal
   * @param {string} key
   * @param {unknown} row
   */
  async __putTrace(key, row) {
    await this.#backend.commitAfterRead([], () => [{ op: 'put', table: 'skill_traces', key, value: JSON.stringify(row) }]);
  }
  /**
   * Traces as JSON lines (seed columns first), filtered by session, skill and artifact; with
   * `format: "dspy"`, a DSPy evaluation dataset.
   * @param {import('../index.js').TraceFilter & { format?: 'jsonl' | 'dspy' }} [filter]
   * @returns {Promise<string>}
   */
  async exportTraces(filter) {
    const { sessionId: session_id, skillId: skill_id, artifactId: artifact_id, format } = __renamed(__opts(filter, 'exportTraces()'), TRACE_FILTER, 'exportTraces()');
    const opt = (/** @type {unknown} */ v, /** @type {string} */ what) => (v == null ? '' : __key(v, what));
    return readPlanned(this.#backend, 'traces', opt(session_id, 'sessionId'), opt(skill_id, 'skillId'), opt(artifact_id, 'artifactId'), opt(format, 'format'));
  }
  /**
   * One page of traces in key order (a session's in start order): at most `pageSize` rows
   * (default 100, at most 10,000) after the cursor `after` (a page's `next`; none: the
   * first page), filtered as traces() is → `{ items, next }`, `next` null at the end. The
   * backend reads one key range; a filter can leave a page short, or empty, before the end.
   * @param {import('../index.js').TraceFilter & { after?: string | null, pageSize?: number }} [options]
   * @returns {Promise<import('../index.js').TracePage>}
   */
  async tracePage(options) {
    const { sessionId, skillId, artifactId, after, pageSize = 100 } = __renamed(__opts(options, 'tracePage()'), TRACE_FILTER, 'tracePage()');
    const opt = (/** @type {unknown} */ v, /** @type {string} */ what) => (v == null ? '' : __key(v, what));
    const size = String(__num(pageSize, 'pageSize', { integer: true, min: 1 }));
    return readPlanned(this.#backend, 'trace_page', opt(sessionId, 'sessionId'), opt(skillId, 'skillId'), opt(artifactId, 'artifactId'), opt(after, 'after'), size);
  }
  /**
   * Every trace page by page, following the cursors (the non-empty pages); each read is one
   * page. A `signal` stops it before its next read.
   * @param {import('../index.js').TraceFilter & { pageSize?: number, signal?: AbortSignal }} [options]
   * @returns {AsyncGenerator<import('../index.js').TracePage, void, undefined>}
   */
  async *tracePages(options) {
    const { signal, after: _, ...rest } = __opts(options, 'tracePages()');
    const run = __longRun({ signal }, 'tracePages()');
    /** @type {string | null} */
    let after = null;
    for (;;) {
      run.stop();
      const p = await this.tracePage({ ...rest, after });
      if (p.items.length > 0) yield p;
      if (p.next === null) return;
      after = p.next;
    }
  }
  /**
   * Trace rows, filtered as exportTraces() does.
   * @param {import('../index.js').TraceFilter} [filter]
   * @returns {Promise<import('../index.js').TraceRow[]>}
   */
  async traces(filter = {}) {
    const { format: _, ...rows } = __opts(filter, 'traces()');
    const lines = await this.exportTraces(rows);
    return lines === '' ? [] : lines.trimEnd().split('\n').map((/** @type {string} */ l) => JSON.parse(l));
  }
  /**
   * Migrates this store to a system skills seed: `await systemSkills()` (the package's) or a
   * host's own `{ version, skills }`. A store never seeded gets every skill, one seeded with
   * an older version gets the changed and new ones and loses the dropped ones, a store at
   * this version or a newer one is left alone (one row read). Only skills the seed wrote
   * are replaced or deleted. Returns `{ status: "created" | "upgraded" | "current" |
   * "newer", version, previous, upserted, unchanged, removed, skipped }`. An invalid seed
   * is `InvalidSkill` (every problem listed) before anything is read or written.
   * @param {import('../index.js').SeedDocument | string} document
   * @param {import('../index.js').LongRunOptions} [options]
   * @returns {Promise<import('../index.js').SeedReport>}
   */
  async seed(document, options) {
    const run = __longRun(__opts(options, 'seed()'), 'seed()');
    run.stop();
    const M = __module();
    const m = __inbox((/** @type {Uint32Array} */ lens) => new M.SkillMigration(lens, this.#now()), ['seed', __json(document, 'the seed', 'InvalidSkill')]);
    try {
      return await migrate(this, m, run);
    } finally {
      m.free();
    }
  }
  /** The SkillSpecs this store's enabled skills carry in `metadata.skill_spec`, by name (for buildSkillRegistry). */
  async skillSpecs() {
    return JSON.parse(__inbox('skillSeed', ['specs', rowsText(await this.#backend.scan('skills', ''))]));
  }
  /** Closes the backend. */
  close() {
    this.#backend.close();
  }
  /**
   * One write: the core names the rows it needs; they are read inside the write
   * transaction and the batch is planned on those values, so one transaction does it (a
   * plan that needs further rows — an artifact's skill — names them, and the write starts
   * over with them). A row another tab changes in between is never written over blindly.
   * @param {{ op: string, skill?: unknown, artifact?: unknown, id?: string }} request
   * @returns {Promise<any>} what the write answers (a summary, an artifact, a deletion's counts)
   */
  async #write(request) {
    const M = __module();
    const now = this.#now();
    const w = __inbox((/** @type {Uint32Array} */ lens) => new M.SkillWrite(lens, now), [__json(request, 'the skill', 'InvalidSkill', { text: false })]);
    try {
      // The core's writer decides what each transaction reads, what it writes, and when a
      // conflict is tried again; this loop only runs the transactions.
      for (;;) {
        const keys = JSON.parse(w.keys());
        /** @type {unknown} */
        let result;
        let more = false;
        try {
          await this.#backend.commitAfterRead(keys, (values) => {
            const q = planOf(call(() => w.build(JSON.stringify(values))));
            if (q.read) {
              more = true;
              throw new PromptloomError('StoreFailed', 'the write needs more rows', { [STALE]: true });
            }
            result = q.result;
            return q.ops;
          });
        } catch (e) {
          if (more && e instanceof PromptloomError && e.details?.[STALE]) continue;
          if (!(e instanceof PromptloomError && e.details?.conflict)) throw e;
          w.conflicted();
          continue;
        }
        this.version++;
        return result;
      }
    } finally {
      w.free();
    }
  }
}

/**
 * Runs a migration (or a sync's writes) on `store`: the core's machine (store::seed::Migrate)
 * names each read and write — what is skipped, what stops it, the state row last — and this
 * performs them. `run` (from __longRun) sees each write: it stops
 * before the next one once its signal fires (what is written stays; the state row is
 * written last, so the next run finishes the job) and hears `{ phase: 'writing', done,
 * total }` before each and once all are done.
 * @param {SkillStore} store
 * @param {any} m wasm-bindgen's SkillMigration
 * @param {LongRun | undefined} run
 * @returns {Promise<any>} the migration's report
 */
async function migrate(store, m, run) {
  const b = store.__backend;
  /** @type {Unchecked} the core's next step */
  let step = JSON.parse(m.first());
  let total = 0;
  /**
   * @param {LongRun | undefined} r
   * @param {{ done: number, total: number }} s
   */
  const progress = (r, s) => {
    total = s.total;
    if (r) {
      r.stop();
      r.tell('writing', s.done, s.total);
      r.stop(); // an observer may abort on what it heard
    }
  };
  const next = (/** @type {string} */ what, payload = '') => JSON.parse(call(() => m.next(what, payload)));
  for (;;) {
    switch (step.do) {
      case 'done':
        if (run && total > 0) run.tell('writing', total, total);
        return step.report;
      case 'read': {
        const row = await b.get(step.table, step.key);
        step = row == null ? next('absent') : next('row', row);
        break;
      }
      case 'scan':
        step = next('rows', rowsText(await b.scan('skills', '')));
        break;
      case 'put': {
        progress(run, step);
        let failed = '';
        try {
          await store.put(step.skill);
        } catch (e) {
          if (!(e instanceof PromptloomError)) throw e;
          failed = `${e.code}\0${e.message}`;
        }
        step = next('put', failed);
        break;
      }
      case 'delete':
        progress(run, step);
        await store.delete(step.id);
        step = next('done');
        break;
      case 'commit':
        await b.commitAfterRead([], () => [step.op]);
        step = next('done');
        break;
      default:
        throw new PromptloomError('Internal', `the migration asked for \`${step.do}\``, {});
    }
  }
}

/** @type {Promise<string> | undefined} */
let seedData;
/** The package's seed document as text (a module of its own, loaded on first use). */
function systemSeedText() {
  seedData ??= import('../dist/system-skills.js').then((m) => m.default);
  return seedData;
}

/**
 * The package's system skills: the seed document `{ version, skills }` a store is migrated
 * with (`openSkillStore({ seed: true })`), holding `tool-builder` and `skill-builder`, the
 * state machines whose `propose` states make proposals for human approval. Loaded on first use.
 */
export async function systemSkills() {
  return JSON.parse(await systemSeedText());
}

/**
 * The SkillSpecs a seed document carries (`await systemSkills()` for the package's), by name.
 * @param {import('../index.js').SeedDocument | string} document
 * @returns {Record<string, unknown>}
 */
export function seedSkillSpecs(document) {
  return JSON.parse(__inbox('skillSeed', ['seed-specs', __json(document, 'the seed', 'InvalidSkill')]));
}

/**
 * A plan from the core: JSON, then each row value after a NUL (ops name theirs by `at`).
 * @param {string} text
 * @returns {{ read?: unknown, ops: (WriteOp & { at?: number })[], result?: unknown, result_at?: number }}
 */
function planOf(text) {
  const cut = text.indexOf('\0');
  const p = JSON.parse(cut < 0 ? text : text.slice(0, cut));
  if (p.ops && cut >= 0) {
    const values = text.slice(cut + 1).split('\0');
    for (const op of p.ops) if (op.at !== undefined) op.value = values[op.at];
    if (p.result_at !== undefined) p.result = JSON.parse(values[p.result_at]);
  }
  return p;
}

/**
 * Opens a skill store: `backend` is "indexeddb" (browsers: one database per name, e.g. one
 * per scope), "memory", or a host object with async get/put/delete/list (a Cloudflare KV
 * namespace as it is). `now`, a clock answering epoch milliseconds, stamps what it stores
 * (as ISO 8601 text). `seed: true` migrates the
 * store to the package's system skills (`systemSkills()`; a host may pass its own seed
 * document): open the account scope with it. The report is `store.seeded` (null unseeded).
 * @param {{ backend?: 'indexeddb' | 'memory' | object, name?: string, now?: () => number, seed?: boolean | import('../index.js').SeedDocument }} [options]
 * @returns {Promise<SkillStore>}
 */
export async function openSkillStore(options) {
  const { backend = 'memory', name = 'promptloom-skills', now, seed } = __opts(options, 'openSkillStore()');
  if (seed !== undefined && seed !== false && seed !== true && (seed === null || typeof seed !== 'object')) {
    throw new PromptloomError('InvalidOptions', '`seed` must be true (the package\'s system skills) or a seed document `{ version, skills }` (at seed)', { path: 'seed' });
  }
  const ms = __clock(now);
  const stamp = () => __iso(ms());
  const store = await openStore(backend, name, stamp);
  if (seed) {
    try {
      store.seeded = await store.seed(seed === true ? await systemSeedText() : seed);
    } catch (e) {
      store.close();
      throw e;
    }
  }
  return store;
}

/**
 * @param {unknown} backend
 * @param {unknown} name
 * @param {() => string} now
 * @returns {Promise<SkillStore>}
 */
async function openStore(backend, name, now) {
  __key(name, 'name');
  if (typeof name !== 'string' || name === '') throw new PromptloomError('InvalidOptions', '`name` must be a non-empty string (at name)', { path: 'name' });
  if (backend === 'memory') return new SkillStore(memoryBackend(), name, now);
  if (backend === 'indexeddb') return new SkillStore(await indexedDbBackend(name), name, now);
  if (backend && typeof backend === 'object') return new SkillStore(hostBackend(backend, name), name, now);
  throw new PromptloomError('InvalidOptions', '`backend` must be "indexeddb", "memory" or an object with get/put/delete/list (at backend)', { path: 'backend' });
}

/** @internal For catalog.js. */
export { object as __object, rowsText as __rowsText, summaries as __summaries, SkillStore as __SkillStore, migrate as __migrate };
