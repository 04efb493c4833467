//! The `SkillSpec`: a skill as a deterministic state machine (the seed's schema), read from
//! JSON with every problem of its shape collected, and checked as a graph by
//! [`super::validate`].

use crate::problems::Problems;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A state's name as a run and its log hold it: shared, so moving to a state or logging
/// one copies no text. Reads as a `str` (and compares with one); JSON writes it as a string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(transparent)]
pub struct StateName(Arc<str>);

impl StateName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for StateName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for StateName {
    fn from(s: &str) -> Self {
        StateName(Arc::from(s))
    }
}

impl PartialEq<str> for StateName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for StateName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl std::fmt::Display for StateName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One transition: on `on`, go to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The event name.
    pub on: String,
    /// The target state (shared: a run moving there holds the same name, not a copy).
    pub to: StateName,
    /// The target's index in the spec's states (`usize::MAX` for an unknown target, which
    /// validation refuses).
    #[serde(skip)]
    pub(crate) target: usize,
}

/// One state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct State {
    /// The state's name.
    pub name: String,
    /// What the model should accomplish here.
    pub objective: String,
    /// The tools the model may call here.
    pub allowed_tools: Vec<String>,
    /// Exits.
    pub transitions: Vec<Transition>,
    /// An end state.
    pub terminal: bool,
}

impl State {
    /// The transition taken on `event`, if any.
    pub fn transition(&self, event: &str) -> Option<&Transition> {
        self.transitions.iter().find(|t| t.on == event)
    }
}

/// A skill state machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillSpec {
    /// Unique skill identifier.
    pub name: String,
    /// Human-readable purpose.
    pub description: String,
    /// The starting state.
    pub initial_state: String,
    /// JSON Schema of the input.
    pub input_schema: Option<Value>,
    /// JSON Schema of the output.
    pub output_schema: Option<Value>,
    /// The states, by name (JSON object order is not kept: sorted by name).
    pub states: Vec<State>,
    /// Model steps before forced termination (default 50).
    pub max_steps: u64,
    /// Whether a run can be cancelled (default true).
    pub interruptible: bool,
    /// State name → position in `states`.
    #[serde(skip)]
    lookup: std::collections::BTreeMap<String, usize>,
}

impl SkillSpec {
    /// The state named `name`.
    pub fn state(&self, name: &str) -> Option<&State> {
        self.index(name).and_then(|i| self.states.get(i))
    }

    /// The index of the state named `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.lookup.get(name).copied()
    }

    /// The JSON form (the seed's schema; `states` as an object).
    pub fn to_value(&self) -> Value {
        let mut states = Map::new();
        for s in &self.states {
            let mut o = Map::new();
            if s.terminal {
                o.insert("terminal".into(), true.into());
            }
            if !s.objective.is_empty() {
                o.insert("objective".into(), s.objective.clone().into());
            }
            if !s.allowed_tools.is_empty() {
                o.insert("allowed_tools".into(), s.allowed_tools.clone().into());
            }
            if !s.transitions.is_empty() {
                o.insert(
                    "transitions".into(),
                    serde_json::to_value(&s.transitions).unwrap_or(Value::Null),
                );
            }
            states.insert(s.name.clone(), Value::Object(o));
        }
        let mut o = Map::new();
        o.insert("name".into(), self.name.clone().into());
        o.insert("description".into(), self.description.clone().into());
        o.insert("initial_state".into(), self.initial_state.clone().into());
        if let Some(s) = &self.input_schema {
            o.insert("input_schema".into(), s.clone());
        }
        if let Some(s) = &self.output_schema {
            o.insert("output_schema".into(), s.clone());
        }
        o.insert("states".into(), Value::Object(states));
        o.insert("max_steps".into(), self.max_steps.into());
        o.insert("interruptible".into(), self.interruptible.into());
        Value::Object(o)
    }
}

/// The default `max_steps`.
pub const DEFAULT_MAX_STEPS: u64 = 50;

fn strings(v: Option<&Value>, path: impl Fn() -> String, out: &mut Problems) -> Vec<String> {
    match v {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .filter_map(|(i, x)| match x.as_str() {
                Some(s) => Some(s.to_owned()),
                None => {
                    out.error(
                        &format!("{}[{i}]", path()),
                        "wrong-type",
                        "expected a string",
                    );
                    None
                }
            })
            .collect(),
        Some(_) => {
            out.error(&path(), "wrong-type", "expected an array of strings");
            Vec::new()
        }
    }
}

