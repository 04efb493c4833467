//! The contract registry and the gateway for JS: conversions only (`crate::registry`,
//! `crate::gateway`). The glue (`pkg/src/gateway.js`) drives each call's actions: it runs
//! the handler, waits, and moves state transactions to its port (or, on the memory port,
//! lets the core run them here without leaving wasm).

use super::{js_err, parse};
use crate::error::{Error, ErrorKind};
use crate::gateway::state::{self, Applied, MemoryState};
use crate::gateway::{self, Action, Call, CallContext, Event};
use crate::json_text::JsonText;
use crate::registry::planner::{vectors_of, PlannerOptions};
use crate::registry::Registry;
use serde_json::Value;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

fn opt(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// A registry of contract versions.
#[wasm_bindgen(js_name = ContractRegistryCore)]
pub struct JsRegistry {
    inner: Arc<Registry>,
}

#[wasm_bindgen(js_class = ContractRegistryCore)]
impl JsRegistry {
    /// An empty registry.
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsRegistry {
        JsRegistry {
            inner: Arc::new(Registry::default()),
        }
    }

    /// Registers a contract (JSON or YAML text) → the registered contract (JSON).
    pub fn register(&mut self, text: &str) -> Result<String, JsValue> {
        let c = Arc::make_mut(&mut self.inner)
            .register_text(text)
            .map_err(js_err)?;
        Ok(c.to_value().json_text())
    }

    /// Removes a version ("" for every version) → whether any was there.
    pub fn unregister(&mut self, name: &str, version: &str) -> Result<bool, JsValue> {
        Arc::make_mut(&mut self.inner)
            .unregister(name, opt(version))
            .map_err(js_err)
    }

    /// Every version and the pins (JSON).
    pub fn list(&self) -> String {
        self.inner.to_value().json_text()
    }

    /// One version (JSON).
    pub fn get(&self, name: &str, version: &str) -> Result<String, JsValue> {
        Ok(self
            .inner
            .get(name, version)
            .map_err(js_err)?
            .to_value()
            .json_text())
    }

    /// The version a (surface, user) call runs at `now` (JSON contract).
    pub fn resolve(
        &self,
        name: &str,
        surface: &str,
        user: &str,
        version: &str,
        now: f64,
    ) -> Result<String, JsValue> {
        let c = self
            .inner
            .resolve(name, surface, user, opt(version), now)
            .map_err(js_err)?;
        Ok(c.to_value().json_text())
    }

    /// Sets a canary percent at run time.
    #[wasm_bindgen(js_name = setCanary)]
    pub fn set_canary(
        &mut self,
        name: &str,
        version: &str,
        surface: &str,
        percent: f64,
    ) -> Result<(), JsValue> {
        Arc::make_mut(&mut self.inner)
            .set_canary(name, version, surface, percent)
            .map_err(js_err)
    }

    /// Sets ("" clears) a version's sunset.
    #[wasm_bindgen(js_name = setSunset)]
    pub fn set_sunset(&mut self, name: &str, version: &str, at: &str) -> Result<(), JsValue> {
        Arc::make_mut(&mut self.inner)
            .set_sunset(name, version, opt(at))
            .map_err(js_err)
    }

    /// Pins ("" unpins) the range a surface calls.
    pub fn pin(&mut self, surface: &str, name: &str, range: &str) -> Result<(), JsValue> {
        Arc::make_mut(&mut self.inner)
            .pin(surface, name, opt(range))
            .map_err(js_err)
    }

    /// The versions registration checks and their synthetic inputs (JSON; `name` "" for
    /// every contract).
    #[wasm_bindgen(js_name = verifyTargets)]
    pub fn verify_targets(&self, name: &str) -> Result<String, JsValue> {
        Ok(self
            .inner
            .verify_targets(opt(name))
            .map_err(js_err)?
            .json_text())
    }

    /// What the handlers answered (JSON) → what was checked, or `InvalidContract`.
    #[wasm_bindgen(js_name = verifyReport)]
    pub fn verify_report(&self, results: &str) -> Result<String, JsValue> {
        let r = parse(results, "the check results", ErrorKind::InvalidRequest)?;
        Ok(self.inner.verify_report(&r).map_err(js_err)?.json_text())
    }

    /// The planner's section for a query (options JSON: `{ provider, k?, token_budget?,
    /// surface?, user?, tier?, flags?, exclude?, query_vector?, now? }`) → JSON.
    #[wasm_bindgen(js_name = plannerSection)]
    pub fn planner_section(&self, query: &str, options: &str) -> Result<String, JsValue> {
        let o = PlannerOptions::from_value(&parse(
            options,
            "the planner options",
            ErrorKind::InvalidOptions,
        )?)
        .map_err(js_err)?;
        Ok(self
            .inner
            .planner_section(query, &o)
            .map_err(js_err)?
            .to_value()
            .json_text())
    }

    /// Gives contracts embeddings (`{ name: [numbers] }`) for the router → whether they
    /// were taken (all of one length).
    #[wasm_bindgen(js_name = setVectors)]
    pub fn set_vectors(&mut self, vectors: &str) -> Result<bool, JsValue> {
        let v = vectors_of(&parse(vectors, "the vectors", ErrorKind::InvalidOptions)?)
            .map_err(js_err)?;
        Ok(Arc::make_mut(&mut self.inner).set_vectors(&v))
    }

    /// Pairs of too-similar contracts (`vectors` JSON or "" for the lexical measure).
    #[wasm_bindgen(js_name = overlapAudit)]
    pub fn overlap_audit(&self, vectors: &str, threshold: f64) -> Result<String, JsValue> {
        let v = match vectors {
            "" => None,
            t => Some(
                vectors_of(&parse(t, "the vectors", ErrorKind::InvalidOptions)?).map_err(js_err)?,
            ),
        };
        Ok(self.inner.overlap_audit(v.as_ref(), threshold).json_text())
    }

    /// The registry review over call records (a JSON array).
    pub fn review(&self, records: &str, min_calls_per_day: f64) -> Result<String, JsValue> {
        let r = match parse(records, "the records", ErrorKind::InvalidOptions)? {
            Value::Array(a) => a,
            _ => {
                return Err(js_err(Error::new(
                    ErrorKind::InvalidOptions,
                    "the records are a list",
                )))
            }
        };
        Ok(self.inner.review(&r, min_calls_per_day).json_text())
    }
}

impl Default for JsRegistry {
    fn default() -> Self {
        Self::new()
    }
}

/// The memory state port, held in wasm.
#[wasm_bindgen(js_name = GatewayMemory)]
#[derive(Default)]
pub struct JsMemory {
    inner: MemoryState,
}

#[wasm_bindgen(js_class = GatewayMemory)]
impl JsMemory {
    /// An empty state.
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsMemory {
        JsMemory::default()
    }

    /// A value ("" when absent).
    pub fn get(&self, key: &str) -> String {
        self.inner.get(key).unwrap_or_default()
    }

    /// How many entries are held.
    pub fn size(&self) -> usize {
        self.inner.len()
    }
}

/// Runs one state transaction over values a port read: `op` (JSON), `values` (a JSON array
/// of texts or nulls, in the op's key order) → `{ writes: [[key, value|null]], result }`.
#[wasm_bindgen(js_name = gatewayApply)]
pub fn gateway_apply(op: &str, values: &str, now: f64) -> Result<String, JsValue> {
    let op = parse(op, "the state op", ErrorKind::InvalidRequest)?;
    let values: Vec<Option<String>> =
        match parse(values, "the state values", ErrorKind::InvalidRequest)? {
            Value::Array(a) => a
                .into_iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => {
                return Err(js_err(Error::new(
                    ErrorKind::InvalidRequest,
                    "the state values are a list",
                )))
            }
        };
    state::apply_value(&op, &values, now)
        .map(|v| v.json_text())
        .map_err(js_err)
}

/// Records (a JSON array) as OTLP/JSON spans.
#[wasm_bindgen(js_name = gatewayOtel)]
pub fn gateway_otel(records: &str) -> Result<String, JsValue> {
    let v = parse(records, "the records", ErrorKind::InvalidRequest)?;
    gateway::record::otel_of(&v)
        .map(|v| v.json_text())
        .map_err(js_err)
}

/// Reads a contract document without registering it → `{ ok, problems, contract? }`.
#[wasm_bindgen(js_name = checkContract)]
pub fn check_contract(text: &str) -> String {
    crate::registry::check(text).json_text()
}

/// One gateway call.
#[wasm_bindgen(js_name = GatewayCall)]
pub struct JsCall {
    inner: Call,
}

#[wasm_bindgen(js_class = GatewayCall)]
impl JsCall {
    /// An action after the handler's output: `done` echoes the output the glue passed in
    /// (unless an output adapter reshaped it). The glue compares the echo's exact text
    /// (`ECHO` in `pkg/src/gateway.js`) before parsing anything.
    fn echo(&self, a: Action) -> String {
        match a {
            Action::Done(_) if !self.inner.is_adapted() => {
                r#"{"do":"done","echo":true}"#.to_owned()
            }
            other => other.to_json(),
        }
    }

    /// A call of `name` (input and context JSON) on `registry`, the gateway's `seq`-th,
    /// traced under its `prefix` ([`crate::gateway::trace_id`]).
    #[wasm_bindgen(constructor)]
    pub fn new(
        registry: &JsRegistry,
        name: &str,
        input: &str,
        ctx: &str,
        prefix: &str,
        seq: f64,
    ) -> Result<JsCall, JsValue> {
        let input = parse(input, "the input", ErrorKind::InvalidInput)?;
        let o = parse(ctx, "the call options", ErrorKind::InvalidOptions)?;
        let ctx = CallContext::from_value(&o).map_err(js_err)?;
        let trace = crate::gateway::trace_id(prefix, seq as u64, &o);
        Ok(JsCall {
            inner: Call::new(registry.inner.clone(), name, input, ctx, &trace),
        })
    }

    /// Starts it → the first action (JSON).
    pub fn start(&mut self, now: f64) -> String {
        self.inner.start(now).to_json()
    }

    /// Starts it with the transactions on a memory port → the first non-state action.
    #[wasm_bindgen(js_name = startIn)]
    pub fn start_in(&mut self, memory: &mut JsMemory, now: f64) -> String {
        let a = self.inner.start(now);
        self.local(a, memory, now)
    }

    /// Reports a transaction's result (JSON) → the next action.
    pub fn applied(&mut self, result: &str, now: f64) -> Result<String, JsValue> {
        let a = Applied::from_value(&parse(
            result,
            "the state result",
            ErrorKind::InvalidRequest,
        )?)
        .ok_or_else(|| {
            js_err(Error::new(
                ErrorKind::InvalidRequest,
                "not a gateway state result",
            ))
        })?;
        Ok(self.inner.on(Event::Applied(a), now).to_json())
    }

    /// Reports the handler's output (JSON) → the next action.
    pub fn output(&mut self, output: &str, now: f64) -> String {
        self.inner.on(output_event(output), now).to_json()
    }

    /// [`Self::output`] on a memory port.
    #[wasm_bindgen(js_name = outputIn)]
    pub fn output_in(&mut self, memory: &mut JsMemory, output: &str, now: f64) -> String {
        let a = self.inner.on(output_event(output), now);
        let a = self.settle_locally(a, memory, now);
        self.echo(a)
    }

    /// Reports another event (`failed` with the failure JSON, `timed-out`, `woke`,
    /// `aborted`) → the next action.
    pub fn event(&mut self, kind: &str, failure: &str, now: f64) -> Result<String, JsValue> {
        Ok(self.inner.on(event_of(kind, failure)?, now).to_json())
    }

    /// [`Self::event`] on a memory port.
    #[wasm_bindgen(js_name = eventIn)]
    pub fn event_in(
        &mut self,
        memory: &mut JsMemory,
        kind: &str,
        failure: &str,
        now: f64,
    ) -> Result<String, JsValue> {
        let a = self.inner.on(event_of(kind, failure)?, now);
        Ok(self.local(a, memory, now))
    }

    /// The observability record (JSON).
    pub fn record(&self) -> String {
        self.inner.record().to_value().json_text()
    }
}

/// The handler's output as an event: a text that is not JSON is a failure, not retried.
fn output_event(output: &str) -> Event {
    match serde_json::from_str(output) {
        Ok(v) => Event::Output(v),
        Err(e) => Event::Failed(gateway::Failure {
            code: None,
            message: format!("the handler's output is not JSON: {e}"),
            status: None,
            retryable: Some(false),
        }),
    }
}

fn event_of(kind: &str, failure: &str) -> Result<Event, JsValue> {
    Ok(match kind {
        "failed" => Event::Failed(gateway::failure_of(&parse(
            failure,
            "the failure",
            ErrorKind::InvalidRequest,
        )?)),
        "timed-out" => Event::TimedOut,
        "woke" => Event::Woke,
        "aborted" => Event::Aborted,
        other => {
            return Err(js_err(Error::new(
                ErrorKind::InvalidRequest,
                format!("`{other}` is not a gateway event"),
            )))
        }
    })
}

impl JsCall {
    /// Runs transactions on the memory port until another action comes.
    fn local(&mut self, a: Action, memory: &mut JsMemory, now: f64) -> String {
        self.settle_locally(a, memory, now).to_json()
    }

    /// Runs transactions on the memory port until another action comes → that action.
    fn settle_locally(&mut self, mut a: Action, memory: &mut JsMemory, now: f64) -> Action {
        while let Action::Transact(op) = a {
            let applied = memory.inner.run(op, now);
            a = self.inner.on(Event::Applied(applied), now);
        }
        a
    }
}
