//! The turns of a conversation and their wire form.
//!
//! ```json
//! [ { "role": "system", "parts": [ { "type": "text", "text": "…" } ] },
//!   { "role": "user", "parts": [ …the compositor's parts… ], "metadata": { … } },
//!   { "role": "assistant", "parts": [
//!       { "type": "reasoning", "text": "…", "signature": "…", "provider": "anthropic" },
//!       { "type": "text", "text": "…" },
//!       { "type": "tool-call", "id": "call_1", "name": "read_file", "input": { … },
//!         "kind"?: "custom" | "apply_patch" | …, "data"?: { …the provider's item… } } ] },
//!   { "role": "tool", "parts": [
//!       { "type": "tool-result", "call_id": "call_1", "name": "read_file",
//!         "output": "text" | any JSON | [ …parts… ], "is_error": false } ] } ]
//! ```
//!
//! A user turn is the compositor's [`UserMessage`], unchanged. Assistant and tool parts of a
//! type this version does not know are kept verbatim and survive a round trip. Every parse
//! error names the turn and the part (`turns[3].parts[1].call_id`).

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::message::{Part, UserMessage};
use serde_json::{Map, Value};

/// The conversation schema version this library writes (turn metadata `schema_version`).
/// Version 1 had only user turns; it is read unchanged.
pub const CONVERSATION_SCHEMA_VERSION: u64 = 3;

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// `{ role: "system" | "developer", parts: [{ type: "text", text }] }` (or `text`).
    System(SystemTurn),
    /// `{ role: "user", parts, metadata }`: the compositor's message.
    User(UserMessage),
    /// `{ role: "assistant", parts }`: what the model said.
    Assistant(AssistantTurn),
    /// `{ role: "tool", parts: [{ type: "tool-result", … }] }`: what the host's tools answered.
    Tool(ToolTurn),
}

/// Instructions given in the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemTurn {
    /// The instruction text.
    pub text: String,
    /// `role: "developer"` (OpenAI's name for instructions to reasoning models).
    pub developer: bool,
    /// Other metadata keys, kept verbatim.
    pub metadata: Map<String, Value>,
}

/// A model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    /// The parts, in the order the model produced them.
    pub parts: Vec<AssistantPart>,
    /// Metadata (model id, usage, …), kept verbatim.
    pub metadata: Map<String, Value>,
}

/// One part of an assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantPart {
    /// `{ type: "text", text, citations? }`
    Text {
        /// The visible text.
        text: String,
        /// The sources it cites, normalised (`{ type, url?, title?, file_id?, document?,
        /// cited_text?, start?, end?, provider, data }`: `start` / `end` the span of this
        /// text they support, in characters; `data` the provider's own citation).
        citations: Vec<Value>,
    },
    /// `{ type: "reasoning", text, signature?, redacted?, data?, id?, provider?, details? }`
    Reasoning(Reasoning),
    /// `{ type: "tool-call", id, name, input, signature?, provider? }`
    ToolCall(ToolCall),
    /// A part type this version does not know, kept verbatim.
    Unknown(Value),
}

/// Reasoning the model produced, with what its provider needs to accept it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Reasoning {
    /// The reasoning text (Anthropic `thinking`, an OpenAI summary, a Gemini thought).
    pub text: String,
    /// Anthropic's thinking signature, OpenAI's `encrypted_content`, Gemini's
    /// `thoughtSignature`.
    pub signature: Option<String>,
    /// Anthropic `redacted_thinking`: the opaque `data` is in [`Reasoning::data`].
    pub redacted: bool,
    /// The opaque content of redacted reasoning.
    pub data: Option<String>,
    /// The provider's item id (OpenAI Responses reasoning items: `rs_…`).
    pub id: Option<String>,
    /// Which provider produced it (`anthropic`, `openai`, `gemini`); signatures only
    /// travel back to the provider that made them.
    pub provider: Option<String>,
    /// The server's own reasoning items (OpenRouter's `reasoning_details`, merged as they
    /// streamed), sent back to a server that takes them (`compat`).
    pub details: Vec<Value>,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id, as the provider gave it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: an object (a string holding JSON is read as that JSON).
    pub input: Value,
    /// Gemini's `thoughtSignature` on a function call part.
    pub signature: Option<String>,
    /// Which provider produced it.
    pub provider: Option<String>,
    /// What kind of call it is when it is not a function call: `custom` (free-form text
    /// input), or a provider tool the host runs (`apply_patch`, `shell`, `local_shell`,
    /// `tool_search`, `mcp_approval`). Its result is written in the provider's own item
    /// type for that kind.
    pub kind: Option<String>,
    /// The provider's own item for the call, sent back verbatim to that provider.
    pub data: Option<Value>,
}

