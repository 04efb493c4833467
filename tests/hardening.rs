//! Inputs that once trapped the wasm instance or were accepted silently, through the core:
//! deep or exponential YAML, template shapes past the stack, a byte range cutting through a
//! character, a bundled file marked base64 that is not, JSON nested past the parser's limit.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::lower::{lower, LowerOptions, NoResolver, Provider, Resolved, TableResolver};
use promptloom::skill::skill_md::{import_skill_md, BundledFile};
use promptloom::skill::template;
use promptloom::{ErrorKind, UserMessage};
use serde_json::json;
use std::time::Instant;

const NOW: &str = "2026-11-23T00:00:00Z";

fn md(meta: &str) -> String {
    format!("---\nname: deep\ndescription: d\nmetadata:\n  {meta}\n---\nbody\n")
}

#[test]
fn yaml_nested_past_the_depth_bound_is_invalid_skill() {
    for text in [
        md(&format!("{}x", "? ".repeat(10_000))),
        md(&"[".repeat(10_000)),
        {
            let mut y = String::from("---\nname: deep\ndescription: d\nmetadata:\n");
            for i in 0..3000 {
                y.push_str(&format!("{}k:\n", " ".repeat(i + 1)));
            }
            y + "---\nbody\n"
        },
    ] {
        let e = import_skill_md(&text, &[], None, NOW).unwrap_err(); // ok: test
        assert_eq!(e.kind(), ErrorKind::InvalidSkill, "{e}");
    }
}

#[test]
fn collection_keys_are_refused_at_once() {
    let t = Instant::now();
    let e = import_skill_md(&md(&format!("{}x", "? ".repeat(28))), &[], None, NOW).unwrap_err(); // ok: test
    assert!(e.to_string().contains("mapping key must be text"), "{e}");
    // Was 20 s at 28 levels (each level's key escaped the one below it).
    assert!(t.elapsed().as_secs() < 2);
}

#[test]
fn template_shapes_past_the_stack_are_syntax_errors() {
    let n = 10_000;
    for src in [
        format!("{{{{ {}1 }}}}", "1 + ".repeat(n)),
        format!("{{{{ {}1 }}}}", "-".repeat(n)),
        format!("{{{{ {}x }}}}", "not ".repeat(n)),
        format!("{{{{ x{} }}}}", "|upper".repeat(n)),
        format!("{{{{ x{} }}}}", ".a".repeat(n)),
        format!("{{{{ 1{} }}}}", " if 1 else 1".repeat(n)),
        format!("{{% if a %}}x{}{{% endif %}}", "{% elif a %}y".repeat(n)),
    ] {
        let e = template::check(&src).unwrap_err(); // ok: test
        assert!(
            e.detail.contains("operators") || e.detail.contains("elif"),
            "{}",
            e.detail
        );
    }
    // Below the bounds, and with operators inside strings, comments and raw blocks, fine.
    template::check(&format!("{{{{ {}1 }}}}", "1 + ".repeat(400))).unwrap(); // ok: test
    template::check(&format!("{{{{ '{}' }}}}", "+".repeat(5000))).unwrap(); // ok: test
    template::check(&format!(
        "{{# {} #}}{{% raw %}}{}{{% endraw %}}",
        "+".repeat(5000),
        "{{ -".repeat(5000)
    ))
    .unwrap(); // ok: test
}

#[test]
fn a_bundled_file_marked_base64_that_is_not_is_a_problem() {
    let files = [
        BundledFile {
            path: "assets/logo.png".into(),
            content: "not base64!".into(),
            base64: true,
        },
        BundledFile {
            path: "assets/ok.bin".into(),
            content: "AAEC\n/w==".into(),
            base64: true,
        },
    ];
    let text = "---\nname: deep\ndescription: d\n---\nbody\n";
    match import_skill_md(text, &files, None, NOW) {
        Ok(out) => {
            assert!(
                out.problems
                    .iter()
                    .any(|p| p.code == "invalid-base64" && p.path == "files[0].content"),
                "{:?}",
                out.problems
            );
        }
        Err(e) => assert!(e.to_string().contains("base64"), "{e}"),
    }
}

#[test]
fn a_byte_range_through_a_character_is_widened_and_reported() {
    let msg = UserMessage::from_value(json!({ "role": "user", "parts": [
        { "type": "file-ref", "ref": { "kind": "path", "path": "a.txt", "range": { "start": 0, "end": 2, "unit": "byte" } } }
    ]}))
    .unwrap(); // ok: test
    let mut table = TableResolver::default();
    table.insert(0, Ok(Resolved::Text("héllo".into())));
    let out = lower(&msg, &LowerOptions::new(Provider::Anthropic), &table).unwrap(); // ok: test
    assert!(out.body.contains("hé"), "{}", out.body);
    assert!(!out.body.contains('\u{fffd}'));
    let warning = out
        .report
        .warnings
        .iter()
        .find(|w| w.code == "RangeClamped")
        .expect("a RangeClamped warning"); // ok: test
    assert!(
        warning.message.contains("cuts through a character"),
        "{}",
        warning.message
    );
}

#[test]
fn json_nested_past_the_parser_limit_is_limit_exceeded() {
    let deep = format!(
        "{{\"role\":\"user\",\"parts\":[{{\"type\":\"text\",\"text\":\"x\",\"extra\":{}{}}}]}}",
        "[".repeat(500),
        "]".repeat(500)
    );
    let e = UserMessage::from_json(&deep).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert_eq!(e.details()["limit"], "depth");
}

