//! Reading the message store's rows back: a message or turn assembled from its head and
//! part rows (through the read-time adapter, [`crate::versions`]), and the fast path that
//! writes a stored user message's JSON straight from rows in the canonical form this store
//! wrote (checked by a small scanner, falling back to the value tree for anything else).

use super::{bad_row, Table};
use crate::compositor::{Blob, SessionState};
use crate::conversation::Turn;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::message::UserMessage;
use serde_json::{Map, Value};

/// A stored turn of any role, in the current shape.
pub fn assemble_turn(key: &str, head: &str, parts: &[(String, String)]) -> Result<Turn> {
    let head_row = parse_row(Table::Messages, key, head)?;
    if head_role(&head_row) == "user" {
        return assemble(key, head, parts).map(Turn::User);
    }
    let count = head_row
        .get("part_count")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad_row(Table::Messages, key, "no part_count"))?;
    let parts = ordered_parts(key, count, parts)?;
    let mut t = Map::new();
    t.insert("role".into(), head_role(&head_row).into());
    t.insert("parts".into(), Value::Array(parts));
    t.insert(
        "metadata".into(),
        head_row.get("metadata").cloned().unwrap_or(Value::Null),
    );
    Turn::from_value(Value::Object(t)).map_err(|e| {
        Error::new(
            ErrorKind::StoreFailed,
            format!("the stored turn `{key}` is not readable: {e}"),
        )
        .with("key", key)
    })
}

/// The part values of message `key` in index order (every part present once).
pub(super) fn ordered_parts(
    key: &str,
    count: u64,
    parts: &[(String, String)],
) -> Result<Vec<Value>> {
    let count = part_count(key, count, parts.len())?;
    let mut slots: Vec<Option<Value>> = vec![None; count];
    for (pk, text) in parts {
        let mut row = parse_row(Table::Parts, pk, text)?;
        if row.get("message").and_then(Value::as_str) != Some(key) {
            continue;
        }
        let index = row
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad_row(Table::Parts, pk, "no index"))?;
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| slots.get_mut(i))
            .ok_or_else(|| bad_row(Table::Parts, pk, "index out of range"))?;
        *slot = row.remove("part");
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            p.ok_or_else(|| bad_row(Table::Messages, key, format!("part {i} is missing")))
        })
        .collect()
}

pub(super) fn parse_row(table: Table, key: &str, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(bad_row(table, key, "not a JSON object")),
        Err(e) => Err(bad_row(table, key, e)),
    }
}

/// A message from its head row and its part rows (any order; rows of other messages under
/// the same prefix are ignored). Older shapes are upgraded on the way out.
pub fn assemble(key: &str, head: &str, parts: &[(String, String)]) -> Result<UserMessage> {
    let head = parse_row(Table::Messages, key, head)?;
    if head_role(&head) != "user" {
        return Err(Error::new(
            ErrorKind::StoreFailed,
            format!(
                "the stored turn `{key}` is an {} turn, not a user message: read it with the thread",
                head_role(&head)
            ),
        )
        .with("key", key));
    }
    let count = head
        .get("part_count")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad_row(Table::Messages, key, "no part_count"))?;
    let parts = ordered_parts(key, count, parts)?;
    let mut msg = Map::new();
    msg.insert("role".into(), "user".into());
    msg.insert("parts".into(), Value::Array(parts));
    msg.insert(
        "metadata".into(),
        head.get("metadata").cloned().unwrap_or(Value::Null),
    );
    UserMessage::from_value(Value::Object(msg)).map_err(|e| {
        Error::new(
            ErrorKind::StoreFailed,
            format!("the stored message `{key}` is not readable: {e}"),
        )
        .with("key", key)
    })
}

/// A head's part count, checked against the rows there are (a corrupt count must not
/// allocate).
pub(super) fn part_count(key: &str, count: u64, rows: usize) -> Result<usize> {
    usize::try_from(count)
        .ok()
        .filter(|n| *n <= rows)
        .ok_or_else(|| {
            bad_row(
                Table::Messages,
                key,
                format!("part_count {count} but {rows} part rows"),
            )
        })
}

