//! Skill state machines and the arbiter (the seed's Skill System): a [`SkillSpec`] is a
//! deterministic state machine; the model only proposes — a tool call, a transition event,
//! or finish — and the [`Arbiter`] validates every proposal against the current state,
//! applies it, and appends it to an append-only log from which the run replays exactly.
//!
//! - [`spec`]: the schema; [`validate`]: load-time validation (every problem at once);
//! - [`SkillRegistry`]: an immutable set of validated specs (agent-specific specs override
//!   global ones by name; a registry built from an invalid set fails to build);
//! - [`Arbiter`]: one active skill per lane, per-step retry budget, `max_steps`,
//!   cancellation of `interruptible` skills, no skill spawning a skill, proposal records
//!   for what the system skills `tool-builder` and `skill-builder` propose;
//! - [`mermaid`]: a spec (and a run's position) as a Mermaid state diagram.

pub mod approval;
pub mod load;
pub mod mermaid;
pub mod offer;
pub mod session;
pub mod spec;
pub mod validate;

pub use spec::{SkillSpec, State, StateName, Transition};
pub use validate::{validate_spec, validate_spec_text};

use crate::error::{Error, ErrorKind, Result};
use crate::json_schema;
use litemap::LiteMap;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The tools the arbiter itself implements: proposals awaiting human approval.
pub const PROPOSE_TOOL: &str = "choir.propose.tool";
/// See [`PROPOSE_TOOL`].
pub const PROPOSE_SKILL: &str = "choir.propose.skill";
/// The default per-step retry budget.
pub const DEFAULT_RETRIES: u32 = 2;

/// An immutable set of validated specs and the tool registry they were checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRegistry {
    specs: LiteMap<String, Arc<SkillSpec>>,
    tools: BTreeSet<String>,
}

impl SkillRegistry {
    /// Builds a registry: `global` specs, then `overrides` (agent-specific) replacing global
    /// ones of the same name. Every spec is validated against `tools` (plus the arbiter's own
    /// proposal tools); any problem fails the build with `InvalidSkill`, `details.specs`
    /// listing each failing spec's problems. The system skills `tool-builder` and
    /// `skill-builder` are data, not built in: a store seeded with the package's system
    /// skills ([`crate::store::seed`]) gives their specs (`skill_specs`), passed here with
    /// the rest.
    pub fn build(global: &[Value], overrides: &[Value], tools: &[String]) -> Result<Self> {
        let mut reg: BTreeSet<String> = crate::sort::set_of(tools.iter().cloned());
        reg.insert(PROPOSE_TOOL.into());
        reg.insert(PROPOSE_SKILL.into());
        let mut all: Vec<(&'static str, Value)> = Vec::new();
        all.extend(global.iter().cloned().map(|v| ("global", v)));
        all.extend(overrides.iter().cloned().map(|v| ("override", v)));
        let mut specs: LiteMap<String, Arc<SkillSpec>> = LiteMap::new();
        let mut failed = Vec::new();
        let mut seen: LiteMap<(String, &'static str), usize> = LiteMap::new();
        for (i, (layer, v)) in all.iter().enumerate() {
            match validate::load(v, Some(&reg)) {
                Ok(s) => {
                    if let Some(j) = seen.insert((s.name.clone(), layer), i) {
                        failed.push(json!({"name": s.name, "layer": layer, "problems": [{
                            "path": "name", "code": "duplicate-name", "severity": "error",
                            "message": format!("two {layer} specs are named `{}` (#{j} and #{i})", s.name)}]}));
                    }
                    specs.insert(s.name.clone(), Arc::new(s));
                }
                Err(problems) => failed.push(json!({
                    "name": v.get("name").and_then(Value::as_str),
                    "layer": layer,
                    "problems": problems.iter().map(|p| p.to_value()).collect::<Vec<_>>(),
                })),
            }
        }
        if !failed.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidSkill,
                format!(
                    "{} skill spec(s) are not valid: the registry is not built",
                    failed.len()
                ),
            )
            .with("specs", Value::Array(failed)));
        }
        Ok(SkillRegistry { specs, tools: reg })
    }

    /// A new registry: this one's specs and tools, plus `specs` (replacing same-named
    /// ones) and `tools`, every spec validated again (the approval pipeline's install).
    pub fn with_installed(&self, specs: &[Value], tools: &[String]) -> Result<Self> {
        let own: Vec<Value> = self
            .specs
            .values()
            .filter(|s| {
                !specs
                    .iter()
                    .any(|n| n.get("name").and_then(Value::as_str) == Some(&s.name))
            })
            .map(|s| s.to_value())
            .collect();
        let mut all_tools: Vec<String> = self.tools.iter().cloned().collect();
        all_tools.extend(tools.iter().cloned());
        SkillRegistry::build(&own, specs, &all_tools)
    }

    /// The spec named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<SkillSpec>> {
        self.specs.get(name)
    }

    /// The spec names.
    pub fn names(&self) -> Vec<&str> {
        self.specs.keys().map(String::as_str).collect()
    }

    /// The tool registry.
    pub fn tools(&self) -> &BTreeSet<String> {
        &self.tools
    }

    /// The registry summary for the model's system prompt: one line per skill, by name —
    /// `- <name>: <description>` (its first line, white space collapsed, at most 200
    /// characters) — after a heading; "" for an empty registry.
    pub fn summary(&self) -> String {
        if self.specs.is_empty() {
            return String::new();
        }
        let mut out = String::from("Skills you can start:\n");
        for (name, spec) in &self.specs {
            let first = spec.description.lines().find(|l| !l.trim().is_empty());
            let line: String = first
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push_str("- ");
            out.push_str(name);
            if !line.is_empty() {
                out.push_str(": ");
                if line.chars().count() > 200 {
                    out.extend(line.chars().take(199));
                    out.push('…');
                } else {
                    out.push_str(&line);
                }
            }
            out.push('\n');
        }
        out
    }
}

