//! Each provider's dialect, in one module per provider behind one trait (`Dialect`):
//! everything that differs between Anthropic Messages, OpenAI Chat Completions, OpenAI
//! Responses and Gemini `generateContent` — how a user block, a tool, a reasoning part, a
//! tool call and its result are written; where the system text, the tools and the messages
//! go; how a conversation's messages are laid out; the call ids it accepts; its cache
//! breakpoints; what it takes natively (its default capability table); how its responses
//! are read; its endpoint and headers; what its errors mean. The lowering, the conversation
//! assembly, the response parser and the transport rules are written once, against the
//! trait.
//!
//! Adding a provider is one module here implementing `Dialect`, a `Provider` variant,
//! and its snapshots (ARCHITECTURE.md, "Adding a provider").

mod anthropic;
pub mod errors;
mod gemini;
pub mod ids;
mod openai_chat;
mod openai_responses;

use crate::body::{DataSrc, Json};
use crate::capabilities::Capabilities;
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::media::MediaClass;
use crate::models::Model;
use crate::settings::{Cx, Places};
use crate::stream::builder::Builder;
use crate::stream::partial::ObjectSource;
use crate::turn::{Reasoning, ToolCall};
use serde_json::Value;
use std::borrow::Cow;

pub use anthropic::VERSION as ANTHROPIC_VERSION;
pub use openai_chat::compat::Compat;

/// A lowering target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Gemini generateContent.
    Gemini,
}

impl Provider {
    /// Every target, in a fixed order.
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Gemini,
    ];

    /// The wire name: `anthropic`, `openai-chat`, `openai-responses`, `gemini`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Result<Provider> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOptions,
                    format!(
                        "unknown provider `{name}` (expected anthropic, openai-chat, openai-responses or gemini)"
                    ),
                )
                .at("provider")
                .with("provider", name)
            })
    }

    /// What the shared code needs to know of it.
    pub(crate) fn spec(self) -> &'static Spec {
        self.dialect().spec()
    }

    /// Its dialect.
    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Provider::Anthropic => &anthropic::Anthropic,
            Provider::OpenAiChat => &openai_chat::OpenAiChat,
            Provider::OpenAiResponses => &openai_responses::OpenAiResponses,
            Provider::Gemini => &gemini::Gemini,
        }
    }
}

/// A tool definition in the neutral shape (`name`, `description`, JSON Schema `parameters`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// `^[a-zA-Z0-9_-]{1,64}$`
    pub name: String,
    /// What the tool does.
    pub description: Option<String>,
    /// The JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// Strict schema adherence, where the provider has it.
    pub strict: Option<bool>,
    /// A function (the default), a custom tool or a provider's own tool.
    pub kind: ToolKind,
}

/// What kind of tool a [`Tool`] is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ToolKind {
    /// A function with JSON arguments.
    #[default]
    Function,
    /// `{ type: "custom", name, description?, format? }`: the model writes free text
    /// (constrained by `format`, `{ type: "grammar", syntax: "lark" | "regex", definition }`,
    /// where the provider has it). OpenAI Responses and Chat take it natively; the other
    /// providers get a function with one string argument, `input` (reported).
    Custom {
        /// The input's format, as OpenAI Responses spells it.
        format: Option<Value>,
    },
    /// `{ type: "provider", provider, tool }`: a provider's own tool (OpenAI's
    /// `apply_patch`, `shell`, `web_search`, Anthropic's server tools, Gemini's
    /// `googleSearch`), sent verbatim to that provider and left out, reported, for the
    /// others.
    Provider {
        /// The provider's wire name.
        provider: Provider,
        /// The definition, verbatim.
        tool: Value,
    },
}

