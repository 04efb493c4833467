//! The `promptloom:core/response` interface: conversions only.

use super::exports::promptloom::core::response::{
    self as wit, Guest, GuestEventStreamLog, GuestEventStreamReader, GuestEventStreamWriter,
    GuestResponseParser,
};
use super::promptloom::core::types::Error as WitError;
use super::{from_wit, provider, to_wit, Component};
use crate::event_stream::{EventStreamLog, EventStreamReader, EventStreamWriter};
use crate::json_text::JsonText;
use crate::lower::Provider;
use crate::response::{errors, events_json, parse_response, ResponseParser};
use crate::transport::{self, RetryPolicy, TargetOptions};
use std::cell::RefCell;

/// A response parser owned by the host.
pub(crate) struct ParserResource {
    inner: RefCell<ResponseParser>,
}

impl GuestResponseParser for ParserResource {
    fn new(p: super::wit::Provider) -> Self {
        ParserResource {
            inner: RefCell::new(ResponseParser::new(provider(p))),
        }
    }

    fn for_request(p: super::wit::Provider, request: String) -> wit::ResponseParser {
        wit::ResponseParser::new(ParserResource {
            inner: RefCell::new(ResponseParser::for_request(provider(p), &request)),
        })
    }

    fn push(&self, chunk: Vec<u8>) -> String {
        events_json(&self.inner.borrow_mut().push(&chunk))
    }

    fn end(&self) -> String {
        events_json(&self.inner.borrow_mut().end())
    }

    fn finish(&self) -> String {
        let mut p = self.inner.borrow_mut();
        p.end();
        p.turn().to_value().json_text()
    }

    fn first_error(&self) -> Option<WitError> {
        self.inner.borrow().error().cloned().map(to_wit)
    }
}

/// An event stream writer owned by the host.
pub(crate) struct WriterResource {
    inner: RefCell<EventStreamWriter>,
}

impl GuestEventStreamWriter for WriterResource {
    fn new(p: super::wit::Provider) -> Self {
        WriterResource {
            inner: RefCell::new(EventStreamWriter::new(provider(p))),
        }
    }

    fn open(&self) -> String {
        self.inner.borrow_mut().open()
    }

    fn events(&self, events: String) -> Result<String, WitError> {
        self.inner.borrow_mut().events_json(&events).map_err(to_wit)
    }

    fn close(&self, turn: String) -> Result<String, WitError> {
        self.inner.borrow_mut().close_json(&turn).map_err(to_wit)
    }

    fn fail(&self, err: WitError, turn: Option<String>) -> Result<String, WitError> {
        self.inner
            .borrow_mut()
            .fail_json(&from_wit(&err), turn.as_deref())
            .map_err(to_wit)
    }
}

/// An event stream reader owned by the host.
pub(crate) struct ReaderResource {
    inner: RefCell<EventStreamReader>,
}

impl GuestEventStreamReader for ReaderResource {
    fn new() -> Self {
        ReaderResource {
            inner: RefCell::new(EventStreamReader::new()),
        }
    }

    fn push(&self, chunk: Vec<u8>) -> String {
        self.inner.borrow_mut().push(&chunk)
    }

    fn end(&self) -> String {
        self.inner.borrow_mut().end()
    }

    fn finish(&self) -> String {
        let mut r = self.inner.borrow_mut();
        r.end();
        r.turn().json_text()
    }

    fn first_error(&self) -> Option<WitError> {
        self.inner.borrow().error().cloned().map(to_wit)
    }

    fn last_event_id(&self) -> Option<String> {
        self.inner.borrow().last_event_id().map(str::to_owned)
    }

    fn reconnect(&self) {
        self.inner.borrow_mut().reconnect();
    }

    fn complete(&self) -> bool {
        self.inner.borrow().complete()
    }

    fn provider(&self) -> Option<super::wit::Provider> {
        self.inner.borrow().provider().map(|p| match p {
            Provider::Anthropic => super::wit::Provider::Anthropic,
            Provider::OpenAiChat => super::wit::Provider::OpenaiChat,
            Provider::OpenAiResponses => super::wit::Provider::OpenaiResponses,
            Provider::Gemini => super::wit::Provider::Gemini,
        })
    }
}

/// An event stream log owned by the host.
pub(crate) struct LogResource {
    inner: RefCell<EventStreamLog>,
}

impl GuestEventStreamLog for LogResource {
    fn new() -> Self {
        LogResource {
            inner: RefCell::new(EventStreamLog::new()),
        }
    }

    fn push(&self, text: String) {
        self.inner.borrow_mut().push(&text);
    }

    fn since(&self, after: Option<String>) -> (String, u64) {
        let (text, at) = self.inner.borrow().since(after.as_deref());
        (text, at as u64)
    }

    fn tail(&self, at: u64) -> (String, u64) {
        let at = usize::try_from(at).unwrap_or(usize::MAX);
        let (text, next) = self.inner.borrow().tail(at);
        (text, next as u64)
    }

    fn finished(&self) -> bool {
        self.inner.borrow().finished()
    }
}

fn policy(p: wit::RetryPolicy) -> RetryPolicy {
    RetryPolicy {
        max_retries: p.max_retries,
        initial_delay_ms: p.initial_delay_ms,
        max_delay_ms: p.max_delay_ms,
        max_retry_after_ms: p.max_retry_after_ms,
    }
}

impl Guest for Component {
    type ResponseParser = ParserResource;
    type EventStreamWriter = WriterResource;
    type EventStreamReader = ReaderResource;
    type EventStreamLog = LogResource;

    fn parse_response(p: super::wit::Provider, body: Vec<u8>) -> Result<String, WitError> {
        parse_response(provider(p), &body)
            .map(|parsed| parsed.turn.to_value().json_text())
            .map_err(to_wit)
    }

    fn parse_response_for(
        p: super::wit::Provider,
        request: String,
        body: Vec<u8>,
    ) -> Result<String, WitError> {
        crate::response::parse_response_for(provider(p), &request, &body)
            .map(|parsed| parsed.turn.to_value().json_text())
            .map_err(to_wit)
    }

    fn request_target(
        p: super::wit::Provider,
        o: wit::TargetOptions,
    ) -> Result<wit::HttpTarget, WitError> {
        let opts = TargetOptions {
            base_url: o.base_url,
            model: o.model,
            stream: o.stream,
            api_key: o.api_key,
            api_version: o.api_version,
            browser: o.browser,
        };
        transport::target(provider(p), &opts)
            .map(|t| wit::HttpTarget {
                url: t.url,
                headers: t.headers,
            })
            .map_err(to_wit)
    }

    fn provider_error(
        p: super::wit::Provider,
        status: u16,
        body: String,
        retry_after_ms: Option<u64>,
    ) -> WitError {
        to_wit(errors::from_http(
            provider(p),
            status,
            &body,
            retry_after_ms,
        ))
    }

    fn default_retry_policy() -> wit::RetryPolicy {
        let d = RetryPolicy::default();
        wit::RetryPolicy {
            max_retries: d.max_retries,
            initial_delay_ms: d.initial_delay_ms,
            max_delay_ms: d.max_delay_ms,
            max_retry_after_ms: d.max_retry_after_ms,
        }
    }

    fn retry_delay(err: WitError, attempt: u32, random: f64, p: wit::RetryPolicy) -> Option<u64> {
        transport::retry_delay(&from_wit(&err), attempt, random, &policy(p))
    }
}
