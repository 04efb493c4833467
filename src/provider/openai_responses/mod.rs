//! OpenAI Responses.
//!
//! | piece | written as |
//! |---|---|
//! | text / image / PDF | `input_text`, `input_image` (`detail: auto`), `input_file` (`file_data` or `file_url`) |
//! | text document | fenced `input_text` |
//! | system | top-level `instructions` (a `system` / `developer` turn stays in place as an item) |
//! | reasoning | a `reasoning` item (its id or its encrypted content) |
//! | tool call / result | `function_call` / `function_call_output` items (images and PDFs in results) |
//! | tools | `{ type: function, name, description?, parameters, strict }` |
//! | conversation | one item per message, text, reasoning, call and result |
//! | caching | `prompt_cache_key` |
//! | stream | typed events (`response.created` … `response.completed`), see `stream` |
//! | endpoint | `{base}/responses`, `authorization: Bearer` |

mod stream;

use super::openai_chat::{arguments, bearer, result_content, ERRORS, IMAGES};
use super::{
    data_url, foreign, Block, Dialect, Layout, Reader, ResultBlock, Source, Spec, TargetOptions,
    Tool,
};
use crate::body::{obj, s, write, Json, SlotMode};
use crate::capabilities::{routes, support, Capabilities, MB};
use crate::error::Result;
use crate::media::MediaClass;
use crate::settings::{Cx, Place::*, Places};
use crate::stream::partial::ObjectSource;
use crate::turn::{Reasoning, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

/// The OpenAI Responses dialect.
pub(crate) struct OpenAiResponses;

/// What the shared code needs to know of OpenAI Responses, as data.
pub(crate) static SPEC: Spec = Spec {
    name: "openai-responses",
    display: "OpenAI Responses",
    family: "openai",
    base_url: "https://api.openai.com/v1",
    stream_end: "`response.completed`",
    reserved: &["instructions", "tools", "input"],
    layout: Layout::Items,
    max_id_len: Some(64),
    results_by_name: false,
    arguments_as_text: true,
    provider_data: true,
    marks_error_results: true,
    refuses_blank_text: false,
    breakpoints: false,
    errors: ERRORS,
    cache_key_field: Some("prompt_cache_key"),
    settings: Places {
        at: [
            Top("model"),
            Top("max_output_tokens"),
            Top("temperature"),
            Top("top_p"),
            No,
            No,
            No,
            No,
            No,
            Top("parallel_tool_calls"),
            Top("safety_identifier"),
            Top("metadata"),
            Top("stream"),
        ],
        max_stops: 0,
    },
};

impl Dialect for OpenAiResponses {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }

    fn capabilities(&self) -> Capabilities {
        let none = support(&[], 0, false);
        Capabilities {
            images: support(IMAGES, 20, true),
            pdf: support(&["application/pdf"], 32, true),
            audio: none.clone(),
            video: none,
            max_images: 500,
            max_request_bytes: 50 * MB,
            inline_text_max_bytes: 256 * 1024,
            text_documents: false,
            tool_routes: routes(),
        }
    }

    fn native(&self, class: MediaClass, _mime: &str, _url: bool) -> bool {
        matches!(class, MediaClass::Image | MediaClass::Pdf)
    }

    fn native_in_result(&self, class: MediaClass) -> bool {
        matches!(class, MediaClass::Image | MediaClass::Pdf)
    }

    fn block<'a>(&self, b: Block<'a>, _text_documents: bool) -> Json<'a> {
        match b {
            Block::Text(t) => obj([("type", s("input_text")), ("text", s(t))]),
            Block::TextDoc { fenced, .. } => obj([("type", s("input_text")), ("text", s(fenced))]),
            Block::Media {
                class,
                mime,
                source,
                name,
            } => match (class, source) {
                (MediaClass::Image, Source::Data(d)) => obj([
                    ("type", s("input_image")),
                    ("image_url", data_url(&mime, d)),
                    ("detail", s("auto")),
                ]),
                (MediaClass::Image, Source::Url(u)) => obj([
                    ("type", s("input_image")),
                    ("image_url", s(u)),
                    ("detail", s("auto")),
                ]),
                (_, Source::Data(d)) => obj([
                    ("type", s("input_file")),
                    ("filename", s(name.unwrap_or_else(|| "document.pdf".into()))),
                    ("file_data", data_url(&mime, d)),
                ]),
                (_, Source::Url(u)) => obj([("type", s("input_file")), ("file_url", s(u))]),
            },
        }
    }

    fn tool<'a>(&self, t: &'a Tool, _i: usize, _warn: &mut Option<String>) -> Json<'a> {
        let mut o = Json::Obj(Vec::new());
        o.push("type", s("function"));
        o.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            o.push("description", s(d.as_str()));
        }
        o.push("parameters", Json::Value(Cow::Borrowed(&t.parameters)));
        o.push("strict", Json::Bool(t.strict.unwrap_or(false)));
        o
    }

    fn settings<'a>(&self, cx: &mut Cx<'a>, b: &mut Json<'a>) {
        super::openai_chat::settings(cx, b, true, &SPEC.settings);
    }

    fn reasoning<'a>(&self, r: &'a Reasoning, own: bool) -> std::result::Result<Json<'a>, String> {
        if !own {
            return Err(foreign(r, SPEC.name));
        }
        if r.id.is_none() && r.signature.is_none() {
            return Err("an OpenAI reasoning item needs its id or its encrypted content".into());
        }
        let mut o = Json::Obj(Vec::new());
        o.push("type", s("reasoning"));
        if let Some(id) = &r.id {
            o.push("id", s(id.as_str()));
        }
        let summary = if r.text.is_empty() {
            Vec::new()
        } else {
            vec![obj([
                ("type", s("summary_text")),
                ("text", s(r.text.as_str())),
            ])]
        };
        o.push("summary", Json::Arr(summary));
        if let Some(sig) = &r.signature {
            o.push("encrypted_content", s(sig.as_str()));
        }
        Ok(o)
    }

    fn call<'a>(
        &self,
        c: &'a ToolCall,
        id: Cow<'a, str>,
        input: &'a Value,
        _own: bool,
    ) -> Json<'a> {
        obj([
            ("type", s("function_call")),
            ("call_id", s(id)),
            ("name", s(c.name.as_str())),
            ("arguments", s(arguments(c, input))),
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
        let id = super::ids::provider_id(crate::provider::Provider::OpenAiResponses, call_id);
        let c = result_content(content, missing, "input_text", true);
        write(
            &obj([
                ("type", s("function_call_output")),
                ("call_id", s(id)),
                ("output", c),
            ]),
            SlotMode::Mark,
        )
    }

    fn head<'a>(
        &self,
        head: &mut Json<'a>,
        _system: &[&'a str],
        caller: Option<&'a str>,
        tools: Option<Json<'a>>,
        marker: Json<'a>,
        _cache: Option<String>,
        _breakpoints: &mut Vec<String>,
    ) {
        if let Some(sys) = caller {
            head.push("instructions", s(sys));
        }
        head.push("input", marker);
        if let Some(t) = tools {
            head.push("tools", t);
        }
    }

    fn object_source(&self, request: &str) -> Option<ObjectSource> {
        request
            .contains("\"text\":{\"format\":{\"type\":\"json_")
            .then_some(ObjectSource::Text)
    }

    fn reader(&self) -> Box<dyn Reader> {
        Box::new(stream::Responses::default())
    }

    fn endpoint(
        &self,
        base: &str,
        o: &TargetOptions,
        headers: &mut Vec<(String, String)>,
    ) -> Result<String> {
        bearer(o, headers);
        Ok(format!("{base}/responses"))
    }
}
