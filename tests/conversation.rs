//! Conversations: one input case per file in `tests/conversation/inputs` (turns, options, and
//! the resolver's answers per turn in the bindings' wire form), one reviewed snapshot per
//! provider; errors in `tests/conversation/errors`. The first line of each snapshot is the
//! exact body: the JS, browser, edge and component tests compare their output to it.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::conversation::{
    lower_conversation, Answers, Conversation, ConversationOptions, Turn,
};
use promptloom::lower::{lower, LowerOptions, Provider, TableResolver};
use promptloom::wire::{resolver_table, resolver_tables};
use promptloom::UserMessage;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{body_snapshot, Rng};

struct Case {
    turns: Value,
    options: serde_json::Map<String, Value>,
    resolve: String,
}

fn load(path: &Path) -> Case {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    Case {
        turns: v["turns"].clone(),
        options: v
            .get("options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        resolve: v.get("resolve").map(Value::to_string).unwrap_or_default(),
    }
}

fn options(case: &Case, p: Provider) -> promptloom::Result<ConversationOptions> {
    let mut o = case.options.clone();
    o.insert("provider".into(), p.name().into());
    ConversationOptions::from_value(Value::Object(o))
}

fn tables(case: &Case, n: usize) -> Vec<TableResolver> {
    resolver_tables(&case.resolve, Vec::new(), n).unwrap()
}

fn run(case: &Case, p: Provider) -> promptloom::Result<promptloom::LoweredConversation> {
    let turns = Turn::list_from_value(case.turns.clone())?;
    let opts = options(case, p)?;
    lower_conversation(&turns, &opts, &tables(case, turns.len()))
}

/// The answers of turn `i` as the conversation object keeps them.
fn answers(case: &Case, i: usize) -> Answers {
    let mut a = Answers::default();
    if case.resolve.is_empty() {
        return a;
    }
    let all: Value = serde_json::from_str(&case.resolve).unwrap();
    if let Some(Value::Object(m)) = all.get(i) {
        let table = resolver_table(&Value::Object(m.clone()).to_string()).unwrap();
        for k in m.keys() {
            let part: usize = k.parse().unwrap();
            let req = promptloom::lower::ResolveRequest::Blob {
                part,
                content_id: "",
            };
            use promptloom::lower::Resolver;
            a.0.insert(part, table.resolve(&req));
        }
    }
    a
}

#[test]
fn lowered() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let case = load(path);
        for p in Provider::ALL {
            let out = run(&case, p).unwrap_or_else(|e| panic!("{}: {p:?}: {e}", path.display()));
            assert_eq!(out.body, run(&case, p).unwrap().body, "not byte-stable");
            serde_json::from_str::<Value>(&out.body).expect("body is valid JSON");
            // Round trip of the turns: the same body.
            let turns = Turn::list_from_value(case.turns.clone()).unwrap();
            let round = Value::Array(turns.iter().map(Turn::to_value).collect());
            let rt = run(
                &Case {
                    turns: round,
                    options: case.options.clone(),
                    resolve: case.resolve.clone(),
                },
                p,
            )
            .unwrap();
            assert_eq!(out.body, rt.body, "round trip changed the body");
            assert!(out.body.is_char_boundary(out.report.cache.prefix_bytes));
            let text = body_snapshot(&out.body, &out.report);
            let mut settings = insta::Settings::clone_current();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
            settings.set_snapshot_suffix(format!("{stem}.{}", p.name()));
            settings.set_prepend_module_to_snapshot(true);
            settings.bind(|| insta::assert_snapshot!(text));
        }
    });
}

#[test]
fn errors() {
    insta::glob!("conversation/errors/*.json", |path| {
        let case = load(path);
        let lines: Vec<String> = Provider::ALL
            .into_iter()
            .map(|p| match run(&case, p) {
                Ok(_) => format!("{}: ok", p.name()),
                Err(e) => format!("{}: {}", p.name(), e.to_json()),
            })
            .collect();
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(true);
        settings.bind(|| insta::assert_snapshot!(lines.join("\n")));
    });
}

