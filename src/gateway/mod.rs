//! The invocation gateway (seed: skill registry contracts): every call of a contract —
//! from a chat panel, a Worker or a WASI host — goes through one [`Call`], which resolves
//! the version, validates the input, checks capabilities, rate limits, the circuit breaker
//! and idempotency, runs the handler with a timeout, retries as the error class allows,
//! validates the output and leaves one observability record.
//!
//! The core does no I/O: a [`Call`] is a state machine. The host starts it and performs
//! each [`Action`] it returns — a state transaction ([`state::apply`] over the port's
//! values), the handler, a wait — and feeds the result back as an [`Event`], until `Done`
//! or `Fail`. The JS face, the component and a Rust host each drive it in a short loop.
//!
//! ```
//! use promptloom::gateway::{Action, Call, CallContext, Event};
//! use promptloom::registry::Registry;
//! use std::sync::Arc;
//! let mut r = Registry::default();
//! r.register_text(r#"{"name":"echo","version":"1.0","description":"Echoes.","owner":"me",
//!   "input":{"text":{"type":"string","required":true}},"output":{"text":"string"},
//!   "policy":{"idempotent":true,"timeout_ms":100,"budget":{"p95_ms":5,"cost_usd":0}}}"#)?;
//! let ctx = CallContext::new("chat", "u1");
//! let mut call = Call::new(Arc::new(r), "echo", serde_json::json!({"text":"hi"}), ctx, "t1");
//! let mut state = std::collections::BTreeMap::<String, String>::new();
//! let mut action = call.start(0.0);
//! let out = loop {
//!     action = match action {
//!         Action::Transact(op) => {
//!             let values: Vec<_> = op.keys().iter().map(|k| state.get(k).cloned()).collect();
//!             let (writes, applied) = promptloom::gateway::state::apply(&op, &values, 0.0);
//!             for (k, v) in writes { match v { Some(v) => { state.insert(k, v); } None => { state.remove(&k); } } }
//!             call.on(Event::Applied(applied), 0.0)
//!         }
//!         Action::Invoke(inv) => call.on(Event::Output(inv.input.clone()), 1.0),
//!         Action::Sleep(_) => call.on(Event::Woke, 0.0),
//!         Action::Done(v) => break v,
//!         Action::Fail(e) => return Err(e),
//!     }
//! };
//! assert_eq!(out["text"], "hi");
//! # Ok::<(), promptloom::Error>(())
//! ```

pub mod record;
pub mod state;

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::registry::contract::{Backoff, LimitScope};
use crate::registry::{fields, split_target, Contract, Registry, RetryClass};
use serde_json::{Map, Value};
use state::{Applied, BreakerOp, BucketOp, IdemEnd, Op};
use std::sync::Arc;

/// How many call records a gateway keeps by default (the oldest are dropped first).
pub const MAX_RECORDS: usize = 10_000;

/// A call's trace id: the `trace_id` its options give, else the gateway's 16 hex digits
/// (`prefix`, which the host seeds: random bits, or its clock) and the call's number in 16
/// more — 32 hex digits, OpenTelemetry's length.
pub fn trace_id(prefix: &str, seq: u64, options: &Value) -> String {
    match options.get("trace_id").and_then(Value::as_str) {
        Some(t) => t.to_owned(),
        None => format!("{prefix}{seq:016x}"),
    }
}

/// Who calls, from where, with what rights.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallContext {
    /// The surface (`chat`, `voice`, `alerts`, `batch`).
    pub surface: String,
    /// The calling user.
    pub user: String,
    /// The user's tenant (per-tenant limits).
    pub tenant: Option<String>,
    /// The conversation session (the idempotency scope of interactive surfaces).
    pub session: Option<String>,
    /// The user's tier (`adult`, `pro`).
    pub tier: Option<String>,
    /// The feature flags the caller has on.
    pub flags: Vec<String>,
    /// A version or range to call instead of the surface's default.
    pub version: Option<String>,
    /// The idempotency scope: `session`, `day`, or by default the session when one is
    /// given and the day otherwise (scheduled surfaces).
    pub scope: Option<String>,
}

impl CallContext {
    /// A context with a surface and a user.
    pub fn new(surface: &str, user: &str) -> Self {
        CallContext {
            surface: surface.to_owned(),
            user: user.to_owned(),
            ..CallContext::default()
        }
    }

