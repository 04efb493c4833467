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
}

impl SkillSpec {
    /// The state named `name`.
    pub fn state(&self, name: &str) -> Option<&State> {
        self.index(name).and_then(|i| self.states.get(i))
    }

    /// The index of the state named `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        index_in(&self.states, name)
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
    // Every rule runs even without a name, so one pass reports every problem.
    Some(SkillSpec::assemble(
        SkillSpec {
            name: name.unwrap_or_default(),
            description,
            initial_state: initial_state.unwrap_or_default(),
            input_schema: o.get("input_schema").filter(|v| !v.is_null()).cloned(),
            output_schema: o.get("output_schema").filter(|v| !v.is_null()).cloned(),
            states: Vec::new(),
            max_steps,
            interruptible,
        },
        states,
    ))
}

impl SkillSpec {
    /// The spec with its states sorted by name (of a name given twice, the last given is
    /// kept, as a JSON object's map keeps it) and each transition's target index.
    fn assemble(mut spec: SkillSpec, mut states: Vec<State>) -> SkillSpec {
        // Stable, and linear when the states come sorted (the tree's map gives them so).
        states.sort_by(|a, b| a.name.cmp(&b.name));
        let mut kept: Vec<State> = Vec::with_capacity(states.len());
        for st in states {
            match kept.last_mut() {
                Some(last) if last.name == st.name => *last = st,
                _ => kept.push(st),
            }
        }
        let targets: Vec<usize> = kept
            .iter()
            .flat_map(|s| s.transitions.iter())
            .map(|t| index_in(&kept, &t.to).unwrap_or(usize::MAX))
            .collect();
        let slots = kept.iter_mut().flat_map(|s| s.transitions.iter_mut());
        for (t, i) in slots.zip(targets) {
            t.target = i;
        }
        spec.states = kept;
        spec
    }
}

/// The position of the state named `name` in states sorted by name.
fn index_in(states: &[State], name: &str) -> Option<usize> {
    states.binary_search_by(|s| s.name.as_str().cmp(name)).ok()
}

/// The fast path for a spec's text: read straight into a [`SkillSpec`] without a JSON tree
/// in between — only when the text is a JSON object with every field of its documented
/// type, nothing [`read`] would report (no duplicate key, no escaped key, `name` not blank,
/// `max_steps` positive, every transition `{ on, to }` with `on` not empty). For any other
/// text `None`, and the caller reads it through [`read`], which reports every problem; for
/// this text both give the same spec.
pub(crate) fn from_text(text: &str) -> Option<SkillSpec> {
    use serde::de::Deserializer as _;
    let mut de = serde_json::Deserializer::from_str(text);
    let spec = de.deserialize_map(typed::SpecVisitor).ok()?;
    de.end().ok()?;
    Some(spec)
}

/// The visitors of [`from_text`]: maps only (`deserialize_map` refuses an array where
/// `deserialize_struct` would take one), each known key at most once, keys borrowed (an
/// escaped key fails, and the text goes through [`read`]).
mod typed {
    use super::{SkillSpec, State, StateName, Transition, DEFAULT_MAX_STEPS};
    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde_json::Value;
    use std::fmt;

    /// A key seen twice: the caller falls back to the tree reader (where the last wins).
    fn twice<E: de::Error>() -> E {
        E::custom("duplicate key")
    }