impl Tool {
    /// Reads tool `i` of an options object: `{ type?: "function", name, description?,
    /// inputSchema?, strict? }` (`parameters` and `input_schema` are refused,
    /// naming `inputSchema`), `{ type: "custom", name,
    /// description?, format? }` or `{ type: "provider", provider, tool, name? }`.
    pub(crate) fn from_value(v: Value, i: usize) -> Result<Tool> {
        let path = format!("tools[{i}]");
        let Value::Object(mut o) = v else {
            return Err(Error::new(ErrorKind::InvalidOptions, "a tool must be an object").at(path));
        };
        let mut f = Fields::new(&mut o, path, ErrorKind::InvalidOptions);
        let (kind, name) = match f.opt_string("type")?.as_deref() {
            None | Some("function") => (ToolKind::Function, f.string("name")?),
            Some("custom") => (
                ToolKind::Custom {
                    format: f.opt_object("format")?.map(Value::Object),
                },
                f.string("name")?,
            ),
            Some("provider") => {
                let provider = Provider::parse(&f.string("provider")?)
                    .map_err(|e| e.within(&format!("tools[{i}]")))?;
                let Some(tool) = f.opt_object("tool")? else {
                    return Err(f.error("tool", "a provider tool needs its definition in `tool`"));
                };
                // Its calls' name: given, else the definition's name, type or only key.
                let name = match f.opt_string("name")? {
                    Some(n) => n,
                    None => tool
                        .get("name")
                        .or_else(|| tool.get("type"))
                        .and_then(Value::as_str)
                        .or_else(|| tool.keys().next().map(String::as_str))
                        .unwrap_or("")
                        .to_owned(),
                };
                let tool = Value::Object(tool);
                (ToolKind::Provider { provider, tool }, name)
            }
            Some(other) => {
                return Err(f.error(
                    "type",
                    format!("unknown tool type `{other}` (expected function, custom or provider)"),
                ))
            }
        };
        let description = f.opt_string("description")?;
        let parameters = match &kind {
            ToolKind::Function => {
                // One spelling, in every host: the providers' own (`parameters`,
                // `input_schema`) are refused with the name to use.
                for old in ["parameters", "input_schema"] {
                    if f.take(old).is_some_and(|v| !v.is_null()) {
                        return Err(f
                            .error(
                                old,
                                format!("a tool's schema is `inputSchema`, not `{old}`"),
                            )
                            .with("use", "inputSchema"));
                    }
                }
                match f.opt_object("inputSchema")? {
                    Some(p) => Value::Object(p),
                    None => serde_json::from_str(r#"{"type":"object","properties":{}}"#)
                        .unwrap_or_default(),
                }
            }
            // A custom tool where the provider has none: one string argument.
            ToolKind::Custom { .. } => serde_json::from_str(
                r#"{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}"#,
            )
            .unwrap_or_default(),
            ToolKind::Provider { .. } => Value::Null,
        };
        let tool = Tool {
            name,
            description,
            parameters,
            strict: f.opt_bool("strict")?,
            kind,
        };
        tool.check(i)?;
        Ok(tool)
    }

    fn check(&self, i: usize) -> Result<()> {
        let ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!(
                    "tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$",
                    self.name
                ),
            )
            .at(format!("tools[{i}].name")));
        }
        if self
            .parameters
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t != "object")
        {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "tool parameters must be an object schema",
            )
            .at(format!("tools[{i}].parameters.type")));
        }
        Ok(())
    }
}

/// A provider-neutral content block, written by the dialect.
#[derive(Debug, Clone)]
pub(crate) enum Block<'a> {
    /// Text.
    Text(Cow<'a, str>),
    /// A native media block.
    Media {
        class: MediaClass,
        mime: String,
        source: Source<'a>,
        name: Option<String>,
    },
    /// A text document: native where the target has text documents, else `fenced`.
    TextDoc {
        text: String,
        title: String,
        fenced: String,
    },
}

/// Where a media block's bytes are.
#[derive(Debug, Clone)]
pub(crate) enum Source<'a> {
    /// Base64 data.
    Data(DataSrc<'a>),
    /// A URL passed through.
    Url(Cow<'a, str>),
}

/// `data:<mime>;base64,` then the data.
pub(crate) fn data_url<'a>(mime: &str, d: DataSrc<'a>) -> Json<'a> {
    Json::Data {
        prefix: format!("data:{mime};base64,"),
        data: d,
    }
}

