//! The event stream: how a server that reads a provider's answer (a Worker, a Node or WASI
//! service holding the key) hands it on to a page, which gets the same normalised events and
//! the same final assistant turn as if it had read the provider itself.
//!
//! The protocol is `promptloom-events`, version 1: Server-Sent Events in UTF-8, served as
//! `text/event-stream`.
//!
//! ```text
//! event: open
//! data: {"protocol":"promptloom-events","version":1,"provider":"anthropic"}
//!
//! id: 1
//! data: {"type":"start","id":"msg_1","model":"claude-sonnet-4-5"}
//!
//! id: 2
//! data: {"type":"text-delta","part":0,"text":"Hel"}
//!
//! …
//!
//! event: turn
//! id: 9
//! data: {"role":"assistant","parts":[…],"metadata":{…}}
//! ```
//!
//! - `open` comes first: the protocol, its version and the provider whose answer follows.
//!   A reader refuses a version newer than its own.
//! - Every normalised [`Event`] is one SSE event without a name, numbered by `id` from 1.
//! - `error` (named) is a failure the events did not carry — an HTTP error from the
//!   provider, a network failure — as `{ code, message, details }`. It is not one of the
//!   answer's events: a reader reports it as the stream's error, as an adapter throws it.
//! - `turn` comes last: the final assistant turn as the server's parser built it (provider
//!   data, tool-call items and metadata the events do not carry included), or the turn
//!   read before a failure. Nothing follows.
//! - A stream that ends without its `turn` was cut: the reader reports `StreamTruncated` and
//!   gives the turn rebuilt from the events it read (its text, reasoning, tool calls,
//!   usage), with `metadata.error`.
//! - The ids let a page that lost the connection ask for the rest (SSE's `Last-Event-ID`):
//!   [`EventStreamReader::last_event_id`] is the last event it read whole. A server that
//!   keeps what it wrote in an [`EventStreamLog`] answers with [`EventStreamLog::since`]
//!   that id (the `open` event again, then the events after it) and the rest as it comes
//!   ([`EventStreamLog::tail`]); the page's reader, told of the new connection
//!   ([`EventStreamReader::reconnect`]), reads on, skipping an event it read already.
//! - Lines starting with `:` are comments (keep-alives) and names this version does not
//!   know are skipped, so later versions may add events.
//!
//! ```
//! use promptloom::event_stream::{EventStreamReader, EventStreamWriter};
//! use promptloom::response::ResponseParser;
//! use promptloom::Provider;
//!
//! // The server reads the provider and writes the event stream.
//! let mut parser = ResponseParser::new(Provider::OpenAiChat);
//! let mut writer = EventStreamWriter::new(Provider::OpenAiChat);
//! let mut wire = writer.open();
//! wire += &writer.events(&parser.push(b"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"));
//! wire += &writer.events(&parser.push(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"));
//! let done = parser.finish();
//! wire += &writer.events(&done.events);
//! wire += &writer.close(&done.turn);
//!
//! // The page reads it back: the same turn.
//! let mut reader = EventStreamReader::new();
//! let events = reader.push(wire.as_bytes());
//! assert!(events.contains("\"text\":\"Hi\""));
//! reader.end();
//! assert!(reader.error().is_none());
//! assert_eq!(reader.turn(), done.turn.to_value());
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::provider::Provider;
use crate::stream::builder::{Builder, Key};
use crate::stream::framing::{Frame, Framer, Sink};
use crate::stream::{Event, FinishReason, Usage};
use crate::turn::{AssistantTurn, Turn};
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The protocol's name, in its `open` event.
pub const PROTOCOL: &str = "promptloom-events";
/// The protocol version this build writes and the newest it reads.
pub const VERSION: u64 = 1;
/// The HTTP content type of an event stream.
pub const CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";
/// The request header that names a relayed run, so a reconnect (a `GET` with the SSE
/// `last-event-id` header) reaches the [`EventStreamLog`] that kept it.
pub const RUN_HEADER: &str = "x-promptloom-run";
/// The HTTP statuses a server answers an attach to a run with when it no longer has the run
/// (404, 410): the run is lost, and a reloaded chat keeps the reply it had read (its draft)
/// instead of attaching again.
pub const RUN_LOST: [u16; 2] = [404, 410];

