//! Skill state machines and the arbiter for JS: conversions only (`crate::arbiter`). The
//! proposal path takes plain strings (no JSON) so a proposal costs little more than the
//! call into wasm.

use super::js_err;
use crate::arbiter::session::{self, Session};
use crate::arbiter::{self, approval, Arbiter, Proposal, SkillRegistry};
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

fn parse(text: &str, what: &str) -> Result<Value, JsValue> {
    super::parse(text, what, ErrorKind::InvalidRequest)
}

fn names(text: &str) -> Result<Vec<String>, JsValue> {
    match parse(text, "the tools")? {
        Value::Array(a) => Ok(a
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()),
        Value::Null => Ok(Vec::new()),
        _ => Err(js_err(Error::new(
            ErrorKind::InvalidRequest,
            "`tools` must be an array of names",
        ))),
    }
}

fn list(text: &str, what: &str) -> Result<Vec<Value>, JsValue> {
    match parse(text, what)? {
        Value::Array(a) => Ok(a),
        Value::Null => Ok(Vec::new()),
        _ => Err(js_err(Error::new(
            ErrorKind::InvalidRequest,
            format!("{what} must be an array"),
        ))),
    }
}

/// Every problem of a spec (JSON, the inbox's one string: specs run to hundreds of KB);
/// `tools` is a JSON array of names, or `null` to skip the tool check → `{ ok, problems }`.
#[wasm_bindgen(js_name = validateSkillSpec)]
pub fn validate_skill_spec(lens: &[u32], tools: &str) -> Result<String, JsValue> {
    let spec = super::inbox_strings(lens)?;
    let v =
        arbiter::validate::SpecText::parse(spec.first().map(String::as_str).unwrap_or_default())
            .map_err(js_err)?;
    let t: Option<BTreeSet<String>> = match parse(tools, "the tools")? {
        Value::Null => None,
        _ => Some(crate::sort::set_of(names(tools)?)),
    };
    let r = v.validate(t.as_ref());
    let mut o = serde_json::Map::new();
    o.insert("ok".into(), r.is_valid().into());
    o.insert("problems".into(), r.to_value()["problems"].clone());
    Ok(Value::Object(o).json_text())
}

/// A spec (JSON) as a Mermaid state diagram, `current` marking a state ("" for none).
#[wasm_bindgen(js_name = specToMermaid)]
pub fn spec_to_mermaid(spec: &str, current: &str) -> Result<String, JsValue> {
    let v = parse(spec, "the spec")?;
    let mut problems = crate::problems::Problems::default();
    let s = arbiter::spec::read(&v, &mut problems).ok_or_else(|| {
        js_err(Error::new(
            ErrorKind::InvalidSkill,
            "the spec is not a JSON object",
        ))
    })?;
    Ok(arbiter::mermaid::to_mermaid(
        &s,
        Some(current).filter(|c| !c.is_empty()),
    ))
}

/// An immutable registry of validated specs.
#[wasm_bindgen(js_name = SkillRegistry)]
pub struct JsSkillRegistry {
    inner: Arc<SkillRegistry>,
}

#[wasm_bindgen(js_class = SkillRegistry)]
impl JsSkillRegistry {
    /// Builds it (`specs`, `overrides`: JSON arrays of specs; `tools`: JSON array of names).
    #[wasm_bindgen(constructor)]
    pub fn new(specs: &str, overrides: &str, tools: &str) -> Result<JsSkillRegistry, JsValue> {
        let inner = SkillRegistry::build(
            &list(specs, "the specs")?,
            &list(overrides, "the overrides")?,
            &names(tools)?,
        )
        .map_err(js_err)?;
        Ok(JsSkillRegistry {
            inner: Arc::new(inner),
        })
    }

    /// The spec names (JSON array).
    pub fn names(&self) -> String {
        Value::from(self.inner.names()).json_text()
    }

    /// The registry summary for the model's system prompt ([`SkillRegistry::summary`]).
    pub fn summary(&self) -> String {
        self.inner.summary()
    }

    /// A spec (JSON), or "".
    pub fn spec(&self, name: &str) -> String {
        self.inner
            .get(name)
            .map(|s| s.to_value().json_text())
            .unwrap_or_default()
    }
}

/// Loads spec files in bulk (`files`: `[{ path, text }]` JSON, `tools`: a JSON array or
/// `null`) → `{ specs, warnings }`, or `InvalidSkill` listing every problem of every file.
#[wasm_bindgen(js_name = loadSkillSpecs)]
pub fn load_skill_specs(files: &str, tools: &str) -> Result<String, JsValue> {
    arbiter::load::load_files_json(files, tools).map_err(js_err)
}