/// The conversation object, fed turn by turn, gives the stateless bytes after every turn,
/// and serves earlier turns from its cache.
#[test]
fn incremental_equals_stateless() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let case = load(path);
        let turns = Turn::list_from_value(case.turns.clone()).unwrap();
        for p in Provider::ALL {
            let opts = options(&case, p).unwrap();
            let mut conv = Conversation::default();
            for (i, t) in turns.iter().enumerate() {
                conv.append(t.clone(), answers(&case, i));
                let prefix = Case {
                    turns: Value::Array(turns[..=i].iter().map(Turn::to_value).collect()),
                    options: case.options.clone(),
                    resolve: case.resolve.clone(),
                };
                let stateless = run(&prefix, p);
                let incremental = conv.lower(&opts);
                match (stateless, incremental) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{} turn {i} {p:?}", path.display()),
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    (a, b) => panic!("{}: turn {i}: {a:?} vs {b:?}", path.display()),
                }
            }
            let stats = conv.cache_stats();
            assert_eq!(stats.misses as usize, turns.len(), "each turn lowered once");
        }
    });
}

/// Deltas applied to the previous body, as a host keeping it does, give the full body at
/// every turn, for every provider, also after a rewind and a change of provider.
#[test]
fn deltas_rebuild_every_body() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let case = load(path);
        let turns = Turn::list_from_value(case.turns.clone()).unwrap();
        let mut conv = Conversation::default();
        let mut body = String::new();
        let apply = |conv: &mut Conversation, p: Provider, body: &mut String| {
            let opts = options(&case, p).unwrap();
            let full = lower_conversation(
                &conv.turns().cloned().collect::<Vec<_>>(),
                &opts,
                &(0..conv.len())
                    .map(|i| table_of(&case, i))
                    .collect::<Vec<_>>(),
            );
            match (conv.lower_delta(&opts), full) {
                (Ok(d), Ok(full)) => {
                    let kept = body.get(..d.keep_bytes).unwrap().to_owned();
                    assert_eq!(kept.encode_utf16().count(), d.keep_utf16);
                    *body = kept + &d.tail;
                    let close = d.tail.encode_utf16().count() - d.close_utf16;
                    assert!(body.ends_with(&d.tail));
                    assert!(d.tail.encode_utf16().count() >= d.close_utf16);
                    let _ = close;
                    assert_eq!(*body, full.body, "{} {p:?}", path.display());
                }
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!("{}: {a:?} vs {b:?}", path.display()),
            }
        };
        for (i, t) in turns.iter().enumerate() {
            conv.append(t.clone(), answers(&case, i));
            apply(&mut conv, Provider::Anthropic, &mut body);
        }
        for p in Provider::ALL {
            apply(&mut conv, p, &mut body);
            apply(&mut conv, p, &mut body);
        }
        if turns.len() > 2 {
            conv.truncate(turns.len() - 2);
            apply(&mut conv, Provider::Gemini, &mut body);
            conv.append(
                turns[turns.len() - 2].clone(),
                answers(&case, turns.len() - 2),
            );
            apply(&mut conv, Provider::Gemini, &mut body);
        }
    });
}

fn table_of(case: &Case, i: usize) -> TableResolver {
    tables(case, i + 1).into_iter().nth(i).unwrap_or_default()
}

/// A conversation of one user turn is the same body as `lower()` of that message.
#[test]
fn one_turn_equals_lower() {
    insta::glob!("lower/inputs/*.json", |path| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let resolve = v.get("resolve").map(Value::to_string).unwrap_or_default();
        let mut o = v
            .get("options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for p in Provider::ALL {
            o.insert("provider".into(), p.name().into());
            let msg = UserMessage::from_value(v["message"].clone()).unwrap();
            let single = lower(
                &msg,
                &LowerOptions::from_value(Value::Object(o.clone())).unwrap(),
                &resolver_table(&resolve).unwrap(),
            )
            .unwrap();
            let conv = lower_conversation(
                &[Turn::User(msg)],
                &ConversationOptions::from_value(Value::Object(o.clone())).unwrap(),
                &resolver_table(&resolve).unwrap(),
            )
            .unwrap();
            assert_eq!(single.body, conv.body, "{} {p:?}", path.display());
        }
    });
}