/// The data alone.
pub(crate) fn raw(d: DataSrc<'_>) -> Json<'_> {
    Json::Data {
        prefix: String::new(),
        data: d,
    }
}

/// One piece of a tool result's content, as the conversation assembly holds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ResultBlock {
    /// Text.
    Text(String),
    /// A JSON value, written as JSON text.
    Json(String),
    /// A native media block written for the provider.
    Native(String),
}

impl ResultBlock {
    /// Its text (a native block has none).
    pub(crate) fn text(&self) -> &str {
        match self {
            ResultBlock::Text(t) | ResultBlock::Json(t) => t,
            ResultBlock::Native(_) => "",
        }
    }
}

/// What a result says when the conversation recorded none for its call.
pub(crate) const MISSING_RESULT: &str = "No result was recorded for this tool call.";

/// How a provider lays out a conversation's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Messages of blocks in alternating roles (same roles merged), the instructions before
    /// the conversation (later ones sent as user text), tool results as blocks first in the
    /// next user message.
    Blocks(&'static BlockLayout),
    /// Chat messages: the instructions in place, an assistant turn as one message (its
    /// text as `content`, its calls as `tool_calls`), one `tool` message per result.
    Chat,
    /// A list of items: the instructions in place, each assistant text, reasoning and call
    /// an item of its own, each result an item.
    Items,
}

/// The strings of a [`Layout::Blocks`] conversation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BlockLayout {
    /// The model's role name.
    pub(crate) model: &'static str,
    /// The key of a message's blocks.
    pub(crate) content: &'static str,
    /// A user message up to its first block.
    pub(crate) user_open: &'static str,
    /// A model message up to its first block.
    pub(crate) model_open: &'static str,
    /// A text block up to its text.
    pub(crate) text_open: &'static str,
    /// The final assistant text may not end in white space (it is trimmed, reported).
    pub(crate) trims_final_text: bool,
}

/// Where the host sends a body.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The endpoint.
    pub url: String,
    /// The headers, lower-case names, in a fixed order.
    pub headers: Vec<(String, String)>,
}

/// What a target needs.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// The API base URL (the provider's public API when absent).
    pub base_url: Option<String>,
    /// The model (Gemini puts it in the URL; the other providers read it from the body).
    pub model: Option<String>,
    /// Gemini: stream (`streamGenerateContent?alt=sse`) or not (`generateContent`). The other
    /// providers stream when the body says `"stream": true`.
    pub stream: bool,
    /// The API key, sent in the provider's header (none: the host adds its own auth).
    pub api_key: Option<String>,
    /// Anthropic: the `anthropic-version` header ([`ANTHROPIC_VERSION`] when absent).
    pub api_version: Option<String>,
    /// Anthropic: the request comes from a browser page (adds the header Anthropic requires
    /// for CORS requests that carry a key).
    pub browser: bool,
}

impl TargetOptions {
    /// Parses `{ base_url?, model?, stream?, api_key?, api_version?, browser? }`.
    pub fn from_value(v: Value) -> Result<TargetOptions> {
        let Value::Object(mut o) = v else {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "target options must be an object",
            )
            .at("$"));
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidOptions);
        let t = TargetOptions {
            base_url: f.opt_string("base_url")?,
            model: f.opt_string("model")?,
            stream: f.opt_bool("stream")?.unwrap_or(true),
            api_key: f.opt_string("api_key")?,
            api_version: f.opt_string("api_version")?,
            browser: f.opt_bool("browser")?.unwrap_or(false),
        };
        if let Some(k) = f.leftover() {
            return Err(
                Error::new(ErrorKind::InvalidOptions, "unknown target option")
                    .at(k)
                    .with(
                        "known",
                        "base_url, model, stream, api_key, api_version, browser",
                    ),
            );
        }
        Ok(t)
    }
}

/// Reads one response of a provider: the events of a stream (or its chunks) and whole bodies,
/// into the builder.
pub(crate) trait Reader {
    /// A typed fast path for the most frequent events: `true` when it took `data` whole.
    fn fast(&mut self, b: &mut Builder, data: &str) -> bool {
        let _ = (b, data);
        false
    }
    /// One event (or chunk) of a stream.
    fn event(&mut self, b: &mut Builder, v: &Value);
    /// A whole (non-streamed) body.
    fn body(&mut self, b: &mut Builder, v: &Value);
    /// The stream's `[DONE]` marker.
    fn done(&mut self, b: &mut Builder) {
        let _ = b;
    }
}

