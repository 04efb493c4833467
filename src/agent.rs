//! The agent loop as a machine without I/O: lower, send, read, persist, run the tools,
//! repeat. [`AgentRun`] decides every step — which calls are still unanswered when a thread
//! is resumed, the lowering options of each request (the tools, the arbiter's system text
//! merged with the caller's), the text each refusal, transition, finish or unknown tool
//! sends back to the model, what an aborted reply keeps, when the loop stops — and answers
//! each [`Event`] the host feeds it with the next [`Action`] for the host to perform. Every
//! face drives this one machine: the npm package's `runAgent`, the component's `agent-run`
//! and `run-agent`, and [`run_agent`] for Rust hosts.
//!
//! ```text
//!   start(last turn) ─► [unanswered calls?] ─► answer ─► Append(tool turn) ─► Status? ─┐
//!        │                                                                           │
//!        └──────────────► Offer? ─► Send(options) ─► Received(turn) ─► Append ─► calls? ┘
//!                                                 └─► Cut(turn) ─► Append(kept) ─► Done
//! ```
//!
//! With an arbiter (a skill state machine running in a lane), each request is lowered with
//! the lane's step offer, every call is proposed first, and a refusal goes back to the model
//! as an error result naming what the state allows.

use crate::conversation::{Conversation, ConversationOptions, Turn};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::{JsonText, ObjectText};
use crate::wire::json_value;
use serde_json::{Map, Value};

/// The steps a run takes when the caller names none.
pub const DEFAULT_MAX_STEPS: u32 = 8;
/// The tool through which a model proposes a skill transition (the arbiter's).
pub const TRANSITION_TOOL: &str = "skill_transition";
/// The tool through which a model finishes a skill's terminal state (the arbiter's).
pub const FINISH_TOOL: &str = "skill_finish";

/// How a run is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOptions {
    /// Model requests at most (each one a step).
    pub max_steps: u32,
    /// The host proposes every call to an arbiter and lowers with its step offer.
    pub arbiter: bool,
    /// The lowering options of every request (`provider`, `system`, `params`, …).
    pub lower: Map<String, Value>,
    /// The tool definitions offered to the model (with an arbiter: the descriptions the
    /// offer draws from).
    pub tools: Vec<Value>,
}

fn wrong(path: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        "`defaults` and `lower` must be objects, `tools` an array, `max_steps` a positive integer, `arbiter` a boolean",
    )
    .at(path)
}

impl AgentOptions {
    /// A run lowering with `lower`, no tools, no arbiter, [`DEFAULT_MAX_STEPS`].
    pub fn new(lower: Map<String, Value>) -> AgentOptions {
        AgentOptions {
            max_steps: DEFAULT_MAX_STEPS,
            arbiter: false,
            lower,
            tools: Vec::new(),
        }
    }

    /// The options from their parts: the lowering options are `defaults` (a conversation's
    /// own) with `lower`'s keys over them (either may be `null`); `tools` an array or `null`.
    pub fn from_parts(
        defaults: Value,
        lower: Value,
        tools: Value,
        max_steps: u32,
        arbiter: bool,
    ) -> Result<AgentOptions> {
        let mut o = Map::new();
        for (k, v) in [("defaults", defaults), ("lower", lower)] {
            match v {
                Value::Null => {}
                Value::Object(m) => o.extend(m),
                _ => return Err(wrong(k)),
            }
        }
        let tools = match tools {
            Value::Null => Vec::new(),
            Value::Array(a) => a,
            _ => return Err(wrong("tools")),
        };
        if max_steps == 0 {
            return Err(wrong("max_steps"));
        }
        Ok(AgentOptions {
            max_steps,
            arbiter,
            lower: o,
            tools,
        })
    }