mod limits {
    use super::*;
    use promptloom::compositor::{submit, CommandCatalog, SessionState, SubmitOptions};
    use promptloom::conversation::{lower_conversation, ConversationOptions, Turn};

    fn message(parts: usize, text: &str) -> UserMessage {
        let parts: Vec<_> = (0..parts)
            .map(|_| json!({ "type": "text", "text": text }))
            .collect();
        UserMessage::from_value(json!({ "role": "user", "parts": parts })).unwrap()
        // ok: test
    }

    fn options(limits: serde_json::Value) -> LowerOptions {
        LowerOptions::from_value(json!({ "provider": "anthropic", "limits": limits })).unwrap()
        // ok: test
    }

    fn limit_of(e: &promptloom::Error) -> String {
        assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
        e.details()["limit"].as_str().unwrap_or_default().to_owned()
    }

    #[test]
    fn parts_and_bytes_of_a_message_at_their_edges() {
        let o = options(json!({ "max_parts": 3, "max_message_bytes": 12 }));
        lower(&message(3, "abcd"), &o, &NoResolver).unwrap(); // ok: test (3 parts, 12 bytes)
        let e = lower(&message(4, "a"), &o, &NoResolver).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_parts");
        assert_eq!(
            (e.details()["max"].clone(), e.details()["actual"].clone()),
            (json!(3), json!(4))
        );
        let e = lower(&message(3, "abcde"), &o, &NoResolver).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_message_bytes");
        // The defaults hold 1 000 parts.
        lower(
            &message(1000, "x"),
            &LowerOptions::new(Provider::Gemini),
            &NoResolver,
        )
        .unwrap(); // ok: test
        let e = lower(
            &message(1001, "x"),
            &LowerOptions::new(Provider::Gemini),
            &NoResolver,
        )
        .unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_parts");
        // Unknown limits are named.
        let e = LowerOptions::from_value(
            json!({ "provider": "anthropic", "limits": { "max_partz": 1 } }),
        )
        .unwrap_err(); // ok: test
        assert_eq!(e.kind(), ErrorKind::InvalidOptions);
    }

    #[test]
    fn turns_of_a_conversation_at_the_edge() {
        let turns: Vec<Turn> = (0..4)
            .map(|i| {
                Turn::from_value(json!({ "role": if i % 2 == 0 { "user" } else { "assistant" }, "parts": [{ "type": "text", "text": "t" }] }))
                    .unwrap() // ok: test
            })
            .collect();
        let mut o = ConversationOptions::new(Provider::OpenAiChat);
        o.lower = options(json!({ "max_turns": 4 }));
        let none: Vec<TableResolver> = Vec::new();
        lower_conversation(&turns, &o, &none).unwrap(); // ok: test
        o.lower = options(json!({ "max_turns": 3 }));
        let e = lower_conversation(&turns, &o, &none).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_turns");
        o.lower = options(json!({ "max_parts": 0 }));
        let e = lower_conversation(&turns, &o, &none).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_parts");
        assert!(e.to_string().contains("turns[0]"), "{e}");

        // A Conversation checks each turn once per set of limits: a new turn past them, or
        // tighter limits, are still refused.
        let mut c = promptloom::Conversation::default();
        for t in &turns {
            c.append(t.clone(), Default::default());
        }
        o.lower = options(json!({ "max_parts": 2 }));
        c.lower(&o).unwrap(); // ok: test
        c.append(Turn::User(message(3, "x")), Default::default());
        let e = c.lower(&o).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_parts");
        assert!(e.to_string().contains("turns[4]"), "{e}");
        c.truncate(4);
        c.lower(&o).unwrap(); // ok: test
        o.lower = options(json!({ "max_parts": 0 }));
        let e = c.lower(&o).unwrap_err(); // ok: test
        assert!(e.to_string().contains("turns[0]"), "{e}");
    }

    #[test]
    fn blob_bytes_of_a_session_at_the_edge() {
        // 70 bytes of PNG go to the blob store (blob_threshold 0).
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        let m = UserMessage::from_value(json!({ "role": "user", "parts": [{ "type": "file-attachment", "mime": "image/png", "data": png }] })).unwrap(); // ok: test
        let opts = |max: u64| {
            SubmitOptions::from_value(
                json!({ "limits": { "blob_threshold": 0, "max_session_blob_bytes": max } }),
            )
            .unwrap() // ok: test
        };
        let cat = CommandCatalog::with_builtins();
        let state = SessionState {
            next_seq: 1,
            inline_bytes: 0,
            messages: 0,
            blob_bytes: 70,
        };
        assert!(submit(&m, &cat, &opts(140), state, None).is_ok());
        let e = submit(&m, &cat, &opts(139), state, None).unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_session_blob_bytes");
        assert_eq!(e.details()["actual"], json!(140));
        let e = submit(
            &message(5, "x"),
            &cat,
            &SubmitOptions::from_value(json!({ "limits": { "max_parts": 4 } })).unwrap(),
            SessionState::default(),
            None,
        )
        .unwrap_err(); // ok: test
        assert_eq!(limit_of(&e), "max_parts");
    }
}
