//! The event stream a server relays to a page: every recorded response of
//! `tests/response/<provider>/` is read by the provider's parser, written as an event stream
//! and read back, and must give the same events, the same turn and the same error — whole,
//! split at every byte, and cut at every event (then `StreamTruncated`, with the turn
//! rebuilt from what came and the id to resume from); and a connection broken anywhere
//! picked up again from the server's log: the same events, each once, and the same turn.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::event_stream::{EventStreamLog, EventStreamReader, EventStreamWriter, VERSION};
use promptloom::lower::Provider;
use promptloom::response::{events_json, ResponseParser};
use promptloom::{Error, ErrorKind};
use serde_json::{json, Value};
use std::path::Path;

mod common;
use common::{provider_of, Rng};

/// What the server does: parse the provider's body in `pieces`, write the events as they
/// come, then the turn (a failure: `fail`, as the JS face does with the adapter's error).
/// Returns the wire, the events, the turn and the error code.
fn relay(p: Provider, pieces: &[&[u8]]) -> (String, Value, Value, Option<&'static str>) {
    let mut parser = ResponseParser::new(p);
    let mut w = EventStreamWriter::new(p);
    let mut wire = w.open();
    let mut events = Vec::new();
    for c in pieces {
        let evs = parser.push(c);
        wire += &w.events(&evs);
        events.extend(evs);
    }
    let done = parser.finish();
    wire += &w.events(&done.events);
    events.extend(done.events);
    match &done.error {
        Some(e) if e.kind() != ErrorKind::InvalidToolInput => wire += &w.fail(e, Some(&done.turn)),
        _ => wire += &w.close(&done.turn),
    }
    let events: Value = serde_json::from_str(&events_json(&events)).unwrap();
    (
        wire,
        events,
        done.turn.to_value(),
        done.error.map(|e| e.code()),
    )
}

/// What the page does: read the wire in `pieces`.
fn read(pieces: &[&[u8]]) -> (Value, Value, Option<&'static str>, Option<String>) {
    let mut r = EventStreamReader::new();
    let mut events = Vec::new();
    for c in pieces {
        let v: Value = serde_json::from_str(&r.push(c)).unwrap();
        events.extend(v.as_array().unwrap().iter().cloned());
    }
    let v: Value = serde_json::from_str(&r.end()).unwrap();
    events.extend(v.as_array().unwrap().iter().cloned());
    (
        Value::Array(events),
        r.turn(),
        r.error().map(Error::code),
        r.last_event_id().map(str::to_owned),
    )
}

#[test]
fn every_recorded_response_reads_back_the_same_through_the_event_stream() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/response");
    let mut files = 0;
    for provider in std::fs::read_dir(&dir).unwrap() {
        for file in std::fs::read_dir(provider.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let p = provider_of(&path);
            let body = std::fs::read(&path).unwrap();
            files += 1;
            let name = path.display().to_string();
            // The provider's bytes in random pieces: the relay writes per piece.
            let mut rng = Rng(0x51ed_270b_2b6c_9a3d ^ body.len() as u64);
            let mut cuts = vec![0, body.len()];
            for _ in 0..rng.below(10) {
                cuts.push(rng.below(body.len() + 1));
            }
            cuts.sort_unstable();
            let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
            let (wire, events, turn, error) = relay(p, &pieces);
            let wire = wire.as_bytes();

            let (e, t, err, last) = read(&[wire]);
            assert_eq!(e, events, "{name}: events");
            assert_eq!(t, turn, "{name}: turn");
            assert_eq!(err, error, "{name}: error");
            let frames = std::str::from_utf8(wire)
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("id: "))
                .count();
            assert_eq!(last, Some(frames.to_string()), "{name}: the last id");

            // Split at every byte: the same.
            for i in 0..=wire.len() {
                let (e2, t2, err2, _) = read(&[&wire[..i], &wire[i..]]);
                assert!(
                    e2 == events && t2 == turn && err2 == error,
                    "{name}: split at {i}"
                );
            }

            // Cut after each whole event before the turn: the events so far, then a
            // StreamTruncated error and a finish; the turn rebuilt; the id to resume from.
            let ends: Vec<usize> = wire
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"\n\n")
                .map(|(i, _)| i + 2)
                .collect();
            let list = events.as_array().unwrap();
            for (n, &end) in ends.iter().enumerate().take(ends.len() - 1) {
                let (e3, t3, err3, last3) = read(&[&wire[..end]]);
                let got = e3.as_array().unwrap();
                // Frame 0 is `open`; frame k (k ≥ 1) is event k - 1.
                assert_eq!(got[..n], list[..n], "{name}: cut after frame {n}");
                let rest = &got[n..];
                assert!(
                    rest.iter()
                        .any(|ev| ev["type"] == "error" && ev["code"] == "StreamTruncated"),
                    "{name}: cut after frame {n}: {rest:?}"
                );
                assert_eq!(
                    rest.last().unwrap()["type"],
                    "finish",
                    "{name}: cut after frame {n}"
                );
                assert_eq!(
                    t3["metadata"]["finish_reason"], "error",
                    "{name}: cut after frame {n}"
                );
                let first_error = list[..n].iter().find(|ev| ev["type"] == "error");
                let want = first_error.map_or("StreamTruncated", |ev| ev["code"].as_str().unwrap());
                assert_eq!(
                    err3,
                    ErrorKind::from_code(want).map(|k| k.code()),
                    "{name}: cut after frame {n}"
                );
                assert_eq!(
                    last3,
                    (n > 0).then(|| n.to_string()),
                    "{name}: cut after frame {n}"
                );
                // The text read so far is in the rebuilt turn.
                let said: String = list[..n]
                    .iter()
                    .filter(|ev| ev["type"] == "text-delta")
                    .map(|ev| ev["text"].as_str().unwrap())
                    .collect();
                let kept: String = t3["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|p| p["text"].as_str().filter(|_| p["type"] == "text"))
                    .collect();
                assert_eq!(kept, said, "{name}: cut after frame {n}");
            }
        }
    }
    assert!(files >= 40, "{files} recorded responses");
}

