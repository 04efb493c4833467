//! The message store's rows: which rows a submission becomes (a head row, one row per part,
//! its blobs, the session counters and an id row) and which an appended conversation turn
//! becomes.

use super::{Op, Table};
use crate::compositor::{SessionState, Submission, SubmitOptions};
use crate::conversation::Turn;
use crate::json_text::JsonText;
use serde_json::{Map, Value};

use crate::compositor::message_key;

/// The key of part `index` of the message stored under `key`.
pub(super) fn part_key(key: &str, index: usize) -> String {
    format!("{key}#{index:05}")
}

/// The rows of a submission, dependent rows first (blobs, parts), then the session
/// counters, the id row and the head that makes the message visible. The id and head rows
/// are inserts: a writer that laid the message out from a stale session row (another tab
/// took the sequence number) gets a conflict instead of overwriting.
pub fn batch(sub: &Submission) -> Vec<Op> {
    layout(sub).0
}

/// [`batch`], and the message's JSON text (byte-identical to
/// `sub.message.to_json()`): each part is written once and shared by both, so a large
/// attachment is escaped once, not once per copy.
pub fn layout(sub: &Submission) -> (Vec<Op>, String) {
    let key = message_key(&sub.session, sub.seq);
    let parts: Vec<String> = sub.message.parts.iter().map(part_json).collect();
    let mut ops = Vec::with_capacity(sub.blobs.len() + sub.message.parts.len() + 3);
    for b in &sub.blobs {
        let mut o = crate::json_text::ObjectText::new(64 + b.data.len());
        o.str("content_id", &b.content_id);
        o.str("data", &b.data);
        o.str("mime", &b.mime);
        o.value("size", &b.size.into());
        ops.push(Op::Put {
            table: Table::Blobs,
            key: b.content_id.clone(),
            value: o.finish(),
        });
    }
    ops.extend(message_rows(
        &key,
        parts.iter().map(String::as_str),
        &sub.session,
        &sub.state,
        &sub.id,
    ));
    let mut meta = sub.message.metadata.extra.clone();
    meta.insert(
        "schema_version".into(),
        sub.message.metadata.schema_version.into(),
    );
    let meta = Value::Object(meta).json_text();
    // `{"metadata":…,"parts":[…],"role":"user"}`, as `UserMessage::to_json` writes it.
    let message = format!(
        "{{\"metadata\":{meta},\"parts\":[{}],\"role\":\"user\"}}",
        parts.join(",")
    );
    let mut head = crate::json_text::ObjectText::new(128 + meta.len());
    head.str("id", &sub.id);
    head.raw("metadata", &meta);
    head.value("part_count", &sub.message.parts.len().into());
    head.value("seq", &sub.seq.into());
    head.str("session", &sub.session);
    ops.push(Op::Insert {
        table: Table::Messages,
        key,
        value: head.finish(),
    });
    (ops, message)
}

/// The rows every stored message has besides its head: one per part (the part's JSON
/// text), the session counters, and the id row (an insert: a taken id fails the batch).
pub(super) fn message_rows<'p>(
    key: &str,
    parts: impl Iterator<Item = &'p str>,
    session: &str,
    state: &SessionState,
    id: &str,
) -> Vec<Op> {
    let key_json = Value::String(key.to_owned()).json_text();
    let mut ops = Vec::new();
    for (i, p) in parts.enumerate() {
        // `{"index":…,"message":…,"part":…}`: the keys in the order serde_json sorts them.
        ops.push(Op::Put {
            table: Table::Parts,
            key: part_key(key, i),
            value: format!("{{\"index\":{i},\"message\":{key_json},\"part\":{p}}}"),
        });
    }
    ops.push(Op::Put {
        table: Table::Sessions,
        key: session.to_owned(),
        value: state.to_json(),
    });
    ops.push(Op::Insert {
        table: Table::Ids,
        key: id.to_owned(),
        value: key_json,
    });
    ops
}

/// A turn laid out for the store by [`append_turn`]: any role (the compositor's
/// [`crate::compositor::submit()`] is what resolves a user's message first).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnAppend {
    /// The turn id.
    pub id: String,
    /// The session.
    pub session: String,
    /// The sequence number in the session.
    pub seq: u64,
    /// The turn as stored (its metadata carries `id`, `session`, `seq`, `submitted_at`).
    pub turn: Turn,
    /// The session after this turn.
    pub state: SessionState,
    /// The turn was stored in this session before (by a submit, or an earlier append):
    /// nothing is written.
    pub stored: bool,
}

/// Places a turn (an assistant reply, tool results, an instruction) after the session's
/// last message; `options` gives the session, the id and the time as for a submission.
pub fn append_turn(turn: &Turn, options: &SubmitOptions, session: SessionState) -> TurnAppend {
    // A turn whose metadata names this session, its id and its sequence number was stored
    // here already (a submitted message appended to a conversation): it is not stored twice.
    let meta = turn.metadata();
    let stored_id = meta.get("id").and_then(Value::as_str);
    let stored_seq = meta.get("seq").and_then(Value::as_u64);
    if let (Some(id), Some(seq)) = (stored_id, stored_seq) {
        let same_session = meta.get("session").and_then(Value::as_str) == Some(&options.session);
        if same_session && options.id.as_deref().is_none_or(|i| i == id) {
            return TurnAppend {
                id: id.to_owned(),
                session: options.session.clone(),
                seq,
                turn: turn.clone(),
                state: session,
                stored: true,
            };
        }
    }
    let seq = session.next_seq.max(1);
    let id = options
        .id
        .clone()
        .unwrap_or_else(|| message_key(&options.session, seq));
    let mut turn = turn.clone();
    let meta = turn.metadata_mut();
    meta.insert("id".into(), id.clone().into());
    meta.insert("session".into(), options.session.clone().into());
    meta.insert("seq".into(), seq.into());
    if let Some(now) = options.now {
        meta.insert("submitted_at".into(), now.into());
    }
    TurnAppend {
        id,
        session: options.session.clone(),
        seq,
        turn,
        state: SessionState {
            next_seq: seq + 1,
            inline_bytes: session.inline_bytes,
            messages: session.messages + 1,
            blob_bytes: session.blob_bytes,
        },
        stored: false,
    }
}

