//! What a model adapter needs to put a lowered body on the wire, as pure rules every host
//! shares (the JS adapters use them through the bindings; a WASI host doing its own HTTP
//! calls the same functions): each provider's endpoint and headers, and when to retry.
//! The core never does I/O: the host sends, waits and draws the jitter.
//!
//! Base URLs follow each provider's official SDK, so a `baseURL` written for the SDK works
//! here unchanged: Anthropic's has no version (`…/v1/messages` is appended), OpenAI's ends
//! in `/v1` (`/chat/completions`, `/responses`), Gemini's ends in its API version
//! (`/models/{model}:streamGenerateContent?alt=sse`).

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use serde_json::{Map, Value};

pub use crate::provider::{target, Target, TargetOptions, ANTHROPIC_VERSION};

/// How a host retries a failed request.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: never retry).
    pub max_retries: u32,
    /// The first backoff, doubled on each retry.
    pub initial_delay_ms: u64,
    /// The cap of one backoff.
    pub max_delay_ms: u64,
    /// A `retry-after` longer than this is not waited for: the error is returned.
    pub max_retry_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_delay_ms: 500,
            max_delay_ms: 8_000,
            max_retry_after_ms: 60_000,
        }
    }
}

impl RetryPolicy {
    /// Parses `{ max_retries?, initial_delay_ms?, max_delay_ms?, max_retry_after_ms? }`.
    pub fn from_value(v: Value) -> Result<RetryPolicy> {
        let Value::Object(mut o) = v else {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "the retry policy must be an object",
            )
            .at("retry"));
        };
        let mut f = Fields::new(&mut o, "retry", ErrorKind::InvalidOptions);
        let d = RetryPolicy::default();
        let p = RetryPolicy {
            max_retries: f
                .opt_u64("max_retries")?
                .map(|n| n.min(u64::from(u32::MAX)) as u32)
                .unwrap_or(d.max_retries),
            initial_delay_ms: f.opt_u64("initial_delay_ms")?.unwrap_or(d.initial_delay_ms),
            max_delay_ms: f.opt_u64("max_delay_ms")?.unwrap_or(d.max_delay_ms),
            max_retry_after_ms: f
                .opt_u64("max_retry_after_ms")?
                .unwrap_or(d.max_retry_after_ms),
        };
        if let Some(k) = f.leftover() {
            return Err(
                Error::new(ErrorKind::InvalidOptions, "unknown retry option")
                    .at(format!("retry.{k}"))
                    .with(
                        "known",
                        "max_retries, initial_delay_ms, max_delay_ms, max_retry_after_ms",
                    ),
            );
        }
        Ok(p)
    }
}

/// How long to wait before retry number `attempt + 1` after `error`, or `None` when the
/// request must not be retried: the error is not retryable (see
/// [`response::errors::is_retryable`](crate::response::errors::is_retryable); a network
/// failure, `AdapterFailed`, is), the retries are spent, or the provider's `retry-after`
/// (`details.retry_after_ms`) is longer than the policy waits. Otherwise the provider's
/// `retry-after` when it gave one, else an exponential backoff with equal jitter:
/// `b/2 + random·b/2` where `b = min(initial · 2^attempt, max)` and `random` ∈ [0, 1)
/// comes from the host.
pub fn retry_delay(error: &Error, attempt: u32, random: f64, policy: &RetryPolicy) -> Option<u64> {
    let retryable = crate::response::errors::is_retryable(error.kind())
        || error.kind() == ErrorKind::AdapterFailed;
    if !retryable || error.details().get("retryable") == Some(&Value::Bool(false)) {
        return None;
    }
    if attempt >= policy.max_retries {
        return None;
    }
    if let Some(ms) = error
        .details()
        .get("retry_after_ms")
        .and_then(Value::as_u64)
    {
        return (ms <= policy.max_retry_after_ms).then_some(ms);
    }
    let b = policy
        .initial_delay_ms
        .saturating_mul(1u64 << attempt.min(32))
        .min(policy.max_delay_ms);
    let r = if random.is_finite() {
        random.clamp(0.0, 1.0)
    } else {
        0.5
    };
    Some(b / 2 + ((b / 2) as f64 * r) as u64)
}

/// The target as JSON (`{ url, headers: { name: value } }`), the bindings' wire form.
pub fn target_value(t: &Target) -> Value {
    let mut h = Map::new();
    for (k, v) in &t.headers {
        h.insert(k.clone(), v.clone().into());
    }
    let mut o = Map::new();
    o.insert("url".into(), t.url.clone().into());
    o.insert("headers".into(), Value::Object(h));
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::Provider;
    use crate::response::errors::from_http;

    #[test]
    fn endpoints() {
        let o = TargetOptions {
            api_key: Some("k".into()),
            model: Some("models/gemini-2.5-flash".into()),
            stream: true,
            ..Default::default()
        };
        let t = target(Provider::Gemini, &o).unwrap();
        assert!(t
            .url
            .ends_with("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"));
        assert!(t.headers.contains(&("x-goog-api-key".into(), "k".into())));
        let a = target(
            Provider::Anthropic,
            &TargetOptions {
                base_url: Some("http://127.0.0.1:9/".into()),
                ..o.clone()
            },
        )
        .unwrap();
        assert_eq!(a.url, "http://127.0.0.1:9/v1/messages");
        let r = target(Provider::OpenAiResponses, &o).unwrap();
        assert!(r.url.ends_with("/v1/responses"));
        assert!(r
            .headers
            .contains(&("authorization".into(), "Bearer k".into())));
        let bad = TargetOptions {
            model: Some("../x".into()),
            ..Default::default()
        };
        assert_eq!(
            target(Provider::Gemini, &bad).unwrap_err().kind(),
            ErrorKind::InvalidOptions
        );
        let bad = TargetOptions {
            base_url: Some("file:///etc".into()),
            ..Default::default()
        };
        assert!(target(Provider::Anthropic, &bad).is_err());
    }

    #[test]
    fn retries() {
        let p = RetryPolicy::default();
        let busy = from_http(Provider::Anthropic, 529, "", None);
        assert_eq!(retry_delay(&busy, 0, 0.0, &p), Some(250));
        assert_eq!(retry_delay(&busy, 1, 0.999_999, &p), Some(999));
        assert_eq!(retry_delay(&busy, 2, 0.5, &p), None);
        let later = from_http(Provider::OpenAiChat, 429, "{}", Some(3000));
        assert_eq!(retry_delay(&later, 0, 0.3, &p), Some(3000));
        let too_late = from_http(Provider::OpenAiChat, 429, "{}", Some(120_000));
        assert_eq!(retry_delay(&too_late, 0, 0.3, &p), None);
        let bad = from_http(Provider::OpenAiChat, 400, "{}", None);
        assert_eq!(retry_delay(&bad, 0, 0.3, &p), None);
        let quota = from_http(
            Provider::OpenAiChat,
            429,
            r#"{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"m"}}"#,
            None,
        );
        assert_eq!(retry_delay(&quota, 0, 0.3, &p), None);
        let capped = RetryPolicy {
            max_retries: 40,
            ..p
        };
        assert_eq!(retry_delay(&busy, 39, 1.0, &capped), Some(8000));
    }
}
