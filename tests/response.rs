//! The response side: one recorded-shape response per file in `tests/response/<provider>/`
//! (SSE streams `.sse`, whole bodies `.json`, Gemini's JSON-array stream `.json.stream`).
//! Each snapshot holds the events, the final assistant turn, the first error, and the body
//! the turn lowers to when it goes back to its provider after a user turn. The JS, browser,
//! edge and component tiers compare their output with the `oracle:` line.
//!
//! Every file is also fed re-chunked — split at every byte offset, in random pieces, byte by
//! byte — and must give the same events and the same turn.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::conversation::{lower_conversation, ConversationOptions, Turn};
use promptloom::lower::{Provider, TableResolver};
use promptloom::response::{events_json, parse_response, Event, ResponseParser};
use promptloom::ErrorKind;
use serde_json::{json, Value};
use std::path::Path;

mod common;
use common::{indent, provider_of, Rng};

/// Events (deltas as they came), the turn and the error, from `chunks`.
fn run(p: Provider, chunks: &[&[u8]]) -> (Vec<Event>, Value, Option<String>) {
    let mut parser = ResponseParser::new(p);
    let mut events = Vec::new();
    for c in chunks {
        events.extend(parser.push(c));
    }
    let f = parser.finish();
    events.extend(f.events);
    (
        events,
        Turn::Assistant(f.turn).to_value(),
        f.error.map(|e| e.to_json()),
    )
}

/// The oracle line the other hosts compare with: events JSON, NUL, turn JSON.
pub fn oracle(events: &[Event], turn: &Value) -> String {
    format!("{}\u{0}{}", events_json(events), turn)
}

#[test]
fn responses_parse_to_events_and_turns() {
    insta::glob!("response/*/*", |path| {
        let p = provider_of(path);
        let body = std::fs::read(path).unwrap();
        let (events, turn, error) = run(p, &[&body]);
        // The same at every split point, in random pieces, and byte by byte.
        for i in 0..=body.len() {
            let (e2, t2, _) = run(p, &[&body[..i], &body[i..]]);
            assert_eq!(e2, events, "{}: split at {i}", path.display());
            assert_eq!(t2, turn, "{}: split at {i}", path.display());
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ body.len() as u64);
        for _ in 0..20 {
            let mut cuts = vec![0, body.len()];
            for _ in 0..rng.below(12) {
                cuts.push(rng.below(body.len() + 1));
            }
            cuts.sort_unstable();
            let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
            let (e3, t3, _) = run(p, &pieces);
            assert_eq!((&e3, &t3), (&events, &turn), "{}: {cuts:?}", path.display());
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(p, &bytes).1, turn, "{}: byte by byte", path.display());

        // The turn goes back to its provider.
        let turns = vec![
            Turn::from_value(json!({"role":"user","parts":[{"type":"text","text":"go"}]})).unwrap(),
            Turn::from_value(turn.clone()).unwrap(),
        ];
        let opts = ConversationOptions::from_value(json!({ "provider": p.name() })).unwrap();
        let back = match lower_conversation(
            &turns,
            &opts,
            &vec![TableResolver::default(), TableResolver::default()],
        ) {
            Ok(l) => {
                // The turn goes back to the provider that sent it whole: every block it
                // requires (signatures, reasoning, server tool results, compaction) is
                // sent. Chat has no way to send reasoning back; Gemini's thought summaries
                // without a signature are not asked back (the signature is what counts).
                for d in &l.report.turns[1].dropped {
                    let unsigned = turn["parts"][d.part].get("signature").is_none();
                    let allowed = d.rule == "text-empty"
                        || (d.rule == "reasoning-dropped"
                            && (p == Provider::OpenAiChat || (p == Provider::Gemini && unsigned)));
                    assert!(
                        allowed,
                        "{}: part {} of the turn is not sent back to {}: {} ({})",
                        path.display(),
                        d.part,
                        p.name(),
                        d.rule,
                        d.reason
                    );
                }
                indent(&l.body)
            }
            Err(e) => format!("error: {}", e.to_json()),
        };
        let events_text: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        let snap = format!(
            "oracle:\n{}\n\nevents:\n{}\n\nturn:\n{}\n\nerror: {}\n\nlowered back:\n{}",
            oracle(&events, &turn),
            events_text.join("\n"),
            serde_json::to_string_pretty(&turn).unwrap(),
            error.unwrap_or_else(|| "none".into()),
            back
        );
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(true);
        settings.bind(|| insta::assert_snapshot!(snap));
    });
}

