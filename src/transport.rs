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
use crate::lower::Provider;
use serde_json::{Map, Value};

/// The Anthropic API version header this library's bodies follow.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where and how to send a body.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The endpoint.
    pub url: String,
    /// The headers, lower-case names, in a fixed order.
    pub headers: Vec<(String, String)>,
}

/// What [`target`] needs.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// The API base URL (the provider's public API when absent).
    pub base_url: Option<String>,
    /// The model (Gemini puts it in the URL; the other providers read it from the body).
    pub model: Option<String>,
    /// Gemini: stream (`streamGenerateContent?alt=sse`) or not (`generateContent`). The other
    /// providers stream when the body says `"stream": true`.
    pub stream: bool,
    /// The API key, sent in the provider's header (none: the host adds its own auth).
    pub api_key: Option<String>,
    /// Anthropic: the `anthropic-version` header ([`ANTHROPIC_VERSION`] when absent).
    pub api_version: Option<String>,
    /// Anthropic: the request comes from a browser page (adds the header Anthropic requires
    /// for CORS requests that carry a key).
    pub browser: bool,
}

impl TargetOptions {
    /// Parses `{ base_url?, model?, stream?, api_key?, api_version?, browser? }`.
    pub fn from_value(v: Value) -> Result<TargetOptions> {
        let Value::Object(mut o) = v else {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "target options must be an object",
            )
            .at("$"));
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidOptions);
        let t = TargetOptions {
            base_url: f.opt_string("base_url")?,
            model: f.opt_string("model")?,
            stream: f.opt_bool("stream")?.unwrap_or(true),
            api_key: f.opt_string("api_key")?,
            api_version: f.opt_string("api_version")?,
            browser: f.opt_bool("browser")?.unwrap_or(false),
        };
        if let Some(k) = f.leftover() {
            return Err(
                Error::new(ErrorKind::InvalidOptions, "unknown target option")
                    .at(k)
                    .with(
                        "known",
                        "base_url, model, stream, api_key, api_version, browser",
                    ),
            );
        }
        Ok(t)
    }
}

fn default_base(p: Provider) -> &'static str {
    match p {
        Provider::Anthropic => "https://api.anthropic.com",
        Provider::OpenAiChat | Provider::OpenAiResponses => "https://api.openai.com/v1",
        Provider::Gemini => "https://generativelanguage.googleapis.com/v1beta",
    }
}

/// The endpoint and headers for a body of `provider`.
pub fn target(provider: Provider, o: &TargetOptions) -> Result<Target> {
    let base = o
        .base_url
        .as_deref()
        .unwrap_or(default_base(provider))
        .trim_end_matches('/');
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            format!("the base URL must start with https:// or http:// (got `{base}`)"),
        )
        .at("base_url"));
    }
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    let url = match provider {
        Provider::Anthropic => {
            headers.push((
                "anthropic-version".into(),
                o.api_version
                    .clone()
                    .unwrap_or_else(|| ANTHROPIC_VERSION.into()),
            ));
            if let Some(k) = &o.api_key {
                headers.push(("x-api-key".into(), k.clone()));
            }
            if o.browser {
                headers.push((
                    "anthropic-dangerous-direct-browser-access".into(),
                    "true".into(),
                ));
            }
            format!("{base}/v1/messages")
        }
        Provider::OpenAiChat | Provider::OpenAiResponses => {
            if let Some(k) = &o.api_key {
                headers.push(("authorization".into(), format!("Bearer {k}")));
            }
            let path = if provider == Provider::OpenAiChat {
                "chat/completions"
            } else {
                "responses"
            };
            format!("{base}/{path}")
        }
        Provider::Gemini => {
            let Some(model) = o.model.as_deref().map(|m| m.trim_start_matches("models/")) else {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "Gemini needs the model in the URL: pass `model`",
                )
                .at("model"));
            };
            if model.is_empty()
                || !model
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
            {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    format!("`{model}` is not a Gemini model name"),
                )
                .at("model"));
            }
            if let Some(k) = &o.api_key {
                headers.push(("x-goog-api-key".into(), k.clone()));
            }
            if o.stream {
                format!("{base}/models/{model}:streamGenerateContent?alt=sse")
            } else {
                format!("{base}/models/{model}:generateContent")
            }
        }
    };
    Ok(Target { url, headers })
}

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