/// A turn of tool results.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolTurn {
    /// The parts: tool results (and unknown parts, kept).
    pub parts: Vec<ToolPart>,
    /// Metadata, kept verbatim.
    pub metadata: Map<String, Value>,
}

/// One part of a tool turn.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolPart {
    /// `{ type: "tool-result", call_id, name?, output, is_error? }`
    Result(ToolResult),
    /// A part type this version does not know, kept verbatim.
    Unknown(Value),
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name (taken from the call when absent).
    pub name: Option<String>,
    /// The output.
    pub output: ToolOutput,
    /// The tool failed; carried where the provider can say so.
    pub is_error: bool,
}

/// A tool's output.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A string (`output` holding a string).
    Text(String),
    /// Any other JSON value, whatever its shape (`output`): an array of objects with a
    /// `type` is data, not parts.
    Json(Value),
    /// Message parts: text, attachments (images, PDFs, …), file-refs (`content`, from
    /// schema version 3; a version 1 or 2 turn's `output` that is an array of objects with
    /// a string `type`).
    Parts(Vec<Part>),
}

impl Turn {
    /// The role name on the wire.
    pub fn role(&self) -> &'static str {
        match self {
            Turn::System(s) if s.developer => "developer",
            Turn::System(_) => "system",
            Turn::User(_) => "user",
            Turn::Assistant(_) => "assistant",
            Turn::Tool(_) => "tool",
        }
    }

    /// The turn's metadata keys (besides `schema_version`).
    pub fn metadata(&self) -> &Map<String, Value> {
        match self {
            Turn::User(m) => &m.metadata.extra,
            Turn::System(s) => &s.metadata,
            Turn::Assistant(a) => &a.metadata,
            Turn::Tool(t) => &t.metadata,
        }
    }

    /// The turn's metadata keys, to change (besides `schema_version`).
    pub fn metadata_mut(&mut self) -> &mut Map<String, Value> {
        match self {
            Turn::User(m) => &mut m.metadata.extra,
            Turn::System(s) => &mut s.metadata,
            Turn::Assistant(a) => &mut a.metadata,
            Turn::Tool(t) => &mut t.metadata,
        }
    }

    /// Parses a list of turns (a JSON array).
    pub fn list_from_value(value: Value) -> Result<Vec<Turn>> {
        let Value::Array(items) = value else {
            return Err(
                Error::new(ErrorKind::InvalidMessage, "turns must be an array").at("turns"),
            );
        };
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| Turn::from_value(v).map_err(|e| e.within(&format!("turns[{i}]"))))
            .collect()
    }

    /// Parses one turn; error paths are relative to the turn (`parts[1].call_id`).
    pub fn from_value(value: Value) -> Result<Turn> {
        let Value::Object(mut obj) = value else {
            return Err(invalid("$", "a turn must be an object"));
        };
        let role = match obj.get("role") {
            None => "user".to_owned(),
            Some(Value::String(r)) => r.clone(),
            Some(_) => return Err(invalid("role", "role must be a string")),
        };
        match role.as_str() {
            "user" => UserMessage::from_value(Value::Object(obj)).map(Turn::User),
            "system" | "developer" => {
                obj.remove("role");
                let metadata = metadata(&mut obj)?;
                let text = match (obj.remove("parts"), obj.remove("text")) {
                    (Some(Value::Array(parts)), None) => {
                        let mut text = String::new();
                        for (i, p) in parts.into_iter().enumerate() {
                            match p {
                                Value::Object(mut o) => {
                                    let mut f = Fields::new(
                                        &mut o,
                                        format!("parts[{i}]"),
                                        ErrorKind::InvalidMessage,
                                    );
                                    if f.opt_string("type")?.as_deref() != Some("text") {
                                        return Err(
                                            f.error("type", "a system turn holds text parts only")
                                        );
                                    }
                                    if !text.is_empty() {
                                        text.push_str("\n\n");
                                    }
                                    text.push_str(&f.string("text")?);
                                }
                                _ => {
                                    return Err(invalid(
                                        format!("parts[{i}]"),
                                        "a part must be an object",
                                    ))
                                }
                            }
                        }
                        text
                    }
                    (None, Some(Value::String(t))) => t,
                    _ => {
                        return Err(invalid(
                            "parts",
                            "a system turn needs a parts array of text parts (or a `text` string)",
                        ))
                    }
                };
                Ok(Turn::System(SystemTurn {
                    text,
                    developer: role == "developer",
                    metadata,
                }))
            }
            "assistant" => {
                obj.remove("role");
                let metadata = metadata(&mut obj)?;
                let parts = parts_of(&mut obj)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| assistant_part(v, &format!("parts[{i}]")))
                    .collect::<Result<_>>()?;
                Ok(Turn::Assistant(AssistantTurn { parts, metadata }))
            }
            "tool" => {
                obj.remove("role");
                let (metadata, version) = metadata_versioned(&mut obj)?;
                let parts = parts_of(&mut obj)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| tool_part(v, &format!("parts[{i}]"), version))
                    .collect::<Result<_>>()?;
                Ok(Turn::Tool(ToolTurn { parts, metadata }))
            }
            other => Err(invalid(
                "role",
                format!(
                    "unknown role `{other}` (expected user, assistant, tool, system or developer)"
                ),
            )),
        }
    }

    /// The wire form.
    pub fn to_value(&self) -> Value {
        match self {
            Turn::User(m) => m.to_value(),
            Turn::System(s) => {
                let mut text = Map::new();
                text.insert("type".into(), "text".into());
                text.insert("text".into(), s.text.clone().into());
                envelope(self.role(), vec![Value::Object(text)], &s.metadata)
            }
            Turn::Assistant(a) => a.to_value(),
            Turn::Tool(t) => envelope(
                "tool",
                t.parts.iter().map(ToolPart::to_value).collect(),
                &t.metadata,
            ),
        }
    }
}