    /// From `{ surface, user, tenant?, session?, tier?, flags?, version?, scope? }`.
    pub fn from_value(v: &Value) -> Result<Self> {
        let o = v.as_object().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOptions,
                "the call options are `{ surface, user, session?, tier?, flags?, version? }`",
            )
        })?;
        let text = |k: &str, required: bool| -> Result<Option<String>> {
            match o.get(k) {
                None | Some(Value::Null) if !required => Ok(None),
                Some(Value::String(s)) if !s.is_empty() || !required => Ok(Some(s.clone())),
                _ => Err(Error::new(
                    ErrorKind::InvalidOptions,
                    format!(
                        "`{k}` must be a{} text",
                        if required { " non-empty" } else { "" }
                    ),
                )
                .at(k)),
            }
        };
        let flags = match o.get("flags") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect(),
            Some(Value::Object(m)) => m
                .iter()
                .filter(|(_, on)| on.as_bool() == Some(true))
                .map(|(k, _)| k.clone())
                .collect(),
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "`flags` is a list of flag names",
                )
                .at("flags"))
            }
        };
        let scope = text("scope", false)?;
        if let Some(s) = &scope {
            if s != "session" && s != "day" {
                return Err(
                    Error::new(ErrorKind::InvalidOptions, "`scope` is `session` or `day`")
                        .at("scope"),
                );
            }
        }
        Ok(CallContext {
            surface: text("surface", true)?.unwrap_or_default(),
            user: text("user", true)?.unwrap_or_default(),
            tenant: text("tenant", false)?,
            session: text("session", false)?,
            tier: text("tier", false)?,
            flags,
            version: text("version", false)?,
            scope,
        })
    }
}

/// One handler run the host performs.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The contract.
    pub contract: String,
    /// Its resolved version.
    pub version: String,
    /// The input, defaults filled in and validated.
    pub input: Value,
    /// The attempt (1 for the first).
    pub attempt: u32,
    /// Abort the handler after this many milliseconds and report [`Event::TimedOut`].
    pub timeout_ms: f64,
    /// The gateway-made idempotency key, for the backing service to de-duplicate by.
    pub idempotency_key: Option<String>,
    /// The call's trace id.
    pub trace_id: String,
}

impl Invocation {
    /// The context object handlers receive (without the input).
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "contract": self.contract,
            "version": self.version,
            "attempt": self.attempt,
            "timeout_ms": self.timeout_ms,
            "idempotency_key": self.idempotency_key,
            "trace_id": self.trace_id,
        })
    }
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Read [`Op::keys`] from the state port, [`state::apply`], write, report
    /// [`Event::Applied`].
    Transact(Op),
    /// Run the handler; report [`Event::Output`], [`Event::Failed`] or [`Event::TimedOut`].
    Invoke(Invocation),
    /// Wait this many milliseconds (a retry backoff); report [`Event::Woke`].
    Sleep(f64),
    /// The call's output.
    Done(Value),
    /// The call's typed error.
    Fail(Error),
}

/// A handler failure, as the host saw it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Failure {
    /// The error code the handler answered with (one the contract may declare).
    pub code: Option<String>,
    /// Its message.
    pub message: String,
    /// An HTTP status, when the handler called a service.
    pub status: Option<u16>,
    /// What the handler said about retrying, when it did.
    pub retryable: Option<bool>,
}

/// What happened to the host's last [`Action`].
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The transaction's result.
    Applied(Applied),
    /// The handler's output.
    Output(Value),
    /// The handler failed.
    Failed(Failure),
    /// The handler ran past `timeout_ms` (it was cancelled).
    TimedOut,
    /// The wait ended.
    Woke,
    /// The caller cancelled the call.
    Aborted,
}

#[derive(Debug, Clone, PartialEq)]
enum Then {
    Finish(std::result::Result<Value, Error>),
    Retry(f64, Error),
    Fallback(String, Error),
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Start,
    Admitting,
    Invoking(f64),
    Settling(Then),
    Sleeping,
    Finished,
}

/// How many fallbacks one call may follow.
const MAX_FALLBACKS: usize = 3;

