//! The multipart user message of the compositor spec, and its wire form.
//!
//! ```json
//! { "role": "user",
//!   "parts": [ { "type": "text", "text": "…" }, { "type": "file-ref", "ref": { … } }, … ],
//!   "metadata": { "schema_version": 2 } }
//! ```
//!
//! Parts keep their order. A part whose `type` this version does not know is kept verbatim
//! ([`Part::Unknown`]) so that it survives a round trip, and is lowered by the spec's
//! forward-compatible rule. Parsing reports the JSON path of the first malformed field.

use crate::error::{Error, ErrorKind, Result};
use crate::fields::{At, Fields};
use crate::json_text::JsonText;
use serde_json::{Map, Value};

mod read;

/// The fast reader's answer alone (`None`: left to the JSON tree): for a caller that reads
/// other shapes too (a conversation's turn), and the fuzz oracle.
pub(crate) fn read_fast(text: &str) -> Option<UserMessage> {
    read::message(text)
}

/// The message schema version this library writes. Version 1 rows are read through the
/// read-time adapter in [`crate::versions`].
pub const SCHEMA_VERSION: u64 = 2;

/// A user message: ordered typed parts plus metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct UserMessage {
    /// The parts, in the order the user composed them.
    pub parts: Vec<Part>,
    /// `metadata.schema_version` and any other metadata keys (kept on round trip).
    pub metadata: Metadata,
}

/// Message metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// The shape version of the message (1 today).
    pub schema_version: u64,
    /// Other metadata keys, kept verbatim.
    pub extra: Map<String, Value>,
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata {
            schema_version: SCHEMA_VERSION,
            extra: Map::new(),
        }
    }
}

/// One part of a user message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `{ type: "text", text }`
    Text {
        /// The text, lowered verbatim.
        text: String,
    },
    /// `{ type: "file-ref", ref }` — a file in the workspace, body not inlined in the message.
    FileRef(FileRef),
    /// `{ type: "file-attachment", data | content_id, mime, name, size }`
    FileAttachment(FileAttachment),
    /// `{ type: "command", id, args, resolved? }` — must be resolved (by
    /// [`crate::compositor::submit()`]) before lowering.
    Command {
        /// The command id as typed, e.g. `/search`.
        id: String,
        /// The arguments: a string as typed, an array of positional strings, or an object of
        /// named values.
        args: Value,
        /// What the compositor resolved it to at submit time (persisted for replay).
        resolved: Option<Resolution>,
    },
    /// `{ type: "mention", target }`
    Mention(Mention),
    /// `{ type: "editor-context", kind, source?, payload, emitted_at }`
    EditorContext(EditorContext),
    /// A part type this version does not know, kept verbatim.
    Unknown(Value),
}

/// Where a file-ref points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefTarget {
    /// `{ kind: "path", path }` — a workspace path.
    Path(String),
    /// `{ kind: "url", url }`
    Url(String),
    /// `{ kind: "content-id", content_id }` — a blob in the host's content store.
    ContentId(String),
}

/// The unit of a [`Range`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeUnit {
    /// Lines, 1-based, both ends inclusive.
    Line,
    /// Bytes, 0-based, end exclusive.
    Byte,
}

/// A slice of a file: lines are 1-based and inclusive; bytes are 0-based, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First line (1-based) or first byte (0-based).
    pub start: u64,
    /// Last line (inclusive) or the byte after the last; `None` means a single line, or to the
    /// end of the file for bytes.
    pub end: Option<u64>,
    /// Lines (default) or bytes.
    pub unit: RangeUnit,
}

/// A reference to a file, optionally to a slice of it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRef {
    /// Where the file is.
    pub target: RefTarget,
    /// A display name (kept for content-id refs, whose id says nothing to a reader).
    pub name: Option<String>,
    /// The selected slice, if any.
    pub range: Option<Range>,
    /// A declared media type, if the host knows it.
    pub mime: Option<String>,
}

impl FileRef {
    /// The path, URL or content id as one display string.
    pub fn location(&self) -> &str {
        match &self.target {
            RefTarget::Path(p) | RefTarget::Url(p) | RefTarget::ContentId(p) => p,
        }
    }
}

