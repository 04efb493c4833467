//! OpenAI Chat Completions (and the servers that speak it).
//!
//! | piece | written as |
//! |---|---|
//! | text / image / PDF / audio | `text` (a plain string when alone), `image_url` (a data URL or a URL), `file.file_data`, `input_audio` (wav, mp3) |
//! | text document | fenced `text` |
//! | system | a `system` message first (a `developer` turn stays in place) |
//! | reasoning | not sent: Chat has no way to send it back |
//! | tool call / result | `tool_calls[]` of the assistant message / one `tool` message per result (no error flag) |
//! | tools | `{ type: function, function: { name, description?, parameters, strict? } }` |
//! | conversation | messages as the turns give them; an assistant turn is one message |
//! | caching | `prompt_cache_key` |
//! | stream | `chat.completion.chunk` SSE ending in `[DONE]`, see `stream` |
//! | endpoint | `{base}/chat/completions`, `authorization: Bearer` |

pub(crate) mod compat;
mod stream;

use super::{
    data_url, raw, Block, Dialect, Layout, Reader, ResultBlock, Source, Spec, TargetOptions, Tool,
    MISSING_RESULT,
};
use crate::body::{obj, s, write, Json, SlotMode};
use crate::capabilities::{routes, support, Capabilities, MB};
use crate::error::{ErrorKind, Result};
use crate::media::MediaClass;
use crate::models::Reasoning;
use crate::settings::{Cx, Place::*, Places, Simple, ToolChoice};
use crate::stream::partial::ObjectSource;
use crate::turn::{Reasoning as Thought, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

/// The OpenAI Chat dialect.
pub(crate) struct OpenAiChat;

/// The image types OpenAI takes.
pub(crate) const IMAGES: &[&str] = &["image/png", "image/jpeg", "image/webp", "image/gif"];

fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" => Some("wav"),
        "audio/mpeg" => Some("mp3"),
        _ => None,
    }
}

/// The OpenAI function-call arguments of a call: a string the model wrote is sent back
/// verbatim.
pub(crate) fn arguments(c: &ToolCall, input: &Value) -> String {
    match &c.input {
        Value::String(t) => t.clone(),
        _ => input.to_string(),
    }
}

/// An OpenAI tool result (Chat's `tool` message, Responses' `function_call_output` item):
/// one text as a string, more as content parts (`text_type`: the type of a text part).
pub(crate) fn result_content<'a>(
    content: &[&'a ResultBlock],
    missing: bool,
    text_type: &'static str,
    natives: bool,
) -> Json<'a> {
    let text_only = content.iter().all(|b| !matches!(b, ResultBlock::Native(_)));
    if missing {
        s(MISSING_RESULT)
    } else if content.len() == 1 && text_only {
        s(content[0].text())
    } else {
        Json::Arr(
            content
                .iter()
                .map(|b| match b {
                    ResultBlock::Native(n) if natives => Json::Raw(Cow::Borrowed(n.as_str())),
                    other => obj([("type", s(text_type)), ("text", s(other.text()))]),
                })
                .collect(),
        )
    }
}

/// The settings of both OpenAI APIs (`responses`: the Responses API's names; `places`: its
/// table).
pub(crate) fn settings<'a>(cx: &mut Cx<'a>, b: &mut Json<'a>, responses: bool, places: &Places) {
    let st = cx.s;
    let max = cx.max_tokens(false);
    cx.write(places, max, b, &mut Json::Obj(Vec::new()));
    if let Some(c) = cx.tool_choice() {
        let c = match c {
            ToolChoice::Auto => s("auto"),
            ToolChoice::None => s("none"),
            ToolChoice::Required => s("required"),
            ToolChoice::Tool(n) if responses => {
                obj([("type", s("function")), ("name", s(n.as_str()))])
            }
            ToolChoice::Tool(n) => obj([
                ("type", s("function")),
                ("function", obj([("name", s(n.as_str()))])),
            ]),
        };
        b.push("tool_choice", c);
    }
    let effort = match cx.reasoning_rule(Reasoning::Effort) {
        Reasoning::Effort => cx.effort(),
        _ => {
            cx.no_reasoning();
            None
        }
    };
    let include = st.reasoning.as_ref().and_then(|r| r.include) == Some(true);
    match effort {
        Some(e) if responses => {
            let mut r = obj([("effort", s(e))]);
            if include {
                r.push("summary", s("auto"));
            }
            b.push("reasoning", r);
            // A caller that does not store responses gets the reasoning back encrypted, to
            // send with the next turn.
            let stored = st
                .provider_options
                .get("openai")
                .and_then(|o| o.get("store"));
            if stored == Some(&Value::Bool(false)) {
                b.push("include", Json::Arr(vec![s("reasoning.encrypted_content")]));
            }
        }
        Some(e) => {
            b.push("reasoning_effort", s(e));
            if include {
                cx.drop("reasoning.include", "Chat Completions returns no reasoning text (the Responses API returns a summary)");
            }
        }
        None => {}
    }
    if let Some(o) = &st.output {
        let mut f = vec![(
            Cow::Borrowed("type"),
            s(if o.schema.is_some() {
                "json_schema"
            } else {
                "json_object"
            }),
        )];
        if let Some(schema) = &o.schema {
            let mut inner = vec![(Cow::Borrowed("name"), s(o.name.as_str()))];
            if let Some(d) = &o.description {
                inner.push((Cow::Borrowed("description"), s(d.as_str())));
            }
            inner.push((Cow::Borrowed("schema"), Json::Value(Cow::Borrowed(schema))));
            if let Some(strict) = o.strict {
                inner.push((Cow::Borrowed("strict"), Json::Bool(strict)));
            }
            if responses {
                f.extend(inner);
            } else {
                f.push((Cow::Borrowed("json_schema"), Json::Obj(inner)));
            }
        }
        if responses {
            b.push("text", obj([("format", Json::Obj(f))]));
        } else {
            b.push("response_format", Json::Obj(f));
        }
    }
    if !responses && st.get(Simple::Stream) == Some(&Value::Bool(true)) {
        b.push("stream_options", obj([("include_usage", Json::Bool(true))]));
    }
}