/// Writes one answer as an event stream: [`open`](Self::open) (or the first frames of any
/// call), the events as they come, then [`close`](Self::close) or [`fail`](Self::fail).
/// Each call returns the bytes to send (UTF-8 text); nothing is written after the turn.
#[derive(Debug)]
pub struct EventStreamWriter {
    provider: Provider,
    /// The id of the last event written.
    id: u64,
    opened: bool,
    /// An `error` event went out (a failure does not repeat it).
    error_sent: bool,
    closed: bool,
}

impl EventStreamWriter {
    /// A writer for an answer of `provider`.
    pub fn new(provider: Provider) -> Self {
        EventStreamWriter {
            provider,
            id: 0,
            opened: false,
            error_sent: false,
            closed: false,
        }
    }

    /// The `open` event (once; later calls return nothing).
    pub fn open(&mut self) -> String {
        let mut out = String::new();
        self.head(&mut out);
        out
    }

    fn head(&mut self, out: &mut String) {
        if !self.opened {
            self.opened = true;
            let _ = write!(
                out,
                "event: open\ndata: {{\"protocol\":\"{PROTOCOL}\",\"version\":{VERSION},\"provider\":\"{}\"}}\n\n",
                self.provider.name()
            );
        }
    }

    /// One numbered event frame of `data` (a JSON text).
    fn frame(&mut self, out: &mut String, name: Option<&str>, data: &str) {
        self.id += 1;
        if let Some(n) = name {
            let _ = writeln!(out, "event: {n}");
        }
        let _ = writeln!(out, "id: {}", self.id);
        data_lines(out, data);
        out.push('\n');
    }

    /// The frames of `events`.
    pub fn events(&mut self, events: &[Event]) -> String {
        let mut out = String::new();
        if self.closed {
            return out;
        }
        self.head(&mut out);
        for e in events {
            self.error_sent |= matches!(e, Event::Error { .. });
            let text = crate::json_text::to_string(e).unwrap_or_default();
            self.frame(&mut out, None, &text);
        }
        out
    }

    /// The frames of `events`, a JSON array of events (the bindings' wire form), each
    /// written as its text is (the array is split, not parsed into values: an event the
    /// core serialised begins with its `type`, and only one that does not is read whole).
    pub fn events_json(&mut self, events: &str) -> Result<String> {
        let bad = |at: Option<usize>| {
            let e = Error::new(
                ErrorKind::InvalidOptions,
                "the events are a JSON array of objects, each with a `type`",
            );
            match at {
                Some(i) => e.at(format!("events[{i}]")),
                None => e,
            }
        };
        let list = items(events).ok_or_else(|| bad(None))?;
        let mut errors = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let kind = match item.strip_prefix("{\"type\":\"") {
                Some(rest) if serde_json::from_str::<serde::de::IgnoredAny>(item).is_ok() => {
                    Some(rest.starts_with("error\""))
                }
                _ => serde_json::from_str::<Value>(item)
                    .ok()
                    .and_then(|v| v.get("type").and_then(Value::as_str).map(|t| t == "error")),
            };
            errors.push(kind.ok_or_else(|| bad(Some(i)))?);
        }
        let mut out = String::new();
        if self.closed {
            return Ok(out);
        }
        self.head(&mut out);
        for (item, error) in list.iter().zip(errors) {
            self.error_sent |= error;
            self.frame(&mut out, None, item);
        }
        Ok(out)
    }

    /// The closing `turn` event: the final assistant turn.
    pub fn close(&mut self, turn: &AssistantTurn) -> String {
        let mut out = String::new();
        if self.closed {
            return out;
        }
        self.head(&mut out);
        self.closed = true;
        self.frame(&mut out, Some("turn"), &turn.to_value().json_text());
        out
    }

    /// [`close`](Self::close) with the turn as JSON (checked to be an assistant turn).
    pub fn close_json(&mut self, turn: &str) -> Result<String> {
        Ok(self.close(&assistant_turn(turn)?))
    }

    /// Ends the stream with a failure the events did not carry (an HTTP error, a network
    /// failure, an abort): an `error` event naming it (unless an error went out already as
    /// one of the events), then the turn read before it, or an empty one naming the error.
    pub fn fail(&mut self, error: &Error, turn: Option<&AssistantTurn>) -> String {
        let mut out = String::new();
        if self.closed {
            return out;
        }
        self.head(&mut out);
        let mut built = None;
        if !self.error_sent {
            self.error_sent = true;
            self.frame(&mut out, Some("error"), &error.to_json());
        }
        let turn = match turn {
            Some(t) => t,
            None => {
                let mut b = builder_for(self.provider);
                b.error(error.clone());
                b.terminal();
                &*built.insert(b.turn())
            }
        };
        out.push_str(&self.close(turn));
        out
    }

    /// [`fail`](Self::fail) with the turn as JSON.
    pub fn fail_json(&mut self, error: &Error, turn: Option<&str>) -> Result<String> {
        let turn = turn.map(assistant_turn).transpose()?;
        Ok(self.fail(error, turn.as_ref()))
    }
}