/// Like [`assemble`], but gives the message's JSON text. Rows of the current
/// `schema_version` in the canonical form compact JSON writes (no whitespace, keys in
/// order, only the escapes it writes, integers) are read without a tree and their text
/// used as written: for the rows this library wrote, byte for byte what
/// [`UserMessage::to_json`] gives for the assembled message. Other rows go through
/// [`assemble`] and the read-time adapter.
pub fn assemble_json(key: &str, head: &str, parts: &[(String, String)]) -> Result<String> {
    if let Some(json) = canonical_user_json(key, head, parts) {
        return json;
    }
    let head_row = parse_row(Table::Messages, key, head)?;
    if head_role(&head_row) != "user" {
        return assemble_turn(key, head, parts).map(|t| t.to_value().json_text());
    }
    assemble(key, head, parts).map(|m| m.to_json())
}

/// The JSON text of a user message of the current `schema_version` whose rows are all in
/// canonical form (see [`Canon`]), or `None` for [`assemble`]. The rows' own text is used
/// as it stands (the metadata, each part): a canonical text is what writing its value
/// again gives. The rows are checked as [`assemble`] checks them (every part present once,
/// each an object), with the same errors; a part's fields are not (as `assemble` would
/// not have refused a part this library wrote).
fn canonical_user_json(
    key: &str,
    head: &str,
    parts: &[(String, String)],
) -> Option<Result<String>> {
    let h = canonical_head(head)?;
    if h.version != Some(crate::message::SCHEMA_VERSION) {
        return None;
    }
    let count = h.part_count?;
    let mut rows = Vec::with_capacity(parts.len());
    for (pk, text) in parts {
        rows.push((pk.as_str(), canonical_part_row(text)?));
    }
    Some(user_json_rows(key, h.metadata, count, &rows))
}

/// A message's JSON from its metadata text and its part rows (see [`canonical_user_json`]).
fn user_json_rows(
    key: &str,
    meta: &str,
    count: u64,
    rows: &[(&str, PartRowIn<'_>)],
) -> Result<String> {
    let count = part_count(key, count, rows.len())?;
    let mut slots: Vec<Option<&str>> = vec![None; count];
    for (pk, row) in rows {
        if row.message != Some(key) {
            continue;
        }
        let index = row
            .index
            .ok_or_else(|| bad_row(Table::Parts, pk, "no index"))?;
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| slots.get_mut(i))
            .ok_or_else(|| bad_row(Table::Parts, pk, "index out of range"))?;
        *slot = row.part;
    }
    let len = rows
        .iter()
        .map(|(_, r)| r.part.map_or(0, str::len) + 1)
        .sum::<usize>();
    let mut out = String::with_capacity(len + meta.len() + 40);
    out.push_str("{\"metadata\":");
    out.push_str(meta);
    out.push_str(",\"parts\":[");
    for (i, p) in slots.into_iter().enumerate() {
        let p = p.ok_or_else(|| bad_row(Table::Messages, key, format!("part {i} is missing")))?;
        if i > 0 {
            out.push(',');
        }
        out.push_str(p);
    }
    out.push_str("],\"role\":\"user\"}");
    Ok(out)
}

/// What a canonical head row says (see [`canonical_head`]).
struct CanonicalHead<'a> {
    /// The metadata object's text.
    metadata: &'a str,
    /// Its `schema_version`.
    version: Option<u64>,
    /// The row's `part_count`.
    part_count: Option<u64>,
}