    /// Reads `{ defaults?, lower?, tools?, max_steps?, arbiter? }` ([`AgentOptions::from_parts`]).
    pub fn from_json(text: &str) -> Result<AgentOptions> {
        let Value::Object(mut o) =
            json_value(text, "the agent options", ErrorKind::InvalidOptions)?
        else {
            return Err(wrong("$"));
        };
        let mut take = |k: &str| o.remove(k).unwrap_or(Value::Null);
        let (defaults, lower, tools) = (take("defaults"), take("lower"), take("tools"));
        let max_steps = match take("max_steps") {
            Value::Null => DEFAULT_MAX_STEPS,
            v => match v.as_u64() {
                Some(n @ 1..=0xffff_ffff) => n as u32,
                _ => return Err(wrong("max_steps")),
            },
        };
        let arbiter = match take("arbiter") {
            Value::Null => false,
            Value::Bool(b) => b,
            _ => return Err(wrong("arbiter")),
        };
        if let Some(k) = o.keys().next() {
            return Err(
                Error::new(ErrorKind::InvalidOptions, "unknown agent option")
                    .at(k.as_str())
                    .with("known", "defaults, lower, tools, max_steps, arbiter"),
            );
        }
        AgentOptions::from_parts(defaults, lower, tools, max_steps, arbiter)
    }
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The model answered without calling a tool.
    Final,
    /// The arbiter's run is no longer running (finished, failed or cancelled).
    Arbiter,
    /// [`AgentOptions::max_steps`] requests were made.
    MaxSteps,
    /// The host aborted (before a request, or with the reply cut).
    Aborted,
}

impl Stop {
    /// `final`, `arbiter`, `max-steps` or `aborted`.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Final => "final",
            Stop::Arbiter => "arbiter",
            Stop::MaxSteps => "max-steps",
            Stop::Aborted => "aborted",
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Why it stopped.
    pub stop: Stop,
    /// Model requests made.
    pub steps: u32,
    /// Every numeric usage figure of the replies, summed (`input_tokens`, …).
    pub usage: Map<String, Value>,
    /// The last assistant turn received (as the host gave it), if any.
    pub turn: Option<Value>,
}

/// What the host tells the run; each comes with a payload (a JSON value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Begin; the payload is the conversation's last turn (`null` for none): its calls left
    /// unanswered run first.
    Start,
    /// The arbiter's step offer (`{ system, tools, names }`), after [`Action::Offer`].
    Offer,
    /// The arbiter's verdict on a proposed call (`{ accepted, state?, status?, error? }`).
    Verdict,
    /// The tool's output, after [`Action::CallTool`].
    Output,
    /// The tool failed; the payload is its message (a string).
    Failed,
    /// The host has no tool of that name.
    NoTool,
    /// The turn of [`Action::Append`] is in the conversation (and persisted).
    Appended,
    /// The model's reply to [`Action::Send`]: the assistant turn.
    Received,
    /// The reply was cut (aborted mid-stream); the payload is the turn read so far, or `null`.
    Cut,
    /// The host aborted before sending.
    Aborted,
    /// Whether the arbiter's run is still running (a boolean), after [`Action::Status`].
    Status,
}

/// The events by their wire names, in [`Event`]'s order (a face may pass the index).
pub const EVENTS: [&str; 11] = [
    "start", "offer", "verdict", "output", "failed", "no-tool", "appended", "received", "cut",
    "aborted", "status",
];

impl Event {
    /// The event at `index` in [`EVENTS`].
    pub fn at(index: usize) -> Option<Event> {
        use Event::*;
        [
            Start, Offer, Verdict, Output, Failed, NoTool, Appended, Received, Cut, Aborted, Status,
        ]
        .get(index)
        .copied()
    }

    /// An event from its name and payload text, as the faces pass them: `start` (the last
    /// turn's JSON, or empty), `offer`, `verdict`, `output`, `received` (JSON), `failed` (a
    /// message), `no-tool`, `appended`, `cut` (JSON, or empty), `aborted`, `status` (`true`
    /// / `false`).
    pub fn from_wire(name: &str, payload: &str) -> Result<(Event, Value)> {
        let Some(e) = EVENTS.iter().position(|n| *n == name).and_then(Event::at) else {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("`{name}` is not an agent event"),
            )
            .with("known", EVENTS.join(", ")));
        };
        Ok((e, e.payload(payload)?))
    }

    /// This event's payload from its text.
    pub fn payload(self, text: &str) -> Result<Value> {
        Ok(match self {
            Event::Failed => Value::String(text.to_owned()),
            Event::Status => Value::Bool(text == "true"),
            _ if text.is_empty() => Value::Null,
            Event::NoTool | Event::Appended | Event::Aborted => Value::Null,
            _ => json_value(text, "the event's payload", ErrorKind::InvalidRequest)?,
        })
    }
}

