//! The response side: what a provider sends back — an SSE stream or a whole JSON body — read
//! into normalised [`Event`]s and into the final assistant [`Turn`], which the
//! next [`lower_conversation`](crate::lower_conversation) sends back as that provider needs
//! it (reasoning with its signature, tool calls with their ids).
//!
//! ```
//! use promptloom::response::{ResponseParser, Event};
//! use promptloom::Provider;
//!
//! let mut p = ResponseParser::new(Provider::OpenAiChat);
//! let mut events = p.push(b"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel");
//! events.extend(p.push(b"lo\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"));
//! assert!(matches!(&events[1], Event::TextDelta { part: 0, text } if text == "Hello"));
//! let done = p.finish();
//! assert!(done.error.is_none());
//! assert_eq!(done.turn.to_value()["parts"][0]["text"], "Hello");
//! ```
//!
//! The parser is an incremental state machine: chunks split anywhere (inside an SSE line, a
//! UTF-8 sequence, a JSON string) give the same events and the same turn as the whole body.
//! It never fails: a malformed piece, a provider error or a cut stream is an `error` event
//! with a stable code, and everything parsed before it stays in the turn.

pub use crate::provider::errors;
pub use crate::stream::partial::{apply as apply_edits, Edit, ObjectSource, Partial, Step};
pub use crate::stream::{events_json, Event, FinishReason, Usage, MAX_FRAME_BYTES};

use crate::error::{Error, ErrorKind, Result};
use crate::provider::{malformed, Provider};
use crate::stream::builder::Builder;
use crate::stream::framing::{Frame, Framer, Sink};
use crate::turn::{AssistantTurn, Turn};
use serde_json::Value;

/// What reads the frames: the provider's reader and the turn being built.
struct Reader {
    provider: Provider,
    builder: Builder,
    dialect: Box<dyn crate::provider::Reader>,
    /// The body ended inside an event.
    cut: bool,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("provider", &self.provider)
            .field("builder", &self.builder)
            .field("cut", &self.cut)
            .finish_non_exhaustive()
    }
}

impl Sink for Reader {
    fn frame(&mut self, f: Frame<'_>) {
        let b = &mut self.builder;
        match f {
            Frame::Done => self.dialect.done(b),
            Frame::Malformed(what) => b.error(malformed(self.provider, &what)),
            Frame::Cut(name, data) => {
                // The end cut this event: read it if it is whole, else the stream was cut.
                if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
                    self.frame(Frame::Data(name, data));
                } else {
                    self.cut = true;
                }
            }
            Frame::Data(name, data) => {
                if b.done {
                    return; // nothing follows the terminal event
                }
                if self.dialect.fast(b, data) {
                    return;
                }
                let Some(v) = self.json(name, data, "an event") else {
                    return;
                };
                self.dialect.event(&mut self.builder, &v);
            }
            Frame::Body(data) => {
                let Some(v) = self.json(None, data, "the body") else {
                    self.builder.terminal();
                    return;
                };
                self.dialect.body(&mut self.builder, &v);
            }
        }
    }
}

impl Reader {
    /// The JSON of an event or body, or an error event saying why it is not JSON.
    fn json(&mut self, name: Option<&str>, data: &str, what: &str) -> Option<Value> {
        match serde_json::from_str::<Value>(data) {
            Ok(v) => Some(v),
            Err(e) => {
                let what = match name {
                    Some(n) => format!("the `{n}` event"),
                    None => what.to_owned(),
                };
                let excerpt: String = data.chars().take(120).collect();
                self.builder.error(
                    malformed(self.provider, &format!("{what} is not JSON ({e})"))
                        .with("data", excerpt),
                );
                None
            }
        }
    }
}

/// Reads one response, chunk by chunk.
#[derive(Debug)]
pub struct ResponseParser {
    framer: Framer,
    reader: Reader,
    /// Bytes seen (an empty response is a cut one).
    seen: bool,
    ended: bool,
}

/// What a finished parse gives.
#[derive(Debug)]
pub struct Finished {
    /// The events the end completed (closing a cut tool call, usage, finish, errors).
    pub events: Vec<Event>,
    /// The assistant turn: every part read, with `metadata` holding `provider`, `id`,
    /// `model`, `finish_reason`, `stop_reason`, `usage` and, when something went wrong,
    /// `error: { code, message }`.
    pub turn: AssistantTurn,
    /// The first error (a provider error, a malformed or cut stream, invalid tool input).
    pub error: Option<Error>,
}

impl ResponseParser {
    /// A parser for `provider`'s responses.
    pub fn new(provider: Provider) -> Self {
        let d = provider.dialect();
        ResponseParser {
            framer: Framer::new(),
            reader: Reader {
                provider,
                builder: Builder::new(d.spec().family, provider.name()),
                dialect: d.reader(),
                cut: false,
            },
            seen: false,
            ended: false,
        }
    }

