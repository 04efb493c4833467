//! `promptloom:core/gateway`: conversions only; the logic is [`crate::registry`] and
//! [`crate::gateway`]. A call's actions are run here against the imported `handlers`
//! interface (handler, clock, waits) and the state port (this instance's memory or a
//! `wasi:keyvalue` bucket).

use super::exports::promptloom::core::gateway::{
    ContractRegistryBorrow, Guest, GuestContractRegistry, GuestGateway,
};
use super::promptloom::core::handlers;
use super::promptloom::core::types::Error as WitError;
use super::wasi::keyvalue::store::{self as kv, Bucket};
use super::{to_wit, Component};
use crate::error::{Error, ErrorKind};
use crate::gateway::state::{self, Applied, MemoryState, Op};
use crate::gateway::{self, Action, Call, CallContext, Event};
use crate::json_text::JsonText;
use crate::registry::planner::{vectors_of, PlannerOptions};
use crate::registry::Registry;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

fn parse(text: &str, what: &str, kind: ErrorKind) -> Result<Value, WitError> {
    crate::wire::json_value(text, what, kind).map_err(to_wit)
}

/// The registry resource: shared with the gateways made from it, so they see its edits.
pub struct RegistryResource {
    inner: Rc<RefCell<Arc<Registry>>>,
}

impl RegistryResource {
    fn edit<T>(&self, f: impl FnOnce(&mut Registry) -> crate::Result<T>) -> Result<T, WitError> {
        let mut r = self.inner.borrow_mut();
        f(Arc::make_mut(&mut r)).map_err(to_wit)
    }
}

impl GuestContractRegistry for RegistryResource {
    fn new() -> Self {
        RegistryResource {
            inner: Rc::new(RefCell::new(Arc::new(Registry::default()))),
        }
    }

    fn register(&self, contract: String) -> Result<String, WitError> {
        self.edit(|r| r.register_text(&contract))
            .map(|c| c.to_value().json_text())
    }

    fn unregister(&self, name: String, version: Option<String>) -> Result<bool, WitError> {
        self.edit(|r| r.unregister(&name, version.as_deref()))
    }

    fn contracts(&self) -> String {
        self.inner.borrow().to_value().json_text()
    }

    fn get(&self, name: String, version: String) -> Result<String, WitError> {
        let c = self.inner.borrow().get(&name, &version).map_err(to_wit)?;
        Ok(c.to_value().json_text())
    }

    fn resolve(
        &self,
        name: String,
        surface: String,
        user: String,
        version: Option<String>,
        now_ms: f64,
    ) -> Result<String, WitError> {
        let c = self
            .inner
            .borrow()
            .resolve(&name, &surface, &user, version.as_deref(), now_ms)
            .map_err(to_wit)?;
        Ok(c.to_value().json_text())
    }

    fn set_canary(
        &self,
        name: String,
        version: String,
        surface: String,
        percent: f64,
    ) -> Result<(), WitError> {
        self.edit(|r| r.set_canary(&name, &version, &surface, percent))
    }

    fn set_sunset(
        &self,
        name: String,
        version: String,
        at: Option<String>,
    ) -> Result<(), WitError> {
        self.edit(|r| r.set_sunset(&name, &version, at.as_deref()))
    }

    fn pin(&self, surface: String, name: String, range: Option<String>) -> Result<(), WitError> {
        self.edit(|r| r.pin(&surface, &name, range.as_deref()))
    }

    fn planner_section(&self, query: String, options: String) -> Result<String, WitError> {
        let o = PlannerOptions::from_value(&parse(
            &options,
            "the planner options",
            ErrorKind::InvalidOptions,
        )?)
        .map_err(to_wit)?;
        let s = self
            .inner
            .borrow()
            .planner_section(&query, &o)
            .map_err(to_wit)?;
        Ok(s.to_value().json_text())
    }

    fn set_vectors(&self, vectors: String) -> Result<bool, WitError> {
        let v = vectors_of(&parse(&vectors, "the vectors", ErrorKind::InvalidOptions)?)
            .map_err(to_wit)?;
        self.edit(|r| Ok(r.set_vectors(&v)))
    }