/// What the run asks the host to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Ask the arbiter for the lane's step offer (with [`AgentOptions::tools`]); answer
    /// [`Event::Offer`].
    Offer,
    /// Propose `call` (a `tool-call` part) to the arbiter under the offer's `names`; answer
    /// [`Event::Verdict`].
    Propose {
        /// The model's tool call.
        call: Value,
        /// The offer's names: offered name → tool name.
        names: Value,
    },
    /// Run the tool `name` with `call.input`; answer [`Event::Output`], [`Event::Failed`]
    /// or [`Event::NoTool`].
    CallTool {
        /// The host's tool name (the arbiter's offered name mapped back).
        name: String,
        /// The model's tool call.
        call: Value,
    },
    /// Append a turn to the conversation (persisted first, where the host keeps a store);
    /// answer [`Event::Appended`].
    Append {
        /// The turn (its wire form), or `None` for the reply of [`Event::Received`].
        turn: Option<Value>,
    },
    /// Lower the conversation with `options` and send it; answer [`Event::Received`],
    /// [`Event::Cut`], or [`Event::Aborted`] when the host aborted before sending.
    Send {
        /// The lowering options of this request.
        options: Value,
        /// This request's number, from 1.
        step: u32,
    },
    /// Ask whether the arbiter's run is still running; answer [`Event::Status`].
    Status,
    /// The run is over.
    Done(Outcome),
}

impl Action {
    /// The action as JSON text: `{ "do": "offer" | "propose" | "tool" | "append" | "send" |
    /// "status" | "done", … }`.
    pub fn to_json(&self) -> String {
        let mut o = ObjectText::new(128);
        match self {
            Action::Offer => o.str("do", "offer"),
            Action::Propose { call, names } => {
                o.str("do", "propose");
                o.value("call", call);
                o.value("names", names);
            }
            Action::CallTool { name, call } => {
                o.str("do", "tool");
                o.str("name", name);
                o.value("call", call);
            }
            Action::Append { turn } => {
                o.str("do", "append");
                if let Some(t) = turn {
                    o.value("turn", t);
                }
            }
            Action::Send { options, step } => {
                o.str("do", "send");
                o.value("options", options);
                o.raw("step", &step.to_string());
            }
            Action::Status => o.str("do", "status"),
            Action::Done(out) => {
                o.str("do", "done");
                o.str("stop", out.stop.name());
                o.raw("steps", &out.steps.to_string());
                o.map("usage", &out.usage);
            }
        }
        o.finish()
    }
}

/// Where the run is: which event it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    /// The offer, then answer the calls (a resumed thread) or send.
    Offer {
        then_send: bool,
    },
    Verdict,
    Tool,
    /// The tool turn appended.
    Results,
    Status,
    Reply,
    /// The reply appended.
    Appending,
    /// The kept part of a cut reply appended.
    Cut,
    Done,
}

/// One agent run (see the module's documentation).
#[derive(Debug, Clone)]
pub struct AgentRun {
    options: AgentOptions,
    phase: Phase,
    steps: u32,
    usage: Map<String, Value>,
    /// The arbiter's last offer (`null` before one).
    offer: Value,
    /// The calls being answered, the next one's index, and the results so far.
    calls: Vec<Value>,
    next: usize,
    results: Vec<Value>,
    /// The host's name of the call being run.
    tool: String,
    /// The last reply received (`null` before one).
    turn: Value,
}

/// `v[k]` as a string.
#[inline(never)]
fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// The parts of `turn` of these types (`tool-call`; or `text` and `reasoning`), copied.
fn parts_of(turn: &Value, types: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(parts) = turn.get("parts").and_then(Value::as_array) {
        for p in parts {
            if p.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| types.contains(&t))
            {
                out.push(p.clone());
            }
        }
    }
    out
}

/// What stays of a reply cut mid-way (the user stopped it, or the page that read it went
/// away): its text and reasoning parts, without the tool calls it was still writing, marked
/// `metadata.cut: true` so a thread read back shows it as cut (`status: cut` in [`crate::chat::view`]).
/// `None` when it had no text yet: nothing was shown, so nothing is kept.
// One caller in the lowering-only modules (the agent loop), so it is inlined there; the
// drafts call it too in the others.
#[cfg_attr(feature = "lowering-only", inline(always))]
pub fn cut(turn: Value) -> Option<Value> {
    let kept = parts_of(&turn, &["text", "reasoning"]);
    let Value::Object(mut t) = turn else {
        return None;
    };
    let shown = kept.iter().any(|p| {
        p.get("type").and_then(Value::as_str) == Some("text")
            && p.get("text")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
    });
    if !shown {
        return None;
    }
    t.insert("parts".into(), Value::Array(kept));
    if let Some(Value::Object(m)) = t.get_mut("metadata") {
        m.insert("cut".into(), true.into());
    } else {
        let mut m = serde_json::Map::new();
        m.insert("cut".into(), true.into());
        t.insert("metadata".into(), Value::Object(m));
    }
    Some(Value::Object(t))
}