/// Generated conversations: every call in a body has its result and every result its
/// call, roles alternate where the provider requires it, and the incremental lowering of
/// the last turns equals the stateless one.
#[test]
fn generated_conversations_hold_the_rules() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let n = 1 + rng.below(14);
        let mut turns = Vec::new();
        let mut open_calls: Vec<String> = Vec::new();
        let mut next_id = 0;
        for _ in 0..n {
            let t = match rng.below(5) {
                0 => {
                    serde_json::json!({"role": "user", "parts": [{"type": "text", "text": format!("u{}", rng.below(9))}]})
                }
                1 | 2 => {
                    let mut parts = vec![serde_json::json!({"type": "text", "text": "a"})];
                    for _ in 0..rng.below(3) {
                        next_id += 1;
                        let id = if rng.below(4) == 0 {
                            format!("weird.id:{next_id}")
                        } else {
                            format!("call_{next_id}")
                        };
                        open_calls.push(id.clone());
                        parts.push(serde_json::json!({"type": "tool-call", "id": id, "name": "search", "input": {"q": "x"}}));
                    }
                    serde_json::json!({"role": "assistant", "parts": parts})
                }
                3 => {
                    let mut parts = Vec::new();
                    for _ in 0..=rng.below(2) {
                        let id = if !open_calls.is_empty() && rng.below(5) > 0 {
                            open_calls.remove(rng.below(open_calls.len()))
                        } else {
                            format!("orphan_{}", rng.below(100))
                        };
                        parts.push(serde_json::json!({"type": "tool-result", "call_id": id, "output": "r"}));
                    }
                    serde_json::json!({"role": "tool", "parts": parts})
                }
                _ => {
                    serde_json::json!({"role": "system", "parts": [{"type": "text", "text": "s"}]})
                }
            };
            turns.push(t);
        }
        let parsed = Turn::list_from_value(Value::Array(turns.clone())).unwrap();
        for p in Provider::ALL {
            let opts = ConversationOptions::new(p);
            let out = match lower_conversation(&parsed, &opts, &promptloom::NoResolver) {
                Ok(o) => o,
                Err(e) => {
                    assert_eq!(e.code(), "EmptyMessage", "round {round} {p:?}: {e}");
                    continue;
                }
            };
            let body: Value = serde_json::from_str(&out.body).unwrap();
            check_pairs(&body, p, round);
            // Turn by turn, both forms of the conversation object (whole bodies, and
            // deltas applied to the previous body) give the stateless bytes every time.
            let mut conv = Conversation::default();
            let mut delta = Conversation::default();
            let mut body = String::new();
            for (i, t) in parsed.iter().enumerate() {
                conv.append(t.clone(), Answers::default());
                delta.append(t.clone(), Answers::default());
                let want = lower_conversation(&parsed[..=i], &opts, &promptloom::NoResolver);
                match (want, conv.lower(&opts), delta.lower_delta(&opts)) {
                    (Ok(w), Ok(a), Ok(d)) => {
                        assert_eq!(a.body, w.body, "round {round} {p:?} turn {i}");
                        assert_eq!(a.report, w.report, "round {round} {p:?} turn {i}");
                        body = body.get(..d.keep_bytes).unwrap().to_owned() + &d.tail;
                        assert_eq!(body, w.body, "round {round} {p:?} turn {i} (delta)");
                    }
                    (Err(w), Err(a), Err(d)) => {
                        assert_eq!(w, a);
                        assert_eq!(w, d);
                    }
                    (w, a, d) => panic!("round {round} {p:?} turn {i}: {w:?} {a:?} {d:?}"),
                }
            }
            // Rewinds to a random turn, each followed by some turn of the conversation.
            let mut now = parsed.clone();
            for _ in 0..3 {
                let keep = rng.below(now.len() + 1);
                now.truncate(keep);
                delta.truncate(keep);
                let t = parsed[rng.below(parsed.len())].clone();
                now.push(t.clone());
                delta.append(t, Answers::default());
                match (
                    lower_conversation(&now, &opts, &promptloom::NoResolver),
                    delta.lower_delta(&opts),
                ) {
                    (Ok(w), Ok(d)) => {
                        body = body.get(..d.keep_bytes).unwrap().to_owned() + &d.tail;
                        assert_eq!(body, w.body, "round {round} {p:?} rewind to {keep}");
                    }
                    (Err(w), Err(d)) => assert_eq!(w, d),
                    (w, d) => panic!("round {round} {p:?} rewind: {w:?} {d:?}"),
                }
            }
            assert_eq!(conv.lower(&opts).unwrap().body, out.body);
        }
    }
}