/// The items of a JSON array's text, as slices (strings and nesting skipped over); `None`
/// when the text is not one array.
fn items(text: &str) -> Option<Vec<&str>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    let (mut depth, mut in_str, mut esc, mut start) = (0u32, false, false, 0usize);
    for (i, c) in inner.bytes().enumerate() {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => {
                out.push(inner.get(start..i)?.trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || in_str {
        return None;
    }
    let last = inner.get(start..)?.trim();
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    Some(out)
}

/// `data:` lines of `text`: one per line of it (any of SSE's line ends splits), so a JSON
/// text with line breaks in its white space still reads back whole.
fn data_lines(out: &mut String, text: &str) {
    for line in text.split(['\n', '\r']) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
}

/// An assistant turn from its JSON.
fn assistant_turn(text: &str) -> Result<AssistantTurn> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::json(ErrorKind::InvalidOptions, "the turn", &e))?;
    match Turn::from_value(v) {
        Ok(Turn::Assistant(t)) => Ok(t),
        Ok(_) => Err(Error::new(
            ErrorKind::InvalidOptions,
            "the turn of an event stream is an assistant turn",
        )
        .at("turn")),
        Err(e) => Err(e.within("turn")),
    }
}

fn builder_for(p: Provider) -> Builder {
    Builder::new(p.spec().family, p.name())
}

/// The builder's block key of an event's part.
fn key(kind: u8, part: u64) -> Key {
    (kind, part, 0)
}
const TEXT: u8 = 0;
const REASONING: u8 = 1;
const TOOL: u8 = 2;

/// Reads an event stream (fed in chunks split anywhere): the events as the server wrote
/// them, and the final turn.
#[derive(Debug)]
pub struct EventStreamReader {
    framer: Framer,
    state: State,
    /// Bytes seen (an empty response is a cut one).
    seen: bool,
    ended: bool,
}

#[derive(Debug, Default)]
struct State {
    /// The provider the `open` event named (none: the stream has not opened).
    provider: Option<Provider>,
    /// What the turn is rebuilt from when the server's does not come: the events and the
    /// failures, in order. Rebuilt only then (or when asked for the turn so far), so a
    /// stream that ends with its turn parses each event once, in the page's `JSON.parse`.
    log: Vec<Logged>,
    /// The server's final turn.
    turn: Option<AssistantTurn>,
    /// The turn rebuilt at the end of a cut stream.
    cut: Option<Builder>,
    /// The events of the current push, as a JSON array's items.
    out: String,
    errors: Vec<Error>,
    /// The stream opened is not one this build reads: the rest is skipped.
    refused: bool,
    /// The SSE last event ID (not moved by what follows the turn).
    last_id: Option<String>,
    /// The frame being dispatched carries an id at or before `last_id`: a reconnect's
    /// replay of an event read already.
    replayed: bool,
}