/// A value as text in a message: a string as it is, anything else as JSON.
fn shown(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.json_text(),
        None => "undefined".into(),
    }
}

/// The names in `v` (an array of strings) joined, or `none`.
fn listed(v: Option<&Value>) -> String {
    let mut out = String::new();
    for n in v.and_then(Value::as_array).into_iter().flatten() {
        if let Some(n) = n.as_str() {
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str(n);
        }
    }
    if out.is_empty() {
        out.push_str("none");
    }
    out
}

/// Adds every numeric figure of `u` to `total` (integers stay integers).
fn add_usage(total: &mut Map<String, Value>, u: Option<&Value>) {
    let Some(Value::Object(u)) = u else { return };
    for (k, v) in u {
        let Value::Number(n) = v else { continue };
        let sum = match (total.get(k), n.as_u64()) {
            (None, _) => Some(v.clone()),
            (Some(a), Some(b)) => a.as_u64().and_then(|a| a.checked_add(b)).map(Value::from),
            _ => None,
        };
        let sum = sum.unwrap_or_else(|| {
            let a = total.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            serde_json::Number::from_f64(a + n.as_f64().unwrap_or(0.0))
                .map_or(Value::Null, Value::Number)
        });
        total.insert(k.clone(), sum);
    }
}

impl AgentRun {
    /// A run with these options; feed it [`Event::Start`] first.
    pub fn new(options: AgentOptions) -> AgentRun {
        AgentRun {
            options,
            phase: Phase::Start,
            steps: 0,
            usage: Map::new(),
            offer: Value::Null,
            calls: Vec::new(),
            next: 0,
            results: Vec::new(),
            tool: String::new(),
            turn: Value::Null,
        }
    }

    /// The options it runs with.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Model requests made so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The last reply received.
    pub fn turn(&self) -> Option<&Value> {
        Some(&self.turn).filter(|t| !t.is_null())
    }

