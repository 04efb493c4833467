//! One observability record per gateway call, and their export as OpenTelemetry-shaped
//! JSON (the OTLP/JSON `resourceSpans` layout a collector's HTTP endpoint takes).

use crate::json_text::JsonText;
use serde_json::{json, Value};

/// What one call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The call's trace id.
    pub trace_id: String,
    /// The contract called (after fallbacks: the one that answered or failed last).
    pub contract: String,
    /// Its version, once resolved.
    pub version: Option<String>,
    /// The surface.
    pub surface: String,
    /// The user.
    pub user: String,
    /// `ok`, `cached`, or the error code.
    pub outcome: String,
    /// The handler's declared error code, when it failed with one.
    pub error_code: Option<String>,
    /// Start, epoch milliseconds.
    pub start_ms: f64,
    /// End, epoch milliseconds.
    pub end_ms: f64,
    /// End minus start.
    pub latency_ms: f64,
    /// Time spent inside the handler, every attempt.
    pub handler_ms: f64,
    /// Handler runs.
    pub attempts: u32,
    /// Retries among them.
    pub retries: u32,
    /// The declared cost of every attempt.
    pub cost_usd: f64,
    /// The breaker state seen (`closed`, `open`, `half-open`, `none`).
    pub breaker: &'static str,
    /// Whether the latency passed the contract's `p95_ms`.
    pub budget_overrun: bool,
    /// Contracts the call fell back from.
    pub fallback_from: Vec<String>,
    /// The idempotency key, when the contract has one.
    pub idempotency_key: Option<String>,
    /// The older version whose output shape the caller got (through the contract's output
    /// adapter).
    pub adapted_to: Option<String>,
}

impl Record {
    /// As JSON.
    pub fn to_value(&self) -> Value {
        json!({
            "trace_id": self.trace_id,
            "contract": self.contract,
            "version": self.version,
            "surface": self.surface,
            "user": self.user,
            "outcome": self.outcome,
            "error_code": self.error_code,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "latency_ms": self.latency_ms,
            "handler_ms": self.handler_ms,
            "attempts": self.attempts,
            "retries": self.retries,
            "cost_usd": self.cost_usd,
            "breaker": self.breaker,
            "budget_overrun": self.budget_overrun,
            "fallback_from": self.fallback_from,
            "idempotency_key": self.idempotency_key,
            "adapted_to": self.adapted_to,
        })
    }
}

/// `n` lowercase hex digits derived from `s` (ids already in hex of that length are kept).
fn hex_id(s: &str, n: usize) -> String {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(n);
    let mut seed = 0u64;
    while out.len() < n {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in s.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
        seed += 1;
    }
    out.truncate(n);
    out
}

fn attr(k: &str, v: Value) -> Value {
    let value = match v {
        Value::String(s) => json!({ "stringValue": s }),
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::Number(n) if n.is_u64() || n.is_i64() => json!({ "intValue": n.to_string() }),
        Value::Number(n) => json!({ "doubleValue": n }),
        other => json!({ "stringValue": other.json_text() }),
    };
    json!({ "key": k, "value": value })
}

/// [`to_otel`] of a JSON array of records (the faces' wire form).
pub fn otel_of(records: &Value) -> crate::Result<Value> {
    match records {
        Value::Array(a) => Ok(to_otel(a)),
        _ => Err(crate::Error::new(
            crate::ErrorKind::InvalidRequest,
            "the records are a list",
        )),
    }
}

/// Records (as [`Record::to_value`] gives them) as OTLP/JSON spans: one span per call,
/// `promptloom.*` attributes, status ERROR with the code when it failed.
pub fn to_otel(records: &[Value]) -> Value {
    let spans: Vec<Value> = records
        .iter()
        .map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let n = |k: &str| r.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let trace = s("trace_id");
            let outcome = s("outcome");
            let ok = outcome == "ok" || outcome == "cached";
            let nanos = |ms: f64| format!("{}", (ms.max(0.0) * 1_000_000.0).round() as u128);
            let mut attrs = vec![
                attr("promptloom.contract", s("contract").into()),
                attr("promptloom.surface", s("surface").into()),
                attr("promptloom.outcome", outcome.clone().into()),
                attr("promptloom.attempts", Value::from(n("attempts") as u64)),
                attr("promptloom.retries", Value::from(n("retries") as u64)),
                attr("promptloom.cost_usd", Value::from(n("cost_usd"))),
                attr("promptloom.latency_ms", Value::from(n("latency_ms"))),
                attr("promptloom.breaker", s("breaker").into()),
                attr("promptloom.budget_overrun", r.get("budget_overrun").cloned().unwrap_or(Value::Bool(false))),
                attr("enduser.id", s("user").into()),
            ];
            if let Some(v) = r.get("version").and_then(Value::as_str) {
                attrs.push(attr("promptloom.version", v.into()));
            }
            if let Some(c) = r.get("error_code").and_then(Value::as_str) {
                attrs.push(attr("promptloom.error_code", c.into()));
            }
            json!({
                "traceId": hex_id(&trace, 32),
                "spanId": hex_id(&format!("{trace}/span"), 16),
                "name": format!("gateway.call {}", s("contract")),
                "kind": 3,
                "startTimeUnixNano": nanos(n("start_ms")),
                "endTimeUnixNano": nanos(n("end_ms")),
                "attributes": attrs,
                "status": if ok { json!({ "code": 1 }) } else { json!({ "code": 2, "message": outcome }) },
            })
        })
        .collect();
    json!({
        "resourceSpans": [{
            "resource": { "attributes": [attr("service.name", "promptloom.gateway".into())] },
            "scopeSpans": [{ "scope": { "name": "promptloom.gateway", "version": env!("CARGO_PKG_VERSION") }, "spans": spans }],
        }]
    })
}
