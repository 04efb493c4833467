//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay (`tests/fuzz_replay.rs`):
//! each takes arbitrary bytes and drives one parser that reads outside input. None may
//! panic, hang or grow without bound; every failure is a typed error, which is ignored.
//! Not part of the API (hidden from the docs); the wasm builds drop it (nothing exports it).

use crate::compositor::{parse_input, CommandCatalog};
use crate::conversation::{lower_conversation, ConversationOptions, Turn};
use crate::lower::{lower, LowerOptions, NoResolver, Provider, TableResolver};
use crate::message::UserMessage;
use crate::skill::{self, skill_md, template};
use crate::store::kv;
use serde_json::Value;

const NOW: &str = "2026-11-23T00:00:00Z";
const PROVIDERS: [Provider; 4] = [
    Provider::Anthropic,
    Provider::OpenAiChat,
    Provider::OpenAiResponses,
    Provider::Gemini,
];

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A fuzz target: arbitrary bytes in, nothing out (it must not panic).
pub type Target = fn(&[u8]);

/// The targets, by name (what `fuzz/fuzz_targets/<name>.rs` and the corpus folders use).
pub const TARGETS: &[(&str, Target)] = &[
    ("message_json", message_json),
    ("conversation_json", conversation_json),
    ("command_text", command_text),
    ("skill_md", skill_md_text),
    ("yaml", yaml),
    ("seed_package", seed_package),
    ("system_skills", system_skills),
    ("skill_spec", skill_spec),
    ("template", template_source),
    ("kv_journal", kv_journal),
    ("response_stream", response_stream),
    ("partial_json", partial_json),
    ("catalog_text", catalog_text),
    #[cfg(feature = "composer")]
    ("contract", contract),
    #[cfg(feature = "composer")]
    ("session_log", session_log),
    #[cfg(feature = "composer")]
    ("json_schema", json_schema),
];

/// A JSON Schema (the first line) and an instance (the rest): the digested schema must
/// answer as the validator that reads the schema does, and a failing instance must give
/// violations.
#[cfg(feature = "composer")]
pub fn json_schema(data: &[u8]) {
    use crate::json_schema::{is_valid, validate, Compiled};
    let Some(t) = text(data) else { return };
    let (s, i) = t.split_once('\n').unwrap_or((t, "null"));
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_str::<Value>(s),
        serde_json::from_str::<Value>(i),
    ) else {
        return;
    };
    let slow = is_valid(&schema, &instance);
    if let Some(c) = Compiled::new(&schema) {
        assert_eq!(c.is_valid(&instance), slow, "the digested schema disagrees");
        // ok: fuzz oracle
    }
    assert_eq!(
        validate(&schema, &instance).is_ok(),
        slow,
        "validate and is_valid disagree"
    ); // ok: fuzz oracle
}