/// One entry of the reader's log.
#[derive(Debug)]
enum Logged {
    /// An event's JSON text.
    Event(String),
    /// A failure the events did not carry (a named `error` event).
    Failure(Error),
}

impl Default for EventStreamReader {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStreamReader {
    /// A reader that has seen nothing.
    pub fn new() -> Self {
        EventStreamReader {
            framer: Framer::new(),
            state: State::default(),
            seen: false,
            ended: false,
        }
    }

    /// Feeds the next bytes; returns the events they complete, as a JSON array (each event
    /// as the server wrote it, and the reader's own `error` events).
    pub fn push(&mut self, chunk: &[u8]) -> String {
        if self.ended {
            return String::from("[]");
        }
        self.seen |= !chunk.is_empty();
        self.framer.push(chunk, &mut self.state);
        self.state.take()
    }

    /// Ends the stream; a stream without its `turn` event was cut (`StreamTruncated`, the
    /// turn rebuilt from the events read). Returns the events that completes (a JSON array).
    pub fn end(&mut self) -> String {
        if self.ended {
            return String::from("[]");
        }
        self.framer.finish(&mut self.state);
        self.ended = true;
        let s = &mut self.state;
        if s.turn.is_none() {
            let why = if !self.seen {
                "the response is empty"
            } else if s.provider.is_none() {
                "the response is not an event stream (it has no `open` event)"
            } else {
                "the event stream ended before its `turn` event; what came before it is kept"
            };
            let e = Error::new(ErrorKind::StreamTruncated, why);
            s.push_own(&Event::error(&e));
            s.errors.push(e.clone());
            let mut b = s.rebuild();
            let usage_seen = b.has_usage();
            b.error(e);
            b.finish_reason(FinishReason::Error, None);
            b.terminal();
            for ev in b.take_events() {
                match ev {
                    Event::Error { .. } => {}
                    Event::Usage(_) if usage_seen => {}
                    ev => s.push_own(&ev),
                }
            }
            s.cut = Some(b);
        }
        s.take()
    }

    /// The final assistant turn: the server's, else the one rebuilt from the events so far
    /// (its wire form, `{ role: "assistant", parts, metadata }`).
    pub fn turn(&self) -> Value {
        let s = &self.state;
        match (&s.turn, &s.cut) {
            (Some(t), _) => t.to_value(),
            (None, Some(b)) => b.turn().to_value(),
            (None, None) if s.provider.is_some() => s.rebuild().turn().to_value(),
            (None, None) => AssistantTurn {
                parts: Vec::new(),
                metadata: Map::new(),
            }
            .to_value(),
        }
    }

    /// The first error: an `error` event of the stream, or the stream's own fault.
    pub fn error(&self) -> Option<&Error> {
        self.state.errors.first()
    }

    /// The provider whose answer this is (from the `open` event).
    pub fn provider(&self) -> Option<Provider> {
        self.state.provider
    }

    /// The id of the last event read whole, for a reconnect's `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        self.state.last_id.as_deref()
    }

    /// Whether the `turn` event came (the stream is complete).
    pub fn complete(&self) -> bool {
        self.state.turn.is_some()
    }

    /// The connection broke before the turn and a new one goes on (the server's replay
    /// from [`Self::last_event_id`]): a frame cut by the break is dropped, the `open` event
    /// may come again (for the same provider), and an event numbered at or before the last
    /// one read is skipped.
    pub fn reconnect(&mut self) {
        if self.ended || self.state.turn.is_some() {
            return;
        }
        self.framer = Framer::new();
    }
}

impl State {
    /// The events gathered since the last call, as a JSON array.
    fn take(&mut self) -> String {
        if self.out.is_empty() {
            return String::from("[]");
        }
        let mut s = String::with_capacity(self.out.len() + 2);
        s.push('[');
        s.push_str(&self.out);
        s.push(']');
        self.out.clear();
        s
    }