/// A user message's head row in canonical form (see [`Canon`]), or `None`. A row that
/// names a role is some other turn's (the user role is the default).
fn canonical_head(head: &str) -> Option<CanonicalHead<'_>> {
    let mut c = Canon { text: head, at: 0 };
    let mut out = CanonicalHead {
        metadata: "",
        version: None,
        part_count: None,
    };
    c.object(0, |c, key| {
        match key {
            "metadata" => {
                let start = c.at;
                c.object(1, |c, key| {
                    if key == "schema_version" {
                        out.version = Some(c.integer()?);
                        Some(())
                    } else {
                        c.value(2)
                    }
                })?;
                out.metadata = head.get(start..c.at)?;
            }
            "part_count" => out.part_count = Some(c.integer()?),
            "role" => return None,
            _ => c.value(1)?,
        }
        Some(())
    })?;
    (c.at == head.len() && !out.metadata.is_empty()).then_some(out)
}

/// What a canonical part row says: `{"index":…,"message":…,"part":…}`.
struct PartRowIn<'a> {
    index: Option<u64>,
    /// The message key (a key with an escape is not taken).
    message: Option<&'a str>,
    /// The part's text.
    part: Option<&'a str>,
}

/// A part row in canonical form (see [`Canon`]), or `None`.
fn canonical_part_row(text: &str) -> Option<PartRowIn<'_>> {
    let mut c = Canon { text, at: 0 };
    let mut row = PartRowIn {
        index: None,
        message: None,
        part: None,
    };
    c.object(0, |c, key| {
        match key {
            "index" => row.index = Some(c.integer()?),
            "message" => row.message = Some(c.string(false)?),
            // A part that is not an object is left to the tree reader (which refuses it).
            "part" => {
                let start = c.at;
                c.object(1, |c, _| c.value(2))?;
                row.part = Some(text.get(start..c.at)?);
            }
            _ => c.value(1)?,
        }
        Some(())
    })?;
    (c.at == text.len()).then_some(row)
}

/// Whether `text` is one JSON value in canonical form (see [`Canon`]): the fuzz oracle's
/// question (such a text must be what writing its value again gives).
pub(crate) fn canonical_value(text: &str) -> bool {
    let mut c = Canon { text, at: 0 };
    c.value(0).is_some() && c.at == text.len()
}

/// The deepest nesting read in canonical form (deeper goes through the tree; the message
/// reader's own limit).
const CANON_DEPTH: usize = 48;

