//! The compositor: one case per row of the spec's tables (`tests/compose/inputs`), each
//! submitted through the message store, read back and lowered; errors
//! (`tests/compose/errors`); version-1 rows read back as version 2 (`tests/compose/v1`); and
//! property tests (persist → read → lower equals direct lowering; round trips).
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::Rng;

use promptloom::compositor::{parse_input, CommandCatalog, SessionState, Step, SubmitOptions};
use promptloom::lower::{lower, LowerOptions, NoResolver, Provider};
use promptloom::store::{messages, Backend, MemoryBackend, MessageStore, Op, Table};
use promptloom::wire::resolver_table;
use promptloom::UserMessage;
use serde_json::{json, Map, Value};
use std::path::Path;

struct Case {
    catalog: CommandCatalog,
    message: Value,
    options: Value,
    answers: Option<Map<String, Value>>,
    session: Option<Value>,
    resolve: String,
}

fn load(path: &Path) -> Result<Case, promptloom::Error> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(); // ok: test
    let mut catalog = CommandCatalog::with_builtins();
    for e in v
        .get("catalog")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
    {
        catalog.register(e)?;
    }
    for e in v
        .get("mentions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
    {
        catalog.register_mention(e)?;
    }
    let message = match v.get("text").and_then(Value::as_str) {
        Some(t) => UserMessage::new(parse_input(t, &catalog)).to_value(),
        None => v["message"].clone(),
    };
    Ok(Case {
        catalog,
        message,
        options: v.get("options").cloned().unwrap_or(json!({})),
        answers: v.get("answers").and_then(Value::as_object).cloned(),
        session: v.get("session").cloned(),
        resolve: v
            .pointer("/lower/resolve")
            .map(Value::to_string)
            .unwrap_or_default(),
    })
}

/// Submits a case into `store`: the first step's questions, then the submission.
fn submit(
    case: &Case,
    store: &mut MessageStore<MemoryBackend>,
) -> Result<(Value, promptloom::compositor::Submission), promptloom::Error> {
    let msg = UserMessage::from_value(case.message.clone())?;
    let mut o = case.options.clone();
    o.as_object_mut()
        .unwrap()
        .insert("now".into(), 1_700_000_000_000i64.into()); // ok: test
    let opts = SubmitOptions::from_value(o)?;
    if let Some(s) = &case.session {
        let state = SessionState::from_value(s);
        let mut b = MemoryBackend::new();
        b.commit(&[Op::Put {
            table: Table::Sessions,
            key: opts.session.clone(),
            value: state.to_value().to_string(),
        }])?;
        *store = MessageStore::new(b);
    }
    let needs = match store.submit(&msg, &case.catalog, &opts, None)? {
        Step::Done(sub) => return Ok((Value::Null, *sub)),
        Step::Needs(n) => Value::Array(n.into_iter().map(|r| r.request).collect()),
        Step::NeedsData(_) => panic!("no case holds data outside the message"),
    };
    let empty = Map::new();
    match store.submit(
        &msg,
        &case.catalog,
        &opts,
        Some(case.answers.as_ref().unwrap_or(&empty)),
    )? {
        Step::Done(sub) => Ok((needs, *sub)),
        Step::Needs(_) | Step::NeedsData(_) => panic!("asked twice"),
    }
}

#[test]
fn cases() {
    insta::glob!("compose/inputs/*.json", |path| {
        let case = load(path).unwrap(); // ok: test
        let mut store = MessageStore::new(MemoryBackend::new());
        let (needs, sub) = submit(&case, &mut store).unwrap(); // ok: test
                                                               // Persisted before lowering; read back unchanged.
        let back = store.get(&sub.id).unwrap(); // ok: test
        assert_eq!(back, sub.message, "read back differs");
        assert_eq!(back.to_json(), sub.message.to_json());
        // The layout writes each part once; its message text is the message's own JSON.
        assert_eq!(
            promptloom::store::messages::layout(&sub).1,
            sub.message.to_json()
        );
        // Replay: lowering what was read back gives the same bytes as lowering the submission.
        let table = resolver_table(&case.resolve).unwrap(); // ok: test
        let opts = LowerOptions::new(Provider::Anthropic);
        let direct = lower(&sub.message, &opts, &store.resolver(&table));
        let table2 = resolver_table(&case.resolve).unwrap(); // ok: test
        let replay = lower(&back, &opts, &store.resolver(&table2));
        let model = match (&direct, &replay) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.body, b.body, "replay differs");
                json!({"body": a.body_value().unwrap(), "dropped": a.report.dropped, "warnings": a.report.warnings})
                // ok: test
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b);
                json!({"error": a.to_json()})
            }
            _ => panic!("replay and direct lowering disagree"),
        };
        let doc = json!({
            "input": case.message,
            "host_questions": needs,
            "persisted": sub.message.to_value(),
            "actions": sub.actions,
            "skills": sub.skills,
            "warnings": sub.warnings,
            "blobs": sub.blobs.iter().map(|b| json!({"content_id": b.content_id, "mime": b.mime, "size": b.size})).collect::<Vec<_>>(),
            "session_after": sub.state.to_value(),
            "model_view_anthropic": model,
        });
        insta::assert_json_snapshot!(doc);
    });
}

