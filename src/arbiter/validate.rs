//! Load-time validation of a [`SkillSpec`]: every problem at once, each with its JSON path
//! and a stable code — `missing-initial-state`, `unknown-state` (a transition's target),
//! `no-terminal`, `terminal-with-transitions`, `unreachable-state` (graph search from the
//! initial state), `no-path-to-terminal` (no terminal state reachable from it),
//! `unknown-tool` (not in the tool registry), `invalid-schema` (input/output), and
//! `duplicate-event` (two transitions of one state on the same event); plus the shape
//! problems the spec reader finds.

use super::spec::{self, Outline, SkillSpec};
use crate::problems::{Problem, Problems};
use crate::skill::Validation;
use serde_json::Value;
use std::collections::BTreeSet;

/// Checks the graph and references of a spec that has been read.
pub(crate) fn check(s: &Outline<'_>, tools: Option<&BTreeSet<String>>, out: &mut Problems) {
    let initial = s.initial;
    if initial.is_none() && !s.initial_state.is_empty() {
        out.error(
            "initial_state",
            "missing-initial-state",
            format!(
                "the initial state `{}` is not one of the states",
                s.initial_state
            ),
        );
    }
    if !s.states.iter().any(|st| st.terminal) && !s.states.is_empty() {
        out.error(
            "states",
            "no-terminal",
            "no state is terminal: no run could ever finish",
        );
    }
    // The graph's edges are the transitions' target indexes; unknown targets are reported
    // here and left out of the searches below.
    let n = s.states.len();
    let edges = |i: usize| {
        s.states
            .get(i)
            .into_iter()
            .flat_map(|st| s.edges_of(st).iter().map(|t| t.target))
            .filter(move |&j| j < n)
    };
    for st in s.states.iter() {
        let p = || format!("states.{}", st.name);
        let transitions = s.edges_of(st);
        if st.terminal && !transitions.is_empty() {
            out.error(
                &format!("{}.transitions", p()),
                "terminal-with-transitions",
                format!("`{}` is terminal but has transitions", st.name),
            );
        }
        for (k, t) in transitions.iter().enumerate() {
            if transitions
                .get(..k)
                .is_some_and(|before| before.iter().any(|b| b.on == t.on))
            {
                out.error(
                    &format!("{}.transitions[{k}].on", p()),
                    "duplicate-event",
                    format!("`{}` has two transitions on `{}`", st.name, t.on),
                );
            }
            if t.target >= n {
                out.error(
                    &format!("{}.transitions[{k}].to", p()),
                    "unknown-state",
                    format!(
                        "`{}` goes to `{}` on `{}`, which is not a state",
                        st.name, t.to, t.on
                    ),
                );
            }
        }
        if let Some(reg) = tools {
            for (k, tool) in s.tools_of(st).iter().enumerate() {
                if !reg.contains(*tool) {
                    out.error(
                        &format!("{}.allowed_tools[{k}]", p()),
                        "unknown-tool",
                        format!("`{tool}` is not in the tool registry"),
                    );
                }
            }
        }
    }
    // Reachable from the initial state.
    if let Some(start) = initial {
        let mut seen = vec![false; s.states.len()];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(i) = stack.pop() {
            for j in edges(i) {
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        for (i, st) in s.states.iter().enumerate() {
            if !seen[i] {
                out.error(
                    &format!("states.{}", st.name),
                    "unreachable-state",
                    format!("`{}` cannot be reached from `{}`", st.name, s.initial_state),
                );
            }
        }
    }
    // States from which a terminal state can be reached (search backwards from terminals).
    // The reversed edges in two flat arrays: `from[first[j]..first[j + 1]]` go to `j`.
    let mut first = vec![0usize; n + 1];
    for i in 0..n {
        for j in edges(i) {
            first[j + 1] += 1;
        }
    }
    for k in 0..n {
        first[k + 1] += first[k];
    }
    let mut next = first.clone();
    let mut from = vec![0usize; first[n]];
    for i in 0..n {
        for j in edges(i) {
            from[next[j]] = i;
            next[j] += 1;
        }
    }
    let mut live = vec![false; s.states.len()];
    let mut stack: Vec<usize> = (0..s.states.len())
        .filter(|&i| s.states[i].terminal)
        .collect();
    for &i in &stack {
        live[i] = true;
    }
    while let Some(j) = stack.pop() {
        for &i in from.get(first[j]..first[j + 1]).unwrap_or_default() {
            if !live[i] {
                live[i] = true;
                stack.push(i);
            }
        }
    }
    if s.states.iter().any(|st| st.terminal) {
        for (i, st) in s.states.iter().enumerate() {
            if !live[i] {
                out.error(
                    &format!("states.{}", st.name),
                    "no-path-to-terminal",
                    format!("no terminal state can be reached from `{}`", st.name),
                );
            }
        }
    }
    for (k, schema) in [
        ("input_schema", &s.input_schema),
        ("output_schema", &s.output_schema),
    ] {
        if let Some(v) = schema {
            crate::skill::schema::check(v, k, out);
        }
    }
}

/// Every problem of a spec (JSON), against a tool registry when one is given.
pub fn validate_spec(v: &Value, tools: Option<&BTreeSet<String>>) -> Validation {
    let mut out = Problems::default();
    if let Some(s) = spec::read(v, &mut out) {
        check(&Outline::of(&s), tools, &mut out);
    }
    Validation { problems: out.0 }
}

/// A spec's JSON text, read: straight into its [`Outline`] when the text is well-shaped
/// ([`spec::from_text`]: no JSON tree, no owned copy of the spec), else the tree, whose
/// reader reports every problem. Either way [`SpecText::validate`] gives the same problems.
pub(crate) enum SpecText<'a> {
    /// A well-shaped spec, read without a tree, and its text.
    Read(Outline<'a>, &'a str),
    /// Any other JSON: read (and its problems found) by [`spec::read`].
    Tree(Value),
}

impl<'a> SpecText<'a> {
    /// Reads `text`; text that is not JSON is `InvalidRequest` ("the spec is not valid JSON…").
    pub(crate) fn parse(text: &'a str) -> crate::Result<SpecText<'a>> {
        match spec::from_text(text) {
            Some(s) => Ok(SpecText::Read(s, text)),
            None => crate::wire::json_value(text, "the spec", crate::ErrorKind::InvalidRequest)
                .map(SpecText::Tree),
        }
    }

    /// Every problem, against a tool registry when one is given. A spec read from its text
    /// that has a problem is read again through the tree, which reports the problems state
    /// by state in name order (the text's outline keeps the order given).
    pub(crate) fn validate(&self, tools: Option<&BTreeSet<String>>) -> Validation {
        match self {
            SpecText::Read(s, text) => {
                let mut out = Problems::default();
                check(s, tools, &mut out);
                if !out.0.is_empty() {
                    if let Ok(v) = serde_json::from_str::<Value>(text) {
                        return validate_spec(&v, tools);
                    }
                }
                Validation { problems: out.0 }
            }
            SpecText::Tree(v) => validate_spec(v, tools),
        }
    }
}

/// [`validate_spec`] of a spec's JSON text. Well-shaped text is read without building a
/// JSON tree or an owned copy of the spec; text with a problem is
/// read again through the tree, which reports every problem. Text that is not JSON is
/// `InvalidRequest`.
pub fn validate_spec_text(
    text: &str,
    tools: Option<&BTreeSet<String>>,
) -> crate::Result<Validation> {
    Ok(SpecText::parse(text)?.validate(tools))
}

/// Reads and validates a spec; `Err` lists every problem.
pub(crate) fn load(v: &Value, tools: Option<&BTreeSet<String>>) -> Result<SkillSpec, Vec<Problem>> {
    let mut out = Problems::default();
    let s = spec::read(v, &mut out);
    if let Some(s) = &s {
        check(&Outline::of(s), tools, &mut out);
    }
    match s {
        Some(s) if !out.has_errors() => Ok(s),
        _ => Err(out.0),
    }
}
