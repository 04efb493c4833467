//! The YAML of `SKILL.md` frontmatter: `saphyr-parser`'s events into a small tree, and a
//! block-style writer (a loader with ordered hash maps and float parsing, and a general
//! emitter, would cost the wasm more than this module).

use crate::json_text::JsonText;
pub use saphyr_parser::ScanError;
use saphyr_parser::{Event, Parser, ScalarStyle, Span, SpannedEventReceiver};

/// A YAML node. Scalars keep their text; `plain` tells an unquoted scalar (which may read
/// as a boolean, number or null) from a quoted or block one (always a string).
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A scalar.
    Scalar {
        /// The text.
        text: String,
        /// Unquoted (plain style).
        plain: bool,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order (keys as text).
    Map(Vec<(String, Node)>),
    /// Null, an empty value, or an alias (aliases are not followed).
    Null,
}

impl Node {
    /// A plain scalar that YAML reads as null.
    fn is_null_text(text: &str) -> bool {
        matches!(text, "" | "~" | "null" | "Null" | "NULL")
    }

    /// The scalar's text, if a scalar (booleans and numbers as written).
    pub fn text(&self) -> Option<&str> {
        match self {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Whether the node is a plain scalar that is not a string (a boolean or a number).
    pub fn is_typed_scalar(&self) -> bool {
        match self {
            Node::Scalar { text, plain: true } => {
                matches!(
                    text.as_str(),
                    "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
                ) || serde_json::from_str::<serde_json::Number>(text).is_ok()
            }
            _ => false,
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The node as JSON: plain `true`/`false` → booleans, plain numbers → numbers (as JSON
    /// reads them), null → null, everything else → strings.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Scalar { text, plain: true } => match text.as_str() {
                "true" | "True" | "TRUE" => Value::Bool(true),
                "false" | "False" | "FALSE" => Value::Bool(false),
                t => serde_json::from_str::<serde_json::Number>(t)
                    .map_or_else(|_| Value::String(t.to_owned()), Value::Number),
            },
            Node::Scalar { text, .. } => Value::String(text.clone()),
            Node::Seq(s) => Value::Array(s.iter().map(Node::to_json).collect()),
            Node::Map(m) => Value::Object(crate::sort::json_map_of(
                m.iter().map(|(k, v)| (k.clone(), v.to_json())),
            )),
        }
    }
}

/// How deep collections may nest in frontmatter (a real SKILL.md nests two or three
/// levels; the tree is built, converted and dropped recursively, so the bound keeps every
/// walk far inside the wasm stack).
pub const MAX_DEPTH: usize = 64;

/// Builds the tree from parser events.
#[derive(Default)]
struct Builder {
    /// Open collections, each with the key waiting for its value (mappings).
    stack: Vec<(Node, Option<String>)>,
    root: Option<Node>,
    /// The first reason the document is refused (later events are ignored).
    error: Option<ScanError>,
}

impl Builder {
    fn push(&mut self, node: Node, span: Span) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some((Node::Seq(items), _)) => items.push(node),
            Some((Node::Map(entries), pending)) => match pending.take() {
                // A key: its text. A list or mapping as a key (YAML's `? ` complex keys)
                // has no place in frontmatter and is refused.
                None => match node {
                    Node::Scalar { text, .. } => *pending = Some(text),
                    Node::Null => *pending = Some(String::new()),
                    Node::Seq(_) | Node::Map(_) => {
                        self.error = Some(ScanError::new_str(
                            span.start,
                            "a mapping key must be text, not a list or a mapping",
                        ))
                    }
                },
                Some(key) => entries.push((key, node)),
            },
            Some(_) => {}
        }
    }

    fn open(&mut self, node: Node, span: Span) {
        if self.stack.len() >= MAX_DEPTH {
            self.error = Some(ScanError::new(
                span.start,
                format!("lists and mappings nest deeper than {MAX_DEPTH} levels"),
            ));
        } else {
            self.stack.push((node, None));
        }
    }
}

impl<'input> SpannedEventReceiver<'input> for Builder {
    fn on_event(&mut self, ev: Event<'input>, span: Span) {
        if self.error.is_some() {
            return;
        }
        match ev {
            Event::Scalar(text, style, _, _) => {
                let plain = style == ScalarStyle::Plain;
                let text = text.into_owned();
                let node = if plain && Node::is_null_text(&text) {
                    Node::Null
                } else {
                    Node::Scalar { text, plain }
                };
                self.push(node, span);
            }
            Event::Alias(_) => self.push(Node::Null, span),
            Event::SequenceStart(..) => self.open(Node::Seq(Vec::new()), span),
            Event::MappingStart(..) => self.open(Node::Map(Vec::new()), span),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, _)) = self.stack.pop() {
                    self.push(node, span);
                }
            }
            _ => {}
        }
    }
}

/// Parses the first document of `src` (an empty one is [`Node::Null`]). Collections nested
/// deeper than [`MAX_DEPTH`] and collections used as keys are errors.
pub fn parse(src: &str) -> Result<Node, ScanError> {
    // The events are pulled one by one (the parser's own `load` recurses once per level,
    // which a deeply nested document turns into a stack overflow), up to the end of the
    // first document or the first refusal.
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(src);
    while let Some(next) = parser.next_event() {
        let (ev, span) = next?;
        let end = matches!(ev, Event::DocumentEnd | Event::StreamEnd);
        b.on_event(ev, span);
        if let Some(e) = b.error {
            return Err(e);
        }
        if end {
            break;
        }
    }
    Ok(b.root.unwrap_or(Node::Null))
}

/// Whether `s` can be written as a plain scalar and read back as the same string.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "null" | "~" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    let numeric = s.bytes().all(|b| {
        b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E' | b'_' | b'x' | b'o')
    }) || s.starts_with('.');
    !reserved
        && !numeric
        && !"-?:,[]{}#&*!|>'\"%@`".contains(first)
        && !s.starts_with(char::is_whitespace)
        && !s.ends_with(char::is_whitespace)
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.chars().any(|c| c.is_control() || c == '\u{feff}')
}

/// `s` as a YAML scalar: plain when that reads back the same, else double-quoted.
pub fn scalar(s: &str) -> String {
    if plain_ok(s) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes `value` (JSON) under `key` at `indent` in block style.
pub fn write_entry(out: &mut String, indent: usize, key: &str, value: &serde_json::Value) {
    use serde_json::Value;
    let pad = " ".repeat(indent);
    out.push_str(&pad);
    out.push_str(&scalar(key));
    out.push(':');
    match value {
        Value::Object(o) if !o.is_empty() => {
            out.push('\n');
            for (k, v) in o {
                write_entry(out, indent + 2, k, v);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            for v in a {
                out.push_str(&pad);
                out.push_str("  -");
                match v {
                    Value::Object(_) | Value::Array(_) => {
                        // Nested collections in a list are written in flow style (JSON is YAML).
                        out.push(' ');
                        out.push_str(&v.json_text());
                        out.push('\n');
                    }
                    _ => {
                        out.push(' ');
                        out.push_str(&inline(v));
                        out.push('\n');
                    }
                }
            }
        }
        v => {
            out.push(' ');
            out.push_str(&inline(v));
            out.push('\n');
        }
    }
}

fn inline(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(s),
        Value::Array(_) | Value::Object(_) => v.json_text(),
    }
}