/// One gateway call (see the module docs for the loop that drives it).
#[derive(Debug, Clone)]
pub struct Call {
    registry: Arc<Registry>,
    ctx: CallContext,
    name: String,
    raw_input: Value,
    trace_id: String,
    contract: Option<Arc<Contract>>,
    /// For a caller of an older version the contract adapts its output to: that version
    /// and the mapping.
    adapter: Option<crate::registry::Adapter>,
    input: Value,
    idem_key: Option<String>,
    /// Whether the gateway itself answers duplicates under `idem_key` (state writes made).
    dedup: bool,
    attempts: u32,
    retries: u32,
    phase: Phase,
    start_ms: f64,
    handler_ms: f64,
    breaker: &'static str,
    fallback_from: Vec<String>,
    error_code: Option<String>,
    outcome: Option<String>,
    end_ms: f64,
}

impl Call {
    /// A call of contract `name` with `input`, by `ctx`, traced as `trace_id` (the host
    /// makes ids; the core has no randomness).
    pub fn new(
        registry: Arc<Registry>,
        name: &str,
        input: Value,
        ctx: CallContext,
        trace_id: &str,
    ) -> Call {
        Call {
            registry,
            ctx,
            name: name.to_owned(),
            raw_input: input,
            trace_id: trace_id.to_owned(),
            contract: None,
            adapter: None,
            input: Value::Null,
            idem_key: None,
            dedup: false,
            attempts: 0,
            retries: 0,
            phase: Phase::Start,
            start_ms: 0.0,
            handler_ms: 0.0,
            breaker: "none",
            fallback_from: Vec::new(),
            error_code: None,
            outcome: None,
            end_ms: 0.0,
        }
    }

    /// The first action, at `now` (epoch milliseconds).
    pub fn start(&mut self, now: f64) -> Action {
        self.start_ms = now;
        self.begin(now)
    }

    /// Resolves the contract for the current name and prepares the first attempt.
    fn begin(&mut self, now: f64) -> Action {
        match self.prepare(now) {
            Ok(Some(op)) => {
                self.phase = Phase::Admitting;
                Action::Transact(op)
            }
            Ok(None) => self.invoke(now),
            Err(e) => self.fail(e, now),
        }
    }