    fn once<'de, A: MapAccess<'de>, T: de::Deserialize<'de>>(
        slot: &mut Option<T>,
        map: &mut A,
    ) -> Result<(), A::Error> {
        if slot.is_some() {
            return Err(twice());
        }
        *slot = Some(map.next_value()?);
        Ok(())
    }

    pub(super) struct SpecVisitor;

    impl<'de> Visitor<'de> for SpecVisitor {
        type Value = SkillSpec;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a SkillSpec object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SkillSpec, A::Error> {
            let (mut name, mut description, mut initial): (Option<Option<String>>, _, _) =
                (None, None::<Option<String>>, None::<Option<String>>);
            let (mut input, mut output) = (None::<Value>, None::<Value>);
            let mut states: Option<Vec<State>> = None;
            let mut max_steps: Option<Option<u64>> = None;
            let mut interruptible: Option<Option<bool>> = None;
            while let Some(k) = map.next_key::<&str>()? {
                match k {
                    "name" => once(&mut name, &mut map)?,
                    "description" => once(&mut description, &mut map)?,
                    "initial_state" => once(&mut initial, &mut map)?,
                    "input_schema" => once(&mut input, &mut map)?,
                    "output_schema" => once(&mut output, &mut map)?,
                    "max_steps" => once(&mut max_steps, &mut map)?,
                    "interruptible" => once(&mut interruptible, &mut map)?,
                    "states" => {
                        if states.is_some() {
                            return Err(twice());
                        }
                        states = Some(map.next_value_seed(StatesSeed)?);
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            let refuse = || de::Error::custom("not the fast path");
            let name = name
                .flatten()
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(refuse)?;
            let initial_state = initial.flatten().ok_or_else(refuse)?;
            let max_steps = match max_steps.flatten() {
                None => DEFAULT_MAX_STEPS,
                Some(0) => return Err(refuse()),
                Some(n) => n,
            };
            let schema = |v: Option<Value>| v.filter(|v| !v.is_null());
            Ok(SkillSpec::assemble(
                SkillSpec {
                    name,
                    description: description.flatten().unwrap_or_default(),
                    initial_state,
                    input_schema: schema(input),
                    output_schema: schema(output),
                    states: Vec::new(),
                    max_steps,
                    interruptible: interruptible.flatten().unwrap_or(true),
                },
                states.ok_or_else(refuse)?,
            ))
        }
    }

    /// `states`: an object of states.
    struct StatesSeed;

    impl<'de> de::DeserializeSeed<'de> for StatesSeed {
        type Value = Vec<State>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<State>, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for StatesSeed {
        type Value = Vec<State>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of states")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<State>, A::Error> {
            let mut states: Vec<State> = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(k) = map.next_key::<&str>()? {
                let mut st = map.next_value_seed(StateSeed)?;
                st.name = k.to_owned();
                states.push(st);
            }
            // In the order given: `SkillSpec::assemble` sorts them and keeps the last of a
            // name given twice.
            Ok(states)
        }
    }

    struct StateSeed;

    impl<'de> de::DeserializeSeed<'de> for StateSeed {
        type Value = State;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<State, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for StateSeed {
        type Value = State;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a state object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<State, A::Error> {
            let mut objective: Option<Option<String>> = None;
            let mut terminal: Option<Option<bool>> = None;
            let mut tools: Option<Option<Vec<String>>> = None;
            let mut transitions: Option<Vec<Transition>> = None;
            while let Some(k) = map.next_key::<&str>()? {
                match k {
                    "objective" => once(&mut objective, &mut map)?,
                    "terminal" => once(&mut terminal, &mut map)?,
                    "allowed_tools" => once(&mut tools, &mut map)?,
                    "transitions" => {
                        if transitions.is_some() {
                            return Err(twice());
                        }
                        transitions = Some(map.next_value_seed(TransitionsSeed)?);
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(State {
                name: String::new(),
                objective: objective.flatten().unwrap_or_default(),
                allowed_tools: tools.flatten().unwrap_or_default(),
                transitions: transitions.unwrap_or_default(),
                terminal: terminal.flatten().unwrap_or(false),
            })
        }
    }

    /// `transitions`: `null` or an array of `{ on, to }` (`on` not empty).
    struct TransitionsSeed;

    impl<'de> de::DeserializeSeed<'de> for TransitionsSeed {
        type Value = Vec<Transition>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Transition>, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for TransitionsSeed {
        type Value = Vec<Transition>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("null or an array of transitions")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Vec<Transition>, E> {
            Ok(Vec::new())
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Transition>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(t) = seq.next_element_seed(TransitionSeed)? {
                out.push(t);
            }
            Ok(out)
        }
    }

    struct TransitionSeed;

    impl<'de> de::DeserializeSeed<'de> for TransitionSeed {
        type Value = Transition;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Transition, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for TransitionSeed {
        type Value = Transition;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a transition object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Transition, A::Error> {
            // Borrowed: the target becomes a shared name without a `String` in between (an
            // escaped value fails, and the text goes through the tree reader).
            let (mut on, mut to): (Option<&str>, Option<&str>) = (None, None);
            while let Some(k) = map.next_key::<&str>()? {
                match k {
                    "on" => once(&mut on, &mut map)?,
                    "to" => once(&mut to, &mut map)?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            match (on, to) {
                (Some(on), Some(to)) if !on.is_empty() => Ok(Transition {
                    on: on.to_owned(),
                    to: StateName::from(to),
                    target: usize::MAX,
                }),
                _ => Err(de::Error::custom("not the fast path")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Well-shaped text takes the fast reader, and it reads the spec the tree reader reads.
    #[test]
    fn the_fast_reader_reads_what_the_tree_reader_reads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/arbiter/specs");
        let mut fast = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let mut problems = Problems::default();
            let tree = read(&serde_json::from_str(&text).unwrap(), &mut problems);
            match from_text(&text) {
                Some(s) => {
                    assert!(problems.0.is_empty(), "{text}");
                    assert_eq!(Some(s), tree);
                    fast += 1;
                }
                None => assert!(!problems.0.is_empty(), "{text}"),
            }
        }
        assert!(fast >= 8, "{fast}");
        let escaped = r#"{"name":"n","initial_state":"a","states":{"\u0061":{"terminal":true}}}"#;
        assert!(from_text(escaped).is_none());
        let dup = r#"{"name":"n","initial_state":"a","states":{"a":{"objective":"1"},"a":{"terminal":true}}}"#;
        let mut problems = Problems::default();
        let tree = read(&serde_json::from_str(dup).unwrap(), &mut problems);
        assert_eq!(from_text(dup), tree);
        assert!(tree.is_some_and(|s| s.states.len() == 1 && s.states[0].terminal));
    }
}
