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

    fn custom_tool<'a>(&self, t: &'a Tool, format: Option<&'a Value>) -> Option<Json<'a>> {
        let mut o = Json::Obj(Vec::new());
        o.push("type", s("custom"));
        o.push("name", s(t.name.as_str()));
        if let Some(d) = &t.description {
            o.push("description", s(d.as_str()));
        }
        if let Some(f) = format {
            o.push("format", Json::Value(Cow::Borrowed(f)));
        }
        Some(o)
    }

    fn settings<'a>(&self, cx: &mut Cx<'a>, b: &mut Json<'a>) {
        super::openai_chat::settings(cx, b, true, &SPEC.settings);
    }

    fn reasoning<'a>(&self, r: &'a Reasoning, own: bool) -> std::result::Result<Json<'a>, String> {
        if !own {
            return Err(foreign(r, SPEC.name));
        }
        // The input type's reasoning item has a required id: reasoning without one (read
        // from an OpenAI-compatible server through Chat) has nothing to refer to.
        if r.id.is_none() {
            return Err("an OpenAI reasoning item needs its id".into());
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

    fn call<'a>(&self, c: &'a ToolCall, id: Cow<'a, str>, input: &'a Value, own: bool) -> Json<'a> {
        if let Some(kind) = c.kind.as_deref() {
            if let (true, Some(data @ Value::Object(d))) = (own, &c.data) {
                // The item as the provider sent it; a custom tool call's input type has no
                // `status` (its output item does).
                if kind == "custom" && d.contains_key("status") {
                    let mut d = d.clone();
                    d.remove("status");
                    return Json::Value(Cow::Owned(Value::Object(d)));
                }
                return Json::Value(Cow::Borrowed(data));
            }
            if let Some(j) = kind_call(kind, c, id.clone(), input) {
                return j;
            }
        }
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

    fn kind_result(
        &self,
        kind: &str,
        call_id: &str,
        content: &[&ResultBlock],
        is_error: bool,
        missing: bool,
    ) -> Option<Result<String>> {
        let ty = match kind {
            "custom" => "custom_tool_call_output",
            "apply_patch" => "apply_patch_call_output",
            "local_shell" => "local_shell_call_output",
            "shell" => "shell_call_output",
            "tool_search" => "tool_search_output",
            "mcp_approval" => "mcp_approval_response",
            _ => return None,
        };
        let id = super::ids::provider_id(crate::provider::Provider::OpenAiResponses, call_id);
        let failed = is_error || missing;
        let text: String = if missing {
            crate::provider::MISSING_RESULT.into()
        } else {
            content
                .iter()
                .map(|b| b.text())
                .collect::<Vec<_>>()
                .join("\n")
        };
        // The answer as JSON (a JSON result, or text holding JSON): an array as it is, or
        // the array under `key` of an object.
        let value = serde_json::from_str::<Value>(&text).ok();
        let list = |key: &str| match &value {
            Some(Value::Object(m)) => m.get(key).filter(|v| v.is_array()).cloned(),
            Some(v @ Value::Array(_)) => Some(v.clone()),
            _ => None,
        };
        let mut o = Json::Obj(Vec::with_capacity(5));
        o.push("type", s(ty));
        if kind == "mcp_approval" {
            // Approved only when the host said so: `true` or `{ approve: true }`.
            let answer = value.as_ref().filter(|_| !failed);
            let approve = answer.is_some_and(|v| {
                v.as_bool()
                    .or_else(|| v.get("approve").and_then(Value::as_bool))
                    .unwrap_or(false)
            });
            let reason = match answer {
                Some(v) => v.get("reason").and_then(Value::as_str).map(str::to_owned),
                None => Some(text).filter(|t| !t.is_empty()),
            };
            o.push("approval_request_id", s(id));
            o.push("approve", Json::Bool(approve));
            if let Some(r) = reason {
                o.push("reason", s(r));
            }
            return Some(write(&o, SlotMode::Mark));
        }
        // A local shell output names its call in `id` (the call's `call_id`).
        o.push(
            if kind == "local_shell" {
                "id"
            } else {
                "call_id"
            },
            s(id),
        );
        match kind {
            "custom" => o.push(
                "output",
                result_content(content, missing, "input_text", true),
            ),
            "shell" => {
                // `[{ stdout, stderr, outcome }]` as the host gave it, else its text as the
                // output of one command.
                let out = list("output").map(|v| Json::Value(Cow::Owned(v)));
                o.push(
                    "output",
                    out.unwrap_or_else(|| {
                        let t = crate::json_text::JsonText::json_text(&Value::String(text.clone()));
                        let (so, se) = if failed { ("\"\"", t.as_str()) } else { (t.as_str(), "\"\"") };
                        Json::Raw(Cow::Owned(format!(
                            "[{{\"stdout\":{so},\"stderr\":{se},\"outcome\":{{\"type\":\"exit\",\"exit_code\":{}}}}}]",
                            u8::from(failed)
                        )))
                    }),
                );
            }
            "tool_search" => {
                o.push("execution", s("client"));
                o.push("status", s("completed"));
                let tools = list("tools").unwrap_or(Value::Array(Vec::new()));
                o.push("tools", Json::Value(Cow::Owned(tools)));
            }
            _ => {
                if kind == "apply_patch" {
                    o.push("status", s(if failed { "failed" } else { "completed" }));
                }
                o.push("output", s(text));
            }
        }
        Some(write(&o, SlotMode::Mark))
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

/// A call of `kind` written as the provider's own item, for a turn that does not hold the
/// item itself (made elsewhere, or by another provider): `None` for a kind it has no item
/// for.
fn kind_call<'a>(
    kind: &str,
    c: &'a ToolCall,
    id: Cow<'a, str>,
    input: &'a Value,
) -> Option<Json<'a>> {
    let (ty, field) = match kind {
        "custom" => ("custom_tool_call", "input"),
        "apply_patch" => ("apply_patch_call", "operation"),
        "shell" => ("shell_call", "action"),
        "tool_search" => ("tool_search_call", "arguments"),
        _ => return None,
    };
    let mut o = Json::Obj(Vec::with_capacity(6));
    o.push("type", s(ty));
    o.push("call_id", s(id));
    if kind == "custom" {
        o.push("name", s(c.name.as_str()));
        o.push(field, s(arguments(c, input)));
    } else {
        if kind == "tool_search" {
            o.push("execution", s("client"));
        }
        o.push(field, Json::Value(Cow::Borrowed(&c.input)));
        o.push("status", s("completed"));
    }
    Some(o)
}
