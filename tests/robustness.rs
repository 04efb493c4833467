//! Nothing from outside may panic the core (a panic traps the wasm instance for every later
//! call): thousands of generated messages, options and resolver answers — well-formed,
//! half-formed and hostile — must each lower or fail with a typed error.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::lower::{lower, LowerOptions, Provider, Resolved, TableResolver};
use promptloom::{ErrorKind, UserMessage};
use serde_json::{json, Value};

mod common;
use common::Rng;

fn nasty(r: &mut Rng) -> Value {
    let strings = [
        "",
        "x",
        "/",
        "\u{0}",
        "</editor_context>",
        "data:",
        "data:,",
        "data:image/png;base64,",
        "data:text/plain,%ZZ%",
        "iVBORw0KGgo=",
        "AAAA",
        "====",
        "a\r\nb\rc\n",
        "```",
        "#",
        "..",
        "\u{FEFF}",
        "😀",
        "image/*",
        "image",
        "text/plain",
        "application/pdf",
        "audio/wav",
    ];
    match r.below(9) {
        0 => Value::Null,
        1 => json!(r.below(3) == 0),
        2 => json!(r.next() as i64),
        3 => json!(-(r.below(5) as i64)),
        4 => json!(1e300),
        5 => json!([r.pick(&strings), r.below(100)]),
        6 => {
            json!({"kind": r.pick(&["path", "url", "content-id", "file", "skill", "x"]), "path": r.pick(&strings), "url": r.pick(&strings),
                    "content_id": r.pick(&strings), "start": r.below(5), "end": r.below(5), "range": {"start": r.below(5), "end": r.below(5), "unit": r.pick(&["line", "byte", "bogus"])}})
        }
        _ => json!(r.pick(&strings)),
    }
}

fn part(r: &mut Rng) -> Value {
    let types = [
        "text",
        "file-ref",
        "file-attachment",
        "command",
        "mention",
        "editor-context",
        "unheard-of",
    ];
    let keys = [
        "text",
        "ref",
        "data",
        "mime",
        "name",
        "size",
        "kind",
        "source",
        "payload",
        "emitted_at",
        "target",
        "id",
        "args",
        "content_id",
    ];
    let mut o = serde_json::Map::new();
    if r.below(20) != 0 {
        o.insert("type".into(), json!(r.pick(&types)));
    }
    for _ in 0..r.below(6) {
        o.insert(r.pick(&keys).into(), nasty(r));
    }
    Value::Object(o)
}

#[test]
fn generated_messages_never_panic() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut lowered = 0;
    for i in 0..20_000 {
        let parts: Vec<Value> = (0..1 + r.below(5)).map(|_| part(&mut r)).collect();
        let msg =
            json!({"role": "user", "parts": parts, "metadata": {"schema_version": 1 + r.below(2)}});
        let provider = Provider::ALL[r.below(4)];
        let mut opts = json!({"provider": provider.name()});
        if r.below(4) == 0 {
            opts["capabilities"] = json!({"max_images": r.below(2), "inline_text_max_bytes": r.below(50), "images": {"max_bytes": r.below(100)}});
        }
        if r.below(4) == 0 {
            opts["tools"] = json!([{"name": "t", "parameters": nasty(&mut r)}]);
        }
        let mut table = TableResolver::default();
        for p in 0..5 {
            let answer = match r.below(5) {
                0 => Ok(Resolved::Text(
                    r.pick(&["a\nb\nc", "", "\r\n\r\n", "```x"]).to_owned(),
                )),
                1 => Ok(Resolved::Bytes {
                    data: (0..r.below(64)).map(|_| r.next() as u8).collect(),
                    mime: None,
                }),
                2 => Ok(Resolved::Payload(nasty(&mut r))),
                3 => Err("boom".to_owned()),
                _ => Ok(Resolved::Missing),
            };
            table.insert(p, answer);
        }
        let result = UserMessage::from_value(msg)
            .and_then(|m| LowerOptions::from_value(opts).and_then(|o| lower(&m, &o, &table)));
        match result {
            Ok(out) => {
                serde_json::from_str::<Value>(&out.body)
                    .unwrap_or_else(|e| panic!("case {i}: invalid body JSON: {e}"));
                lowered += 1;
            }
            Err(e) => assert_ne!(e.kind(), ErrorKind::Internal, "case {i}: {e}"),
        }
    }
    assert!(
        lowered > 300,
        "too few generated messages lowered ({lowered}): the generator is off"
    );
}

#[test]
fn arbitrary_text_never_panics() {
    let mut r = Rng(42);
    let alphabet = br#"{}[]":,0123456789.-+eE truefalsnl\/u"parts type text file-ref"#;
    for _ in 0..20_000 {
        let s: Vec<u8> = (0..r.below(80))
            .map(|_| alphabet[r.below(alphabet.len())])
            .collect();
        let _ = UserMessage::from_json(&String::from_utf8_lossy(&s));
    }
}

