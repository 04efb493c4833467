//! The gateway's shared state — token buckets, circuit breakers, idempotency records — as
//! pure transitions. A call asks for one [`Op`] over a few keys; the host's state port
//! reads those keys, runs [`apply`] (in the same transaction, object or lock), writes what
//! it returns, and hands the result back to the call. The same function runs in a tab's
//! memory, in an IndexedDB transaction, inside a Durable Object and over `wasi:keyvalue`,
//! so limits and breakers mean the same everywhere.
//!
//! Values are small JSON texts: a bucket `{"t":tokens,"at":ms}`, a breaker
//! `{"s":"closed"|"open"|"half-open","at":ms,"w":[[slot_start,calls,failures],…]}`, an
//! idempotency record `{"s":"pending","at":ms,"trace":id}` or `{"s":"done","at":ms,"out":…}`.

use crate::json_text::JsonText;
use serde_json::{json, Map, Value};

/// A token bucket one call takes a token from.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketOp {
    /// The bucket's key.
    pub key: String,
    /// Tokens when full.
    pub capacity: f64,
    /// Milliseconds to refill `capacity` tokens.
    pub window_ms: f64,
    /// `user`, `tenant` or `global` (for the error).
    pub scope: &'static str,
}

/// A breaker a call checks (admission) or reports to (settlement).
#[derive(Debug, Clone, PartialEq)]
pub struct BreakerOp {
    /// The breaker's key (one per contract version).
    pub key: String,
    /// The failure rate that opens it.
    pub threshold: f64,
    /// The sliding window.
    pub window_ms: f64,
    /// Calls needed in the window before the rate counts.
    pub min_calls: u32,
    /// How long it stays open.
    pub open_ms: f64,
    /// How long a half-open probe may run before another is let through.
    pub probe_ms: f64,
}

/// What one transaction does.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Before the handler: answer a duplicate from its record, refuse an open breaker, take
    /// a token from every bucket (none when any is empty), mark the key pending.
    Admit {
        /// The idempotency record's key, how long a pending one holds, and the call's trace.
        idem: Option<(String, f64, String)>,
        /// The breaker.
        breaker: Option<BreakerOp>,
        /// The buckets.
        buckets: Vec<BucketOp>,
    },
    /// After an attempt: count it in the breaker; store the output under the key (`done`),
    /// keep the key pending (a retry follows) or release it (the call failed).
    Settle {
        /// The breaker and whether the attempt succeeded.
        breaker: Option<(BreakerOp, bool)>,
        /// The idempotency key and what becomes of it.
        idem: Option<(String, IdemEnd)>,
    },
}

/// What a settled call leaves under its idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum IdemEnd {
    /// The output answers duplicates for `ttl_ms`.
    Done {
        /// The output.
        out: Value,
        /// How long it answers.
        ttl_ms: f64,
    },
    /// A retry follows: stays pending.
    Keep,
    /// The call failed: the next duplicate runs.
    Release,
}

impl Op {
    /// The keys the port reads and may write, in order.
    pub fn keys(&self) -> Vec<String> {
        self.key_refs().into_iter().map(str::to_owned).collect()
    }

    /// [`Self::keys`], borrowed.
    pub fn key_refs(&self) -> Vec<&str> {
        let mut k = Vec::with_capacity(4);
        match self {
            Op::Admit {
                idem,
                breaker,
                buckets,
            } => {
                if let Some((key, _, _)) = idem {
                    k.push(key.as_str());
                }
                if let Some(b) = breaker {
                    k.push(b.key.as_str());
                }
                k.extend(buckets.iter().map(|b| b.key.as_str()));
            }
            Op::Settle { breaker, idem } => {
                if let Some((key, _)) = idem {
                    k.push(key.as_str());
                }
                if let Some((b, _)) = breaker {
                    k.push(b.key.as_str());
                }
            }
        }
        k
    }

