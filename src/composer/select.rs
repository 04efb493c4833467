//! Step 3: which artifacts a composition includes. Conditions (`include_when`, `when`) are
//! evaluated against the invocation's scope and parameters; model variants are resolved per
//! artifact name; examples are ranked by how many of their tags the invocation mentions.

use super::request::ComposeRequest;
use crate::json_schema::json_eq;
use crate::skill::{select_variant, ArtifactKind, Skill, SkillArtifact};
use crate::words::{fold, is_word_char};
use serde_json::{Map, Value};

/// Whether a condition holds for this invocation. Absent conditions hold.
pub fn holds(c: Option<&Value>, req: &ComposeRequest) -> bool {
    match c {
        None => true,
        Some(c) => eval(c, req, 0),
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn eval(c: &Value, req: &ComposeRequest, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    match c {
        Value::String(s) => s == "always",
        Value::Object(o) => {
            if let Some(s) = o.get("scope").and_then(Value::as_str) {
                return match s {
                    "workspace" => req.channel_id.is_none(),
                    "channel" => req.channel_id.is_some(),
                    _ => false,
                };
            }
            if let Some(p) = o.get("parameter").and_then(Value::as_str) {
                let v = req.parameters.get(p);
                return match (o.get("equals"), v) {
                    (None, v) => v.is_some_and(truthy),
                    (Some(want), Some(Value::Array(items))) if !want.is_array() => {
                        items.iter().any(|x| json_eq(x, want))
                    }
                    (Some(want), Some(v)) => json_eq(v, want),
                    (Some(Value::Null), None) => true,
                    (Some(_), None) => false,
                };
            }
            if let Some(Value::Array(a)) = o.get("any") {
                return a.iter().any(|x| eval(x, req, depth + 1));
            }
            if let Some(Value::Array(a)) = o.get("all") {
                return a.iter().all(|x| eval(x, req, depth + 1));
            }
            if let Some(n) = o.get("not") {
                return !eval(n, req, depth + 1);
            }
            false
        }
        _ => false,
    }
}

/// The artifacts of `kind`, one per name (the variant for the request's model), in
/// ordinal order.
pub fn resolved<'a>(skill: &'a Skill, kind: ArtifactKind, model: &str) -> Vec<&'a SkillArtifact> {
    let mut names: Vec<&str> = Vec::new();
    for a in skill.artifacts_of(kind) {
        if !names.contains(&a.name.as_str()) {
            names.push(&a.name);
        }
    }
    let mut out: Vec<&SkillArtifact> = names
        .into_iter()
        .filter_map(|n| select_variant(skill.artifacts_of(kind).filter(|a| a.name == n), model))
        .collect();
    crate::sort::sort_by(&mut out, |a, b| {
        (a.ordinal, &a.name, &a.id).cmp(&(b.ordinal, &b.name, &b.id))
    });
    out
}

/// The artifact named `name` among the kinds given, for the request's model.
pub fn named<'a>(
    skill: &'a Skill,
    name: &str,
    kinds: &[ArtifactKind],
    model: &str,
) -> Option<&'a SkillArtifact> {
    select_variant(
        skill
            .artifacts
            .iter()
            .filter(|a| a.name == name && kinds.contains(&a.kind)),
        model,
    )
}