fn envelope(role: &str, parts: Vec<Value>, meta: &Map<String, Value>) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), role.into());
    o.insert("parts".into(), Value::Array(parts));
    let mut m = meta.clone();
    m.insert("schema_version".into(), CONVERSATION_SCHEMA_VERSION.into());
    o.insert("metadata".into(), Value::Object(m));
    Value::Object(o)
}

fn invalid(path: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidMessage, msg).at(path)
}

fn metadata(obj: &mut Map<String, Value>) -> Result<Map<String, Value>> {
    metadata_versioned(obj).map(|(m, _)| m)
}

/// The metadata and the schema version the turn was written in (the current one when it
/// does not say).
fn metadata_versioned(obj: &mut Map<String, Value>) -> Result<(Map<String, Value>, u64)> {
    match obj.remove("metadata") {
        None | Some(Value::Null) => Ok((Map::new(), CONVERSATION_SCHEMA_VERSION)),
        Some(Value::Object(mut m)) => {
            let mut version = CONVERSATION_SCHEMA_VERSION;
            if let Some(v) = m.remove("schema_version") {
                match v.as_u64() {
                    Some(n) if (1..=CONVERSATION_SCHEMA_VERSION).contains(&n) => version = n,
                    _ => {
                        return Err(invalid(
                            "metadata.schema_version",
                            format!("schema_version must be an integer from 1 to {CONVERSATION_SCHEMA_VERSION}"),
                        ))
                    }
                }
            }
            Ok((m, version))
        }
        Some(_) => Err(invalid("metadata", "metadata must be an object")),
    }
}

