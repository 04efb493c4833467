//! Reading a message's JSON text straight into the typed model, without a JSON tree.
//!
//! The tree reader ([`UserMessage::from_value`]) builds a `serde_json::Value` first: a
//! B-tree node and an owned key per object, all taken apart again field by field. Here a
//! small scanner reads the text into flat structs of the fields a message can have (strings
//! borrowed until they are kept, keys compared in place), then checks them the way the tree
//! reader does. Only the values the model keeps as JSON (a mention's target, a payload, a
//! command's arguments, flags, other metadata) are parsed by `serde_json`, from their own
//! slice of the text.
//!
//! This is only a fast path: it answers `None` for anything it does not take — any text or
//! field the tree reader would refuse, a key given twice, a key with an escape, a part type
//! this version does not know (kept verbatim, so it needs the tree), a number other than a
//! plain integer where the model wants one, nesting deeper than [`DEPTH`] — and the caller
//! reads the text again through the tree, which gives the answer or the error with its path.
//! For every text it takes, both readers give the same message (unit tests and the
//! `message_json` fuzz target compare them).

use super::{
    Data, EditorContext, FileAttachment, FileRef, HostData, Mention, Metadata, Outcome, Part,
    Range, RangeUnit, RefTarget, Resolution, UserMessage, SCHEMA_VERSION,
};
use crate::json_scan::{Scanner, Seen};
use serde_json::{Map, Value};

/// The oldest version read here (see [`MessageIn::typed`]; a version 3 must revisit it).
const V1: u64 = 1;

/// How deep the scanner follows the text (well below `serde_json`'s own limit of 128, which
/// the tree reader counts from the root and a slice parsed alone would count from itself).
const DEPTH: usize = 48;

/// A message read fast from `text`, or `None` (read it through the tree).
pub(crate) fn message(text: &str) -> Option<UserMessage> {
    let mut scan = Scan {
        text,
        at: 0,
        depth: 0,
    };
    let m = scan.message()?;
    scan.end()?;
    m.typed()
}

/// A JSON array of messages read fast, or `None` when any of them is not taken (read the
/// array through the tree).
pub(crate) fn messages(text: &str) -> Option<Vec<UserMessage>> {
    let mut scan = Scan {
        text,
        at: 0,
        depth: 0,
    };
    scan.eat(b'[')?;
    let mut out = Vec::new();
    scan.inside(b']', |s| {
        out.push(s.message()?.typed()?);
        Some(())
    })?;
    scan.end()?;
    Some(out)
}

/// A message's fields.
struct MessageIn<'a> {
    parts: Vec<PartIn<'a>>,
    metadata: Option<MetaIn>,
}

impl MessageIn<'_> {
    fn typed(self) -> Option<UserMessage> {
        let metadata = match self.metadata {
            None => Metadata::default(),
            // Version 1 differs only in an attachment's top-level `content_id` (moved into
            // `blob` by the upgrade), which this reader does not take: any other version 1
            // message reads as version 2. A newer version is refused on the tree.
            Some(m) if (V1..=SCHEMA_VERSION).contains(&m.schema_version) => Metadata {
                schema_version: SCHEMA_VERSION,
                extra: m.extra,
            },
            Some(_) => return None,
        };
        Some(UserMessage {
            parts: parts(self.parts)?,
            metadata,
        })
    }
}

fn parts(list: Vec<PartIn<'_>>) -> Option<Vec<Part>> {
    list.into_iter().map(PartIn::typed).collect()
}

/// `metadata`: `schema_version` and the other keys, kept.
struct MetaIn {
    schema_version: u64,
    extra: Map<String, Value>,
}