/// The folded words of a text.
fn words(text: &str, out: &mut Vec<String>) {
    let mut cur = String::new();
    for c in text.chars() {
        if is_word_char(c) {
            cur.push(fold(c));
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
}

/// The string values inside a parameter value (arrays and objects walked, 8 levels deep).
fn string_words(v: &Value, out: &mut Vec<String>, depth: usize) {
    match v {
        Value::String(s) => words(s, out),
        Value::Array(a) if depth < 8 => a.iter().for_each(|x| string_words(x, out, depth + 1)),
        Value::Object(o) if depth < 8 => o.values().for_each(|x| string_words(x, out, depth + 1)),
        _ => {}
    }
}

/// The words an invocation mentions: its request text, parameter names with a truthy
/// value, and the string values of its parameters (inside arrays and objects too).
fn invocation_terms(req: &ComposeRequest, params: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    words(&req.user_request, &mut out);
    for (k, v) in params {
        if truthy(v) {
            words(k, &mut out);
        }
        string_words(v, &mut out, 0);
    }
    crate::sort::sort(&mut out);
    out.dedup();
    out
}

/// An example's tags.
pub fn tags(a: &SkillArtifact) -> Vec<&str> {
    a.metadata
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A selected example with the tags that matched.
#[derive(Debug, Clone)]
pub struct Ranked<'a> {
    /// The example.
    pub artifact: &'a SkillArtifact,
    /// Its matched tags (empty for an untagged example).
    pub matched: Vec<String>,
}

/// Examples by relevance, up to `budget`: tagged examples whose tags the invocation mentions
/// (more matched tags first), then untagged examples; ties by ordinal. A tagged example
/// none of whose tags match is not included. Returned in ordinal order.
pub fn examples<'a>(
    skill: &'a Skill,
    req: &ComposeRequest,
    params: &Map<String, Value>,
    model: &str,
) -> Vec<Ranked<'a>> {
    let terms = invocation_terms(req, params);
    let mut ranked: Vec<(usize, Ranked<'a>)> = Vec::new();
    for a in resolved(skill, ArtifactKind::Example, model) {
        if !holds(a.metadata.get("include_when"), req) {
            continue;
        }
        let t = tags(a);
        let matched: Vec<String> = t
            .iter()
            .filter(|tag| {
                let mut w = Vec::new();
                words(tag, &mut w);
                !w.is_empty() && w.iter().all(|x| terms.binary_search(x).is_ok())
            })
            .map(|s| (*s).to_owned())
            .collect();
        if !t.is_empty() && matched.is_empty() {
            continue;
        }
        let score = if t.is_empty() { 0 } else { matched.len() };
        ranked.push((
            score,
            Ranked {
                artifact: a,
                matched,
            },
        ));
    }
    // Tagged matches first (by score), then untagged; stable on the ordinal order.
    crate::sort::sort_by(&mut ranked, |(sa, a), (sb, b)| {
        sb.cmp(sa).then(
            (a.artifact.ordinal, &a.artifact.name).cmp(&(b.artifact.ordinal, &b.artifact.name)),
        )
    });
    ranked.truncate(req.max_examples);
    let mut out: Vec<Ranked<'a>> = ranked.into_iter().map(|(_, r)| r).collect();
    crate::sort::sort_by(&mut out, |a, b| {
        (a.artifact.ordinal, &a.artifact.name).cmp(&(b.artifact.ordinal, &b.artifact.name))
    });
    out
}

/// Descriptions whose `include_when` holds (the framing artifact excluded).
pub fn descriptions<'a>(
    skill: &'a Skill,
    req: &ComposeRequest,
    model: &str,
    framing: Option<&str>,
) -> Vec<&'a SkillArtifact> {
    resolved(skill, ArtifactKind::Description, model)
        .into_iter()
        .filter(|a| Some(a.name.as_str()) != framing)
        .filter(|a| holds(a.metadata.get("include_when"), req))
        .collect()
}

/// The first approach (by ordinal) whose `when` holds.
pub fn approach<'a>(
    skill: &'a Skill,
    req: &ComposeRequest,
    model: &str,
    framing: Option<&str>,
) -> Option<&'a SkillArtifact> {
    resolved(skill, ArtifactKind::Approach, model)
        .into_iter()
        .filter(|a| Some(a.name.as_str()) != framing)
        .find(|a| holds(a.metadata.get("when"), req))
}

/// Estimated tokens of a text: characters / 4, rounded up (the composer's deterministic
/// estimate; a host with a tokenizer sets its budget with the same rule in mind).
pub fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