/// What the model proposes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Proposal {
    /// Call a tool.
    Tool {
        /// The tool name.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// Take the transition on `event`.
    Transition {
        /// The event.
        event: String,
    },
    /// Finish (only in a terminal state).
    Finish {
        /// The skill's output.
        output: Value,
    },
    /// Start another skill from inside this one (always refused).
    Spawn {
        /// The skill.
        skill: String,
    },
}

impl Proposal {
    /// Reads a proposal: `{ type: tool, name, arguments? }`, `{ type: transition, event }`,
    /// `{ type: finish, output? }`, `{ type: spawn, skill }`.
    pub fn from_value(v: &Value) -> Result<Self> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let bad = |m: &str| Error::new(ErrorKind::InvalidRequest, m.to_owned()).at("proposal");
        match s("type").as_deref() {
            Some("tool") => Ok(Proposal::Tool {
                name: s("name").ok_or_else(|| bad("a tool proposal needs a `name`"))?,
                arguments: v.get("arguments").cloned().unwrap_or(Value::Null),
            }),
            Some("transition") => Ok(Proposal::Transition {
                event: s("event").ok_or_else(|| bad("a transition proposal needs an `event`"))?,
            }),
            Some("finish") => Ok(Proposal::Finish {
                output: v.get("output").cloned().unwrap_or(Value::Null),
            }),
            Some("spawn") => Ok(Proposal::Spawn {
                skill: s("skill").unwrap_or_default(),
            }),
            _ => Err(bad(
                "a proposal's `type` is tool, transition, finish or spawn",
            )),
        }
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Taking proposals.
    Running,
    /// Finished in a terminal state.
    Finished,
    /// Cancelled by the caller.
    Cancelled,
    /// Stopped at `max_steps`.
    Terminated,
    /// Out of retries with no `error` transition to take.
    Failed,
}

/// A proposal awaiting human approval (from `choir.propose.tool` / `choir.propose.skill`);
/// nothing is installed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalRecord {
    /// `tool` or `skill`.
    pub kind: &'static str,
    /// The proposed manifest or spec.
    pub payload: Value,
    /// Always `pending` (the word a stored proposal uses until it is decided).
    pub status: &'static str,
    /// The step that made it.
    pub step: u64,
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// 0-based position in the log.
    pub seq: u64,
    /// `started`, `proposal`, `cancelled`.
    pub kind: &'static str,
    /// The skill (for `started`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The input (for `started`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The proposal (for `proposal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
    /// Whether it was accepted.
    pub accepted: bool,
    /// The rejection code, when refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<&'static str>,
    /// The state before.
    pub from: StateName,
    /// The state after.
    pub to: StateName,
    /// The run's status after.
    pub status: Status,
}