/// Every field a part of a known type can have; `None` is absent or `null`, as the tree
/// reader's `take` has it (`payload` alone keeps a `null`).
#[derive(Default)]
struct PartIn<'a> {
    ty: Option<&'a str>,
    text: Option<String>,
    file_ref: Option<RefIn<'a>>,
    data: Option<Data>,
    content_id: bool,
    blob: Option<Option<String>>,
    mime: Option<String>,
    name: Option<String>,
    size: Option<u64>,
    id: Option<String>,
    args: Option<Value>,
    resolved: Option<ResolutionIn<'a>>,
    target: Option<Map<String, Value>>,
    kind: Option<String>,
    source: Option<String>,
    payload: Option<Value>,
    emitted_at: Option<i64>,
}
impl PartIn<'_> {
    fn typed(self) -> Option<Part> {
        Some(match self.ty? {
            "text" => Part::Text { text: self.text? },
            "file-ref" => Part::FileRef(self.file_ref?.typed()?),
            "file-attachment" => {
                if self.content_id {
                    return None;
                }
                let content_id = match self.blob {
                    None => None,
                    Some(id) => Some(id?),
                };
                Part::FileAttachment(FileAttachment {
                    data: self.data,
                    content_id,
                    mime: self.mime,
                    name: self.name,
                    size: self.size,
                })
            }
            "command" => Part::Command {
                id: self.id?,
                args: self.args.unwrap_or(Value::Null),
                resolved: match self.resolved {
                    None => None,
                    Some(r) => Some(r.typed()?),
                },
            },
            "mention" => {
                let target = self.target?;
                let kind = match target.get("kind") {
                    Some(Value::String(k)) => k.clone(),
                    _ => return None,
                };
                Part::Mention(Mention {
                    kind,
                    target,
                    resolved: match self.resolved {
                        None => None,
                        Some(r) => Some(r.typed()?),
                    },
                })
            }
            "editor-context" => Part::EditorContext(EditorContext {
                kind: self.kind?,
                source: self.source,
                payload: self.payload?,
                emitted_at: self.emitted_at,
            }),
            // Kept verbatim by the tree reader.
            _ => return None,
        })
    }
}

/// A file-ref's `ref` object.
#[derive(Default)]
struct RefIn<'a> {
    kind: Option<&'a str>,
    path: Option<String>,
    url: Option<String>,
    content_id: Option<String>,
    mime: Option<String>,
    name: Option<String>,
    range: Option<RangeIn<'a>>,
}

impl RefIn<'_> {
    fn typed(self) -> Option<FileRef> {
        let target = match self.kind.unwrap_or("path") {
            "path" | "file" => RefTarget::Path(self.path?),
            "url" => RefTarget::Url(self.url?),
            "content-id" => RefTarget::ContentId(self.content_id?),
            _ => return None,
        };
        let range = match self.range {
            None => None,
            Some(r) => {
                let unit = match r.unit {
                    None | Some("line") | Some("lines") => RangeUnit::Line,
                    Some("byte") | Some("bytes") => RangeUnit::Byte,
                    Some(_) => return None,
                };
                let start = r.start?;
                if r.end.is_some_and(|e| e < start) {
                    return None;
                }
                Some(Range {
                    start,
                    end: r.end,
                    unit,
                })
            }
        };
        Some(FileRef {
            target,
            name: self.name,
            range,
            mime: self.mime,
        })
    }
}

/// A `range` object.
#[derive(Default)]
struct RangeIn<'a> {
    unit: Option<&'a str>,
    start: Option<u64>,
    end: Option<u64>,
}

/// A command's or a mention's `resolved` object.
#[derive(Default)]
struct ResolutionIn<'a> {
    outcome: Option<&'a str>,
    parts: Option<Vec<PartIn<'a>>>,
    flags: Option<Map<String, Value>>,
}

impl ResolutionIn<'_> {
    fn typed(self) -> Option<Resolution> {
        Some(Resolution {
            outcome: Outcome::parse(self.outcome?)?,
            parts: parts(self.parts.unwrap_or_default())?,
            flags: self.flags.unwrap_or_default(),
        })
    }
}

/// A reader of a message's JSON text: each step reads one piece of JSON, or `None` for
/// anything it does not take; `None` goes all the way up to [`message`].
struct Scan<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Scanner<'a> for Scan<'a> {
    fn text(&self) -> &'a str {
        self.text
    }
    fn at_mut(&mut self) -> &mut usize {
        &mut self.at
    }
    fn at(&self) -> usize {
        self.at
    }
}

impl<'a> Scan<'a> {
    /// Nothing but whitespace is left.
    fn end(&mut self) -> Option<()> {
        self.ws();
        (self.at == self.text.len()).then_some(())
    }

    /// Takes the literal `null` if it comes next.
    fn null(&mut self) -> Option<bool> {
        self.ws();
        let yes = self.text.get(self.at..)?.starts_with("null");
        if yes {
            self.at += 4;
        }
        Some(yes)
    }