    /// The next action, given what the host did (`event`, with its `payload`). An event
    /// the run does not wait for is `InvalidRequest` and changes nothing.
    pub fn next(&mut self, event: Event, payload: Value) -> Result<Action> {
        use Event as E;
        let ok = match self.phase {
            Phase::Start => event == E::Start,
            Phase::Offer { .. } => event == E::Offer,
            Phase::Verdict => event == E::Verdict,
            Phase::Tool => matches!(event, E::Output | E::Failed | E::NoTool),
            Phase::Results | Phase::Appending | Phase::Cut => event == E::Appended,
            Phase::Status => event == E::Status,
            Phase::Reply => matches!(event, E::Received | E::Cut | E::Aborted),
            Phase::Done => false,
        };
        if !ok {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!(
                    "the agent run does not wait for `{}` now",
                    EVENTS.get(event as usize).unwrap_or(&"?")
                ),
            ));
        }
        Ok(match (self.phase, event) {
            (Phase::Start, _) => {
                let pending = if str_of(&payload, "role") == Some("assistant") {
                    parts_of(&payload, &["tool-call"])
                } else {
                    Vec::new()
                };
                if pending.is_empty() {
                    self.step()
                } else {
                    // A thread reloaded after a crash: calls left unanswered run first.
                    self.answering(pending);
                    if self.options.arbiter {
                        self.phase = Phase::Offer { then_send: false };
                        Action::Offer
                    } else {
                        self.answer()
                    }
                }
            }
            (Phase::Offer { then_send }, _) => {
                self.offer = payload;
                if then_send {
                    self.send()
                } else {
                    self.answer()
                }
            }
            (Phase::Verdict, _) => self.verdict(&payload),
            (Phase::Tool, E::Output) if payload.is_null() => {
                self.result(Value::String(String::new()), false)
            }
            (Phase::Tool, E::Output) => self.result(payload, false),
            (Phase::Tool, E::Failed) => self.result(payload, true),
            (Phase::Tool, _) => {
                let text = format!("No tool named `{}` is available.", self.tool);
                self.result(Value::String(text), true)
            }
            (Phase::Results, _) if self.options.arbiter => {
                self.phase = Phase::Status;
                Action::Status
            }
            (Phase::Status, _) if payload != Value::Bool(true) => self.done(Stop::Arbiter),
            (Phase::Results | Phase::Status, _) => self.step(),
            (Phase::Reply, E::Aborted) => self.done(Stop::Aborted),
            (Phase::Reply, E::Received) => {
                self.steps += 1;
                self.turn = payload;
                self.phase = Phase::Appending;
                Action::Append { turn: None }
            }
            (Phase::Reply, _) => {
                self.steps += 1;
                // What was shown stays in the thread, marked cut.
                match cut(payload) {
                    Some(t) => {
                        self.phase = Phase::Cut;
                        Action::Append { turn: Some(t) }
                    }
                    None => self.done(Stop::Aborted),
                }
            }
            (Phase::Cut, _) => self.done(Stop::Aborted),
            (Phase::Appending, _) => {
                add_usage(
                    &mut self.usage,
                    self.turn.get("metadata").and_then(|m| m.get("usage")),
                );
                let calls = parts_of(&self.turn, &["tool-call"]);
                if calls.is_empty() {
                    self.done(Stop::Final)
                } else {
                    self.answering(calls);
                    self.answer()
                }
            }
            (Phase::Done, _) => self.done(Stop::Final),
        })
    }

    fn answering(&mut self, calls: Vec<Value>) {
        self.calls = calls;
        self.next = 0;
        self.results.clear();
    }

    /// The arbiter's verdict on the current call: a refusal, a transition or a finish is
    /// answered here; an accepted tool call runs under its own name.
    fn verdict(&mut self, v: &Value) -> Action {
        let call = self.calls.get(self.next).cloned().unwrap_or(Value::Null);
        let name = str_of(&call, "name").unwrap_or("");
        let text = if v.get("accepted") != Some(&Value::Bool(true)) {
            let e = v.get("error").unwrap_or(&Value::Null);
            let why = match (e.get("message"), e.get("code")) {
                (Some(m), _) if !m.is_null() => shown(Some(m)),
                (_, Some(c)) if !c.is_null() => shown(Some(c)),
                _ => "not allowed".into(),
            };
            let text = format!(
                "The skill's arbiter refused this call: {why}. Allowed tools: {}; transitions: {}.",
                listed(e.get("allowed_tools")),
                listed(e.get("transitions"))
            );
            return self.result(Value::String(text), true);
        } else if name == TRANSITION_TOOL {
            format!("Moved to state `{}`.", shown(v.get("state")))
        } else if name == FINISH_TOOL {
            format!("The skill finished ({}).", shown(v.get("status")))
        } else {
            let mapped = self
                .offer
                .get("names")
                .and_then(|n| n.get(name))
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_owned();
            return self.call_tool(mapped, call);
        };
        self.result(Value::String(text), false)
    }

    /// The next request: stop at the step limit, else the offer (with an arbiter), else send.
    fn step(&mut self) -> Action {
        if self.steps >= self.options.max_steps {
            return self.done(Stop::MaxSteps);
        }
        if self.options.arbiter {
            self.phase = Phase::Offer { then_send: true };
            return Action::Offer;
        }
        self.send()
    }

    /// The lowering options of the next request: the run's, with its tools; with an arbiter,
    /// the offer's tools and its system text after the caller's.
    fn send(&mut self) -> Action {
        let mut o = self.options.lower.clone();
        if self.options.arbiter {
            let offered = self.offer.get("system").cloned().unwrap_or(Value::Null);
            let system = match (o.get("system").and_then(Value::as_str), offered) {
                (Some(s), t) if !s.is_empty() => {
                    Value::String(format!("{s}\n\n{}", shown(Some(&t))))
                }
                (_, t) => t,
            };
            match self.offer.get("tools") {
                Some(Value::Array(t)) if !t.is_empty() => {
                    o.insert("tools".into(), Value::Array(t.clone()))
                }
                _ => o.remove("tools"),
            };
            if system.is_null() {
                o.remove("system");
            } else {
                o.insert("system".into(), system);
            }
        } else if !self.options.tools.is_empty() {
            o.insert("tools".into(), Value::Array(self.options.tools.clone()));
        }
        self.phase = Phase::Reply;
        Action::Send {
            options: Value::Object(o),
            step: self.steps + 1,
        }
    }

    /// The next call to answer, or the tool turn holding every result.
    fn answer(&mut self) -> Action {
        let Some(call) = self.calls.get(self.next).cloned() else {
            self.phase = Phase::Results;
            let mut t = Map::new();
            t.insert("role".into(), "tool".into());
            t.insert(
                "parts".into(),
                Value::Array(std::mem::take(&mut self.results)),
            );
            return Action::Append {
                turn: Some(Value::Object(t)),
            };
        };
        if self.options.arbiter {
            self.phase = Phase::Verdict;
            let names = self
                .offer
                .get("names")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            return Action::Propose { call, names };
        }
        let name = str_of(&call, "name").unwrap_or("").to_owned();
        self.call_tool(name, call)
    }

    fn call_tool(&mut self, name: String, call: Value) -> Action {
        self.phase = Phase::Tool;
        self.tool.clone_from(&name);
        Action::CallTool { name, call }
    }

    /// Records the current call's result, then moves to the next call.
    fn result(&mut self, output: Value, is_error: bool) -> Action {
        let call = self.calls.get(self.next);
        let field = |k: &str| call.and_then(|c| c.get(k)).cloned().unwrap_or(Value::Null);
        let mut r = Map::new();
        r.insert("type".into(), "tool-result".into());
        r.insert("call_id".into(), field("id"));
        r.insert("name".into(), field("name"));
        r.insert("output".into(), output);
        if is_error {
            r.insert("is_error".into(), Value::Bool(true));
        }
        self.results.push(Value::Object(r));
        self.next += 1;
        self.answer()
    }

    fn done(&mut self, stop: Stop) -> Action {
        self.phase = Phase::Done;
        Action::Done(Outcome {
            stop,
            steps: self.steps,
            usage: self.usage.clone(),
            turn: self.turn().cloned(),
        })
    }
}

