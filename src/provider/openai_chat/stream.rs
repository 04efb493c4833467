//! OpenAI Chat Completions: the stream of `chat.completion.chunk` objects (ended by
//! `data: [DONE]`) and the whole `chat.completion` body. Only the first choice is read.
//! `reasoning_content` / `reasoning` deltas (OpenAI-compatible servers) become reasoning.

use crate::provider::Provider;
use crate::provider::{errors, malformed};
use crate::stream::builder::{Builder, Key};
use crate::stream::{num, str_of, FinishReason, Usage};
use serde_json::Value;

const TEXT: Key = (0, 0, 0);
const REASONING: Key = (1, 0, 0);
const TOOL: u8 = 2;

fn finish(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: num(u, "prompt_tokens").unwrap_or(0),
        output_tokens: num(u, "completion_tokens").unwrap_or(0),
        cached_tokens: u
            .get("prompt_tokens_details")
            .and_then(|d| num(d, "cached_tokens")),
        cache_write_tokens: None,
        reasoning_tokens: u
            .get("completion_tokens_details")
            .and_then(|d| num(d, "reasoning_tokens")),
    }
}

fn first_choice(v: &Value) -> Option<&Value> {
    v.get("choices")?
        .as_array()?
        .iter()
        .find(|c| num(c, "index").unwrap_or(0) == 0)
}

/// `content` as a string, or as an array of chunks (Mistral's Magistral: `text` chunks and
/// `thinking` chunks holding text chunks); other chunk kinds are kept as provider data.
fn content(b: &mut Builder, c: Option<&Value>) {
    match c {
        Some(Value::String(t)) => b.text(TEXT, t),
        Some(Value::Array(chunks)) => {
            for ch in chunks {
                match (str_of(ch, "type"), ch.get("thinking")) {
                    (Some("text"), _) => b.text(TEXT, str_of(ch, "text").unwrap_or("")),
                    (Some("thinking"), Some(Value::String(t))) => b.reasoning(REASONING, t),
                    (Some("thinking"), Some(Value::Array(parts))) => {
                        for p in parts {
                            if let Some(t) = str_of(p, "text") {
                                b.reasoning(REASONING, t);
                            }
                        }
                    }
                    _ => b.other_part(ch.clone()),
                }
            }
        }
        _ => {}
    }
}

/// OpenRouter's `reasoning_details`: its text where no `reasoning` string came with it
/// (`reasoning.text`, `reasoning.summary`), and the signature or encrypted data that goes
/// with the reasoning (`reasoning.encrypted`).
fn reasoning_details(b: &mut Builder, m: &Value, text_too: bool) {
    let Some(items) = m.get("reasoning_details").and_then(Value::as_array) else {
        return;
    };
    for it in items {
        b.reasoning_detail(REASONING, it);
        match str_of(it, "type") {
            Some("reasoning.text") => {
                if text_too {
                    b.reasoning(REASONING, str_of(it, "text").unwrap_or(""));
                }
                if let Some(s) = str_of(it, "signature").filter(|s| !s.is_empty()) {
                    b.reasoning_meta(REASONING, Some(s), None, None);
                }
            }
            Some("reasoning.summary") if text_too => {
                b.reasoning(REASONING, str_of(it, "summary").unwrap_or(""))
            }
            Some("reasoning.encrypted") => {
                b.reasoning_meta(REASONING, None, str_of(it, "data"), None)
            }
            _ => {}
        }
    }
}

fn reasoning_text(m: &Value) -> Option<&str> {
    str_of(m, "reasoning_content").or_else(|| str_of(m, "reasoning"))
}

/// One stream chunk.
pub(crate) fn chunk(b: &mut Builder, v: &Value) {
    if let Some(e) = errors::from_payload(Provider::OpenAiChat, v, None) {
        b.error(e);
        return;
    }
    b.start(str_of(v, "id"), str_of(v, "model"));
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        b.usage(usage(u));
    }
    let Some(c) = first_choice(v) else { return };
    if let Some(d) = c.get("delta") {
        let r = reasoning_text(d);
        if let Some(r) = r {
            b.reasoning(REASONING, r);
        }
        reasoning_details(b, d, r.is_none());
        content(b, d.get("content"));
        if let Some(t) = str_of(d, "refusal") {
            b.text(TEXT, t);
            b.meta("refusal", true.into());
        }
        // The deprecated single `function_call`: its name first, then argument pieces.
        if let Some(f) = d.get("function_call").filter(|f| f.is_object()) {
            let k = (TOOL, u64::MAX, 0);
            if let Some(name) = str_of(f, "name") {
                b.tool_start(k, "", name);
            }
            if let Some(a) = str_of(f, "arguments") {
                b.tool_delta(k, a);
            }
        }
        if let Some(calls) = d.get("tool_calls").and_then(Value::as_array) {
            for (n, call) in calls.iter().enumerate() {
                let k = (TOOL, num(call, "index").unwrap_or(n as u64), 0);
                let (f, args, kind) = call_fields(call);
                if let Some(id) = str_of(call, "id") {
                    b.tool_start_kind(k, id, str_of(f, "name").unwrap_or(""), kind);
                }
                if let Some(a) = str_of(f, args) {
                    b.tool_delta(k, a);
                }
            }
        }
    }
    if let Some(r) = str_of(c, "finish_reason") {
        b.finish_reason(finish(r), Some(r));
    }
}

