//! One skill contract, read from its YAML or JSON document and checked whole: the seed's
//! three layers — what the planner sees (name, description, input, output, errors,
//! examples), what the gateway enforces (policy, capabilities) and what runs (the backing
//! service) — plus versions, surfaces, canaries and sunsets.

use super::fields;
use crate::error::{Error, ErrorKind, Result};
use crate::problems::Problems;
use litemap::LiteMap;
use semver::Version;
use serde_json::{Map, Value};

/// What the gateway may do after a handler error with a declared code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryClass {
    /// Never retried (a 4xx in the seed's words).
    DoNotRetry,
    /// Retried at most once.
    RetryOnce,
    /// Retried as the policy's `retry.attempts` allow.
    Retry,
    /// Not retried: the call goes to another contract (`name` or `name@range`).
    FallbackTo(String),
}

impl RetryClass {
    /// The class as written in contracts (`do-not-retry`, `retry-once`, `retry`,
    /// `fallback-to`).
    pub fn as_str(&self) -> &'static str {
        match self {
            RetryClass::DoNotRetry => "do-not-retry",
            RetryClass::RetryOnce => "retry-once",
            RetryClass::Retry => "retry",
            RetryClass::FallbackTo(_) => "fallback-to",
        }
    }
}

/// An error code the handler may answer with, and what the gateway does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredError {
    /// The code (`TITLE_NOT_FOUND`).
    pub code: String,
    /// Whether and how it is retried, as declared (`do-not-retry` when nothing is).
    pub retry: RetryClass,
    /// The HTTP status (`http` or `status`) of an error declared without a retry class or
    /// fallback: then its class follows it (the seed's envelope: a 5xx is retried once, a
    /// 4xx never), on a contract that may be retried at all. See [`Self::class`].
    pub status: Option<u16>,
}

impl DeclaredError {
    /// The class the gateway retries it by on `contract`: as declared, else by its HTTP
    /// status (a 5xx once, when the contract may be retried).
    pub fn class(&self, contract: &Contract) -> RetryClass {
        match self.status {
            Some(500..=599) if contract.may_retry() => RetryClass::RetryOnce,
            _ => self.retry.clone(),
        }
    }
}

/// Whose calls one token bucket counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitScope {
    /// Each user apart.
    User,
    /// Each tenant apart.
    Tenant,
    /// Every call.
    Global,
}

impl LimitScope {
    /// `user`, `tenant` or `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitScope::User => "user",
            LimitScope::Tenant => "tenant",
            LimitScope::Global => "global",
        }
    }
}

/// One rate limit: `capacity` calls per `window_ms`, as a token bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimit {
    /// Whose calls it counts.
    pub scope: LimitScope,
    /// Calls per window (and the burst).
    pub capacity: f64,
    /// The window in milliseconds (a second, a minute, an hour).
    pub window_ms: f64,
}

/// How retries wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// `base_ms · 2^(n-1)`, capped at `max_ms`.
    Exponential,
    /// `base_ms` every time.
    Fixed,
    /// No wait.
    None,
}

/// The retry policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// Retries after the first attempt.
    pub attempts: u32,
    /// How they wait.
    pub backoff: Backoff,
    /// The first wait in milliseconds.
    pub base_ms: f64,
    /// The longest wait.
    pub max_ms: f64,
}

/// The circuit breaker of each contract version.
#[derive(Debug, Clone, PartialEq)]
pub struct Breaker {
    /// The failure rate (0–1) over the window that opens it.
    pub error_rate_threshold: f64,
    /// The sliding window in milliseconds.
    pub window_ms: f64,
    /// Calls the window needs before the rate counts.
    pub min_calls: u32,
    /// How long it stays open before one probe call is let through.
    pub open_ms: f64,
}

/// Latency and cost the contract promises.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The 95th-percentile latency in milliseconds.
    pub p95_ms: f64,
    /// Cost per call in US dollars.
    pub cost_usd: f64,
}

/// What the gateway enforces.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Whether a call with the same input may run twice with the same effect.
    pub idempotent: bool,
    /// The idempotency key template (`{title_id}:{locale}:{k}`).
    pub idempotency_key: Option<String>,
    /// How long a completed call's result answers duplicates, in milliseconds.
    pub idempotency_ttl_ms: f64,
    /// The token buckets.
    pub rate_limits: Vec<RateLimit>,
    /// Each attempt's timeout in milliseconds.
    pub timeout_ms: f64,
    /// Retries.
    pub retry: Retry,
    /// The breaker, when declared.
    pub circuit_breaker: Option<Breaker>,
    /// The budget.
    pub budget: Budget,
}

