//! A JSON answer read while it streams: each piece of text the model sends goes through an
//! incremental reader that never reads a character twice (linear in the answer's size),
//! and says what changed as edits of the object so far: a value set at a path (a scalar
//! once it is whole, an object or array as it opens) or text appended to a string at a
//! path. Applying the edits in order rebuilds the partial object; at the end it is the
//! whole answer. A number or a `true` / `false` / `null` is set only when complete; a
//! string is set empty as it opens and grows by appends, so a long text value streams.
//!
//! Text before the first `{` or `[` (a code fence, a sentence) is skipped; text after the
//! top value is ignored. The first character that cannot continue the JSON stops the
//! reader (`failed`): the edits so far stand, and the whole text's parse at the end says
//! what was wrong.

use serde::Serialize;
use serde_json::Value;

/// Where a response's JSON answer is: its text, or the input of the tool call of this
/// name (an answer asked for as a forced tool call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectSource {
    /// The answer's text is the JSON.
    Text,
    /// The input of the call of this tool is.
    Tool(String),
}

/// A step of a path: an object's key or an array's index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ObjectPathStep"))]
pub enum Step {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// One edit of the partial object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ObjectEdit"))]
pub enum Edit {
    /// `value` set at `path` (`[]`: the whole object).
    Set {
        /// Where.
        path: Vec<Step>,
        /// The value (a whole scalar, or an empty object, array or string that opens).
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        set: Value,
    },
    /// `append` added to the string at `path`.
    Append {
        /// Where.
        path: Vec<Step>,
        /// The text added.
        append: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Before the top value.
    Before,
    /// A value is expected.
    Value,
    /// In an object: a key or `}` is expected (`first`: nothing read yet).
    Key { first: bool },
    /// After a key: `:` is expected.
    Colon,
    /// After a value: `,` or the container's close is expected.
    After,
    /// In a string (`key`: an object key, kept whole before it is used).
    Str { key: bool },
    /// After a `\` in a string.
    Escape { key: bool },
    /// In a `\uXXXX` escape: `n` hex digits read.
    Unicode { key: bool, n: u8 },
    /// In a number or a literal.
    Bare,
    /// The top value is complete.
    Done,
    /// A character could not continue the JSON.
    Failed,
}

/// How deep containers nest (serde_json's own limit).
const MAX_DEPTH: usize = 128;

/// The incremental reader (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Partial {
    mode: Mode,
    /// Open containers: `true` for an array (with its next index in `path`'s last step).
    arrays: Vec<bool>,
    /// The path of the value being read.
    path: Vec<Step>,
    /// A key, a number or a literal being read; a `\u` escape's digits.
    pending: String,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// A `\u` escape's value so far.
    hex: u16,
    /// Text appended to the current string since the last edit.
    run: String,
    edits: Vec<Edit>,
}

impl Default for Partial {
    fn default() -> Self {
        Partial::new()
    }
}

impl Partial {
    /// A reader at the start of an answer.
    pub fn new() -> Self {
        Partial {
            mode: Mode::Before,
            arrays: Vec::new(),
            path: Vec::new(),
            pending: String::new(),
            high: None,
            hex: 0,
            run: String::new(),
            edits: Vec::new(),
        }
    }

    /// Whether a character stopped the reader.
    pub fn failed(&self) -> bool {
        self.mode == Mode::Failed
    }

    /// Whether the top value is complete.
    pub fn done(&self) -> bool {
        self.mode == Mode::Done
    }

