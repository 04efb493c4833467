//! The response side for JS: conversions only. The glue (`pkg/src/response.js`) writes each
//! chunk's bytes into the inbox and turns the events into objects; `pkg/src/adapter.js`
//! does the `fetch`, with the endpoints, headers and retry rules asked from here.

use super::js_err;
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use crate::lower::Provider;
use crate::response::{self, events_json, ResponseParser};
use crate::transport::{self, RetryPolicy, TargetOptions};
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
    let mut e = Error::new(kind, "");
    if let Ok(serde_json::Value::Object(d)) = serde_json::from_str::<serde_json::Value>(details) {
        for (k, v) in d {
            e = e.with(&k, v);
        }
    }
    let v = serde_json::from_str(policy)
        .map_err(|e| js_err(Error::json(ErrorKind::InvalidOptions, "retry", &e)))?;
    let p = RetryPolicy::from_value(v).map_err(js_err)?;
    Ok(transport::retry_delay(&e, attempt, random, &p).map_or(-1.0, |ms| ms as f64))
}