    fn push_raw(&mut self, text: &str) {
        if !self.out.is_empty() {
            self.out.push(',');
        }
        self.out.push_str(text);
    }

    fn push_own(&mut self, e: &Event) {
        let text = crate::json_text::to_string(e).unwrap_or_default();
        self.push_raw(&text);
    }

    /// The stream's own fault: an error event (once per kind of fault is enough for a page).
    fn fault(&mut self, e: Error) {
        self.push_own(&Event::error(&e));
        self.errors.push(e);
    }

    /// The turn the logged events build (the builder's own events dropped).
    fn rebuild(&self) -> Builder {
        let mut b = match self.provider {
            Some(p) => builder_for(p),
            None => Builder::new("", ""),
        };
        for item in &self.log {
            match item {
                Logged::Event(text) => {
                    if let Ok(v) = serde_json::from_str::<Value>(text) {
                        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
                        replay(&mut b, kind, &v);
                    }
                }
                Logged::Failure(e) => b.error(e.clone()),
            }
        }
        b.take_events();
        b
    }

    fn open(&mut self, data: &str) {
        if self.provider.is_some() || self.refused {
            return;
        }
        let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        let malformed = |why: String| Error::new(ErrorKind::StreamMalformed, why);
        if v.get("protocol").and_then(Value::as_str) != Some(PROTOCOL) {
            self.refused = true;
            return self.fault(malformed(format!(
                "the stream's `open` event is not of the {PROTOCOL} protocol"
            )));
        }
        match v.get("version").and_then(Value::as_u64) {
            Some(n) if (1..=VERSION).contains(&n) => {}
            n => {
                self.refused = true;
                let n = n.map_or_else(|| "no version".to_owned(), |n| format!("version {n}"));
                return self.fault(
                    malformed(format!(
                        "the event stream is of {n}; this build reads versions 1 to {VERSION}"
                    ))
                    .with("version", v.get("version").cloned().unwrap_or(Value::Null)),
                );
            }
        }
        let name = v.get("provider").and_then(Value::as_str).unwrap_or("");
        match Provider::parse(name) {
            Ok(p) => self.provider = Some(p),
            Err(_) => {
                self.refused = true;
                self.fault(malformed(format!(
                    "the event stream names an unknown provider `{name}`"
                )));
            }
        }
    }

    /// The `open` event of a reconnect's replay: the same stream goes on.
    fn reopen(&mut self, data: &str) {
        let was = self.provider.take();
        self.open(data);
        if self.provider != was {
            // The stream read so far stays the one rebuilt; what follows is not read.
            self.provider = was;
            if self.refused {
                return;
            }
            self.refused = true;
            self.fault(Error::new(
                ErrorKind::StreamMalformed,
                "a reconnect's `open` event names another provider than the stream's",
            ));
        }
    }

    fn turn(&mut self, data: &str) {
        match assistant_turn(data) {
            Ok(t) => self.turn = Some(t),
            Err(e) => self.fault(Error::new(
                ErrorKind::StreamMalformed,
                format!("the event stream's `turn` is not an assistant turn: {e}"),
            )),
        }
    }

    /// A failure outside the events: the stream's error, and the rebuilt turn's.
    fn failure(&mut self, data: &str) {
        let e = match error_from_json(data) {
            Ok(e) => e,
            Err(_) => Error::new(
                ErrorKind::StreamMalformed,
                "the event stream's `error` is not an error `{ code, message, details }`",
            ),
        };
        self.log.push(Logged::Failure(e.clone()));
        self.errors.push(e);
    }

    fn event(&mut self, data: &str) {
        // Checked whole (no value built); only an event that may be an error is read.
        let object = data.trim_start().starts_with('{');
        if !object || serde_json::from_str::<serde::de::IgnoredAny>(data).is_err() {
            let excerpt: String = data.chars().take(120).collect();
            return self.fault(
                Error::new(
                    ErrorKind::StreamMalformed,
                    "an event of the stream is not a JSON object",
                )
                .with("data", excerpt),
            );
        }
        if data.contains("\"error\"") {
            if let Ok(v) = serde_json::from_str::<Value>(data) {
                if v.get("type").and_then(Value::as_str) == Some("error") {
                    self.errors.push(event_error(&v));
                }
            }
        }
        self.log.push(Logged::Event(data.to_owned()));
        self.push_raw(data);
    }
}

