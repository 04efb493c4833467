//! What every provider's response reader shares: the framing of a body into events (SSE
//! lines, Gemini's JSON array, a whole body), the normalised [`Event`]s, and the builder
//! that turns the events a reader recognises into the final assistant turn. The readers
//! themselves are each provider's dialect (`crate::provider`); `crate::response` runs them.

pub(crate) mod builder;
mod event;
pub(crate) mod framing;
pub mod partial;

pub use event::{events_json, Event, FinishReason, Usage};
pub use framing::MAX_FRAME_BYTES;

use crate::error::{Error, ErrorKind};
use serde_json::Value;

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

pub(crate) fn num(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// A malformed piece of `provider`'s response (its wire name).
pub(crate) fn malformed(provider: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::StreamMalformed,
        format!("{provider} response: {what}"),
    )
    .with("provider", provider)
}