/// A stored session log (one event per line, as the `session_log` rows hold them) opened
/// over a registry with the built-in skills, then driven by a few calls; and each line as a
/// stored proposal row decided both ways. A log that does not replay must be a typed error
/// (`log-diverged` or a bad row), never a panic.
#[cfg(feature = "composer")]
pub fn session_log(data: &[u8]) {
    use crate::arbiter::approval::{self, Decision};
    use crate::arbiter::session::{log_key, Session};
    use crate::arbiter::SkillRegistry;
    let Some(t) = text(data) else { return };
    let tools = ["choir.memory.query".to_owned(), "choir.fs.read".to_owned()];
    // The package's system skills (tool-builder, skill-builder), as a seeded store has them.
    let Ok(seed) = crate::store::seed::read_seed(include_str!("../pkg/system-skills.json"), "")
    else {
        return;
    };
    let Ok(reg) = SkillRegistry::build(&seed.skill_specs(), &[], &tools) else {
        return;
    };
    let rows: Vec<(String, String)> = t
        .lines()
        .enumerate()
        .map(|(i, l)| (log_key("f", i as u64), l.to_owned()))
        .collect();
    if let Ok(mut s) = Session::open(std::sync::Arc::new(reg.clone()), 2, "f", &rows, 1) {
        for (op, a) in [
            ("propose", r#"{"type":"transition","event":"complete"}"#),
            ("lane_event", "tool_result"),
            ("heartbeat", ""),
            ("hierarchy", ""),
            ("stop", ""),
        ] {
            let _ = s.call(op, "core", a, "", 2);
        }
        let _ = s.rollback();
    }
    for line in t.lines().take(8) {
        for approve in [true, false] {
            let d = Decision {
                approve,
                by: "f".into(),
                reason: "r".into(),
                at: 3,
            };
            let _ = approval::decide("f/1", Some(line), &d, &reg);
        }
    }
}

/// A contract document (YAML or JSON text after the first byte) registered beside the
/// seed's contract; when it registers, calls of it with inputs and handler answers cut
/// from the same bytes run through the gateway on the memory port (with the first byte's
/// bits choosing timeouts, failures and the clock's steps), then the planner section, the
/// audit and the review; and the bytes as a state op over stored values. Nothing may
/// panic or hang; every call must end in an output or a typed error.
#[cfg(feature = "composer")]
pub fn contract(data: &[u8]) {
    use crate::gateway::{self, state, CallContext, Failure};
    use crate::registry::{planner::PlannerOptions, Registry};
    let Some((&knobs, rest)) = data.split_first() else {
        return;
    };
    let Some(text) = text(rest) else {
        return;
    };
    let mut r = Registry::default();
    let _ = r.register_text(SEED_CONTRACT);
    let registered = r.register_text(text);
    // The bytes as a state op and stored values.
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        if let Some(op) = state::Op::from_value(&v) {
            let values: Vec<Option<String>> =
                op.keys().iter().map(|_| Some(text.to_owned())).collect();
            let _ = state::apply(&op, &values, f64::from(knobs) * 1e9);
        }
    }
    let Ok(c) = registered else {
        return;
    };
    let name = c.name.clone();
    let r = std::sync::Arc::new(r);
    let mut st = state::MemoryState::default();
    let inputs: Vec<Value> =
        std::iter::once(crate::registry::fields::synthetic(&c.input).unwrap_or(Value::Null))
            .chain(c.examples.iter().filter_map(|e| e.get("input").cloned()))
            .chain(std::iter::once(
                serde_json::from_str(text).unwrap_or(Value::Null),
            ))
            .collect();
    let answers: Vec<Value> =
        std::iter::once(crate::registry::fields::synthetic(&c.output).unwrap_or(Value::Null))
            .chain(c.examples.iter().filter_map(|e| e.get("output").cloned()))
            .collect();
    let mut now = 1.7e12;
    for (i, input) in inputs.iter().cycle().take(12).enumerate() {
        let mut ctx = CallContext::new(["chat", "batch", "voice"][i % 3], ["u1", "u2"][i % 2]);
        ctx.flags = c.feature_flags.clone();
        ctx.tier = c.tiers.first().cloned();
        ctx.session = (knobs & 1 == 1).then(|| "s".to_owned());
        let mut call = gateway::Call::new(r.clone(), &name, input.clone(), ctx, "trace");
        let mut n = 0u32;
        let out = gateway::run_sync(&mut call, &mut st, now, |inv| {
            n += 1;
            let k = knobs.rotate_left(n + i as u32);
            let answer = answers
                .get(i % answers.len().max(1))
                .cloned()
                .unwrap_or(Value::Null);
            let ms = if k & 2 == 2 {
                inv.timeout_ms * 2.0
            } else {
                f64::from(k)
            };
            match k & 12 {
                4 => (
                    Err(Failure {
                        code: c.errors.first().map(|e| e.code.clone()),
                        message: "x".into(),
                        ..Failure::default()
                    }),
                    ms,
                ),
                8 => (
                    Err(Failure {
                        status: Some(503),
                        message: "y".into(),
                        ..Failure::default()
                    }),
                    ms,
                ),
                _ => (Ok(answer), ms),
            }
        });
        if let Err(e) = out {
            assert!(
                crate::error::ErrorKind::ALL.contains(&e.kind())
                    && e.kind() != crate::error::ErrorKind::Internal,
                "{e}"
            );
        }
        assert!(call.is_finished());
        now += f64::from(knobs) * 1000.0;
    }
    let _ = r.planner_section(text, &PlannerOptions::new(PROVIDERS[knobs as usize % 4]));
    let _ = r.overlap_audit(None, 0.5);
    let _ = r.review(&[], 1.0);
}

/// The seed's contract, registered beside every fuzzed one.
#[cfg(feature = "composer")]
const SEED_CONTRACT: &str = include_str!("../tests/contracts/valid/cross-title-link.yaml");