/// Reads a spec's shape, collecting every problem (the graph rules are
/// [`super::validate::check`]'s). `None` when it is not an object.
pub(crate) fn read(v: &Value, out: &mut Problems) -> Option<SkillSpec> {
    let Some(o) = v.as_object() else {
        out.error("", "wrong-type", "a SkillSpec must be a JSON object");
        return None;
    };
    let s = |k: &str, out: &mut Problems| -> Option<String> {
        match o.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::String(x)) => Some(x.clone()),
            Some(_) => {
                out.error(k, "wrong-type", format!("`{k}` must be a string"));
                None
            }
        }
    };
    let name = s("name", out);
    if name.as_deref().is_none_or(|n| n.trim().is_empty()) {
        out.error(
            "name",
            "missing-field",
            "a SkillSpec needs a non-empty `name`",
        );
    }
    let description = s("description", out).unwrap_or_default();
    let initial_state = s("initial_state", out);
    if initial_state.is_none() {
        out.error(
            "initial_state",
            "missing-initial-state",
            "`initial_state` is missing",
        );
    }
    let max_steps = match o.get("max_steps") {
        None | Some(Value::Null) => DEFAULT_MAX_STEPS,
        Some(v) => match v.as_u64().filter(|n| *n > 0) {
            Some(n) => n,
            None => {
                out.error(
                    "max_steps",
                    "wrong-type",
                    "`max_steps` must be a positive integer",
                );
                DEFAULT_MAX_STEPS
            }
        },
    };
    let interruptible = match o.get("interruptible") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            out.error(
                "interruptible",
                "wrong-type",
                "`interruptible` must be a boolean",
            );
            true
        }
    };
    let mut states = Vec::new();
    match o.get("states") {
        Some(Value::Object(m)) => {
            for (name, st) in m {
                let p = || format!("states.{name}");
                let Some(so) = st.as_object() else {
                    out.error(&p(), "wrong-type", "a state must be an object");
                    continue;
                };
                let objective = match so.get("objective") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(x)) => x.clone(),
                    Some(_) => {
                        out.error(
                            &format!("{}.objective", p()),
                            "wrong-type",
                            "`objective` must be a string",
                        );
                        String::new()
                    }
                };
                let terminal = match so.get("terminal") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        out.error(
                            &format!("{}.terminal", p()),
                            "wrong-type",
                            "`terminal` must be a boolean",
                        );
                        false
                    }
                };
                let allowed_tools = strings(
                    so.get("allowed_tools"),
                    || format!("{}.allowed_tools", p()),
                    out,
                );
                let mut transitions = Vec::new();
                match so.get("transitions") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(a)) => {
                        for (i, t) in a.iter().enumerate() {
                            let on = t.get("on").and_then(Value::as_str);
                            let to = t.get("to").and_then(Value::as_str);
                            match (on, to) {
                                (Some(on), Some(to)) if !on.is_empty() => {
                                    transitions.push(Transition {
                                        on: on.to_owned(),
                                        to: StateName::from(to),
                                        target: usize::MAX,
                                    })
                                }
                                _ => out.error(
                                    &format!("{}.transitions[{i}]", p()),
                                    "wrong-type",
                                    "a transition is `{ on: event, to: state }`",
                                ),
                            }
                        }
                    }
                    Some(_) => out.error(
                        &format!("{}.transitions", p()),
                        "wrong-type",
                        "`transitions` must be an array",
                    ),
                }
                states.push(State {
                    name: name.clone(),
                    objective,
                    allowed_tools,
                    transitions,
                    terminal,
                });
            }
        }
        None => out.error("states", "missing-field", "`states` is missing"),
        Some(_) => out.error("states", "wrong-type", "`states` must be an object"),
    }
    let lookup: std::collections::BTreeMap<String, usize> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect();
    for t in states.iter_mut().flat_map(|s| s.transitions.iter_mut()) {
        t.target = lookup.get(&*t.to).copied().unwrap_or(usize::MAX);
    }
    // Every rule runs even without a name, so one pass reports every problem.
    Some(SkillSpec {
        name: name.unwrap_or_default(),
        description,
        initial_state: initial_state.unwrap_or_default(),
        input_schema: o.get("input_schema").filter(|v| !v.is_null()).cloned(),
        output_schema: o.get("output_schema").filter(|v| !v.is_null()).cloned(),
        lookup,
        states,
        max_steps,
        interruptible,
    })
}
