//! Gemini `generateContent` / `streamGenerateContent`: every chunk is a
//! `GenerateContentResponse` whose first candidate carries the next parts. Consecutive text
//! parts make one text part, consecutive thoughts one reasoning part; a function call comes
//! whole, or (Gemini 3, `streamFunctionCallArguments`) spread over chunks: its name first,
//! then `partialArgs` (a JSON path and a value each; a string continued while its
//! `willContinue` says so) until a chunk whose `willContinue` is not true, or until another
//! part or the finish reason comes. Gemini gives calls no id (or an optional one): the id is the response id and the
//! call's number (`<responseId>-call-<n>`), or, without a response id, derived from the
//! call's name, arguments and number (`call-<8 hex of SHA-256>-<n>`).

use crate::json_text::JsonText;
use crate::provider::Provider;
use crate::provider::{errors, malformed};
use crate::stream::builder::{cite, Builder, Key};
use crate::stream::{num, str_of, FinishReason, Usage};
use serde_json::Value;
use sha2::{Digest, Sha256};

const TEXT: u8 = 0;
const THOUGHT: u8 = 1;
const CALL: u8 = 2;
const OTHER: u8 = 3;

/// What the dialect remembers between chunks.
#[derive(Debug, Default)]
pub(super) struct State {
    /// The kind of the last part and the number of the run of parts it belongs to.
    last: Option<u8>,
    seg: u64,
    calls: u64,
    response_id: Option<String>,
    /// A function call whose arguments are still streaming.
    open: Option<Open>,
    /// The grounding supports and citations read so far (a later chunk repeats them).
    cited: (usize, usize),
    /// The citations made so far (at most [`MAX_CITATIONS`]).
    citations: usize,
}

/// The most citations one response makes: a support names its sources by index, so a
/// short list of indices (the same one repeated) would otherwise copy a source over and
/// over.
const MAX_CITATIONS: usize = 1024;

/// A function call being streamed.
#[derive(Debug)]
struct Open {
    key: Key,
    args: Value,
    /// The path of a string the next partial argument continues.
    more: Option<String>,
    signature: Option<String>,
}

/// The deepest path a partial argument may name (serde_json's own nesting limit): a deeper
/// one would build a value too deep to drop or write safely.
const MAX_DEPTH: usize = 128;

/// Sets `v` at the JSON path `path` (`$.a.b[0].c`, `$['a b']`) in `root`, making objects
/// and arrays on the way; `append`: the string there grows by `v`'s. None: not a path this
/// reader takes (an index far past the array's end, or deeper than [`MAX_DEPTH`]).
fn set_path(root: &mut Value, path: &str, v: Value, append: bool) -> Option<()> {
    let mut rest = path.strip_prefix('$')?;
    let mut cur = root;
    let mut depth = 0;
    while !rest.is_empty() {
        depth += 1;
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            let key = r.get(..end)?;
            rest = r.get(end + 2..)?;
            cur = member(cur, key)?;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let n: usize = r.get(..end)?.parse().ok()?;
            rest = r.get(end + 1..)?;
            if !cur.is_array() {
                *cur = Value::Array(Vec::new());
            }
            let a = cur.as_array_mut()?;
            if n > a.len() + 64 {
                return None;
            }
            while a.len() <= n {
                a.push(Value::Null);
            }
            cur = a.get_mut(n)?;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = r.get(..end)?;
            rest = r.get(end..)?;
            cur = member(cur, key)?;
        } else {
            return None;
        }
    }
    match (append, &mut *cur, v) {
        (true, Value::String(s), Value::String(t)) => s.push_str(&t),
        (_, slot, v) => *slot = v,
    }
    Some(())
}

/// Member `key` of `v` (made an object if it is not one), null when new.
fn member<'v>(v: &'v mut Value, key: &str) -> Option<&'v mut Value> {
    if !v.is_object() {
        *v = Value::Object(serde_json::Map::new());
    }
    let o = v.as_object_mut()?;
    if !o.contains_key(key) {
        o.insert(key.to_owned(), Value::Null);
    }
    o.get_mut(key)
}