    /// Reads `text`, the next piece of the answer; the edits it makes.
    pub fn push(&mut self, text: &str) -> Vec<Edit> {
        let mut rest = text;
        while !matches!(self.mode, Mode::Done | Mode::Failed) {
            // Inside a string, the characters up to the next quote, backslash or control
            // character are taken as one run.
            if let Mode::Str { key } = self.mode {
                let n = rest
                    .bytes()
                    .position(|b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(rest.len());
                if n > 0 {
                    if self.high.take().is_some() {
                        self.put(key, '\u{fffd}');
                    }
                    let (run, tail) = rest.split_at(n);
                    if key {
                        self.pending.push_str(run);
                    } else {
                        self.run.push_str(run);
                    }
                    rest = tail;
                    continue;
                }
            }
            let mut chars = rest.chars();
            let Some(c) = chars.next() else { break };
            rest = chars.as_str();
            self.char(c);
        }
        self.flush_run();
        std::mem::take(&mut self.edits)
    }

    /// The end of the answer: a number left open at the top level is complete now.
    pub fn end(&mut self) -> Vec<Edit> {
        if self.mode == Mode::Bare {
            self.bare_end();
        }
        std::mem::take(&mut self.edits)
    }

    fn flush_run(&mut self) {
        if !self.run.is_empty() {
            self.edits.push(Edit::Append {
                path: self.path.clone(),
                append: std::mem::take(&mut self.run),
            });
        }
    }

    fn set(&mut self, v: Value) {
        self.edits.push(Edit::Set {
            path: self.path.clone(),
            set: v,
        });
    }

    /// A value at the current path is complete.
    fn value_done(&mut self) {
        match self.arrays.last() {
            None => self.mode = Mode::Done,
            Some(true) => {
                if let Some(Step::Index(i)) = self.path.last_mut() {
                    *i += 1;
                }
                self.mode = Mode::After;
            }
            Some(false) => {
                self.path.pop();
                self.mode = Mode::After;
            }
        }
    }

    fn close(&mut self, array: bool) {
        if self.arrays.pop() != Some(array) {
            self.mode = Mode::Failed;
            return;
        }
        if array {
            self.path.pop();
        }
        self.value_done();
    }

    fn open_value(&mut self, c: char) {
        match c {
            // JSON nesting stops at 128 levels, as the parser's does (a deeper answer would
            // build a value every later walk and drop recurses through).
            '{' | '[' if self.arrays.len() >= MAX_DEPTH => self.mode = Mode::Failed,
            '{' => {
                self.set(Value::Object(Default::default()));
                self.arrays.push(false);
                self.mode = Mode::Key { first: true };
            }
            '[' => {
                self.set(Value::Array(Vec::new()));
                self.arrays.push(true);
                self.path.push(Step::Index(0));
                self.mode = Mode::Value;
            }
            '"' => {
                self.set(Value::String(String::new()));
                self.mode = Mode::Str { key: false };
            }
            '-' | '0'..='9' | 't' | 'f' | 'n' => {
                self.pending.clear();
                self.pending.push(c);
                self.mode = Mode::Bare;
            }
            _ => self.mode = Mode::Failed,
        }
    }

    /// A number or a literal ended (at a delimiter or the end).
    fn bare_end(&mut self) {
        match serde_json::from_str::<Value>(&self.pending) {
            Ok(v) if !v.is_string() && !v.is_object() && !v.is_array() => {
                self.pending.clear();
                self.set(v);
                self.value_done();
            }
            _ => self.mode = Mode::Failed,
        }
    }

    fn str_char(&mut self, key: bool, c: char) {
        if let Some(h) = self.high.take() {
            // A lone high surrogate: kept as the replacement character, as a JSON parser
            // that accepts it would.
            let _ = h;
            self.put(key, '\u{fffd}');
        }
        self.put(key, c);
    }

    fn put(&mut self, key: bool, c: char) {
        if key {
            self.pending.push(c);
        } else {
            self.run.push(c);
        }
    }

    fn char(&mut self, c: char) {
        let ws = matches!(c, ' ' | '\t' | '\n' | '\r');
        match self.mode {
            Mode::Before => {
                if c == '{' || c == '[' {
                    self.open_value(c);
                }
            }
            Mode::Value => match c {
                _ if ws => {}
                ']' if self.arrays.last() == Some(&true)
                    && matches!(self.path.last(), Some(Step::Index(0))) =>
                {
                    self.close(true)
                }
                _ => self.open_value(c),
            },
            Mode::Key { first } => match c {
                _ if ws => {}
                '"' => {
                    self.pending.clear();
                    self.mode = Mode::Str { key: true };
                }
                '}' if first => self.close(false),
                _ => self.mode = Mode::Failed,
            },
            Mode::Colon => match c {
                _ if ws => {}
                ':' => self.mode = Mode::Value,
                _ => self.mode = Mode::Failed,
            },
            Mode::After => match c {
                _ if ws => {}
                ',' => {
                    self.mode = if self.arrays.last() == Some(&true) {
                        Mode::Value
                    } else {
                        Mode::Key { first: false }
                    }
                }
                '}' => self.close(false),
                ']' => self.close(true),
                _ => self.mode = Mode::Failed,
            },
            Mode::Str { key } => match c {
                '"' => {
                    if self.high.take().is_some() {
                        self.put(key, '\u{fffd}');
                    }
                    if key {
                        let k = std::mem::take(&mut self.pending);
                        self.path.push(Step::Key(k));
                        self.mode = Mode::Colon;
                    } else {
                        self.flush_run();
                        self.value_done();
                    }
                }
                '\\' => self.mode = Mode::Escape { key },
                c if (c as u32) < 0x20 => self.mode = Mode::Failed,
                c => self.str_char(key, c),
            },
            Mode::Escape { key } => {
                let e = match c {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.mode = Mode::Unicode { key, n: 0 };
                        return;
                    }
                    _ => {
                        self.mode = Mode::Failed;
                        return;
                    }
                };
                self.str_char(key, e);
                self.mode = Mode::Str { key };
            }
            Mode::Unicode { key, n } => {
                let Some(d) = c.to_digit(16) else {
                    self.mode = Mode::Failed;
                    return;
                };
                let acc = self.hex_acc(key, n, d);
                if n < 3 {
                    self.mode = Mode::Unicode { key, n: n + 1 };
                    return;
                }
                self.mode = Mode::Str { key };
                let u = acc;
                match (self.high.take(), u) {
                    (Some(h), 0xDC00..=0xDFFF) => {
                        let code =
                            0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                        self.put(key, char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                    (h, 0xD800..=0xDBFF) => {
                        if h.is_some() {
                            self.put(key, '\u{fffd}');
                        }
                        self.high = Some(u);
                    }
                    (h, _) => {
                        if h.is_some() {
                            self.put(key, '\u{fffd}');
                        }
                        self.put(key, char::from_u32(u32::from(u)).unwrap_or('\u{fffd}'));
                    }
                }
            }
            Mode::Bare => {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.') {
                    self.pending.push(c);
                    // `true`, `false` and `null` are five letters at most; a number may be as
                    // long as the model writes it (JSON sets no bound).
                    if self.pending.len() > 5
                        && self
                            .pending
                            .as_bytes()
                            .first()
                            .is_some_and(u8::is_ascii_alphabetic)
                    {
                        self.mode = Mode::Failed;
                    }
                } else {
                    self.bare_end();
                    if self.mode != Mode::Failed && self.mode != Mode::Done {
                        self.char(c);
                    }
                }
            }
            Mode::Done | Mode::Failed => {}
        }
    }

    /// The `\u` escape's value so far with hex digit `d` added (kept in `hex`).
    fn hex_acc(&mut self, _key: bool, n: u8, d: u32) -> u16 {
        if n == 0 {
            self.hex = 0;
        }
        self.hex = (self.hex << 4) | d as u16;
        self.hex
    }
}

/// Applies `edits` to `target` (what a host does to show the partial object).
pub fn apply(target: &mut Value, edits: &[Edit]) {
    for e in edits {
        let (path, op) = match e {
            Edit::Set { path, set } => (path, Ok(set)),
            Edit::Append { path, append } => (path, Err(append)),
        };
        let Some(slot) = slot(target, path) else {
            continue;
        };
        match op {
            Ok(v) => *slot = v.clone(),
            Err(text) => {
                if let Value::String(s) = slot {
                    s.push_str(text);
                }
            }
        }
    }
}

/// The value at `path` under `v`, made when the last step is new.
fn slot<'v>(v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    let mut cur = v;
    for step in path {
        cur = match (cur, step) {
            (Value::Object(o), Step::Key(k)) => o.entry(k.clone()).or_insert(Value::Null),
            (Value::Array(a), Step::Index(i)) => {
                if *i == a.len() {
                    a.push(Value::Null);
                }
                a.get_mut(*i)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The object the edits build, fed `text` in pieces of `n` bytes (on char boundaries).
    fn build(text: &str, n: usize) -> (Value, bool) {
        let mut p = Partial::new();
        let mut v = Value::Null;
        let mut rest = text;
        while !rest.is_empty() {
            let mut k = n.min(rest.len());
            while !rest.is_char_boundary(k) {
                k += 1;
            }
            let (a, b) = rest.split_at(k);
            apply(&mut v, &p.push(a));
            rest = b;
        }
        apply(&mut v, &p.end());
        (v, p.done())
    }

    #[test]
    fn edits_rebuild_the_whole_answer_in_any_pieces() {
        let text = r#"Here: ```json
{"title": "Ünïcode \"q\" \u00e9 \ud83d\ude00", "n": -12.5e3, "ok": true, "none": null,
 "tags": ["a", "b", [], {}], "deep": {"x": [1, {"y": "z"}]}} trailing"#;
        let json = &text[text.find('{').unwrap()..text.rfind('}').unwrap() + 1];
        let want: Value = serde_json::from_str(json).unwrap();
        for n in [1, 2, 3, 7, 20, 1000] {
            let (v, done) = build(text, n);
            assert_eq!(v, want, "pieces of {n}");
            assert!(done);
        }
    }

    #[test]
    fn a_string_streams_and_a_number_waits_until_whole() {
        let mut p = Partial::new();
        let e = p.push(r#"{"a": "hel"#);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"[{"path":[],"set":{}},{"path":["a"],"set":""},{"path":["a"],"append":"hel"}]"#
        );
        assert_eq!(
            serde_json::to_string(&p.push(r#"lo", "b": 12"#)).unwrap(),
            r#"[{"path":["a"],"append":"lo"}]"#
        );
        assert_eq!(
            serde_json::to_string(&p.push("3}")).unwrap(),
            r#"[{"path":["b"],"set":123}]"#
        );
        assert!(p.done());
    }

    #[test]
    fn a_long_number_is_read_whole() {
        // Found by the partial_json fuzz target: 131 digits are valid JSON.
        let text = format!("[[[[{}]]]]", "4".repeat(131));
        let want: Value = serde_json::from_str(&text).unwrap(); // ok: test
        for n in [1, 7, text.len()] {
            assert_eq!(build(&text, n), (want.clone(), true));
        }
        // A word past five letters is not a literal: the reader stops.
        assert!(!build("[trueish]", 3).1);
    }

    #[test]
    fn nesting_past_128_levels_stops_the_reader() {
        // Found by the partial_json fuzz target: 7,000 open brackets built a value whose drop
        // overflowed the stack.
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(build(&ok, 5).1);
        let deep = "[".repeat(7000);
        let mut p = Partial::new();
        let edits = p.push(&deep);
        assert!(p.failed());
        assert!(edits.len() <= 129);
    }

    #[test]
    fn a_top_level_number_completes_at_the_end() {
        let (v, done) = build("[1, 2", 1);
        assert_eq!(v, serde_json::json!([1, 2]));
        assert!(!done);
        let mut p = Partial::new();
        let mut v = Value::Null;
        apply(&mut v, &p.push("[3]"));
        assert_eq!(v, serde_json::json!([3]));
    }

    #[test]
    fn what_cannot_be_json_stops_the_reader() {
        for bad in [
            r#"{"a" 1}"#,
            r#"{"a": tru }"#,
            "[1,,2]",
            r#"{"a": "x"]"#,
            "{\"a\": \"\u{1}\"}",
        ] {
            let mut p = Partial::new();
            p.push(bad);
            p.end();
            assert!(p.failed(), "{bad}");
        }
    }
}