#[test]
fn whole_bodies_and_error_bodies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/response");
    let read = |p: &str| std::fs::read(dir.join(p)).unwrap();
    let ok = parse_response(Provider::Anthropic, &read("anthropic/text.json")).unwrap();
    assert_eq!(
        Turn::Assistant(ok.turn).to_value()["parts"][0]["text"],
        "Hi! My name is Claude."
    );
    let e = parse_response(Provider::Anthropic, &read("anthropic/error_body.json")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ProviderRejected);
    assert_eq!(e.details()["request_id"], "req_011CSHoEeqs5C35K2UUqR7Fy");
    let e = parse_response(Provider::Gemini, &read("gemini/error_body.json")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    assert_eq!(e.details()["retry_after_ms"], 45000);
    let e = parse_response(
        Provider::OpenAiChat,
        &read("openai-chat/rate_limited_body.json"),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    // A whole SSE stream parses the same way.
    let s = parse_response(
        Provider::OpenAiChat,
        &read("openai-chat/parallel_tool_calls.sse"),
    )
    .unwrap();
    assert_eq!(
        Turn::Assistant(s.turn).to_value()["parts"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // Another provider's body is malformed, not a crash.
    let e = parse_response(Provider::OpenAiResponses, &read("anthropic/text.json")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamMalformed);
    // Invalid tool arguments keep the turn.
    let t = parse_response(
        Provider::OpenAiChat,
        &read("openai-chat/invalid_tool_arguments.sse"),
    )
    .unwrap();
    let v = Turn::Assistant(t.turn).to_value();
    assert_eq!(v["metadata"]["error"]["code"], "InvalidToolInput");
    assert_eq!(v["parts"][1]["input"], json!({"path": "."}));
}

#[test]
fn hostile_bytes_never_fail_the_parser() {
    let mut rng = Rng(42);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/response");
    let samples: Vec<(Provider, Vec<u8>)> = [
        "anthropic/tool_use_with_thinking.sse",
        "openai-chat/parallel_tool_calls.sse",
        "openai-responses/reasoning_and_call.sse",
        "gemini/thoughts_and_call.sse",
        "gemini/thoughts_and_call_array.json.stream",
    ]
    .iter()
    .map(|f| {
        (
            provider_of(&dir.join(f)),
            std::fs::read(dir.join(f)).unwrap(),
        )
    })
    .collect();
    for round in 0..3000 {
        let (p, base) = &samples[round % samples.len()];
        let mut b = base.clone();
        for _ in 0..1 + rng.below(8) {
            let i = rng.below(b.len());
            match rng.below(4) {
                0 => b[i] = rng.next() as u8,
                1 => {
                    b.truncate(i);
                }
                2 => {
                    b.remove(i);
                }
                _ => b.insert(i, b"{}[]\":\\\n\r\xff"[rng.below(10)]),
            }
            if b.is_empty() {
                break;
            }
        }
        // Never a panic; an error is a coded event and the turn is a valid turn.
        let (events, turn, _) = run(*p, &[&b]);
        Turn::from_value(turn).unwrap();
        for e in &events {
            if let Event::Error { code, .. } = e {
                assert!(ErrorKind::ALL.iter().any(|k| k.code() == *code));
            }
        }
    }
}

/// The JSON answer's pieces, as each provider streams text (or, for Anthropic's forced
/// tool, a tool call's input).
fn object_stream(p: Provider, pieces: &[&str], tool: bool) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let mut out = String::new();
    match (p, tool) {
        (Provider::Anthropic, _) => {
            out += "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";
            let start = if tool {
                "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"release_note\",\"input\":{}}"
            } else {
                "{\"type\":\"text\",\"text\":\"\"}"
            };
            out += &format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{start}}}\n\n");
            for s in pieces {
                let delta = if tool {
                    format!(
                        "{{\"type\":\"input_json_delta\",\"partial_json\":{}}}",
                        q(s)
                    )
                } else {
                    format!("{{\"type\":\"text_delta\",\"text\":{}}}", q(s))
                };
                out += &format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{delta}}}\n\n");
            }
            let reason = if tool { "tool_use" } else { "end_turn" };
            out += &format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\nevent: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{reason}\"}},\"usage\":{{\"output_tokens\":9}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n");
        }
        (Provider::OpenAiChat, _) => {
            for s in pieces {
                out += &format!("data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}},\"finish_reason\":null}}]}}\n\n", q(s));
            }
            out += "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        }
        (Provider::OpenAiResponses, _) => {
            out += "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5\",\"status\":\"in_progress\",\"output\":[]}}\n\n";
            for s in pieces {
                out += &format!("event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":{}}}\n\n", q(s));
            }
            out += "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":9,\"total_tokens\":14}}}\n\n";
        }
        (Provider::Gemini, _) => {
            let n = pieces.len();
            for (i, s) in pieces.iter().enumerate() {
                let finish = if i + 1 == n {
                    ",\"finishReason\":\"STOP\""
                } else {
                    ""
                };
                out += &format!("data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":{}}}],\"role\":\"model\"}},\"index\":0{finish}}}],\"modelVersion\":\"gemini-2.5-flash\"}}\n\n", q(s));
            }
        }
    }
    out
}

