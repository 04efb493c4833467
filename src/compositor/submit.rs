//! Submission: what the user composed → the resolved message that is persisted.
//!
//! [`submit`] is pure and runs in (at most) two steps. The first call, without answers,
//! resolves everything it can and returns [`Step::Needs`] with the questions only the host
//! can answer (an `@selection` payload, an MCP `prompts/get`, an entity the host knows);
//! the second call, with the answers, returns [`Step::Done`] with the [`Submission`]: the
//! persisted message (each command and mention keeps its token and carries its
//! `resolved` parts), the host actions to run, the skills to activate, warnings, and the
//! attachment blobs split out to the blob store. The stores write it; lowering reads it.

use super::catalog::{Command, CommandCatalog, CommandKind};
use super::template::{expand, split_args};
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::lower::Warning;
use crate::media::{self, MediaClass};
use crate::message::{
    parse_file_ref, Data, EditorContext, FileAttachment, FileRef, Mention, Outcome, Part,
    RefTarget, Resolution, UserMessage,
};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Size thresholds, all in decoded bytes (host config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Text attachments up to this size stay inline; larger ones become a content-id
    /// file-ref (the agent reads them with a tool). Default 64 KiB.
    pub text_inline_max: u64,
    /// Media attachments above this size go to the blob store. Default 1 MiB.
    pub blob_threshold: u64,
    /// Once a session holds this many inline attachment bytes, further attachments go to
    /// the blob store. Default 20 MiB.
    pub session_inline_max: u64,
    /// Attachments above this size are refused (`TooLarge`). Default 64 MiB.
    pub max_attachment_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            text_inline_max: 64 * 1024,
            blob_threshold: 1024 * 1024,
            session_inline_max: 20 * 1024 * 1024,
            max_attachment_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Options of one submission.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubmitOptions {
    /// The session (conversation) the message belongs to; default `default`.
    pub session: String,
    /// The message id; default `<session>/<seq>` (the store's next sequence number, ten digits).
    pub id: Option<String>,
    /// The host's clock (epoch ms): `metadata.submitted_at` and the `emitted_at` of
    /// editor context resolved now.
    pub now: Option<i64>,
    /// The skills that exist; a skill mention or trigger naming another is a warning.
    /// `None` accepts every name (the host checks).
    pub skills: Option<Vec<String>>,
    /// Size thresholds.
    pub limits: Limits,
}

impl SubmitOptions {
    /// Reads `{ session?, id?, now?, skills?, limits?: { text_inline_max, blob_threshold,
    /// session_inline_max, max_attachment_bytes } }`.
    pub fn from_value(v: Value) -> Result<SubmitOptions> {
        let mut o = match v {
            Value::Object(o) => o,
            Value::Null => Map::new(),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "submit options must be an object",
                ))
            }
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidOptions);
        let session = f.opt_string("session")?.unwrap_or_else(|| "default".into());
        if session.is_empty() || session.contains('\u{0}') {
            return Err(f.error(
                "session",
                "a session name must be non-empty text without NUL",
            ));
        }
        let id = f.opt_string("id")?;
        if id
            .as_deref()
            .is_some_and(|i| i.is_empty() || i.contains('\u{0}'))
        {
            return Err(f.error("id", "a message id must be non-empty text without NUL"));
        }
        let now = match f.take("now") {
            None => None,
            Some(n) => Some(
                n.as_i64()
                    .ok_or_else(|| f.error("now", "`now` must be an integer (epoch ms)"))?,
            ),
        };
        let skills = match f.opt_array("skills")? {
            None => None,
            Some(items) => Some(
                items
                    .into_iter()
                    .map(|s| match s {
                        Value::String(s) => Ok(s),
                        _ => Err(f.error("skills", "`skills` must be an array of names")),
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        let mut limits = Limits::default();
        if let Some(mut l) = f.opt_object("limits")? {
            let mut lf = Fields::new(&mut l, "limits", ErrorKind::InvalidOptions);
            for (key, slot) in [
                ("text_inline_max", &mut limits.text_inline_max),
                ("blob_threshold", &mut limits.blob_threshold),
                ("session_inline_max", &mut limits.session_inline_max),
                ("max_attachment_bytes", &mut limits.max_attachment_bytes),
            ] {
                if let Some(n) = lf.opt_u64(key)? {
                    *slot = n;
                }
            }
        }
        Ok(SubmitOptions {
            session,
            id,
            now,
            skills,
            limits,
        })
    }
}

/// What the store knows of a session before this message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionState {
    /// The sequence number the next message gets (1 for the first).
    pub next_seq: u64,
    /// Inline attachment bytes held by the session's messages.
    pub inline_bytes: u64,
    /// How many messages the session holds.
    pub messages: u64,
}

impl SessionState {
    /// Reads the stored `{ next_seq, inline_bytes, messages }`.
    pub fn from_value(v: &Value) -> SessionState {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        SessionState {
            next_seq: n("next_seq").max(1),
            inline_bytes: n("inline_bytes"),
            messages: n("messages"),
        }
    }

    /// The stored form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("next_seq".into(), self.next_seq.into());
        o.insert("inline_bytes".into(), self.inline_bytes.into());
        o.insert("messages".into(), self.messages.into());
        Value::Object(o)
    }
}