/// One registered contract version.
#[derive(Debug, Clone)]
pub struct Contract {
    /// The name (`cross-title-link`).
    pub name: String,
    /// The version (`0.9` reads as `0.9.0`).
    pub version: Version,
    /// The one-paragraph purpose the planner reads.
    pub description: String,
    /// The owning team.
    pub owner: Option<String>,
    /// The input's JSON Schema (compact fields converted; closed to unknown fields).
    pub input: Value,
    /// The output's JSON Schema.
    pub output: Value,
    /// The error envelope.
    pub errors: Vec<DeclaredError>,
    /// The policy layer.
    pub policy: Policy,
    /// Feature flags every caller must have.
    pub feature_flags: Vec<String>,
    /// The tiers allowed (empty: any).
    pub tiers: Vec<String>,
    /// The backing service (`endpoint`, `health_check`), as written.
    pub backing_service: Option<Value>,
    /// Few-shot usage examples (`{ input, output? }`).
    pub examples: Vec<Value>,
    /// The surfaces that may call it (empty: any).
    pub surfaces: Vec<String>,
    /// Percent of each surface's users sent to this version while it is a canary.
    pub canary: LiteMap<String, f64>,
    /// When calls start failing with `Sunset` (epoch milliseconds), and the text given.
    pub sunset: Option<(f64, String)>,
    /// Marked deprecated (still callable; listed by the registry review).
    pub deprecated: bool,
    /// For callers of an older version: how this version's output reads in that version's
    /// shape (see [`super::adapt`]), by the older version.
    pub output_adapters: LiteMap<Version, Value>,
    /// The document as given (YAML read as JSON), for `list()` and the planner section.
    pub source: Value,
    /// `name@version`, made once.
    key: String,
    /// `input` and `output` digested for the gateway's checks (`None`: a schema the digest
    /// does not hold, read as it is).
    checks: std::sync::Arc<(
        Option<crate::json_schema::Compiled>,
        Option<crate::json_schema::Compiled>,
    )>,
}

impl Contract {
    /// `name@version`.
    pub fn id(&self) -> String {
        self.key.clone()
    }

    /// `name@version`, borrowed.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The version as text (what `version.to_string()` writes), borrowed.
    pub fn version_text(&self) -> &str {
        self.key.get(self.name.len() + 1..).unwrap_or_default()
    }

    /// Checks an input (defaults filled in) against the input schema.
    pub fn check_input(
        &self,
        input: &Value,
    ) -> std::result::Result<(), Vec<crate::json_schema::Violation>> {
        crate::json_schema::validate_with(&self.input, self.checks.0.as_ref(), input)
    }

    /// Checks a handler's output against the output schema.
    pub fn check_output(
        &self,
        output: &Value,
    ) -> std::result::Result<(), Vec<crate::json_schema::Violation>> {
        crate::json_schema::validate_with(&self.output, self.checks.1.as_ref(), output)
    }

    /// The declared error with this code.
    pub fn declared(&self, code: &str) -> Option<&DeclaredError> {
        self.errors.iter().find(|e| e.code == code)
    }

    /// Whether retries are allowed at all: an idempotent contract, or one whose calls carry
    /// a gateway-made idempotency key the backing service de-duplicates by.
    pub fn may_retry(&self) -> bool {
        self.policy.idempotent || self.policy.idempotency_key.is_some()
    }

    /// The contract as the registry lists it: the document plus its resolved schemas.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("name".into(), self.name.clone().into());
        o.insert("version".into(), self.version.to_string().into());
        o.insert("description".into(), self.description.clone().into());
        o.insert("owner".into(), self.owner.clone().into());
        o.insert("input_schema".into(), self.input.clone());
        o.insert("output_schema".into(), self.output.clone());
        o.insert("surfaces".into(), self.surfaces.clone().into());
        o.insert(
            "canary".into(),
            Value::Object(crate::sort::json_map_of(
                self.canary
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v))),
            )),
        );
        o.insert(
            "sunset".into(),
            self.sunset.as_ref().map(|(_, t)| t.clone()).into(),
        );
        o.insert("deprecated".into(), self.deprecated.into());
        o.insert("idempotent".into(), self.policy.idempotent.into());
        o.insert("source".into(), self.source.clone());
        Value::Object(o)
    }
}