/// A position in a stored row, reading JSON only in the canonical form compact JSON writes
/// (serde_json's): no whitespace, an object's keys in increasing order (as a sorted map
/// writes them, none twice), strings with only the escapes it writes, integers of up to
/// 18 digits with no leading zero and no `-0`, nesting up to [`CANON_DEPTH`]. A text read
/// this way is byte for byte what writing its value again gives; anything else (a float,
/// `\/`, `\u0041`, a space) answers `None`, for the tree reader.
struct Canon<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Canon<'a> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.byte()? == b).then(|| self.at += 1)
    }

    /// A string's text between its quotes; escapes only if `escapes`, and only those
    /// compact JSON writes (`\"` `\\` `\b` `\f` `\n` `\r` `\t`, and `\u00xx` in lower-case
    /// hex for the other control characters).
    fn string(&mut self, escapes: bool) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.byte()? {
                b'"' => break,
                b'\\' if escapes => {
                    let b = self.text.as_bytes();
                    let n = match b.get(self.at + 1)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' => match b.get(self.at + 2..self.at + 6)? {
                            // These have a short form.
                            [b'0', b'0', b'0', b'8' | b'9' | b'a' | b'c' | b'd'] => return None,
                            [b'0', b'0', b'0' | b'1', b'0'..=b'9' | b'a'..=b'f'] => 6,
                            _ => return None,
                        },
                        _ => return None,
                    };
                    self.at += n;
                }
                b'\\' | 0..0x20 => return None,
                _ => self.at += 1,
            }
        }
        let s = self.text.get(start..self.at)?;
        self.at += 1;
        Some(s)
    }

    /// An integer as compact JSON writes one: no sign, no leading zero, at most 18 digits.
    fn integer(&mut self) -> Option<u64> {
        let start = self.at;
        let mut n = 0u64;
        while let Some(d @ b'0'..=b'9') = self.byte() {
            // Wrapping: a longer run (whose value is not used) must not overflow.
            n = n.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            self.at += 1;
        }
        let len = self.at - start;
        let zero_led = len > 1 && self.text.as_bytes().get(start) == Some(&b'0');
        (matches!(len, 1..=18) && !zero_led).then_some(n)
    }

    /// The items of an array or an object up to `close` (its opening next), `item` reading
    /// each.
    fn items(
        &mut self,
        depth: usize,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if depth > CANON_DEPTH {
            return None;
        }
        self.at += 1;
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            match self.byte()? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An object whose keys (with no escape) come in strictly increasing order, `field`
    /// reading each value.
    fn object(
        &mut self,
        depth: usize,
        mut field: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        if self.byte()? != b'{' {
            return None;
        }
        let mut last: Option<&str> = None;
        self.items(depth, b'}', |c| {
            let key = c.string(false)?;
            if last.is_some_and(|l| l >= key) {
                return None;
            }
            last = Some(key);
            c.eat(b':')?;
            field(c, key)
        })
    }

    /// Any value.
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.byte()? {
            b'"' => self.string(true).map(drop),
            b'{' => self.object(depth, |c, _| c.value(depth + 1)),
            b'[' => self.items(depth, b']', |c| c.value(depth + 1)),
            b'-' => {
                self.at += 1;
                // `-0` is written `0`.
                (self.integer()? != 0).then_some(())
            }
            b't' | b'f' | b'n' => {
                let rest = self.text.get(self.at..)?;
                let n = if rest.starts_with("true") || rest.starts_with("null") {
                    4
                } else if rest.starts_with("false") {
                    5
                } else {
                    return None;
                };
                self.at += n;
                Some(())
            }
            _ => self.integer().map(drop),
        }
    }
}

/// [`assemble_json`] over many messages (see [`assemble_many`]): a JSON array.
pub fn assemble_many_json(
    heads: &[(String, String)],
    parts: &[(String, String)],
) -> Result<String> {
    many_json(heads, parts, false)
}

/// [`assemble_many_json`] of the user messages alone (a history read): the heads of other
/// roles are left out, each head read once.
pub fn assemble_history_json(
    heads: &[(String, String)],
    parts: &[(String, String)],
) -> Result<String> {
    many_json(heads, parts, true)
}

pub(super) fn many_json(
    heads: &[(String, String)],
    parts: &[(String, String)],
    users_only: bool,
) -> Result<String> {
    let mut out = String::from("[");
    for (key, head, rows) in group(heads, parts) {
        if let Some(json) = canonical_user_json(key, head, rows) {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&json?);
            continue;
        }
        let head_row = parse_row(Table::Messages, key, head)?;
        let json = if head_role(&head_row) == "user" {
            assemble(key, head, rows)?.to_json()
        } else if users_only {
            continue;
        } else {
            assemble_turn(key, head, rows)?.to_value().json_text()
        };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&json);
    }
    out.push(']');
    Ok(out)
}

/// Stored rows as (key, value) pairs.
type Rows = [(String, String)];

/// One message's rows: its key, its head row, its part rows.
type Grouped<'a> = (&'a str, &'a str, &'a Rows);

/// Pairs each head with its part rows (part rows sort under their message key).
pub(super) fn group<'a>(
    heads: &'a [(String, String)],
    parts: &'a [(String, String)],
) -> Vec<Grouped<'a>> {
    let mut out = Vec::with_capacity(heads.len());
    let mut at = 0usize;
    for (key, head) in heads {
        let prefix = format!("{key}#");
        while parts
            .get(at)
            .is_some_and(|(k, _)| k.as_str() < prefix.as_str())
        {
            at += 1;
        }
        let start = at;
        while parts.get(at).is_some_and(|(k, _)| k.starts_with(&prefix)) {
            at += 1;
        }
        out.push((
            key.as_str(),
            head.as_str(),
            parts.get(start..at).unwrap_or_default(),
        ));
    }
    out
}

