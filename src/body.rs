//! The output tree of a lowered body and its byte-stable writer.
//!
//! Bodies are built as a small tree whose objects keep the order the provider modules give
//! them (so `type` comes first, as in the providers' docs), then written once. Large
//! attachment data can stay outside wasm memory: a [`Json::Data`] whose source is a host
//! slot is written as a marker (`\u{1}n\u{1}`, raw bytes that JSON text can never contain)
//! that the host replaces with the base64 it kept.

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::Out;
use serde_json::Value;
use std::borrow::Cow;

/// Where the characters of a data string come from.
#[derive(Debug, Clone)]
pub(crate) enum DataSrc<'a> {
    /// Base64 text already checked (it needs no JSON escaping).
    Inline(Cow<'a, str>),
    /// Base64 text the host keeps in slot `n`.
    Slot(u32),
}

/// One node of the output.
#[derive(Debug, Clone)]
pub(crate) enum Json<'a> {
    /// `true` / `false`
    Bool(bool),
    /// A string, escaped on write.
    Str(Cow<'a, str>),
    /// Any JSON value given by the caller (tool schemas, params).
    Value(Cow<'a, Value>),
    /// An object whose keys keep this order.
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
    /// An array.
    Arr(Vec<Json<'a>>),
    /// JSON text written verbatim (a fragment this crate wrote before: a cached turn).
    Raw(Cow<'a, str>),
    /// A string made of an escaped prefix (e.g. `data:image/png;base64,`) and base64 data.
    Data {
        /// Written (escaped) before the data.
        prefix: String,
        /// The base64 characters.
        data: DataSrc<'a>,
    },
}

/// Builds an object from `(key, node)` pairs with static keys.
pub(crate) fn obj<'a, const N: usize>(pairs: [(&'static str, Json<'a>); N]) -> Json<'a> {
    Json::Obj(
        pairs
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect(),
    )
}

/// A string node.
pub(crate) fn s<'a>(v: impl Into<Cow<'a, str>>) -> Json<'a> {
    Json::Str(v.into())
}

impl<'a> Json<'a> {
    /// Appends a key to an object node (no-op on other nodes).
    pub(crate) fn push(&mut self, key: impl Into<Cow<'a, str>>, value: Json<'a>) {
        if let Json::Obj(pairs) = self {
            pairs.push((key.into(), value));
        }
    }
}

/// How host slots are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotMode {
    /// A slot is an error: there is no host to fill it.
    Forbid,
    /// A slot is written as `\u{1}n\u{1}` for the host to splice.
    Mark,
}

struct Writer {
    out: Out,
    mode: SlotMode,
}

impl Writer {
    fn escaped(&mut self, s: &str) -> Result<()> {
        serde_json::to_writer(&mut self.out, s).map_err(internal)
    }

    fn node(&mut self, n: &Json<'_>) -> Result<()> {
        match n {
            Json::Bool(b) => self.out.put(if *b { b"true" } else { b"false" }),
            Json::Str(s) => self.escaped(s)?,
            Json::Raw(r) => self.out.put(r.as_bytes()),
            Json::Value(v) => serde_json::to_writer(&mut self.out, v.as_ref()).map_err(internal)?,
            Json::Obj(pairs) => {
                self.out.0.push(b'{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        self.out.0.push(b',');
                    }
                    self.escaped(k)?;
                    self.out.0.push(b':');
                    self.node(v)?;
                }
                self.out.0.push(b'}');
            }
            Json::Arr(items) => {
                self.out.0.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.0.push(b',');
                    }
                    self.node(v)?;
                }
                self.out.0.push(b']');
            }
            Json::Data { prefix, data } => {
                // The prefix is escaped as a whole string, then its closing quote dropped.
                self.escaped(prefix)?;
                self.out.0.pop();
                match data {
                    DataSrc::Inline(b64) => self.out.put(b64.as_bytes()),
                    DataSrc::Slot(n) => match self.mode {
                        SlotMode::Mark => {
                            let mark = crate::frame::SLOT as u8;
                            self.out.0.push(mark);
                            self.out.put(n.to_string().as_bytes());
                            self.out.0.push(mark);
                        }
                        SlotMode::Forbid => {
                            return Err(Error::new(
                                ErrorKind::InvalidMessage,
                                format!("attachment data refers to host slot {n}, but no host holds it here"),
                            ))
                        }
                    },
                }
                self.out.0.push(b'"');
            }
        }
        Ok(())
    }
}

fn internal(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Internal, format!("writing JSON failed: {e}"))
}

/// Writes a node as compact JSON text.
pub(crate) fn write(node: &Json<'_>, mode: SlotMode) -> Result<String> {
    let mut w = Writer {
        out: Out::with_capacity(1024),
        mode,
    };
    w.node(node)?;
    String::from_utf8(w.out.0)
        .map_err(|_| Error::new(ErrorKind::Internal, "lowered body is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_in_given_order_and_marks_slots() {
        let mut o = obj([("type", s("image")), ("z", Json::Bool(true))]);
        o.push(
            "data",
            Json::Data {
                prefix: "data:image/png;base64,".into(),
                data: DataSrc::Slot(7),
            },
        );
        assert_eq!(
            write(&o, SlotMode::Mark).unwrap(), // ok: test
            "{\"type\":\"image\",\"z\":true,\"data\":\"data:image/png;base64,\u{1}7\u{1}\"}"
        );
        assert!(write(&o, SlotMode::Forbid).is_err());
        let a = Json::Arr(vec![
            s("a\"b\n"),
            Json::Value(Cow::Owned(serde_json::json!({"b":1,"a":2}))),
        ]);
        assert_eq!(
            write(&a, SlotMode::Forbid).unwrap(), // ok: test
            r#"["a\"b\n",{"a":2,"b":1}]"#
        );
    }
}