/// What the shared code needs to know of a provider, as data (its rules as behaviour are
/// the [`Dialect`] methods).
#[derive(Debug)]
pub(crate) struct Spec {
    /// The wire name (`anthropic`, `openai-chat`, …).
    pub(crate) name: &'static str,
    /// The name people know it by (`Anthropic`, `OpenAI Chat`, …), for messages.
    pub(crate) display: &'static str,
    /// The family a turn's reasoning and signatures are stamped with (`anthropic`,
    /// `openai`, `gemini`): they travel back only to their family.
    pub(crate) family: &'static str,
    /// The public API's base URL.
    pub(crate) base_url: &'static str,
    /// What a whole stream ends with (said when one stops before it).
    pub(crate) stream_end: &'static str,
    /// The top-level keys the lowering writes itself (`params` may not set them).
    pub(crate) reserved: &'static [&'static str],
    /// How the conversation's messages are laid out.
    pub(crate) layout: Layout,
    /// The longest call id the provider accepts (`None`: ids are not sent).
    pub(crate) max_id_len: Option<usize>,
    /// A result is written with its turn only when it names its call's tool (the provider
    /// matches results to calls by name).
    pub(crate) results_by_name: bool,
    /// A tool call's arguments travel as JSON text (a string input is sent as it is, not
    /// wrapped in an object).
    pub(crate) arguments_as_text: bool,
    /// Whether an assistant turn takes back, verbatim, a block or item this provider sent
    /// that the turn keeps as `provider-data` (server tool calls and results, compaction,
    /// code execution); Chat's messages have no place for one.
    pub(crate) provider_data: bool,
    /// A tool result can be marked as an error (if not, its text is sent as it is,
    /// reported).
    pub(crate) marks_error_results: bool,
    /// A text block of white space only is refused (it is dropped, reported).
    pub(crate) refuses_blank_text: bool,
    /// The provider takes `cache_control` breakpoints.
    pub(crate) breakpoints: bool,
    /// The error code of each error `type` / `code` / `status` string the provider
    /// documents; the first entry naming the error's type or its code wins.
    pub(crate) errors: &'static [(&'static str, ErrorKind)],
    /// The body field of a prompt cache key, where the provider has one.
    pub(crate) cache_key_field: Option<&'static str>,
    /// Where the simple call settings go.
    pub(crate) settings: Places,
}

/// One provider's dialect (see the module's documentation). The default methods are what
/// most providers do.
pub(crate) trait Dialect: Sync {
    /// What the shared code needs to know of the provider, as data.
    fn spec(&self) -> &'static Spec;
    /// The documented default capability table.
    fn capabilities(&self) -> Capabilities;

    // --- user content ---