    fn overlap_audit(&self, vectors: Option<String>, threshold: f64) -> Result<String, WitError> {
        let v = match vectors {
            None => None,
            Some(t) => Some(
                vectors_of(&parse(&t, "the vectors", ErrorKind::InvalidOptions)?)
                    .map_err(to_wit)?,
            ),
        };
        Ok(self
            .inner
            .borrow()
            .overlap_audit(v.as_ref(), threshold)
            .json_text())
    }

    fn review(&self, records: String, min_calls_per_day: f64) -> Result<String, WitError> {
        let r = match parse(&records, "the records", ErrorKind::InvalidOptions)? {
            Value::Array(a) => a,
            _ => {
                return Err(to_wit(Error::new(
                    ErrorKind::InvalidOptions,
                    "the records are a list",
                )))
            }
        };
        Ok(self
            .inner
            .borrow()
            .review(&r, min_calls_per_day)
            .json_text())
    }
}

/// Where a gateway keeps its state.
enum Port {
    Memory(MemoryState),
    Bucket(Bucket),
    /// The bucket could not be opened: every call reports it.
    Failed(String),
}

fn kv_failed(what: &str, e: kv::Error) -> Error {
    super::keyvalue::failed(&format!("the gateway's {what}"), e)
}

impl Port {
    fn transact(&mut self, op: Op, now: f64) -> crate::Result<Applied> {
        match self {
            Port::Memory(m) => Ok(m.run(op, now)),
            Port::Failed(why) => Err(Error::new(ErrorKind::StoreFailed, why.clone())),
            Port::Bucket(b) => {
                let keys = op.keys();
                let mut values = Vec::with_capacity(keys.len());
                for k in &keys {
                    let v = b.get(k).map_err(|e| kv_failed("get", e))?;
                    values.push(v.and_then(|bytes| String::from_utf8(bytes).ok()));
                }
                let (writes, applied) = state::apply(&op, &values, now);
                for (k, v) in writes {
                    match v {
                        Some(v) => b.set(&k, v.as_bytes()).map_err(|e| kv_failed("set", e))?,
                        None => b.delete(&k).map_err(|e| kv_failed("delete", e))?,
                    }
                }
                Ok(applied)
            }
        }
    }
}

/// The gateway resource.
pub struct GatewayResource {
    registry: Rc<RefCell<Arc<Registry>>>,
    port: RefCell<Port>,
    records: RefCell<Vec<Value>>,
    calls: Cell<u64>,
    /// The trace ids' prefix, seeded by the host's clock when the gateway was made.
    seed: u64,
}

use crate::gateway::MAX_RECORDS;

impl GatewayResource {
    fn run(&self, call: &mut Call) -> Result<Value, Error> {
        let mut action = call.start(handlers::now_ms());
        loop {
            action = match action {
                Action::Transact(op) => {
                    let now = handlers::now_ms();
                    let applied = self.port.borrow_mut().transact(op, now)?;
                    call.on(Event::Applied(applied), handlers::now_ms())
                }
                Action::Invoke(inv) => {
                    let started = handlers::now_ms();
                    let ctx = inv.to_value().json_text();
                    let answer =
                        handlers::invoke(&inv.contract, &inv.version, &inv.input.json_text(), &ctx);
                    let now = handlers::now_ms();
                    let late = now - started > inv.timeout_ms;
                    match answer {
                        _ if late => call.on(Event::TimedOut, now),
                        Ok(out) => match serde_json::from_str(&out) {
                            Ok(v) => call.on(Event::Output(v), now),
                            Err(e) => call.on(
                                Event::Failed(gateway::Failure {
                                    code: None,
                                    message: format!("the handler's output is not JSON: {e}"),
                                    status: None,
                                    retryable: Some(false),
                                }),
                                now,
                            ),
                        },
                        Err(f) => {
                            let v: Value = serde_json::from_str(&f)
                                .unwrap_or_else(|_| serde_json::json!({ "message": f }));
                            if v.get("timed_out").and_then(Value::as_bool) == Some(true) {
                                call.on(Event::TimedOut, now)
                            } else {
                                call.on(Event::Failed(gateway::failure_of(&v)), now)
                            }
                        }
                    }
                }
                Action::Sleep(ms) => {
                    handlers::sleep_ms(ms);
                    call.on(Event::Woke, handlers::now_ms())
                }
                Action::Done(v) => return Ok(v),
                Action::Fail(e) => return Err(e),
            };
        }
    }
}

