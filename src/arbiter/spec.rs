//! The `SkillSpec`: a skill as a deterministic state machine (the seed's schema), read from
//! JSON with every problem of its shape collected, and checked as a graph by
//! [`super::validate`].

use crate::json_scan::{Scanner, Seen};
use crate::problems::Problems;
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
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
        crate::sort::sort_by(&mut states, |a, b| a.name.cmp(&b.name));
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

/// A spec as [`super::validate::check`] reads it: the names borrowed (from the spec's text,
/// or from a [`SkillSpec`]), each state's tools and transitions as ranges of two flat lists,
/// the initial state's and each transition target's index. Checking a spec's text builds
/// only this: no owned copy of the spec, a few allocations in all. The states are in the
/// spec's order: sorted by name from a [`SkillSpec`], as given from the text (so the
/// problems come in that order: see [`super::validate::SpecText::validate`]).
#[derive(Debug)]
pub(crate) struct Outline<'a> {
    /// The starting state (`""` when missing).
    pub(crate) initial_state: &'a str,
    /// The starting state's index in `states`.
    pub(crate) initial: Option<usize>,
    /// The states.
    pub(crate) states: Vec<Node<'a>>,
    /// Every state's allowed tools, one after another.
    tools: Vec<&'a str>,
    /// Every state's transitions, one after another.
    edges: Vec<Edge<'a>>,
    /// JSON Schema of the input.
    pub(crate) input_schema: Option<Cow<'a, Value>>,
    /// JSON Schema of the output.
    pub(crate) output_schema: Option<Cow<'a, Value>>,
}

/// One state of an [`Outline`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    /// The state's name.
    pub(crate) name: &'a str,
    /// An end state.
    pub(crate) terminal: bool,
    /// Its tools: `tools[tools.0..tools.1]`.
    tools: (usize, usize),
    /// Its transitions: `edges[edges.0..edges.1]`.
    edges: (usize, usize),
}

/// One transition of an [`Outline`].
#[derive(Debug)]
pub(crate) struct Edge<'a> {
    /// The event name.
    pub(crate) on: &'a str,
    /// The target state's name.
    pub(crate) to: &'a str,
    /// The target's index in the outline's states (`usize::MAX` when it is not a state).
    pub(crate) target: usize,
}

impl<'a> Outline<'a> {
    /// The outline of a spec that has been read (its states are sorted, its targets known).
    pub(crate) fn of(s: &'a SkillSpec) -> Outline<'a> {
        let mut tools = Vec::with_capacity(s.states.iter().map(|st| st.allowed_tools.len()).sum());
        let mut edges = Vec::with_capacity(s.states.iter().map(|st| st.transitions.len()).sum());
        let states = s
            .states
            .iter()
            .map(|st| {
                let (t0, e0) = (tools.len(), edges.len());
                tools.extend(st.allowed_tools.iter().map(String::as_str));
                edges.extend(st.transitions.iter().map(|t| Edge {
                    on: &t.on,
                    to: &t.to,
                    target: t.target,
                }));
                Node {
                    name: &st.name,
                    terminal: st.terminal,
                    tools: (t0, tools.len()),
                    edges: (e0, edges.len()),
                }
            })
            .collect();
        Outline {
            initial_state: &s.initial_state,
            initial: s.index(&s.initial_state),
            states,
            tools,
            edges,
            input_schema: s.input_schema.as_ref().map(Cow::Borrowed),
            output_schema: s.output_schema.as_ref().map(Cow::Borrowed),
        }
    }

    /// A state's allowed tools.
    pub(crate) fn tools_of(&self, n: &Node<'a>) -> &[&'a str] {
        self.tools.get(n.tools.0..n.tools.1).unwrap_or_default()
    }

    /// A state's transitions.
    pub(crate) fn edges_of(&self, n: &Node<'a>) -> &[Edge<'a>] {
        self.edges.get(n.edges.0..n.edges.1).unwrap_or_default()
    }

    /// The initial state's and each transition's target index, through one hash map of
    /// the names; `None` when a state is named twice (the tree reader keeps the last).
    fn resolve(mut self) -> Option<Outline<'a>> {
        let mut at = crate::fx::FxMap::default();
        at.reserve(self.states.len());
        for (i, n) in self.states.iter().enumerate() {
            if at.insert(n.name, i).is_some() {
                return None;
            }
        }
        for n in &self.states {
            let targets = self.edges.get_mut(n.edges.0..n.edges.1).unwrap_or_default();
            for e in targets {
                e.target = at.get(e.to).copied().unwrap_or(usize::MAX);
            }
        }
        self.initial = at.get(self.initial_state).copied();
        Some(self)
    }
}