/// Reads `wire` with the connection broken after byte `cut` and picked up again from the
/// server's log (fed the wire in `step`-byte writes, of which `sent` were written when the
/// page reconnected): the events, the turn and the error.
fn resumed(
    wire: &str,
    cut: usize,
    step: usize,
    sent: usize,
) -> (Value, Value, Option<&'static str>) {
    let mut log = EventStreamLog::new();
    let bytes = wire.as_bytes();
    // The server writes the wire up to `upto` (whole UTF-8 pieces); returns where it is.
    let write = |log: &mut EventStreamLog, pos: usize, upto: usize| {
        let mut end = upto.min(wire.len());
        while !wire.is_char_boundary(end) {
            end += 1;
        }
        if end > pos {
            log.push(&wire[pos..end]);
        }
        end.max(pos)
    };
    let mut r = EventStreamReader::new();
    let mut events = Vec::new();
    let take = |text: String, events: &mut Vec<Value>| {
        let v: Value = serde_json::from_str(&text).unwrap();
        events.extend(v.as_array().unwrap().iter().cloned());
    };
    take(r.push(&bytes[..cut]), &mut events);
    let mut pos = write(&mut log, 0, sent.max(cut));
    r.reconnect();
    let last = r.last_event_id().map(str::to_owned);
    let (first, mut at) = log.since(last.as_deref());
    take(r.push(first.as_bytes()), &mut events);
    while pos < wire.len() {
        pos = write(&mut log, pos, pos + step);
        let (more, next) = log.tail(at);
        at = next;
        take(r.push(more.as_bytes()), &mut events);
    }
    assert!(log.finished());
    take(r.end(), &mut events);
    (Value::Array(events), r.turn(), r.error().map(Error::code))
}

#[test]
fn a_broken_connection_picks_up_from_the_log_with_every_event_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/response");
    let mut runs = 0;
    for provider in std::fs::read_dir(&dir).unwrap() {
        for file in std::fs::read_dir(provider.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let p = provider_of(&path);
            let body = std::fs::read(&path).unwrap();
            let name = path.display().to_string();
            let (wire, events, turn, error) = relay(p, &[&body]);
            // Broken at every byte (a frame cut anywhere, the open event included); the
            // server ahead of the page by a little or a lot; its writes of any size.
            let mut rng = Rng(0x2c1b_3c6d ^ wire.len() as u64);
            for cut in 0..=wire.len() {
                let step = 1 + rng.below(200);
                let sent = cut + rng.below(wire.len() - cut + 1);
                let (e, t, err) = resumed(&wire, cut, step, sent);
                assert!(
                    e == events,
                    "{name}: broken at {cut}: events\n{e}\n{events}"
                );
                assert!(
                    t == turn && err == error,
                    "{name}: broken at {cut}: turn or error"
                );
                runs += 1;
            }
        }
    }
    assert!(runs > 1000, "{runs}");
    // A replay of another provider's stream is refused, not mixed in.
    let mut w = EventStreamWriter::new(Provider::Anthropic);
    let wire = w.open() + &w.events(&[]);
    let mut r = EventStreamReader::new();
    r.push(wire.as_bytes());
    r.reconnect();
    let other = EventStreamWriter::new(Provider::Gemini).open();
    r.push(other.as_bytes());
    r.end();
    assert_eq!(r.error().map(Error::code), Some("StreamMalformed"));
}