    fn prepare(&mut self, now: f64) -> Result<Option<Op>> {
        let (c, adapter) = self.registry.resolve_call(
            &self.name,
            &self.ctx.surface,
            &self.ctx.user,
            self.ctx.version.as_deref(),
            now,
        )?;
        self.contract = Some(c.clone());
        self.adapter = adapter;
        let input = fields::apply_defaults(&c.input, &self.raw_input);
        if let Err(v) = c.check_input(&input) {
            let first = v
                .first()
                .map(|v| {
                    format!(
                        "{} (at {})",
                        v.message,
                        if v.instance_path.is_empty() {
                            "$"
                        } else {
                            &v.instance_path
                        }
                    )
                })
                .unwrap_or_default();
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the input of {} does not match its contract: {first}",
                    c.id()
                ),
            )
            .with("contract", c.name.clone())
            .with("version", c.version.to_string())
            .with(
                "violations",
                Value::Array(v.iter().map(|x| x.to_value()).collect()),
            ));
        }
        self.input = input;
        let missing: Vec<&String> = c
            .feature_flags
            .iter()
            .filter(|f| !self.ctx.flags.contains(f))
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorKind::CapabilityDenied,
                format!("{} needs the feature flag `{}`", c.id(), missing[0]),
            )
            .with("contract", c.name.clone())
            .with("reason", "feature_flag")
            .with(
                "missing",
                Value::from(missing.into_iter().cloned().collect::<Vec<_>>()),
            ));
        }
        if !c.tiers.is_empty() && !self.ctx.tier.as_ref().is_some_and(|t| c.tiers.contains(t)) {
            return Err(Error::new(
                ErrorKind::CapabilityDenied,
                format!(
                    "{} is for the tier{} {}; the caller's tier is {}",
                    c.id(),
                    if c.tiers.len() > 1 { "s" } else { "" },
                    c.tiers.join(", "),
                    self.ctx.tier.as_deref().unwrap_or("not given")
                ),
            )
            .with("contract", c.name.clone())
            .with("reason", "tier")
            .with("tiers", c.tiers.clone()));
        }
        self.idem_key = self.idempotency_key(&c, now);
        // The gateway serves a repeat from its own record only for a contract that says how
        // (idempotent, or a key template); any other key is for the backing service.
        self.dedup = c.policy.idempotent || c.policy.idempotency_key.is_some();
        let p = &c.policy;
        let buckets: Vec<BucketOp> = p
            .rate_limits
            .iter()
            .map(|r| BucketOp {
                key: match r.scope {
                    LimitScope::User => format!("rl:{}:user:{}", c.name, self.ctx.user),
                    LimitScope::Tenant => format!(
                        "rl:{}:tenant:{}",
                        c.name,
                        self.ctx.tenant.as_deref().unwrap_or("-")
                    ),
                    LimitScope::Global => format!("rl:{}:global", c.name),
                },
                capacity: r.capacity,
                window_ms: r.window_ms,
                scope: r.scope.as_str(),
            })
            .collect();
        let breaker = self.breaker_op(&c);
        let idem = self
            .idem_key
            .clone()
            .filter(|_| self.dedup)
            .map(|k| (k, self.max_ms(&c), self.trace_id.clone()));
        if idem.is_none() && breaker.is_none() && buckets.is_empty() {
            return Ok(None);
        }
        Ok(Some(Op::Admit {
            idem,
            breaker,
            buckets,
        }))
    }

    /// The longest a call of `c` may take (every attempt at its timeout and the longest
    /// waits): how long a pending idempotency record holds.
    fn max_ms(&self, c: &Contract) -> f64 {
        let n = f64::from(c.policy.retry.attempts.max(1) + 1);
        n * c.policy.timeout_ms + n * c.policy.retry.max_ms
    }

    fn breaker_op(&self, c: &Contract) -> Option<BreakerOp> {
        c.policy.circuit_breaker.as_ref().map(|b| BreakerOp {
            key: format!("cb:{}", c.key()),
            threshold: b.error_rate_threshold,
            window_ms: b.window_ms,
            min_calls: b.min_calls,
            open_ms: b.open_ms,
            probe_ms: self.max_ms(c),
        })
    }

    /// The key a call is de-duplicated by: the contract's template (or, without one, a hash
    /// of the whole input) within the scope — (user, session) or (user, day). Every call gets
    /// one, as the seed says: the gateway composes it, so a skill author cannot get it wrong.
    /// An idempotent contract (or one with a template) is de-duplicated by the gateway's own
    /// records; a non-idempotent one passes its key to the backing service, which
    /// de-duplicates a caller's retry (the same input in the same scope has the same key),
    /// and the gateway never retries it.
    fn idempotency_key(&self, c: &Contract, now: f64) -> Option<String> {
        use std::fmt::Write as _;
        let by_session = match self.ctx.scope.as_deref() {
            Some("session") => true,
            Some(_) => false,
            None => self.ctx.session.is_some(),
        };
        // `idem:<name@version>[><older version>]:<user>:<scope>:<body>`: callers served
        // through an output adapter get their own records (another shape).
        let mut k = String::with_capacity(96);
        k.push_str("idem:");
        k.push_str(c.key());
        if let Some((v, _)) = &self.adapter {
            let _ = write!(k, ">{v}");
        }
        k.push(':');
        k.push_str(&self.ctx.user);
        if by_session {
            k.push_str(":s=");
            k.push_str(self.ctx.session.as_deref().unwrap_or("-"));
        } else {
            let _ = write!(k, ":d={}", (now / 86_400_000.0).floor() as i64);
        }
        k.push(':');
        match &c.policy.idempotency_key {
            Some(t) => render_key_into(&mut k, t, &self.input),
            None => {
                let _ = write!(k, "#{:016x}", fnv(&self.input.json_text()));
            }
        }
        Some(k)
    }

    fn contract(&self) -> Option<&Arc<Contract>> {
        self.contract.as_ref()
    }

    fn invoke(&mut self, now: f64) -> Action {
        let Some(c) = self.contract().cloned() else {
            return self.fail(
                Error::new(ErrorKind::Internal, "invoke before the contract resolved"),
                now,
            );
        };
        self.attempts += 1;
        self.phase = Phase::Invoking(now);
        Action::Invoke(Invocation {
            contract: c.name.clone(),
            version: c.version_text().to_owned(),
            input: self.input.clone(),
            attempt: self.attempts,
            timeout_ms: c.policy.timeout_ms,
            idempotency_key: self.idem_key.clone(),
            trace_id: self.trace_id.clone(),
        })
    }

    /// The next action after `event`, at `now`.
    pub fn on(&mut self, event: Event, now: f64) -> Action {
        let phase = std::mem::replace(&mut self.phase, Phase::Finished);
        match (phase, event) {
            (Phase::Finished, _) => self.fail(
                Error::new(ErrorKind::InvalidRequest, "the call has finished"),
                now,
            ),
            (Phase::Start, _) => self.start(now),
            (p, Event::Aborted) => {
                let e = Error::new(ErrorKind::Aborted, "the call was aborted");
                if self.dedup && !matches!(p, Phase::Admitting) {
                    // The key was marked pending: free it for the next call.
                    self.settle_op(None, IdemEnd::Release, Then::Finish(Err(e)), now)
                } else {
                    self.fail(e, now)
                }
            }
            (Phase::Admitting, Event::Applied(a)) => match a {
                Applied::Admitted { breaker } => {
                    self.breaker = breaker;
                    self.invoke(now)
                }
                Applied::Cached(v) => {
                    self.outcome = Some("cached".into());
                    self.dedup = false;
                    self.finish(Ok(v), now)
                }
                Applied::InFlight { retry_after_ms } => {
                    self.dedup = false;
                    let e = Error::new(
                        ErrorKind::InFlight,
                        format!(
                            "a call of {} with the same idempotency key is still running",
                            self.id()
                        ),
                    )
                    .with("retry_after_ms", retry_after_ms)
                    .with("idempotency_key", self.idem_key.clone());
                    self.fail(e, now)
                }
                Applied::CircuitOpen { retry_after_ms } => {
                    self.breaker = "open";
                    self.dedup = false;
                    let e = Error::new(
                        ErrorKind::CircuitOpen,
                        format!("the circuit breaker of {} is open", self.id()),
                    )
                    .with("retry_after_ms", retry_after_ms);
                    self.fail(e, now)
                }
                Applied::RateLimited {
                    scope,
                    retry_after_ms,
                } => {
                    self.dedup = false;
                    let e = Error::new(
                        ErrorKind::RateLimited,
                        format!("the {scope} rate limit of {} is spent", self.id()),
                    )
                    .with("source", "gateway")
                    .with("scope", scope)
                    .with("retry_after_ms", retry_after_ms);
                    self.fail(e, now)
                }
                Applied::Settled { .. } => self.fail(
                    Error::new(ErrorKind::Internal, "a settlement answered an admission"),
                    now,
                ),
            },
            (Phase::Invoking(t0), Event::Output(v)) => {
                self.handler_ms += (now - t0).max(0.0);
                let Some(c) = self.contract().cloned() else {
                    return self.fail(Error::new(ErrorKind::Internal, "no contract"), now);
                };
                let checked = c.check_output(&v).map(|()| v).and_then(|v| self.adapt(v));
                match checked {
                    Ok(v) => {
                        let ttl = c.policy.idempotency_ttl_ms;
                        self.settle_op(
                            Some(true),
                            IdemEnd::Done {
                                out: v.clone(),
                                ttl_ms: ttl,
                            },
                            Then::Finish(Ok(v)),
                            now,
                        )
                    }
                    Err(viol) => {
                        let e = Error::new(
                            ErrorKind::InvalidOutput,
                            format!(
                                "the handler of {} answered outside its output schema: {}",
                                c.id(),
                                viol[0].message
                            ),
                        )
                        .with("contract", c.name.clone())
                        .with("version", c.version.to_string())
                        .with(
                            "violations",
                            Value::Array(viol.iter().map(|x| x.to_value()).collect()),
                        );
                        self.settle_op(Some(false), IdemEnd::Release, Then::Finish(Err(e)), now)
                    }
                }
            }
            (Phase::Invoking(t0), Event::Failed(f)) => {
                self.handler_ms += (now - t0).max(0.0);
                self.after_failure(Some(f), now)
            }
            (Phase::Invoking(t0), Event::TimedOut) => {
                self.handler_ms += (now - t0).max(0.0);
                self.after_failure(None, now)
            }
            (Phase::Settling(then), Event::Applied(Applied::Settled { breaker })) => {
                if breaker != "none" {
                    self.breaker = breaker;
                }
                match then {
                    Then::Finish(r) => {
                        self.dedup = false;
                        self.finish(r, now)
                    }
                    // The failure opened the breaker: no retry goes through it.
                    Then::Retry(_, e) if breaker == "open" => self.settle_op(
                        None,
                        IdemEnd::Release,
                        Then::Finish(Err(e
                            .with("attempts", self.attempts)
                            .with("breaker", "open"))),
                        now,
                    ),
                    Then::Retry(ms, _) => {
                        self.phase = Phase::Sleeping;
                        Action::Sleep(ms)
                    }
                    Then::Fallback(to, e) => self.fallback(&to, e, now),
                }
            }
            (Phase::Sleeping, Event::Woke) => self.invoke(now),
            (p, e) => {
                self.phase = p;
                Action::Fail(Error::new(
                    ErrorKind::InvalidRequest,
                    format!("the gateway did not expect {e:?} now"),
                ))
            }
        }
    }

    /// The output in the shape of the older version the caller asked for, when the call is
    /// served through an output adapter (checked against that version's output schema when
    /// it is still registered).
    fn adapt(&self, v: Value) -> std::result::Result<Value, Vec<crate::json_schema::Violation>> {
        let Some((old, m)) = &self.adapter else {
            return Ok(v);
        };
        let out = crate::registry::adapt::apply(m, &v);
        match self.registry.get(&self.name, &old.to_string()) {
            Ok(prev) => prev.check_output(&out).map(|()| out),
            Err(_) => Ok(out),
        }
    }

    fn id(&self) -> String {
        self.contract()
            .map_or_else(|| self.name.clone(), |c| c.id())
    }

    fn after_failure(&mut self, f: Option<Failure>, now: f64) -> Action {
        let Some(c) = self.contract().cloned() else {
            return self.fail(Error::new(ErrorKind::Internal, "no contract"), now);
        };
        let (class, err) = match &f {
            None => (
                RetryClass::Retry,
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "{} did not answer within {} ms",
                        c.id(),
                        c.policy.timeout_ms
                    ),
                )
                .with("timeout_ms", c.policy.timeout_ms),
            ),
            Some(f) => {
                let declared = f.code.as_deref().and_then(|code| c.declared(code));
                let class = match declared {
                    Some(d) => d.class(&c),
                    None if f.retryable == Some(false) => RetryClass::DoNotRetry,
                    None if f.retryable == Some(true) => RetryClass::Retry,
                    None => match f.status {
                        Some(s) if (400..500).contains(&s) && s != 408 && s != 429 => {
                            RetryClass::DoNotRetry
                        }
                        _ => RetryClass::Retry,
                    },
                };
                self.error_code = f.code.clone();
                let mut e = Error::new(
                    ErrorKind::HandlerFailed,
                    format!(
                        "{} failed{}: {}",
                        c.id(),
                        f.code
                            .as_deref()
                            .map(|x| format!(" with {x}"))
                            .unwrap_or_default(),
                        f.message
                    ),
                )
                .with("contract", c.name.clone())
                .with("version", c.version.to_string())
                .with("error_code", f.code.clone())
                .with("declared", declared.is_some())
                .with("retry", class.as_str());
                if let Some(s) = f.status {
                    e = e.with("status", s);
                }
                (class, e)
            }
        };
        let allowed = match &class {
            RetryClass::Retry => c.policy.retry.attempts,
            RetryClass::RetryOnce => 1,
            _ => 0,
        };
        if c.may_retry() && self.retries < allowed {
            self.retries += 1;
            let delay = self.backoff(&c);
            return self.settle_op(Some(false), IdemEnd::Keep, Then::Retry(delay, err), now);
        }
        let err = err.with("attempts", self.attempts);
        if let RetryClass::FallbackTo(to) = class {
            if self.fallback_from.len() < MAX_FALLBACKS {
                return self.settle_op(Some(false), IdemEnd::Release, Then::Fallback(to, err), now);
            }
        }
        self.settle_op(Some(false), IdemEnd::Release, Then::Finish(Err(err)), now)
    }

    /// The wait before retry `self.retries`: the policy's backoff with a jitter of up to
    /// half of it, seeded by the trace id and the retry (the same call waits the same).
    fn backoff(&self, c: &Contract) -> f64 {
        let r = &c.policy.retry;
        let base = match r.backoff {
            Backoff::None => return 0.0,
            Backoff::Fixed => r.base_ms,
            Backoff::Exponential => {
                r.base_ms * 2f64.powi(self.retries.saturating_sub(1).min(30) as i32)
            }
        }
        .min(r.max_ms);
        let u = (fnv(&format!("{}#{}", self.trace_id, self.retries)) >> 11) as f64
            / (1u64 << 53) as f64;
        (base * (0.5 + 0.5 * u)).round()
    }

    fn settle_op(&mut self, ok: Option<bool>, end: IdemEnd, then: Then, now: f64) -> Action {
        let breaker = match (ok, self.contract().and_then(|c| self.breaker_op(c))) {
            (Some(ok), Some(b)) => Some((b, ok)),
            _ => None,
        };
        let idem = if self.dedup {
            self.idem_key.clone().map(|k| (k, end))
        } else {
            None
        };
        if breaker.is_none() && idem.is_none() {
            self.phase = Phase::Settling(then);
            return self.on(Event::Applied(Applied::Settled { breaker: "none" }), now);
        }
        self.phase = Phase::Settling(then);
        Action::Transact(Op::Settle { breaker, idem })
    }

    fn fallback(&mut self, to: &str, e: Error, now: f64) -> Action {
        let (name, range) = split_target(to);
        self.fallback_from.push(self.id());
        self.name = name.to_owned();
        self.ctx.version = range;
        self.contract = None;
        self.idem_key = None;
        self.dedup = false;
        self.retries = 0;
        self.error_code = None;
        let _ = e;
        self.begin(now)
    }

    fn fail(&mut self, e: Error, now: f64) -> Action {
        self.finish(Err(e), now)
    }

    fn finish(&mut self, r: std::result::Result<Value, Error>, now: f64) -> Action {
        self.phase = Phase::Finished;
        self.end_ms = now;
        match r {
            Ok(v) => {
                if self.outcome.is_none() {
                    self.outcome = Some("ok".into());
                }
                Action::Done(v)
            }
            Err(e) => {
                self.outcome = Some(e.code().to_owned());
                let e = if self.fallback_from.is_empty() {
                    e
                } else {
                    e.with("fallback_from", self.fallback_from.clone())
                };
                Action::Fail(e.with("trace_id", self.trace_id.clone()))
            }
        }
    }

    /// Whether the output is adapted to an older version's shape (then it is not the
    /// handler's output as given).
    pub fn is_adapted(&self) -> bool {
        self.adapter.is_some()
    }

    /// Whether the call has finished.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// The observability record of a finished call.
    pub fn record(&self) -> record::Record {
        let c = self.contract();
        let latency = (self.end_ms - self.start_ms).max(0.0);
        record::Record {
            trace_id: self.trace_id.clone(),
            contract: c.map_or_else(|| self.name.clone(), |c| c.name.clone()),
            version: c.map(|c| c.version.to_string()),
            surface: self.ctx.surface.clone(),
            user: self.ctx.user.clone(),
            outcome: self.outcome.clone().unwrap_or_else(|| "running".into()),
            error_code: self.error_code.clone(),
            start_ms: self.start_ms,
            end_ms: self.end_ms,
            latency_ms: latency,
            handler_ms: self.handler_ms,
            attempts: self.attempts,
            retries: self.retries,
            cost_usd: c.map_or(0.0, |c| c.policy.budget.cost_usd * f64::from(self.attempts)),
            breaker: self.breaker,
            budget_overrun: c
                .is_some_and(|c| self.attempts > 0 && latency > c.policy.budget.p95_ms),
            fallback_from: self.fallback_from.clone(),
            idempotency_key: self.idem_key.clone(),
            adapted_to: self.adapter.as_ref().map(|(v, _)| v.to_string()),
        }
    }
}