/// The bytes of an attachment.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Base64 text, or a `data:` URL (base64 or percent-encoded).
    Inline(String),
    /// Bytes the host keeps outside wasm memory (the JS face does this for large
    /// attachments): the core sees only their head and length, the host splices them into
    /// the body. Wire form: `{ "$slot": n, "head": "<base64 prefix>", "len": <bytes>,
    /// "mime"?: "<from a data URL header>" }` where `len` is the decoded byte length.
    Host(HostData),
}

/// Large data held by the host; see [`Data::Host`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostData {
    /// The host's slot number.
    pub slot: u32,
    /// The first base64 characters (a multiple of 4), enough to sniff the type.
    pub head: String,
    /// The decoded length in bytes.
    pub len: u64,
    /// The media type from a `data:` URL header, if the data came as one.
    pub mime: Option<String>,
}

/// An attached file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileAttachment {
    /// The bytes, if inline.
    pub data: Option<Data>,
    /// A content id in the blob store, when the bytes were split out (wire, version 2:
    /// `blob: { content_id }`; version 1 had a top-level `content_id`).
    pub content_id: Option<String>,
    /// The declared media type.
    pub mime: Option<String>,
    /// The file name.
    pub name: Option<String>,
    /// The size in bytes, as declared.
    pub size: Option<u64>,
}

/// A mention: `@skill:…`, `@file:…` or another host entity.
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    /// `target.kind`: `skill`, `file`, or any host kind.
    pub kind: String,
    /// The whole target object, verbatim.
    pub target: Map<String, Value>,
    /// What the compositor resolved it to at submit time (persisted for replay).
    pub resolved: Option<Resolution>,
}

/// What a command or mention resolved to at submit time. Persisted inside the part (wire:
/// `resolved: { outcome, parts?, flags? }`) so that the inspector shows both the user's
/// token and its result, and a replay lowers the same parts without the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// Which of the spec's outcomes it was.
    pub outcome: Outcome,
    /// The parts the model sees in its place (none for a host action or a skill mention).
    pub parts: Vec<Part>,
    /// Structured flags for the host (e.g. `{ "intent": "search" }`).
    pub flags: Map<String, Value>,
}

/// The resolution outcomes of the compositor spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A host action executed before the message reaches the model; the model sees nothing.
    Action,
    /// Structured parts the model can act on.
    Parts,
    /// A command the catalog does not know: its original text, verbatim.
    PassThrough,
    /// A skill activation request; the skill loads through the skill flow.
    Skill,
    /// Nothing resolved (an unknown mention kind the host did not resolve): dropped.
    Dropped,
}

impl Outcome {
    /// The wire name (`action`, `parts`, `pass-through`, `skill`, `dropped`).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Action => "action",
            Outcome::Parts => "parts",
            Outcome::PassThrough => "pass-through",
            Outcome::Skill => "skill",
            Outcome::Dropped => "dropped",
        }
    }

    fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "action" => Outcome::Action,
            "parts" => Outcome::Parts,
            "pass-through" => Outcome::PassThrough,
            "skill" => Outcome::Skill,
            "dropped" => Outcome::Dropped,
            _ => return None,
        })
    }
}

impl Resolution {
    /// A resolution with no flags.
    pub fn new(outcome: Outcome, parts: Vec<Part>) -> Self {
        Resolution {
            outcome,
            parts,
            flags: Map::new(),
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("outcome".into(), self.outcome.name().into());
        if !self.parts.is_empty() {
            o.insert(
                "parts".into(),
                Value::Array(self.parts.iter().map(Part::to_value).collect()),
            );
        }
        if !self.flags.is_empty() {
            o.insert("flags".into(), Value::Object(self.flags.clone()));
        }
        Value::Object(o)
    }

    fn from_value(v: Value, path: &At<'_>) -> Result<Resolution> {
        let Value::Object(mut o) = v else {
            return Err(invalid(path.text(), "`resolved` must be an object"));
        };
        let mut f = Fields::at(&mut o, *path, ErrorKind::InvalidMessage);
        let name = f.string("outcome")?;
        let outcome = Outcome::parse(&name).ok_or_else(|| {
            invalid(
                At::Key(path, "outcome").text(),
                format!("unknown outcome `{name}` (expected action, parts, pass-through, skill or dropped)"),
            )
        })?;
        let parts = match f.take("parts") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(j, v)| Part::parse(v, &At::Index(&At::Key(path, "parts"), j)))
                .collect::<Result<Vec<_>>>()?,
            Some(_) => {
                return Err(invalid(
                    At::Key(path, "parts").text(),
                    "`parts` must be an array",
                ))
            }
        };
        let flags = f.opt_object("flags")?.unwrap_or_default();
        Ok(Resolution {
            outcome,
            parts,
            flags,
        })
    }
}