/// What a model request gave back to [`run_agent`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The assistant turn (its wire form).
    Turn(Value),
    /// The reply was cut (aborted mid-way), with what was read.
    Cut(Option<Value>),
    /// Aborted before the request was sent.
    Aborted,
}

/// What a host does for [`run_agent`]: the model call, the tools, the persistence, and (for
/// a run with an arbiter) the arbiter's offer, verdicts and status.
pub trait AgentHost {
    /// Sends the lowered body of request `step` and reads the reply.
    fn send(&mut self, body: &str, step: u32) -> Result<Reply>;
    /// Runs tool `name` with `call`'s input: `None` when the host has no such tool,
    /// `Some(Err(message))` when it failed.
    fn call_tool(&mut self, name: &str, call: &Value)
        -> Option<std::result::Result<Value, String>>;
    /// Persists `turn` before the conversation takes it (default: nothing to persist).
    fn persist(&mut self, turn: &Value) -> Result<()> {
        let _ = turn;
        Ok(())
    }
    /// The arbiter's step offer (runs with an arbiter only).
    fn offer(&mut self, tools: &[Value]) -> Result<Value> {
        let _ = tools;
        Err(no_arbiter())
    }
    /// The arbiter's verdict on `call` under the offer's `names`.
    fn propose(&mut self, call: &Value, names: &Value) -> Result<Value> {
        let _ = (call, names);
        Err(no_arbiter())
    }
    /// Whether the arbiter's run is still running.
    fn running(&mut self) -> Result<bool> {
        Ok(true)
    }
}

impl<H: AgentHost + ?Sized> AgentHost for &mut H {
    fn send(&mut self, body: &str, step: u32) -> Result<Reply> {
        (**self).send(body, step)
    }
    fn call_tool(
        &mut self,
        name: &str,
        call: &Value,
    ) -> Option<std::result::Result<Value, String>> {
        (**self).call_tool(name, call)
    }
    fn persist(&mut self, turn: &Value) -> Result<()> {
        (**self).persist(turn)
    }
    fn offer(&mut self, tools: &[Value]) -> Result<Value> {
        (**self).offer(tools)
    }
    fn propose(&mut self, call: &Value, names: &Value) -> Result<Value> {
        (**self).propose(call, names)
    }
    fn running(&mut self) -> Result<bool> {
        (**self).running()
    }
}