/// Reads a contract document: JSON text, or YAML (the seed's `skills/*.yaml`).
pub fn parse_text(text: &str) -> Result<Value> {
    let t = text.trim_start_matches('\u{feff}');
    if t.trim_start().starts_with('{') {
        return serde_json::from_str(t)
            .map_err(|e| Error::json(ErrorKind::InvalidContract, "the contract", &e));
    }
    let node = crate::skill::yaml::parse(t).map_err(|e| {
        Error::new(
            ErrorKind::InvalidContract,
            format!("the contract is not valid YAML or JSON: {e}"),
        )
    })?;
    Ok(node.to_json())
}

/// A semantic version from `1`, `0.9`, `1.2.3` or `v1.2.3` (text or a YAML number).
pub fn version_of(v: &Value) -> Option<Version> {
    let t = match v {
        Value::String(s) => s.trim().trim_start_matches('v').to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let dots = t
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .matches('.')
        .count();
    let full = match dots {
        0 => format!("{t}.0.0"),
        1 => {
            let cut = t.find(['-', '+']).unwrap_or(t.len());
            format!("{}.0{}", &t[..cut], &t[cut..])
        }
        _ => t,
    };
    Version::parse(&full).ok()
}

/// Epoch milliseconds of `YYYY-MM-DD` (midnight UTC) or an RFC 3339 time
/// (`2027-01-01T00:00:00Z`, offsets allowed).
pub fn epoch_ms(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), after H. Hinnant's algorithm.
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let mut ms = days as f64 * 86_400_000.0;
    if t.len() == 10 {
        return Some(ms);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    let mut rest = 16;
    let mut s = 0.0;
    if b.get(16) == Some(&b':') {
        s = num(17..19)? as f64;
        rest = 19;
        if b.get(19) == Some(&b'.') {
            let end = (20..b.len())
                .find(|&i| !b[i].is_ascii_digit())
                .unwrap_or(b.len());
            s += format!("0.{}", t.get(20..end)?).parse::<f64>().ok()?;
            rest = end;
        }
    }
    ms += ((h * 60 + mi) * 60) as f64 * 1000.0 + s * 1000.0;
    match t.get(rest..)? {
        "Z" | "z" | "" => Some(ms),
        off if off.len() == 6 => {
            let sign = match off.as_bytes()[0] {
                b'+' => -1.0,
                b'-' => 1.0,
                _ => return None,
            };
            let (oh, om) = (num(rest + 1..rest + 3)?, num(rest + 4..rest + 6)?);
            Some(ms + sign * ((oh * 60 + om) * 60_000) as f64)
        }
        _ => None,
    }
}

/// Reads typed fields of one object, recording a problem for each wrong one.
struct Fields<'a> {
    o: &'a Map<String, Value>,
    path: &'a str,
}

impl Fields<'_> {
    fn at(&self, k: &str) -> String {
        if self.path.is_empty() {
            k.to_owned()
        } else {
            format!("{}.{k}", self.path)
        }
    }

    fn text(&self, k: &str, out: &mut Problems) -> Option<String> {
        match self.o.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                out.error(
                    &self.at(k),
                    "invalid-field",
                    format!("`{k}` must be a text"),
                );
                None
            }
        }
    }

    fn number(&self, k: &str, out: &mut Problems) -> Option<f64> {
        match self.o.get(k) {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() && n >= 0.0 => Some(n),
                _ => {
                    out.error(
                        &self.at(k),
                        "invalid-field",
                        format!("`{k}` must be a number ≥ 0"),
                    );
                    None
                }
            },
        }
    }

    fn boolean(&self, k: &str, out: &mut Problems) -> Option<bool> {
        match self.o.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                out.error(
                    &self.at(k),
                    "invalid-field",
                    format!("`{k}` must be true or false"),
                );
                None
            }
        }
    }

    fn object(&self, k: &str, out: &mut Problems) -> Option<&Map<String, Value>> {
        match self.o.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                out.error(
                    &self.at(k),
                    "invalid-field",
                    format!("`{k}` must be a mapping"),
                );
                None
            }
        }
    }

    fn texts(&self, k: &str, out: &mut Problems) -> Vec<String> {
        match self.o.get(k) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(_) => {
                out.error(
                    &self.at(k),
                    "invalid-field",
                    format!("`{k}` must be a text or a list of texts"),
                );
                Vec::new()
            }
        }
    }

    fn unknown(&self, known: &[&str], out: &mut Problems) {
        for k in self.o.keys() {
            if !known.contains(&k.as_str()) && !k.starts_with("x-") {
                out.error(
                    &self.at(k),
                    "unknown-key",
                    format!("`{k}` is not a known key here ({})", known.join(", ")),
                );
            }
        }
    }
}