/// The fast path for a spec's text: its [`Outline`] read straight from the text, without a
/// JSON tree or an owned copy of the spec — only when the text is a JSON object with every
/// field of its documented type and nothing [`read`] would report (`name` not blank,
/// `max_steps` a positive integer, every transition `{ on, to }` with `on` not empty), no
/// key or state name given twice, no escape in a name it keeps (a state, a tool, an event,
/// a target) and no `\u` escape anywhere, and numbers only as plain integers of up to 15
/// digits. For any other text `None`, and the caller reads it through [`read`], which
/// reports every problem (or refuses text that is not JSON); for this text both give the
/// same outline.
pub(crate) fn from_text(text: &str) -> Option<Outline<'_>> {
    let mut scan = Scan {
        text,
        at: 0,
        depth: 0,
    };
    let outline = scan.spec()?;
    scan.ws();
    if scan.at != text.len() {
        return None;
    }
    outline.resolve()
}

/// How deep [`Scan::skip`] follows a value the spec does not read before it gives up (the
/// tree reader then reads the text, with the JSON parser's own limit).
const SKIP_DEPTH: usize = 64;

/// A reader of the JSON text of a well-shaped spec: each step reads one piece of JSON, or
/// `None` for anything it does not take (text that is not JSON, or a shape the tree reader
/// must see); `None` goes all the way up to [`from_text`].
struct Scan<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Scanner<'a> for Scan<'a> {
    fn text(&self) -> &'a str {
        self.text
    }
    fn at_mut(&mut self) -> &mut usize {
        &mut self.at
    }
    fn at(&self) -> usize {
        self.at
    }
}

impl<'a> Scan<'a> {
    /// [`Scanner::plain`] into `slot`, a key's first time (`bit` in `seen`).
    fn plain_once(&mut self, seen: &mut Seen, bit: u32, slot: &mut Option<&'a str>) -> Option<()> {
        seen.first(bit)?;
        *slot = Some(self.plain()?);
        Some(())
    }