/// A response (SSE, a JSON-array stream or a body) for the provider the first byte picks,
/// fed whole and in chunks the second byte sizes: both must give the same events and turn
/// (the parser is a state machine over any split), and the turn must read back as a turn.
pub fn response_stream(data: &[u8]) {
    use crate::response::ResponseParser;
    let (Some(&p), Some(&size)) = (data.first(), data.get(1)) else {
        return;
    };
    let provider = PROVIDERS[p as usize % PROVIDERS.len()];
    let body = &data[2..];
    let whole = {
        let mut r = ResponseParser::new(provider);
        let mut ev = r.push(body);
        let f = r.finish();
        ev.extend(f.events);
        (ev, f.turn)
    };
    let split = {
        let mut r = ResponseParser::new(provider);
        let mut ev = Vec::new();
        for c in body.chunks(usize::from(size).max(1)) {
            ev.extend(r.push(c));
        }
        let f = r.finish();
        ev.extend(f.events);
        (ev, f.turn)
    };
    assert_eq!(whole, split, "a split changed what the parser read");
    let back = Turn::from_value(whole.1.to_value());
    assert!(back.is_ok(), "the turn does not read back: {back:?}");
}

/// A JSON answer read as it streams, in pieces the first byte sizes: the edits applied
/// must give what the whole text parses to whenever it is JSON (from its first `{` or
/// `[`), and the same object whole or split.
pub fn partial_json(data: &[u8]) {
    use crate::stream::partial::{apply, Partial};
    let Some((&size, rest)) = data.split_first() else {
        return;
    };
    let Some(text) = text(rest) else { return };
    let read = |n: usize| {
        let mut p = Partial::new();
        let mut v = Value::Null;
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + n).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            apply(&mut v, &p.push(&text[at..end]));
            at = end;
        }
        apply(&mut v, &p.end());
        (v, p.done())
    };
    let whole = read(text.len().max(1));
    let split = read(usize::from(size % 16).max(1));
    assert_eq!(whole, split, "a split changed the object");
    if let Some(start) = text.find(['{', '[']) {
        if let Ok(v) = serde_json::from_str::<Value>(&text[start..]) {
            assert!(whole.1, "valid JSON left the reader unfinished");
            assert_eq!(whole.0, v, "the edits do not rebuild the JSON");
        }
    }
}

/// A user message as JSON, lowered for every provider (no resolver).
pub fn message_json(data: &[u8]) {
    let Some(t) = text(data) else { return };
    // The fast reader, where it answers, answers as the JSON tree does.
    if let Some(fast) = crate::message::read_fast(t) {
        assert_eq!(Ok(fast), UserMessage::from_json_tree(t)); // ok: fuzz oracle
    }
    // A text the store would pass through as canonical is what writing its value again
    // gives.
    if crate::store::messages::canonical_value(t) {
        let again =
            serde_json::from_str::<Value>(t).map(|v| crate::json_text::JsonText::json_text(&v));
        assert_eq!(again.ok().as_deref(), Some(t)); // ok: fuzz oracle
    }
    if let Ok(m) = UserMessage::from_json(t) {
        for p in PROVIDERS {
            let _ = lower(&m, &LowerOptions::new(p), &NoResolver);
        }
    }
}

/// A conversation (a JSON array of turns), lowered for every provider.
pub fn conversation_json(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(v) = serde_json::from_str::<Value>(t) else {
        return;
    };
    let Ok(turns) = Turn::list_from_value(v) else {
        return;
    };
    let resolvers: Vec<TableResolver> = Vec::new();
    for p in PROVIDERS {
        let _ = lower_conversation(&turns, &ConversationOptions::new(p), &resolvers);
    }
}

/// What a user typed in the editor: slash commands, mentions, text.
pub fn command_text(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let _ = parse_input(t, &CommandCatalog::with_builtins());
}

/// A `SKILL.md`, imported and (when it imports) exported again.
pub fn skill_md_text(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(out) = skill_md::import_skill_md(t, &[], None, NOW) {
        let _ = skill_md::export_skill_md(&out.skill);
    }
}

/// YAML alone, converted to JSON.
pub fn yaml(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(node) = skill::yaml::parse(t) {
        let _ = node.to_json();
    }
}