/// What the shared code needs to know of OpenAI Chat, as data.
pub(crate) static SPEC: Spec = Spec {
    name: "openai-chat",
    display: "OpenAI Chat",
    family: "openai",
    base_url: "https://api.openai.com/v1",
    stream_end: "a `finish_reason` and `[DONE]`",
    reserved: &["messages", "tools"],
    layout: Layout::Chat,
    max_id_len: Some(40),
    results_by_name: false,
    arguments_as_text: true,
    provider_data: false,
    marks_error_results: false,
    refuses_blank_text: false,
    breakpoints: false,
    errors: ERRORS,
    cache_key_field: Some("prompt_cache_key"),
    settings: Places {
        at: [
            Top("model"),
            Top("max_completion_tokens"),
            Top("temperature"),
            Top("top_p"),
            No,
            Top("stop"),
            Top("seed"),
            Top("presence_penalty"),
            Top("frequency_penalty"),
            Top("parallel_tool_calls"),
            Top("safety_identifier"),
            Top("metadata"),
            Top("stream"),
        ],
        max_stops: 4,
    },
};

impl Dialect for OpenAiChat {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            images: support(IMAGES, 20, true),
            pdf: support(&["application/pdf"], 32, false),
            audio: support(&["audio/wav", "audio/mpeg"], 20, false),
            video: support(&[], 0, false),
            max_images: 500,
            max_request_bytes: 50 * MB,
            inline_text_max_bytes: 256 * 1024,
            text_documents: false,
            tool_routes: routes(),
        }
    }

    fn native(&self, class: MediaClass, mime: &str, url: bool) -> bool {
        match class {
            MediaClass::Image => true,
            MediaClass::Pdf => !url,
            MediaClass::Audio => !url && audio_format(mime).is_some(),
            _ => false,
        }
    }

    fn block<'a>(&self, b: Block<'a>, _text_documents: bool) -> Json<'a> {
        match b {
            Block::Text(t) => obj([("type", s("text")), ("text", s(t))]),
            Block::TextDoc { fenced, .. } => obj([("type", s("text")), ("text", s(fenced))]),
            Block::Media {
                class,
                mime,
                source,
                name,
            } => match (class, source) {
                (MediaClass::Image, Source::Data(d)) => obj([
                    ("type", s("image_url")),
                    ("image_url", obj([("url", data_url(&mime, d))])),
                ]),
                (MediaClass::Image, Source::Url(u)) => obj([
                    ("type", s("image_url")),
                    ("image_url", obj([("url", s(u))])),
                ]),
                (MediaClass::Audio, Source::Data(d)) => obj([
                    ("type", s("input_audio")),
                    (
                        "input_audio",
                        obj([
                            ("data", raw(d)),
                            ("format", s(audio_format(&mime).unwrap_or("wav"))),
                        ]),
                    ),
                ]),
                (_, Source::Data(d)) => obj([
                    ("type", s("file")),
                    (
                        "file",
                        obj([
                            ("filename", s(name.unwrap_or_else(|| "document.pdf".into()))),
                            ("file_data", data_url(&mime, d)),
                        ]),
                    ),
                ]),
                // `native` admits no other URL for this target.
                (_, Source::Url(u)) => obj([("type", s("text")), ("text", s(u))]),
            },
        }
    }

    fn tool<'a>(&self, t: &'a Tool, _i: usize, _warn: &mut Option<String>) -> Json<'a> {
        let mut f = Json::Obj(Vec::new());
        f.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            f.push("description", s(d.as_str()));
        }
        f.push("parameters", Json::Value(Cow::Borrowed(&t.parameters)));
        if let Some(st) = t.strict {
            f.push("strict", Json::Bool(st));
        }
        obj([("type", s("function")), ("function", f)])
    }

    fn custom_tool<'a>(&self, t: &'a Tool, format: Option<&'a Value>) -> Option<Json<'a>> {
        let mut c = Json::Obj(Vec::new());
        c.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            c.push("description", s(d.as_str()));
        }
        if let Some(f) = format {
            // Chat nests a grammar's syntax and definition under `grammar`.
            let f = match f.get("type").and_then(Value::as_str) {
                Some("grammar") => {
                    let mut g = Json::Obj(Vec::new());
                    for k in ["syntax", "definition"] {
                        if let Some(v) = f.get(k) {
                            g.push(k, Json::Value(Cow::Borrowed(v)));
                        }
                    }
                    obj([("type", s("grammar")), ("grammar", g)])
                }
                _ => Json::Value(Cow::Borrowed(f)),
            };
            c.push("format", f);
        }
        Some(obj([("type", s("custom")), ("custom", c)]))
    }

    fn settings<'a>(&self, cx: &mut Cx<'a>, b: &mut Json<'a>) {
        settings(cx, b, false, &SPEC.settings);
    }

    fn reasoning<'a>(&self, _r: &'a Thought, _own: bool) -> std::result::Result<Json<'a>, String> {
        Err("OpenAI Chat has no way to send reasoning back".into())
    }

    fn call<'a>(
        &self,
        c: &'a ToolCall,
        id: Cow<'a, str>,
        input: &'a Value,
        _own: bool,
    ) -> Json<'a> {
        if c.kind.as_deref() == Some("custom") {
            return obj([
                ("id", s(id)),
                ("type", s("custom")),
                (
                    "custom",
                    obj([
                        ("name", s(c.name.as_str())),
                        ("input", s(arguments(c, input))),
                    ]),
                ),
            ]);
        }
        obj([
            ("id", s(id)),
            ("type", s("function")),
            (
                "function",
                obj([
                    ("name", s(c.name.as_str())),
                    ("arguments", s(arguments(c, input))),
                ]),
            ),
        ])
    }

    fn result(
        &self,
        call_id: &str,
        _name: &str,
        content: &[&ResultBlock],
        _is_error: bool,
        missing: bool,
    ) -> Result<String> {
        let id = super::ids::provider_id(crate::provider::Provider::OpenAiChat, call_id);
        let c = result_content(content, missing, "text", false);
        write(
            &obj([("role", s("tool")), ("tool_call_id", s(id)), ("content", c)]),
            SlotMode::Mark,
        )
    }

    fn head<'a>(
        &self,
        head: &mut Json<'a>,
        _system: &[&'a str],
        _caller: Option<&'a str>,
        tools: Option<Json<'a>>,
        marker: Json<'a>,
        _cache: Option<String>,
        _breakpoints: &mut Vec<String>,
    ) {
        head.push("messages", marker);
        if let Some(t) = tools {
            head.push("tools", t);
        }
    }

    fn object_source(&self, request: &str) -> Option<ObjectSource> {
        request
            .contains("\"response_format\":{\"type\":\"json_")
            .then_some(ObjectSource::Text)
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(stream::Completions)
    }

    fn endpoint(
        &self,
        base: &str,
        o: &TargetOptions,
        headers: &mut Vec<(String, String)>,
    ) -> Result<String> {
        bearer(o, headers);
        Ok(format!("{base}/chat/completions"))
    }
}

/// OpenAI's key header.
pub(crate) fn bearer(o: &TargetOptions, headers: &mut Vec<(String, String)>) {
    if let Some(k) = &o.api_key {
        headers.push(("authorization".into(), format!("Bearer {k}")));
    }
}

/// OpenAI's error `code`s and `type`s (Chat and Responses), first match wins: a code
/// names the cause more precisely than the type it comes with.
pub(crate) static ERRORS: &[(&str, ErrorKind)] = &[
    ("insufficient_quota", ErrorKind::ProviderRejected),
    ("rate_limit_exceeded", ErrorKind::RateLimited),
    ("tokens", ErrorKind::RateLimited),
    ("requests", ErrorKind::RateLimited),
    ("invalid_api_key", ErrorKind::AuthenticationFailed),
    ("authentication_error", ErrorKind::AuthenticationFailed),
    ("permission_error", ErrorKind::AuthenticationFailed),
    ("server_error", ErrorKind::ProviderError),
    ("api_error", ErrorKind::ProviderError),
    ("server_is_overloaded", ErrorKind::Overloaded),
    ("slow_down", ErrorKind::Overloaded),
    ("invalid_request_error", ErrorKind::ProviderRejected),
];
