//! Anthropic Messages: the SSE stream (`message_start`, `content_block_start` / `_delta` /
//! `_stop`, `message_delta`, `message_stop`, `ping`, `error`) and the whole `message` body.

use crate::provider::Provider;
use crate::provider::{errors, malformed};
use crate::stream::builder::{cite, Builder, Key};
use crate::stream::{num, str_of, FinishReason, Usage};
use serde_json::Value;

const BLOCK: u8 = 0;

fn key(v: &Value) -> Key {
    (BLOCK, num(v, "index").unwrap_or(0), 0)
}

fn stop_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "pause_turn" => FinishReason::Pause,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// Input counts every input token: Anthropic counts cache reads and writes apart. A later
/// usage (`message_delta`) that leaves a count out keeps the earlier one. A request that
/// sampled more than once (compaction) reports each pass in `iterations`, the top-level
/// figures only the last: what is billed is their sum.
fn usage(u: &Value, into: &mut Usage) {
    if let Some(its) = u
        .get("iterations")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    {
        let sum = |k: &str| its.iter().filter_map(|i| num(i, k)).sum::<u64>();
        let (read, write) = (
            sum("cache_read_input_tokens"),
            sum("cache_creation_input_tokens"),
        );
        into.input_tokens = sum("input_tokens") + read + write;
        into.output_tokens = sum("output_tokens");
        into.cached_tokens = Some(read);
        into.cache_write_tokens = Some(write);
        return;
    }
    let read = num(u, "cache_read_input_tokens").or(into.cached_tokens);
    let write = num(u, "cache_creation_input_tokens").or(into.cache_write_tokens);
    let uncached = into
        .input_tokens
        .saturating_sub(into.cached_tokens.unwrap_or(0))
        .saturating_sub(into.cache_write_tokens.unwrap_or(0));
    let input = num(u, "input_tokens").unwrap_or(uncached);
    into.input_tokens = input + read.unwrap_or(0) + write.unwrap_or(0);
    into.cached_tokens = read;
    into.cache_write_tokens = write;
    if let Some(o) = num(u, "output_tokens") {
        into.output_tokens = o;
    }
}

/// A citation of a text block (it supports the whole block): a web search result, a
/// search result, or a place in a document of the request.
fn citation(c: &Value) -> serde_json::Map<String, Value> {
    let kind = match str_of(c, "type") {
        Some("web_search_result_location") => "url",
        Some("search_result_location") => "search",
        _ => "document",
    };
    cite(
        "anthropic",
        kind,
        c,
        &[
            ("url", "url"),
            ("source", "url"),
            ("title", "title"),
            ("document_title", "title"),
            ("document_index", "document"),
            ("file_id", "file_id"),
            ("cited_text", "cited_text"),
        ],
    )
}

/// A content block as it starts (stream) or whole (body).
fn block(b: &mut Builder, k: Key, block: &Value, whole: bool) {
    match str_of(block, "type") {
        Some("text") => {
            b.text(k, str_of(block, "text").unwrap_or(""));
            for c in block
                .get("citations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                b.citation(k, citation(c));
            }
        }
        Some("thinking") => {
            b.reasoning_begin(k);
            b.reasoning(k, str_of(block, "thinking").unwrap_or(""));
            if let Some(s) = str_of(block, "signature").filter(|s| !s.is_empty()) {
                b.reasoning_meta(k, Some(s), None, None);
            }
        }
        Some("redacted_thinking") => {
            b.reasoning_meta(k, None, Some(str_of(block, "data").unwrap_or("")), None);
        }
        Some("tool_use") => {
            let id = str_of(block, "id").unwrap_or("");
            let name = str_of(block, "name").unwrap_or("");
            if whole {
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                b.tool_whole(k, id, name, input, None);
                return;
            }
            b.tool_start(k, id, name);
            // Streamed, the input is `{}` here and comes as `input_json_delta`s, unless the
            // call came whole (programmatic tool calling): then it is here.
            if let Some(input) = block
                .get("input")
                .filter(|i| !i.is_null() && i.as_object().is_none_or(|o| !o.is_empty()))
            {
                b.tool_input(k, input.clone(), None);
            }
        }
        _ => b.other(k, block.clone()),
    }
    if whole {
        b.end(k);
    }
}