/// The compositor's parsers and submit step never panic on generated input: typed text with
/// every token character mixed with multi-byte text, command templates and arguments, and
/// generated messages and answers through submit and the store's row reader.
#[test]
fn compositor_never_panics() {
    use promptloom::compositor::{
        parse_input, submit, template, CommandCatalog, SessionState, SubmitOptions,
    };
    use promptloom::store::messages;
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let alphabet = [
        "@",
        "/",
        ":",
        "\"",
        "'",
        "\\",
        "$",
        "{",
        "}",
        "-",
        "1",
        "25",
        "file",
        "skill",
        "selection",
        "é",
        "日本",
        "🙂",
        " ",
        "\n",
        "\t",
        ".",
        ",",
        "ARGUMENTS",
        "@file:",
        "@skill:",
        "$1",
        "${",
        "\\$",
        "\u{0}",
        "(",
        ")",
    ];
    let mut catalog = CommandCatalog::with_builtins();
    catalog
        .register(
            json!({"name": "t", "body": "$1 ${x} $ARGUMENTS $9 \\$", "arguments": [{"name": "x"}]}),
        )
        .ok();
    catalog.register(json!({"name": "p", "kind": "prompt", "server": "s", "arguments": [{"name": "a", "required": true}]})).ok();
    catalog
        .register(json!({"name": "k", "kind": "skill", "body": "use $ARGUMENTS"}))
        .ok();
    for round in 0..4000 {
        let n = r.below(14);
        let text: String = (0..n).map(|_| r.pick(&alphabet)).collect();
        let _ = template::split_args(&text);
        let args: Vec<String> = (0..r.below(4))
            .map(|_| r.pick(&alphabet).to_owned())
            .collect();
        let _ = template::expand(&text, &text, &args, r.below(4), &|n: &str| {
            n.len().is_multiple_of(2).then(|| n.to_owned())
        });
        let _ = catalog.complete(&text, 5);
        let parts = parse_input(&text, &catalog);
        let cmd = format!(
            "/{} {text}",
            r.pick(&["t", "p", "k", "search", "compact", "zz"])
        );
        let mut all = parts;
        all.extend(parse_input(&cmd, &catalog));
        let msg = UserMessage::new(all);
        let opts =
            SubmitOptions::from_value(json!({"session": "s", "now": round, "skills": ["a"]}))
                .unwrap(); // ok: test
        let answers: serde_json::Map<String, Value> = (0..msg.parts.len())
            .map(|i| (i.to_string(), nasty(&mut r)))
            .collect();
        for a in [None, Some(&answers)] {
            if let Ok(promptloom::compositor::Step::Done(sub)) =
                submit(&msg, &catalog, &opts, SessionState::default(), a)
            {
                // Whatever was resolved reads back through the row layout.
                let (ops, json) = messages::layout(&sub);
                assert_eq!(json, sub.message.to_json());
                assert!(!ops.is_empty());
            }
        }
    }
    // The row reader on hostile rows: errors, never panics or huge allocations.
    let heads = [
        r#"{"part_count":18446744073709551615,"metadata":{"schema_version":2}}"#,
        r#"{"part_count":1}"#,
        "[]",
        "{",
        r#"{"part_count":2,"metadata":{"schema_version":1}}"#,
    ];
    let parts = [
        r#"{"index":0,"message":"k","part":{"type":"text","text":"a"}}"#,
        r#"{"index":99,"message":"k","part":{}}"#,
        r#"{"index":0,"message":"k","part":5}"#,
        "nul",
    ];
    for h in heads {
        for p in parts {
            let rows = vec![("k#00000".to_owned(), p.to_owned())];
            let _ = messages::assemble("k", h, &rows);
            let _ = messages::assemble_json("k", h, &rows);
        }
    }
}

/// A malformed field deep in a message is named by its whole JSON path.
#[test]
fn nested_errors_name_their_json_path() {
    let cases = [
        (
            json!([{ "type": "text", "text": "a" }, { "type": "command", "id": "/x",
                      "resolved": { "outcome": "parts", "parts": [{ "type": "text", "text": 3 }] } }]),
            "parts[1].resolved.parts[0].text",
        ),
        (
            json!([{ "type": "file-ref", "ref": { "path": "a.rs", "range": { "start": 1, "unit": "page" } } }]),
            "parts[0].ref.range.unit",
        ),
        (
            json!([{ "type": "file-ref", "ref": { "path": "a.rs", "range": { "end": 2 } } }]),
            "parts[0].ref.range.start",
        ),
        (
            json!([{ "type": "mention", "target": { "kind": 1 } }]),
            "parts[0].target.kind",
        ),
        (
            json!([{ "type": "file-attachment", "blob": { "content_id": false } }]),
            "parts[0].blob.content_id",
        ),
        (
            json!([{ "type": "mention", "target": { "kind": "file" },
                     "resolved": { "outcome": "parts", "parts": [{ "type": "file-ref", "ref": { "kind": "url" } }] } }]),
            "parts[0].resolved.parts[0].ref.url",
        ),
    ];
    for (parts, path) in cases {
        let e = UserMessage::from_value(json!({ "role": "user", "parts": parts })).err();
        assert_eq!(e.as_ref().and_then(|e| e.path()), Some(path), "{e:?}");
    }
}

/// An unresolved `@file` mention is read as a file reference when lowered: a malformed one
/// is named by its path in the message.
#[test]
fn unresolved_file_mentions_name_their_json_path() {
    let m = UserMessage::from_value(json!({ "role": "user", "parts": [
        { "type": "text", "text": "a" },
        { "type": "mention", "target": { "kind": "file", "path": 3 } },
    ] }));
    let opts = LowerOptions::from_value(json!({ "provider": "anthropic" }));
    let e = m
        .and_then(|m| opts.and_then(|o| lower(&m, &o, &TableResolver::default())))
        .err();
    assert_eq!(
        e.as_ref().and_then(|e| e.path()),
        Some("parts[1].target.path"),
        "{e:?}"
    );
}
