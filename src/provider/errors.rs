//! Provider error payloads (in an HTTP error body or inside a stream) mapped to stable
//! codes, with what a retry loop needs: whether to retry and when.
//!
//! | code | Anthropic `error.type` | OpenAI `error.type` / `code` | Gemini `error.status` | HTTP |
//! |---|---|---|---|---|
//! | `RateLimited` | `rate_limit_error` | `rate_limit_exceeded` | `RESOURCE_EXHAUSTED` | 429 |
//! | `Overloaded` | `overloaded_error` | — | `UNAVAILABLE` | 503, 529 |
//! | `ProviderError` | `api_error` | `server_error` | `INTERNAL`, `DEADLINE_EXCEEDED` | 500, 502, 504, 408 |
//! | `AuthenticationFailed` | `authentication_error`, `permission_error` | `invalid_api_key`, … | `UNAUTHENTICATED`, `PERMISSION_DENIED` | 401, 403 |
//! | `ContextTooLong` | "prompt is too long" | `context_length_exceeded` | "exceeds the maximum number of tokens" | — |
//! | `ProviderRejected` | `invalid_request_error`, `not_found_error`, `request_too_large`, `billing_error` | `invalid_request_error`, `insufficient_quota` | `INVALID_ARGUMENT`, `NOT_FOUND`, `FAILED_PRECONDITION` | other 4xx |

use super::Provider;
use crate::error::{Error, ErrorKind};
use serde_json::Value;

/// The longest text of a non-JSON error body kept in the message.
const BODY_EXCERPT: usize = 300;

/// Whether an error of this kind may succeed when sent again.
pub fn is_retryable(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::RateLimited | ErrorKind::Overloaded | ErrorKind::ProviderError
    )
}

