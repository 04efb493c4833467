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
use common::{indent, Rng};

fn provider_of(path: &Path) -> Provider {
    let dir = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .unwrap();
    Provider::parse(dir).unwrap()
}

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
            Ok(l) => indent(&l.body),
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