impl Event {
    /// A logged event read back (what replay needs: the kind, the skill and input of
    /// `started`, the proposal of `proposal`).
    pub fn from_value(v: &Value) -> Result<Self> {
        let kind = match v.get("kind").and_then(Value::as_str) {
            Some("started") => "started",
            Some("proposal") => "proposal",
            Some("cancelled") => "cancelled",
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    "a log event's `kind` is started, proposal or cancelled",
                ))
            }
        };
        let s = |k: &str| StateName::from(v.get(k).and_then(Value::as_str).unwrap_or(""));
        Ok(Event {
            seq: v.get("seq").and_then(Value::as_u64).unwrap_or(0),
            kind,
            skill: v.get("skill").and_then(Value::as_str).map(str::to_owned),
            input: v.get("input").cloned(),
            proposal: v.get("proposal").map(Proposal::from_value).transpose()?,
            accepted: v.get("accepted").and_then(Value::as_bool).unwrap_or(false),
            rejected: None,
            from: s("from"),
            to: s("to"),
            status: Status::Running,
        })
    }
}

/// One skill run in a lane. Its JSON form has the fields below, then `log` (the
/// [`Event`]s of [`Run::log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The skill.
    pub skill: String,
    /// The current state.
    pub state: StateName,
    /// Proposals taken so far (the model's steps).
    pub step: u64,
    /// Rejections in a row in this state.
    pub retries: u32,
    /// Status.
    pub status: Status,
    /// The input.
    pub input: Value,
    /// The output (when finished).
    pub output: Option<Value>,
    /// Why it ended, when it did not finish.
    pub reason: Option<&'static str>,
    /// Proposal records awaiting approval.
    pub proposals: Vec<ProposalRecord>,
    /// Accepted tool calls in the current state (the structured step context).
    pub state_calls: Vec<Call>,
    /// The append-only log, kept compact (states by index, no copies of the run's own
    /// fields): [`Run::log`] reads it as [`Event`]s. A long run logs every proposal, and
    /// the full events made each append cost twice the memory and its traffic.
    entries: Vec<Entry>,
    /// The skill's spec (the registry's, shared) and the current state's index in it: a
    /// proposal looks neither up by name.
    spec: Arc<SkillSpec>,
    at: usize,
}

/// A log entry as a run keeps it ([`Run::event`] makes the [`Event`]).
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    kind: EntryKind,
    proposal: Option<Proposal>,
    rejected: Option<&'static str>,
    /// The state before, by index in the spec ([`NO_STATE`] before the start).
    from: u32,
    /// The state after, by index in the spec.
    to: u32,
    status: Status,
}

/// What a log entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Started,
    Proposal,
    Cancelled,
}

impl EntryKind {
    fn name(self) -> &'static str {
        match self {
            EntryKind::Started => "started",
            EntryKind::Proposal => "proposal",
            EntryKind::Cancelled => "cancelled",
        }
    }
}

/// The `from` of the `started` entry: no state yet (the event's `from` is "").
const NO_STATE: u32 = u32::MAX;

/// A state index as a log entry keeps it (a spec has far fewer than `u32::MAX` states).
fn state_index(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(NO_STATE)
}

impl Serialize for Run {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Run", 11)?;
        st.serialize_field("skill", &self.skill)?;
        st.serialize_field("state", &self.state)?;
        st.serialize_field("step", &self.step)?;
        st.serialize_field("retries", &self.retries)?;
        st.serialize_field("status", &self.status)?;
        st.serialize_field("input", &self.input)?;
        st.serialize_field("output", &self.output)?;
        st.serialize_field("reason", &self.reason)?;
        st.serialize_field("proposals", &self.proposals)?;
        st.serialize_field("state_calls", &self.state_calls)?;
        st.serialize_field("log", &LogView(self))?;
        st.end()
    }
}

/// A run's log as a JSON array of its events, made one at a time.
struct LogView<'a>(&'a Run);

impl Serialize for LogView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.events())
    }
}

/// An accepted tool call of the current state (`{ tool, arguments }` in the step context).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
}

impl Run {
    /// The log: every event in order, from `started`.
    pub fn log(&self) -> Vec<Event> {
        self.events().collect()
    }