/// FNV-1a, 64 bits (content hashes and seeds; not for security).
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A key template with `{field}` / `{a.b}` placeholders filled from the input (texts as
/// they are, other values as JSON).
pub fn render_key(t: &str, input: &Value) -> String {
    let mut out = String::with_capacity(t.len() + 16);
    render_key_into(&mut out, t, input);
    out
}

/// [`render_key`], appended to `out`.
fn render_key_into(out: &mut String, t: &str, input: &Value) {
    use std::fmt::Write as _;
    let mut rest = t;
    while let Some(a) = rest.find('{') {
        out.push_str(&rest[..a]);
        let after = &rest[a + 1..];
        let Some(b) = after.find('}') else {
            out.push_str(&rest[a..]);
            return;
        };
        let mut v = input;
        for seg in after[..b].trim().split('.') {
            v = v.get(seg).unwrap_or(&Value::Null);
        }
        match v {
            Value::String(s) => out.push_str(s),
            other => {
                let _ = write!(out, "{other}");
            }
        }
        rest = &after[b + 1..];
    }
    out.push_str(rest);
}

/// Runs a whole call against a [`state::MemoryState`] and a synchronous handler (tests,
/// Rust hosts without async, the registration check): waits are skipped and the clock is
/// `now` plus the handler's reported milliseconds.
pub fn run_sync(
    call: &mut Call,
    state: &mut state::MemoryState,
    now: f64,
    mut handler: impl FnMut(&Invocation) -> (std::result::Result<Value, Failure>, f64),
) -> Result<Value> {
    let mut t = now;
    let mut action = call.start(t);
    loop {
        action = match action {
            Action::Transact(op) => {
                let applied = state.run(op, t);
                call.on(Event::Applied(applied), t)
            }
            Action::Invoke(inv) => {
                let (r, ms) = handler(&inv);
                if ms > inv.timeout_ms {
                    t += inv.timeout_ms;
                    call.on(Event::TimedOut, t)
                } else {
                    t += ms;
                    match r {
                        Ok(v) => call.on(Event::Output(v), t),
                        Err(f) => call.on(Event::Failed(f), t),
                    }
                }
            }
            Action::Sleep(ms) => {
                t += ms;
                call.on(Event::Woke, t)
            }
            Action::Done(v) => return Ok(v),
            Action::Fail(e) => return Err(e),
        };
    }
}

/// An invoke action as the faces pass it on, written straight from the call's fields (the
/// fields in the order a `Value` object sorts them, so the bytes are `to_value`'s).
#[derive(serde::Serialize)]
struct InvokeWire<'a> {
    attempt: u32,
    contract: &'a str,
    #[serde(rename = "do")]
    action: &'static str,
    idempotency_key: Option<&'a str>,
    input: &'a Value,
    timeout_ms: f64,
    trace_id: &'a str,
    version: &'a str,
}