/// An event id as a number (ids are numbered from 1; another id is not ordered).
fn id_number(id: Option<&str>) -> Option<u64> {
    id.and_then(|i| i.trim().parse().ok())
}

impl Sink for State {
    fn id(&mut self, id: Option<&str>) {
        if self.turn.is_some() {
            return;
        }
        match (id_number(id), id_number(self.last_id.as_deref())) {
            (Some(new), Some(old)) if new <= old => self.replayed = true,
            _ => self.last_id = id.map(str::to_owned),
        }
    }

    fn frame(&mut self, f: Frame<'_>) {
        if self.turn.is_some() {
            return; // nothing follows the turn
        }
        if std::mem::take(&mut self.replayed) {
            return; // read before the connection broke
        }
        match f {
            Frame::Data(Some("open"), data) if self.provider.is_some() => self.reopen(data),
            Frame::Data(Some("open"), data) => self.open(data),
            Frame::Data(_, _) if self.refused => {}
            Frame::Data(Some("turn"), data) if self.provider.is_some() => self.turn(data),
            Frame::Data(Some("error"), data) if self.provider.is_some() => self.failure(data),
            Frame::Data(None | Some("message"), data) if self.provider.is_some() => {
                self.event(data)
            }
            Frame::Data(None | Some("message") | Some("turn"), _) => {
                self.refused = true;
                self.fault(Error::new(
                    ErrorKind::StreamMalformed,
                    "the stream is not an event stream: it does not begin with its `open` event",
                ));
            }
            Frame::Malformed(what) => self.fault(Error::new(
                ErrorKind::StreamMalformed,
                format!("the event stream is malformed: {what}"),
            )),
            // An event the end cut before its blank line was not sent whole; other names,
            // `[DONE]` and whole bodies are not this protocol's.
            Frame::Cut(..) | Frame::Data(..) | Frame::Done | Frame::Body(_) => {}
        }
    }
}

/// The frames a server wrote for one answer, kept so a page that lost the connection gets
/// what it missed: fed the writer's output as it is sent ([`push`](Self::push)), it answers
/// a reconnect with [`since`](Self::since) the page's last event id, then the frames that
/// come after ([`tail`](Self::tail)) until the stream [finished](Self::finished).
#[derive(Debug, Default)]
pub struct EventStreamLog {
    /// Everything recorded, as written.
    text: String,
    /// Where the `open` frame ends (0: not whole yet).
    open_end: usize,
    /// The whole frames with an id: the id, where the frame starts.
    frames: Vec<(u64, usize)>,
    /// Where the frames read so far end (a frame not whole yet starts there).
    whole: usize,
    /// The `turn` (or a failure without one) was written: nothing more comes.
    finished: bool,
}

impl EventStreamLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the next text the writer wrote (split anywhere).
    pub fn push(&mut self, text: &str) {
        self.text.push_str(text);
        while let Some(rel) = self.text.get(self.whole..).and_then(|t| t.find("\n\n")) {
            let (start, end) = (self.whole, self.whole + rel + 2);
            let frame = self.text.get(start..end).unwrap_or_default();
            let field = |name: &str| {
                frame
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.strip_prefix(' ').unwrap_or(v))
            };
            match field("event:") {
                Some("open") if self.open_end == 0 => self.open_end = end,
                Some("turn") => self.finished = true,
                _ => {}
            }
            if let Some(id) = id_number(field("id:")) {
                self.frames.push((id, start));
            }
            self.whole = end;
        }
    }

    /// What a page that read up to event `after` (none: nothing) is sent on its reconnect:
    /// the `open` frame, then every whole frame numbered after it; with the position in the
    /// recording where that text ends, for [`Self::tail`].
    pub fn since(&self, after: Option<&str>) -> (String, usize) {
        let n = id_number(after).unwrap_or(0);
        let from = self
            .frames
            .iter()
            .find(|(id, _)| *id > n)
            .map_or(self.whole, |f| f.1);
        let mut out = self
            .text
            .get(..self.open_end)
            .unwrap_or_default()
            .to_owned();
        out.push_str(
            self.text
                .get(from.max(self.open_end)..self.whole)
                .unwrap_or_default(),
        );
        (out, self.whole)
    }

    /// The whole frames recorded after position `at` (from [`Self::since`] or the last
    /// tail), and where they end.
    pub fn tail(&self, at: usize) -> (String, usize) {
        let at = at.min(self.whole);
        (
            self.text.get(at..self.whole).unwrap_or_default().to_owned(),
            self.whole,
        )
    }

    /// Whether the stream ended with its turn: nothing more will be recorded.
    pub fn finished(&self) -> bool {
        self.finished
    }
}