fn check_pairs(body: &Value, p: Provider, round: usize) {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    let empty = Vec::new();
    match p {
        Provider::Anthropic | Provider::Gemini => {
            let key = if p == Provider::Anthropic {
                "messages"
            } else {
                "contents"
            };
            let list = body[key].as_array().unwrap_or(&empty);
            let mut prev = "";
            for (k, m) in list.iter().enumerate() {
                let role = m["role"].as_str().unwrap();
                assert_ne!(
                    role, prev,
                    "round {round} {p:?}: roles do not alternate: {body}"
                );
                prev = role;
                let blocks = if p == Provider::Anthropic {
                    &m["content"]
                } else {
                    &m["parts"]
                };
                let blocks = blocks.as_array().unwrap();
                assert!(!blocks.is_empty(), "round {round}: empty message");
                let mut seen_other = false;
                let mut this_calls = Vec::new();
                for b in blocks {
                    if let Some(id) = b.get("id").filter(|_| b["type"] == "tool_use") {
                        this_calls.push(id.as_str().unwrap().to_owned());
                    } else if let Some(c) = b.get("functionCall") {
                        this_calls.push(c["name"].as_str().unwrap().to_owned());
                    } else if let Some(id) = b.get("tool_use_id") {
                        assert!(
                            !seen_other,
                            "round {round}: a tool result after other content"
                        );
                        results.push((k, id.as_str().unwrap().to_owned()));
                    } else if let Some(r) = b.get("functionResponse") {
                        assert!(
                            !seen_other,
                            "round {round}: a function response after other content"
                        );
                        results.push((k, r["name"].as_str().unwrap().to_owned()));
                    } else {
                        seen_other = true;
                    }
                }
                for c in this_calls {
                    calls.push((k, c));
                }
            }
            // Every call is answered in the very next message, and nothing else is.
            let mut want: Vec<(usize, String)> =
                calls.iter().map(|(k, c)| (k + 1, c.clone())).collect();
            want.sort();
            let mut got = results.clone();
            got.sort();
            assert_eq!(want, got, "round {round} {p:?}: {body}");
        }
        Provider::OpenAiChat => {
            for m in body["messages"].as_array().unwrap() {
                for c in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty)
                {
                    let id = c["id"].as_str().unwrap();
                    assert!(id.len() <= 40);
                    calls.push((0, id.to_owned()));
                }
                if m["role"] == "tool" {
                    results.push((0, m["tool_call_id"].as_str().unwrap().to_owned()));
                }
            }
            calls.sort();
            results.sort();
            assert_eq!(calls, results, "round {round}: {body}");
        }
        Provider::OpenAiResponses => {
            for m in body["input"].as_array().unwrap() {
                match m["type"].as_str() {
                    Some("function_call") => {
                        calls.push((0, m["call_id"].as_str().unwrap().to_owned()))
                    }
                    Some("function_call_output") => {
                        results.push((0, m["call_id"].as_str().unwrap().to_owned()))
                    }
                    _ => {}
                }
            }
            calls.sort();
            results.sort();
            assert_eq!(calls, results, "round {round}: {body}");
        }
    }
}

/// Bad input names the turn and part, and the same object keeps answering correctly.
#[test]
fn bad_turns_name_their_path_and_leave_the_conversation_usable() {
    let bad = serde_json::json!([
        {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "parts": [{"type": "text", "text": "a"}]},
        {"role": "tool", "parts": [{"type": "tool-result", "call_id": "x", "output": "1"}, {"type": "tool-result", "output": "2"}]}
    ]);
    let e = Turn::list_from_value(bad).unwrap_err();
    assert_eq!(e.path(), Some("turns[2].parts[1].call_id"));
    let mut conv = Conversation::default();
    conv.append(
        Turn::from_value(
            serde_json::json!({"role": "user", "parts": [{"type": "text", "text": "hi"}]}),
        )
        .unwrap(),
        Answers::default(),
    );
    let good = conv
        .lower(&ConversationOptions::new(Provider::Anthropic))
        .unwrap();
    conv.append(
        Turn::from_value(
            serde_json::json!({"role": "user", "parts": [{"type": "command", "id": "/x"}]}),
        )
        .unwrap(),
        Answers::default(),
    );
    let e = conv
        .lower(&ConversationOptions::new(Provider::Anthropic))
        .unwrap_err();
    assert_eq!(e.path(), Some("turns[1].parts[0]"));
    conv.truncate(1);
    assert_eq!(
        conv.lower(&ConversationOptions::new(Provider::Anthropic))
            .unwrap(),
        good
    );
}