    /// A parser for the response to `request` (the lowered body, or its start): when the
    /// request asked for a JSON answer, the parser reads it as it streams (`object-delta`
    /// events) and parses it whole at the end (`metadata.object` of the turn, or an
    /// `InvalidOutput` error keeping the text).
    pub fn for_request(provider: Provider, request: &str) -> Self {
        let mut p = ResponseParser::new(provider);
        if let Some(source) = provider.dialect().object_source(request) {
            p.reader.builder.expect_object(source);
        }
        p
    }

    /// A parser that reads the answer's JSON from `source` (see
    /// [`ResponseParser::for_request`]).
    pub fn with_object(provider: Provider, source: ObjectSource) -> Self {
        let mut p = ResponseParser::new(provider);
        p.reader.builder.expect_object(source);
        p
    }

    /// The provider this parser reads.
    pub fn provider(&self) -> Provider {
        self.reader.provider
    }

    /// Feeds the next bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        if self.ended {
            return Vec::new();
        }
        self.seen |= !chunk.is_empty();
        self.framer.push(chunk, &mut self.reader);
        self.reader.builder.take_events()
    }

    /// Ends the response: frames what is left, closes open parts, and reports a stream
    /// that stopped before its provider's last event (`StreamTruncated`). Returns the events
    /// that completes; calling it again returns none.
    pub fn end(&mut self) -> Vec<Event> {
        if self.ended {
            return Vec::new();
        }
        let clean = self.framer.finish(&mut self.reader);
        self.ended = true;
        let provider = self.reader.provider;
        let cut = self.reader.cut;
        let b = &mut self.reader.builder;
        if !b.done {
            // A stream whose finish reason came but not its last marker is complete enough
            // (OpenAI-compatible servers that send no `[DONE]`). After a provider's error
            // event the end of the stream is expected: no second error.
            let said = b.first_error().is_some_and(|e| {
                !matches!(
                    e.kind(),
                    ErrorKind::InvalidToolInput | ErrorKind::StreamMalformed
                )
            });
            if said {
                b.finish_reason(FinishReason::Error, None);
            } else if cut || !clean || !b.has_finish() {
                let what = if !self.seen {
                    "the response is empty".to_owned()
                } else {
                    let last = provider.spec().stream_end;
                    format!("the stream ended before {last}; what came before it is kept")
                };
                b.error(
                    Error::new(
                        ErrorKind::StreamTruncated,
                        format!("{} response: {what}", provider.name()),
                    )
                    .with("provider", provider.name()),
                );
                b.finish_reason(FinishReason::Error, None);
            }
            b.terminal();
        }
        b.take_events()
    }

    /// The assistant turn as read so far.
    pub fn turn(&self) -> AssistantTurn {
        self.reader.builder.turn()
    }

    /// The first error so far.
    pub fn error(&self) -> Option<&Error> {
        self.reader.builder.first_error()
    }

    /// Ends the response (see [`ResponseParser::end`]) and gives the turn.
    pub fn finish(mut self) -> Finished {
        let events = self.end();
        Finished {
            events,
            turn: self.reader.builder.turn(),
            error: self.reader.builder.first_error().cloned(),
        }
    }
}

/// A whole response parsed at once.
#[derive(Debug)]
pub struct Parsed {
    /// Every event the body gives (as a stream of it would).
    pub events: Vec<Event>,
    /// The assistant turn.
    pub turn: AssistantTurn,
}

/// Parses a whole response body (non-streaming JSON, or a whole SSE stream). A provider
/// error payload or a body that is not the provider's is an error with the provider's code;
/// invalid tool arguments are not (the turn names them in `metadata.error`).
pub fn parse_response(provider: Provider, body: &[u8]) -> Result<Parsed> {
    parse_with(ResponseParser::new(provider), body)
}

/// Parses a whole response body to `request` (the lowered body, or its start): as
/// [`parse_response`], and when the request asked for a JSON answer, the turn's
/// `metadata.object` holds it (see [`ResponseParser::for_request`]).
pub fn parse_response_for(provider: Provider, request: &str, body: &[u8]) -> Result<Parsed> {
    parse_with(ResponseParser::for_request(provider, request), body)
}

fn parse_with(mut p: ResponseParser, body: &[u8]) -> Result<Parsed> {
    let mut events = p.push(body);
    let f = p.finish();
    events.extend(f.events);
    match f.error {
        Some(e)
            if !matches!(
                e.kind(),
                ErrorKind::InvalidToolInput | ErrorKind::InvalidOutput
            ) =>
        {
            Err(e)
        }
        _ => Ok(Parsed {
            events,
            turn: f.turn,
        }),
    }
}

/// The turn as a conversation [`Turn`].
impl From<AssistantTurn> for Turn {
    fn from(t: AssistantTurn) -> Turn {
        Turn::Assistant(t)
    }
}