impl Action {
    /// [`Self::to_value`] as JSON text; the invoke action (one per attempt) is written
    /// without building a value tree or copying its input.
    pub fn to_json(&self) -> String {
        match self {
            Action::Invoke(inv) => crate::json_text::to_string(&InvokeWire {
                attempt: inv.attempt,
                contract: &inv.contract,
                action: "invoke",
                idempotency_key: inv.idempotency_key.as_deref(),
                input: &inv.input,
                timeout_ms: inv.timeout_ms,
                trace_id: &inv.trace_id,
                version: &inv.version,
            })
            .unwrap_or_else(|_| self.to_value().json_text()),
            other => other.to_value().json_text(),
        }
    }

    /// The action as the faces pass it on: `{"do":"transact","op":…,"keys":[…]}`,
    /// `{"do":"invoke",…}`, `{"do":"sleep","ms":…}`, `{"do":"done","output":…}`,
    /// `{"do":"fail","error":{code,message,details}}`.
    pub fn to_value(&self) -> Value {
        match self {
            Action::Transact(op) => {
                serde_json::json!({"do": "transact", "keys": op.keys(), "op": op.to_value()})
            }
            Action::Invoke(inv) => {
                let mut v = inv.to_value();
                v["do"] = "invoke".into();
                v["input"] = inv.input.clone();
                v
            }
            Action::Sleep(ms) => serde_json::json!({"do": "sleep", "ms": ms}),
            Action::Done(out) => serde_json::json!({"do": "done", "output": out}),
            Action::Fail(e) => {
                serde_json::json!({"do": "fail", "error": {"code": e.code(), "message": e.to_string(), "details": e.details()}})
            }
        }
    }
}

/// A [`Failure`] from the JSON a host reports (`{ code?, message?, status?, retryable? }`).
pub fn failure_of(v: &Value) -> Failure {
    let o = v.as_object().cloned().unwrap_or_else(Map::new);
    Failure {
        code: o
            .get("code")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        message: o
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the handler failed")
            .to_owned(),
        status: o
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok()),
        retryable: o.get("retryable").and_then(Value::as_bool),
    }
}