/// A question for the host: `{ part, type: "mention" | "resolve" | "prompt", … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRequest {
    /// The part index the answer is keyed by.
    pub part: usize,
    /// The request as the host sees it.
    pub request: Value,
}

/// An attachment's bytes, split out of the message.
#[derive(Debug, Clone, PartialEq)]
pub struct Blob {
    /// `sha256-<hex>` of the bytes.
    pub content_id: String,
    /// The media type.
    pub mime: String,
    /// The size in bytes.
    pub size: u64,
    /// The bytes, base64.
    pub data: String,
}

/// The result of a submission (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// The message id.
    pub id: String,
    /// The session.
    pub session: String,
    /// The sequence number in the session.
    pub seq: u64,
    /// The message to persist (and to lower).
    pub message: UserMessage,
    /// Host actions to run: `{ part, command, action, args: { raw, positional, named } }`.
    pub actions: Vec<Value>,
    /// Skill activation requests: `{ part, name, via: "mention" | "command", args? }`.
    pub skills: Vec<Value>,
    /// What the host should know (`MimeMismatch`, `UnresolvedMention`, `UnknownSkill`, …).
    pub warnings: Vec<Warning>,
    /// Attachment bytes for the blob store.
    pub blobs: Vec<Blob>,
    /// The session after this message.
    pub state: SessionState,
}

/// One step of [`submit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The host must answer these first; call again with the answers.
    Needs(Vec<HostRequest>),
    /// The core must read these host slots whole (to tell text from binary, or to hash a
    /// blob): call again with their data inline.
    NeedsData(Vec<u32>),
    /// Done.
    Done(Box<Submission>),
}