fn parts_of(obj: &mut Map<String, Value>) -> Result<Vec<Value>> {
    match obj.remove("parts") {
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(invalid("parts", "parts must be an array")),
        None => Err(invalid("parts", "a turn needs a parts array")),
    }
}

fn type_of(obj: &Map<String, Value>, path: &str) -> Result<String> {
    match obj.get("type") {
        Some(Value::String(t)) => Ok(t.clone()),
        _ => Err(invalid(
            format!("{path}.type"),
            "a part needs a string `type`",
        )),
    }
}

fn assistant_part(v: Value, path: &str) -> Result<AssistantPart> {
    let Value::Object(mut o) = v else {
        return Err(invalid(path, "a part must be an object"));
    };
    let ty = type_of(&o, path)?;
    let keep = o.clone();
    let mut f = Fields::new(&mut o, path, ErrorKind::InvalidMessage);
    match ty.as_str() {
        "text" => Ok(AssistantPart::Text {
            text: f.string("text")?,
            citations: f
                .opt_array("citations")?
                .unwrap_or_default()
                .into_iter()
                .filter(Value::is_object)
                .collect(),
        }),
        "reasoning" => Ok(AssistantPart::Reasoning(Reasoning {
            text: f.opt_string("text")?.unwrap_or_default(),
            signature: f.opt_string("signature")?,
            redacted: f.opt_bool("redacted")?.unwrap_or(false),
            data: f.opt_string("data")?,
            id: f.opt_string("id")?,
            provider: f.opt_string("provider")?,
            details: f
                .opt_array("details")?
                .unwrap_or_default()
                .into_iter()
                .filter(Value::is_object)
                .collect(),
        })),
        "tool-call" => {
            let id = f.string("id")?;
            if id.is_empty() {
                return Err(f.error("id", "a tool call id must not be empty"));
            }
            let name = f.string("name")?;
            if name.is_empty() {
                return Err(f.error("name", "a tool call needs a tool name"));
            }
            let input = f.take("input").unwrap_or(Value::Object(Map::new()));
            Ok(AssistantPart::ToolCall(ToolCall {
                id,
                name,
                input,
                signature: f.opt_string("signature")?,
                provider: f.opt_string("provider")?,
                kind: f.opt_string("kind")?,
                data: f.take("data").filter(|d| d.is_object()),
            }))
        }
        _ => Ok(AssistantPart::Unknown(Value::Object(keep))),
    }
}

