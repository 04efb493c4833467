//! Neutral blocks → each provider's own request JSON.
//!
//! | block | Anthropic | OpenAI Chat | OpenAI Responses | Gemini |
//! |---|---|---|---|---|
//! | text | `text` | `text` (a string if alone) | `input_text` | `{text}` |
//! | image | `image` base64 / url | `image_url` data URL / url | `input_image` | `inlineData` / `fileData` |
//! | pdf | `document` base64 / url | `file.file_data` | `input_file` | `inlineData` / `fileData` |
//! | audio | — | `input_audio` (wav, mp3) | — | `inlineData` / `fileData` |
//! | video | — | — | — | `inlineData` / `fileData` |
//! | text document | `document` text source | fenced `text` | fenced `input_text` | fenced `{text}` |

use super::json::{obj, s, DataSrc, Json};
use super::{schema, Block, LowerOptions, Provider, Report, Source, Warning};
use crate::error::{Error, ErrorKind, Result};
use crate::media::MediaClass;
use std::borrow::Cow;

/// Whether `provider` has a native block for `class` (from bytes, or from a URL).
pub(crate) fn native(provider: Provider, class: MediaClass, mime: &str, url: bool) -> bool {
    use MediaClass::*;
    match provider {
        Provider::Anthropic => matches!(class, Image | Pdf),
        Provider::OpenAiChat => match class {
            Image => true,
            Pdf => !url,
            Audio => !url && audio_format(mime).is_some(),
            _ => false,
        },
        Provider::OpenAiResponses => matches!(class, Image | Pdf),
        Provider::Gemini => matches!(class, Image | Pdf | Audio | Video),
    }
}

fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" => Some("wav"),
        "audio/mpeg" => Some("mp3"),
        _ => None,
    }
}

pub(crate) fn data_url<'a>(mime: &str, d: DataSrc<'a>) -> Json<'a> {
    Json::Data {
        prefix: format!("data:{mime};base64,"),
        data: d,
    }
}

pub(crate) fn raw<'a>(d: DataSrc<'a>) -> Json<'a> {
    Json::Data {
        prefix: String::new(),
        data: d,
    }
}

/// The top-level keys each provider writes itself (params may not set them).
pub(crate) fn reserved(p: Provider) -> &'static [&'static str] {
    match p {
        Provider::Anthropic => &["system", "tools", "messages"],
        Provider::OpenAiChat => &["messages", "tools"],
        Provider::OpenAiResponses => &["instructions", "tools", "input"],
        Provider::Gemini => &[
            "systemInstruction",
            "system_instruction",
            "tools",
            "contents",
        ],
    }
}

/// Builds the whole request body.
pub(crate) fn request<'a>(
    opts: &'a LowerOptions,
    text_documents: bool,
    blocks: Vec<Block<'a>>,
    report: &mut Report,
) -> Result<Json<'a>> {
    let p = opts.provider;
    let mut body = Json::Obj(Vec::new());
    for (k, v) in &opts.params {
        if reserved(p).contains(&k.as_str()) {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("`params.{k}` is written by the lowering; pass it through its own option"),
            )
            .at(format!("params.{k}")));
        }
        body.push(k.as_str(), Json::Value(Cow::Borrowed(v)));
    }
    let system = opts.system.as_deref().filter(|s| !s.is_empty());
    let tools = tools(opts, report);
    match p {
        Provider::Anthropic => {
            if let Some(sys) = system {
                body.push("system", s(sys));
            }
            if let Some(t) = tools {
                body.push("tools", t);
            }
            let content = Json::Arr(
                blocks
                    .into_iter()
                    .map(|b| anthropic(b, text_documents))
                    .collect(),
            );
            body.push(
                "messages",
                Json::Arr(vec![obj([("role", s("user")), ("content", content)])]),
            );
        }
        Provider::OpenAiChat => {
            let mut messages = Vec::new();
            if let Some(sys) = system {
                messages.push(obj([("role", s("system")), ("content", s(sys))]));
            }
            let content = match blocks.as_slice() {
                [Block::Text(t)] => s(t.clone()),
                _ => Json::Arr(blocks.into_iter().map(chat).collect()),
            };
            messages.push(obj([("role", s("user")), ("content", content)]));
            body.push("messages", Json::Arr(messages));
            if let Some(t) = tools {
                body.push("tools", t);
            }
        }
        Provider::OpenAiResponses => {
            if let Some(sys) = system {
                body.push("instructions", s(sys));
            }
            let content = Json::Arr(blocks.into_iter().map(responses).collect());
            body.push(
                "input",
                Json::Arr(vec![obj([("role", s("user")), ("content", content)])]),
            );
            if let Some(t) = tools {
                body.push("tools", t);
            }
        }
        Provider::Gemini => {
            if let Some(sys) = system {
                body.push(
                    "systemInstruction",
                    obj([("parts", Json::Arr(vec![obj([("text", s(sys))])]))]),
                );
            }
            let parts = Json::Arr(blocks.into_iter().map(gemini).collect());
            body.push(
                "contents",
                Json::Arr(vec![obj([("role", s("user")), ("parts", parts)])]),
            );
            if let Some(t) = tools {
                body.push("tools", t);
            }
        }
    }
    Ok(body)
}

