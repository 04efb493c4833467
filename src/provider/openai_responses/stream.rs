//! OpenAI Responses: the typed event stream (`response.created`, `response.output_item.added`
//! / `.done`, `response.output_text.delta`, `response.reasoning_summary_text.delta`,
//! `response.function_call_arguments.delta`, `response.completed` / `.incomplete` /
//! `.failed`, `error`) and the whole `response` body.

use crate::error::{Error, ErrorKind};
use crate::provider::Provider;
use crate::provider::{errors, malformed};
use crate::stream::builder::{cite, Builder, Key};
use crate::stream::{num, str_of, FinishReason, Usage};
use serde_json::Value;

const TEXT: u8 = 0;
const REASONING: u8 = 1;
const TOOL: u8 = 2;
const OTHER: u8 = 3;

/// What the dialect remembers between events.
#[derive(Debug, Default)]
pub(super) struct State {
    /// The reasoning summary part last written to: (output index, summary index).
    summary: Option<(u64, u64)>,
    /// The text parts whose annotations came as events (the whole item repeats them).
    annotated: Vec<Key>,
}

fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: num(u, "input_tokens").unwrap_or(0),
        output_tokens: num(u, "output_tokens").unwrap_or(0),
        cached_tokens: u
            .get("input_tokens_details")
            .and_then(|d| num(d, "cached_tokens")),
        cache_write_tokens: None,
        reasoning_tokens: u
            .get("output_tokens_details")
            .and_then(|d| num(d, "reasoning_tokens")),
    }
}

fn out_index(v: &Value) -> u64 {
    num(v, "output_index").unwrap_or(0)
}

/// Reasoning summary text: parts of one item are separated by a blank line.
fn summary_delta(st: &mut State, b: &mut Builder, v: &Value, text: &str) {
    let o = out_index(v);
    let s = num(v, "summary_index").unwrap_or(0);
    if matches!(st.summary, Some((po, ps)) if po == o && ps != s) {
        b.reasoning((REASONING, o, 0), "\n\n");
    }
    st.summary = Some((o, s));
    b.reasoning((REASONING, o, 0), text);
}

/// An output item, as added (stream) or whole (`output_item.done`, a body).
fn item(st: &State, b: &mut Builder, o: u64, it: &Value, done: bool) {
    match str_of(it, "type") {
        Some("message") => {
            if done {
                // Text that came only whole (no deltas): a body, or a stream that skipped them.
                let parts = it.get("content").and_then(Value::as_array);
                for (c, p) in parts.into_iter().flatten().enumerate() {
                    let k = (TEXT, o, c as u64);
                    let t = str_of(p, "text").or_else(|| str_of(p, "refusal"));
                    if let (Some(t), false) = (t, b_has(b, k)) {
                        b.text(k, t);
                    }
                    if !st.annotated.contains(&k) {
                        for a in p
                            .get("annotations")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            b.citation(k, annotation(a));
                        }
                    }
                }
            }
        }
        Some("reasoning") => {
            let k = (REASONING, o, 0);
            b.reasoning_begin(k);
            if done {
                if !b_has(b, k) {
                    // The summary, else the reasoning text itself (open-weight models).
                    let texts = |key: &str| -> Vec<&str> {
                        it.get(key)
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|p| str_of(p, "text"))
                            .collect()
                    };
                    let mut t = texts("summary");
                    if t.is_empty() {
                        t = texts("content");
                    }
                    b.reasoning(k, &t.join("\n\n"));
                }
                b.reasoning_meta(k, str_of(it, "encrypted_content"), None, str_of(it, "id"));
                b.end(k);
            } else {
                b.reasoning_meta(k, None, None, str_of(it, "id"));
            }
        }
        Some("function_call") => {
            let k = (TOOL, o, 0);
            let id = str_of(it, "call_id")
                .or_else(|| str_of(it, "id"))
                .unwrap_or("");
            b.tool_start(k, id, str_of(it, "name").unwrap_or(""));
            if done {
                if !b.has_block(k) {
                    b.tool_delta(k, str_of(it, "arguments").unwrap_or(""));
                }
                b.end(k);
            }
        }
        Some(ty) => match host_call(ty, it) {
            Some((kind, name, input)) => {
                let k = (TOOL, o, 0);
                let id = match kind {
                    // An approval is answered by the request's item id.
                    "mcp_approval" => str_of(it, "id"),
                    _ => str_of(it, "call_id").or_else(|| str_of(it, "id")),
                };
                b.tool_start_kind(k, id.unwrap_or(""), name, Some(kind));
                if done {
                    if !b.has_block(k) {
                        match input {
                            Input::Text(t) => b.tool_delta(k, t),
                            Input::Value(v) => b.tool_input(k, v.clone(), None),
                        }
                    }
                    b.tool_data(k, it);
                    b.end(k);
                }
            }
            None if done => b.other((OTHER, o, 0), it.clone()),
            None => {}
        },
        None => {
            if done {
                b.other((OTHER, o, 0), it.clone());
            }
        }
    }
}

