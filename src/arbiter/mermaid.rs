//! A [`SkillSpec`] as a Mermaid state diagram (`stateDiagram-v2`): `[*]` into the initial
//! state, one arrow per transition labelled with its event, terminal states into `[*]`, and
//! the current state of a run (if given) marked with the `current` class.

use super::spec::SkillSpec;

/// A state name as a Mermaid identifier (letters, digits, `_`; anything else becomes `_`).
fn id(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 's');
    }
    s
}

/// Label text without the characters that end a Mermaid label.
fn label(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | ':' | ';' | '"' | '#') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The diagram; `current` marks a run's state.
pub fn to_mermaid(spec: &SkillSpec, current: Option<&str>) -> String {
    let mut out = String::from("stateDiagram-v2\n");
    for s in &spec.states {
        if id(&s.name) != s.name {
            out.push_str(&format!(
                "  state \"{}\" as {}\n",
                label(&s.name),
                id(&s.name)
            ));
        }
    }
    if !spec.initial_state.is_empty() {
        out.push_str(&format!("  [*] --> {}\n", id(&spec.initial_state)));
    }
    for s in &spec.states {
        for t in &s.transitions {
            out.push_str(&format!(
                "  {} --> {} : {}\n",
                id(&s.name),
                id(&t.to),
                label(&t.on)
            ));
        }
        if s.terminal {
            out.push_str(&format!("  {} --> [*]\n", id(&s.name)));
        }
    }
    if let Some(c) = current.filter(|c| spec.state(c).is_some()) {
        out.push_str("  classDef current fill:#ffe08a,stroke:#b8860b,stroke-width:2px\n");
        out.push_str(&format!("  class {} current\n", id(c)));
    }
    out
}