    /// One level deeper.
    fn nest(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= DEPTH).then_some(())
    }

    /// The members of an array or an object up to `close` (the opening taken), `item`
    /// reading each, one level deeper.
    fn inside(&mut self, close: u8, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.nest()?;
        self.members(close, item)?;
        self.depth -= 1;
        Some(())
    }

    /// An object's members: `field` reads the value of each key (the colon taken).
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.inside(b'}', |s| {
            let key = s.plain()?;
            s.eat(b':')?;
            field(s, key)
        })
    }

    /// A string the reader only compares (a type, a kind, a unit, an outcome), borrowed:
    /// one with an escape is not taken.
    fn word(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return None;
        }
        self.plain()
    }

    /// [`Scan::word`] or `null` (`None` inside).
    fn opt_word(&mut self) -> Option<Option<&'a str>> {
        if self.null()? {
            return Some(None);
        }
        self.word().map(Some)
    }

    /// A string, owned; one with escapes is read by `serde_json` (which refuses what the
    /// tree would).
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let start = self.at;
        let mut plain = true;
        loop {
            match self.byte()? {
                b'"' => break,
                b'\\' => {
                    plain = false;
                    self.at += 2;
                }
                0..0x20 => return None,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        if plain {
            self.text.get(start..self.at - 1).map(str::to_owned)
        } else {
            serde_json::from_str(self.text.get(start - 1..self.at)?).ok()
        }
    }

    /// A string or `null` (`None` inside).
    fn opt_string(&mut self) -> Option<Option<String>> {
        if self.null()? {
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A plain integer of up to 18 digits (`-` where `signed`), or `null`; any other number
    /// is left to the tree.
    fn opt_int(&mut self, signed: bool) -> Option<Option<i64>> {
        if self.null()? {
            return Some(None);
        }
        let negative = signed && self.byte()? == b'-';
        if negative {
            self.at += 1;
        }
        let start = self.at;
        let mut n: i64 = 0;
        while let Some(d @ b'0'..=b'9') = self.byte() {
            // 18 digits cannot overflow; more are left to the tree.
            if self.at - start == 18 {
                return None;
            }
            n = n * 10 + i64::from(d - b'0');
            self.at += 1;
        }
        let len = self.at - start;
        let leading_zero = len > 1 && self.text.as_bytes().get(start) == Some(&b'0');
        let fraction = matches!(self.byte(), Some(b'.' | b'e' | b'E'));
        if len == 0 || leading_zero || fraction || negative && n == 0 {
            return None;
        }
        Some(Some(if negative { -n } else { n }))
    }

    /// A non-negative integer, or `null`.
    fn opt_u64(&mut self) -> Option<Option<u64>> {
        Some(self.opt_int(false)?.map(i64::unsigned_abs))
    }

    /// Any JSON value, read past: its text, parsed by `serde_json` as the tree reader
    /// parses it.
    fn value(&mut self) -> Option<Value> {
        self.ws();
        let start = self.at;
        self.skip()?;
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }

    /// An object, as [`Scan::value`], or `null` (`None` inside).
    fn opt_map(&mut self) -> Option<Option<Map<String, Value>>> {
        match self.peek()? {
            b'{' => match self.value()? {
                Value::Object(m) => Some(Some(m)),
                _ => None,
            },
            _ => self.null()?.then_some(None),
        }
    }

    /// Any value, read past without looking inside its strings and numbers (the caller
    /// parses the slice, which checks them).
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                loop {
                    match self.byte()? {
                        b'"' => break,
                        b'\\' => self.at += 2,
                        _ => self.at += 1,
                    }
                }
                self.at += 1;
                Some(())
            }
            b'{' => {
                self.at += 1;
                self.inside(b'}', |s| {
                    s.key_any()?;
                    s.eat(b':')?;
                    s.skip()
                })
            }
            b'[' => {
                self.at += 1;
                self.inside(b']', Self::skip)
            }
            _ => {
                let start = self.at;
                while matches!(
                    self.byte(),
                    Some(b'a'..=b'z' | b'0'..=b'9' | b'-' | b'+' | b'.' | b'E')
                ) {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// A key of a skipped object (escapes allowed: the slice's parser checks them).
    fn key_any(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.skip()
    }

    /// A message object.
    fn message(&mut self) -> Option<MessageIn<'a>> {
        let mut m = MessageIn {
            parts: Vec::new(),
            metadata: None,
        };
        let (mut seen, mut has_parts) = (Seen::default(), false);
        self.object(|s, key| match key {
            // `role` only as "user" (absent is the default; `null` is refused).
            "role" => {
                seen.first(1)?;
                (s.string()? == "user").then_some(())
            }
            "parts" => {
                seen.first(2)?;
                has_parts = true;
                m.parts = s.parts()?;
                Some(())
            }
            "metadata" => {
                seen.first(4)?;
                m.metadata = if s.null()? { None } else { Some(s.metadata()?) };
                Some(())
            }
            _ => s.value().map(drop),
        })?;
        has_parts.then_some(m)
    }

    /// An array of parts.
    fn parts(&mut self) -> Option<Vec<PartIn<'a>>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        self.inside(b']', |s| {
            out.push(s.part()?);
            Some(())
        })?;
        Some(out)
    }

    /// A `metadata` object (`schema_version` a positive integer when given; the tree reads
    /// `null` there as an error).
    fn metadata(&mut self) -> Option<MetaIn> {
        let mut m = MetaIn {
            schema_version: SCHEMA_VERSION,
            extra: Map::new(),
        };
        let mut seen = Seen::default();
        self.object(|s, key| {
            if key == "schema_version" {
                seen.first(1)?;
                m.schema_version = s.opt_u64()??;
            } else {
                let v = s.value()?;
                // The tree keeps the last of a key given twice, and so does the map.
                m.extra.insert(key.to_owned(), v);
            }
            Some(())
        })?;
        Some(m)
    }

    /// A part object.
    fn part(&mut self) -> Option<PartIn<'a>> {
        let mut p = PartIn::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            match key {
                "type" => {
                    seen.first(1)?;
                    p.ty = Some(s.word()?);
                }
                "text" => {
                    seen.first(1 << 1)?;
                    p.text = s.opt_string()?;
                }
                "ref" => {
                    seen.first(1 << 2)?;
                    p.file_ref = if s.null()? { None } else { Some(s.file_ref()?) };
                }
                "data" => {
                    seen.first(1 << 3)?;
                    p.data = s.data()?;
                }
                "content_id" => {
                    seen.first(1 << 4)?;
                    p.content_id = !s.null()?;
                    if p.content_id {
                        s.value()?;
                    }
                }
                "blob" => {
                    seen.first(1 << 5)?;
                    p.blob = match s.null()? {
                        true => None,
                        false => Some(s.blob()?),
                    };
                }
                "mime" => {
                    seen.first(1 << 6)?;
                    p.mime = s.opt_string()?;
                }
                "name" => {
                    seen.first(1 << 7)?;
                    p.name = s.opt_string()?;
                }
                "size" => {
                    seen.first(1 << 8)?;
                    p.size = s.opt_u64()?;
                }
                "id" => {
                    seen.first(1 << 9)?;
                    p.id = s.opt_string()?;
                }
                "args" => {
                    seen.first(1 << 10)?;
                    p.args = Some(s.value()?).filter(|v| !v.is_null());
                }
                "resolved" => {
                    seen.first(1 << 11)?;
                    p.resolved = if s.null()? {
                        None
                    } else {
                        Some(s.resolution()?)
                    };
                }
                "target" => {
                    seen.first(1 << 12)?;
                    p.target = s.opt_map()?;
                }
                "kind" => {
                    seen.first(1 << 13)?;
                    p.kind = s.opt_string()?;
                }
                "source" => {
                    seen.first(1 << 14)?;
                    p.source = s.opt_string()?;
                }
                "payload" => {
                    seen.first(1 << 15)?;
                    p.payload = Some(s.value()?);
                }
                "emitted_at" => {
                    seen.first(1 << 16)?;
                    p.emitted_at = s.opt_int(true)?;
                }
                _ => {
                    s.value()?;
                }
            }
            Some(())
        })?;
        Some(p)
    }

    /// An attachment's `data`: base64 text or a data URL, a host slot
    /// (`{ "$slot", "head", "len"?, "mime"? }`), or `null`.
    fn data(&mut self) -> Option<Option<Data>> {
        match self.peek()? {
            b'"' => Some(Some(Data::Inline(self.string()?))),
            b'{' => {
                let (mut slot, mut head, mut len, mut mime) = (None, None, None, None);
                let mut seen = Seen::default();
                self.object(|s, key| {
                    match key {
                        "$slot" => {
                            seen.first(1)?;
                            slot = s.opt_u64()?;
                        }
                        "head" => {
                            seen.first(2)?;
                            head = s.opt_string()?;
                        }
                        "len" => {
                            seen.first(4)?;
                            len = s.opt_u64()?;
                        }
                        "mime" => {
                            seen.first(8)?;
                            mime = s.opt_string()?;
                        }
                        _ => {
                            s.value()?;
                        }
                    }
                    Some(())
                })?;
                Some(Some(Data::Host(HostData {
                    slot: u32::try_from(slot?).ok()?,
                    head: head?,
                    len: len.unwrap_or(0),
                    mime,
                })))
            }
            _ => self.null()?.then_some(None),
        }
    }

    /// A `blob` object: its `content_id` (`None` inside when it has none).
    fn blob(&mut self) -> Option<Option<String>> {
        let mut id = None;
        let mut seen = Seen::default();
        self.object(|s, key| {
            if key == "content_id" {
                seen.first(1)?;
                id = s.opt_string()?;
            } else {
                s.value()?;
            }
            Some(())
        })?;
        Some(id)
    }

    /// A file-ref's `ref` object.
    fn file_ref(&mut self) -> Option<RefIn<'a>> {
        let mut r = RefIn::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            match key {
                "kind" => {
                    seen.first(1)?;
                    r.kind = s.opt_word()?;
                }
                "path" => {
                    seen.first(2)?;
                    r.path = s.opt_string()?;
                }
                "url" => {
                    seen.first(4)?;
                    r.url = s.opt_string()?;
                }
                "content_id" => {
                    seen.first(8)?;
                    r.content_id = s.opt_string()?;
                }
                "mime" => {
                    seen.first(16)?;
                    r.mime = s.opt_string()?;
                }
                "name" => {
                    seen.first(32)?;
                    r.name = s.opt_string()?;
                }
                "range" => {
                    seen.first(64)?;
                    r.range = if s.null()? { None } else { Some(s.range()?) };
                }
                _ => {
                    s.value()?;
                }
            }
            Some(())
        })?;
        Some(r)
    }

    /// A `range` object.
    fn range(&mut self) -> Option<RangeIn<'a>> {
        let mut r = RangeIn::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            match key {
                "unit" => {
                    seen.first(1)?;
                    r.unit = s.opt_word()?;
                }
                "start" => {
                    seen.first(2)?;
                    r.start = s.opt_u64()?;
                }
                "end" => {
                    seen.first(4)?;
                    r.end = s.opt_u64()?;
                }
                _ => {
                    s.value()?;
                }
            }
            Some(())
        })?;
        Some(r)
    }

    /// A command's or a mention's `resolved` object.
    fn resolution(&mut self) -> Option<ResolutionIn<'a>> {
        let mut r = ResolutionIn::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            match key {
                "outcome" => {
                    seen.first(1)?;
                    r.outcome = s.opt_word()?;
                }
                "parts" => {
                    seen.first(2)?;
                    r.parts = if s.null()? { None } else { Some(s.parts()?) };
                }
                "flags" => {
                    seen.first(4)?;
                    r.flags = s.opt_map()?;
                }
                _ => {
                    s.value()?;
                }
            }
            Some(())
        })?;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree reader's answer for `text`.
    fn tree(text: &str) -> crate::error::Result<UserMessage> {
        UserMessage::from_json_tree(text)
    }

    /// Both readers agree wherever the fast one answers; returns whether it did.
    fn agree(text: &str) -> bool {
        match message(text) {
            Some(fast) => {
                assert_eq!(Ok(fast.clone()), tree(text), "{text}");
                let two = format!("[{text},{text}]");
                assert_eq!(messages(&two), Some(vec![fast.clone(), fast]), "{two}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn the_fixture_messages_read_alike() {
        let mut taken = 0;
        for dir in ["tests/lower/inputs", "tests/lower/errors"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for entry in std::fs::read_dir(path).unwrap() {
                let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
                let v: Value = serde_json::from_str(&text).unwrap();
                if let Some(m) = v.get("message") {
                    taken += usize::from(agree(&m.to_string()));
                }
            }
        }
        assert!(taken >= 25, "the fast reader took only {taken} fixtures");
    }

    /// Messages the fast reader takes, in every part type and field form.
    const TAKEN: &[&str] = &[
        r#"{"parts":[]}"#,
        r#"{"role":"user","parts":[{"type":"text","text":"a \"quoted\"\nline"}],"metadata":{"schema_version":2,"id":"x","seq":3}}"#,
        r#"{"parts":[{"text":"type comes last","type":"text","extra":[1,{"a":null}]}],"metadata":null}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a.rs","range":{"start":2,"end":4}}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"kind":"file","path":"a.rs","range":{"start":2,"unit":"bytes"},"mime":"text/x-rust","name":"A"}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"kind":"url","url":"https://e.x/a","path":"ignored","range":null}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"kind":"content-id","content_id":"sha256-x"}}]}"#,
        r#"{"parts":[{"type":"file-attachment","data":"aGk=","mime":"text/plain","name":"a.txt","size":2}]}"#,
        r#"{"parts":[{"type":"file-attachment","data":{"$slot":3,"head":"iVBO","len":99,"mime":"image/png","x":1}}]}"#,
        r#"{"parts":[{"type":"file-attachment","blob":{"content_id":"sha256-dot"},"data":null,"content_id":null}]}"#,
        r#"{"parts":[{"type":"command","id":"/review","args":["a",2],"resolved":{"outcome":"parts","parts":[{"type":"text","text":"Review a"}],"flags":{"intent":"x"}}}]}"#,
        r#"{"parts":[{"type":"command","id":"/x","args":null,"resolved":{"outcome":"action","parts":null}}]}"#,
        r#"{"parts":[{"type":"mention","target":{"kind":"file","path":"a.ts","range":{"end":3,"start":1}},"resolved":{"outcome":"parts","parts":[{"ref":{"kind":"path","path":"a.ts"},"type":"file-ref"}]}}]}"#,
        r#"{"parts":[{"type":"mention","target":{"kind":"skill","name":"s","kind":"skill"}}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"cursor","payload":null,"source":"e1","emitted_at":-5}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"open","payload":{"files":["a","b"]},"emitted_at":null}]}"#,
        r#"{"parts":[{"type":"file-attachment","blob":{"content_id":"b"},"mime":"image/png"}],"metadata":{"schema_version":1}}"#,
        r#"{"parts":[{"type":"text","text":"caf\u00e9 \ud83d\ude00 \\ \/"}]}"#,
        r#" { "parts" : [ { "type" : "editor-context" , "kind" : "k" , "payload" : [ 1.5e3 , -0 , { "a\u0062" : [ ] } ] } ] } "#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a","range":{"start":0,"end":999999999999999999}}}]}"#,
        r#"{"parts":[{"type":"text","text":"a","content_id":"ignored"}],"metadata":{"schema_version":1}}"#,
        r#"{"metadata":{"b":1,"schema_version":2,"b":2},"parts":[{"type":"text","text":""}],"other":true}"#,
    ];

    /// Messages left to the tree reader: what it refuses, and what only it keeps.
    const LEFT: &[&str] = &[
        "",
        "[]",
        r#"{"parts":{}}"#,
        r#"{"role":null,"parts":[]}"#,
        r#"{"role":"assistant","parts":[]}"#,
        r#"{"parts":null}"#,
        r#"{}"#,
        r#"{"parts":[],"parts":[]}"#,
        r#"{"parts":[],"metadata":{"schema_version":0}}"#,
        r#"{"parts":[],"metadata":{"schema_version":3}}"#,
        r#"{"parts":[],"metadata":{"schema_version":null}}"#,
        r#"{"parts":[],"metadata":{"schema_version":2,"schema_version":2}}"#,
        r#"{"parts":[],"metadata":[]}"#,
        r#"{"parts":[["text","hi"]]}"#,
        r#"{"parts":[{"type":"text"}]}"#,
        r#"{"parts":[{"type":"text","text":null}]}"#,
        r#"{"parts":[{"type":"text","text":"a","text":"b"}]}"#,
        r#"{"parts":[{"type":null,"text":"a"}]}"#,
        r#"{"parts":[{"type":"future-part","text":"kept verbatim"}]}"#,
        r#"{"parts":[{"type":"text","text":"a","kind":5}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a","range":["line",1,3]}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a","range":{"start":4,"end":2}}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a","range":{"start":1,"unit":"cols"}}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"path":"a","range":{"start":1.0}}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"kind":"ftp","path":"a"}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":{"kind":"url","path":"a"}}]}"#,
        r#"{"parts":[{"type":"file-ref","ref":null}]}"#,
        r#"{"parts":[{"type":"file-attachment","content_id":"old-shape"}]}"#,
        r#"{"parts":[{"type":"file-attachment","content_id":"v1-shape"}],"metadata":{"schema_version":1}}"#,
        r#"{"parts":[{"type":"command","id":"/x","resolved":{"outcome":"parts","parts":[{"type":"file-attachment","content_id":"c"}]}}],"metadata":{"schema_version":1}}"#,
        r#"{"parts":[{"type":"file-attachment","blob":{}}]}"#,
        r#"{"parts":[{"type":"file-attachment","blob":["x"]}]}"#,
        r#"{"parts":[{"type":"file-attachment","data":5}]}"#,
        r#"{"parts":[{"type":"file-attachment","data":{"$slot":4294967296,"head":""}}]}"#,
        r#"{"parts":[{"type":"file-attachment","data":{"head":""}}]}"#,
        r#"{"parts":[{"type":"file-attachment","size":-1}]}"#,
        r#"{"parts":[{"type":"command","args":"x"}]}"#,
        r#"{"parts":[{"type":"command","id":"/x","resolved":{"outcome":"maybe"}}]}"#,
        r#"{"parts":[{"type":"command","id":"/x","resolved":{"parts":[]}}]}"#,
        r#"{"parts":[{"type":"command","id":"/x","resolved":{"outcome":"parts","flags":[]}}]}"#,
        r#"{"parts":[{"type":"mention","target":{"path":"a"}}]}"#,
        r#"{"parts":[{"type":"mention","target":[]}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"cursor"}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"cursor","payload":1,"emitted_at":1.5}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"cursor","payload":1,"emitted_at":9223372036854775808}]}"#,
        r#"{"parts":[]} trailing"#,
        r#"{"p\u0061rts":[]}"#,
        r#"{"parts":[{"type":"t\u0065xt","text":"a"}]}"#,
        r#"{"parts":[{"type":"text","text":"\ud800"}]}"#,
        r#"{"parts":[{"type":"text","text":"raw	tab"}]}"#,
        r#"{"parts":[{"type":"text","text":"a","other":1e400}]}"#,
        r#"{"parts":[{"type":"text","text":"a","other":nul}]}"#,
        r#"{"parts":[{"type":"text","text":"a","other":[1,]}]}"#,
        r#"{"parts":[{"type":"file-attachment","size":01}]}"#,
        r#"{"parts":[{"type":"file-attachment","size":1e2}]}"#,
        r#"{"parts":[{"type":"file-attachment","size":18446744073709551615}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"k","payload":1,"emitted_at":-0}]}"#,
        r#"{"parts":[{"type":"editor-context","kind":"k","payload":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}"#,
    ];

    #[test]
    fn version_1_is_read_as_version_2_only_while_that_is_the_one_step() {
        // The fast reader knows the one upgrade step there is (v1 → v2); a new version
        // must teach it the next one.
        assert_eq!(SCHEMA_VERSION, 2);
    }

    #[test]
    fn the_fast_reader_takes_every_part_type_and_agrees() {
        for text in TAKEN {
            assert!(agree(text), "not taken: {text}");
        }
    }

    #[test]
    fn what_it_does_not_take_is_left_to_the_tree() {
        for text in LEFT {
            assert!(!agree(text), "taken: {text}");
            // The public reader still answers, from the tree.
            assert_eq!(UserMessage::from_json(text), tree(text), "{text}");
        }
    }

    #[test]
    fn an_array_with_one_message_left_is_read_through_the_tree() {
        let refused = r#"{"parts":[{"type":"text","text":null}]}"#;
        let text = format!("[{},{refused}]", TAKEN[1]);
        assert_eq!(messages(&text), None);
        let all = UserMessage::many_from_json(&text).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0], tree(TAKEN[1]));
        assert_eq!(all[1], tree(refused));
        assert!(all[1].is_err());
        assert!(UserMessage::many_from_json("{}").is_err());
        assert_eq!(UserMessage::many_from_json("[]").unwrap().len(), 0);
    }
}