/// An annotation of output text: a URL it cites (with the span of the text), or a file.
fn annotation(a: &Value) -> serde_json::Map<String, Value> {
    let kind = match str_of(a, "type") {
        Some("url_citation") => "url",
        _ => "file",
    };
    cite(
        "openai-responses",
        kind,
        a,
        &[
            ("url", "url"),
            ("title", "title"),
            ("filename", "title"),
            ("file_id", "file_id"),
            ("start_index", "start"),
            ("end_index", "end"),
        ],
    )
}

/// A call's input as the item holds it.
enum Input<'a> {
    /// JSON text, or a custom tool's free text.
    Text(&'a str),
    /// A JSON value.
    Value(&'a Value),
}

/// A call of an item type other than `function_call` that the host answers: its kind, the
/// tool's name and its input (none: the item is not one, or the provider runs it itself).
fn host_call<'a>(ty: &str, it: &'a Value) -> Option<(&'static str, &'a str, Input<'a>)> {
    let field = |k: &str| it.get(k).unwrap_or(&Value::Null);
    Some(match ty {
        "custom_tool_call" => (
            "custom",
            str_of(it, "name")?,
            Input::Text(str_of(it, "input").unwrap_or("")),
        ),
        "apply_patch_call" => (
            "apply_patch",
            "apply_patch",
            Input::Value(field("operation")),
        ),
        "shell_call" => ("shell", "shell", Input::Value(field("action"))),
        "local_shell_call" => ("local_shell", "local_shell", Input::Value(field("action"))),
        "tool_search_call" if str_of(it, "execution") == Some("client") => (
            "tool_search",
            "tool_search",
            Input::Value(field("arguments")),
        ),
        "mcp_approval_request" => (
            "mcp_approval",
            str_of(it, "name")?,
            Input::Text(str_of(it, "arguments").unwrap_or("")),
        ),
        _ => return None,
    })
}

/// Whether block `k` already holds something (deltas came before the whole item).
fn b_has(b: &Builder, k: Key) -> bool {
    b.has_block(k)
}

fn end_of(b: &mut Builder, r: &Value) {
    if let Some(u) = r.get("usage").filter(|u| u.is_object()) {
        b.usage(usage(u));
    }
    let status = str_of(r, "status").unwrap_or("completed");
    match status {
        "incomplete" => {
            let why = r
                .get("incomplete_details")
                .and_then(|d| str_of(d, "reason"))
                .unwrap_or("incomplete");
            let reason = match why {
                "max_output_tokens" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                _ => FinishReason::Other,
            };
            b.finish_reason(reason, Some(why));
        }
        "failed" | "cancelled" => {
            let e = r
                .get("error")
                .filter(|e| e.is_object())
                .map(|e| {
                    let mut w = serde_json::Map::new();
                    w.insert("error".into(), e.clone());
                    errors::from_payload(Provider::OpenAiResponses, &Value::Object(w), None)
                })
                .and_then(|e| e)
                .unwrap_or_else(|| {
                    Error::new(
                        ErrorKind::ProviderError,
                        format!("openai-responses answered: the response {status}"),
                    )
                    .with("provider", "openai-responses")
                    .with("retryable", status == "failed")
                });
            b.error(e);
            b.finish_reason(FinishReason::Error, Some(status));
        }
        _ => {
            let reason = if b.has_tool_calls() {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            };
            b.finish_reason(reason, Some(status));
        }
    }
    b.terminal();
}

