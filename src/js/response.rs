//! The response side for JS: conversions only. The glue (`pkg/src/response.js`) writes each
//! chunk's bytes into the inbox and turns the events into objects; `pkg/src/adapter.js`
//! does the `fetch`, with the endpoints, headers and retry rules asked from here.

use super::js_err;
use crate::error::{Error, ErrorKind};
use crate::event_stream::{error_from_json, EventStreamReader, EventStreamWriter};
use crate::json_text::JsonText;
use crate::lower::Provider;
use crate::response::{self, events_json, ResponseParser};
use crate::transport::{self, RetryPolicy, TargetOptions};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// The first `len` bytes of the inbox.
fn inbox_bytes<R>(len: usize, f: impl FnOnce(&[u8]) -> R) -> Result<R, JsValue> {
    super::INBOX.with(|b| {
        let b = b.borrow();
        match b.get(..len) {
            Some(bytes) => Ok(f(bytes)),
            None => Err(js_err(Error::new(ErrorKind::Internal, "inbox overrun"))),
        }
    })
}

fn provider(name: &str) -> Result<Provider, JsValue> {
    Provider::parse(name).map_err(js_err)
}

/// A response parser kept in wasm.
#[wasm_bindgen(js_name = ResponseParserCore)]
pub struct JsResponseParser {
    inner: ResponseParser,
}

#[wasm_bindgen(js_class = ResponseParserCore)]
impl JsResponseParser {
    /// A parser for `provider`'s responses; `request` (the lowered body, or its start)
    /// says whether a JSON answer is expected (see `ResponseParser::for_request`).
    #[wasm_bindgen(constructor)]
    pub fn new(provider_name: &str, request: Option<String>) -> Result<JsResponseParser, JsValue> {
        let p = provider(provider_name)?;
        Ok(JsResponseParser {
            inner: match request {
                Some(r) => ResponseParser::for_request(p, &r),
                None => ResponseParser::new(p),
            },
        })
    }

    /// Feeds the first `len` bytes of the inbox; returns the events they complete (a JSON
    /// array).
    #[wasm_bindgen(js_name = pushInbox)]
    pub fn push_inbox(&mut self, len: usize) -> Result<String, JsValue> {
        let events = inbox_bytes(len, |b| self.inner.push(b))?;
        Ok(events_json(&events))
    }

    /// Ends the response; returns the events that completes (a JSON array).
    pub fn end(&mut self) -> String {
        events_json(&self.inner.end())
    }

    /// The assistant turn so far (JSON).
    #[wasm_bindgen(js_name = turnJson)]
    pub fn turn_json(&self) -> String {
        self.inner.turn().to_value().json_text()
    }

    /// The first error so far (its JSON wire form), or "".
    #[wasm_bindgen(js_name = errorJson)]
    pub fn error_json(&self) -> String {
        self.inner.error().map(Error::to_json).unwrap_or_default()
    }
}

/// Parses the whole body in the first `len` bytes of the inbox: the assistant turn (JSON),
/// or the provider's error.
#[wasm_bindgen(js_name = parseResponseInbox)]
pub fn parse_response_inbox(
    provider_name: &str,
    len: usize,
    request: Option<String>,
) -> Result<String, JsValue> {
    let p = provider(provider_name)?;
    inbox_bytes(len, |b| match &request {
        Some(r) => response::parse_response_for(p, r, b),
        None => response::parse_response(p, b),
    })?
    .map(|parsed| parsed.turn.to_value().json_text())
    .map_err(js_err)
}

/// The error of an HTTP error response (its JSON wire form); `retry_after_ms` < 0: none.
#[wasm_bindgen(js_name = providerError)]
pub fn provider_error(
    provider_name: &str,
    status: u16,
    body: &str,
    retry_after_ms: f64,
) -> Result<String, JsValue> {
    let p = provider(provider_name)?;
    let after = (retry_after_ms.is_finite() && retry_after_ms >= 0.0)
        .then(|| retry_after_ms.min(u64::MAX as f64) as u64);
    Ok(response::errors::from_http(p, status, body, after).to_json())
}

/// The endpoint and headers (`{ url, headers }` JSON) for `options` JSON.
#[wasm_bindgen(js_name = requestTarget)]
pub fn request_target(provider_name: &str, options: &str) -> Result<String, JsValue> {
    let p = provider(provider_name)?;
    let v = serde_json::from_str(options)
        .map_err(|e| js_err(Error::json(ErrorKind::InvalidOptions, "options", &e)))?;
    let o = TargetOptions::from_value(v).map_err(js_err)?;
    let t = transport::target(p, &o).map_err(js_err)?;
    Ok(transport::target_value(&t).json_text())
}

/// Checks a retry policy (`{ max_retries?, … }` JSON); returns it whole (defaults filled).
#[wasm_bindgen(js_name = retryPolicy)]
pub fn retry_policy(policy: &str) -> Result<String, JsValue> {
    let v = serde_json::from_str(policy)
        .map_err(|e| js_err(Error::json(ErrorKind::InvalidOptions, "retry", &e)))?;
    let p = RetryPolicy::from_value(v).map_err(js_err)?;
    Ok(serde_json::json!({
        "max_retries": p.max_retries,
        "initial_delay_ms": p.initial_delay_ms,
        "max_delay_ms": p.max_delay_ms,
        "max_retry_after_ms": p.max_retry_after_ms,
    })
    .json_text())
}