    /// The log's events, made one at a time.
    fn events(&self) -> impl Iterator<Item = Event> + '_ {
        (0..self.entries.len()).filter_map(|i| self.event(i))
    }

    /// The index of the current state in the skill's spec (`spec.states`).
    pub fn state_index(&self) -> usize {
        self.at
    }

    /// The number of events in the log.
    pub fn log_len(&self) -> usize {
        self.entries.len()
    }

    /// The `i`th event of the log (0 is `started`).
    pub fn event(&self, i: usize) -> Option<Event> {
        let e = self.entries.get(i)?;
        let name = |at: u32| {
            self.spec
                .states
                .get(at as usize)
                .map(|st| StateName::from(st.name.as_str()))
                .unwrap_or_default()
        };
        let started = e.kind == EntryKind::Started;
        Some(Event {
            seq: i as u64,
            kind: e.kind.name(),
            skill: started.then(|| self.skill.clone()),
            input: started.then(|| self.input.clone()),
            proposal: e.proposal.clone(),
            accepted: e.rejected.is_none(),
            rejected: e.rejected,
            from: name(e.from),
            to: name(e.to),
            status: e.status,
        })
    }

    /// Takes the transition `t` of the current state (its target is one of the spec's
    /// states: validation refuses a spec otherwise).
    fn move_to(&mut self, t: &Transition) {
        self.at = t.target;
        self.state = t.to.clone();
        self.state_calls.clear();
    }

    /// Appends a log entry (the state and status after it are the run's own).
    fn append(
        &mut self,
        kind: EntryKind,
        proposal: Option<Proposal>,
        rejected: Option<&'static str>,
        from: usize,
    ) {
        self.entries.push(Entry {
            kind,
            proposal,
            rejected,
            from: state_index(from),
            to: state_index(self.at),
            status: self.status,
        });
    }
}

/// The outcome of one proposal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Whether the arbiter accepted it.
    pub accepted: bool,
    /// The run's status after it.
    pub status: Status,
    /// The state after it.
    pub state: StateName,
    /// The step count after it.
    pub step: u64,
    /// The refusal, with what would have been valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// A proposal record made by this step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_record: Option<ProposalRecord>,
    /// The stored proposal record's id (in a [`session::Session`], which stores it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
}

/// The arbiter: runs per lane over one registry.
#[derive(Debug, Clone)]
pub struct Arbiter {
    registry: Arc<SkillRegistry>,
    lanes: LiteMap<String, Run>,
    retry_budget: u32,
}

fn refusal(code: &'static str, message: String, state: &State, retries_left: u32) -> Value {
    json!({
        "code": code,
        "message": message,
        "allowed_tools": state.allowed_tools,
        "transitions": state.transitions.iter().map(|t| t.on.clone()).collect::<Vec<_>>(),
        "terminal": state.terminal,
        "retries_left": retries_left,
    })
}

impl Arbiter {
    /// An arbiter over `registry` with the default retry budget (2).
    pub fn new(registry: Arc<SkillRegistry>) -> Self {
        Arbiter {
            registry,
            lanes: LiteMap::new(),
            retry_budget: DEFAULT_RETRIES,
        }
    }

    /// Sets the per-step retry budget.
    pub fn with_retry_budget(mut self, n: u32) -> Self {
        self.retry_budget = n;
        self
    }

    /// The run in `lane`.
    pub fn run(&self, lane: &str) -> Option<&Run> {
        self.lanes.get(lane)
    }

    /// The lanes with a run.
    pub fn lanes(&self) -> impl Iterator<Item = (&String, &Run)> {
        self.lanes.iter()
    }