    /// A string, read past (the one-letter escapes taken, a `\u` escape not).
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let c = self.byte()?;
            self.at += 1;
            match c {
                b'"' => return Some(()),
                b'\\' => {
                    let e = self.byte()?;
                    self.at += 1;
                    if !matches!(e, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
                        return None;
                    }
                }
                0..0x20 => return None,
                _ => {}
            }
        }
    }

    /// `null` (true) or not (false, nothing taken).
    fn null(&mut self) -> Option<bool> {
        self.word("null")
    }

    /// Takes the literal `w` if it comes next.
    fn word(&mut self, w: &str) -> Option<bool> {
        self.ws();
        let rest = self.text.get(self.at..)?;
        // The first byte decides most of the time, without a call to compare the rest.
        let yes = rest.as_bytes().first() == w.as_bytes().first() && rest.starts_with(w);
        if yes {
            self.at += w.len();
        }
        Some(yes)
    }

    /// `true`, `false` or `null` (`None` in the result).
    fn flag(&mut self) -> Option<Option<bool>> {
        if self.word("true")? {
            Some(Some(true))
        } else if self.word("false")? {
            Some(Some(false))
        } else {
            self.null()?.then_some(None)
        }
    }

    /// A string or `null`, read past.
    fn skip_string_or_null(&mut self) -> Option<()> {
        match self.null()? {
            true => Some(()),
            false => self.skip_string(),
        }
    }

    /// A number: digits without a fraction or exponent and not too many of them (any other
    /// number is left to the tree reader, which knows which ones it refuses).
    fn skip_number(&mut self) -> Option<()> {
        if self.byte()? == b'-' {
            self.at += 1;
        }
        let start = self.at;
        while matches!(self.byte(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = self.text.get(start..self.at)?;
        let ok =
            !digits.is_empty() && digits.len() <= 15 && (digits == "0" || !digits.starts_with('0'));
        (ok && !matches!(self.byte(), Some(b'.' | b'e' | b'E'))).then_some(())
    }

    /// Any JSON value, read past.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                self.nest()?;
                self.at += 1;
                self.members(b'}', |s| {
                    s.skip_string()?;
                    s.eat(b':')?;
                    s.skip()
                })?;
                self.depth -= 1;
                Some(())
            }
            b'[' => {
                self.nest()?;
                self.at += 1;
                self.members(b']', Self::skip)?;
                self.depth -= 1;
                Some(())
            }
            b't' | b'f' | b'n' => self.flag().map(|_| ()),
            _ => self.skip_number(),
        }
    }

    /// One level deeper into a skipped value.
    fn nest(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= SKIP_DEPTH).then_some(())
    }

    /// An object, `member` reading each value after its (unescaped) key.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.members(b'}', |s| {
            let key = s.plain()?;
            s.eat(b':')?;
            member(s, key)
        })
    }

    /// `null` or an array, `item` reading each item.
    fn list(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if self.null()? {
            return Some(());
        }
        self.eat(b'[')?;
        self.members(b']', item)
    }

    /// A JSON Schema (any value; `null` is none), parsed on its own.
    fn schema(&mut self) -> Option<Option<Cow<'a, Value>>> {
        self.ws();
        let start = self.at;
        self.skip()?;
        let v: Value = serde_json::from_str(self.text.get(start..self.at)?).ok()?;
        Some((!v.is_null()).then_some(Cow::Owned(v)))
    }

    /// The whole spec.
    fn spec(&mut self) -> Option<Outline<'a>> {
        let mut seen = Seen::default();
        let (mut name, mut initial, mut max_steps) = (None, None, None);
        let (mut input, mut output) = (None, None);
        let (mut states, mut tools, mut edges) = (None, Vec::new(), Vec::new());
        self.object(|s, key| match key {
            "name" => s.plain_once(&mut seen, 1, &mut name),
            "description" => {
                seen.first(2)?;
                s.skip_string_or_null()
            }
            "initial_state" => s.plain_once(&mut seen, 4, &mut initial),
            "input_schema" => {
                seen.first(8)?;
                input = s.schema()?;
                Some(())
            }
            "output_schema" => {
                seen.first(16)?;
                output = s.schema()?;
                Some(())
            }
            "max_steps" => {
                seen.first(32)?;
                if !s.null()? {
                    s.ws();
                    let start = s.at;
                    s.skip_number()?;
                    let n: u64 = s.text.get(start..s.at)?.parse().ok()?;
                    max_steps = Some(n);
                }
                Some(())
            }
            "interruptible" => {
                seen.first(64)?;
                s.flag().map(|_| ())
            }
            "states" => {
                seen.first(128)?;
                states = Some(s.states(&mut tools, &mut edges)?);
                Some(())
            }
            _ => s.skip(),
        })?;
        if name?.trim().is_empty() || max_steps == Some(0) {
            return None;
        }
        Some(Outline {
            initial_state: initial?,
            initial: None,
            states: states?,
            tools,
            edges,
            input_schema: input,
            output_schema: output,
        })
    }

    /// `states`: an object of states in the order given, their tools and transitions pushed
    /// onto the flat lists.
    fn states(
        &mut self,
        tools: &mut Vec<&'a str>,
        edges: &mut Vec<Edge<'a>>,
    ) -> Option<Vec<Node<'a>>> {
        let mut states = Vec::new();
        self.object(|s, name| {
            let mut seen = Seen::default();
            let mut terminal = false;
            let (t0, e0) = (tools.len(), edges.len());
            s.object(|s, key| match key {
                "objective" => {
                    seen.first(1)?;
                    s.skip_string_or_null()
                }
                "terminal" => {
                    seen.first(2)?;
                    terminal = s.flag()?.unwrap_or(false);
                    Some(())
                }
                "allowed_tools" => {
                    seen.first(4)?;
                    s.list(|s| {
                        tools.push(s.plain()?);
                        Some(())
                    })
                }
                "transitions" => {
                    seen.first(8)?;
                    s.list(|s| {
                        edges.push(s.edge()?);
                        Some(())
                    })
                }
                _ => s.skip(),
            })?;
            states.push(Node {
                name,
                terminal,
                tools: (t0, tools.len()),
                edges: (e0, edges.len()),
            });
            Some(())
        })?;
        Some(states)
    }

    /// A transition: `{ on, to }`, `on` not empty.
    fn edge(&mut self) -> Option<Edge<'a>> {
        let mut seen = Seen::default();
        let (mut on, mut to) = (None, None);
        self.object(|s, key| match key {
            "on" => s.plain_once(&mut seen, 1, &mut on),
            "to" => s.plain_once(&mut seen, 2, &mut to),
            _ => s.skip(),
        })?;
        let on = on.filter(|on| !on.is_empty())?;
        Some(Edge {
            on,
            to: to?,
            target: usize::MAX,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Shape = (
        String,
        Option<String>,
        Vec<(
            String,
            bool,
            Vec<String>,
            Vec<(String, String, Option<String>)>,
        )>,
    );

    /// An outline as plain values, its states sorted by name and each index as the name it
    /// points at (the fast reader keeps the order given, a [`SkillSpec`] is sorted).
    fn shape(o: &Outline<'_>) -> Shape {
        let name = |i: Option<usize>| i.and_then(|i| o.states.get(i)).map(|n| n.name.to_owned());
        let mut states: Vec<_> = o
            .states
            .iter()
            .map(|n| {
                let tools = o.tools_of(n).iter().map(|t| t.to_string()).collect();
                let edges = o.edges_of(n);
                let edges = edges
                    .iter()
                    .map(|e| (e.on.to_owned(), e.to.to_owned(), name(Some(e.target))))
                    .collect();
                (n.name.to_owned(), n.terminal, tools, edges)
            })
            .collect();
        crate::sort::sort(&mut states);
        (o.initial_state.to_owned(), name(o.initial), states)
    }

    /// Well-shaped text takes the fast reader, and it reads the outline of the spec the tree
    /// reader reads.
    #[test]
    fn the_fast_reader_reads_what_the_tree_reader_reads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/arbiter/specs");
        let mut fast = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let mut problems = Problems::default();
            let tree = read(&serde_json::from_str(&text).unwrap(), &mut problems);
            match from_text(&text) {
                Some(o) => {
                    assert!(problems.0.is_empty(), "{text}");
                    let tree = tree.unwrap();
                    let t = Outline::of(&tree);
                    assert_eq!(shape(&o), shape(&t), "{text}");
                    assert_eq!(o.input_schema, t.input_schema, "{text}");
                    assert_eq!(o.output_schema, t.output_schema, "{text}");
                    fast += 1;
                }
                None => assert!(!problems.0.is_empty(), "{text}"),
            }
        }
        assert!(fast >= 8, "{fast}");
        let escaped = r#"{"name":"n","initial_state":"a","states":{"\u0061":{"terminal":true}}}"#;
        assert!(from_text(escaped).is_none());
        // One-letter escapes in the strings only type-checked are read fast; any escape in
        // a name the outline keeps, and a `\u` escape anywhere, goes through the tree.
        let prose = r#"{"name":"n","description":"d\n\"q\"","initial_state":"a","states":{"a":{"objective":"o\t\\/","allowed_tools":["t"],"transitions":[{"on":"e","to":"b"}]},"b":{"terminal":true}}}"#;
        assert_eq!(
            shape(&from_text(prose).unwrap()),
            (
                "a".to_owned(),
                Some("a".to_owned()),
                vec![
                    (
                        "a".to_owned(),
                        false,
                        vec!["t".to_owned()],
                        vec![("e".to_owned(), "b".to_owned(), Some("b".to_owned()))]
                    ),
                    ("b".to_owned(), true, vec![], vec![]),
                ]
            )
        );
        for kept in [
            r#"{"name":"n\u0031","initial_state":"a","states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"\u0061","states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true,"allowed_tools":["t\n"]}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"e\"","to":"a"}]}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"e","to":"\u0061"}]}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true,"objective":"\u00e9"}}}"#,
        ] {
            assert!(from_text(kept).is_none(), "{kept}");
            let mut problems = Problems::default();
            read(&serde_json::from_str(kept).unwrap(), &mut problems);
            assert!(problems.0.iter().all(|p| p.code != "wrong-type"), "{kept}");
        }
        // Values the spec does not read are read past, whatever JSON they hold; numbers
        // with a fraction or an exponent are left to the tree reader.
        let extra = r#" { "x" : { "a" : [ 1 , -2 , 0 , true , false , null , "s\/" , { } , [ ] ] } , "name" : "n" , "initial_state" : "a" , "max_steps" : 7 , "interruptible" : false , "input_schema" : { "type" : "object" } , "output_schema" : null , "states" : { "a" : { "terminal" : true , "y" : [ { "z" : "w" } ] } } } "#;
        let o = from_text(extra).unwrap();
        assert_eq!(shape(&o).2.len(), 1);
        assert_eq!(
            o.input_schema.as_deref(),
            Some(&serde_json::json!({ "type": "object" }))
        );
        assert_eq!(o.output_schema, None);
        for number in ["1.5", "1e3", "-0.0", "0123", "12345678901234567890"] {
            let t = format!(
                r#"{{"x":{number},"name":"n","initial_state":"a","states":{{"a":{{"terminal":true}}}}}}"#
            );
            assert!(from_text(&t).is_none(), "{t}");
        }
        // Text that is not JSON is never read fast.
        for broken in [
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true}},}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":tru}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true}}} x"#,
            r#"{"name":"n","initial_state":"a","x":[1 2],"states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"a","x":"a	b","states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"a","x":"\x","states":{"a":{"terminal":true}}}"#,
        ] {
            assert!(from_text(broken).is_none(), "{broken}");
            assert!(serde_json::from_str::<Value>(broken).is_err(), "{broken}");
        }
        // A state named twice goes through the tree reader, which keeps the last.
        let dup = r#"{"name":"n","initial_state":"a","states":{"a":{"objective":"1","allowed_tools":["x"],"transitions":[{"on":"go","to":"b"}]},"b":{"terminal":true},"a":{"terminal":true}}}"#;
        assert!(from_text(dup).is_none());
        let mut problems = Problems::default();
        let tree = read(&serde_json::from_str(dup).unwrap(), &mut problems).unwrap();
        assert!(tree.states.len() == 2 && tree.states[0].terminal);
        // The states in the order given; the indexes point at the states named.
        let order = r#"{"name":"n","initial_state":"b","states":{"c":{"terminal":true},"b":{"transitions":[{"on":"x","to":"c"},{"on":"y","to":"nowhere"}]}}}"#;
        let o = from_text(order).unwrap();
        let names: Vec<&str> = o.states.iter().map(|n| n.name).collect();
        assert_eq!(names, ["c", "b"]);
        assert_eq!(o.initial, Some(1));
        let targets: Vec<usize> = o.edges_of(&o.states[1]).iter().map(|e| e.target).collect();
        assert_eq!(targets, [0, usize::MAX]);
        // Shapes the tree reader reports are not read fast.
        for bad in [
            r#"{"name":" ","initial_state":"a","states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":null,"states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"a","max_steps":0,"states":{"a":{"terminal":true}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"objective":1}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"allowed_tools":[null]}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"","to":"a"}]}}}"#,
            r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x","to":null}]}}}"#,
            r#"{"name":"n","initial_state":"a","states":[]}"#,
        ] {
            let mut problems = Problems::default();
            read(&serde_json::from_str(bad).unwrap(), &mut problems);
            assert!(!problems.0.is_empty(), "{bad}");
            assert!(from_text(bad).is_none(), "{bad}");
        }
        // A key given twice goes through the tree reader, where the last wins.
        let twice =
            r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":false,"terminal":true}}}"#;
        assert!(from_text(twice).is_none());
    }
}