/// The value of one partial argument.
fn partial_value(pa: &Value) -> Option<Value> {
    if let Some(s) = pa.get("stringValue") {
        return Some(s.clone());
    }
    if let Some(n) = pa.get("numberValue") {
        return Some(n.clone());
    }
    if let Some(b) = pa.get("boolValue") {
        return Some(b.clone());
    }
    pa.get("nullValue").map(|_| Value::Null)
}

/// Ends the call whose arguments were streaming: its arguments as one delta, then its end.
fn close(st: &mut State, b: &mut Builder) {
    if let Some(o) = st.open.take() {
        b.tool_input(o.key, o.args, o.signature.as_deref());
        b.end(o.key);
    }
}

/// A `functionCall` that streams its arguments (or continues one that does).
fn streamed_call(st: &mut State, b: &mut Builder, fc: &Value, sig: Option<&str>) {
    let name = str_of(fc, "name").unwrap_or("");
    if st.open.is_none() {
        if name.is_empty() {
            b.error(malformed(
                Provider::Gemini,
                "a function call's continuation without the call it continues",
            ));
            return;
        }
        let id = match str_of(fc, "id") {
            Some(id) if !id.is_empty() => {
                st.calls += 1;
                id.to_owned()
            }
            _ => st.call_id(name, &Value::Null),
        };
        let key = st.key(CALL);
        b.tool_start(key, &id, name);
        st.open = Some(Open {
            key,
            args: Value::Object(serde_json::Map::new()),
            more: None,
            signature: None,
        });
    }
    let Some(o) = st.open.as_mut() else { return };
    if let Some(s) = sig {
        o.signature = Some(s.to_owned());
    }
    let mut bad = None;
    for pa in fc
        .get("partialArgs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = str_of(pa, "jsonPath").unwrap_or("");
        let Some(v) = partial_value(pa) else { continue };
        let append = o.more.as_deref() == Some(path);
        if set_path(&mut o.args, path, v, append).is_none() {
            bad = Some(path.to_owned());
        }
        o.more = (pa.get("willContinue").and_then(Value::as_bool) == Some(true))
            .then(|| path.to_owned());
    }
    if let Some(path) = bad {
        b.error(malformed(
            Provider::Gemini,
            &format!("a partial function argument at `{path}`, not a JSON path this reader takes"),
        ));
    }
    if fc.get("willContinue").and_then(Value::as_bool) != Some(true) {
        close(st, b);
    }
}

impl State {
    fn key(&mut self, kind: u8) -> Key {
        if self.last != Some(kind) || kind == CALL || kind == OTHER {
            self.seg += 1;
            self.last = Some(kind);
        }
        (kind, self.seg, 0)
    }

    fn call_id(&mut self, name: &str, args: &Value) -> String {
        let n = self.calls;
        self.calls += 1;
        match &self.response_id {
            Some(r) => format!("{r}-call-{n}"),
            None => {
                let mut h = Sha256::new();
                h.update(name.as_bytes());
                h.update([0]);
                h.update(args.json_text().as_bytes());
                h.update(n.to_le_bytes());
                let d = h.finalize();
                let hex: String = d.iter().take(4).map(|b| format!("{b:02x}")).collect();
                format!("call-{hex}-{n}")
            }
        }
    }
}