/// The arbiter over one registry.
#[wasm_bindgen(js_name = Arbiter)]
pub struct JsArbiter {
    inner: Arbiter,
    /// The outcome of a `transition` that was not taken quietly, until the glue reads it.
    outcome: Option<String>,
    /// The lane of the last `tool` or `transition` call (what the `…Again` calls step).
    lane: String,
}

fn outcome_json(o: &arbiter::Outcome) -> String {
    crate::json_text::to_string(o).unwrap_or_default()
}

#[wasm_bindgen(js_class = Arbiter)]
impl JsArbiter {
    /// An arbiter with a per-step retry budget.
    #[wasm_bindgen(constructor)]
    pub fn new(registry: &JsSkillRegistry, retries: u32) -> JsArbiter {
        JsArbiter {
            inner: Arbiter::new(registry.inner.clone()).with_retry_budget(retries),
            outcome: None,
            lane: String::new(),
        }
    }

    /// Starts a skill in a lane (input JSON) → the run (JSON).
    pub fn start(&mut self, lane: &str, skill: &str, input: &str) -> Result<String, JsValue> {
        let v = parse(input, "the input")?;
        let r = self.inner.start(lane, skill, v).map_err(js_err)?;
        Ok(crate::json_text::to_string(r).unwrap_or_default())
    }

    /// A tool-call proposal (`arguments` JSON, or "" for none). Accepted with no state
    /// change and no record → `undefined` (the caller knows the rest, and no text
    /// crosses); otherwise the outcome JSON.
    pub fn tool(
        &mut self,
        lane: &str,
        name: &str,
        arguments: &str,
    ) -> Result<Option<String>, JsValue> {
        self.lane.clear();
        self.lane.push_str(lane);
        self.tool_again(name, arguments)
    }

    /// [`JsArbiter::tool`] in the lane of the last `tool` or `transition` call: a loop
    /// stepping one lane does not send its name every step.
    #[wasm_bindgen(js_name = toolAgain)]
    pub fn tool_again(&mut self, name: &str, arguments: &str) -> Result<Option<String>, JsValue> {
        let arguments = if arguments.is_empty() {
            Value::Null
        } else {
            parse(arguments, "the arguments")?
        };
        let o = self.step(Proposal::Tool {
            name: name.to_owned(),
            arguments,
        })?;
        Ok(
            if o.accepted && o.proposal_record.is_none() && o.status == arbiter::Status::Running {
                None
            } else {
                Some(outcome_json(&o))
            },
        )
    }

    /// A transition proposal. Taken with the run going on and no record → the index of
    /// the new state in the skill's spec, plus one (the caller knows the rest, and no text
    /// crosses; [`JsArbiter::state_name`] names a state the caller has not seen yet);
    /// otherwise 0, and the outcome waits for [`JsArbiter::take_outcome`].
    pub fn transition(&mut self, lane: &str, event: &str) -> Result<u32, JsValue> {
        self.lane.clear();
        self.lane.push_str(lane);
        self.transition_again(event)
    }

    /// [`JsArbiter::transition`] in the lane of the last `tool` or `transition` call.
    #[wasm_bindgen(js_name = transitionAgain)]
    pub fn transition_again(&mut self, event: &str) -> Result<u32, JsValue> {
        let o = self.step(Proposal::Transition {
            event: event.to_owned(),
        })?;
        if o.accepted && o.proposal_record.is_none() && o.status == arbiter::Status::Running {
            let answer = self
                .inner
                .run(&self.lane)
                .and_then(|r| u32::try_from(r.state_index()).ok())
                .and_then(|at| at.checked_add(1));
            if let Some(n) = answer {
                return Ok(n);
            }
        }
        self.outcome = Some(outcome_json(&o));
        Ok(0)
    }

    /// Proposes `p` in the lane of the last `tool` or `transition` call.
    fn step(&mut self, p: Proposal) -> Result<arbiter::Outcome, JsValue> {
        let lane = std::mem::take(&mut self.lane);
        let o = self.inner.propose(&lane, p);
        self.lane = lane;
        o.map_err(js_err)
    }

    /// The outcome of the last `transition` that answered 0 (JSON), or "".
    #[wasm_bindgen(js_name = takeOutcome)]
    pub fn take_outcome(&mut self) -> String {
        self.outcome.take().unwrap_or_default()
    }