#[test]
fn errors() {
    insta::glob!("compose/errors/*.json", |path| {
        let err = match load(path) {
            Err(e) => e,
            Ok(case) => {
                let mut store = MessageStore::new(MemoryBackend::new());
                let e = match submit(&case, &mut store) {
                    Err(e) => e,
                    Ok(_) => panic!("the case must fail"),
                };
                // Nothing was written.
                assert!(store.backend().is_empty(), "a failed submit wrote rows");
                e
            }
        };
        insta::assert_snapshot!(err.to_json());
    });
}

/// Version-1 rows (written before the v2 shape change) are read back in the v2 shape by the
/// read-time adapter; the rows themselves are not rewritten.
#[test]
fn v1_rows_read_as_v2() {
    insta::glob!("compose/v1/*.json", |path| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(); // ok: test
        let mut b = MemoryBackend::new();
        let mut ops = Vec::new();
        for (table, rows) in v["rows"].as_object().unwrap() {
            // ok: test
            for (key, value) in rows.as_object().unwrap() {
                // ok: test
                ops.push(Op::Put {
                    table: Table::parse(table).unwrap(),
                    key: key.clone(),
                    value: value.to_string(),
                }); // ok: test
            }
        }
        b.commit(&ops).unwrap(); // ok: test
        let before: Vec<_> = Table::ALL.iter().map(|t| b.scan(*t, "").unwrap()).collect(); // ok: test
        let store = MessageStore::new(b);
        let id = v["id"].as_str().unwrap(); // ok: test
        let msg = store.get(id).unwrap(); // ok: test
        assert_eq!(msg.metadata.schema_version, 2);
        assert_eq!(msg.to_value(), v["expect_v2"], "upgraded shape");
        let history = store.history(v["session"].as_str().unwrap()).unwrap(); // ok: test
        assert!(history.contains(&msg));
        // Lowered from the store equals lowered from the expected v2 message.
        let expect = UserMessage::from_value(v["expect_v2"].clone()).unwrap(); // ok: test
        for p in Provider::ALL {
            let opts = LowerOptions::new(p);
            let a = lower(&msg, &opts, &store.resolver(&NoResolver)).unwrap(); // ok: test
            let b = lower(&expect, &opts, &store.resolver(&NoResolver)).unwrap(); // ok: test
            assert_eq!(a.body, b.body);
        }
        let after: Vec<_> = Table::ALL
            .iter()
            .map(|t| store.backend().scan(*t, "").unwrap())
            .collect(); // ok: test
        assert_eq!(before, after, "reading rewrote rows");
        insta::assert_json_snapshot!(msg.to_value());
    });
}

fn random_text(r: &mut Rng) -> String {
    let words = [
        "fix",
        "the",
        "@selection",
        "@file:src/a.ts:1-2",
        "@skill:pdf",
        "a@b.com",
        "\\@x",
        "ünï",
        "\"q\"",
        "@open",
        "@file:\"x y.md\"",
        "$1",
        "\n",
        "/nope",
    ];
    let n = 1 + r.below(8);
    let mut s = String::new();
    if r.below(3) == 0 {
        s.push_str(r.pick(&["/review ", "/search ", "/compact ", "/unknown ", "/echo "]));
    }
    for _ in 0..n {
        s.push_str(r.pick(&words));
        s.push(' ');
    }
    s
}