    /// The op as JSON (what crosses to a Durable Object or a worker).
    pub fn to_value(&self) -> Value {
        let breaker = |b: &BreakerOp| {
            json!({"key": b.key, "threshold": b.threshold, "window_ms": b.window_ms,
                   "min_calls": b.min_calls, "open_ms": b.open_ms, "probe_ms": b.probe_ms})
        };
        match self {
            Op::Admit {
                idem,
                breaker: br,
                buckets,
            } => json!({
                "op": "admit",
                "idem": idem.as_ref().map(|(k, ttl, t)| json!({"key": k, "pending_ms": ttl, "trace": t})),
                "breaker": br.as_ref().map(breaker),
                "buckets": buckets.iter().map(|b| json!({"key": b.key, "capacity": b.capacity, "window_ms": b.window_ms, "scope": b.scope})).collect::<Vec<_>>(),
            }),
            Op::Settle { breaker: br, idem } => json!({
                "op": "settle",
                "breaker": br.as_ref().map(|(b, ok)| { let mut v = breaker(b); v["ok"] = (*ok).into(); v }),
                "idem": idem.as_ref().map(|(k, end)| match end {
                    IdemEnd::Done { out, ttl_ms } => json!({"key": k, "end": "done", "out": out, "ttl_ms": ttl_ms}),
                    IdemEnd::Keep => json!({"key": k, "end": "keep"}),
                    IdemEnd::Release => json!({"key": k, "end": "release"}),
                }),
            }),
        }
    }

    /// The op from its JSON (`None` when it is not one).
    pub fn from_value(v: &Value) -> Option<Op> {
        let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let breaker = |b: &Value| -> Option<BreakerOp> {
            Some(BreakerOp {
                key: s(b, "key")?,
                threshold: f(b, "threshold")?,
                window_ms: f(b, "window_ms")?,
                min_calls: f(b, "min_calls")? as u32,
                open_ms: f(b, "open_ms")?,
                probe_ms: f(b, "probe_ms")?,
            })
        };
        let opt = |k: &str| v.get(k).filter(|x| !x.is_null());
        match v.get("op")?.as_str()? {
            "admit" => Some(Op::Admit {
                idem: match opt("idem") {
                    Some(i) => Some((s(i, "key")?, f(i, "pending_ms")?, s(i, "trace")?)),
                    None => None,
                },
                breaker: match opt("breaker") {
                    Some(b) => Some(breaker(b)?),
                    None => None,
                },
                buckets: v
                    .get("buckets")?
                    .as_array()?
                    .iter()
                    .map(|b| {
                        Some(BucketOp {
                            key: s(b, "key")?,
                            capacity: f(b, "capacity")?,
                            window_ms: f(b, "window_ms")?,
                            scope: match b.get("scope")?.as_str()? {
                                "user" => "user",
                                "tenant" => "tenant",
                                _ => "global",
                            },
                        })
                    })
                    .collect::<Option<Vec<_>>>()?,
            }),
            "settle" => Some(Op::Settle {
                breaker: match opt("breaker") {
                    Some(b) => Some((breaker(b)?, b.get("ok")?.as_bool()?)),
                    None => None,
                },
                idem: match opt("idem") {
                    Some(i) => Some((
                        s(i, "key")?,
                        match i.get("end")?.as_str()? {
                            "done" => IdemEnd::Done {
                                out: i.get("out").cloned().unwrap_or(Value::Null),
                                ttl_ms: f(i, "ttl_ms")?,
                            },
                            "keep" => IdemEnd::Keep,
                            _ => IdemEnd::Release,
                        },
                    )),
                    None => None,
                },
            }),
            _ => None,
        }
    }
}

/// What a transaction decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// Admitted; the breaker state seen (`closed`, `half-open`).
    Admitted {
        /// The breaker's state when admitted.
        breaker: &'static str,
    },
    /// A duplicate inside the window: the first call's output.
    Cached(Value),
    /// A duplicate whose first call is still running.
    InFlight {
        /// When to ask again.
        retry_after_ms: f64,
    },
    /// The breaker is open.
    CircuitOpen {
        /// When a probe is let through.
        retry_after_ms: f64,
    },
    /// A bucket is empty.
    RateLimited {
        /// Its scope.
        scope: &'static str,
        /// When it has a token again.
        retry_after_ms: f64,
    },
    /// Settled; the breaker state after it.
    Settled {
        /// `closed`, `open` or `half-open` (or `none`).
        breaker: &'static str,
    },
}