/// A tool call's object (`function`, or `custom` for a custom tool's call), the key of its
/// input text, and its kind.
fn call_fields(call: &Value) -> (&Value, &'static str, Option<&'static str>) {
    match call.get("custom") {
        Some(c) if str_of(call, "type") == Some("custom") => (c, "input", Some("custom")),
        _ => (
            call.get("function").unwrap_or(&Value::Null),
            "arguments",
            None,
        ),
    }
}

/// A whole (non-streaming) response body.
pub(crate) fn body(b: &mut Builder, v: &Value) {
    if let Some(e) = errors::from_payload(Provider::OpenAiChat, v, None) {
        b.error(e);
        b.terminal();
        return;
    }
    let Some(c) = first_choice(v) else {
        b.error(malformed(
            Provider::OpenAiChat,
            "the body is not a chat completion (no `choices`)",
        ));
        b.terminal();
        return;
    };
    b.start(str_of(v, "id"), str_of(v, "model"));
    let m = c.get("message").unwrap_or(&Value::Null);
    let r = reasoning_text(m);
    if let Some(r) = r {
        b.reasoning(REASONING, r);
    }
    reasoning_details(b, m, r.is_none());
    b.end(REASONING);
    content(b, m.get("content"));
    b.end(REASONING);
    if let Some(t) = str_of(m, "refusal") {
        b.text(TEXT, t);
        b.meta("refusal", true.into());
    }
    // The deprecated single `function_call` (older servers): a call without an id.
    if let Some(f) = m.get("function_call").filter(|f| f.is_object()) {
        let k = (TOOL, u64::MAX, 0);
        b.tool_start(k, "", str_of(f, "name").unwrap_or(""));
        b.tool_delta(k, str_of(f, "arguments").unwrap_or(""));
        b.end(k);
    }
    if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
        for (n, call) in calls.iter().enumerate() {
            let k = (TOOL, n as u64, 0);
            let (f, args, kind) = call_fields(call);
            b.tool_start_kind(
                k,
                str_of(call, "id").unwrap_or(""),
                str_of(f, "name").unwrap_or(""),
                kind,
            );
            b.tool_delta(k, str_of(f, args).unwrap_or(""));
            b.end(k);
        }
    }
    if let Some(r) = str_of(c, "finish_reason") {
        b.finish_reason(finish(r), Some(r));
    }
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        b.usage(usage(u));
    }
    b.terminal();
}

/// A chunk that only adds text (most of a stream), read without building a JSON tree.
#[derive(serde::Deserialize)]
struct FastChunk<'a> {
    #[serde(borrow, default)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    choices: Vec<FastChoice<'a>>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct FastChoice<'a> {
    #[serde(default)]
    index: u64,
    #[serde(borrow)]
    delta: FastChoiceDelta<'a>,
    #[serde(default)]
    finish_reason: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct FastChoiceDelta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    function_call: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning_content: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    reasoning_details: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    refusal: Option<serde::de::IgnoredAny>,
}

/// Reads `data` if it is a chunk of text only; false: read it as a tree.
pub(crate) fn fast(b: &mut Builder, data: &str) -> bool {
    let Ok(c) = serde_json::from_str::<FastChunk<'_>>(data) else {
        return false;
    };
    let [choice] = c.choices.as_slice() else {
        return false;
    };
    let d = &choice.delta;
    if c.usage.is_some()
        || c.error.is_some()
        || choice.index != 0
        || choice.finish_reason.is_some()
        || d.tool_calls.is_some()
        || d.function_call.is_some()
        || d.reasoning_content.is_some()
        || d.reasoning.is_some()
        || d.reasoning_details.is_some()
        || d.refusal.is_some()
    {
        return false;
    }
    b.start(c.id.as_deref(), c.model.as_deref());
    if let Some(t) = &d.content {
        b.text(TEXT, t);
    }
    true
}

/// The reader of one Chat Completions response.
#[derive(Debug)]
pub(super) struct Completions;

impl crate::provider::Reader for Completions {
    fn fast(&mut self, b: &mut Builder, data: &str) -> bool {
        fast(b, data)
    }
    fn event(&mut self, b: &mut Builder, v: &Value) {
        chunk(b, v)
    }
    fn body(&mut self, b: &mut Builder, v: &Value) {
        body(b, v)
    }
    fn done(&mut self, b: &mut Builder) {
        b.terminal();
    }
}