/// The wait before retry `attempt + 1` after an error (its code and details JSON), or -1
/// when it must not be retried.
#[wasm_bindgen(js_name = retryDelay)]
pub fn retry_delay(
    code: &str,
    details: &str,
    attempt: u32,
    random: f64,
    policy: &str,
) -> Result<f64, JsValue> {
    let Some(kind) = ErrorKind::from_code(code) else {
        return Ok(-1.0);
    };
    let e = Error::with_details(kind, "", serde_json::from_str(details).unwrap_or_default());
    let v = serde_json::from_str(policy)
        .map_err(|e| js_err(Error::json(ErrorKind::InvalidOptions, "retry", &e)))?;
    let p = RetryPolicy::from_value(v).map_err(js_err)?;
    Ok(transport::retry_delay(&e, attempt, random, &p).map_or(-1.0, |ms| ms as f64))
}

/// Writes an answer as the event stream a page reads (`src/event_stream.rs`); each call
/// returns the bytes to send.
#[wasm_bindgen(js_name = EventStreamWriterCore)]
pub struct JsEventStreamWriter {
    inner: EventStreamWriter,
}

#[wasm_bindgen(js_class = EventStreamWriterCore)]
impl JsEventStreamWriter {
    /// A writer for an answer of `provider`.
    #[wasm_bindgen(constructor)]
    pub fn new(provider_name: &str) -> Result<JsEventStreamWriter, JsValue> {
        Ok(JsEventStreamWriter {
            inner: EventStreamWriter::new(provider(provider_name)?),
        })
    }

    /// The frames of a JSON array of events (the `open` event first; `"[]"`: only it).
    pub fn events(&mut self, events: &str) -> Result<Vec<u8>, JsValue> {
        self.inner
            .events_json(events)
            .map(String::into_bytes)
            .map_err(js_err)
    }

    /// The end: the `turn` event (the turn as JSON), after the failure when `error` (its
    /// `{ code, message, details }` JSON) is given (then `turn` is what was read, if any).
    pub fn end(&mut self, turn: Option<String>, error: Option<String>) -> Result<Vec<u8>, JsValue> {
        let out = match (error, turn) {
            (Some(e), turn) => {
                error_from_json(&e).and_then(|e| self.inner.fail_json(&e, turn.as_deref()))
            }
            (None, Some(t)) => self.inner.close_json(&t),
            (None, None) => Err(Error::new(
                ErrorKind::InvalidOptions,
                "the end of a stream needs its turn or its error",
            )),
        };
        out.map(String::into_bytes).map_err(js_err)
    }
}

/// Reads an event stream back into the events and the turn.
#[wasm_bindgen(js_name = EventStreamReaderCore)]
pub struct JsEventStreamReader {
    inner: EventStreamReader,
}

impl Default for JsEventStreamReader {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen(js_class = EventStreamReaderCore)]
impl JsEventStreamReader {
    /// A reader that has seen nothing.
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsEventStreamReader {
        JsEventStreamReader {
            inner: EventStreamReader::new(),
        }
    }

    /// Feeds the first `len` bytes of the inbox; returns the events they complete (a JSON
    /// array).
    #[wasm_bindgen(js_name = pushInbox)]
    pub fn push_inbox(&mut self, len: usize) -> Result<String, JsValue> {
        inbox_bytes(len, |b| self.inner.push(b))
    }

    /// Ends the stream; returns the events that completes (a JSON array).
    pub fn end(&mut self) -> String {
        self.inner.end()
    }

    /// The connection broke before the turn: the next bytes are a new connection's (the
    /// server's replay from the last event id).
    pub fn reconnect(&mut self) {
        self.inner.reconnect();
    }

    /// Whether the stream's turn came.
    pub fn complete(&self) -> bool {
        self.inner.complete()
    }

    /// The id of the last event read whole, while the stream goes on.
    #[wasm_bindgen(js_name = lastEventId)]
    pub fn last_event_id(&self) -> Option<String> {
        self.inner.last_event_id().map(str::to_owned)
    }

    /// What the stream said so far: `{ turn, error, provider, last_event_id }` (JSON; the
    /// turn the server's, else the one rebuilt; the error's wire form or null).
    pub fn state(&self) -> String {
        let r = &self.inner;
        let text =
            |v: Option<&str>| v.map_or_else(|| "null".to_owned(), |s| Value::from(s).json_text());
        format!(
            "{{\"turn\":{},\"error\":{},\"provider\":{},\"last_event_id\":{}}}",
            r.turn().json_text(),
            r.error().map_or_else(|| "null".to_owned(), Error::to_json),
            text(r.provider().map(Provider::name)),
            text(r.last_event_id()),
        )
    }
}

/// The server's copy of an event stream (`EventStreamLog`): what a reconnecting page is sent.
#[wasm_bindgen(js_name = EventStreamLogCore)]
pub struct JsEventStreamLog {
    inner: crate::event_stream::EventStreamLog,
}

impl Default for JsEventStreamLog {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen(js_class = EventStreamLogCore)]
impl JsEventStreamLog {
    /// An empty log.
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsEventStreamLog {
        JsEventStreamLog {
            inner: crate::event_stream::EventStreamLog::new(),
        }
    }

    /// Records the next text the writer wrote.
    pub fn push(&mut self, text: &str) {
        self.inner.push(text);
    }

    /// What a page that read up to event `after` is sent: `<position> <text>`.
    pub fn since(&self, after: Option<String>) -> String {
        let (text, at) = self.inner.since(after.as_deref());
        format!("{at} {text}")
    }

    /// The frames recorded after position `at`: `<position> <text>`.
    pub fn tail(&self, at: usize) -> String {
        let (text, at) = self.inner.tail(at);
        format!("{at} {text}")
    }

    /// Whether the stream ended with its turn.
    pub fn finished(&self) -> bool {
        self.inner.finished()
    }
}