/// An error from its wire form (`{ code, message, details }`, as the bindings and `error`
/// events carry it); a code this build does not know is a `ProviderError`.
pub fn error_from_json(text: &str) -> Result<Error> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::json(ErrorKind::InvalidOptions, "the error", &e))?;
    if !v.is_object() {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            "an error is an object `{ code, message, details }`",
        ));
    }
    Ok(event_error(&v))
}

/// The error of an `error` event.
fn event_error(v: &Value) -> Error {
    let code = v.get("code").and_then(Value::as_str).unwrap_or("");
    let kind = ErrorKind::from_code(code).unwrap_or(ErrorKind::ProviderError);
    let message = v.get("message").and_then(Value::as_str).unwrap_or("");
    Error::with_details(kind, message, v.get("details").cloned().unwrap_or_default())
}

/// Applies one event to the turn being rebuilt.
fn replay(b: &mut Builder, kind: &str, v: &Value) {
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let part = v.get("part").and_then(Value::as_u64).unwrap_or(0);
    match kind {
        "start" => b.start(s("id"), s("model")),
        "text-delta" => b.text(key(TEXT, part), s("text").unwrap_or("")),
        "reasoning-delta" => b.reasoning(key(REASONING, part), s("text").unwrap_or("")),
        "reasoning-end" => {
            let k = key(REASONING, part);
            let redacted = v.get("redacted").and_then(Value::as_bool) == Some(true);
            let data = redacted.then(|| s("data").unwrap_or(""));
            b.reasoning_meta(k, s("signature"), data, s("id"));
            b.end(k);
        }
        "citation" => {
            if let Some(Value::Object(c)) = v.get("citation") {
                b.citation(key(TEXT, part), c.clone());
            }
        }
        "tool-call-start" => b.tool_start_kind(
            key(TOOL, part),
            s("id").unwrap_or(""),
            s("name").unwrap_or(""),
            s("kind"),
        ),
        "tool-call-delta" => b.tool_delta(key(TOOL, part), s("delta").unwrap_or("")),
        "tool-call-end" => b.tool_end_with(
            key(TOOL, part),
            v.get("input").cloned().unwrap_or(Value::Null),
        ),
        "usage" => {
            let n = |k: &str| v.get(k).and_then(Value::as_u64);
            b.usage(Usage {
                input_tokens: n("input_tokens").unwrap_or(0),
                output_tokens: n("output_tokens").unwrap_or(0),
                cached_tokens: n("cached_tokens"),
                cache_write_tokens: n("cache_write_tokens"),
                reasoning_tokens: n("reasoning_tokens"),
            });
        }
        "finish" => b.finish_reason(finish_reason(s("reason")), s("raw")),
        "error" => b.error(event_error(v)),
        _ => {}
    }
}

/// A finish reason from its wire name.
fn finish_reason(name: Option<&str>) -> FinishReason {
    match name {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool-calls") => FinishReason::ToolCalls,
        Some("content-filter") => FinishReason::ContentFilter,
        Some("pause") => FinishReason::Pause,
        Some("error") => FinishReason::Error,
        _ => FinishReason::Other,
    }
}