fn kind_of_status(status: u16) -> ErrorKind {
    match status {
        401 | 403 => ErrorKind::AuthenticationFailed,
        429 => ErrorKind::RateLimited,
        503 | 529 => ErrorKind::Overloaded,
        408 | 500..=599 => ErrorKind::ProviderError,
        _ => ErrorKind::ProviderRejected,
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn too_long(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("prompt is too long")
        || m.contains("context length")
        || m.contains("context window")
        || m.contains("maximum context")
        || m.contains("input token count")
        || m.contains("exceeds the maximum number of tokens")
}

/// The kind for a provider's error type / code / status string.
fn kind_of_type(
    provider: Provider,
    ty: &str,
    code: Option<&str>,
    message: &str,
) -> Option<ErrorKind> {
    if code == Some("context_length_exceeded") || too_long(message) {
        return Some(ErrorKind::ContextTooLong);
    }
    provider
        .spec()
        .errors
        .iter()
        .find(|(name, _)| *name == ty || Some(*name) == code)
        .map(|(_, kind)| *kind)
}

/// The error object inside a provider's error payload, if the value is one.
fn error_object(v: &Value) -> Option<&Value> {
    match v {
        // Gemini's streamGenerateContent answers an error as a one-item array.
        Value::Array(items) => items.iter().find_map(error_object),
        Value::Object(o) => match o.get("error") {
            Some(e @ Value::Object(_)) => Some(e),
            // OpenAI Responses' stream `error` event carries its fields at the top.
            _ if str_of(v, "type") == Some("error") && o.contains_key("message") => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// The error a provider's error payload describes (`None` when the value is not one).
/// `status` is the HTTP status when the payload came as an error response.
pub fn from_payload(provider: Provider, payload: &Value, status: Option<u16>) -> Option<Error> {
    let err = error_object(payload)?;
    let message = str_of(err, "message").unwrap_or("").to_owned();
    let d = provider.dialect();
    let (ty, code, carried) = d.error_fields(err);
    let status = status.or(carried);
    let kind = ty
        .as_deref()
        .and_then(|t| kind_of_type(provider, t, code.as_deref(), &message))
        .or_else(|| kind_of_type(provider, "", code.as_deref(), &message))
        .or_else(|| status.map(kind_of_status))
        .unwrap_or(ErrorKind::ProviderError);
    let shown = if message.is_empty() {
        ty.clone()
            .unwrap_or_else(|| "an error without a message".into())
    } else {
        message.clone()
    };
    let mut e = Error::new(kind, format!("{} answered: {shown}", provider.name()))
        .with("provider", provider.name())
        .with("retryable", is_retryable(kind));
    if let Some(s) = status {
        e = e.with("status", s);
    }
    if let Some(t) = ty {
        e = e.with("provider_type", t);
    }
    if let Some(c) = code {
        e = e.with("provider_code", c);
    }
    if let Some(p) = str_of(err, "param") {
        e = e.with("param", p);
    }
    if let Some(r) = str_of(payload, "request_id") {
        e = e.with("request_id", r);
    }
    if let Some(ms) = d.retry_after_ms(err) {
        e = e.with("retry_after_ms", ms);
    }
    Some(e)
}

/// The error of an HTTP error response: its status, its body text and the `retry-after`
/// the host read from the headers (in milliseconds; the host parses HTTP dates).
pub fn from_http(
    provider: Provider,
    status: u16,
    body: &str,
    retry_after_ms: Option<u64>,
) -> Error {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let mut e = parsed
        .as_ref()
        .and_then(|v| from_payload(provider, v, Some(status)))
        .unwrap_or_else(|| {
            let kind = kind_of_status(status);
            let text = body.trim();
            let excerpt: String = text.chars().take(BODY_EXCERPT).collect();
            let shown = if excerpt.is_empty() {
                String::from("no body")
            } else if excerpt.len() < text.len() {
                format!("{excerpt}…")
            } else {
                excerpt
            };
            Error::new(
                kind,
                format!("{} answered HTTP {status}: {shown}", provider.name()),
            )
            .with("provider", provider.name())
            .with("status", status)
            .with("retryable", is_retryable(kind))
        });
    if let Some(ms) = retry_after_ms {
        e = e.with("retry_after_ms", ms);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(p: Provider, status: u16, body: Value) -> ErrorKind {
        from_http(p, status, &body.to_string(), None).kind()
    }

    #[test]
    fn payloads_map_to_codes() {
        let a = |t: &str| json!({"type":"error","error":{"type":t,"message":"m"}});
        assert_eq!(
            kind(Provider::Anthropic, 529, a("overloaded_error")),
            ErrorKind::Overloaded
        );
        assert_eq!(
            kind(Provider::Anthropic, 429, a("rate_limit_error")),
            ErrorKind::RateLimited
        );
        assert_eq!(
            kind(Provider::Anthropic, 400, a("invalid_request_error")),
            ErrorKind::ProviderRejected
        );
        assert_eq!(
            kind(
                Provider::Anthropic,
                400,
                json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})
            ),
            ErrorKind::ContextTooLong
        );
        let o = |t: &str, c: &str| json!({"error":{"type":t,"code":c,"message":"m","param":null}});
        assert_eq!(
            kind(
                Provider::OpenAiChat,
                429,
                o("insufficient_quota", "insufficient_quota")
            ),
            ErrorKind::ProviderRejected
        );
        assert_eq!(
            kind(
                Provider::OpenAiChat,
                429,
                o("requests", "rate_limit_exceeded")
            ),
            ErrorKind::RateLimited
        );
        assert_eq!(
            kind(
                Provider::OpenAiResponses,
                400,
                o("invalid_request_error", "context_length_exceeded")
            ),
            ErrorKind::ContextTooLong
        );
        assert_eq!(
            kind(
                Provider::OpenAiChat,
                401,
                o("invalid_request_error", "invalid_api_key")
            ),
            ErrorKind::AuthenticationFailed
        );
        let g = json!([{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31s"}]}}]);
        let e = from_http(Provider::Gemini, 429, &g.to_string(), None);
        assert_eq!(e.kind(), ErrorKind::RateLimited);
        assert_eq!(e.details()["retry_after_ms"], 31000);
        assert_eq!(
            kind(
                Provider::Gemini,
                503,
                json!({"error":{"code":503,"status":"UNAVAILABLE","message":"m"}})
            ),
            ErrorKind::Overloaded
        );
        let plain = from_http(
            Provider::OpenAiChat,
            502,
            "<html>bad gateway</html>",
            Some(1500),
        );
        assert_eq!(plain.kind(), ErrorKind::ProviderError);
        assert_eq!(plain.details()["retry_after_ms"], 1500);
        assert_eq!(plain.details()["retryable"], true);
        assert!(plain.message().contains("bad gateway"));
    }
}