/// Host-contributed editor state.
#[derive(Debug, Clone, PartialEq)]
pub struct EditorContext {
    /// The discriminator: `selection`, `open`, `viewport`, `ref`, …
    pub kind: String,
    /// Which editor surface emitted it.
    pub source: Option<String>,
    /// Host-shaped payload, opaque to the library.
    pub payload: Value,
    /// When the host sampled it (epoch ms).
    pub emitted_at: Option<i64>,
}

impl UserMessage {
    /// A message of these parts with the current schema version.
    pub fn new(parts: Vec<Part>) -> Self {
        UserMessage {
            parts,
            metadata: Metadata::default(),
        }
    }

    /// Parses the wire form from JSON text.
    pub fn from_json(text: &str) -> Result<Self> {
        match read::message(text) {
            Some(m) => Ok(m),
            None => Self::from_json_tree(text),
        }
    }

    /// [`UserMessage::from_json`] through the JSON tree only (the fast reader's oracle).
    pub(crate) fn from_json_tree(text: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::json(ErrorKind::InvalidMessage, "message", &e)
                .with("line", e.line() as u64)
                .with("column", e.column() as u64)
        })?;
        Self::from_value(value)
    }

    /// Parses a JSON array of messages (a history for `lowerMany` / `lower-many`): one
    /// result per message, in order. Text that is not a JSON array is `InvalidMessage`.
    pub fn many_from_json(text: &str) -> Result<Vec<Result<Self>>> {
        if let Some(list) = read::messages(text) {
            return Ok(list.into_iter().map(Ok).collect());
        }
        Ok(array_values(text)?
            .into_iter()
            .map(UserMessage::from_value)
            .collect())
    }

    /// Parses the wire form from a JSON value. A message of an older `schema_version` is
    /// upgraded by the read-time adapter ([`crate::versions::upgrade`]) first.
    pub fn from_value(value: Value) -> Result<Self> {
        let Value::Object(mut obj) = value else {
            return Err(invalid("$", "a message must be an object"));
        };
        match obj.get("role") {
            None => {}
            Some(Value::String(r)) if r == "user" => {}
            Some(other) => {
                return Err(invalid("role", "role must be \"user\"").with("found", other.clone()))
            }
        }
        let mut metadata = match obj.remove("metadata") {
            None | Some(Value::Null) => Metadata::default(),
            Some(Value::Object(mut m)) => {
                let schema_version = match m.remove("schema_version") {
                    None => SCHEMA_VERSION,
                    Some(v) => v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                        invalid(
                            "metadata.schema_version",
                            "schema_version must be a positive integer",
                        )
                    })?,
                };
                if schema_version > SCHEMA_VERSION {
                    return Err(invalid(
                        "metadata.schema_version",
                        format!(
                            "schema_version {schema_version} is newer than this library reads ({SCHEMA_VERSION})"
                        ),
                    )
                    .with("supported", SCHEMA_VERSION));
                }
                Metadata {
                    schema_version,
                    extra: m,
                }
            }
            Some(_) => return Err(invalid("metadata", "metadata must be an object")),
        };
        let mut parts = match obj.remove("parts") {
            Some(Value::Array(items)) => items,
            Some(_) => return Err(invalid("parts", "parts must be an array")),
            None => return Err(invalid("parts", "a message needs a parts array")),
        };
        if metadata.schema_version < SCHEMA_VERSION {
            crate::versions::upgrade(metadata.schema_version, &mut parts);
            metadata.schema_version = SCHEMA_VERSION;
        }
        let parts = parts
            .into_iter()
            .enumerate()
            .map(|(i, v)| Part::from_value(v, i))
            .collect::<Result<Vec<_>>>()?;
        Ok(UserMessage { parts, metadata })
    }

    /// The parts the model sees, in order: a resolved command or mention stands for the parts
    /// it resolved to (none for a host action or a skill). Each item names the index of the
    /// message part it came from.
    pub fn model_parts(&self) -> Vec<(usize, &Part)> {
        let mut out = Vec::with_capacity(self.parts.len());
        for (i, p) in self.parts.iter().enumerate() {
            match p.resolution() {
                Some(r) => out.extend(r.parts.iter().map(|sub| (i, sub))),
                None => out.push((i, p)),
            }
        }
        out
    }

    /// The wire form as a JSON value (`role`, `parts`, `metadata`).
    pub fn to_value(&self) -> Value {
        let mut meta = self.metadata.extra.clone();
        meta.insert("schema_version".into(), self.metadata.schema_version.into());
        let mut obj = Map::new();
        obj.insert("role".into(), "user".into());
        obj.insert(
            "parts".into(),
            Value::Array(self.parts.iter().map(Part::to_value).collect()),
        );
        obj.insert("metadata".into(), Value::Object(meta));
        Value::Object(obj)
    }

    /// The wire form as JSON text.
    pub fn to_json(&self) -> String {
        self.to_value().json_text()
    }
}