/// A catalog in the compact text form the JS glue writes (documents split by `\u{1e}`,
/// fields by `\u{1f}`, list items by `\u{1d}`), then queries (the text after the last
/// `\n`, split by `|`): the index of the text must rank as the index of the same documents
/// read into owned `Doc`s does (the text form scans list fields whole; owned documents give
/// their items one by one).
pub fn catalog_text(data: &[u8]) {
    use crate::catalog::rank::{docs_of_text, MatchOptions, SkillIndex};
    let Some(t) = text(data) else { return };
    let (catalog, queries) = t.rsplit_once('\n').unwrap_or((t, ""));
    let from_text = SkillIndex::from_text(catalog);
    let owned = SkillIndex::build(docs_of_text(catalog));
    for (i, q) in queries.split('|').take(8).enumerate() {
        let opts = MatchOptions {
            k: 1 + i * 3,
            prefix: i % 2 == 0,
            ..MatchOptions::default()
        };
        let a = from_text.to_json(&from_text.rank(q, &opts));
        let b = owned.to_json(&owned.rank(q, &opts));
        assert_eq!(a, b, "{q:?}"); // ok: fuzz oracle
    }
}

/// A skill package in the seed's JSON form, imported and validated.
pub fn seed_package(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let _ = skill::import_package(t, NOW);
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        let _ = skill::validate_skill(&v);
    }
}

/// A system skills seed document, read and migrated into a memory store twice (created,
/// then current), its specs read back; the same text as a stored seed state row and as a
/// skill row the migration plans over.
pub fn system_skills(data: &[u8]) {
    use crate::store::seed::{read_seed, Input, Migrate, State};
    use crate::store::{MemoryBackend, SkillTables};
    let Some(t) = text(data) else { return };
    if let Ok(seed) = read_seed(t, NOW) {
        let mut store = SkillTables::new(MemoryBackend::new());
        let _ = store.seed(&seed, NOW);
        let _ = store.seed(&seed, NOW);
        let _ = store.skill_specs();
        let _ = seed.skill_specs();
    }
    let _ = State::read(Some(t));
    let doc = r#"{"version":2,"skills":[{"name":"a","description":"A."}]}"#;
    if let Ok(seed) = read_seed(doc, NOW) {
        // The text as the seed state row, then as a stored skill row.
        let (mut m, _) = Migrate::seed(seed.clone(), NOW);
        let _ = m.next(Input::Row(Some(t.to_owned())));
        let (mut m, _) = Migrate::seed(seed, NOW);
        if m.next(Input::Row(None)).is_ok() {
            let _ = m.next(Input::Rows(vec![("a".to_owned(), t.to_owned())]));
        }
    }
}

/// A SkillSpec (a skill state machine), validated from its text (the fast reader or the
/// tree, which must agree) and from its tree; a compose request too (both need the composer
/// feature).
pub fn skill_spec(data: &[u8]) {
    let Some(t) = text(data) else { return };
    #[cfg(feature = "composer")]
    let from_text = crate::arbiter::validate::validate_spec_text(t, None).map(|r| r.problems);
    #[cfg(feature = "composer")]
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        let tree = crate::arbiter::validate::validate_spec(&v, None);
        assert_eq!(
            from_text.ok(),
            Some(tree.problems),
            "the two spec readers disagree"
        ); // ok: fuzz oracle
        let _ = crate::composer::compose_value(v);
    }
    #[cfg(not(feature = "composer"))]
    let _ = serde_json::from_str::<Value>(t);
}

/// A template source: the syntax check, and (with the composer) a bounded render of short
/// sources without digits. A value's growth is bounded by the allocation budget, which only
/// the wasm builds' allocator enforces (tested through the JS hosts); natively, a source
/// with large numbers or many self-concatenations would only measure the fuzzer's memory.
pub fn template_source(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let parsed = template::check(t).is_ok();
    #[cfg(not(feature = "composer"))]
    let _ = parsed;
    #[cfg(feature = "composer")]
    if parsed && t.len() <= 64 && !t.bytes().any(|b| b.is_ascii_digit()) {
        let ctx = serde_json::json!({ "user_request": "x", "items": [1, 2, 3], "name": "n" });
        let limits = template::Limits {
            max_value: 1 << 20,
            ..template::Limits::default()
        };
        let _ = template::render(t, &ctx, limits, "fuzz");
    }
}

/// A commit journal left by an interrupted write, as a store reads it back.
pub fn kv_journal(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let _ = kv::undo("p/", t, t);
    let _ = kv::overlay(t);
    let _ = kv::chunks_of("p/", "t:k", t);
}