/// The cache stays within its bound and keeps answering correctly after evictions.
#[test]
fn cache_is_bounded() {
    let mut conv = Conversation::new(64 * 1024);
    let mut stateless = Vec::new();
    for i in 0..400 {
        let t = Turn::from_value(serde_json::json!({
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "parts": [{"type": "text", "text": format!("{i} {}", "x".repeat(500))}]
        }))
        .unwrap();
        stateless.push(t.clone());
        conv.append(t, Answers::default());
    }
    for p in Provider::ALL {
        let opts = ConversationOptions::new(p);
        let a = conv.lower(&opts).unwrap();
        let b = lower_conversation(&stateless, &opts, &promptloom::NoResolver).unwrap();
        assert_eq!(a.body, b.body);
        assert!(
            conv.cache_stats().bytes <= 64 * 1024 + 4096,
            "{:?}",
            conv.cache_stats()
        );
    }
}

/// A turn the store holds already (its metadata names this session, its id and sequence
/// number: a submitted message) is not written again; another session's copy is.
#[test]
fn a_stored_turn_is_not_stored_twice() {
    use promptloom::compositor::SubmitOptions;
    use promptloom::store::{messages::MessageStore, MemoryBackend};
    let mut store = MessageStore::new(MemoryBackend::new());
    let opts =
        |s: &str| SubmitOptions::from_value(serde_json::json!({ "session": s, "now": 1 })).unwrap();
    let t = Turn::from_value(
        serde_json::json!({"role": "assistant", "parts": [{"type": "text", "text": "a"}]}),
    )
    .unwrap();
    let first = store.append(&t, &opts("chat")).unwrap();
    assert!(!first.stored);
    let again = store.append(&first.turn, &opts("chat")).unwrap();
    assert!(again.stored);
    assert_eq!(
        (again.id.as_str(), again.seq),
        (first.id.as_str(), first.seq)
    );
    assert_eq!(store.thread("chat").unwrap().len(), 1);
    let other = store.append(&first.turn, &opts("other")).unwrap();
    assert!(!other.stored);
    assert_eq!(store.thread("other").unwrap().len(), 1);
}

/// A conversation's resolver requests are planned per turn: only user turns ask (in their
/// own part indexes), a turn that does not parse asks nothing (lowering reports it).
#[test]
fn conversation_requests_are_planned_per_turn() {
    let turns = serde_json::json!([
        { "role": "system", "parts": [{ "type": "text", "text": "Be brief." }] },
        { "role": "user", "parts": [
            { "type": "text", "text": "Why?" },
            { "type": "file-ref", "ref": { "kind": "path", "path": "a.ts", "range": { "start": 2, "end": 3 } } }
        ] },
        { "role": "assistant", "parts": [{ "type": "text", "text": "Because." }] },
        { "parts": [{ "type": "mention", "target": { "kind": "symbol", "id": "s" } }] },
        { "role": "user", "parts": "not a list" }
    ]);
    let out = promptloom::conversation::requests_json(&turns.to_string()).unwrap(); // ok: test
    let v: Value = serde_json::from_str(&out).unwrap(); // ok: test
    assert_eq!(
        v,
        serde_json::json!([
            [],
            [{ "type": "file", "part": 1, "ref": { "kind": "path", "path": "a.ts", "range": { "start": 2, "end": 3 } } }],
            [],
            [{ "type": "mention", "part": 0, "target": { "kind": "symbol", "id": "s" } }],
            []
        ])
    );
    assert!(promptloom::conversation::requests_json("{}").is_err());
}