/// Resolves a message for persistence. `answers` (keyed by part index) is `None` on the
/// first call; a missing answer in the second call means the host had none.
pub fn submit(
    message: &UserMessage,
    catalog: &CommandCatalog,
    options: &SubmitOptions,
    session: SessionState,
    answers: Option<&Map<String, Value>>,
) -> Result<Step> {
    let mut cx = Cx {
        catalog,
        options,
        answers,
        needs: Vec::new(),
        actions: Vec::new(),
        skills: Vec::new(),
        warnings: Vec::new(),
        blobs: Vec::new(),
        inline_bytes: session.inline_bytes,
        deferring: true,
        need_data: Vec::new(),
    };
    let mut parts = Vec::with_capacity(message.parts.len());
    for (i, part) in message.parts.iter().enumerate() {
        parts.push(cx.part(i, part)?);
    }
    if !cx.needs.is_empty() {
        return Ok(Step::Needs(cx.needs));
    }
    if answers.is_none() {
        // No question for the host: classify the attachments now, in order.
        cx.deferring = false;
        for (i, part) in message.parts.iter().enumerate() {
            if let (Part::FileAttachment(a), Some(slot)) = (part, parts.get_mut(i)) {
                *slot = cx.attachment(i, a)?;
            }
        }
    }
    if !cx.need_data.is_empty() {
        return Ok(Step::NeedsData(cx.need_data));
    }
    let seq = session.next_seq.max(1);
    let id = options
        .id
        .clone()
        .unwrap_or_else(|| crate::store::messages::message_key(&options.session, seq));
    let mut metadata = message.metadata.clone();
    metadata.schema_version = crate::message::SCHEMA_VERSION;
    metadata.extra.insert("id".into(), id.clone().into());
    metadata
        .extra
        .insert("session".into(), options.session.clone().into());
    metadata.extra.insert("seq".into(), seq.into());
    if let Some(now) = options.now {
        metadata.extra.insert("submitted_at".into(), now.into());
    }
    Ok(Step::Done(Box::new(Submission {
        id,
        session: options.session.clone(),
        seq,
        message: UserMessage { parts, metadata },
        actions: cx.actions,
        skills: cx.skills,
        warnings: cx.warnings,
        blobs: cx.blobs,
        state: SessionState {
            next_seq: seq + 1,
            inline_bytes: cx.inline_bytes,
            messages: session.messages + 1,
        },
    })))
}

/// The content id of bytes: `sha256-` and the lower-case hex digest.
pub fn content_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256-");
    for b in digest.iter() {
        s.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        s.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
    }
    s
}

struct Cx<'a> {
    catalog: &'a CommandCatalog,
    options: &'a SubmitOptions,
    answers: Option<&'a Map<String, Value>>,
    needs: Vec<HostRequest>,
    actions: Vec<Value>,
    skills: Vec<Value>,
    warnings: Vec<Warning>,
    blobs: Vec<Blob>,
    inline_bytes: u64,
    /// On the first step, attachments are only checked; see [`submit`].
    deferring: bool,
    /// Host slots whose data the core must read whole.
    need_data: Vec<u32>,
}