/// Many messages at once: heads and all part rows of a session (what a history read gets
/// from two range reads). Messages come back in key (sequence) order.
pub fn assemble_many(
    heads: &[(String, String)],
    parts: &[(String, String)],
) -> Result<Vec<UserMessage>> {
    group(heads, parts)
        .into_iter()
        .map(|(key, head, rows)| assemble(key, head, rows))
        .collect()
}

/// The heads of `session` among rows read with the prefix `<session>/` (which also finds
/// the heads of a session named `<session>/more`).
pub fn session_heads(session: &str, heads: Vec<(String, String)>) -> Vec<(String, String)> {
    let n = session.len() + 1;
    heads
        .into_iter()
        .filter(|(k, _)| {
            k.starts_with(session) && k.get(n..).is_some_and(|rest| !rest.contains('/'))
        })
        .collect()
}

/// A commit's failure, where the id row's insert found the id taken: the caller's id is
/// the mistake (`InvalidOptions` at `id`); any other failure as it is.
/// The counters a session row holds (`None`: a new session, starting at sequence 1).
pub fn session_state(session: &str, row: Option<&str>) -> Result<SessionState> {
    Ok(match row {
        Some(text) => {
            SessionState::from_value(&Value::Object(parse_row(Table::Sessions, session, text)?))
        }
        None => SessionState::from_value(&Value::Null),
    })
}

/// A blob row back as a [`Blob`].
pub fn blob_from_row(key: &str, text: &str) -> Result<Blob> {
    let row = parse_row(Table::Blobs, key, text)?;
    let s = |k: &str| row.get(k).and_then(Value::as_str).map(str::to_owned);
    Ok(Blob {
        content_id: s("content_id").unwrap_or_else(|| key.to_owned()),
        mime: s("mime").unwrap_or_else(|| "application/octet-stream".into()),
        size: row.get("size").and_then(Value::as_u64).unwrap_or(0),
        data: s("data").ok_or_else(|| bad_row(Table::Blobs, key, "no data"))?,
    })
}