const TOP: [&str; 18] = [
    "output_adapters",
    "name",
    "version",
    "description",
    "owner",
    "input",
    "output",
    "errors",
    "policy",
    "capabilities_required",
    "backing_service",
    "examples",
    "surfaces",
    "canary",
    "sunset",
    "deprecated",
    "tags",
    "$schema",
];

/// Reads and checks one contract document. Every problem is collected (with its path)
/// before failing with `InvalidContract`; rules that need the registry (fallback names)
/// are checked by it.
pub fn read(doc: &Value) -> Result<Contract> {
    read_checked(doc, &|_, _| true)
}

/// [`read`], with `known(name, range)` telling whether a fallback target is registered.
pub fn read_checked(doc: &Value, known: &dyn Fn(&str, Option<&str>) -> bool) -> Result<Contract> {
    let mut out = Problems::default();
    let c = read_into(doc, &mut out, known);
    match c {
        Some(c) if !out.has_errors() => Ok(c),
        _ => Err(problems_error(out, doc)),
    }
}

/// The `InvalidContract` error listing every problem.
pub(crate) fn problems_error(out: Problems, doc: &Value) -> Error {
    let name = doc
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("the contract");
    let e = out.into_error(&format!("contract {name}"));
    let mut r = Error::new(ErrorKind::InvalidContract, e.message().to_owned());
    if let Value::Object(d) = e.details() {
        for (k, v) in d {
            r = r.with(&k, v);
        }
    }
    r
}