    /// Whether `class` (of type `mime`, from bytes or from a URL) has a native block.
    fn native(&self, class: MediaClass, mime: &str, url: bool) -> bool;
    /// Whether a tool result may carry a native block of `class`.
    fn native_in_result(&self, class: MediaClass) -> bool {
        let _ = class;
        false
    }
    /// A block of a user turn (or a tool result's native media).
    fn block<'a>(&self, b: Block<'a>, text_documents: bool) -> Json<'a>;

    // --- tools and the top level ---

    /// Tool `i`'s definition; `warn` takes a warning about it (a schema key left out).
    fn tool<'a>(&self, t: &'a Tool, i: usize, warn: &mut Option<String>) -> Json<'a>;
    /// A custom tool's definition (`format`: its input's format), where the provider has
    /// custom tools.
    fn custom_tool<'a>(&self, t: &'a Tool, format: Option<&'a Value>) -> Option<Json<'a>> {
        let _ = (t, format);
        None
    }
    /// The tool definitions as the `tools` field: the functions (and custom tools), then
    /// the provider's own tools, verbatim.
    fn tools<'a>(&self, mut list: Vec<Json<'a>>, own: Vec<Json<'a>>) -> Json<'a> {
        list.extend(own);
        Json::Arr(list)
    }

    // --- settings ---

    /// Writes the call settings where the provider wants them (before the system text,
    /// the tools and the messages), each one translated, clamped, defaulted or dropped
    /// noted in `cx`.
    fn settings<'a>(&self, cx: &mut Cx<'a>, body: &mut Json<'a>);
    /// Whether the model (its row, if known) takes a JSON Schema for its answer natively.
    fn native_output(&self, row: Option<&Model>) -> bool {
        let _ = row;
        true
    }
    // --- conversations ---

    /// A reasoning part written back, or why it cannot be (`own`: made by this family; a
    /// foreign one is refused, see [`foreign`]).
    fn reasoning<'a>(&self, r: &'a Reasoning, own: bool) -> std::result::Result<Json<'a>, String>;
    /// Assistant text with the citations this provider made (their `data`), where the
    /// provider takes them back; `None`: the text goes alone.
    fn cited_text<'a>(&self, text: &'a str, citations: &[&'a Value]) -> Option<Json<'a>> {
        let _ = (text, citations);
        None
    }
    /// A tool call (`id` in this provider's form; `input` an object; `own`: made by this
    /// family, so its signature travels).
    fn call<'a>(&self, c: &'a ToolCall, id: Cow<'a, str>, input: &'a Value, own: bool) -> Json<'a>;
    /// A tool result: `content` given (or `missing`: none was recorded).
    fn result(
        &self,
        call_id: &str,
        name: &str,
        content: &[&ResultBlock],
        is_error: bool,
        missing: bool,
    ) -> Result<String>;
    /// The result of a call of `kind` (see `ToolCall::kind`) in the provider's own item
    /// type for it; `None`: written as a function result.
    fn kind_result(
        &self,
        kind: &str,
        call_id: &str,
        content: &[&ResultBlock],
        is_error: bool,
        missing: bool,
    ) -> Option<Result<String>> {
        let _ = (kind, call_id, content, is_error, missing);
        None
    }
    /// The body around the messages: the system text (`system`: the leading instructions
    /// joined with the caller's; `caller`: the caller's alone), the tools, the messages
    /// (`marker`), and cache breakpoints on the last system block or tool (`cache`: the
    /// `cache_control` JSON, where the provider places breakpoints).
    #[allow(clippy::too_many_arguments)]
    fn head<'a>(
        &self,
        head: &mut Json<'a>,
        system: &[&'a str],
        caller: Option<&'a str>,
        tools: Option<Json<'a>>,
        marker: Json<'a>,
        cache: Option<String>,
        breakpoints: &mut Vec<String>,
    );

    // --- responses ---

    /// A reader for one response.
    fn reader(&self) -> Box<dyn Reader>;
    /// Where the JSON answer is, when `request` (a body this crate lowered, or its start:
    /// the settings come before the messages) asked for one.
    fn object_source(&self, request: &str) -> Option<ObjectSource> {
        let _ = request;
        None
    }

    // --- transport and errors ---

    /// The endpoint under `base`, adding the provider's headers.
    fn endpoint(
        &self,
        base: &str,
        o: &TargetOptions,
        headers: &mut Vec<(String, String)>,
    ) -> Result<String>;
    /// An error object's type and code strings, and the HTTP status it carries.
    fn error_fields(&self, err: &Value) -> (Option<String>, Option<String>, Option<u16>) {
        let ty = err.get("type").and_then(Value::as_str).map(str::to_owned);
        let code = match err.get("code") {
            Some(Value::String(c)) => Some(c.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        (ty, code, None)
    }
    /// How long the error asks to wait before a retry, in milliseconds.
    fn retry_after_ms(&self, err: &Value) -> Option<u64> {
        let _ = err;
        None
    }
}

/// Why reasoning another family made cannot go to `to`.
pub(crate) fn foreign(r: &Reasoning, to: &str) -> String {
    let from = r.provider.as_deref().unwrap_or("another provider");
    format!("reasoning made by {from} cannot be verified by {to}")
}

/// A malformed piece of `provider`'s response.
pub(crate) fn malformed(provider: Provider, what: &str) -> Error {
    crate::stream::malformed(provider.name(), what)
}

/// Whether a part stamped with provider family `from` (none: made here) was made by
/// `provider`'s family, so its signatures may travel back to it.
pub(crate) fn is_own(provider: Provider, from: Option<&str>) -> bool {
    let Some(from) = from else { return true };
    let family = match from {
        "openai-responses" | "openai-chat" => "openai",
        "google" => "gemini",
        f => f,
    };
    family == provider.spec().family
}

/// The tool definitions of `tools` for `provider`, with a warning for each tool the
/// provider could not take whole (`None` when there are no tools).
pub(crate) fn tools<'a>(
    provider: Provider,
    tools: &'a [Tool],
    extra: Option<&'a Tool>,
    warnings: &mut Vec<(usize, &'static str, String)>,
) -> Option<Json<'a>> {
    if tools.is_empty() && extra.is_none() {
        return None;
    }
    let d = provider.dialect();
    let mut list = Vec::with_capacity(tools.len() + 1);
    let mut own = Vec::new();
    for (i, t) in tools.iter().chain(extra).enumerate() {
        let mut warn = None;
        let mut code = "SchemaKeyDropped";
        match &t.kind {
            ToolKind::Function => list.push(d.tool(t, i, &mut warn)),
            ToolKind::Custom { format } => match d.custom_tool(t, format.as_ref()) {
                Some(j) => list.push(j),
                None => {
                    code = "ToolAsFunction";
                    warn = Some(format!(
                        "{} has no custom tools; `{}` is a function with one string argument, `input`",
                        d.spec().display,
                        t.name
                    ));
                    list.push(d.tool(t, i, &mut None));
                }
            },
            ToolKind::Provider { provider: p, tool } if *p == provider => {
                own.push(Json::Value(Cow::Borrowed(tool)))
            }
            ToolKind::Provider { provider: p, .. } => {
                code = "ToolDropped";
                warn = Some(format!(
                    "`{}` is {}'s own tool; {} does not get it",
                    t.name,
                    p.spec().display,
                    d.spec().display
                ))
            }
        }
        if let Some(w) = warn {
            warnings.push((i, code, w));
        }
    }
    if list.is_empty() && own.is_empty() {
        return None;
    }
    Some(d.tools(list, own))
}