fn finish(raw: &str) -> FinishReason {
    match raw {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY"
        | "LANGUAGE" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

fn usage(u: &Value) -> Usage {
    let thoughts = num(u, "thoughtsTokenCount");
    Usage {
        input_tokens: num(u, "promptTokenCount").unwrap_or(0)
            + num(u, "toolUsePromptTokenCount").unwrap_or(0),
        output_tokens: num(u, "candidatesTokenCount").unwrap_or(0) + thoughts.unwrap_or(0),
        cached_tokens: num(u, "cachedContentTokenCount"),
        cache_write_tokens: None,
        reasoning_tokens: thoughts,
    }
}

fn part(st: &mut State, b: &mut Builder, p: &Value) {
    let sig = str_of(p, "thoughtSignature").filter(|s| !s.is_empty());
    if let Some(fc) = p.get("functionCall") {
        let continues = st.open.is_some() && str_of(fc, "name").is_none_or(str::is_empty);
        if !continues {
            close(st, b);
        }
        if continues
            || fc.get("partialArgs").is_some()
            || fc.get("willContinue").and_then(Value::as_bool) == Some(true)
        {
            streamed_call(st, b, fc, sig);
            return;
        }
        let name = str_of(fc, "name").unwrap_or("");
        let args = fc
            .get("args")
            .cloned()
            .unwrap_or(Value::Object(serde_json::Map::new()));
        let id = match str_of(fc, "id") {
            Some(id) if !id.is_empty() => {
                st.calls += 1;
                id.to_owned()
            }
            _ => st.call_id(name, &args),
        };
        let k = st.key(CALL);
        b.tool_whole(k, &id, name, args, sig);
        return;
    }
    close(st, b);
    if let Some(t) = str_of(p, "text") {
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            let k = st.key(THOUGHT);
            b.reasoning(k, t);
            if sig.is_some() {
                b.reasoning_meta(k, sig, None, None);
            }
            return;
        }
        if let Some(s) = sig {
            // A signature on a text part travels back in a thought part of its own.
            let k = st.key(THOUGHT);
            b.reasoning_meta(k, Some(s), None, None);
            b.end(k);
        }
        if !t.is_empty() {
            let k = st.key(TEXT);
            b.text(k, t);
        }
        return;
    }
    let k = st.key(OTHER);
    b.other(k, p.clone());
}

/// One `GenerateContentResponse` (a stream chunk, or the whole body).
pub(crate) fn chunk(st: &mut State, b: &mut Builder, v: &Value) {
    if let Some(e) = errors::from_payload(Provider::Gemini, v, None) {
        b.error(e);
        return;
    }
    if st.response_id.is_none() {
        st.response_id = str_of(v, "responseId").map(str::to_owned);
    }
    b.start(str_of(v, "responseId"), str_of(v, "modelVersion"));
    if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
        b.usage(usage(u));
    }
    let cand = v
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let Some(c) = cand else {
        if let Some(reason) = v
            .get("promptFeedback")
            .and_then(|f| str_of(f, "blockReason"))
        {
            b.meta(
                "prompt_feedback",
                v.get("promptFeedback").cloned().unwrap_or(Value::Null),
            );
            b.finish_reason(FinishReason::ContentFilter, Some(reason));
            b.terminal();
        }
        return;
    };
    if let Some(parts) = c
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
    {
        for p in parts {
            part(st, b, p);
        }
    }
    grounding(st, b, c);
    if let Some(r) = str_of(c, "finishReason") {
        close(st, b);
        let reason = match finish(r) {
            FinishReason::Stop if b.has_tool_calls() => FinishReason::ToolCalls,
            f => f,
        };
        b.finish_reason(reason, Some(r));
        b.terminal();
    }
}

