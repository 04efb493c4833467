//! Gemini `generateContent`.
//!
//! | piece | written as |
//! |---|---|
//! | text / media | `{ text }`, `inlineData` (base64) / `fileData` (a URL; a YouTube URL without a type) |
//! | text document | fenced `{ text }` |
//! | system | top-level `systemInstruction` (later instructions as user text) |
//! | reasoning | a `thought` part with its `thoughtSignature` |
//! | tool call / result | `functionCall` (with its `thoughtSignature`) / `functionResponse` by name, first in the next user turn |
//! | tools | `functionDeclarations`, the schema cut to Gemini's OpenAPI subset (see `schema`) |
//! | conversation | alternating `user` / `model` turns of parts; call ids are not sent |
//! | stream | chunks of `GenerateContentResponse` (SSE or a JSON array), see `stream` |
//! | endpoint | `{base}/models/{model}:streamGenerateContent?alt=sse` or `:generateContent`, `x-goog-api-key` |

pub mod schema;
mod stream;

use super::{
    foreign, raw, Block, BlockLayout, Dialect, Layout, Reader, ResultBlock, Source, Spec,
    TargetOptions, Tool, MISSING_RESULT,
};
use crate::body::{obj, s, write, Json, SlotMode};
use crate::capabilities::{routes, support, Capabilities, MB};
use crate::error::{Error, ErrorKind, Result};
use crate::media::MediaClass;
use crate::models::Reasoning;
use crate::settings::{num, Cx, Place::*, Places, Simple, ToolChoice};
use crate::stream::partial::ObjectSource;
use crate::turn::{Reasoning as Thought, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

/// The Gemini dialect.
pub(crate) struct Gemini;

static LAYOUT: BlockLayout = BlockLayout {
    model: "model",
    content: "parts",
    user_open: "{\"role\":\"user\",\"parts\":[",
    model_open: "{\"role\":\"model\",\"parts\":[",
    text_open: "{\"text\":",
    trims_final_text: false,
};

/// What the shared code needs to know of Gemini, as data.
pub(crate) static SPEC: Spec = Spec {
    name: "gemini",
    display: "Gemini",
    family: "gemini",
    base_url: "https://generativelanguage.googleapis.com/v1beta",
    stream_end: "a `finishReason`",
    reserved: &[
        "systemInstruction",
        "system_instruction",
        "tools",
        "contents",
    ],
    layout: Layout::Blocks(&LAYOUT),
    max_id_len: None,
    results_by_name: true,
    arguments_as_text: false,
    provider_data: true,
    marks_error_results: true,
    refuses_blank_text: false,
    breakpoints: false,
    errors: &[
        ("RESOURCE_EXHAUSTED", ErrorKind::RateLimited),
        ("UNAVAILABLE", ErrorKind::Overloaded),
        ("INTERNAL", ErrorKind::ProviderError),
        ("DEADLINE_EXCEEDED", ErrorKind::ProviderError),
        ("UNKNOWN", ErrorKind::ProviderError),
        ("UNAUTHENTICATED", ErrorKind::AuthenticationFailed),
        ("PERMISSION_DENIED", ErrorKind::AuthenticationFailed),
        ("INVALID_ARGUMENT", ErrorKind::ProviderRejected),
        ("NOT_FOUND", ErrorKind::ProviderRejected),
        ("FAILED_PRECONDITION", ErrorKind::ProviderRejected),
        ("OUT_OF_RANGE", ErrorKind::ProviderRejected),
        ("ALREADY_EXISTS", ErrorKind::ProviderRejected),
        ("ABORTED", ErrorKind::ProviderRejected),
        ("CANCELLED", ErrorKind::ProviderRejected),
    ],
    cache_key_field: None,
    settings: Places {
        at: [
            Own,
            Config("maxOutputTokens"),
            Config("temperature"),
            Config("topP"),
            Config("topK"),
            Config("stopSequences"),
            Config("seed"),
            Config("presencePenalty"),
            Config("frequencyPenalty"),
            No,
            No,
            No,
            Own,
        ],
        max_stops: 5,
    },
};

impl Dialect for Gemini {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            images: support(
                &[
                    "image/png",
                    "image/jpeg",
                    "image/webp",
                    "image/heic",
                    "image/heif",
                ],
                100,
                true,
            ),
            pdf: support(&["application/pdf"], 50, true),
            audio: support(
                &[
                    "audio/wav",
                    "audio/mpeg",
                    "audio/aiff",
                    "audio/aac",
                    "audio/ogg",
                    "audio/flac",
                ],
                100,
                true,
            ),
            video: support(
                &[
                    "video/mp4",
                    "video/mpeg",
                    "video/quicktime",
                    "video/x-msvideo",
                    "video/x-flv",
                    "video/webm",
                    "video/x-ms-wmv",
                    "video/3gpp",
                ],
                100,
                true,
            ),
            max_images: 3000,
            max_request_bytes: 100 * MB,
            inline_text_max_bytes: 256 * 1024,
            text_documents: false,
            tool_routes: routes(),
        }
    }

    fn native(&self, class: MediaClass, _mime: &str, _url: bool) -> bool {
        matches!(
            class,
            MediaClass::Image | MediaClass::Pdf | MediaClass::Audio | MediaClass::Video
        )
    }

    fn block<'a>(&self, b: Block<'a>, _text_documents: bool) -> Json<'a> {
        match b {
            Block::Text(t) => obj([("text", s(t))]),
            Block::TextDoc { fenced, .. } => obj([("text", s(fenced))]),
            Block::Media { mime, source, .. } => match source {
                Source::Data(d) => {
                    obj([("inlineData", obj([("mimeType", s(mime)), ("data", raw(d))]))])
                }
                // A YouTube URL goes without a type.
                Source::Url(u) if mime.is_empty() => obj([("fileData", obj([("fileUri", s(u))]))]),
                Source::Url(u) => {
                    obj([("fileData", obj([("mimeType", s(mime)), ("fileUri", s(u))]))])
                }
            },
        }
    }

    fn tool<'a>(&self, t: &'a Tool, i: usize, warn: &mut Option<String>) -> Json<'a> {
        let mut o = Json::Obj(Vec::new());
        o.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            o.push("description", s(d.as_str()));
        }
        let mut dropped = Vec::new();
        let conv = schema::to_openapi(
            &t.parameters,
            &format!("tools[{i}].parameters"),
            &mut dropped,
        );
        if !dropped.is_empty() {
            *warn = Some(format!(
                "Gemini reads an OpenAPI subset of JSON Schema; left out: {}",
                dropped.join(", ")
            ));
        }
        if !schema::is_empty_object(&conv) {
            o.push("parameters", Json::Value(Cow::Owned(conv)));
        }
        o
    }

    fn tools<'a>(&self, list: Vec<Json<'a>>, own: Vec<Json<'a>>) -> Json<'a> {
        let mut all = Vec::with_capacity(own.len() + 1);
        if !list.is_empty() {
            all.push(obj([("functionDeclarations", Json::Arr(list))]));
        }
        all.extend(own);
        Json::Arr(all)
    }

    fn settings<'a>(&self, cx: &mut Cx<'a>, b: &mut Json<'a>) {
        let st = cx.s;
        for (key, what) in [
            (Simple::Model, "the model"),
            (
                Simple::Stream,
                "streaming (`:streamGenerateContent?alt=sse`)",
            ),
        ] {
            if st.get(key).is_some_and(|v| v != &Value::Bool(false)) {
                cx.note("SettingInUrl", key.name(), format!("Gemini takes {what} in the URL: the adapter (or `requestTarget`) puts it there"));
            }
        }
        let mut gc = Json::Obj(Vec::new());
        let max = cx.max_tokens(false);
        cx.write(&SPEC.settings, max, b, &mut gc);
        if let Some(o) = &st.output {
            gc.push("responseMimeType", s("application/json"));
            if let Some(schema) = &o.schema {
                let mut dropped = Vec::new();
                let conv = schema::to_openapi(schema, "output.schema", &mut dropped);
                if !dropped.is_empty() {
                    cx.note(
                        "SettingTranslated",
                        "output.schema",
                        format!(
                            "Gemini reads an OpenAPI subset of JSON Schema; left out: {}",
                            dropped.join(", ")
                        ),
                    );
                }
                gc.push("responseSchema", Json::Value(Cow::Owned(conv)));
            }
        }
        let r = st.reasoning.as_ref();
        let mut thinking = Json::Obj(Vec::new());
        match cx.reasoning_rule(Reasoning::Level) {
            Reasoning::Budget { min, max, off } => {
                if let Some(n) = cx.budget(min, max, off) {
                    thinking.push("thinkingBudget", num(n));
                }
            }
            Reasoning::Level => {
                let level = match (r.and_then(|r| r.effort), r.and_then(|r| r.budget_tokens)) {
                    (Some("none"), _) => {
                        cx.drop("reasoning.effort", "this model always reasons");
                        None
                    }
                    (Some(e @ ("minimal" | "low")), _) => Some((e, "LOW")),
                    (Some(e), _) => Some((e, "HIGH")),
                    (None, Some(n)) if n < 8192 => Some(("budgetTokens", "LOW")),
                    (None, Some(_)) => Some(("budgetTokens", "HIGH")),
                    (None, None) => None,
                };
                if let Some((from, level)) = level {
                    if !matches!(from, "low" | "high") {
                        cx.note("SettingTranslated", "reasoning", format!("this model takes a thinking level (low or high): `{from}` sent as {level}"));
                    }
                    thinking.push("thinkingLevel", s(level));
                }
            }
            _ => cx.no_reasoning(),
        }
        if let Some(i) = r.and_then(|r| r.include) {
            thinking.push("includeThoughts", Json::Bool(i));
        }
        if matches!(&thinking, Json::Obj(p) if !p.is_empty()) {
            gc.push("thinkingConfig", thinking);
        }
        if let Some(c) = cx.tool_choice() {
            let mode = match c {
                ToolChoice::Auto => "AUTO",
                ToolChoice::None => "NONE",
                ToolChoice::Required | ToolChoice::Tool(_) => "ANY",
            };
            let mut f = obj([("mode", s(mode))]);
            if let ToolChoice::Tool(n) = c {
                f.push("allowedFunctionNames", Json::Arr(vec![s(n.as_str())]));
            }
            b.push("toolConfig", obj([("functionCallingConfig", f)]));
        }
        if matches!(&gc, Json::Obj(p) if !p.is_empty()) {
            b.push("generationConfig", gc);
        }
    }

    fn reasoning<'a>(&self, r: &'a Thought, own: bool) -> std::result::Result<Json<'a>, String> {
        if !own {
            return Err(foreign(r, SPEC.name));
        }
        match &r.signature {
            Some(sig) => Ok(obj([
                ("text", s(r.text.as_str())),
                ("thought", Json::Bool(true)),
                ("thoughtSignature", s(sig.as_str())),
            ])),
            None => Err("Gemini thoughts are sent back only with their signature".into()),
        }
    }

    fn call<'a>(
        &self,
        c: &'a ToolCall,
        _id: Cow<'a, str>,
        input: &'a Value,
        own: bool,
    ) -> Json<'a> {
        let mut o = obj([(
            "functionCall",
            obj([
                ("name", s(c.name.as_str())),
                ("args", Json::Value(Cow::Borrowed(input))),
            ]),
        )]);
        if let (Some(sig), true) = (&c.signature, own) {
            o.push("thoughtSignature", s(sig.as_str()));
        }
        o
    }

    fn result(
        &self,
        _call_id: &str,
        name: &str,
        content: &[&ResultBlock],
        is_error: bool,
        missing: bool,
    ) -> Result<String> {
        let value = match content {
            _ if missing => Json::Str(Cow::Borrowed(MISSING_RESULT)),
            [ResultBlock::Json(j)] => Json::Raw(Cow::Borrowed(j.as_str())),
            many => {
                let mut t = String::new();
                for b in many {
                    if !t.is_empty() {
                        t.push_str("\n\n");
                    }
                    t.push_str(b.text());
                }
                Json::Str(Cow::Owned(t))
            }
        };
        let key = if is_error { "error" } else { "output" };
        let o = obj([(
            "functionResponse",
            obj([("name", s(name)), ("response", obj([(key, value)]))]),
        )]);
        write(&o, SlotMode::Mark)
    }

    fn head<'a>(
        &self,
        head: &mut Json<'a>,
        system: &[&'a str],
        _caller: Option<&'a str>,
        tools: Option<Json<'a>>,
        marker: Json<'a>,
        _cache: Option<String>,
        _breakpoints: &mut Vec<String>,
    ) {
        if !system.is_empty() {
            let parts = system.iter().map(|t| obj([("text", s(*t))])).collect();
            head.push("systemInstruction", obj([("parts", Json::Arr(parts))]));
        }
        head.push("contents", marker);
        if let Some(t) = tools {
            head.push("tools", t);
        }
    }

    fn object_source(&self, request: &str) -> Option<ObjectSource> {
        request
            .contains("\"responseMimeType\":\"application/json\"")
            .then_some(ObjectSource::Text)
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(stream::Chunks::default())
    }

    fn endpoint(
        &self,
        base: &str,
        o: &TargetOptions,
        headers: &mut Vec<(String, String)>,
    ) -> Result<String> {
        let Some(model) = o.model.as_deref().map(|m| m.trim_start_matches("models/")) else {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "Gemini needs the model in the URL: pass `model`",
            )
            .at("model"));
        };
        if model.is_empty()
            || !model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("`{model}` is not a Gemini model name"),
            )
            .at("model"));
        }
        if let Some(k) = &o.api_key {
            headers.push(("x-goog-api-key".into(), k.clone()));
        }
        Ok(if o.stream {
            format!("{base}/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/models/{model}:generateContent")
        })
    }

    /// Gemini names the error by its `status` and gives the HTTP status as `code`.
    fn error_fields(&self, err: &Value) -> (Option<String>, Option<String>, Option<u16>) {
        let code = err.get("code").and_then(Value::as_u64);
        (
            err.get("status").and_then(Value::as_str).map(str::to_owned),
            code.map(|c| c.to_string()),
            code.and_then(|c| u16::try_from(c).ok()),
        )
    }

    /// `RetryInfo.retryDelay` (`"30s"`, `"1.5s"`).
    fn retry_after_ms(&self, err: &Value) -> Option<u64> {
        err.get("details")?.as_array()?.iter().find_map(|d| {
            let t = d.get("@type").and_then(Value::as_str)?;
            if !t.ends_with("RetryInfo") {
                return None;
            }
            let s = d
                .get("retryDelay")
                .and_then(Value::as_str)?
                .strip_suffix('s')?;
            let secs: f64 = s.trim().parse().ok()?;
            (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64)
        })
    }
}