impl Applied {
    /// As JSON: `{ "kind": …, … }`.
    pub fn to_value(&self) -> Value {
        match self {
            Applied::Admitted { breaker } => json!({"kind": "admitted", "breaker": breaker}),
            Applied::Cached(v) => json!({"kind": "cached", "out": v}),
            Applied::InFlight { retry_after_ms } => {
                json!({"kind": "in-flight", "retry_after_ms": retry_after_ms})
            }
            Applied::CircuitOpen { retry_after_ms } => {
                json!({"kind": "circuit-open", "retry_after_ms": retry_after_ms})
            }
            Applied::RateLimited {
                scope,
                retry_after_ms,
            } => json!({"kind": "rate-limited", "scope": scope, "retry_after_ms": retry_after_ms}),
            Applied::Settled { breaker } => json!({"kind": "settled", "breaker": breaker}),
        }
    }

    /// From its JSON.
    pub fn from_value(v: &Value) -> Option<Applied> {
        let ms = || {
            v.get("retry_after_ms")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
        };
        let br = |k: &str| match v.get(k).and_then(Value::as_str) {
            Some("open") => "open",
            Some("half-open") => "half-open",
            Some("none") => "none",
            _ => "closed",
        };
        Some(match v.get("kind")?.as_str()? {
            "admitted" => Applied::Admitted {
                breaker: br("breaker"),
            },
            "cached" => Applied::Cached(v.get("out").cloned().unwrap_or(Value::Null)),
            "in-flight" => Applied::InFlight {
                retry_after_ms: ms(),
            },
            "circuit-open" => Applied::CircuitOpen {
                retry_after_ms: ms(),
            },
            "rate-limited" => Applied::RateLimited {
                scope: match v.get("scope").and_then(Value::as_str) {
                    Some("user") => "user",
                    Some("tenant") => "tenant",
                    _ => "global",
                },
                retry_after_ms: ms(),
            },
            "settled" => Applied::Settled {
                breaker: br("breaker"),
            },
            _ => return None,
        })
    }
}

/// A write: the key's new value, or `None` to delete it.
pub type Write = (String, Option<String>);

/// A breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are refused.
    Open,
    /// One probe call goes through.
    HalfOpen,
}

impl BreakerState {
    /// `closed`, `open`, `half-open`.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half-open",
        }
    }
}

/// One stored value, typed (its JSON text is what ports other than memory keep).
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A token bucket: tokens left at `at`.
    Bucket {
        /// Tokens.
        tokens: f64,
        /// When counted.
        at: f64,
        /// When it is full again (then it is the same as no entry).
        full: f64,
    },
    /// A breaker and its sliding window (`[slot start, calls, failures]`).
    Breaker {
        /// Its state.
        state: BreakerState,
        /// When it opened or the probe started.
        at: f64,
        /// The window's slots.
        window: Vec<[f64; 3]>,
    },
    /// A call with this idempotency key is running.
    Pending {
        /// Since when.
        at: f64,
        /// Its trace.
        trace: String,
    },
    /// A call with this key answered `out`, valid until `exp`.
    Done {
        /// When.
        at: f64,
        /// Until when it answers duplicates.
        exp: f64,
        /// The output.
        out: Value,
    },
}

