//! The normalised events every provider's response becomes.
//!
//! ```json
//! { "type": "start", "id": "msg_1", "model": "claude-sonnet-4-5" }
//! { "type": "text-delta", "part": 1, "text": "Hel" }
//! { "type": "reasoning-delta", "part": 0, "text": "Let me" }
//! { "type": "reasoning-end", "part": 0, "signature": "EqQB…" }
//! { "type": "tool-call-start", "part": 2, "id": "toolu_1", "name": "read_file" }
//! { "type": "tool-call-delta", "part": 2, "id": "toolu_1", "delta": "{\"path\":" }
//! { "type": "tool-call-end", "part": 2, "id": "toolu_1", "name": "read_file", "input": { … } }
//! { "type": "usage", "input_tokens": 1200, "output_tokens": 80, "cached_tokens": 1024 }
//! { "type": "finish", "reason": "tool-calls", "raw": "tool_use" }
//! { "type": "error", "code": "Overloaded", "message": "…", "details": { … } }
//! ```
//!
//! `part` is the index of the part the event builds in the final assistant turn.

use crate::error::Error;
use serde::Serialize;
use serde_json::Value;

/// Token counts, the same for every provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Usage {
    /// Every input token, cached or not (Anthropic's `input_tokens` plus its cache reads and
    /// writes; OpenAI's `prompt_tokens` / `input_tokens`; Gemini's `promptTokenCount`).
    pub input_tokens: u64,
    /// Every output token, reasoning included.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cached_tokens: Option<u64>,
    /// Input tokens written to the prompt cache (Anthropic).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cache_write_tokens: Option<u64>,
    /// Output tokens spent on reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reasoning_tokens: Option<u64>,
}

/// Why the model stopped, the same for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum FinishReason {
    /// The model finished its answer (or hit a stop sequence).
    Stop,
    /// The output token limit (or the context window) cut the answer.
    Length,
    /// The model asks for tool calls to be run.
    ToolCalls,
    /// A safety system stopped or refused the answer.
    ContentFilter,
    /// Anthropic `pause_turn`: a long server-side tool turn paused; send the turn back to
    /// continue.
    Pause,
    /// The response failed (a provider error, a cut or malformed stream).
    Error,
    /// A reason this version does not know (the raw value is kept).
    Other,
}

/// One normalised event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ResponseEvent"))]
pub enum Event {
    /// The response began: the provider's response id and model, when it says them.
    Start {
        /// The provider's response id.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        id: Option<String>,
        /// The model that answers.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        model: Option<String>,
    },
    /// Text appended to a text part.
    TextDelta {
        /// The part's index in the final turn.
        part: usize,
        /// The new text.
        text: String,
    },
    /// Reasoning text appended to a reasoning part.
    ReasoningDelta {
        /// The part's index in the final turn.
        part: usize,
        /// The new text.
        text: String,
    },
    /// A reasoning part is complete, with what its provider needs to accept it back.
    ReasoningEnd {
        /// The part's index in the final turn.
        part: usize,
        /// Anthropic's signature, OpenAI's encrypted content, Gemini's thought signature.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        signature: Option<String>,
        /// Anthropic redacted thinking.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        #[cfg_attr(feature = "ts", ts(optional, type = "true"))]
        redacted: bool,
        /// The redacted reasoning's opaque data.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        data: Option<String>,
        /// OpenAI's reasoning item id.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        id: Option<String>,
    },
    /// A text part cites a source (normalised: `{ type: "url" | "document" | "file" |
    /// "search", url?, title?, file_id?, document?, cited_text?, start?, end?, provider,
    /// data }`).
    Citation {
        /// The text part's index in the final turn.
        part: usize,
        /// The citation.
        #[cfg_attr(feature = "ts", ts(type = "Citation"))]
        citation: Value,
    },
    /// The model began a tool call.
    ToolCallStart {
        /// The part's index in the final turn.
        part: usize,
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// Not a function call: `custom` (its deltas are free text, not JSON) or a provider
        /// tool the host runs (`apply_patch`, `shell`, …).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        kind: Option<String>,
    },
    /// More of a tool call's arguments (JSON text, partial).
    ToolCallDelta {
        /// The part's index in the final turn.
        part: usize,
        /// The call id.
        id: String,
        /// The new argument text.
        delta: String,
    },
    /// A tool call is complete; its arguments parsed.
    ToolCallEnd {
        /// The part's index in the final turn.
        part: usize,
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments (the raw text when they are not valid JSON: an `InvalidToolInput`
        /// error event follows).
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        input: Value,
    },
    /// The JSON answer grew (a request that asked for JSON output): edits that, applied in
    /// order, rebuild the object so far.
    ObjectDelta {
        /// The edits.
        edits: Vec<crate::stream::partial::Edit>,
    },
    /// Token counts (once, before `finish`).
    Usage(Usage),
    /// The model stopped.
    Finish {
        /// Why, normalised.
        reason: FinishReason,
        /// The provider's own value (`end_turn`, `tool_calls`, `MAX_TOKENS`, …).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        raw: Option<String>,
    },
    /// A provider error, a malformed or cut stream, invalid tool arguments.
    Error {
        /// The stable code (`Overloaded`, `StreamTruncated`, `InvalidToolInput`, …).
        #[cfg_attr(feature = "ts", ts(type = "ErrorCode"))]
        code: &'static str,
        /// What happened.
        message: String,
        /// Structured details (provider type and code, call id, retry-after, …).
        #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
        details: Value,
    },
}

impl Event {
    /// The error event of `e`.
    pub fn error(e: &Error) -> Event {
        Event::Error {
            code: e.code(),
            message: e.to_string(),
            details: e.details(),
        }
    }
}

/// A list of events as one JSON array (the bindings' wire form).
pub fn events_json(events: &[Event]) -> String {
    if events.is_empty() {
        return String::from("[]");
    }
    crate::json_text::to_string(events).unwrap_or_else(|_| String::from("[]"))
}