/// Grounding (`groundingMetadata`: each support's span and the search results it rests on)
/// and recitation (`citationMetadata`) as citations of the text, the spans (bytes of the
/// whole text) in characters of the part they fall in.
fn grounding(st: &mut State, b: &mut Builder, c: &Value) {
    let list = |v: Option<&Value>, k: &str| {
        v.and_then(|m| m.get(k))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let span = |seg: &Value| {
        (
            num(seg, "startIndex").unwrap_or(0),
            num(seg, "endIndex").unwrap_or(0),
        )
    };
    let g = c.get("groundingMetadata");
    let chunks = list(g, "groundingChunks");
    let supports = list(g, "groundingSupports");
    for s in supports.iter().skip(st.cited.0) {
        let (start, end) = span(s.get("segment").unwrap_or(&Value::Null));
        for i in s
            .get("groundingChunkIndices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
        {
            if st.citations >= MAX_CITATIONS {
                break;
            }
            let Some(src) = usize::try_from(i)
                .ok()
                .and_then(|i| chunks.get(i))
                .and_then(|ch| ch.as_object())
                .and_then(|o| o.values().find(|v| v.is_object()))
            else {
                continue;
            };
            let cite = cite("gemini", "url", src, &[("uri", "url"), ("title", "title")]);
            b.citation_span(start, end, cite);
            st.citations += 1;
        }
    }
    st.cited.0 = st.cited.0.max(supports.len());
    let recited = list(c.get("citationMetadata"), "citations");
    for r in recited.iter().skip(st.cited.1) {
        if st.citations >= MAX_CITATIONS {
            break;
        }
        st.citations += 1;
        let (start, end) = span(r);
        let cite = cite("gemini", "url", r, &[("uri", "url"), ("title", "title")]);
        b.citation_span(start, end, cite);
    }
    st.cited.1 = st.cited.1.max(recited.len());
}

/// A whole body: one response, or the array `streamGenerateContent` answers without SSE.
pub(crate) fn body(st: &mut State, b: &mut Builder, v: &Value) {
    match v {
        Value::Array(items) => {
            for it in items {
                chunk(st, b, it);
            }
        }
        Value::Object(o)
            if o.contains_key("candidates")
                || o.contains_key("error")
                || o.contains_key("promptFeedback") =>
        {
            chunk(st, b, v)
        }
        _ => b.error(malformed(
            Provider::Gemini,
            "the body is not a GenerateContentResponse (no `candidates`)",
        )),
    }
    if !b.has_finish() && b.first_error().is_some() {
        b.finish_reason(FinishReason::Error, None);
    }
    b.terminal();
}

/// The reader of one Gemini response.
#[derive(Debug, Default)]
pub(super) struct Chunks(State);

impl crate::provider::Reader for Chunks {
    fn event(&mut self, b: &mut Builder, v: &Value) {
        chunk(&mut self.0, b, v)
    }
    fn body(&mut self, b: &mut Builder, v: &Value) {
        body(&mut self.0, b, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn grounding_citations_are_bounded() {
        let mut st = State::default();
        let mut b = Builder::new("gemini", "gemini");
        b.text((TEXT, 0, 0), "a claim");
        // An index past the sources is no citation.
        let c = json!({ "groundingMetadata": {
            "groundingChunks": [{ "web": { "uri": "https://a.example", "title": "a" } }],
            "groundingSupports": [{ "segment": { "endIndex": 7 }, "groundingChunkIndices": [0, 7] }]
        } });
        grounding(&mut st, &mut b, &c);
        assert_eq!(st.citations, 1);
        // Many supports: no more than MAX_CITATIONS, however many the input names.
        let many: Vec<Value> = (0..3000)
            .map(|_| json!({ "segment": { "endIndex": 7 }, "groundingChunkIndices": [0] }))
            .collect();
        let c = json!({ "groundingMetadata": {
            "groundingChunks": [{ "web": { "uri": "https://a.example" } }],
            "groundingSupports": many
        } });
        let mut st = State::default();
        grounding(&mut st, &mut b, &c);
        assert_eq!(st.citations, MAX_CITATIONS);
    }

    #[test]
    fn partial_argument_paths() {
        let mut root = json!({});
        assert!(set_path(&mut root, "$.a.b[1]", json!("x"), false).is_some());
        assert!(set_path(&mut root, "$.a.b[1]", json!("y"), true).is_some());
        assert!(set_path(&mut root, "$['c d']", json!(3), false).is_some());
        assert_eq!(root, json!({ "a": { "b": [null, "xy"] }, "c d": 3 }));
        // Not paths, an index far past the end, a path deeper than any JSON text may nest.
        for bad in ["a.b", "$.x[", "$[9999]", "$.x[-1]", "$['open"] {
            assert!(
                set_path(&mut json!({}), bad, json!(1), false).is_none(),
                "{bad}"
            );
        }
        let deep = format!("${}", ".k".repeat(MAX_DEPTH + 1));
        assert!(set_path(&mut json!({}), &deep, json!(1), false).is_none());
        let ok = format!("${}", ".k".repeat(MAX_DEPTH));
        assert!(set_path(&mut json!({}), &ok, json!(1), false).is_some());
    }
}