impl Capabilities {
    /// The documented defaults of a provider.
    pub fn default_for(provider: Provider) -> Capabilities {
        provider.dialect().capabilities()
    }

    /// The documented defaults of a provider, built once.
    pub fn defaults(provider: Provider) -> &'static Capabilities {
        static TABLES: std::sync::OnceLock<[Capabilities; 4]> = std::sync::OnceLock::new();
        let tables = TABLES.get_or_init(|| Provider::ALL.map(Capabilities::default_for));
        match provider {
            Provider::Anthropic => &tables[0],
            Provider::OpenAiChat => &tables[1],
            Provider::OpenAiResponses => &tables[2],
            Provider::Gemini => &tables[3],
        }
    }

    /// What one call's options allow: the provider default, narrowed by the model's row
    /// (a text-only model takes no images or PDFs), the host's partial override merged
    /// over it.
    pub fn for_call(
        provider: Provider,
        settings: &crate::settings::Settings,
        overrides: Option<&Value>,
    ) -> Result<Cow<'static, Capabilities>> {
        Capabilities::for_model(
            provider,
            Capabilities::text_only(provider, settings)?,
            overrides,
        )
    }

    /// [`Capabilities::for_call`] once whether the model is text-only is known.
    pub(crate) fn for_model(
        provider: Provider,
        text_only: bool,
        overrides: Option<&Value>,
    ) -> Result<Cow<'static, Capabilities>> {
        if !text_only {
            return Capabilities::with_override(provider, overrides);
        }
        let none: Value =
            serde_json::from_str(r#"{"images":{"mimes":[]},"pdf":{"mimes":[]},"max_images":0}"#)
                .unwrap_or_default();
        let c = Capabilities::defaults(provider).overridden(&none)?;
        match overrides.filter(|v| !v.is_null()) {
            None => Ok(Cow::Owned(c)),
            Some(v) => c.overridden(v).map(Cow::Owned),
        }
    }

    /// Whether the settings' model is known to take no images or PDFs.
    pub(crate) fn text_only(
        provider: Provider,
        settings: &crate::settings::Settings,
    ) -> Result<bool> {
        let row = crate::settings::row_of(settings, provider.spec().family)?;
        Ok(row.is_some_and(|r| !r.vision))
    }

    /// The provider default with a host's partial override merged over it.
    pub fn with_override(
        provider: Provider,
        overrides: Option<&Value>,
    ) -> Result<Cow<'static, Capabilities>> {
        let base = Capabilities::defaults(provider);
        match overrides.filter(|v| !v.is_null()) {
            None => Ok(Cow::Borrowed(base)),
            Some(o) => base.overridden(o).map(Cow::Owned),
        }
    }
}