    /// The name of the state the run in `lane` is in, or "".
    #[wasm_bindgen(js_name = stateName)]
    pub fn state_name(&self, lane: &str) -> String {
        self.inner
            .run(lane)
            .map(|r| r.state.to_string())
            .unwrap_or_default()
    }

    /// Any proposal (JSON) → the outcome (JSON).
    pub fn propose(&mut self, lane: &str, proposal: &str) -> Result<String, JsValue> {
        let p = Proposal::from_value(&parse(proposal, "the proposal")?).map_err(js_err)?;
        Ok(outcome_json(&self.inner.propose(lane, p).map_err(js_err)?))
    }

    /// Cancels the lane's run → the run (JSON).
    pub fn cancel(&mut self, lane: &str) -> Result<String, JsValue> {
        let r = self.inner.cancel(lane).map_err(js_err)?;
        Ok(crate::json_text::to_string(r).unwrap_or_default())
    }

    /// The lane's run (JSON), or "".
    pub fn run(&self, lane: &str) -> String {
        self.inner
            .run(lane)
            .map(|r| crate::json_text::to_string(r).unwrap_or_default())
            .unwrap_or_default()
    }

    /// The step context for the lane's next model call (host context JSON in).
    #[wasm_bindgen(js_name = stepContext)]
    pub fn step_context(&self, lane: &str, host: &str) -> Result<String, JsValue> {
        let h = if host.is_empty() {
            Value::Null
        } else {
            parse(host, "the context")?
        };
        Ok(self
            .inner
            .step_context(lane, &h)
            .map_err(js_err)?
            .json_text())
    }

    /// What the model is offered for the lane's next step (`{ system, tools, names }`
    /// JSON), from the host's tool definitions (JSON array).
    #[wasm_bindgen(js_name = stepOffer)]
    pub fn step_offer(&self, lane: &str, tools: &str) -> Result<String, JsValue> {
        let t = if tools.is_empty() {
            Value::Null
        } else {
            parse(tools, "tools")?
        };
        Ok(self.inner.step_offer(lane, &t).map_err(js_err)?.json_text())
    }

    /// Session → lanes → skill → step (JSON).
    pub fn hierarchy(&self, session: &str) -> String {
        self.inner.hierarchy(session).json_text()
    }
}

/// The proposal a tool call makes (JSON), from the call's name, its input JSON and the
/// offer's `names` JSON.
#[wasm_bindgen(js_name = callProposal)]
pub fn call_proposal(name: &str, input: &str, names: &str) -> Result<String, JsValue> {
    let i = parse(input, "the call's input")?;
    let n = if names.is_empty() {
        Value::Null
    } else {
        parse(names, "names")?
    };
    crate::arbiter::offer::call_proposal(name, &i, &n)
        .map(|v| v.json_text())
        .map_err(js_err)
}

/// Replays a log (JSON array of events) over a registry → the run (JSON).
#[wasm_bindgen(js_name = replayLog)]
pub fn replay_log(registry: &JsSkillRegistry, log: &str, retries: u32) -> Result<String, JsValue> {
    let events: Vec<arbiter::Event> = list(log, "the log")?
        .iter()
        .map(arbiter::Event::from_value)
        .collect::<crate::error::Result<_>>()
        .map_err(js_err)?;
    let r = Arbiter::replay(registry.inner.clone(), &events, retries).map_err(js_err)?;
    Ok(crate::json_text::to_string(&r).unwrap_or_default())
}

/// The SkillSpec (JSON) of a composition's subgraph (JSON).
#[wasm_bindgen(js_name = compositionSpec)]
pub fn composition_spec(composition: &str) -> Result<String, JsValue> {
    Ok(arbiter::spec_of_composition(&parse(composition, "the composition")?).json_text())
}

/// Milliseconds from JS (a time from `now()`, or a timeout): a finite number ≥ 0.
fn ms(at: f64) -> Result<u64, JsValue> {
    if at.is_finite() && at >= 0.0 {
        Ok(at as u64)
    } else {
        Err(js_err(Error::new(
            ErrorKind::InvalidOptions,
            format!("a time (epoch milliseconds from `now()`) or a timeout is a finite number of milliseconds ≥ 0, not {at}"),
        )))
    }
}