/// The role a head row names (`user` when it names none: rows written before
/// conversations).
pub(super) fn head_role(head: &Map<String, Value>) -> &str {
    head.get("role").and_then(Value::as_str).unwrap_or("user")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::message_rows::part_json;

    /// The tree reader's answer for a user message's rows (what the canonical path must
    /// match).
    fn by_tree(key: &str, head: &str, parts: &[(String, String)]) -> Result<String> {
        assemble(key, head, parts).map(|m| m.to_json())
    }

    /// A part row is written from the part's fields: byte for byte what serde_json writes
    /// for the part's value tree, over every kind of part and each optional field, with
    /// strings and keys that need escaping; a host slot is the splice marker.
    #[test]
    fn part_rows_are_what_the_value_tree_writes() {
        let parts = [
            r#"{"type":"text","text":"plain"}"#,
            r#"{"type":"text","text":"é \"q\" \n \u0001 \\ </script> \u2028"}"#,
            r#"{"type":"file-ref","ref":{"kind":"path","path":"src/a.ts","range":{"start":1,"end":3}}}"#,
            r#"{"type":"file-ref","ref":{"kind":"url","url":"https://x.test/a?b=\"c\"","mime":"text/html","name":"a"}}"#,
            r#"{"type":"file-ref","ref":{"kind":"content-id","content_id":"sha256:ab","range":{"start":4,"unit":"byte"}}}"#,
            r#"{"type":"file-attachment","name":"d.png","mime":"image/png","data":"iVBORw0KGgo=","size":8}"#,
            r#"{"type":"file-attachment","name":"n \"x\".md","blob":{"content_id":"sha256:cd"},"size":12345678901}"#,
            r#"{"type":"file-attachment","data":"aGk="}"#,
            r#"{"type":"command","id":"/review","args":"src/a.ts high"}"#,
            r#"{"type":"command","id":"/x","args":{"b":[1,2.5,null],"a":"z"}}"#,
            r#"{"type":"command","id":"/y"}"#,
            r#"{"type":"command","id":"/r","args":"a","resolved":{"outcome":"parts","parts":[{"type":"text","text":"t"}],"flags":{"k":true}}}"#,
            r#"{"type":"mention","target":{"kind":"file","path":"a.ts","range":{"start":1,"end":2}}}"#,
            r#"{"type":"mention","target":{"kind":"selection","z\"k":1,"a":[{}]},"resolved":{"outcome":"pass-through"}}"#,
            r#"{"type":"editor-context","kind":"cursor","payload":{"line":3}}"#,
            r#"{"type":"editor-context","kind":"open","payload":["a","b"],"source":"ed-1","emitted_at":-17}"#,
            r#"{"type":"editor-context","kind":"k","payload":null,"emitted_at":1700000000000}"#,
            r#"{"type":"future-part","zeta":1,"alpha":{"b":2,"a":1}}"#,
        ];
        for (i, text) in parts.iter().enumerate() {
            let v: Value = serde_json::from_str(text).unwrap(); // ok: test
            let p = crate::message::Part::from_value(v, i).unwrap(); // ok: test
            assert_eq!(part_json(&p), p.to_value().json_text(), "part {i}: {text}");
        }
        let held = r#"{"type":"file-attachment","name":"a.png","mime":"image/png","data":{"$slot":7,"head":"iVBO","len":9}}"#;
        let p = crate::message::Part::from_value(serde_json::from_str(held).unwrap(), 0).unwrap(); // ok: test
        assert_eq!(
            part_json(&p),
            "{\"data\":\"\u{1}7\u{1}\",\"mime\":\"image/png\",\"name\":\"a.png\",\"type\":\"file-attachment\"}"
        );
    }

    /// The canonical reader takes the rows this library writes, and wherever it answers it
    /// answers as the tree reader does, byte for byte (errors included).
    #[test]
    fn canonical_heads_read_as_the_tree_reads_them() {
        let parts = vec![
            (
                "s/0000000001#00000".to_owned(),
                r#"{"index":0,"message":"s/0000000001","part":{"text":"hi","type":"text"}}"#
                    .to_owned(),
            ),
            (
                "s/0000000001#00001".to_owned(),
                r#"{"index":1,"message":"s/0000000001","part":{"text":"é \"q\"","type":"text"}}"#
                    .to_owned(),
            ),
        ];
        let key = "s/0000000001";
        let meta = |m: &str| {
            format!(r#"{{"id":"m1","metadata":{m},"part_count":2,"seq":1,"session":"s"}}"#)
        };
        // Taken: what a submit writes, and canonical metadata of every kind of value.
        let taken = [
            meta(r#"{"schema_version":2}"#),
            meta(
                r#"{"id":"m1","schema_version":2,"seq":1,"session":"s","submitted_at":1795619550963}"#,
            ),
            meta(
                r#"{"a":[],"b":{},"c":[1,-2,true,false,null,"é"],"d":{"e":{"f":[0]}},"schema_version":2}"#,
            ),
            meta(r#"{"schema_version":2,"z":-123456789012345678}"#),
            meta(&format!(
                r#"{{"a":"q\"b\\c\n\t\b\f\r\u0000\u001f{}/","schema_version":2}}"#,
                '\u{7f}'
            )),
            meta(&format!(
                r#"{{"a":{}1{},"schema_version":2}}"#,
                "[".repeat(46),
                "]".repeat(46)
            )),
            r#"{"metadata":{"schema_version":2},"part_count":2}"#.to_owned(),
            r#"{"metadata":{"schema_version":2},"part_count":1}"#.to_owned(),
            r#"{"metadata":{"schema_version":2},"part_count":3}"#.to_owned(),
        ];
        for head in &taken {
            let fast = canonical_user_json(key, head, &parts);
            assert!(fast.is_some(), "not taken: {head}");
            let fast = fast.unwrap(); // ok: test
            let tree = by_tree(key, head, &parts);
            match (&fast, &tree) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{head}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{head}"),
                _ => panic!("disagree on {head}: {fast:?} / {tree:?}"),
            }
        }
        assert!(by_tree(key, &taken[0], &parts).is_ok());
        let over = taken.iter().find(|h| h.contains("\"part_count\":3"));
        assert!(by_tree(key, over.unwrap(), &parts).is_err()); // ok: test
                                                               // Left to the tree: anything whose text is not what writing it again would give, or
                                                               // that is not a current user message.
        let left = [
            meta(r#"{"schema_version":1}"#),
            meta(r#"{"schema_version":2.0}"#),
            meta(r#"{"schema_version":02}"#),
            meta(r#"{ "schema_version":2}"#),
            meta(r#"{"schema_version":2,"a":1}"#),
            meta(r#"{"schema_version":2,"schema_version":2}"#),
            meta(r#"{"b":1,"a":1,"schema_version":2}"#),
            meta(r#"{"a":"\u00e9","schema_version":2}"#),
            meta(r#"{"a":1.5,"schema_version":2}"#),
            meta(r#"{"a":1e3,"schema_version":2}"#),
            meta(r#"{"a":-0,"schema_version":2}"#),
            meta(r#"{"a":1234567890123456789,"schema_version":2}"#),
            meta(r#"{"a":123456789012345678901234567890,"schema_version":2}"#),
            meta(r#"{"schema_version":123456789012345678901234567890}"#),
            meta(&format!(
                r#"{{"a":{}1{},"schema_version":2}}"#,
                "[".repeat(48),
                "]".repeat(48)
            )),
            meta(r#"{"a":"\/","schema_version":2}"#),
            meta(r#"{"a":"\u007f","schema_version":2}"#),
            meta(r#"{"a":"\u001F","schema_version":2}"#),
            meta(r#"{"a":"\u000a","schema_version":2}"#),
            meta(r#"{"a":"\u0020","schema_version":2}"#),
            meta(r#"{"a":"\x","schema_version":2}"#),
            meta(r#"{"a\n":1,"schema_version":2}"#),
            meta(r#"{"a":tru,"schema_version":2}"#),
            meta(r#"[]"#),
            meta(r#""x""#),
            r#"{"id":"m1","metadata":{"schema_version":2},"part_count":2,"role":"user"}"#
                .to_owned(),
            r#"{"id":"m1","metadata":{"schema_version":2},"part_count":2,"role":"assistant"}"#
                .to_owned(),
            r#"{"id":"m1","metadata":{"schema_version":2}}"#.to_owned(),
            r#"{"id":"m1","part_count":2}"#.to_owned(),
            r#"{"metadata":{"schema_version":2},"part_count":2} "#.to_owned(),
            r#"{"metadata":{"schema_version":2},"part_count":"2"}"#.to_owned(),
            r#"{"metadata":{"schema_version":2},"part_count":2"#.to_owned(),
            String::new(),
        ];
        // Generated metadata, written as the store writes it: whatever is taken reads as the
        // tree reads it, and plain values (no float, no escape) are always taken.
        let mut seed = 0x9e37_79b9_u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let mut taken_count = 0;
        for _ in 0..400 {
            fn gen(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> (Value, bool) {
                match next(if depth > 3 { 6 } else { 8 }) {
                    0 => (Value::Null, true),
                    1 => (Value::Bool(next(2) == 0), true),
                    2 => (json_int(next(5)), true),
                    3 => (Value::from(-(next(1_000_000) as i64)), true),
                    4 => {
                        let s = ["", "a b", "é", "\"", "\n", "x/y", "\u{7f}"][next(7) as usize];
                        (Value::from(s), true)
                    }
                    5 => (Value::from(0.5 + next(10) as f64), false),
                    6 => {
                        let mut plain = true;
                        let items = (0..next(4))
                            .map(|_| {
                                let (v, p) = gen(next, depth + 1);
                                plain &= p;
                                v
                            })
                            .collect();
                        (Value::Array(items), plain)
                    }
                    _ => {
                        let mut plain = true;
                        let mut m = Map::new();
                        for _ in 0..next(4) {
                            let (v, p) = gen(next, depth + 1);
                            plain &= p;
                            m.insert(
                                ["a", "b", "zz", "é", "q\"k"][next(5) as usize].to_owned(),
                                v,
                            );
                        }
                        plain &= !m.contains_key("q\"k");
                        (Value::Object(m), plain)
                    }
                }
            }
            fn json_int(k: u64) -> Value {
                Value::from(
                    [0, 7, 1_795_619_550_963, 999_999_999_999_999_999, u64::MAX][k as usize],
                )
            }
            let (extra, plain) = gen(&mut next, 0);
            let mut m = Map::new();
            m.insert("schema_version".into(), 2.into());
            m.insert("extra".into(), extra.clone());
            let plain = plain && !extra.to_string().contains("18446744073709551615");
            let head = meta(&Value::Object(m).json_text());
            let fast = canonical_user_json(key, &head, &parts);
            if plain {
                assert!(fast.is_some(), "plain metadata not taken: {head}");
            }
            if let Some(fast) = fast {
                taken_count += 1;
                assert_eq!(fast.ok(), by_tree(key, &head, &parts).ok(), "{head}");
            }
        }
        assert!(
            taken_count > 100,
            "only {taken_count} generated heads taken"
        );
        // Part rows: taken when canonical, and then read as the tree reads them.
        let head = &taken[0];
        let row = |k: &str, r: &str| (format!("{key}#{k}"), r.to_owned());
        let p0 =
            r#"{"index":0,"message":"s/0000000001","part":{"text":"a\nb \"c\"","type":"text"}}"#;
        let p1 = r#"{"index":1,"message":"s/0000000001","part":{"target":{"kind":"selection"},"type":"mention"}}"#;
        let cases: [(Vec<(String, String)>, bool); 9] = [
            (vec![row("0", p0), row("1", p1)], true),
            (vec![row("1", p1), row("0", p0)], true),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"index":1,"message":"s/0000000001"}"#),
                ],
                true,
            ),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"message":"s/0000000001","part":{"type":"x"}}"#),
                ],
                true,
            ),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"index":0,"message":"s/0000000009","part":{}}"#),
                    row("2", p1),
                ],
                true,
            ),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"index":1,"message":"s/0000000001","part":"x"}"#),
                ],
                false,
            ),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"index":1, "message":"s/0000000001","part":{}}"#),
                ],
                false,
            ),
            (
                vec![
                    row("0", p0),
                    row("1", r#"{"index":1,"message":"s\/0000000001","part":{}}"#),
                ],
                false,
            ),
            (
                vec![
                    row("0", p0),
                    row(
                        "1",
                        r#"{"index":1,"message":"s/0000000001","part":{"a":1.5}}"#,
                    ),
                ],
                false,
            ),
        ];
        for (rows, take) in &cases {
            let fast = canonical_user_json(key, head, rows);
            assert_eq!(fast.is_some(), *take, "{rows:?}");
            if let Some(fast) = fast {
                let tree = by_tree(key, head, rows);
                match (&fast, &tree) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    _ => panic!("disagree on {rows:?}: {fast:?} / {tree:?}"),
                }
            }
        }
        assert!(canonical_user_json(key, head, &cases[0].0).is_some_and(|r| r.is_ok()));
        assert!(canonical_user_json(key, head, &cases[2].0).is_some_and(|r| r.is_err()));
        for head in &left {
            assert!(
                canonical_head(head).is_none() || canonical_user_json(key, head, &parts).is_none(),
                "taken: {head}"
            );
        }
    }
}