/// Where an attachment's base64 is.
enum Src<'s> {
    /// In the message (checked, whitespace removed).
    Inline(std::borrow::Cow<'s, str>),
    /// Held by the host.
    Host(&'s crate::message::HostData),
}

/// Arguments as the command received them.
struct Args {
    raw: String,
    positional: Vec<String>,
    named: Map<String, Value>,
}

impl Args {
    fn parse(v: &Value, path: &str) -> Result<Args> {
        let at = |e: Error| e.at(path.to_owned());
        Ok(match v {
            Value::Null => Args {
                raw: String::new(),
                positional: Vec::new(),
                named: Map::new(),
            },
            Value::String(s) => Args {
                raw: s.trim().to_owned(),
                positional: split_args(s).map_err(at)?,
                named: Map::new(),
            },
            Value::Array(items) => {
                let positional: Vec<String> = items.iter().map(scalar_text).collect();
                Args {
                    raw: positional
                        .iter()
                        .map(|p| {
                            if p.contains(char::is_whitespace) {
                                format!("\"{p}\"")
                            } else {
                                p.clone()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    positional,
                    named: Map::new(),
                }
            }
            Value::Object(o) => {
                let mut named = o.clone();
                let raw = match named.remove("raw") {
                    Some(Value::String(s)) => s.trim().to_owned(),
                    _ => String::new(),
                };
                Args {
                    positional: split_args(&raw).map_err(at)?,
                    raw,
                    named,
                }
            }
            other => Args {
                raw: scalar_text(other),
                positional: vec![scalar_text(other)],
                named: Map::new(),
            },
        })
    }

    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("raw".into(), self.raw.clone().into());
        o.insert(
            "positional".into(),
            Value::Array(self.positional.iter().cloned().map(Value::String).collect()),
        );
        o.insert("named".into(), Value::Object(self.named.clone()));
        Value::Object(o)
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn text(t: String) -> Part {
    Part::Text { text: t }
}

impl Cx<'_> {
    /// Asks for a host slot's data; the part stays as it is until the next call.
    fn need(&mut self, slot: u32, a: &FileAttachment) -> Part {
        if !self.need_data.contains(&slot) {
            self.need_data.push(slot);
        }
        Part::FileAttachment(a.clone())
    }

    fn warn(&mut self, part: usize, code: &'static str, message: impl Into<String>) {
        self.warnings.push(Warning {
            part: Some(part),
            code,
            message: message.into(),
        });
    }

    /// The host's answer for a part: `Ok(None)` on the first call (the request is queued).
    fn ask(&mut self, part: usize, request: Value) -> Option<Value> {
        match self.answers {
            None => {
                self.needs.push(HostRequest { part, request });
                None
            }
            Some(a) => Some(a.get(&part.to_string()).cloned().unwrap_or(Value::Null)),
        }
    }

    fn part(&mut self, i: usize, part: &Part) -> Result<Part> {
        Ok(match part {
            Part::Command {
                id,
                args,
                resolved: None,
            } => {
                let resolved = self.command(i, id, args)?;
                Part::Command {
                    id: id.clone(),
                    args: args.clone(),
                    resolved,
                }
            }
            Part::Mention(m) if m.resolved.is_none() => {
                let resolved = self.mention(i, m)?;
                Part::Mention(Mention {
                    resolved,
                    ..m.clone()
                })
            }
            Part::FileAttachment(a) => self.attachment(i, a)?,
            Part::EditorContext(c) if c.emitted_at.is_none() && self.options.now.is_some() => {
                Part::EditorContext(EditorContext {
                    emitted_at: self.options.now,
                    ..c.clone()
                })
            }
            Part::Unknown(_) => {
                self.warn(
                    i,
                    "UnknownPartType",
                    format!(
                        "part type `{}` is unknown; it is kept as sent",
                        part.type_name()
                    ),
                );
                part.clone()
            }
            other => other.clone(),
        })
    }

    // ---- commands ----

    fn command(&mut self, i: usize, id: &str, raw_args: &Value) -> Result<Option<Resolution>> {
        let path = format!("parts[{i}].args");
        let args = Args::parse(raw_args, &path)?;
        let Some(cmd) = self.catalog.get(id) else {
            let mut t = if id.starts_with('/') {
                id.to_owned()
            } else {
                format!("/{id}")
            };
            if !args.raw.is_empty() {
                t.push(' ');
                t.push_str(&args.raw);
            }
            return Ok(Some(Resolution::new(Outcome::PassThrough, vec![text(t)])));
        };
        let cmd = cmd.clone();
        let values = self.argument_values(i, &cmd, &args)?;
        let lookup = |name: &str| -> Option<String> {
            values
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone())
                .or_else(|| args.named.get(name).map(scalar_text))
        };
        Ok(Some(match &cmd.kind {
            CommandKind::Action { action } => {
                let mut a = Map::new();
                a.insert("part".into(), i.into());
                a.insert("command".into(), format!("/{}", cmd.name).into());
                a.insert("action".into(), action.clone().into());
                a.insert("args".into(), args.to_value());
                self.actions.push(Value::Object(a));
                let mut r = Resolution::new(Outcome::Action, Vec::new());
                r.flags.insert("action".into(), action.clone().into());
                r
            }
            CommandKind::Intent { intent } => {
                let query = cmd
                    .arguments
                    .first()
                    .and_then(|a| lookup(&a.name))
                    .unwrap_or_else(|| args.raw.clone());
                let parts = if query.is_empty() {
                    Vec::new()
                } else {
                    vec![text(query.clone())]
                };
                let mut r = Resolution::new(Outcome::Parts, parts);
                r.flags.insert("intent".into(), intent.clone().into());
                r.flags.insert("query".into(), query.into());
                r
            }
            CommandKind::Template { body } => {
                let t = expand(
                    body,
                    &args.raw,
                    &args.positional,
                    cmd.arguments.len(),
                    &lookup,
                );
                let parts = if t.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![text(t)]
                };
                Resolution::new(Outcome::Parts, parts)
            }
            CommandKind::Skill { skill, body } => {
                if !self.skill_exists(i, skill) {
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let mut s = Map::new();
                s.insert("part".into(), i.into());
                s.insert("name".into(), skill.clone().into());
                s.insert("via".into(), "command".into());
                s.insert("args".into(), args.to_value());
                self.skills.push(Value::Object(s));
                let t = match body {
                    Some(b) => expand(b, &args.raw, &args.positional, cmd.arguments.len(), &lookup),
                    None => args.raw.clone(),
                };
                let parts = if t.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![text(t)]
                };
                let mut r = Resolution::new(Outcome::Skill, parts);
                r.flags.insert("skill".into(), skill.clone().into());
                r
            }
            CommandKind::Prompt { server, prompt } => {
                let mut req = Map::new();
                req.insert("type".into(), "prompt".into());
                req.insert("part".into(), i.into());
                req.insert("command".into(), format!("/{}", cmd.name).into());
                req.insert("server".into(), server.clone().into());
                req.insert("prompt".into(), prompt.clone().into());
                let mut named = Map::new();
                for (n, v) in &values {
                    if let Some(v) = v {
                        named.insert(n.clone(), v.clone().into());
                    }
                }
                req.insert("arguments".into(), Value::Object(named));
                let Some(answer) = self.ask(i, Value::Object(req)) else {
                    return Ok(None);
                };
                let parts = self.prompt_result(i, &cmd, answer)?;
                let mut r = Resolution::new(Outcome::Parts, parts);
                r.flags.insert("server".into(), server.clone().into());
                r.flags.insert("prompt".into(), prompt.clone().into());
                r
            }
        }))
    }

    /// Declared arguments with their values: named first, then positional in order. When
    /// more values were typed than declared, the last declared argument takes the rest of
    /// the text. A required argument without a value is a `MissingArgument` error.
    fn argument_values(
        &self,
        i: usize,
        cmd: &Command,
        args: &Args,
    ) -> Result<Vec<(String, Option<String>)>> {
        let mut values: Vec<(String, Option<String>)> = cmd
            .arguments
            .iter()
            .map(|a| (a.name.clone(), args.named.get(&a.name).map(scalar_text)))
            .collect();
        let mut pos = args.positional.iter();
        let open: Vec<usize> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.1.is_none())
            .map(|(k, _)| k)
            .collect();
        for (n, &k) in open.iter().enumerate() {
            if n + 1 == open.len() {
                let rest: Vec<&String> = pos.by_ref().collect();
                if !rest.is_empty() {
                    let joined = rest
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if let Some(slot) = values.get_mut(k) {
                        slot.1 = Some(joined);
                    }
                }
            } else if let Some(v) = pos.next() {
                if let Some(slot) = values.get_mut(k) {
                    slot.1 = Some(v.clone());
                }
            }
        }
        let missing: Vec<&str> = cmd
            .arguments
            .iter()
            .zip(&values)
            .filter(|(a, (_, v))| a.required && v.as_deref().is_none_or(str::is_empty))
            .map(|(a, _)| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            let usage = cmd.argument_hint.clone().unwrap_or_else(|| {
                cmd.arguments
                    .iter()
                    .map(|a| {
                        if a.required {
                            format!("<{}>", a.name)
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            return Err(Error::new(
                ErrorKind::MissingArgument,
                format!(
                    "/{} needs the argument{} {} (usage: /{} {usage})",
                    cmd.name,
                    if missing.len() > 1 { "s" } else { "" },
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    cmd.name
                ),
            )
            .at(format!("parts[{i}]"))
            .with("command", format!("/{}", cmd.name))
            .with(
                "missing",
                missing.iter().map(|m| Value::from(*m)).collect::<Vec<_>>(),
            ));
        }
        Ok(values)
    }

    /// An MCP `GetPromptResult` (`{ messages: [{ role, content }] }`) into parts.
    fn prompt_result(&mut self, i: usize, cmd: &Command, answer: Value) -> Result<Vec<Part>> {
        let fail = |why: String| {
            Error::new(
                ErrorKind::UnresolvedCommand,
                format!("/{}: {why}", cmd.name),
            )
            .at(format!("parts[{i}]"))
            .with("command", format!("/{}", cmd.name))
        };
        let messages = match answer {
            Value::Null => {
                return Err(fail(
                    "the host did not run the MCP prompt (no answer)".into(),
                ))
            }
            Value::Object(mut o) => {
                if let Some(e) = o.remove("error") {
                    return Err(fail(format!("the MCP prompt failed: {}", scalar_text(&e))));
                }
                match o.remove("messages") {
                    Some(Value::Array(m)) => m,
                    _ => return Err(fail("the prompt result has no `messages` array".into())),
                }
            }
            _ => return Err(fail("the prompt result must be an object".into())),
        };
        let mut parts = Vec::new();
        for (k, m) in messages.into_iter().enumerate() {
            if m.get("role").and_then(Value::as_str) == Some("assistant") {
                self.warn(
                    i,
                    "PromptRole",
                    format!("message {k} of the prompt has role assistant; sent as user content"),
                );
            }
            let Some(content) = m.get("content") else {
                continue;
            };
            let items: Vec<&Value> = match content {
                Value::Array(a) => a.iter().collect(),
                one => vec![one],
            };
            for c in items {
                let s = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
                match s("type").as_deref() {
                    Some("text") => {
                        if let Some(t) = s("text") {
                            parts.push(text(t));
                        }
                    }
                    Some("image") | Some("audio") => {
                        parts.push(Part::FileAttachment(FileAttachment {
                            data: s("data").map(Data::Inline),
                            mime: s("mimeType"),
                            ..FileAttachment::default()
                        }))
                    }
                    Some("resource") => {
                        let r = c.get("resource").cloned().unwrap_or(Value::Null);
                        let rs = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
                        if let Some(t) = rs("text") {
                            parts.push(text(t));
                        } else if let Some(b) = rs("blob") {
                            parts.push(Part::FileAttachment(FileAttachment {
                                data: Some(Data::Inline(b)),
                                mime: rs("mimeType"),
                                name: rs("uri"),
                                ..FileAttachment::default()
                            }));
                        }
                    }
                    Some("resource_link") => {
                        if let Some(uri) = s("uri") {
                            parts.push(Part::FileRef(FileRef {
                                target: RefTarget::Url(uri),
                                name: s("name"),
                                range: None,
                                mime: s("mimeType"),
                            }));
                        }
                    }
                    other => self.warn(
                        i,
                        "UnknownPartType",
                        format!(
                            "prompt content of type `{}` is not supported; skipped",
                            other.unwrap_or("?")
                        ),
                    ),
                }
            }
        }
        // Attachments inside a prompt result go through the same rules as typed ones.
        parts
            .into_iter()
            .map(|p| match p {
                Part::FileAttachment(a) => self.attachment(i, &a),
                p => Ok(p),
            })
            .collect()
    }

    // ---- mentions ----

    fn skill_exists(&mut self, i: usize, name: &str) -> bool {
        match &self.options.skills {
            Some(known) if !known.iter().any(|k| k == name) => {
                self.warn(
                    i,
                    "UnknownSkill",
                    format!("no skill named `{name}`; the mention is kept but activates nothing"),
                );
                false
            }
            _ => true,
        }
    }

    fn mention(&mut self, i: usize, m: &Mention) -> Result<Option<Resolution>> {
        let path = format!("parts[{i}].target");
        match m.kind.as_str() {
            "skill" => {
                let name = match m.target.get("name") {
                    Some(Value::String(n)) if !n.is_empty() => n.clone(),
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidMessage,
                            "a skill mention needs a `name`",
                        )
                        .at(format!("{path}.name")))
                    }
                };
                if !self.skill_exists(i, &name) {
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let mut s = Map::new();
                s.insert("part".into(), i.into());
                s.insert("name".into(), name.clone().into());
                s.insert("via".into(), "mention".into());
                self.skills.push(Value::Object(s));
                let mut r = Resolution::new(Outcome::Skill, Vec::new());
                r.flags.insert("skill".into(), name.into());
                Ok(Some(r))
            }
            "file" => {
                let mut t = m.target.clone();
                t.insert("kind".into(), "path".into());
                let r = parse_file_ref(t, &path)?;
                Ok(Some(Resolution::new(
                    Outcome::Parts,
                    vec![Part::FileRef(r)],
                )))
            }
            kind => {
                let editor = self.catalog.mention_kind(kind).is_some();
                let mut req = Map::new();
                req.insert(
                    "type".into(),
                    if editor { "mention" } else { "resolve" }.into(),
                );
                req.insert("part".into(), i.into());
                req.insert("kind".into(), kind.into());
                req.insert("target".into(), Value::Object(m.target.clone()));
                let Some(answer) = self.ask(i, Value::Object(req)) else {
                    return Ok(None);
                };
                if let Some(e) = answer
                    .get("error")
                    .filter(|_| answer.as_object().is_some_and(|o| o.len() == 1))
                {
                    self.warn(
                        i,
                        "ResolverFailed",
                        format!("resolving `@{kind}` failed: {}; dropped", scalar_text(e)),
                    );
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let items: Vec<Value> = match answer {
                    Value::Null => Vec::new(),
                    Value::Array(a) if editor => a,
                    other => vec![other],
                };
                if items.is_empty() {
                    self.warn(
                        i,
                        "UnresolvedMention",
                        format!("the host did not resolve `@{kind}`; dropped"),
                    );
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let parts = items
                    .into_iter()
                    .map(|item| {
                        let (payload, source, at) = match item {
                            Value::Object(mut o) if o.contains_key("payload") => (
                                o.remove("payload").unwrap_or(Value::Null),
                                o.remove("source")
                                    .and_then(|s| s.as_str().map(str::to_owned)),
                                o.remove("emitted_at").and_then(|t| t.as_i64()),
                            ),
                            other => (other, None, None),
                        };
                        Part::EditorContext(EditorContext {
                            kind: if editor {
                                kind.to_owned()
                            } else {
                                "ref".into()
                            },
                            source: if editor {
                                source
                            } else {
                                source.or_else(|| Some(kind.to_owned()))
                            },
                            payload,
                            emitted_at: at.or(self.options.now),
                        })
                    })
                    .collect();
                Ok(Some(Resolution::new(Outcome::Parts, parts)))
            }
        }
    }

    // ---- attachments ----

    fn attachment(&mut self, i: usize, a: &FileAttachment) -> Result<Part> {
        let path = format!("parts[{i}].data");
        // Where the base64 is: here, or held by the host (a slot: the first characters and
        // the length only; the host splices the rest into the rows).
        let (url_mime, src): (Option<String>, Src<'_>) = match &a.data {
            None => return Ok(Part::FileAttachment(a.clone())),
            Some(Data::Host(h)) => (h.mime.clone(), Src::Host(h)),
            Some(Data::Inline(raw)) => match media::parse_data_url(raw) {
                Some(d) if d.base64 => (
                    d.mime,
                    Src::Inline(media::clean_base64(d.payload).map_err(|e| e.at(path.clone()))?),
                ),
                Some(d) => (
                    d.mime,
                    Src::Inline(media::encode(&media::percent_decode(d.payload)).into()),
                ),
                None => (
                    None,
                    Src::Inline(media::clean_base64(raw).map_err(|e| e.at(path.clone()))?),
                ),
            },
        };
        let size = match &src {
            Src::Inline(b64) => {
                let pad = b64.bytes().rev().take(2).take_while(|c| *c == b'=').count() as u64;
                media::decoded_len(b64.len() as u64, pad)
            }
            Src::Host(h) => h.len,
        };
        let limits = self.options.limits;
        if size > limits.max_attachment_bytes {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "attachment {} is {size} bytes; the limit is {} (nothing was stored)",
                    a.name.as_deref().unwrap_or("(unnamed)"),
                    limits.max_attachment_bytes
                ),
            )
            .at(path)
            .with("size", size)
            .with("limit", limits.max_attachment_bytes));
        }
        if self.answers.is_none() && self.deferring {
            // First step: checked, not yet classified (that waits until no host question
            // is left, so a step that ends in questions does no wasted work).
            return Ok(Part::FileAttachment(a.clone()));
        }
        // The whole payload is decoded only when it must be read: to tell text from
        // binary when the first bytes prove no type, or to hash a blob. Data the host holds
        // is then asked for (the glue calls again with it inline).
        let head = match &src {
            Src::Inline(b64) => media::decode_head(b64),
            Src::Host(h) => media::decode_head(&h.head),
        };
        let sniffed = media::sniff(&head);
        let mut bytes = None;
        let textual = match (sniffed, &src) {
            (Some(_), _) => false,
            (None, Src::Host(h)) => return Ok(self.need(h.slot, a)),
            (None, Src::Inline(b64)) => {
                let b = media::decode(b64).map_err(|e| e.at(path.clone()))?;
                let t = media::looks_textual(&b);
                bytes = Some(b);
                t
            }
        };
        let declared = a
            .mime
            .as_deref()
            .map(media::normalize_mime)
            .or(url_mime)
            .or_else(|| {
                a.name
                    .as_deref()
                    .and_then(media::mime_from_name)
                    .map(str::to_owned)
            });
        let mime = match (&declared, sniffed) {
            (Some(d), Some(s)) if d != s => {
                self.warn(
                    i,
                    "MimeMismatch",
                    format!("declared `{d}` but the bytes are `{s}`; `{s}` is used"),
                );
                s.to_owned()
            }
            (_, Some(s)) => s.to_owned(),
            (Some(d), None) => {
                if media::class_of(d) == MediaClass::Text && !textual {
                    self.warn(
                        i,
                        "MimeMismatch",
                        format!("declared `{d}` but the bytes are not text; treated as binary"),
                    );
                    "application/octet-stream".to_owned()
                } else {
                    d.clone()
                }
            }
            (None, None) if textual => "text/plain".to_owned(),
            (None, None) => "application/octet-stream".to_owned(),
        };
        let class = media::class_of(&mime);
        let split = match class {
            MediaClass::Binary => true,
            MediaClass::Text => size > limits.text_inline_max,
            _ => {
                size > limits.blob_threshold || self.inline_bytes + size > limits.session_inline_max
            }
        };
        if !split {
            self.inline_bytes += size;
            return Ok(Part::FileAttachment(FileAttachment {
                data: Some(match src {
                    Src::Inline(b64) => Data::Inline(b64.into_owned()),
                    Src::Host(h) => Data::Host(h.clone()),
                }),
                content_id: None,
                mime: Some(mime),
                name: a.name.clone(),
                size: Some(size),
            }));
        }
        let b64 = match src {
            Src::Inline(b64) => b64,
            Src::Host(h) => return Ok(self.need(h.slot, a)),
        };
        let bytes = match bytes {
            Some(b) => b,
            None => media::decode(&b64).map_err(|e| e.at(path.clone()))?,
        };
        let cid = content_id(&bytes);
        if !self.blobs.iter().any(|b| b.content_id == cid) {
            self.blobs.push(Blob {
                content_id: cid.clone(),
                mime: mime.clone(),
                size,
                data: b64.into_owned(),
            });
        }
        if class == MediaClass::Text {
            return Ok(Part::FileRef(FileRef {
                target: RefTarget::ContentId(cid),
                name: a.name.clone(),
                range: None,
                mime: Some(mime),
            }));
        }
        Ok(Part::FileAttachment(FileAttachment {
            data: None,
            content_id: Some(cid),
            mime: Some(mime),
            name: a.name.clone(),
            size: Some(size),
        }))
    }
}