/// Places `turns` after the session's last message, one after another (a branch's copy of
/// the turns it keeps, an imported thread): each gets the next sequence number. Turns
/// already stored in this session are passed over, as [`append_turn`] does. `options.id`
/// names one message: give it for one turn only.
pub fn append_turns(
    turns: &[Turn],
    options: &SubmitOptions,
    mut session: SessionState,
) -> Vec<TurnAppend> {
    turns
        .iter()
        .map(|t| {
            let a = append_turn(t, options, session);
            session = a.state;
            a
        })
        .collect()
}

/// The rows of several appended turns as one write: each turn's rows as [`turn_layout`]
/// lays them out, with the session counters written once, by the last turn (where a single
/// turn writes them). Also the turns' JSON texts.
pub fn turns_layout(appends: &[TurnAppend]) -> (Vec<Op>, Vec<String>) {
    let mut ops = Vec::new();
    let mut texts = Vec::with_capacity(appends.len());
    let last = appends.len().saturating_sub(1);
    for (i, a) in appends.iter().enumerate() {
        let (rows, text) = turn_layout(a);
        ops.extend(rows.into_iter().filter(|op| {
            i == last
                || !matches!(
                    op,
                    Op::Put {
                        table: Table::Sessions,
                        ..
                    }
                )
        }));
        texts.push(text);
    }
    (ops, texts)
}

/// The rows of an appended turn, as [`layout`] writes a submission's (parts, session
/// counters, the id row, then the head that makes it visible; the head names the role),
/// and the turn's JSON text.
pub fn turn_layout(a: &TurnAppend) -> (Vec<Op>, String) {
    let key = message_key(&a.session, a.seq);
    let value = a.turn.to_value();
    if a.stored {
        return (Vec::new(), value.json_text());
    }
    let empty = Vec::new();
    let parts = value
        .get("parts")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let texts: Vec<String> = parts.iter().map(Value::json_text).collect();
    let mut ops = message_rows(
        &key,
        texts.iter().map(String::as_str),
        &a.session,
        &a.state,
        &a.id,
    );
    let mut head = Map::new();
    head.insert("id".into(), a.id.clone().into());
    head.insert("session".into(), a.session.clone().into());
    head.insert("seq".into(), a.seq.into());
    head.insert("part_count".into(), parts.len().into());
    head.insert(
        "metadata".into(),
        value.get("metadata").cloned().unwrap_or(Value::Null),
    );
    if !matches!(a.turn, Turn::User(_)) {
        head.insert("role".into(), a.turn.role().into());
    }
    ops.push(Op::Insert {
        table: Table::Messages,
        key,
        value: Value::Object(head).json_text(),
    });
    (ops, value.json_text())
}

/// A part's JSON text, byte for byte what `part.to_value()` writes through serde_json
/// (keys in the order it sorts them), except attachment data the host holds (a slot): that
/// is written as the marker `"\u{1}n\u{1}"` with raw control bytes, which JSON text never
/// contains, for the host to splice its base64 in (as in a lowered body). Written from the
/// part's own fields, not through a copy of it as a value tree.
pub(super) fn part_json(p: &crate::message::Part) -> String {
    use crate::message::{Data, Part};
    let mut w = crate::json_text::ObjectText::new(64);
    match p {
        Part::Unknown(v) => return v.json_text(),
        Part::Text { text } => w.str("text", text),
        Part::FileRef(r) => w.value("ref", &crate::message::file_ref_value(r)),
        Part::FileAttachment(a) => {
            if let Some(c) = &a.content_id {
                w.open("blob");
                w.str("content_id", c);
                w.close();
            }
            match &a.data {
                Some(Data::Inline(d)) => w.str("data", d),
                Some(Data::Host(h)) => {
                    let mark = crate::frame::SLOT;
                    w.raw("data", &format!("\"{mark}{}{mark}\"", h.slot));
                }
                None => {}
            }
            if let Some(m) = &a.mime {
                w.str("mime", m);
            }
            if let Some(n) = &a.name {
                w.str("name", n);
            }
            if let Some(n) = a.size {
                w.value("size", &n.into());
            }
        }
        Part::Command { id, args, resolved } => {
            if !args.is_null() {
                w.value("args", args);
            }
            w.str("id", id);
            if let Some(r) = resolved {
                w.value("resolved", &r.to_value());
            }
        }
        Part::Mention(m) => {
            if let Some(r) = &m.resolved {
                w.value("resolved", &r.to_value());
            }
            w.map("target", &m.target);
        }
        Part::EditorContext(c) => {
            if let Some(t) = c.emitted_at {
                w.value("emitted_at", &t.into());
            }
            w.str("kind", &c.kind);
            w.value("payload", &c.payload);
            if let Some(src) = &c.source {
                w.str("source", src);
            }
        }
    }
    w.str("type", p.type_name());
    w.finish()
}