    /// Starts `skill` in `lane` with `input` (checked against its `input_schema`). A lane
    /// runs one skill at a time: starting over a running skill is refused.
    pub fn start(&mut self, lane: &str, skill: &str, input: Value) -> Result<&Run> {
        if let Some(r) = self.lanes.get(lane) {
            if r.status == Status::Running {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    format!(
                        "lane `{lane}` is running `{}`: one active skill per lane",
                        r.skill
                    ),
                )
                .with("reason", "lane-busy")
                .with("running", r.skill.clone()));
            }
        }
        let spec = self.registry.get(skill).cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("no skill `{skill}` in the registry"),
            )
            .with("skill", skill)
            .with(
                "known",
                self.registry
                    .names()
                    .into_iter()
                    .map(Value::from)
                    .collect::<Vec<_>>(),
            )
        })?;
        if let Some(schema) = &spec.input_schema {
            if let Err(v) = json_schema::validate(schema, &input) {
                return Err(Error::new(
                    ErrorKind::ParameterMismatch,
                    format!("the input does not match `{skill}`'s input_schema"),
                )
                .with(
                    "violations",
                    Value::Array(v.iter().map(|x| x.to_value()).collect()),
                ));
            }
        }
        let initial = StateName::from(spec.initial_state.as_str());
        let at = spec.index(&spec.initial_state).unwrap_or(0);
        let run = Run {
            skill: skill.to_owned(),
            state: initial,
            step: 0,
            retries: 0,
            status: Status::Running,
            input,
            output: None,
            reason: None,
            proposals: Vec::new(),
            state_calls: Vec::new(),
            entries: vec![Entry {
                kind: EntryKind::Started,
                proposal: None,
                rejected: None,
                from: NO_STATE,
                to: state_index(at),
                status: Status::Running,
            }],
            spec,
            at,
        };
        self.lanes.insert(lane.to_owned(), run);
        self.lanes
            .get(lane)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the run just started is gone"))
    }

    fn active(&mut self, lane: &str) -> Result<&mut Run> {
        self.lanes.get_mut(lane).ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("lane `{lane}` has no run")).with("lane", lane)
        })
    }

    /// Validates and applies one proposal.
    pub fn propose(&mut self, lane: &str, p: Proposal) -> Result<Outcome> {
        let budget = self.retry_budget;
        let tools = &self.registry.tools;
        let run = self.lanes.get_mut(lane).ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("lane `{lane}` has no run")).with("lane", lane)
        })?;
        let spec = run.spec.clone();
        if run.status != Status::Running {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("the run in lane `{lane}` has ended ({:?})", run.status).to_lowercase(),
            )
            .with("reason", "not-running"));
        }
        let from = run.at;
        let state = spec
            .states
            .get(run.at)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "a run is in an unknown state"))?;
        run.step += 1;
        let left = budget.saturating_sub(run.retries);
        let mut record = None;
        let verdict: std::result::Result<(), Value> = match &p {
            Proposal::Tool { name, arguments } => {
                if !state.allowed_tools.contains(name) {
                    Err(refusal(
                        "tool-not-allowed",
                        format!("`{name}` is not allowed in `{}`", state.name),
                        state,
                        left,
                    ))
                } else if name == PROPOSE_SKILL {
                    let candidate = arguments.get("spec").unwrap_or(arguments);
                    let v = validate_spec(candidate, Some(tools));
                    if v.is_valid() {
                        record = Some(ProposalRecord {
                            kind: "skill",
                            payload: candidate.clone(),
                            status: "pending",
                            step: run.step,
                        });
                        Ok(())
                    } else {
                        let mut e = refusal(
                            "invalid-skill-spec",
                            "the proposed SkillSpec is not valid".into(),
                            state,
                            left,
                        );
                        e["problems"] = v.to_value()["problems"].clone();
                        Err(e)
                    }
                } else {
                    if name == PROPOSE_TOOL {
                        record = Some(ProposalRecord {
                            kind: "tool",
                            payload: arguments.clone(),
                            status: "pending",
                            step: run.step,
                        });
                    }
                    Ok(())
                }
            }
            Proposal::Transition { event } => match state.transition(event) {
                Some(_) => Ok(()),
                None => Err(refusal(
                    "invalid-transition",
                    format!("`{}` has no transition on `{event}`", state.name),
                    state,
                    left,
                )),
            },
            Proposal::Finish { output } => {
                if !state.terminal {
                    Err(refusal(
                        "not-terminal",
                        format!("`{}` is not a terminal state", state.name),
                        state,
                        left,
                    ))
                } else if let Some(Err(v)) = spec
                    .output_schema
                    .as_ref()
                    .map(|s| json_schema::validate(s, output))
                {
                    let mut e = refusal(
                        "output-mismatch",
                        "the output does not match the output_schema".into(),
                        state,
                        left,
                    );
                    e["violations"] = Value::Array(v.iter().map(|x| x.to_value()).collect());
                    Err(e)
                } else {
                    Ok(())
                }
            }
            Proposal::Spawn { skill } => Err(refusal(
                "no-spawn",
                format!(
                    "a skill cannot start another skill (`{skill}`): the planner dispatches skills"
                ),
                state,
                left,
            )),
        };
        let mut rejected = None;
        let mut error = None;
        match verdict {
            Ok(()) => {
                run.retries = 0;
                match &p {
                    Proposal::Tool { name, arguments } => {
                        run.state_calls.push(Call {
                            tool: name.clone(),
                            arguments: arguments.clone(),
                        });
                    }
                    Proposal::Transition { event } => {
                        if let Some(t) = state.transition(event) {
                            run.move_to(t);
                        }
                    }
                    Proposal::Finish { output } => {
                        run.status = Status::Finished;
                        run.output = Some(output.clone());
                    }
                    Proposal::Spawn { .. } => {}
                }
                if let Some(r) = &record {
                    run.proposals.push(r.clone());
                }
            }
            Err(e) => {
                rejected = e.get("code").and_then(Value::as_str).map(code_str);
                run.retries += 1;
                if run.retries > budget {
                    match state.transition("error") {
                        Some(t) => {
                            run.move_to(t);
                            run.retries = 0;
                        }
                        None => {
                            run.status = Status::Failed;
                            run.reason = Some("retry-budget-exhausted");
                        }
                    }
                }
                error = Some(e);
            }
        }
        if run.status == Status::Running && run.step >= spec.max_steps {
            run.status = Status::Terminated;
            run.reason = Some("max-steps");
        }
        run.append(EntryKind::Proposal, Some(p), rejected, from);
        Ok(Outcome {
            accepted: rejected.is_none(),
            status: run.status,
            state: run.state.clone(),
            step: run.step,
            error,
            proposal_record: record.filter(|_| rejected.is_none()),
            proposal_id: None,
        })
    }

    /// Cancels the run in `lane` (refused for a skill that is not `interruptible`).
    pub fn cancel(&mut self, lane: &str) -> Result<&Run> {
        let run = self.active(lane)?;
        let spec = run.spec.clone();
        if run.status != Status::Running {
            return Err(
                Error::new(ErrorKind::InvalidRequest, "the run has already ended")
                    .with("reason", "not-running"),
            );
        }
        if !spec.interruptible {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!(
                    "`{}` is not interruptible: it cannot be cancelled",
                    spec.name
                ),
            )
            .with("reason", "not-interruptible"));
        }
        run.status = Status::Cancelled;
        run.reason = Some("cancelled");
        let here = run.at;
        run.append(EntryKind::Cancelled, None, None, here);
        Ok(run)
    }

    /// What the model sees for its next step: the skill's name, the current objective,
    /// the allowed tools and transition events, the step budget, the host's context
    /// (global context, compacted memory) and the structured step context (the accepted
    /// tool calls in this state) — never the other states.
    pub fn step_context(&self, lane: &str, host: &Value) -> Result<Value> {
        let run = self
            .run(lane)
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("lane `{lane}` has no run")))?;
        let spec = &run.spec;
        let state = spec
            .states
            .get(run.at)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "a run is in an unknown state"))?;
        Ok(json!({
            "skill": spec.name,
            "state": state.name,
            "objective": state.objective,
            "allowed_tools": state.allowed_tools,
            "transitions": state.transitions.iter().map(|t| t.on.clone()).collect::<Vec<_>>(),
            "terminal": state.terminal,
            "step": run.step,
            "max_steps": spec.max_steps,
            "retries_left": self.retry_budget.saturating_sub(run.retries),
            "context": host,
            "step_context": { "calls": run.state_calls },
        }))
    }

    /// Session → lanes → skill → step, for a host to render where every run is.
    pub fn hierarchy(&self, session: &str) -> Value {
        let lanes: Vec<Value> = self
            .lanes
            .keys()
            .map(|lane| json!({ "lane": lane, "skill": self.skill_view(lane) }))
            .collect();
        json!({ "session": session, "lanes": lanes })
    }

    /// The skill level of a lane: the run's skill, state, status, step and objective (null
    /// for a lane without a run).
    pub fn skill_view(&self, lane: &str) -> Value {
        let Some(r) = self.lanes.get(lane) else {
            return Value::Null;
        };
        let objective = r
            .spec
            .states
            .get(r.at)
            .map(|st| st.objective.clone())
            .unwrap_or_default();
        json!({ "name": r.skill, "state": r.state, "status": r.status,
                "step": { "n": r.step, "objective": objective } })
    }

    /// Replays a log (from its `started` event) on a fresh arbiter over `registry`: the
    /// run it produces.
    pub fn replay(registry: Arc<SkillRegistry>, log: &[Event], retry_budget: u32) -> Result<Run> {
        let mut a = Arbiter::new(registry).with_retry_budget(retry_budget);
        let lane = "replay";
        for e in log {
            match e.kind {
                "started" => {
                    a.start(
                        lane,
                        e.skill.as_deref().unwrap_or(""),
                        e.input.clone().unwrap_or(Value::Null),
                    )?;
                }
                "proposal" => {
                    if let Some(p) = &e.proposal {
                        a.propose(lane, p.clone())?;
                    }
                }
                "cancelled" => {
                    a.cancel(lane)?;
                }
                _ => {}
            }
        }
        a.lanes
            .remove(lane)
            .ok_or_else(|| Error::new(ErrorKind::InvalidRequest, "the log has no `started` event"))
    }
}

