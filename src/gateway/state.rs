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
        let mut k = Vec::new();
        match self {
            Op::Admit {
                idem,
                breaker,
                buckets,
            } => {
                if let Some((key, _, _)) = idem {
                    k.push(key.clone());
                }
                if let Some(b) = breaker {
                    k.push(b.key.clone());
                }
                k.extend(buckets.iter().map(|b| b.key.clone()));
            }
            Op::Settle { breaker, idem } => {
                if let Some((key, _)) = idem {
                    k.push(key.clone());
                }
                if let Some((b, _)) = breaker {
                    k.push(b.key.clone());
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

fn parse(v: Option<&str>) -> Option<Map<String, Value>> {
    match serde_json::from_str(v?) {
        Ok(Value::Object(o)) => Some(o),
        _ => None,
    }
}

fn num(o: &Map<String, Value>, k: &str) -> f64 {
    o.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

/// Runs `op` over the values the port read for [`Op::keys`] (same order; `None` when
/// absent; a value this module cannot read counts as absent) at `now` (epoch ms).
pub fn apply(op: &Op, values: &[Option<String>], now: f64) -> (Vec<Write>, Applied) {
    let value = |k: &str, keys: &[String]| {
        keys.iter()
            .position(|x| x == k)
            .and_then(|i| values.get(i)?.as_deref())
    };
    let keys = op.keys();
    let mut writes = Vec::new();
    match op {
        Op::Admit {
            idem,
            breaker,
            buckets,
        } => {
            if let Some((k, pending_ms, trace)) = idem {
                if let Some(r) = parse(value(k, &keys)) {
                    let at = num(&r, "at");
                    match r.get("s").and_then(Value::as_str) {
                        Some("done") if now < num(&r, "exp") => {
                            return (
                                writes,
                                Applied::Cached(r.get("out").cloned().unwrap_or(Value::Null)),
                            );
                        }
                        Some("pending") if now < at + pending_ms => {
                            return (
                                writes,
                                Applied::InFlight {
                                    retry_after_ms: (at + pending_ms - now).max(1.0),
                                },
                            );
                        }
                        _ => {}
                    }
                }
                writes.push((
                    k.clone(),
                    Some(json!({"s": "pending", "at": now, "trace": trace}).to_string()),
                ));
            }
            let mut seen = "none";
            if let Some(b) = breaker {
                let mut st = parse(value(&b.key, &keys)).unwrap_or_default();
                let at = num(&st, "at");
                match st.get("s").and_then(Value::as_str) {
                    Some("open") if now < at + b.open_ms => {
                        return (
                            Vec::new(),
                            Applied::CircuitOpen {
                                retry_after_ms: (at + b.open_ms - now).max(1.0),
                            },
                        );
                    }
                    Some("open") => {
                        // Open long enough: this call is the probe.
                        st.insert("s".into(), "half-open".into());
                        st.insert("at".into(), now.into());
                        writes.push((b.key.clone(), Some(Value::Object(st).to_string())));
                        seen = "half-open";
                    }
                    Some("half-open") if now < at + b.probe_ms => {
                        return (
                            Vec::new(),
                            Applied::CircuitOpen {
                                retry_after_ms: (at + b.probe_ms - now).max(1.0),
                            },
                        );
                    }
                    Some("half-open") => {
                        // The last probe never reported: this call probes again.
                        st.insert("at".into(), now.into());
                        writes.push((b.key.clone(), Some(Value::Object(st).to_string())));
                        seen = "half-open";
                    }
                    _ => seen = "closed",
                }
            }
            let mut next = Vec::new();
            for b in buckets {
                let st = parse(value(&b.key, &keys));
                let rate = b.capacity / b.window_ms;
                let (tokens, at) = st
                    .as_ref()
                    .map_or((b.capacity, now), |s| (num(s, "t"), num(s, "at")));
                let tokens = (tokens + (now - at).max(0.0) * rate).min(b.capacity);
                if tokens < 1.0 {
                    return (
                        Vec::new(),
                        Applied::RateLimited {
                            scope: b.scope,
                            retry_after_ms: ((1.0 - tokens) / rate).ceil().max(1.0),
                        },
                    );
                }
                next.push((
                    b.key.clone(),
                    Some(json!({"t": tokens - 1.0, "at": now}).to_string()),
                ));
            }
            writes.extend(next);
            (
                writes,
                Applied::Admitted {
                    breaker: if seen == "none" { "closed" } else { seen },
                },
            )
        }
        Op::Settle { breaker, idem } => {
            if let Some((k, end)) = idem {
                match end {
                    IdemEnd::Done { out, ttl_ms } => writes.push((
                        k.clone(),
                        Some(
                            json!({"s": "done", "at": now, "exp": now + ttl_ms, "out": out})
                                .to_string(),
                        ),
                    )),
                    IdemEnd::Keep => {}
                    IdemEnd::Release => writes.push((k.clone(), None)),
                }
            }
            let mut after = "none";
            if let Some((b, ok)) = breaker {
                let mut st = parse(value(&b.key, &keys)).unwrap_or_default();
                let state = st
                    .get("s")
                    .and_then(Value::as_str)
                    .unwrap_or("closed")
                    .to_owned();
                let slot_ms = (b.window_ms / 10.0).max(1.0);
                let slot = (now / slot_ms).floor() * slot_ms;
                let mut w: Vec<[f64; 3]> = st
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
                            .filter(|s| s[0] > now - b.window_ms)
                            .collect()
                    })
                    .unwrap_or_default();
                match w.iter_mut().find(|s| s[0] == slot) {
                    Some(s) => {
                        s[1] += 1.0;
                        s[2] += if *ok { 0.0 } else { 1.0 };
                    }
                    None => w.push([slot, 1.0, if *ok { 0.0 } else { 1.0 }]),
                }
                let (calls, fails) = w.iter().fold((0.0, 0.0), |(c, f), s| (c + s[1], f + s[2]));
                after = match state.as_str() {
                    "half-open" if *ok => {
                        w.clear();
                        "closed"
                    }
                    "half-open" | "open" if !*ok => "open",
                    "open" => "open",
                    _ if !*ok
                        && calls >= f64::from(b.min_calls)
                        && fails / calls >= b.threshold =>
                    {
                        "open"
                    }
                    _ => "closed",
                };
                if after == "open" && state != "open" {
                    st.insert("at".into(), now.into());
                }
                st.insert("s".into(), after.into());
                st.insert("w".into(), json!(w));
                writes.push((b.key.clone(), Some(Value::Object(st).to_string())));
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

/// The state of one isolate, tab or process, held by the core (the memory port): a
/// transaction is one call, with nothing crossing to the host. Entries that no longer
/// matter (answered idempotency records past their window, buckets untouched for an hour —
/// full again —, closed breakers idle for a day) are swept every 1,024 transactions.
#[derive(Debug, Clone, Default)]
pub struct MemoryState {
    map: std::collections::BTreeMap<String, String>,
    ops: u32,
}

impl MemoryState {
    /// Runs `op` at `now`.
    pub fn transact(&mut self, op: &Op, now: f64) -> Applied {
        let values: Vec<Option<String>> =
            op.keys().iter().map(|k| self.map.get(k).cloned()).collect();
        let (writes, applied) = apply(op, &values, now);
        for (k, v) in writes {
            match v {
                Some(v) => {
                    self.map.insert(k, v);
                }
                None => {
                    self.map.remove(&k);
                }
            }
        }
        self.ops = self.ops.wrapping_add(1);
        if self.ops.is_multiple_of(1024) {
            self.sweep(now);
        }
        applied
    }

    /// Drops the entries that no longer change any decision.
    pub fn sweep(&mut self, now: f64) {
        self.map.retain(|k, v| {
            let Some(o) = parse(Some(v)) else {
                return false;
            };
            if k.starts_with("idem:") {
                o.get("s").and_then(Value::as_str) != Some("done") || now < num(&o, "exp")
            } else if k.starts_with("rl:") {
                now - num(&o, "at") < 3_600_000.0
            } else {
                let last = o
                    .get("w")
                    .and_then(Value::as_array)
                    .and_then(|w| w.iter().filter_map(|s| s.get(0)?.as_f64()).reduce(f64::max))
                    .unwrap_or(num(&o, "at"));
                o.get("s").and_then(Value::as_str) != Some("closed") || now - last < 86_400_000.0
            }
        });
    }

    /// A value, for inspection (the demo's breaker panel, tests).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
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