/// Persist → read → lower equals direct lowering, and the message round-trips unchanged,
/// over generated typed text, attachments and editor context.
#[test]
fn property_persist_read_lower() {
    let mut catalog = CommandCatalog::with_builtins();
    catalog.register(json!({"name": "review", "body": "Review $1 ($2)", "arguments": [{"name": "file"}, {"name": "sev"}]})).unwrap(); // ok: test
    catalog
        .register(json!({"name": "echo", "body": "$ARGUMENTS"}))
        .unwrap(); // ok: test
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut store = MessageStore::new(MemoryBackend::new());
    let mut checked = 0;
    for round in 0..300 {
        let mut parts = parse_input(&random_text(&mut r), &catalog);
        if r.below(2) == 0 {
            parts.push(
                promptloom::Part::from_value(
                    json!({"type": "file-attachment", "name": "d.png", "data": png}),
                    0,
                )
                .unwrap(),
            ); // ok: test
        }
        if r.below(3) == 0 {
            parts.push(
                promptloom::Part::from_value(
                    json!({"type": "editor-context", "kind": "viewport", "payload": {"x": round}}),
                    0,
                )
                .unwrap(),
            ); // ok: test
        }
        let msg = UserMessage::new(parts);
        let opts = SubmitOptions::from_value(json!({"session": format!("s{}", round % 7), "limits": {"blob_threshold": r.below(200)}})).unwrap(); // ok: test
        let answers: Map<String, Value> = (0..msg.parts.len())
            .map(|i| (i.to_string(), json!({"payload": {"i": i}})))
            .collect();
        let sub = match store.submit(&msg, &catalog, &opts, None) {
            Err(_) => continue, // e.g. a generated unbalanced quote: a clear error, nothing stored
            Ok(Step::Done(s)) => *s,
            Ok(Step::NeedsData(_)) => panic!("no host data here"),
            Ok(Step::Needs(_)) => {
                match store.submit(&msg, &catalog, &opts, Some(&answers)).unwrap() {
                    // ok: test
                    Step::Done(s) => *s,
                    Step::Needs(_) | Step::NeedsData(_) => panic!("asked twice"),
                }
            }
        };
        let back = store.get(&sub.id).unwrap(); // ok: test
        assert_eq!(back, sub.message);
        let again = UserMessage::from_json(&back.to_json()).unwrap(); // ok: test
        assert_eq!(again, back);
        for p in Provider::ALL {
            let o = LowerOptions::new(p);
            let a = lower(&sub.message, &o, &store.resolver(&NoResolver));
            let b = lower(&back, &o, &store.resolver(&NoResolver));
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a.body, b.body),
                (Err(a), Err(b)) => assert_eq!(a, b),
                _ => panic!("disagree"),
            }
        }
        checked += 1;
    }
    assert!(
        checked > 200,
        "only {checked} generated messages were accepted"
    );
    // History reads give the same messages as single reads, in sequence order; the JSON
    // fast path (current-version rows passed through) gives the typed path's bytes.
    for s in 0..7 {
        let h = store.history(&format!("s{s}")).unwrap(); // ok: test
        let prefix = format!("s{s}/");
        let heads = messages::session_heads(
            &format!("s{s}"),
            store.backend().scan(Table::Messages, &prefix).unwrap(),
        ); // ok: test
        let parts = store.backend().scan(Table::Parts, &prefix).unwrap(); // ok: test
        let fast = messages::assemble_many_json(&heads, &parts).unwrap(); // ok: test
        let typed = format!(
            "[{}]",
            h.iter()
                .map(UserMessage::to_json)
                .collect::<Vec<_>>()
                .join(",")
        );
        assert_eq!(fast, typed);
        let seqs: Vec<u64> = h
            .iter()
            .map(|m| m.metadata.extra["seq"].as_u64().unwrap())
            .collect(); // ok: test
        assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    }
}

/// Data the host holds (a slot: head and length only) is classified from its head, kept as
/// a slot in the persisted message, and written as a raw `\u{1}n\u{1}` marker in the rows
/// for the host to splice; the core asks for it whole only to hash or to tell text from
/// binary.
#[test]
fn host_held_data() {
    use promptloom::compositor::submit;
    let png_head = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE";
    let msg = |head: &str, len: u64| {
        UserMessage::from_value(json!({"parts": [{"type": "file-attachment", "name": "a", "data": {"$slot": 3, "head": head, "len": len}}]})).unwrap()
        // ok: test
    };
    let cat = CommandCatalog::with_builtins();
    let opts = SubmitOptions::from_value(json!({})).unwrap(); // ok: test
    let done = match submit(
        &msg(png_head, 300_000),
        &cat,
        &opts,
        SessionState::default(),
        None,
    )
    .unwrap()
    {
        // ok: test
        Step::Done(s) => s,
        other => panic!("{other:?}"),
    };
    let (ops, text) = messages::layout(&done);
    assert!(text.contains("\"data\":\"\u{1}3\u{1}\""), "{text}");
    let row = ops.iter().find_map(|o| match o {
        Op::Put {
            table: Table::Parts,
            value,
            ..
        } => Some(value.clone()),
        _ => None,
    });
    assert!(row.is_some_and(|r| r.contains("\u{1}3\u{1}")));
    assert_eq!(done.state.inline_bytes, 300_000);
    // No magic in the head: read it whole. Over the blob threshold: read it to hash it.
    assert_eq!(
        submit(
            &msg("AAAAAAAA", 6),
            &cat,
            &opts,
            SessionState::default(),
            None
        )
        .unwrap(),
        Step::NeedsData(vec![3])
    ); // ok: test
    assert_eq!(
        submit(
            &msg(png_head, 5_000_000),
            &cat,
            &opts,
            SessionState::default(),
            None
        )
        .unwrap(),
        Step::NeedsData(vec![3])
    ); // ok: test
       // Too large is refused from the length alone.
    let too = SubmitOptions::from_value(json!({"limits": {"max_attachment_bytes": 10}})).unwrap(); // ok: test
    assert_eq!(
        submit(
            &msg(png_head, 11),
            &cat,
            &too,
            SessionState::default(),
            None
        )
        .map_err(|e| e.kind()),
        Err(promptloom::ErrorKind::TooLarge)
    );
}