/// The endpoint and headers for a body of `provider`.
pub fn target(provider: Provider, o: &TargetOptions) -> Result<Target> {
    let d = provider.dialect();
    let base = o
        .base_url
        .as_deref()
        .unwrap_or(d.spec().base_url)
        .trim_end_matches('/');
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            format!("the base URL must start with https:// or http:// (got `{base}`)"),
        )
        .at("base_url"));
    }
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    let url = d.endpoint(base, o, &mut headers)?;
    Ok(Target { url, headers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn override_merges_and_rejects_typos() {
        let c = Capabilities::with_override(
            Provider::Anthropic,
            Some(&json!({"images": {"max_bytes": 10}, "tool_routes": {"image/vnd.adobe.photoshop": "psd_to_png"}})),
        )
        .unwrap(); // ok: test
        assert_eq!(c.images.max_bytes, 10);
        assert_eq!(c.images.mimes.len(), 4);
        assert_eq!(
            c.tool_routes.get("image").map(String::as_str),
            Some("read_image")
        );
        assert_eq!(
            c.route("image/vnd.adobe.photoshop", crate::media::MediaClass::Image),
            Some("psd_to_png")
        );
        let e = Capabilities::with_override(Provider::Gemini, Some(&json!({"imagez": {}})))
            .unwrap_err();
        assert_eq!(e.code(), "InvalidOptions");
        let e = Capabilities::with_override(Provider::Gemini, Some(&json!(3))).unwrap_err();
        assert_eq!(e.code(), "InvalidOptions");
    }

    #[test]
    fn tool_kinds_are_read_and_checked() {
        let t = Tool::from_value(json!({"type": "custom", "name": "sql"}), 0).unwrap(); // ok: test
        assert!(matches!(t.kind, ToolKind::Custom { format: None }));
        let t = Tool::from_value(
            json!({"type": "provider", "provider": "gemini", "tool": {"googleSearch": {}}}),
            1,
        )
        .unwrap(); // ok: test
        assert_eq!(t.name, "googleSearch");
        let t = Tool::from_value(
            json!({"type": "provider", "provider": "anthropic", "tool": {"type": "web_search_20250305", "name": "web_search"}}),
            1,
        )
        .unwrap(); // ok: test
        assert_eq!(t.name, "web_search");
        for (bad, at) in [
            (json!({"type": "plugin", "name": "x"}), "tools[2].type"),
            (
                json!({"type": "provider", "provider": "anthropic"}),
                "tools[2].tool",
            ),
            (
                json!({"type": "provider", "provider": "mistral", "tool": {"type": "x"}}),
                "tools[2].provider",
            ),
            (json!({"type": "custom", "name": "a b"}), "tools[2].name"),
        ] {
            let e = Tool::from_value(bad, 2).unwrap_err();
            assert_eq!(e.code(), "InvalidOptions");
            assert_eq!(e.path(), Some(at), "{e}");
        }
    }

    #[test]
    fn families() {
        assert!(is_own(Provider::OpenAiChat, Some("openai")));
        assert!(is_own(Provider::OpenAiResponses, Some("openai-chat")));
        assert!(is_own(Provider::Gemini, Some("google")));
        assert!(!is_own(Provider::Anthropic, Some("gemini")));
        assert!(!is_own(Provider::Anthropic, Some("other")));
        assert!(is_own(Provider::Gemini, None));
    }
}