fn read_into(
    doc: &Value,
    out: &mut Problems,
    known: &dyn Fn(&str, Option<&str>) -> bool,
) -> Option<Contract> {
    let Value::Object(o) = doc else {
        out.error(
            "$",
            "invalid-contract",
            "a contract is a mapping (YAML) or an object (JSON)",
        );
        return None;
    };
    let f = Fields { o, path: "" };
    f.unknown(&TOP, out);
    let name = f.text("name", out);
    match &name {
        None => out.error("name", "missing-field", "a contract needs a `name`"),
        Some(n)
            if n.is_empty()
                || n.len() > 128
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
        {
            out.error(
                "name",
                "invalid-name",
                "a name is 1–128 letters, digits, `-`, `_` or `.` (it becomes a tool name)",
            )
        }
        _ => {}
    }
    let version = match o.get("version") {
        None => {
            out.error(
                "version",
                "missing-field",
                "a contract needs a semantic `version`",
            );
            None
        }
        Some(v) => {
            let r = version_of(v);
            if r.is_none() {
                out.error(
                    "version",
                    "invalid-version",
                    format!("{v} is not a semantic version (1.2.3)"),
                );
            }
            r
        }
    };
    let description = f.text("description", out).unwrap_or_default();
    if description.trim().is_empty() {
        out.error(
            "description",
            "missing-field",
            "a contract needs a `description` (the planner reads it)",
        );
    }
    let owner = f.text("owner", out).filter(|s| !s.trim().is_empty());
    if owner.is_none() {
        out.error(
            "owner",
            "missing-owner",
            "a contract needs an `owner` (a team or an address)",
        );
    }
    let input = match o.get("input") {
        Some(v) => {
            let s = fields::to_schema(v, "input", true, out);
            if !matches!(s.get("type"), Some(Value::String(t)) if t == "object")
                && s != Value::Bool(true)
            {
                out.error(
                    "input",
                    "invalid-schema",
                    "the input is an object of named fields (`type: object`)",
                );
            }
            s
        }
        None => {
            out.error(
                "input",
                "missing-field",
                "a contract needs an `input` schema",
            );
            Value::Bool(true)
        }
    };
    let output = match o.get("output") {
        Some(v) => fields::to_schema(v, "output", false, out),
        None => {
            out.error(
                "output",
                "missing-field",
                "a contract needs an `output` schema",
            );
            Value::Bool(true)
        }
    };
    let errors = read_errors(o.get("errors"), out);
    for (i, e) in errors.iter().enumerate() {
        if let RetryClass::FallbackTo(to) = &e.retry {
            let (n, range) = super::split_target(to);
            if Some(n) == name.as_deref() {
                out.error(
                    &format!("errors[{i}].fallback_to"),
                    "invalid-fallback",
                    "a contract cannot fall back to itself",
                );
            } else if !known(n, range.as_deref()) {
                out.error(
                    &format!("errors[{i}].fallback_to"),
                    "unknown-fallback",
                    format!("the fallback `{to}` is not a registered contract (register it first)"),
                );
            }
        }
    }
    let policy = read_policy(f.object("policy", out), &input, out);
    if let Some(p) = &policy {
        if !p.idempotent && p.idempotency_key.is_none() && p.retry.attempts > 0 {
            out.error(
                "policy.retry",
                "unsafe-retry",
                "a non-idempotent contract retries only with a gateway `idempotency_key` the backing service de-duplicates by (or `attempts: 0`)",
            );
        }
        if !p.idempotent && p.idempotency_key.is_none() {
            for (i, e) in errors.iter().enumerate() {
                if matches!(e.retry, RetryClass::Retry | RetryClass::RetryOnce) {
                    out.error(
                        &format!("errors[{i}].retry"),
                        "unsafe-retry",
                        format!("`{}` is retried, but the contract is not idempotent and has no `idempotency_key`", e.code),
                    );
                }
            }
        }
    }
    let (feature_flags, tiers) = read_capabilities(o.get("capabilities_required"), out);
    let backing_service = match o.get("backing_service") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(Value::from(s.clone())),
        Some(v @ Value::Object(b)) => {
            let bf = Fields {
                o: b,
                path: "backing_service",
            };
            bf.unknown(&["endpoint", "health_check", "protocol", "region"], out);
            if bf.text("endpoint", out).is_none() {
                out.error(
                    "backing_service.endpoint",
                    "missing-field",
                    "a backing service needs an `endpoint`",
                );
            }
            bf.text("health_check", out);
            Some(v.clone())
        }
        Some(_) => {
            out.error(
                "backing_service",
                "invalid-field",
                "`backing_service` is `{ endpoint, health_check }`",
            );
            None
        }
    };
    let examples = match o.get("examples") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => {
            for (i, ex) in a.iter().enumerate() {
                let p = format!("examples[{i}]");
                match ex.get("input") {
                    Some(inp) => {
                        let inp = fields::apply_defaults(&input, inp);
                        if let Err(v) = crate::json_schema::validate(&input, &inp) {
                            out.error(
                                &format!("{p}.input"),
                                "invalid-example",
                                format!(
                                    "the example's input does not match the input schema: {}",
                                    v[0].message
                                ),
                            );
                        }
                    }
                    None => out.error(
                        &p,
                        "invalid-example",
                        "an example is `{ input, output?, note? }`",
                    ),
                }
                if let Some(outp) = ex.get("output") {
                    if let Err(v) = crate::json_schema::validate(&output, outp) {
                        out.error(
                            &format!("{p}.output"),
                            "invalid-example",
                            format!(
                                "the example's output does not match the output schema: {}",
                                v[0].message
                            ),
                        );
                    }
                }
            }
            a.clone()
        }
        Some(_) => {
            out.error(
                "examples",
                "invalid-field",
                "`examples` is a list of `{ input, output? }`",
            );
            Vec::new()
        }
    };
    let surfaces = f.texts("surfaces", out);
    let mut canary = LiteMap::new();
    if let Some(c) = f.object("canary", out) {
        for (s, p) in c {
            match p.as_f64() {
                Some(n) if (0.0..=100.0).contains(&n) => {
                    canary.insert(s.clone(), n);
                }
                _ => out.error(
                    &format!("canary.{s}"),
                    "invalid-canary",
                    "a canary is a percent of the surface's users, 0–100",
                ),
            }
            if !surfaces.is_empty() && !surfaces.contains(s) {
                out.error(
                    &format!("canary.{s}"),
                    "invalid-canary",
                    format!("`{s}` is not one of the contract's surfaces"),
                );
            }
        }
    }
    let sunset = match f.text("sunset", out) {
        None => None,
        Some(t) => match epoch_ms(&t) {
            Some(ms) => Some((ms, t)),
            None => {
                out.error(
                    "sunset",
                    "invalid-date",
                    "`sunset` is a date (`2027-03-31`) or an RFC 3339 time",
                );
                None
            }
        },
    };
    let deprecated = f.boolean("deprecated", out).unwrap_or(false);
    let mut output_adapters = LiteMap::new();
    if let Some(a) = f.object("output_adapters", out) {
        for (v, m) in a {
            let p = format!("output_adapters.{v}");
            match version_of(&Value::String(v.clone())) {
                Some(old) if version.as_ref().is_some_and(|new| &old < new) => {
                    super::adapt::check(m, &p, out, 0);
                    output_adapters.insert(old, m.clone());
                }
                Some(_) => out.error(
                    &p,
                    "invalid-adapter",
                    "an output adapter serves an older version than the contract's",
                ),
                None => out.error(&p, "invalid-adapter", format!("`{v}` is not a version")),
            }
        }
    }
    let (name, version) = (name?, version?);
    Some(Contract {
        key: format!("{name}@{version}"),
        checks: std::sync::Arc::new((
            crate::json_schema::Compiled::new(&input),
            crate::json_schema::Compiled::new(&output),
        )),
        name,
        version,
        description,
        owner,
        input,
        output,
        errors,
        policy: policy?,
        feature_flags,
        tiers,
        backing_service,
        examples,
        surfaces,
        canary,
        sunset,
        deprecated,
        output_adapters,
        source: doc.clone(),
    })
}

