//! Resource limits on what a caller hands in, named and configurable, each failing with
//! `LimitExceeded` whose details say which (`limit`), the bound (`max`) and what was asked
//! (`actual`).
//!
//! | limit | default | where |
//! |---|---:|---|
//! | `max_parts` | 1 000 | parts of one message (lower, conversations, submit) |
//! | `max_message_bytes` | 128 MiB | text and attachment bytes of one message |
//! | `max_turns` | 100 000 | turns of one conversation |
//! | `max_session_blob_bytes` | 1 GiB | attachment bytes one session keeps in the blob store (submit) |
//!
//! Fixed bounds, not options: JSON nesting 128 levels (the parser's), frontmatter nesting
//! 64 ([`crate::skill::yaml::MAX_DEPTH`]), 500 operators per template tag and 500 `elif`
//! ([`crate::skill::template`]). Template fuel, recursion, output and value size are the
//! render [`crate::skill::template`] limits, set per compose request.

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::message::{Data, Part, UserMessage};
use serde_json::{Map, Value};

/// The message and conversation limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most parts one message may have.
    pub max_parts: usize,
    /// The most text and attachment bytes (decoded) one message may carry.
    pub max_message_bytes: u64,
    /// The most turns one conversation may have.
    pub max_turns: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_parts: 1000,
            max_message_bytes: 128 << 20,
            max_turns: 100_000,
        }
    }
}

/// The error for `actual` past the limit `name` (`max`).
pub fn exceeded(name: &str, max: u64, actual: u64, what: &str) -> Error {
    Error::new(
        ErrorKind::LimitExceeded,
        format!("{what} is {actual}, past the limit `{name}` of {max}"),
    )
    .with("limit", name)
    .with("max", max)
    .with("actual", actual)
}

/// The text and attachment bytes of a message (decoded sizes; base64 counts as its bytes).
pub fn message_bytes(m: &UserMessage) -> u64 {
    m.parts.iter().map(part_bytes).sum()
}

fn part_bytes(p: &Part) -> u64 {
    match p {
        Part::Text { text } => text.len() as u64,
        Part::FileAttachment(a) => match &a.data {
            Some(Data::Inline(s)) => (s.len() as u64) * 3 / 4,
            Some(Data::Host(h)) => h.len,
            None => 0,
        },
        Part::Command {
            resolved: Some(r), ..
        } => r.parts.iter().map(part_bytes).sum(),
        _ => 0,
    }
}

impl Limits {
    /// Reads `{ max_parts?, max_message_bytes?, max_turns? }` (absent fields keep their
    /// defaults); `at` is the path of the object in the options.
    pub fn from_value(v: Value, at: &str) -> Result<Limits> {
        let mut o: Map<String, Value> = match v {
            Value::Object(o) => o,
            Value::Null => return Ok(Limits::default()),
            _ => {
                return Err(
                    Error::new(ErrorKind::InvalidOptions, "`limits` must be an object").at(at),
                )
            }
        };
        let mut f = Fields::new(&mut o, at, ErrorKind::InvalidOptions);
        let d = Limits::default();
        let out = Limits {
            max_parts: f
                .opt_u64("max_parts")?
                .map_or(d.max_parts, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            max_message_bytes: f
                .opt_u64("max_message_bytes")?
                .unwrap_or(d.max_message_bytes),
            max_turns: f
                .opt_u64("max_turns")?
                .map_or(d.max_turns, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        };
        if let Some(k) = f.leftover() {
            return Err(Error::new(ErrorKind::InvalidOptions, "unknown limit")
                .at(k)
                .with("known", "max_parts, max_message_bytes, max_turns"));
        }
        Ok(out)
    }

    /// The limits as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "max_parts": self.max_parts,
            "max_message_bytes": self.max_message_bytes,
            "max_turns": self.max_turns,
        })
    }

    /// Whether `m` is within the part and byte limits (what [`Limits::check_message`]
    /// checks, without making an error).
    pub fn allows_message(&self, m: &UserMessage) -> bool {
        m.parts.len() <= self.max_parts && message_bytes(m) <= self.max_message_bytes
    }

    /// Checks one message (`what` names it in the error, e.g. `turns[3]`).
    pub fn check_message(&self, m: &UserMessage, what: &str) -> Result<()> {
        if m.parts.len() > self.max_parts {
            return Err(exceeded(
                "max_parts",
                self.max_parts as u64,
                m.parts.len() as u64,
                &format!("the part count of {what}"),
            ));
        }
        let bytes = message_bytes(m);
        if bytes > self.max_message_bytes {
            return Err(exceeded(
                "max_message_bytes",
                self.max_message_bytes,
                bytes,
                &format!("the byte size of {what}"),
            ));
        }
        Ok(())
    }

    /// Checks a conversation's turn count.
    pub fn check_turns(&self, n: usize) -> Result<()> {
        if n > self.max_turns {
            return Err(exceeded(
                "max_turns",
                self.max_turns as u64,
                n as u64,
                "the turn count of the conversation",
            ));
        }
        Ok(())
    }
}