/// One stream event.
pub(crate) fn event(b: &mut Builder, v: &Value) {
    match str_of(v, "type") {
        Some("message_start") => {
            let m = v.get("message").unwrap_or(&Value::Null);
            b.start(str_of(m, "id"), str_of(m, "model"));
            if let Some(u) = m.get("usage") {
                usage(u, b.usage_mut());
            }
        }
        Some("content_block_start") => {
            let k = key(v);
            block(b, k, v.get("content_block").unwrap_or(&Value::Null), false);
        }
        Some("content_block_delta") => {
            let k = key(v);
            let d = v.get("delta").unwrap_or(&Value::Null);
            match str_of(d, "type") {
                Some("text_delta") => b.text(k, str_of(d, "text").unwrap_or("")),
                Some("thinking_delta") => b.reasoning(k, str_of(d, "thinking").unwrap_or("")),
                Some("signature_delta") => b.reasoning_meta(k, str_of(d, "signature"), None, None),
                Some("input_json_delta") => {
                    b.tool_delta(k, str_of(d, "partial_json").unwrap_or(""))
                }
                Some("citations_delta") => {
                    if let Some(c) = d.get("citation") {
                        b.citation(k, citation(c));
                    }
                }
                // Future delta kinds change no part this version models.
                _ => {}
            }
        }
        Some("content_block_stop") => b.end(key(v)),
        Some("message_delta") => {
            if let Some(r) = v.get("delta").and_then(|d| str_of(d, "stop_reason")) {
                b.finish_reason(stop_reason(r), Some(r));
            }
            if let Some(u) = v.get("usage") {
                usage(u, b.usage_mut());
            }
        }
        Some("message_stop") => b.terminal(),
        Some("ping") => {}
        Some("error") => {
            if let Some(e) = errors::from_payload(Provider::Anthropic, v, None) {
                b.error(e);
            }
        }
        Some(_) => {}
        None => b.error(malformed(Provider::Anthropic, "an event without a `type`")),
    }
}

/// A whole (non-streaming) response body.
pub(crate) fn body(b: &mut Builder, v: &Value) {
    if let Some(e) = errors::from_payload(Provider::Anthropic, v, None) {
        b.error(e);
        b.terminal();
        return;
    }
    if str_of(v, "type") != Some("message") {
        b.error(malformed(
            Provider::Anthropic,
            "the body is not an Anthropic message (`type` is not \"message\")",
        ));
        b.terminal();
        return;
    }
    b.start(str_of(v, "id"), str_of(v, "model"));
    if let Some(blocks) = v.get("content").and_then(Value::as_array) {
        for (i, bl) in blocks.iter().enumerate() {
            block(b, (BLOCK, i as u64, 0), bl, true);
        }
    }
    if let Some(r) = str_of(v, "stop_reason") {
        b.finish_reason(stop_reason(r), Some(r));
    }
    if let Some(u) = v.get("usage") {
        usage(u, b.usage_mut());
    }
    b.terminal();
}

/// `content_block_delta`, the event most of a stream is made of, read without building a
/// JSON tree (its strings borrowed from the event text when they hold no escapes).
#[derive(serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(rename = "type", borrow)]
    ty: std::borrow::Cow<'a, str>,
    index: u64,
    #[serde(borrow)]
    delta: FastBody<'a>,
}

#[derive(serde::Deserialize)]
struct FastBody<'a> {
    #[serde(rename = "type", borrow)]
    ty: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<std::borrow::Cow<'a, str>>,
}

/// Reads `data` if it is a text, thinking or tool-input delta; false: read it as a tree.
pub(crate) fn fast(b: &mut Builder, data: &str) -> bool {
    if !data.contains("content_block_delta") {
        return false;
    }
    let Ok(d) = serde_json::from_str::<FastDelta<'_>>(data) else {
        return false;
    };
    if d.ty != "content_block_delta" {
        return false;
    }
    let k = (BLOCK, d.index, 0);
    match (
        &*d.delta.ty,
        d.delta.text,
        d.delta.partial_json,
        d.delta.thinking,
    ) {
        ("text_delta", Some(t), _, _) => b.text(k, &t),
        ("input_json_delta", _, Some(j), _) => b.tool_delta(k, &j),
        ("thinking_delta", _, _, Some(t)) => b.reasoning(k, &t),
        _ => return false,
    }
    true
}

/// The reader of one Anthropic response.
#[derive(Debug)]
pub(super) struct Messages;

impl crate::provider::Reader for Messages {
    fn fast(&mut self, b: &mut Builder, data: &str) -> bool {
        fast(b, data)
    }
    fn event(&mut self, b: &mut Builder, v: &Value) {
        event(b, v)
    }
    fn body(&mut self, b: &mut Builder, v: &Value) {
        body(b, v)
    }
}