fn code_str(s: &str) -> &'static str {
    [
        "tool-not-allowed",
        "invalid-skill-spec",
        "invalid-transition",
        "not-terminal",
        "output-mismatch",
        "no-spawn",
    ]
    .into_iter()
    .find(|c| *c == s)
    .unwrap_or("rejected")
}

/// The SkillSpec of a composition's subgraph (the composition's JSON form), for the arbiter
/// to run: a staged subgraph's stages in order (each with its tools and description as
/// objective; `complete` moves on, the last to `done`), or one `work` state for a
/// planner–executor loop; tools never wider than the composition's availability.
pub fn spec_of_composition(c: &Value) -> Value {
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let all: Vec<String> = c
        .pointer("/subgraph/tool_availability")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let skill = c
        .pointer("/skill/name")
        .and_then(Value::as_str)
        .unwrap_or("composition");
    let stages: Vec<&Value> = c
        .pointer("/subgraph/nodes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|n| n.get("kind").and_then(Value::as_str) == Some("stage"))
                .collect()
        })
        .unwrap_or_default();
    let names: Vec<String> = if stages.is_empty() {
        vec!["work".to_owned()]
    } else {
        stages
            .iter()
            .map(|n| {
                n.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("stage")
                    .to_owned()
            })
            .collect()
    };
    let mut states = Map::new();
    for (i, id) in names.iter().enumerate() {
        let node = stages.get(i);
        let tools: Vec<String> = match node {
            Some(n) => strs(n.get("tools"))
                .into_iter()
                .filter(|t| all.contains(t))
                .collect(),
            None => all.clone(),
        };
        let text = |k: &str| {
            node.and_then(|n| n.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let objective = text("description")
            .or_else(|| text("name"))
            .unwrap_or_else(|| format!("Carry out `{skill}`."));
        let next = names
            .get(i + 1)
            .cloned()
            .unwrap_or_else(|| "done".to_owned());
        states.insert(
            id.clone(),
            json!({"objective": objective, "allowed_tools": tools, "transitions": [{"on": "complete", "to": next}]}),
        );
    }
    states.insert("done".into(), json!({"terminal": true}));
    let mut o = Map::new();
    o.insert("name".into(), skill.into());
    o.insert(
        "description".into(),
        format!("The subgraph composed for `{skill}`.").into(),
    );
    o.insert(
        "initial_state".into(),
        names.first().cloned().unwrap_or_default().into(),
    );
    if let Some(s) = c
        .pointer("/exit_condition/output_schema")
        .filter(|s| !s.is_null())
    {
        o.insert("output_schema".into(), s.clone());
    }
    o.insert("states".into(), Value::Object(states));
    if let Some(n) = c
        .pointer("/exit_condition/max_tool_calls")
        .and_then(Value::as_u64)
    {
        o.insert("max_steps".into(), (n + names.len() as u64 + 1).into());
    }
    o.insert("interruptible".into(), true.into());
    Value::Object(o)
}