impl GuestGateway for GatewayResource {
    fn new(registry: ContractRegistryBorrow<'_>, bucket: Option<String>) -> Self {
        let r: &RegistryResource = registry.get();
        // A bucket that cannot be opened is reported by every call that needs state.
        let port = match bucket {
            None => Port::Memory(MemoryState::default()),
            Some(name) => match kv::open(&name) {
                Ok(b) => Port::Bucket(b),
                Err(e) => Port::Failed(kv_failed("open", e).message().to_owned()),
            },
        };
        GatewayResource {
            registry: r.inner.clone(),
            port: RefCell::new(port),
            records: RefCell::new(Vec::new()),
            calls: Cell::new(0),
            seed: handlers::now_ms().to_bits(),
        }
    }

    fn call(&self, name: String, input: String, options: String) -> Result<String, WitError> {
        let input = parse(&input, "the input", ErrorKind::InvalidInput)?;
        let o = parse(&options, "the call options", ErrorKind::InvalidOptions)?;
        let ctx = CallContext::from_value(&o).map_err(to_wit)?;
        let n = self.calls.get() + 1;
        self.calls.set(n);
        // The gateway's trace prefix is seeded by the host's clock (it has no randomness).
        let prefix = format!("{:016x}", self.seed);
        let trace = crate::gateway::trace_id(&prefix, n, &o);
        let registry = self.registry.borrow().clone();
        let mut call = Call::new(registry, &name, input, ctx, &trace);
        let out = self.run(&mut call);
        let mut recs = self.records.borrow_mut();
        recs.push(call.record().to_value());
        if recs.len() > MAX_RECORDS {
            let extra = recs.len() - MAX_RECORDS;
            recs.drain(..extra);
        }
        out.map(|v| v.json_text()).map_err(to_wit)
    }

    fn verify(&self, name: Option<String>) -> Result<String, WitError> {
        let registry = self.registry.borrow().clone();
        let targets = registry.verify_targets(name.as_deref()).map_err(to_wit)?;
        let mut results = Vec::new();
        for t in targets.as_array().cloned().unwrap_or_default() {
            let mut r = t.clone();
            if let (Some(n), Some(v), Some(input)) = (
                t["name"].as_str(),
                t["version"].as_str(),
                t.get("input").filter(|i| !i.is_null()),
            ) {
                let ctx = t["context"].json_text();
                match handlers::invoke(n, v, &input.json_text(), &ctx) {
                    Ok(out) => r["output"] = serde_json::from_str(&out).unwrap_or(Value::Null),
                    Err(f) => r["error"] = Value::String(f),
                }
            }
            results.push(r);
        }
        registry
            .verify_report(&Value::Array(results))
            .map(|v| v.json_text())
            .map_err(to_wit)
    }

    fn records(&self) -> String {
        Value::Array(self.records.borrow().clone()).json_text()
    }
}

impl Guest for Component {
    type ContractRegistry = RegistryResource;
    type Gateway = GatewayResource;

    fn check_contract(contract: String) -> String {
        crate::registry::check(&contract).json_text()
    }

    fn apply_state(
        op: String,
        values: Vec<Option<String>>,
        now_ms: f64,
    ) -> Result<String, WitError> {
        let op = parse(&op, "the state op", ErrorKind::InvalidRequest)?;
        state::apply_value(&op, &values, now_ms)
            .map(|v| v.json_text())
            .map_err(to_wit)
    }

    fn records_to_otel(records: String) -> Result<String, WitError> {
        let v = parse(&records, "the records", ErrorKind::InvalidRequest)?;
        gateway::record::otel_of(&v)
            .map(|v| v.json_text())
            .map_err(to_wit)
    }
}