fn read_errors(v: Option<&Value>, out: &mut Problems) -> Vec<DeclaredError> {
    let a = match v {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => {
            out.error(
                "errors",
                "invalid-field",
                "`errors` is a list of `{ code, retry }`",
            );
            return Vec::new();
        }
    };
    let mut seen: Vec<DeclaredError> = Vec::new();
    for (i, e) in a.iter().enumerate() {
        let p = format!("errors[{i}]");
        let (code, o) = match e {
            Value::String(s) => (s.clone(), None),
            Value::Object(o) => match o.get("code") {
                Some(Value::String(s)) => (s.clone(), Some(o)),
                _ => {
                    out.error(
                        &format!("{p}.code"),
                        "missing-field",
                        "an error needs a `code`",
                    );
                    continue;
                }
            },
            _ => {
                out.error(
                    &p,
                    "invalid-field",
                    "an error is `{ code, retry }` or a code",
                );
                continue;
            }
        };
        if code.is_empty() {
            out.error(
                &format!("{p}.code"),
                "missing-field",
                "an error code is not empty",
            );
        }
        let mut retry = RetryClass::DoNotRetry;
        let mut status = None;
        if let Some(o) = o {
            let f = Fields { o, path: &p };
            f.unknown(
                &[
                    "code",
                    "retry",
                    "fallback_to",
                    "http",
                    "status",
                    "description",
                ],
                out,
            );
            match o.get("http").or_else(|| o.get("status")) {
                None | Some(Value::Null) => {}
                Some(v) => match v.as_u64() {
                    Some(n @ 100..=599) => status = Some(n as u16),
                    _ => out.error(
                        &p,
                        "invalid-field",
                        "an error's `http` is an HTTP status (100 to 599)",
                    ),
                },
            }
            let fallback = f.text("fallback_to", out);
            let said = f.text("retry", out);
            if said.is_some() || fallback.is_some() {
                status = None;
            }
            retry = match (said.as_deref(), fallback) {
                (None | Some("do-not-retry") | Some("do_not_retry") | Some("never"), None) => {
                    RetryClass::DoNotRetry
                }
                (Some("retry-once") | Some("retry_once") | Some("once"), None) => {
                    RetryClass::RetryOnce
                }
                (Some("retry"), None) => RetryClass::Retry,
                (None | Some("fallback-to") | Some("fallback_to") | Some("fallback"), Some(to)) => {
                    RetryClass::FallbackTo(to)
                }
                (Some("fallback-to") | Some("fallback_to") | Some("fallback"), None) => {
                    out.error(
                        &format!("{p}.fallback_to"),
                        "missing-field",
                        "a fallback names the contract it falls back to in `fallback_to`",
                    );
                    RetryClass::DoNotRetry
                }
                (Some(r), _) => {
                    out.error(&format!("{p}.retry"), "invalid-retry", format!("`{r}` is not a retry class (do-not-retry, retry-once, retry, fallback-to)"));
                    RetryClass::DoNotRetry
                }
            };
        }
        if seen.iter().any(|d| d.code == code) {
            out.error(
                &format!("{p}.code"),
                "duplicate-error",
                format!("the error code `{code}` is declared twice"),
            );
        }
        seen.push(DeclaredError {
            code,
            retry,
            status,
        });
    }
    seen
}

/// The names `{field}` placeholders in a key template read.
pub(crate) fn template_fields(t: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = t;
    while let Some(a) = rest.find('{') {
        let after = &rest[a + 1..];
        match after.find('}') {
            Some(b) => {
                names.push(after[..b].trim());
                rest = &after[b + 1..];
            }
            None => break,
        }
    }
    names
}