/// A JSON array of messages as values (each read by [`UserMessage::from_value`]); anything
/// else is `InvalidMessage`.
pub(crate) fn array_values(text: &str) -> Result<Vec<Value>> {
    let value = serde_json::from_str(text)
        .map_err(|e| Error::json(ErrorKind::InvalidMessage, "the message", &e))?;
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(Error::new(
            ErrorKind::InvalidMessage,
            "messages must be a JSON array",
        )),
    }
}

fn invalid(path: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidMessage, msg).at(path)
}

impl Part {
    /// The `type` string of this part.
    pub fn type_name(&self) -> &str {
        match self {
            Part::Text { .. } => "text",
            Part::FileRef(_) => "file-ref",
            Part::FileAttachment(_) => "file-attachment",
            Part::Command { .. } => "command",
            Part::Mention(_) => "mention",
            Part::EditorContext(_) => "editor-context",
            Part::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// The compositor's resolution of a command or mention part, if it has one.
    pub fn resolution(&self) -> Option<&Resolution> {
        match self {
            Part::Command { resolved, .. } => resolved.as_ref(),
            Part::Mention(m) => m.resolved.as_ref(),
            _ => None,
        }
    }

    /// Parses one part; `index` is used for error paths.
    pub fn from_value(value: Value, index: usize) -> Result<Part> {
        Part::parse(value, &At::Index(&At::Text("parts"), index))
    }

    /// Parses one part found at the JSON path `path`.
    pub(crate) fn parse_at(value: Value, path: &str) -> Result<Part> {
        Part::parse(value, &At::Text(path))
    }

    /// Parses one part found at `path` (written out only for an error).
    fn parse(value: Value, path: &At<'_>) -> Result<Part> {
        let Value::Object(mut obj) = value else {
            return Err(invalid(path.text(), "a part must be an object"));
        };
        let ty = match obj.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ => {
                return Err(invalid(
                    At::Key(path, "type").text(),
                    "a part needs a string `type`",
                ))
            }
        };
        let mut f = Fields::at(&mut obj, *path, ErrorKind::InvalidMessage);
        let part = match ty.as_str() {
            "text" => Part::Text {
                text: f.string("text")?,
            },
            "file-ref" => {
                let r = match f.take("ref") {
                    Some(Value::Object(r)) => r,
                    _ => {
                        return Err(invalid(
                            At::Key(path, "ref").text(),
                            "a file-ref needs a `ref` object",
                        ))
                    }
                };
                Part::FileRef(file_ref_at(r, &At::Key(path, "ref"))?)
            }
            "file-attachment" => {
                let data = match f.take("data") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(Data::Inline(s)),
                    Some(Value::Object(o)) => {
                        Some(Data::Host(parse_host_data(o, &At::Key(path, "data"))?))
                    }
                    Some(_) => {
                        return Err(invalid(
                            At::Key(path, "data").text(),
                            "`data` must be a base64 string or a data URL",
                        ))
                    }
                };
                if f.take("content_id").is_some() {
                    return Err(invalid(
                        At::Key(path, "content_id").text(),
                        "`content_id` moved to `blob.content_id` in schema_version 2 (set metadata.schema_version to 1 to send the old shape)",
                    ));
                }
                let content_id = match f.opt_object("blob")? {
                    None => None,
                    Some(mut b) => {
                        let bpath = At::Key(path, "blob");
                        Some(
                            Fields::at(&mut b, bpath, ErrorKind::InvalidMessage)
                                .string("content_id")?,
                        )
                    }
                };
                Part::FileAttachment(FileAttachment {
                    data,
                    content_id,
                    mime: f.opt_string("mime")?,
                    name: f.opt_string("name")?,
                    size: f.opt_u64("size")?,
                })
            }
            "command" => Part::Command {
                id: f.string("id")?,
                args: f.take("args").unwrap_or(Value::Null),
                resolved: f
                    .take("resolved")
                    .map(|v| Resolution::from_value(v, &At::Key(path, "resolved")))
                    .transpose()?,
            },
            "mention" => match f.take("target") {
                Some(Value::Object(target)) => {
                    let kind = match target.get("kind") {
                        Some(Value::String(k)) => k.clone(),
                        _ => {
                            return Err(invalid(
                                At::Key(&At::Key(path, "target"), "kind").text(),
                                "a mention target needs a string `kind`",
                            ))
                        }
                    };
                    let resolved = f
                        .take("resolved")
                        .map(|v| Resolution::from_value(v, &At::Key(path, "resolved")))
                        .transpose()?;
                    Part::Mention(Mention {
                        kind,
                        target,
                        resolved,
                    })
                }
                _ => {
                    return Err(invalid(
                        At::Key(path, "target").text(),
                        "a mention needs a `target` object",
                    ))
                }
            },
            "editor-context" => {
                let kind = f.string("kind")?;
                let source = f.opt_string("source")?;
                let payload = match f.take_raw("payload") {
                    Some(v) => v,
                    None => {
                        return Err(invalid(
                            At::Key(path, "payload").text(),
                            "editor-context needs a `payload`",
                        ))
                    }
                };
                let emitted_at = match f.take("emitted_at") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_i64().ok_or_else(|| {
                        invalid(
                            At::Key(path, "emitted_at").text(),
                            "`emitted_at` must be an integer (epoch ms)",
                        )
                    })?),
                };
                Part::EditorContext(EditorContext {
                    kind,
                    source,
                    payload,
                    emitted_at,
                })
            }
            _ => Part::Unknown(Value::Object(obj)),
        };
        Ok(part)
    }

    /// The wire form of this part.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        let mut put = |k: &str, v: Value| {
            o.insert(k.to_owned(), v);
        };
        match self {
            Part::Unknown(v) => return v.clone(),
            Part::Text { text } => put("text", text.clone().into()),
            Part::FileRef(r) => put("ref", file_ref_value(r)),
            Part::FileAttachment(a) => {
                match &a.data {
                    Some(Data::Inline(s)) => put("data", s.clone().into()),
                    Some(Data::Host(h)) => {
                        let mut d = Map::new();
                        d.insert("$slot".into(), h.slot.into());
                        d.insert("head".into(), h.head.clone().into());
                        d.insert("len".into(), h.len.into());
                        if let Some(m) = &h.mime {
                            d.insert("mime".into(), m.clone().into());
                        }
                        put("data", Value::Object(d));
                    }
                    None => {}
                }
                if let Some(c) = &a.content_id {
                    let mut b = Map::new();
                    b.insert("content_id".into(), c.clone().into());
                    put("blob", Value::Object(b));
                }
                if let Some(m) = &a.mime {
                    put("mime", m.clone().into());
                }
                if let Some(n) = &a.name {
                    put("name", n.clone().into());
                }
                if let Some(s) = a.size {
                    put("size", s.into());
                }
            }
            Part::Command { id, args, resolved } => {
                put("id", id.clone().into());
                if !args.is_null() {
                    put("args", args.clone());
                }
                if let Some(r) = resolved {
                    put("resolved", r.to_value());
                }
            }
            Part::Mention(m) => {
                put("target", Value::Object(m.target.clone()));
                if let Some(r) = &m.resolved {
                    put("resolved", r.to_value());
                }
            }
            Part::EditorContext(c) => {
                put("kind", c.kind.clone().into());
                if let Some(s) = &c.source {
                    put("source", s.clone().into());
                }
                put("payload", c.payload.clone());
                if let Some(t) = c.emitted_at {
                    put("emitted_at", t.into());
                }
            }
        }
        o.insert("type".into(), self.type_name().to_owned().into());
        Value::Object(o)
    }
}