/// A tool turn's part. From schema version 3 a result's `output` is its text (a string) or
/// its JSON (anything else), and message parts go in `content`; a version 1 or 2 turn's
/// `output` that is an array of objects with a string `type` is read as parts, as it was
/// written.
fn tool_part(v: Value, path: &str, version: u64) -> Result<ToolPart> {
    let Value::Object(mut o) = v else {
        return Err(invalid(path, "a part must be an object"));
    };
    let ty = type_of(&o, path)?;
    if ty != "tool-result" {
        return Ok(ToolPart::Unknown(Value::Object(o)));
    }
    let mut f = Fields::new(&mut o, path, ErrorKind::InvalidMessage);
    let call_id = f.string("call_id")?;
    if call_id.is_empty() {
        return Err(f.error("call_id", "a tool result needs the id of its call"));
    }
    let name = f.opt_string("name")?;
    let is_error = f.opt_bool("is_error")?.unwrap_or(false);
    let parts = |items: Vec<Value>, key: &str| -> Result<ToolOutput> {
        Ok(ToolOutput::Parts(
            items
                .into_iter()
                .enumerate()
                .map(|(i, p)| Part::parse_at(p, &format!("{path}.{key}[{i}]")))
                .collect::<Result<_>>()?,
        ))
    };
    let output = match (f.take_raw("output"), f.take_raw("content")) {
        (Some(o), Some(_)) if !o.is_null() => {
            return Err(f.error(
                "content",
                "a tool result has an `output` (its text or JSON) or a `content` (message parts), not both",
            ))
        }
        (_, Some(Value::Array(items))) if version >= 3 => parts(items, "content")?,
        (_, Some(_)) if version >= 3 => {
            return Err(f.error("content", "`content` must be an array of message parts"))
        }
        (None | Some(Value::Null), _) => ToolOutput::Text(String::new()),
        (Some(Value::String(s)), _) => ToolOutput::Text(s),
        (Some(Value::Array(items)), _)
            if version < 3 && !items.is_empty() && items.iter().all(is_part) =>
        {
            parts(items, "output")?
        }
        (Some(v), _) => ToolOutput::Json(v),
    };
    Ok(ToolPart::Result(ToolResult {
        call_id,
        name,
        output,
        is_error,
    }))
}

fn is_part(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string)
}

impl AssistantTurn {
    /// The wire form (`{ role: "assistant", parts, metadata }`).
    pub fn to_value(&self) -> Value {
        envelope(
            "assistant",
            self.parts.iter().map(AssistantPart::to_value).collect(),
            &self.metadata,
        )
    }
}

impl AssistantPart {
    /// The wire form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        let mut put = |k: &str, v: Value| {
            o.insert(k.to_owned(), v);
        };
        match self {
            AssistantPart::Unknown(v) => return v.clone(),
            AssistantPart::Text { text, citations } => {
                put("type", "text".into());
                put("text", text.clone().into());
                if !citations.is_empty() {
                    put("citations", Value::Array(citations.clone()));
                }
            }
            AssistantPart::Reasoning(r) => {
                put("type", "reasoning".into());
                put("text", r.text.clone().into());
                opt(&mut put, "signature", &r.signature);
                if r.redacted {
                    put("redacted", true.into());
                }
                opt(&mut put, "data", &r.data);
                opt(&mut put, "id", &r.id);
                opt(&mut put, "provider", &r.provider);
                if !r.details.is_empty() {
                    put("details", Value::Array(r.details.clone()));
                }
            }
            AssistantPart::ToolCall(c) => {
                put("type", "tool-call".into());
                put("id", c.id.clone().into());
                put("name", c.name.clone().into());
                put("input", c.input.clone());
                opt(&mut put, "signature", &c.signature);
                opt(&mut put, "provider", &c.provider);
                opt(&mut put, "kind", &c.kind);
                if let Some(d) = &c.data {
                    put("data", d.clone());
                }
            }
        }
        Value::Object(o)
    }
}

fn opt(put: &mut impl FnMut(&str, Value), k: &str, v: &Option<String>) {
    if let Some(v) = v {
        put(k, v.clone().into());
    }
}

impl ToolPart {
    /// The wire form.
    pub fn to_value(&self) -> Value {
        match self {
            ToolPart::Unknown(v) => v.clone(),
            ToolPart::Result(r) => {
                let mut o = Map::new();
                o.insert("type".into(), "tool-result".into());
                o.insert("call_id".into(), r.call_id.clone().into());
                if let Some(n) = &r.name {
                    o.insert("name".into(), n.clone().into());
                }
                match &r.output {
                    ToolOutput::Text(t) => o.insert("output".into(), Value::String(t.clone())),
                    ToolOutput::Json(v) => o.insert("output".into(), v.clone()),
                    ToolOutput::Parts(p) => o.insert(
                        "content".into(),
                        Value::Array(p.iter().map(Part::to_value).collect()),
                    ),
                };
                if r.is_error {
                    o.insert("is_error".into(), true.into());
                }
                Value::Object(o)
            }
        }
    }
}
