// The shared lowering cases (tests/lower/inputs, tests/lower/errors) and what the Rust
// snapshot tests recorded for them, for every JS-side test tier: Node, the browser, the edge
// worker and the component hosts. Each tier must give the recorded body byte for byte.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
export const root = join(here, '..', '..');
const PROVIDERS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

function snapshotBody(text) {
  // insta header: "---\n...\n---\n" then the content.
  const end = text.indexOf('\n---\n', 4);
  const content = text.slice(end + 5);
  const [body] = content.split('\n');
  const report = JSON.parse(content.slice(content.indexOf('report:\n') + 8));
  return { body, report };
}

/** Every success case: { name, provider, message, options, resolve, expected: {body, report} }. */
export function successCases() {
  const dir = join(root, 'tests', 'lower', 'inputs');
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const name = file.replace(/\.json$/, '');
    for (const provider of PROVIDERS) {
      const snap = readFileSync(join(root, 'tests', 'snapshots', `lower__lowered@${name}.${provider}.snap`), 'utf8');
      out.push({ name, provider, message: c.message, options: { ...c.options, ...c.byProvider?.[provider] }, resolve: c.resolve ?? {}, expected: snapshotBody(snap) });
    }
  }
  return out;
}

/** Every error case: { name, provider, message, options, expected: {code, message} | 'ok' }. */
export function errorCases() {
  const dir = join(root, 'tests', 'lower', 'errors');
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const name = file.replace(/\.json$/, '');
    const snap = readFileSync(join(root, 'tests', 'snapshots', `lower__errors@${name}.json.snap`), 'utf8');
    const lines = snap.slice(snap.indexOf('\n---\n', 4) + 5).trim().split('\n');
    for (const line of lines) {
      const provider = line.slice(0, line.indexOf(':'));
      const rest = line.slice(provider.length + 2);
      out.push({ name, provider, message: c.message, options: { ...c.options, ...c.byProvider?.[provider] }, resolve: {}, expected: rest === 'ok' ? 'ok' : JSON.parse(rest) });
    }
  }
  return out;
}

/** A resolve() for lower() that answers from a case's table (wire form). */
export function resolverFor(table, { async = false } = {}) {
  return (req) => {
    const a = table[String(req.part)];
    let v = null;
    if (a) {
      if ('error' in a) {
        if (async) return Promise.reject(new Error(a.error));
        throw new Error(a.error);
      }
      if ('text' in a) v = a.text;
      else if ('bytes' in a) v = a.mime ? { bytes: Buffer.from(a.bytes, 'base64'), mime: a.mime } : new Uint8Array(Buffer.from(a.bytes, 'base64'));
      else if ('payload' in a) v = a.payload;
    }
    return async ? Promise.resolve(v) : v;
  };
}

/** The version-1 store fixtures (rows written before the v2 shape change, and the v2 message each must read back as). */
const v1Dir = join(root, 'tests/compose/v1');
export const v1 = readdirSync(v1Dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(v1Dir, f), 'utf8')));

/**
 * The conversation cases (tests/conversation/inputs) and their recorded bodies:
 * { name, provider, turns, options, resolve: [answers per turn], expected: {body, report} }.
 */
export function conversationCases() {
  const dir = join(root, 'tests', 'conversation', 'inputs');
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const name = file.replace(/\.json$/, '');
    for (const provider of PROVIDERS) {
      const snap = readFileSync(join(root, 'tests', 'snapshots', `conversation__lowered@${name}.${provider}.snap`), 'utf8');
      out.push({ name, provider, turns: c.turns, options: c.options ?? {}, resolve: c.resolve ?? [], expected: snapshotBody(snap) });
    }
  }
  return out;
}

/**
 * The chat views of the conversation inputs (tests/snapshots/chat__the_view_of_every_thread@*):
 * { name, turns, expected } with `expected` the exact JSON text the core wrote.
 */
export function chatViewCases() {
  const dir = join(root, 'tests', 'conversation', 'inputs');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.json$/, '');
      const snap = readFileSync(join(root, 'tests', 'snapshots', `chat__the_view_of_every_thread@${name}.snap`), 'utf8');
      const body = snap.slice(snap.indexOf('\n---\n', 4) + 5);
      return { name, turns: JSON.parse(readFileSync(join(dir, file), 'utf8')).turns, expected: body.slice(0, body.indexOf('\n')) };
    });
}

/** The conversation error cases: { name, provider, turns, options, expected: {code, message, details} }. */
export function conversationErrors() {
  const dir = join(root, 'tests', 'conversation', 'errors');
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const name = file.replace(/\.json$/, '');
    const snap = readFileSync(join(root, 'tests', 'snapshots', `conversation__errors@${name}.json.snap`), 'utf8');
    for (const line of snap.slice(snap.indexOf('\n---\n', 4) + 5).trim().split('\n')) {
      const provider = line.slice(0, line.indexOf(':'));
      out.push({ name, provider, turns: c.turns, options: c.options ?? {}, expected: JSON.parse(line.slice(provider.length + 2)) });
    }
  }
  return out;
}

/**
 * The recorded-shape responses (tests/response/<provider>/*) and what the Rust snapshot
 * recorded for them: { name, provider, body (text), expected: { events, turn, error } }.
 * The oracle line is the events JSON, a NUL, the turn JSON.
 */
export function responseCases() {
  const out = [];
  for (const provider of PROVIDERS) {
    const dir = join(root, 'tests', 'response', provider);
    for (const file of readdirSync(dir).sort()) {
      const snap = readFileSync(join(root, 'tests', 'snapshots', `response__responses_parse_to_events_and_turns@${provider}__${file}.snap`), 'utf8');
      const content = snap.slice(snap.indexOf('\n---\n', 4) + 5);
      const oracle = content.split('\n')[1];
      const [events, turn] = oracle.split('\u0000');
      const err = /\nerror: (.*)\n/.exec(content)[1];
      out.push({ name: `${provider}/${file}`, provider, body: readFileSync(join(dir, file), 'utf8'), expected: { events: JSON.parse(events), turn: JSON.parse(turn), error: err === 'none' ? null : JSON.parse(err) } });
    }
  }
  return out;
}

/** The JSON-answer cases (tests/object, written by tests/response.rs): { name, provider, request, stream, object }. */
export function objectCases() {
  const dir = join(root, 'tests', 'object');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), ...JSON.parse(readFileSync(join(dir, f), 'utf8')) }));
}

/** The contract files of tests/contracts (valid/ and invalid/), by relative path. */
export function gatewayContracts() {
  const out = {};
  for (const d of ['valid', 'invalid']) {
    const dir = join(root, 'tests', 'contracts', d);
    for (const f of readdirSync(dir).sort()) out[`${d}/${f}`] = readFileSync(join(dir, f), 'utf8');
  }
  // The planner sections the Rust snapshot recorded (the byte oracle of every host).
  const snap = readFileSync(join(root, 'tests', 'snapshots', 'gateway__the_planner_section_is_generated_per_provider_and_byte_stable.snap'), 'utf8');
  out.planner = JSON.parse(snap.slice(snap.indexOf('\n---\n', 4) + 5));
  return out;
}