impl Entry {
    /// Reads a stored text (`None` for one this module did not write: treated as absent).
    pub fn parse(text: &str) -> Option<Entry> {
        let Ok(Value::Object(mut o)) = serde_json::from_str::<Value>(text) else {
            return None;
        };
        let n = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        if o.contains_key("t") {
            return Some(Entry::Bucket {
                tokens: n(&o, "t"),
                at: n(&o, "at"),
                full: o
                    .get("f")
                    .and_then(Value::as_f64)
                    .unwrap_or(n(&o, "at") + 3_600_000.0),
            });
        }
        let at = n(&o, "at");
        Some(match o.get("s").and_then(Value::as_str)? {
            "pending" => Entry::Pending {
                at,
                trace: o
                    .get("trace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            },
            "done" => Entry::Done {
                at,
                exp: n(&o, "exp"),
                out: o.remove("out").unwrap_or(Value::Null),
            },
            s => Entry::Breaker {
                state: match s {
                    "open" => BreakerState::Open,
                    "half-open" => BreakerState::HalfOpen,
                    _ => BreakerState::Closed,
                },
                at,
                window: o
                    .get("w")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| {
                                let x = x.as_array()?;
                                Some([
                                    x.first()?.as_f64()?,
                                    x.get(1)?.as_f64()?,
                                    x.get(2)?.as_f64()?,
                                ])
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        })
    }

    /// The stored text.
    pub fn to_text(&self) -> String {
        match self {
            Entry::Bucket { tokens, at, full } => json!({ "t": tokens, "at": at, "f": full }),
            Entry::Breaker { state, at, window } => {
                json!({ "s": state.as_str(), "at": at, "w": window })
            }
            Entry::Pending { at, trace } => json!({ "s": "pending", "at": at, "trace": trace }),
            Entry::Done { at, exp, out } => {
                json!({ "s": "done", "at": at, "exp": exp, "out": out })
            }
        }
        .json_text()
    }

    /// Whether it no longer changes any decision at `now` (answered records past their
    /// window, buckets full again, closed breakers idle a day).
    pub fn is_stale(&self, now: f64) -> bool {
        match self {
            Entry::Done { exp, .. } => now >= *exp,
            Entry::Pending { .. } => false,
            Entry::Bucket { full, .. } => now >= *full,
            Entry::Breaker { state, at, window } => {
                let last = window.iter().map(|s| s[0]).fold(*at, f64::max);
                *state == BreakerState::Closed && now - last >= 86_400_000.0
            }
        }
    }
}

/// Runs `op` over the values the port read for [`Op::keys`] (same order; `None` when
/// absent; a value this module cannot read counts as absent) at `now` (epoch ms).
pub fn apply(op: &Op, values: &[Option<String>], now: f64) -> (Vec<Write>, Applied) {
    let entries: Vec<Option<Entry>> = values
        .iter()
        .map(|v| v.as_deref().and_then(Entry::parse))
        .collect();
    let refs: Vec<Option<&Entry>> = entries.iter().map(Option::as_ref).collect();
    let (writes, applied) = apply_entries(op, &refs, now);
    (
        writes
            .into_iter()
            .map(|(k, e)| (k, e.map(|e| e.to_text())))
            .collect(),
        applied,
    )
}

/// [`apply`] over typed entries (the memory port runs it without any JSON).
pub fn apply_entries(
    op: &Op,
    values: &[Option<&Entry>],
    now: f64,
) -> (Vec<(String, Option<Entry>)>, Applied) {
    // Values come in key order: idempotency record, breaker, then buckets (see `Op::keys`).
    let mut at = 0;
    let mut next = || {
        let v = values.get(at).copied().flatten();
        at += 1;
        v
    };
    let mut writes = Vec::new();
    match op {
        Op::Admit {
            idem,
            breaker,
            buckets,
        } => {
            if let Some((k, pending_ms, trace)) = idem {
                match next() {
                    Some(Entry::Done { exp, out, .. }) if now < *exp => {
                        return (writes, Applied::Cached(out.clone()))
                    }
                    Some(Entry::Pending { at, .. }) if now < at + pending_ms => {
                        return (
                            writes,
                            Applied::InFlight {
                                retry_after_ms: (at + pending_ms - now).max(1.0),
                            },
                        )
                    }
                    _ => {}
                }
                writes.push((
                    k.clone(),
                    Some(Entry::Pending {
                        at: now,
                        trace: trace.clone(),
                    }),
                ));
            }
            let mut seen = BreakerState::Closed;
            if let Some(b) = breaker {
                match next() {
                    Some(Entry::Breaker {
                        state: BreakerState::Open,
                        at,
                        ..
                    }) if now < at + b.open_ms => {
                        return (
                            Vec::new(),
                            Applied::CircuitOpen {
                                retry_after_ms: (at + b.open_ms - now).max(1.0),
                            },
                        );
                    }
                    Some(Entry::Breaker {
                        state: BreakerState::HalfOpen,
                        at,
                        ..
                    }) if now < at + b.probe_ms => {
                        return (
                            Vec::new(),
                            Applied::CircuitOpen {
                                retry_after_ms: (at + b.probe_ms - now).max(1.0),
                            },
                        );
                    }
                    // Open long enough, or a probe that never reported: this call probes.
                    Some(Entry::Breaker {
                        state: BreakerState::Open | BreakerState::HalfOpen,
                        window,
                        ..
                    }) => {
                        writes.push((
                            b.key.clone(),
                            Some(Entry::Breaker {
                                state: BreakerState::HalfOpen,
                                at: now,
                                window: window.clone(),
                            }),
                        ));
                        seen = BreakerState::HalfOpen;
                    }
                    _ => {}
                }
            }
            let mut taken = Vec::with_capacity(buckets.len());
            for b in buckets {
                let rate = b.capacity / b.window_ms;
                let (tokens, t) = match next() {
                    Some(Entry::Bucket { tokens, at, .. }) => (*tokens, *at),
                    _ => (b.capacity, now),
                };
                let tokens = (tokens + (now - t).max(0.0) * rate).min(b.capacity);
                if tokens.is_nan() || tokens < 1.0 {
                    let missing = if tokens.is_nan() { 1.0 } else { 1.0 - tokens };
                    return (
                        Vec::new(),
                        Applied::RateLimited {
                            scope: b.scope,
                            retry_after_ms: (missing / rate).ceil().max(1.0),
                        },
                    );
                }
                taken.push((
                    b.key.clone(),
                    Some(Entry::Bucket {
                        tokens: tokens - 1.0,
                        at: now,
                        full: now + (b.capacity - (tokens - 1.0)) / rate,
                    }),
                ));
            }
            writes.extend(taken);
            (
                writes,
                Applied::Admitted {
                    breaker: seen.as_str(),
                },
            )
        }
        Op::Settle { breaker, idem } => {
            if let Some((k, end)) = idem {
                next();
                match end {
                    IdemEnd::Done { out, ttl_ms } => writes.push((
                        k.clone(),
                        Some(Entry::Done {
                            at: now,
                            exp: now + ttl_ms,
                            out: out.clone(),
                        }),
                    )),
                    IdemEnd::Keep => {}
                    IdemEnd::Release => writes.push((k.clone(), None)),
                }
            }
            let mut after = "none";
            if let Some((b, ok)) = breaker {
                let (state, opened, mut w) = match next() {
                    Some(Entry::Breaker { state, at, window }) => (*state, *at, window.clone()),
                    _ => (BreakerState::Closed, 0.0, Vec::new()),
                };
                let slot_ms = (b.window_ms / 10.0).max(1.0);
                let slot = (now / slot_ms).floor() * slot_ms;
                w.retain(|s| s[0] > now - b.window_ms);
                let fail = if *ok { 0.0 } else { 1.0 };
                match w.iter_mut().find(|s| s[0] == slot) {
                    Some(s) => {
                        s[1] += 1.0;
                        s[2] += fail;
                    }
                    None => w.push([slot, 1.0, fail]),
                }
                let (calls, fails) = w.iter().fold((0.0, 0.0), |(c, f), s| (c + s[1], f + s[2]));
                let next_state = match state {
                    BreakerState::HalfOpen if *ok => {
                        w.clear();
                        BreakerState::Closed
                    }
                    BreakerState::HalfOpen | BreakerState::Open => BreakerState::Open,
                    BreakerState::Closed
                        if !*ok
                            && calls >= f64::from(b.min_calls)
                            && fails / calls >= b.threshold =>
                    {
                        BreakerState::Open
                    }
                    BreakerState::Closed => BreakerState::Closed,
                };
                let at = if next_state == BreakerState::Open && state != BreakerState::Open {
                    now
                } else {
                    opened
                };
                after = next_state.as_str();
                writes.push((
                    b.key.clone(),
                    Some(Entry::Breaker {
                        state: next_state,
                        at,
                        window: w,
                    }),
                ));
            }
            (writes, Applied::Settled { breaker: after })
        }
    }
}

/// [`apply`] on the wire form the faces pass: the op as JSON, the values a port read →
/// `{ writes: [[key, value | null]], result }`.
pub fn apply_value(op: &Value, values: &[Option<String>], now: f64) -> crate::Result<Value> {
    let op = Op::from_value(op).ok_or_else(|| {
        crate::Error::new(
            crate::ErrorKind::InvalidRequest,
            "not a gateway state op (`{ op: admit | settle, … }`)",
        )
    })?;
    let (writes, applied) = apply(&op, values, now);
    let writes: Vec<Value> = writes.into_iter().map(|(k, v)| json!([k, v])).collect();
    Ok(json!({ "writes": writes, "result": applied.to_value() }))
}

/// The state of one isolate, tab or process, held by the core (the memory port) as typed
/// entries: a transaction is one call, with no JSON and nothing crossing to the host.
/// Entries that no longer matter ([`Entry::is_stale`]) are swept a few at a time: each
/// transaction looks at the next keys of a ring of every key written (one more than it
/// added), so no call pays for a whole sweep and the map holds about what is still live.
#[derive(Debug, Clone, Default)]
pub struct MemoryState {
    /// Hashed without a seed (no `wasi:random` seed is asked for: a WASI host need not
    /// give one), at the cost of keys an attacker could aim at one bucket; the fixed-key
    /// SipHash used before had the same weakness and cost more per key.
    map: crate::fx::FxMap<String, Entry>,
    ring: std::collections::VecDeque<String>,
}

impl MemoryState {
    /// Runs `op` at `now`.
    pub fn transact(&mut self, op: &Op, now: f64) -> Applied {
        self.commit(op, None, now)
    }

    /// [`Self::transact`], taking the op: an output stored under an idempotency key moves
    /// into the state instead of being copied.
    pub fn run(&mut self, mut op: Op, now: f64) -> Applied {
        let out = match &mut op {
            Op::Settle {
                idem: Some((_, IdemEnd::Done { out, .. })),
                ..
            } => Some(std::mem::take(out)),
            _ => None,
        };
        self.commit(&op, out, now)
    }

    /// Runs `op`; `out`, when given, is the output its `done` record holds.
    fn commit(&mut self, op: &Op, mut out: Option<Value>, now: f64) -> Applied {
        let (writes, applied) = {
            let values: Vec<Option<&Entry>> =
                op.key_refs().into_iter().map(|k| self.map.get(k)).collect();
            apply_entries(op, &values, now)
        };
        // The sweep looks at one key more than the transaction added, so the ring turns
        // faster than entries are made.
        let mut look = 1;
        for (k, mut v) in writes {
            if let Some(Entry::Done { out: held, .. }) = &mut v {
                if let Some(o) = out.take() {
                    *held = o;
                }
            }
            match v {
                Some(v) => match self.map.entry(k) {
                    std::collections::hash_map::Entry::Occupied(mut held) => *held.get_mut() = v,
                    std::collections::hash_map::Entry::Vacant(new) => {
                        self.ring.push_back(new.key().clone());
                        new.insert(v);
                        look += 1;
                    }
                },
                None => {
                    self.map.remove(&k);
                }
            }
        }
        self.sweep_some(now, look);
        applied
    }

    /// Looks at the next `n` keys of the ring: gone or stale ones leave it (and the map),
    /// the others go to its back.
    fn sweep_some(&mut self, now: f64, n: usize) {
        for _ in 0..n.min(self.ring.len()) {
            let Some(k) = self.ring.pop_front() else {
                break;
            };
            match self.map.get(&k) {
                Some(e) if e.is_stale(now) => {
                    self.map.remove(&k);
                }
                Some(_) => self.ring.push_back(k),
                None => {}
            }
        }
    }

    /// Drops every entry that no longer changes a decision.
    pub fn sweep(&mut self, now: f64) {
        self.map.retain(|_, v| !v.is_stale(now));
        let map = &self.map;
        self.ring.retain(|k| map.contains_key(k));
    }

    /// A value as its stored text, for inspection (the demo's breaker panel, tests).
    pub fn get(&self, key: &str) -> Option<String> {
        self.map.get(key).map(Entry::to_text)
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