pub(crate) fn anthropic(b: Block<'_>, text_documents: bool) -> Json<'_> {
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

pub(crate) fn chat(b: Block<'_>) -> Json<'_> {
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

pub(crate) fn responses(b: Block<'_>) -> Json<'_> {
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

pub(crate) fn gemini(b: Block<'_>) -> Json<'_> {
    match b {
        Block::Text(t) => obj([("text", s(t))]),
        Block::TextDoc { fenced, .. } => obj([("text", s(fenced))]),
        Block::Media { mime, source, .. } => match source {
            Source::Data(d) => {
                obj([("inlineData", obj([("mimeType", s(mime)), ("data", raw(d))]))])
            }
            // A YouTube URL goes without a type.
            Source::Url(u) if mime.is_empty() => obj([("fileData", obj([("fileUri", s(u))]))]),
            Source::Url(u) => obj([("fileData", obj([("mimeType", s(mime)), ("fileUri", s(u))]))]),
        },
    }
}

pub(crate) fn tools<'a>(opts: &'a LowerOptions, report: &mut Report) -> Option<Json<'a>> {
    if opts.tools.is_empty() {
        return None;
    }
    let p = opts.provider;
    let list: Vec<Json<'a>> = opts
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let params = || Json::Value(Cow::Borrowed(&t.parameters));
            let mut o = Json::Obj(Vec::new());
            match p {
                Provider::Anthropic => {
                    o.push("name", s(t.name.as_str()));
                    if let Some(d) = &t.description {
                        o.push("description", s(d.as_str()));
                    }
                    o.push("input_schema", params());
                    if let Some(st) = t.strict {
                        o.push("strict", Json::Bool(st));
                    }
                }
                Provider::OpenAiChat => {
                    let mut f = Json::Obj(Vec::new());
                    f.push("name", s(t.name.as_str()));
                    if let Some(d) = &t.description {
                        f.push("description", s(d.as_str()));
                    }
                    f.push("parameters", params());
                    if let Some(st) = t.strict {
                        f.push("strict", Json::Bool(st));
                    }
                    o.push("type", s("function"));
                    o.push("function", f);
                }
                Provider::OpenAiResponses => {
                    o.push("type", s("function"));
                    o.push("name", s(t.name.as_str()));
                    if let Some(d) = &t.description {
                        o.push("description", s(d.as_str()));
                    }
                    o.push("parameters", params());
                    o.push("strict", Json::Bool(t.strict.unwrap_or(false)));
                }
                Provider::Gemini => {
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
                        report.warnings.push(Warning {
                            part: None,
                            code: "SchemaKeyDropped",
                            message: format!(
                                "Gemini reads an OpenAPI subset of JSON Schema; left out: {}",
                                dropped.join(", ")
                            ),
                        });
                    }
                    if !schema::is_empty_object(&conv) {
                        o.push("parameters", Json::Value(Cow::Owned(conv)));
                    }
                }
            }
            o
        })
        .collect();
    Some(match p {
        Provider::Gemini => Json::Arr(vec![obj([("functionDeclarations", Json::Arr(list))])]),
        _ => Json::Arr(list),
    })
}