/// A session: lifecycle, lanes and their skill runs over one persisted log
/// ([`session::Session`]); the glue writes [`JsSession::ops`] after every change.
#[wasm_bindgen(js_name = Session)]
pub struct JsSession {
    inner: Session,
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// Opens session `id` from its stored log rows (`[[key, value], …]` JSON) at `at`.
    pub fn open(
        registry: &JsSkillRegistry,
        retries: u32,
        id: &str,
        rows: &str,
        at: f64,
    ) -> Result<JsSession, JsValue> {
        let rows = Session::rows_from_json(rows).map_err(js_err)?;
        let inner =
            Session::open(registry.inner.clone(), retries, id, &rows, ms(at)?).map_err(js_err)?;
        Ok(JsSession { inner })
    }

    /// One call by name ([`Session::call`]): `laneEvent`, `startSkill`, `propose`, `cancel`,
    /// `heartbeat`, `stop`, `hierarchy`, `log`, `ops`, `lane`, `run`, `stepContext`,
    /// `stepOffer` in the glue.
    pub fn call(
        &mut self,
        op: &str,
        lane: &str,
        a: &str,
        b: &str,
        at: f64,
    ) -> Result<String, JsValue> {
        let at = ms(at)?;
        self.inner.call(op, lane, a, b, at).map_err(js_err)
    }

    /// The glue wrote the unsaved writes (`call("ops")`).
    pub fn saved(&mut self) {
        self.inner.saved();
    }

    /// The glue could not write them: back to the saved log.
    pub fn rollback(&mut self) -> Result<(), JsValue> {
        self.inner.rollback().map_err(js_err)
    }

    /// Whether the active session logged nothing for `timeout` ms at `now`.
    pub fn stale(&self, now: f64, timeout: f64) -> Result<bool, JsValue> {
        Ok(self.inner.stale(ms(now)?, ms(timeout)?))
    }
}

/// The session and lane machines as SkillSpec-shaped data (JSON).
#[wasm_bindgen(js_name = sessionMachines)]
pub fn session_machines() -> String {
    session::machines().json_text()
}

/// Proposal rows (`[[key, value], …]` JSON) with `status` ("" for all), oldest first; with
/// `history`, the approval log's rows as decisions instead.
#[wasm_bindgen(js_name = readProposals)]
pub fn read_proposals(rows: &str, status: &str, history: bool) -> Result<String, JsValue> {
    let rows = Session::rows_from_json(rows).map_err(js_err)?;
    let out = if history {
        approval::history(&rows)
    } else {
        approval::list(&rows, Some(status).filter(|s| !s.is_empty()))
    };
    Ok(Value::Array(out.map_err(js_err)?).json_text())
}

/// A decision on a proposal: its JSON (`{ row, ops }`) and, for an approval, the new
/// registry.
#[wasm_bindgen(js_name = ProposalDecision)]
pub struct JsProposalDecision {
    json: String,
    registry: Option<Arc<SkillRegistry>>,
}

#[wasm_bindgen(js_class = ProposalDecision)]
impl JsProposalDecision {
    /// `{ row, ops }` JSON.
    pub fn json(&self) -> String {
        self.json.clone()
    }

    /// The registry with the proposal installed (approvals only).
    pub fn registry(&self) -> Option<JsSkillRegistry> {
        self.registry.clone().map(|inner| JsSkillRegistry { inner })
    }
}

/// Decides proposal `id` (its stored row, or "" when absent; the decision JSON
/// `{ approve, by, reason?, at }`) against `registry`.
#[wasm_bindgen(js_name = decideProposal)]
pub fn decide_proposal(
    id: &str,
    row: Option<String>,
    decision: &str,
    registry: &JsSkillRegistry,
) -> Result<JsProposalDecision, JsValue> {
    let (json, reg) =
        approval::decide_json(id, row.as_deref(), decision, &registry.inner).map_err(js_err)?;
    Ok(JsProposalDecision {
        json,
        registry: reg.map(Arc::new),
    })
}

/// `registry` with every approved proposal of the rows (`[[key, value], …]` JSON)
/// installed, in decision order.
#[wasm_bindgen(js_name = installApproved)]
pub fn install_approved(
    registry: &JsSkillRegistry,
    rows: &str,
) -> Result<JsSkillRegistry, JsValue> {
    let rows = Session::rows_from_json(rows).map_err(js_err)?;
    let inner = approval::install(&registry.inner, &rows).map_err(js_err)?;
    Ok(JsSkillRegistry {
        inner: Arc::new(inner),
    })
}
