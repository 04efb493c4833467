//! Submission: what the user composed → the resolved message that is persisted.
//!
//! [`submit`] is pure and runs in (at most) two steps. The first call, without answers,
//! resolves everything it can and returns [`Step::Needs`] with the questions only the host
//! can answer (an `@selection` payload, an MCP `prompts/get`, an entity the host knows);
//! the second call, with the answers, returns [`Step::Done`] with the [`Submission`]: the
//! persisted message (each command and mention keeps its token and carries its
//! `resolved` parts), the host actions to run, the skills to activate, warnings, and the
//! attachment blobs split out to the blob store. The stores write it; lowering reads it.

use super::catalog::CommandCatalog;
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::lower::Warning;
use crate::message::{EditorContext, FileAttachment, Mention, Part, UserMessage};
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
    /// The most parts one message may have (`LimitExceeded`). Default 1 000.
    pub max_parts: u64,
    /// The most text and attachment bytes one message may carry (`LimitExceeded`).
    /// Default 128 MiB.
    pub max_message_bytes: u64,
    /// The most attachment bytes one session may keep in the blob store
    /// (`LimitExceeded`; nothing of the message is stored). Default 1 GiB.
    pub max_session_blob_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            text_inline_max: 64 * 1024,
            blob_threshold: 1024 * 1024,
            session_inline_max: 20 * 1024 * 1024,
            max_attachment_bytes: 64 * 1024 * 1024,
            max_parts: 1000,
            max_message_bytes: 128 << 20,
            max_session_blob_bytes: 1 << 30,
        }
    }
}

/// The key of message `seq` of `session` (also its default id).
pub fn message_key(session: &str, seq: u64) -> String {
    format!("{session}/{seq:0SEQ_DIGITS$}")
}

/// The width of a message key's zero-padded sequence number (key order is turn order).
pub const SEQ_DIGITS: usize = 10;

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
        // `<session>/<ten digits>` is the form of default ids: a host id of that form could
        // take the id of a later message.
        if id.as_deref().is_some_and(|i| {
            i.rsplit_once('/')
                .is_some_and(|(_, n)| n.len() == 10 && n.bytes().all(|b| b.is_ascii_digit()))
        }) {
            return Err(f.error(
                "id",
                "ids of the form `<session>/<ten digits>` are the default ids; choose another form",
            ));
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
                ("max_parts", &mut limits.max_parts),
                ("max_message_bytes", &mut limits.max_message_bytes),
                ("max_session_blob_bytes", &mut limits.max_session_blob_bytes),
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
    /// Attachment bytes the session's messages keep in the blob store.
    pub blob_bytes: u64,
}

impl SessionState {
    /// Reads the stored `{ next_seq, inline_bytes, messages }`.
    pub fn from_value(v: &Value) -> SessionState {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        SessionState {
            next_seq: n("next_seq").max(1),
            inline_bytes: n("inline_bytes"),
            messages: n("messages"),
            blob_bytes: n("blob_bytes"),
        }
    }