fn parse_host_data(mut o: Map<String, Value>, path: &At<'_>) -> Result<HostData> {
    let slot = o
        .get("$slot")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| invalid(path.text(), "`data` must be a base64 string or a data URL"))?;
    let mut f = Fields::at(&mut o, *path, ErrorKind::InvalidMessage);
    Ok(HostData {
        slot,
        head: f.string("head")?,
        len: f.opt_u64("len")?.unwrap_or(0),
        mime: f.opt_string("mime")?,
    })
}

/// Parses a file-ref's `ref` object (also used for `@file` mentions).
pub(crate) fn parse_file_ref(r: Map<String, Value>, path: &str) -> Result<FileRef> {
    file_ref_at(r, &At::Text(path))
}

/// Parses a file-ref's `ref` object found at `path` (written out only for an error).
pub(crate) fn file_ref_at(mut r: Map<String, Value>, path: &At<'_>) -> Result<FileRef> {
    let mut f = Fields::at(&mut r, *path, ErrorKind::InvalidMessage);
    let kind = f.opt_string("kind")?.unwrap_or_else(|| "path".into());
    let target = match kind.as_str() {
        "path" | "file" => RefTarget::Path(f.string("path")?),
        "url" => RefTarget::Url(f.string("url")?),
        "content-id" => RefTarget::ContentId(f.string("content_id")?),
        other => {
            return Err(invalid(
                At::Key(path, "kind").text(),
                format!("unknown ref kind `{other}` (expected path, url or content-id)"),
            ))
        }
    };
    let mime = f.opt_string("mime")?;
    let name = f.opt_string("name")?;
    let range = match f.take("range") {
        None | Some(Value::Null) => None,
        Some(Value::Object(mut ro)) => {
            let rpath = At::Key(path, "range");
            let mut rf = Fields::at(&mut ro, rpath, ErrorKind::InvalidMessage);
            let unit = match rf.opt_string("unit")?.as_deref() {
                None | Some("line") | Some("lines") => RangeUnit::Line,
                Some("byte") | Some("bytes") => RangeUnit::Byte,
                Some(u) => {
                    return Err(Error::new(
                        ErrorKind::InvalidRange,
                        format!("unknown range unit `{u}` (expected line or byte)"),
                    )
                    .at(At::Key(&rpath, "unit").text()))
                }
            };
            let start = rf.opt_u64("start")?.ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidRange,
                    "a range needs a non-negative integer `start`",
                )
                .at(At::Key(&rpath, "start").text())
            })?;
            let end = rf.opt_u64("end")?;
            if let Some(e) = end {
                if e < start {
                    return Err(Error::new(
                        ErrorKind::InvalidRange,
                        format!("range end {e} is before its start {start}"),
                    )
                    .at(rpath.text())
                    .with("start", start)
                    .with("end", e));
                }
            }
            Some(Range { start, end, unit })
        }
        Some(_) => {
            return Err(invalid(
                At::Key(path, "range").text(),
                "`range` must be an object",
            ))
        }
    };
    Ok(FileRef {
        target,
        name,
        range,
        mime,
    })
}

pub(crate) fn file_ref_value(r: &FileRef) -> Value {
    let mut o = Map::new();
    let (kind, key, val) = match &r.target {
        RefTarget::Path(p) => ("path", "path", p),
        RefTarget::Url(u) => ("url", "url", u),
        RefTarget::ContentId(c) => ("content-id", "content_id", c),
    };
    o.insert("kind".into(), kind.into());
    o.insert(key.into(), val.clone().into());
    if let Some(m) = &r.mime {
        o.insert("mime".into(), m.clone().into());
    }
    if let Some(n) = &r.name {
        o.insert("name".into(), n.clone().into());
    }
    if let Some(range) = r.range {
        let mut ro = Map::new();
        ro.insert("start".into(), range.start.into());
        if let Some(e) = range.end {
            ro.insert("end".into(), e.into());
        }
        if range.unit == RangeUnit::Byte {
            ro.insert("unit".into(), "byte".into());
        }
        o.insert("range".into(), Value::Object(ro));
    }
    Value::Object(o)
}
