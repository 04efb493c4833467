//! Anthropic Messages.
//!
//! | piece | written as |
//! |---|---|
//! | text / image / PDF | `text`, `image` (base64 or URL), `document` (PDF: base64 or URL, `title`) |
//! | text document | `document` with a `text` source and its `title` |
//! | system | top-level `system` (a string, or text blocks when several or cached) |
//! | reasoning | `thinking` (with its signature) / `redacted_thinking` |
//! | tool call / result | `tool_use` / `tool_result` first in the next user message (`is_error`) |
//! | tools | `{ name, description?, input_schema, strict? }` |
//! | conversation | alternating `user` / `assistant` messages of blocks; the final assistant text trimmed |
//! | caching | `cache_control` breakpoints on the tools or system, and the last two user messages |
//! | stream | SSE (`message_start` … `message_stop`), see `stream` |
//! | endpoint | `{base}/v1/messages`, `anthropic-version`, `x-api-key` |

mod stream;

use super::{
    foreign, raw, Block, BlockLayout, Dialect, Layout, Reader, ResultBlock, Source, Spec,
    TargetOptions, Tool, MISSING_RESULT,
};
use crate::body::{obj, s, write, Json, SlotMode};
use crate::capabilities::{routes, support, Capabilities, MB};
use crate::error::{ErrorKind, Result};
use crate::media::MediaClass;
use crate::models::{Model, Reasoning};
use crate::settings::{num, Cx, Place::*, Places, Simple, ToolChoice};
use crate::stream::partial::ObjectSource;
use crate::turn::{Reasoning as Thought, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

/// The Anthropic API version header this library's bodies follow.
pub const VERSION: &str = "2023-06-01";

/// The Anthropic dialect.
pub(crate) struct Anthropic;

static LAYOUT: BlockLayout = BlockLayout {
    model: "assistant",
    content: "content",
    user_open: "{\"role\":\"user\",\"content\":[",
    model_open: "{\"role\":\"assistant\",\"content\":[",
    text_open: "{\"type\":\"text\",\"text\":",
    trims_final_text: true,
};

/// What the shared code needs to know of Anthropic, as data.
pub(crate) static SPEC: Spec = Spec {
    name: "anthropic",
    display: "Anthropic",
    family: "anthropic",
    base_url: "https://api.anthropic.com",
    stream_end: "`message_stop`",
    reserved: &["system", "tools", "messages"],
    layout: Layout::Blocks(&LAYOUT),
    max_id_len: Some(64),
    results_by_name: false,
    arguments_as_text: false,
    provider_data: true,
    marks_error_results: true,
    refuses_blank_text: true,
    breakpoints: true,
    errors: &[
        ("rate_limit_error", ErrorKind::RateLimited),
        ("overloaded_error", ErrorKind::Overloaded),
        ("api_error", ErrorKind::ProviderError),
        ("timeout_error", ErrorKind::ProviderError),
        ("authentication_error", ErrorKind::AuthenticationFailed),
        ("permission_error", ErrorKind::AuthenticationFailed),
        ("invalid_request_error", ErrorKind::ProviderRejected),
        ("not_found_error", ErrorKind::ProviderRejected),
        ("request_too_large", ErrorKind::ProviderRejected),
        ("billing_error", ErrorKind::ProviderRejected),
    ],
    cache_key_field: None,
    settings: Places {
        at: [
            Top("model"),
            Top("max_tokens"),
            // The Messages API of the SDK types this crate checks against (1.12) has no
            // sampling settings.
            No,
            No,
            No,
            Top("stop_sequences"),
            No,
            No,
            No,
            Own,
            Own,
            No,
            Top("stream"),
        ],
        max_stops: usize::MAX,
    },
};

impl Dialect for Anthropic {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn capabilities(&self) -> Capabilities {
        let none = support(&[], 0, false);
        Capabilities {
            images: support(
                &["image/jpeg", "image/png", "image/gif", "image/webp"],
                5,
                true,
            ),
            pdf: support(&["application/pdf"], 32, true),
            audio: none.clone(),
            video: none,
            max_images: 100,
            max_request_bytes: 32 * MB,
            inline_text_max_bytes: 256 * 1024,
            text_documents: true,
            tool_routes: routes(),
        }
    }

    fn native(&self, class: MediaClass, _mime: &str, _url: bool) -> bool {
        matches!(class, MediaClass::Image | MediaClass::Pdf)
    }

    fn native_in_result(&self, class: MediaClass) -> bool {
        matches!(class, MediaClass::Image | MediaClass::Pdf)
    }

    fn block<'a>(&self, b: Block<'a>, text_documents: bool) -> Json<'a> {
        match b {
            Block::Text(t) => obj([("type", s("text")), ("text", s(t))]),
            Block::TextDoc {
                text,
                title,
                fenced,
            } => {
                if text_documents {
                    obj([
                        ("type", s("document")),
                        (
                            "source",
                            obj([
                                ("type", s("text")),
                                ("media_type", s("text/plain")),
                                ("data", s(text)),
                            ]),
                        ),
                        ("title", s(title)),
                    ])
                } else {
                    obj([("type", s("text")), ("text", s(fenced))])
                }
            }
            Block::Media {
                class,
                mime,
                source,
                name,
            } => {
                let ty = if class == MediaClass::Image {
                    "image"
                } else {
                    "document"
                };
                let source = match source {
                    Source::Data(d) => obj([
                        ("type", s("base64")),
                        ("media_type", s(mime)),
                        ("data", raw(d)),
                    ]),
                    Source::Url(u) => obj([("type", s("url")), ("url", s(u))]),
                };
                let mut o = obj([("type", s(ty)), ("source", source)]);
                if let (MediaClass::Pdf, Some(n)) = (class, name) {
                    o.push("title", s(n));
                }
                o
            }
        }
    }

    fn tool<'a>(&self, t: &'a Tool, _i: usize, _warn: &mut Option<String>) -> Json<'a> {
        let mut o = Json::Obj(Vec::new());
        o.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            o.push("description", s(d.as_str()));
        }
        o.push("input_schema", Json::Value(Cow::Borrowed(&t.parameters)));
        if let Some(st) = t.strict {
            o.push("strict", Json::Bool(st));
        }
        o
    }

    fn settings<'a>(&self, cx: &mut Cx<'a>, b: &mut Json<'a>) {
        let st = cx.s;
        let max = cx.max_tokens(true);
        let mut thinking = match cx.reasoning_rule(Reasoning::Budget {
            min: 1024,
            max: u32::MAX,
            off: true,
        }) {
            Reasoning::Budget { min, max, off } => cx.budget(min, max, off),
            _ => {
                cx.no_reasoning();
                None
            }
        }
        .filter(|n| *n > 0);
        if let (Some(t), Some(m)) = (thinking, max) {
            // The budget counts within max_tokens and must stay below it.
            if t >= m && m > 1024 {
                cx.note(
                    "SettingClamped",
                    "reasoning.budgetTokens",
                    format!("{t} must be below max_tokens ({m}): {} sent", m - 1),
                );
                thinking = Some(m - 1);
            } else if t >= m {
                cx.drop(
                    "reasoning",
                    "Anthropic's smallest budget (1024) must be below max_tokens",
                );
                thinking = None;
            }
        }
        if thinking.is_some() && cx.output_tool.is_some() {
            cx.drop("reasoning", "Anthropic takes no forced tool with extended thinking, and the answer is asked for as a tool call");
            thinking = None;
        }
        cx.write(&SPEC.settings, max, b, &mut Json::Obj(Vec::new()));
        let choice = match cx.output_tool {
            Some(name) => {
                if st.tool_choice.is_some() {
                    cx.drop(
                        "toolChoice",
                        "the answer is asked for as a forced tool call",
                    );
                }
                Some(obj([("type", s("tool")), ("name", s(name))]))
            }
            None => cx.tool_choice().map(|c| match c {
                ToolChoice::Auto => obj([("type", s("auto"))]),
                ToolChoice::None => obj([("type", s("none"))]),
                ToolChoice::Required => obj([("type", s("any"))]),
                ToolChoice::Tool(n) => obj([("type", s("tool")), ("name", s(n.as_str()))]),
            }),
        };
        let serial = st.get(Simple::ParallelToolCalls) == Some(&Value::Bool(false)) && cx.tools;
        if let Some(mut c) = choice.or_else(|| serial.then(|| obj([("type", s("auto"))]))) {
            if serial {
                c.push("disable_parallel_tool_use", Json::Bool(true));
            }
            b.push("tool_choice", c);
        }
        if let Some(t) = thinking {
            let mut o = obj([("type", s("enabled")), ("budget_tokens", num(t))]);
            if st.reasoning.as_ref().and_then(|r| r.include) == Some(false) {
                o.push("display", s("omitted"));
            }
            b.push("thinking", o);
        }
        if let (Some(o), None) = (&st.output, cx.output_tool) {
            match &o.schema {
                Some(schema) => b.push(
                    "output_config",
                    obj([(
                        "format",
                        obj([
                            ("type", s("json_schema")),
                            ("schema", Json::Value(Cow::Borrowed(schema))),
                        ]),
                    )]),
                ),
                None => cx.drop("output", "Anthropic has no JSON mode without a schema"),
            }
        }
        if let Some(u) = st.get(Simple::User) {
            b.push(
                "metadata",
                obj([("user_id", Json::Value(Cow::Borrowed(u)))]),
            );
        }
    }

    fn native_output(&self, row: Option<&Model>) -> bool {
        row.is_some_and(|r| r.structured_output)
    }

    fn reasoning<'a>(&self, r: &'a Thought, own: bool) -> std::result::Result<Json<'a>, String> {
        if !own {
            return Err(foreign(r, SPEC.name));
        }
        if r.redacted {
            return match r.data.as_deref().or(r.signature.as_deref()) {
                Some(d) => Ok(obj([("type", s("redacted_thinking")), ("data", s(d))])),
                None => Err("redacted reasoning without its data".into()),
            };
        }
        match &r.signature {
            Some(sig) => Ok(obj([
                ("type", s("thinking")),
                ("thinking", s(r.text.as_str())),
                ("signature", s(sig.as_str())),
            ])),
            None => Err("Anthropic accepts thinking back only with its signature".into()),
        }
    }

    fn cited_text<'a>(&self, text: &'a str, citations: &[&'a Value]) -> Option<Json<'a>> {
        // The request's citation types have no `file_id` (the response's do).
        let list = citations
            .iter()
            .map(|c| match c {
                Value::Object(m) if m.contains_key("file_id") => {
                    let mut m = m.clone();
                    m.remove("file_id");
                    Json::Value(Cow::Owned(Value::Object(m)))
                }
                c => Json::Value(Cow::Borrowed(*c)),
            })
            .collect();
        Some(obj([
            ("type", s("text")),
            ("text", s(text)),
            ("citations", Json::Arr(list)),
        ]))
    }

    fn call<'a>(
        &self,
        c: &'a ToolCall,
        id: Cow<'a, str>,
        input: &'a Value,
        _own: bool,
    ) -> Json<'a> {
        obj([
            ("type", s("tool_use")),
            ("id", s(id)),
            ("name", s(c.name.as_str())),
            ("input", Json::Value(Cow::Borrowed(input))),
        ])
    }

    fn result(
        &self,
        call_id: &str,
        _name: &str,
        content: &[&ResultBlock],
        is_error: bool,
        missing: bool,
    ) -> Result<String> {
        let id = super::ids::provider_id(crate::provider::Provider::Anthropic, call_id);
        let c = match content {
            [one @ (ResultBlock::Text(_) | ResultBlock::Json(_))] if !missing => s(one.text()),
            _ if missing => s(MISSING_RESULT),
            many => Json::Arr(
                many.iter()
                    .filter(|b| !matches!(b, ResultBlock::Text(t) if t.trim().is_empty()))
                    .map(|b| match b {
                        ResultBlock::Native(n) => Json::Raw(Cow::Borrowed(n.as_str())),
                        other => obj([("type", s("text")), ("text", s(other.text()))]),
                    })
                    .collect(),
            ),
        };
        let mut o = obj([
            ("type", s("tool_result")),
            ("tool_use_id", s(id)),
            ("content", c),
        ]);
        if is_error {
            o.push("is_error", Json::Bool(true));
        }
        write(&o, SlotMode::Mark)
    }

    fn head<'a>(
        &self,
        head: &mut Json<'a>,
        system: &[&'a str],
        _caller: Option<&'a str>,
        tools: Option<Json<'a>>,
        marker: Json<'a>,
        cache: Option<String>,
        breakpoints: &mut Vec<String>,
    ) {
        if !system.is_empty() {
            if cache.is_some() || system.len() > 1 {
                let n = system.len();
                let blocks = system
                    .iter()
                    .enumerate()
                    .map(|(k, t)| {
                        let mut o = obj([("type", s("text")), ("text", s(*t))]);
                        if let (Some(cc), true) = (&cache, k + 1 == n) {
                            o.push("cache_control", Json::Raw(Cow::Owned(cc.clone())));
                        }
                        o
                    })
                    .collect();
                if cache.is_some() {
                    breakpoints.push("system".to_owned());
                }
                head.push("system", Json::Arr(blocks));
            } else {
                head.push("system", s(system[0]));
            }
        }
        if let Some(mut t) = tools {
            if let (Some(cc), true) = (&cache, system.is_empty()) {
                if let Json::Arr(list) = &mut t {
                    if let Some(last) = list.last_mut() {
                        last.push("cache_control", Json::Raw(Cow::Owned(cc.clone())));
                        breakpoints.push("tools".to_owned());
                    }
                }
            }
            head.push("tools", t);
        }
        head.push("messages", marker);
    }

    fn object_source(&self, request: &str) -> Option<ObjectSource> {
        if request.contains("\"output_config\":{\"format\":") {
            return Some(ObjectSource::Text);
        }
        // An answer asked for as a forced tool call (a model without native output).
        let (_, rest) = request.split_once("\"tool_choice\":{\"type\":\"tool\",\"name\":\"")?;
        let (name, _) = rest.split_once('"')?;
        Some(ObjectSource::Tool(name.to_owned()))
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(stream::Messages)
    }

    fn endpoint(
        &self,
        base: &str,
        o: &TargetOptions,
        headers: &mut Vec<(String, String)>,
    ) -> Result<String> {
        headers.push((
            "anthropic-version".into(),
            o.api_version.clone().unwrap_or_else(|| VERSION.into()),
        ));
        if let Some(k) = &o.api_key {
            headers.push(("x-api-key".into(), k.clone()));
        }
        if o.browser {
            headers.push((
                "anthropic-dangerous-direct-browser-access".into(),
                "true".into(),
            ));
        }
        Ok(format!("{base}/v1/messages"))
    }
}