fn no_arbiter() -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        "the run was set up with `arbiter: true`, but the host answers no arbiter calls",
    )
}

/// Runs `conversation` until the model's final answer (or a stop), with `host` doing the
/// I/O: the driver of [`AgentRun`] for Rust hosts.
pub fn run_agent(
    conversation: &mut Conversation,
    options: AgentOptions,
    host: &mut dyn AgentHost,
) -> Result<Outcome> {
    let tools = options.tools.clone();
    let last = conversation.turns().last().map(Turn::to_value);
    let mut run = AgentRun::new(options);
    let mut lowering: Option<(Value, ConversationOptions)> = None;
    let mut action = run.next(Event::Start, last.unwrap_or(Value::Null))?;
    loop {
        let (event, payload) = match action {
            Action::Done(out) => return Ok(out),
            Action::Offer => (Event::Offer, host.offer(&tools)?),
            Action::Propose { call, names } => (Event::Verdict, host.propose(&call, &names)?),
            Action::CallTool { name, call } => match host.call_tool(&name, &call) {
                None => (Event::NoTool, Value::Null),
                Some(Ok(v)) => (Event::Output, v),
                Some(Err(m)) => (Event::Failed, Value::String(m)),
            },
            Action::Append { turn } => {
                let value = turn.unwrap_or_else(|| run.turn().cloned().unwrap_or(Value::Null));
                host.persist(&value)?;
                conversation.append(Turn::from_value(value)?, Default::default());
                (Event::Appended, Value::Null)
            }
            Action::Send { options, step } => {
                if lowering.as_ref().is_none_or(|(v, _)| *v != options) {
                    let parsed = ConversationOptions::from_value(options.clone())?;
                    lowering = Some((options, parsed));
                }
                let Some((_, opts)) = &lowering else {
                    return Err(Error::new(ErrorKind::Internal, "the options were lost"));
                };
                let body = conversation.lower(opts)?.body;
                match host.send(&body, step)? {
                    Reply::Turn(t) => (Event::Received, t),
                    Reply::Cut(t) => (Event::Cut, t.unwrap_or(Value::Null)),
                    Reply::Aborted => (Event::Aborted, Value::Null),
                }
            }
            Action::Status => (Event::Status, Value::Bool(host.running()?)),
        };
        action = run.next(event, payload)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: Value) -> AgentOptions {
        AgentOptions::from_json(&v.to_string()).unwrap()
    }

    #[test]
    fn a_reply_without_calls_is_final() {
        let mut run = AgentRun::new(opts(json!({ "lower": { "provider": "anthropic" } })));
        let a = run.next(Event::Start, Value::Null).unwrap();
        assert_eq!(
            a,
            Action::Send {
                options: json!({ "provider": "anthropic" }),
                step: 1
            }
        );
        let turn = json!({ "role": "assistant", "parts": [{ "type": "text", "text": "hi" }],
                           "metadata": { "usage": { "input_tokens": 3, "output_tokens": 2 } } });
        assert_eq!(
            run.next(Event::Received, turn).unwrap(),
            Action::Append { turn: None }
        );
        let a = run.next(Event::Appended, Value::Null).unwrap();
        assert_eq!(
            a.to_json(),
            r#"{"do":"done","stop":"final","steps":1,"usage":{"input_tokens":3,"output_tokens":2}}"#
        );
    }

    #[test]
    fn calls_are_answered_in_one_tool_turn() {
        let mut run = AgentRun::new(opts(json!({ "tools": [{ "name": "a" }], "max_steps": 1 })));
        let Action::Send { options, .. } = run.next(Event::Start, Value::Null).unwrap() else {
            panic!()
        };
        assert_eq!(options, json!({ "tools": [{ "name": "a" }] }));
        let turn = json!({ "role": "assistant", "parts": [
            { "type": "tool-call", "id": "1", "name": "a", "input": {} },
            { "type": "tool-call", "id": "2", "name": "b", "input": {} },
            { "type": "tool-call", "id": "3", "name": "a", "input": {} }] });
        run.next(Event::Received, turn).unwrap();
        let a = run.next(Event::Appended, Value::Null).unwrap();
        assert!(matches!(a, Action::CallTool { ref name, .. } if name == "a"));
        run.next(Event::Output, json!({ "x": 1 })).unwrap();
        run.next(Event::NoTool, Value::Null).unwrap();
        let Action::Append { turn: Some(t) } = run.next(Event::Failed, json!("down")).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            t,
            json!({"role":"tool","parts":[{"type":"tool-result","call_id":"1","name":"a","output":{"x":1}},{"type":"tool-result","call_id":"2","name":"b","output":"No tool named `b` is available.","is_error":true},{"type":"tool-result","call_id":"3","name":"a","output":"down","is_error":true}]})
        );
        let Action::Done(out) = run.next(Event::Appended, Value::Null).unwrap() else {
            panic!()
        };
        assert_eq!(out.stop, Stop::MaxSteps);
    }

    #[test]
    fn a_refusal_names_what_the_state_allows() {
        let mut run = AgentRun::new(opts(
            json!({ "arbiter": true, "lower": { "system": "Be brief." } }),
        ));
        let last = json!({ "role": "assistant", "parts": [{ "type": "tool-call", "id": "1", "name": "rm", "input": {} }] });
        assert_eq!(run.next(Event::Start, last).unwrap(), Action::Offer);
        let offer = json!({ "system": "State: research.", "tools": [], "names": {} });
        assert!(matches!(
            run.next(Event::Offer, offer).unwrap(),
            Action::Propose { .. }
        ));
        let verdict = json!({ "accepted": false, "error": { "message": "`rm` is not allowed", "allowed_tools": ["docs.search"], "transitions": [] } });
        let Action::Append { turn: Some(t) } = run.next(Event::Verdict, verdict).unwrap() else {
            panic!()
        };
        assert_eq!(t["parts"][0]["output"], "The skill's arbiter refused this call: `rm` is not allowed. Allowed tools: docs.search; transitions: none.");
        assert_eq!(
            run.next(Event::Appended, Value::Null).unwrap(),
            Action::Status
        );
        assert_eq!(run.next(Event::Status, json!(true)).unwrap(), Action::Offer);
        let offer = json!({ "system": "State: research.", "tools": [{ "name": "docs_search" }], "names": { "docs_search": "docs.search" } });
        let Action::Send { options, .. } = run.next(Event::Offer, offer).unwrap() else {
            panic!()
        };
        assert_eq!(
            options,
            json!({ "system": "Be brief.\n\nState: research.", "tools": [{ "name": "docs_search" }] })
        );
        // An event it does not wait for changes nothing.
        assert!(run.next(Event::Appended, Value::Null).is_err());
        let turn = json!({ "role": "assistant", "parts": [{ "type": "tool-call", "id": "2", "name": "docs_search", "input": {} }] });
        run.next(Event::Received, turn).unwrap();
        run.next(Event::Appended, Value::Null).unwrap();
        let a = run
            .next(
                Event::Verdict,
                json!({ "accepted": true, "status": "running" }),
            )
            .unwrap();
        assert!(matches!(a, Action::CallTool { ref name, .. } if name == "docs.search"));
    }

    #[test]
    fn a_cut_reply_keeps_its_text() {
        let mut run = AgentRun::new(AgentOptions::new(Map::new()));
        run.next(Event::Start, Value::Null).unwrap();
        let cut = json!({ "role": "assistant", "parts": [{ "type": "text", "text": "Hel" },
            { "type": "tool-call", "id": "1", "name": "a", "input": {} }], "metadata": { "finish": "aborted" } });
        let Action::Append { turn: Some(t) } = run.next(Event::Cut, cut).unwrap() else {
            panic!()
        };
        assert_eq!(
            t,
            json!({"role":"assistant","parts":[{"text":"Hel","type":"text"}],"metadata":{"cut":true,"finish":"aborted"}})
        );
        let Action::Done(out) = run.next(Event::Appended, Value::Null).unwrap() else {
            panic!()
        };
        assert_eq!((out.stop, out.steps), (Stop::Aborted, 1));
        let mut run = AgentRun::new(AgentOptions::new(Map::new()));
        run.next(Event::Start, Value::Null).unwrap();
        let Action::Done(out) = run.next(Event::Aborted, Value::Null).unwrap() else {
            panic!()
        };
        assert_eq!((out.stop, out.steps), (Stop::Aborted, 0));
    }
}