#[test]
fn a_relayed_stream_as_it_goes_on_the_wire() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/response/anthropic/tool_use_with_thinking.sse");
    let body = std::fs::read(path).unwrap();
    let (wire, ..) = relay(Provider::Anthropic, &[&body]);
    insta::assert_snapshot!(wire);
}

#[test]
fn a_failure_before_any_event_still_ends_with_a_turn() {
    let mut w = EventStreamWriter::new(Provider::OpenAiResponses);
    let e = Error::new(
        ErrorKind::AuthenticationFailed,
        "openai-responses: the API key was refused",
    )
    .with("status", 401);
    let wire = w.open() + &w.fail(&e, None);
    // Nothing after the turn.
    assert_eq!(w.events(&[]), "");
    assert_eq!(
        w.close_json(r#"{"role":"assistant","parts":[]}"#).unwrap(),
        ""
    );
    assert_eq!(
        w.events_json("[{}]").unwrap_err().kind(),
        ErrorKind::InvalidOptions
    );
    assert!(
        wire.contains("event: error\nid: 1\ndata: {\"code\":\"AuthenticationFailed\""),
        "{wire}"
    );
    let mut r = EventStreamReader::new();
    r.push(wire.as_bytes());
    r.end();
    let e = r.error().unwrap();
    assert_eq!(
        (e.code(), e.message(), e.details()),
        (
            "AuthenticationFailed",
            "openai-responses: the API key was refused",
            json!({"status": 401})
        )
    );
    // Not one of the answer's events (an adapter throws it; it did not stream it).
    let (events, turn, err, last) = read(&[wire.as_bytes()]);
    assert_eq!(events, json!([]));
    assert_eq!(turn["metadata"]["error"]["code"], "AuthenticationFailed");
    assert_eq!(turn["metadata"]["finish_reason"], "error");
    assert_eq!(turn["metadata"]["provider"], "openai-responses");
    assert_eq!(err, Some("AuthenticationFailed"));
    assert_eq!(last.as_deref(), Some("2"));
}

#[test]
fn events_written_from_json_keep_their_bytes_and_survive_line_breaks() {
    let mut w = EventStreamWriter::new(Provider::Gemini);
    // Pretty-printed JSON with every SSE line end in its white space.
    let wire = w.events_json("[{\"type\":\"text-delta\",\r\n\"part\":0,\r\"text\":\"a\\nb\"},\n{\"type\":\"finish\",\"reason\":\"stop\"}]").unwrap()
        + &w.close_json(r#"{"role":"assistant","parts":[{"type":"text","text":"a\nb"}],"metadata":{"provider":"gemini"}}"#).unwrap();
    let (events, turn, err, _) = read(&[wire.as_bytes()]);
    assert_eq!(
        events,
        json!([{"type":"text-delta","part":0,"text":"a\nb"},{"type":"finish","reason":"stop"}])
    );
    assert_eq!(turn["parts"][0]["text"], "a\nb");
    assert_eq!(err, None);
    // The array is split, not parsed: strings with commas, brackets and escaped quotes, and
    // nested values, stay whole; an event whose `type` is not first is read whole.
    let tricky = r#"[{"type":"tool-call-end","part":0,"id":"a","name":"n","input":{"a":[1,2,{"b":"x,]}\"{"}]}},{"part":1,"type":"text-delta","text":"[,]"}]"#;
    let mut w2 = EventStreamWriter::new(Provider::Anthropic);
    let wire2 = w2.events_json(tricky).unwrap();
    let mut r2 = EventStreamReader::new();
    let got: Value = serde_json::from_str(&r2.push(wire2.as_bytes())).unwrap();
    assert_eq!(got, serde_json::from_str::<Value>(tricky).unwrap());
    for bad in [
        "[",
        "[{\"type\":\"x\"}",
        "{\"type\":\"x\"}",
        "[{\"type\":\"x\"},]",
        "[{\"type\":\"x\",}]",
        "[{\"type\":\"x\"}}]",
    ] {
        assert_eq!(
            EventStreamWriter::new(Provider::Anthropic)
                .events_json(bad)
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidOptions,
            "{bad}"
        );
    }
    // What is not a list of events is refused, with where.
    let bad = w.events_json("[{\"part\":1}]").unwrap_err();
    assert_eq!(
        (bad.kind(), bad.path()),
        (ErrorKind::InvalidOptions, Some("events[0]"))
    );
    assert_eq!(
        EventStreamWriter::new(Provider::Gemini)
            .close_json(r#"{"role":"user","parts":[]}"#)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidOptions
    );
}

#[test]
fn what_is_not_this_protocol_is_refused_with_a_code() {
    let code = |wire: &str| read(&[wire.as_bytes()]).2;
    // A newer version.
    let newer = format!("event: open\ndata: {{\"protocol\":\"promptloom-events\",\"version\":{},\"provider\":\"anthropic\"}}\n\nid: 1\ndata: {{\"type\":\"text-delta\",\"part\":0,\"text\":\"x\"}}\n\n", VERSION + 1);
    let (events, turn, err, _) = read(&[newer.as_bytes()]);
    assert_eq!(err, Some("StreamMalformed"));
    assert!(
        events[0]["message"].as_str().unwrap().contains("version 2"),
        "{events}"
    );
    assert_eq!(
        turn["parts"],
        json!([]),
        "nothing of a refused stream is read"
    );
    // Another protocol, a provider's own stream, an unknown provider, an empty body.
    assert_eq!(
        code("event: open\ndata: {\"protocol\":\"other\",\"version\":1}\n\n"),
        Some("StreamMalformed")
    );
    assert_eq!(code("data: {\"choices\":[]}\n\n"), Some("StreamMalformed"));
    assert_eq!(code("event: open\ndata: {\"protocol\":\"promptloom-events\",\"version\":1,\"provider\":\"mistral\"}\n\n"), Some("StreamMalformed"));
    assert_eq!(code(""), Some("StreamTruncated"));
    assert_eq!(
        code("<html>502 Bad Gateway</html>"),
        Some("StreamTruncated")
    );
    // An event that is not JSON is an error event; the stream goes on.
    let open = "event: open\ndata: {\"protocol\":\"promptloom-events\",\"version\":1,\"provider\":\"anthropic\"}\n\n";
    let (events, turn, err, _) = read(&[format!("{open}id: 1\ndata: {{oops\n\nid: 2\ndata: {{\"type\":\"text-delta\",\"part\":0,\"text\":\"ok\"}}\n\n").as_bytes()]);
    assert_eq!(err, Some("StreamMalformed"));
    assert_eq!(events[1], json!({"type":"text-delta","part":0,"text":"ok"}));
    assert_eq!(turn["parts"][0]["text"], "ok");
    // Keep-alive comments and names a later version adds are skipped; nothing follows the turn.
    let turn_json = r#"{"role":"assistant","parts":[{"type":"text","text":"ok"}],"metadata":{"provider":"anthropic"}}"#;
    let wire = format!("{open}: keep-alive\n\nevent: progress\ndata: {{}}\n\nid: 1\ndata: {{\"type\":\"text-delta\",\"part\":0,\"text\":\"ok\"}}\n\nevent: turn\nid: 2\ndata: {turn_json}\n\nid: 3\ndata: {{\"type\":\"text-delta\",\"part\":0,\"text\":\"late\"}}\n\n");
    let (events, turn, err, last) = read(&[wire.as_bytes()]);
    assert_eq!(events, json!([{"type":"text-delta","part":0,"text":"ok"}]));
    assert_eq!(turn["parts"][0]["text"], "ok");
    assert_eq!((err, last.as_deref()), (None, Some("2")));
    // A turn that is not an assistant turn.
    assert_eq!(
        code(&format!(
            "{open}event: turn\ndata: {{\"role\":\"user\"}}\n\n"
        )),
        Some("StreamMalformed")
    );
}