/// A request that asked for JSON is answered with object edits as the answer streams, and
/// the whole object in `metadata.object`; the edits rebuild it exactly, in every provider,
/// in pieces of any size.
#[test]
fn json_answers_stream_as_object_edits() {
    use promptloom::lower::{lower, LowerOptions, NoResolver};
    use promptloom::response::apply_edits;
    let answer = r#"{"title": "Version 2.0 \"Lisbon\"", "tags": ["fast", "small", "\u00e9t\u00e9"], "n": 42.5, "ok": true, "none": null, "deep": {"list": [{"a": 1}, []]}}"#;
    let want: Value = serde_json::from_str(answer).unwrap();
    let msg = promptloom::UserMessage::from_value(
        serde_json::json!({"role": "user", "parts": [{"type": "text", "text": "Write the note."}]}),
    )
    .unwrap();
    let schema = serde_json::json!({"type": "object", "properties": {"title": {"type": "string"}}});
    let mut stale = Vec::new();
    for p in Provider::ALL {
        for (model, tool) in [("native", false), ("claude-3-7-sonnet", true)] {
            if tool && p != Provider::Anthropic {
                continue;
            }
            let model = match (p, tool) {
                (Provider::Anthropic, false) => "claude-sonnet-4-5",
                (Provider::Gemini, _) => "gemini-2.5-flash",
                _ => model,
            };
            let opts = LowerOptions::from_value(serde_json::json!({
                "provider": p.name(), "model": model, "output": {"schema": schema, "name": "release_note"}
            }))
            .unwrap();
            let request = lower(&msg, &opts, &NoResolver).unwrap().body;
            for n in [1, 7, 20, 4096] {
                let pieces: Vec<&str> = {
                    let mut v = Vec::new();
                    let mut rest = answer;
                    while !rest.is_empty() {
                        let mut k = n.min(rest.len());
                        while !rest.is_char_boundary(k) {
                            k += 1;
                        }
                        let (a, b) = rest.split_at(k);
                        v.push(a);
                        rest = b;
                    }
                    v
                };
                let stream = object_stream(p, &pieces, tool);
                let mut parser = ResponseParser::for_request(p, &request);
                let mut built = Value::Null;
                let mut events = parser.push(stream.as_bytes());
                let f = parser.finish();
                events.extend(f.events);
                for e in &events {
                    if let Event::ObjectDelta { edits } = e {
                        apply_edits(&mut built, edits);
                    }
                }
                let name = format!("{p:?}, tool {tool}, pieces of {n}");
                assert!(f.error.is_none(), "{name}: {:?}", f.error);
                assert_eq!(built, want, "{name}: the edits rebuild the answer");
                assert_eq!(
                    f.turn.metadata.get("object"),
                    Some(&want),
                    "{name}: metadata.object"
                );
                if n == 7 {
                    // The case every other host replays (tests/js, the component hosts).
                    let case = json!({ "provider": p.name(), "request": request, "stream": stream, "object": want });
                    let file = format!(
                        "{}/tests/object/{}{}.json",
                        env!("CARGO_MANIFEST_DIR"),
                        p.name(),
                        if tool { "-tool" } else { "" }
                    );
                    let text = serde_json::to_string_pretty(&case).unwrap() + "\n";
                    if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
                        std::fs::create_dir_all(format!(
                            "{}/tests/object",
                            env!("CARGO_MANIFEST_DIR")
                        ))
                        .unwrap();
                        std::fs::write(&file, text).unwrap(); // ok: test
                        stale.push(file);
                    }
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "rewritten (review and commit them): {stale:?}"
    );
    // Text that is not the JSON asked for: InvalidOutput, the text kept, the turn read.
    let opts = LowerOptions::from_value(
        serde_json::json!({"provider": "openai-chat", "model": "gpt-4.1", "output": "json"}),
    )
    .unwrap();
    let request = lower(&msg, &opts, &NoResolver).unwrap().body;
    let mut parser = ResponseParser::for_request(Provider::OpenAiChat, &request);
    parser.push(object_stream(Provider::OpenAiChat, &["Sorry, ", "{\"a\": tru"], false).as_bytes());
    let f = parser.finish();
    let e = f.error.expect("an InvalidOutput error");
    assert_eq!(e.code(), "InvalidOutput");
    assert_eq!(e.details()["text"], "Sorry, {\"a\": tru");
    // A request that asked for no JSON gets no object edits.
    let plain = ResponseParser::for_request(
        Provider::OpenAiChat,
        "{\"model\":\"gpt-4.1\",\"messages\":[]}",
    );
    let mut plain = plain;
    let evs = plain.push(object_stream(Provider::OpenAiChat, &[answer], false).as_bytes());
    assert!(!evs.iter().any(|e| matches!(e, Event::ObjectDelta { .. })));
}