    /// The stored form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("next_seq".into(), self.next_seq.into());
        o.insert("inline_bytes".into(), self.inline_bytes.into());
        o.insert("messages".into(), self.messages.into());
        if self.blob_bytes > 0 {
            o.insert("blob_bytes".into(), self.blob_bytes.into());
        }
        Value::Object(o)
    }

    /// The stored form's JSON text: what [`SessionState::to_value`] writes, written
    /// straight from the fields.
    pub fn to_json(&self) -> String {
        let mut w = crate::json_text::ObjectText::new(96);
        if self.blob_bytes > 0 {
            w.value("blob_bytes", &self.blob_bytes.into());
        }
        w.value("inline_bytes", &self.inline_bytes.into());
        w.value("messages", &self.messages.into());
        w.value("next_seq", &self.next_seq.into());
        w.finish()
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

impl Submission {
    /// What the host gets back, as JSON text: `{ actions, blobs: [{ content_id, mime, size
    /// }], id, seq, session, skills, warnings }` and the field `key` holding `json` (JSON
    /// text: the message, for a binding), every key in the order serde_json sorts them.
    pub fn summary_json(&self, key: &str, json: &str) -> String {
        let mut w = crate::json_text::ObjectText::new(256 + json.len());
        self.summary_into(&mut w, key, |w| w.raw(key, json));
        w.finish()
    }

    /// Writes what the host gets back besides the message into `w`, an open object:
    /// `{ actions, blobs: [{ content_id, mime, size }], id, seq, session, skills, warnings }`,
    /// the keys in the order serde_json sorts them, and the face's own field `key` (the
    /// message, the batch) written by `extra` where that key sorts among them.
    pub(crate) fn summary_into(
        &self,
        w: &mut crate::json_text::ObjectText,
        key: &str,
        extra: impl FnOnce(&mut crate::json_text::ObjectText),
    ) {
        let mut extra = Some(extra);
        let mut before = |w: &mut crate::json_text::ObjectText, next: &str| {
            if key < next {
                if let Some(f) = extra.take() {
                    f(w);
                }
            }
        };
        before(w, "actions");
        w.key("actions");
        w.array(&self.actions);
        before(w, "blobs");
        w.key("blobs");
        w.items(self.blobs.len(), |w, i| {
            if let Some(b) = self.blobs.get(i) {
                w.str("content_id", &b.content_id);
                w.str("mime", &b.mime);
                w.value("size", &b.size.into());
            }
        });
        before(w, "id");
        w.str("id", &self.id);
        before(w, "seq");
        w.value("seq", &self.seq.into());
        before(w, "session");
        w.str("session", &self.session);
        before(w, "skills");
        w.key("skills");
        w.array(&self.skills);
        before(w, "warnings");
        w.key("warnings");
        w.items(self.warnings.len(), |w, i| {
            if let Some(x) = self.warnings.get(i) {
                w.str("code", x.code);
                w.str("message", &x.message);
                w.value("part", &x.part.map_or(Value::Null, Value::from));
            }
        });
        // A key after every field's.
        if let Some(f) = extra.take() {
            f(w);
        }
    }
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
    let l = &options.limits;
    let limits = crate::limits::Limits {
        max_parts: usize::try_from(l.max_parts).unwrap_or(usize::MAX),
        max_message_bytes: l.max_message_bytes,
        ..crate::limits::Limits::default()
    };
    limits.check_message(message, "the message")?;
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
    let blob_bytes = session.blob_bytes + cx.blobs.iter().map(|b| b.size).sum::<u64>();
    if blob_bytes > l.max_session_blob_bytes {
        return Err(crate::limits::exceeded(
            "max_session_blob_bytes",
            l.max_session_blob_bytes,
            blob_bytes,
            &format!(
                "the blob bytes of session `{}` with this message",
                options.session
            ),
        ));
    }
    let seq = session.next_seq.max(1);
    let id = options
        .id
        .clone()
        .unwrap_or_else(|| message_key(&options.session, seq));
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
            blob_bytes,
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

/// The state of one submission, shared by the resolution of each part kind
/// ([`super::command`], [`super::mention`], [`super::attachment`]).
pub(super) struct Cx<'a> {
    pub(super) catalog: &'a CommandCatalog,
    pub(super) options: &'a SubmitOptions,
    pub(super) answers: Option<&'a Map<String, Value>>,
    pub(super) needs: Vec<HostRequest>,
    pub(super) actions: Vec<Value>,
    pub(super) skills: Vec<Value>,
    pub(super) warnings: Vec<Warning>,
    pub(super) blobs: Vec<Blob>,
    pub(super) inline_bytes: u64,
    /// On the first step, attachments are only checked; see [`submit`].
    pub(super) deferring: bool,
    /// Host slots whose data the core must read whole.
    pub(super) need_data: Vec<u32>,
}

impl Cx<'_> {
    /// Asks for a host slot's data; the part stays as it is until the next call.
    pub(super) fn need(&mut self, slot: u32, a: &FileAttachment) -> Part {
        if !self.need_data.contains(&slot) {
            self.need_data.push(slot);
        }
        Part::FileAttachment(a.clone())
    }

    pub(super) fn warn(&mut self, part: usize, code: &'static str, message: impl Into<String>) {
        self.warnings.push(Warning {
            part: Some(part),
            code,
            message: message.into(),
        });
    }

    /// The host's answer for a part: `Ok(None)` on the first call (the request is queued).
    pub(super) fn ask(&mut self, part: usize, request: Value) -> Option<Value> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The summary written field by field is the document its keys and values describe,
    /// with the face's own field in its sorted place; the state row is what its value tree
    /// writes.
    #[test]
    fn summaries_and_state_rows_write_their_documents() {
        let sub = Submission {
            id: "m \"1\"".into(),
            session: "s".into(),
            seq: 3,
            message: UserMessage::new(Vec::new()),
            actions: vec![json!({"part": 0, "command": "/x", "args": {"raw": "é"}})],
            skills: Vec::new(),
            warnings: vec![
                Warning {
                    part: Some(2),
                    code: "MimeMismatch",
                    message: "a \n b".into(),
                },
                Warning {
                    part: None,
                    code: "UnknownSkill",
                    message: String::new(),
                },
            ],
            blobs: vec![Blob {
                content_id: "sha256-ab".into(),
                mime: "image/png".into(),
                size: 12,
                data: "AAAA".into(),
            }],
            state: SessionState {
                next_seq: 4,
                inline_bytes: 10,
                messages: 3,
                blob_bytes: 0,
            },
        };
        let want = json!({
            "actions": [{"part": 0, "command": "/x", "args": {"raw": "é"}}],
            "blobs": [{"content_id": "sha256-ab", "mime": "image/png", "size": 12}],
            "id": "m \"1\"",
            "seq": 3,
            "session": "s",
            "skills": [],
            "warnings": [
                {"code": "MimeMismatch", "message": "a \n b", "part": 2},
                {"code": "UnknownSkill", "message": "", "part": null},
            ],
        });
        // The face's own field in its sorted place: first, between two, last.
        for (key, extra) in [
            ("a", json!(0)),
            ("batch", json!([1])),
            ("message", json!({"m": 1})),
            ("z", json!(null)),
        ] {
            let mut w = crate::json_text::ObjectText::new(0);
            sub.summary_into(&mut w, key, |w| w.value(key, &extra));
            let mut with = want.clone();
            with[key] = extra;
            assert_eq!(w.finish(), with.to_string(), "{key}");
        }
        let mut with = want.clone();
        with["message"] = json!({"parts": []});
        assert_eq!(
            sub.summary_json("message", r#"{"parts":[]}"#),
            with.to_string()
        );
        let mut state = sub.state;
        assert_eq!(state.to_json(), state.to_value().to_string());
        state.blob_bytes = 7;
        assert_eq!(state.to_json(), state.to_value().to_string());
    }
}