fn read_policy(
    p: Option<&Map<String, Value>>,
    input: &Value,
    out: &mut Problems,
) -> Option<Policy> {
    let Some(p) = p else {
        out.error(
            "policy",
            "missing-field",
            "a contract needs a `policy` (idempotent, timeout_ms, budget)",
        );
        return None;
    };
    let f = Fields {
        o: p,
        path: "policy",
    };
    f.unknown(
        &[
            "idempotent",
            "idempotency_key",
            "idempotency_ttl_sec",
            "rate_limit",
            "timeout_ms",
            "retry",
            "circuit_breaker",
            "budget",
        ],
        out,
    );
    let idempotent = match f.boolean("idempotent", out) {
        Some(b) => b,
        None => {
            out.error(
                "policy.idempotent",
                "missing-field",
                "the policy must say whether the contract is `idempotent`",
            );
            false
        }
    };
    let idempotency_key = f.text("idempotency_key", out);
    if let Some(k) = &idempotency_key {
        let props = input.get("properties").and_then(Value::as_object);
        let names = template_fields(k);
        if names.is_empty() {
            out.error(
                "policy.idempotency_key",
                "invalid-key",
                "the key template names at least one input field (`{order_id}`)",
            );
        }
        for n in names {
            let top = n.split('.').next().unwrap_or(n);
            if !props.is_some_and(|p| p.contains_key(top)) {
                out.error(
                    "policy.idempotency_key",
                    "unknown-key-field",
                    format!("the key template reads `{n}`, which the input does not have"),
                );
            }
        }
        if k.matches('{').count() != k.matches('}').count() {
            out.error(
                "policy.idempotency_key",
                "invalid-key",
                "unbalanced `{` `}` in the key template",
            );
        }
    }
    let idempotency_ttl_ms = f.number("idempotency_ttl_sec", out).unwrap_or(3600.0) * 1000.0;
    let mut rate_limits = Vec::new();
    if let Some(r) = f.object("rate_limit", out) {
        for (k, v) in r {
            let p = format!("policy.rate_limit.{k}");
            let (scope, per) = match k.as_str() {
                "per_user_per_sec" => (LimitScope::User, 1_000.0),
                "per_user_per_min" => (LimitScope::User, 60_000.0),
                "per_user_per_hour" => (LimitScope::User, 3_600_000.0),
                "per_tenant_per_sec" => (LimitScope::Tenant, 1_000.0),
                "per_tenant_per_min" => (LimitScope::Tenant, 60_000.0),
                "per_tenant_per_hour" => (LimitScope::Tenant, 3_600_000.0),
                "global_per_sec" => (LimitScope::Global, 1_000.0),
                "global_per_min" => (LimitScope::Global, 60_000.0),
                "global_per_hour" => (LimitScope::Global, 3_600_000.0),
                _ => {
                    out.error(&p, "unknown-key", "a rate limit is per_user_ / per_tenant_ / global_ + per_sec / per_min / per_hour");
                    continue;
                }
            };
            match v.as_f64() {
                Some(n) if n >= 1.0 && n.is_finite() => rate_limits.push(RateLimit {
                    scope,
                    capacity: n,
                    window_ms: per,
                }),
                _ => out.error(&p, "invalid-field", "a rate limit is a count ≥ 1"),
            }
        }
    }
    let timeout_ms = f.number("timeout_ms", out).unwrap_or(0.0);
    if timeout_ms <= 0.0 {
        out.error(
            "policy.timeout_ms",
            "missing-field",
            "the policy needs a `timeout_ms` above 0",
        );
    }
    let mut retry = Retry {
        attempts: 0,
        backoff: Backoff::Exponential,
        base_ms: 100.0,
        max_ms: 10_000.0,
    };
    if let Some(r) = f.object("retry", out) {
        let rf = Fields {
            o: r,
            path: "policy.retry",
        };
        rf.unknown(&["attempts", "backoff", "base_ms", "max_ms"], out);
        retry.attempts = rf.number("attempts", out).map_or(0, |n| n.min(10.0) as u32);
        retry.backoff = match rf.text("backoff", out).as_deref() {
            None | Some("exponential") => Backoff::Exponential,
            Some("fixed") | Some("constant") => Backoff::Fixed,
            Some("none") => Backoff::None,
            Some(b) => {
                out.error(
                    "policy.retry.backoff",
                    "invalid-field",
                    format!("`{b}` is not a backoff (exponential, fixed, none)"),
                );
                Backoff::Exponential
            }
        };
        retry.base_ms = rf.number("base_ms", out).unwrap_or(100.0);
        retry.max_ms = rf
            .number("max_ms", out)
            .unwrap_or(10_000.0)
            .max(retry.base_ms);
    }
    let circuit_breaker = f.object("circuit_breaker", out).map(|b| {
        let bf = Fields {
            o: b,
            path: "policy.circuit_breaker",
        };
        bf.unknown(
            &[
                "error_rate_threshold",
                "window_sec",
                "min_calls",
                "open_sec",
            ],
            out,
        );
        let t = bf.number("error_rate_threshold", out).unwrap_or(0.5);
        if !(0.0..=1.0).contains(&t) || t == 0.0 {
            out.error(
                "policy.circuit_breaker.error_rate_threshold",
                "invalid-field",
                "the threshold is a failure rate in (0, 1]",
            );
        }
        let window = bf.number("window_sec", out).unwrap_or(30.0).max(0.001) * 1000.0;
        Breaker {
            error_rate_threshold: t,
            window_ms: window,
            min_calls: bf
                .number("min_calls", out)
                .map_or(10, |n| n.max(1.0) as u32),
            open_ms: bf.number("open_sec", out).map_or(window, |s| s * 1000.0),
        }
    });
    let budget = match f.object("budget", out) {
        None => {
            out.error(
                "policy.budget",
                "missing-budget",
                "the policy needs a `budget` with `p95_ms` and `cost_usd`",
            );
            None
        }
        Some(b) => {
            let bf = Fields {
                o: b,
                path: "policy.budget",
            };
            bf.unknown(&["p95_ms", "p99_ms", "cost_usd"], out);
            let p95 = bf.number("p95_ms", out);
            let cost = bf.number("cost_usd", out);
            bf.number("p99_ms", out);
            if p95.is_none() {
                out.error(
                    "policy.budget.p95_ms",
                    "missing-budget",
                    "the budget needs `p95_ms`",
                );
            }
            if cost.is_none() {
                out.error(
                    "policy.budget.cost_usd",
                    "missing-budget",
                    "the budget needs `cost_usd`",
                );
            }
            Some(Budget {
                p95_ms: p95.unwrap_or(0.0),
                cost_usd: cost.unwrap_or(0.0),
            })
        }
    };
    Some(Policy {
        idempotent,
        idempotency_key,
        idempotency_ttl_ms,
        rate_limits,
        timeout_ms,
        retry,
        circuit_breaker,
        budget: budget?,
    })
}