/// One stream event.
pub(crate) fn event(st: &mut State, b: &mut Builder, v: &Value) {
    let Some(ty) = str_of(v, "type") else {
        b.error(malformed(
            Provider::OpenAiResponses,
            "an event without a `type`",
        ));
        return;
    };
    match ty {
        "response.created" | "response.in_progress" | "response.queued" => {
            let r = v.get("response").unwrap_or(&Value::Null);
            b.start(str_of(r, "id"), str_of(r, "model"));
        }
        "response.output_item.added" => item(
            st,
            b,
            out_index(v),
            v.get("item").unwrap_or(&Value::Null),
            false,
        ),
        "response.output_item.done" => item(
            st,
            b,
            out_index(v),
            v.get("item").unwrap_or(&Value::Null),
            true,
        ),
        "response.output_text.delta" | "response.refusal.delta" => {
            let k = (TEXT, out_index(v), num(v, "content_index").unwrap_or(0));
            b.text(k, str_of(v, "delta").unwrap_or(""));
            if ty == "response.refusal.delta" {
                b.meta("refusal", true.into());
            }
        }
        "response.output_text.annotation.added" => {
            let k = (TEXT, out_index(v), num(v, "content_index").unwrap_or(0));
            if let Some(a) = v.get("annotation") {
                b.citation(k, annotation(a));
                if !st.annotated.contains(&k) {
                    st.annotated.push(k);
                }
            }
        }
        "response.reasoning_summary_text.delta" => {
            summary_delta(st, b, v, str_of(v, "delta").unwrap_or(""))
        }
        "response.reasoning_text.delta" => b.reasoning(
            (REASONING, out_index(v), 0),
            str_of(v, "delta").unwrap_or(""),
        ),
        "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
            b.tool_delta((TOOL, out_index(v), 0), str_of(v, "delta").unwrap_or(""))
        }
        "response.completed" | "response.incomplete" | "response.failed" => {
            let r = v.get("response").unwrap_or(&Value::Null);
            b.start(str_of(r, "id"), str_of(r, "model"));
            end_of(b, r);
        }
        "error" => {
            if let Some(e) = errors::from_payload(Provider::OpenAiResponses, v, None) {
                b.error(e);
            }
        }
        // `.done` events repeat what the deltas said; others change no part.
        _ => {}
    }
}

/// A whole (non-streaming) response body.
pub(crate) fn body(b: &mut Builder, v: &Value) {
    if v.get("output").is_none() {
        if let Some(e) = errors::from_payload(Provider::OpenAiResponses, v, None) {
            b.error(e);
        } else {
            b.error(malformed(
                Provider::OpenAiResponses,
                "the body is not a response (no `output`)",
            ));
        }
        b.terminal();
        return;
    }
    b.start(str_of(v, "id"), str_of(v, "model"));
    if let Some(items) = v.get("output").and_then(Value::as_array) {
        let st = State::default();
        for (o, it) in items.iter().enumerate() {
            item(&st, b, o as u64, it, true);
        }
    }
    end_of(b, v);
}

/// Text and argument deltas (most of a stream), read without building a JSON tree.
#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(rename = "type", borrow)]
    ty: std::borrow::Cow<'a, str>,
    #[serde(default)]
    output_index: u64,
    #[serde(default)]
    content_index: u64,
    #[serde(borrow)]
    delta: std::borrow::Cow<'a, str>,
}

/// Reads `data` if it is an output text or function argument delta; false: as a tree.
pub(crate) fn fast(b: &mut Builder, data: &str) -> bool {
    if !data.contains("delta") {
        return false;
    }
    let Ok(d) = serde_json::from_str::<FastDelta<'_>>(data) else {
        return false;
    };
    match &*d.ty {
        "response.output_text.delta" => b.text((TEXT, d.output_index, d.content_index), &d.delta),
        "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
            b.tool_delta((TOOL, d.output_index, 0), &d.delta)
        }
        _ => return false,
    }
    true
}

/// The reader of one Responses response.
#[derive(Debug, Default)]
pub(super) struct Responses(State);

impl crate::provider::Reader for Responses {
    fn fast(&mut self, b: &mut Builder, data: &str) -> bool {
        fast(b, data)
    }
    fn event(&mut self, b: &mut Builder, v: &Value) {
        event(&mut self.0, b, v)
    }
    fn body(&mut self, b: &mut Builder, v: &Value) {
        body(b, v)
    }
}