fn read_capabilities(v: Option<&Value>, out: &mut Problems) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    let mut tiers = Vec::new();
    let mut one = |k: &str, v: &Value, p: &str, out: &mut Problems| {
        let texts: Vec<String> = match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect(),
            _ => {
                out.error(
                    p,
                    "invalid-field",
                    format!("`{k}` is a name or a list of names"),
                );
                return;
            }
        };
        match k {
            "feature_flag" | "feature_flags" => flags.extend(texts),
            "tier" | "tiers" => tiers.extend(texts.into_iter().filter(|t| t != "any")),
            _ => out.error(
                p,
                "unknown-key",
                format!("`{k}` is not a capability (feature_flag, tier)"),
            ),
        }
    };
    match v {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for (i, x) in a.iter().enumerate() {
                match x {
                    Value::Object(o) => {
                        for (k, v) in o {
                            one(k, v, &format!("capabilities_required[{i}].{k}"), out);
                        }
                    }
                    _ => out.error(
                        &format!("capabilities_required[{i}]"),
                        "invalid-field",
                        "a capability is `feature_flag: name` or `tier: name`",
                    ),
                }
            }
        }
        Some(Value::Object(o)) => {
            for (k, v) in o {
                one(k, v, &format!("capabilities_required.{k}"), out);
            }
        }
        Some(_) => out.error(
            "capabilities_required",
            "invalid-field",
            "`capabilities_required` is a list of `feature_flag:` / `tier:` entries",
        ),
    }
    (flags, tiers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_epoch_milliseconds() {
        assert_eq!(epoch_ms("1970-01-01"), Some(0.0));
        assert_eq!(epoch_ms("2000-03-01"), Some(951_868_800_000.0));
        assert_eq!(
            epoch_ms("2027-01-01T01:00:00+01:00"),
            epoch_ms("2027-01-01")
        );
        assert_eq!(
            epoch_ms("2027-01-01T00:00:00.5Z"),
            epoch_ms("2027-01-01").map(|x| x + 500.0)
        );
        assert_eq!(epoch_ms("2027-13-01"), None);
        assert_eq!(epoch_ms("soon"), None);
    }

    #[test]
    fn versions_read_short_forms() {
        assert_eq!(
            version_of(&serde_json::json!(0.9)).map(|v| v.to_string()),
            Some("0.9.0".into())
        );
        assert_eq!(
            version_of(&serde_json::json!("v2")).map(|v| v.to_string()),
            Some("2.0.0".into())
        );
        assert_eq!(
            version_of(&serde_json::json!("1.2-beta.1")).map(|v| v.to_string()),
            Some("1.2.0-beta.1".into())
        );
        assert_eq!(version_of(&serde_json::json!("x")), None);
    }
}
