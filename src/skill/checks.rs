//! The rules a skill package follows beyond its shape: ids and versions, metadata
//! (parameters, conditions, tools, approaches, assertions), templates, schemas, fallbacks
//! and duplicates. Every rule runs and records each problem with its JSON path, so one pass
//! lists them all; [`super::read`] applies them after reading a package.

use super::model::{ArtifactKind, Skill, SkillArtifact};
use super::{schema, template};
use crate::problems::{Problem, Problems};
use serde_json::{Map, Value};

/// `path.key` (`key` alone at the root).
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Whether `id` can be a storage key: 1–128 characters, no `/`, no control characters.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.chars().count() <= 128 && !id.chars().any(|c| c == '/' || c.is_control())
}

pub(super) fn check_id(id: &str, path: &str, out: &mut Problems) {
    if !valid_id(id) {
        out.error(
            path,
            "invalid-id",
            "ids are 1–128 characters without `/` or control characters",
        );
    }
}

/// Whether `v` is a semantic version (`MAJOR.MINOR.PATCH[-pre][+build]`, SemVer 2.0.0).
pub(crate) fn is_semver(v: &str) -> bool {
    let (core, build) = match v.split_once('+') {
        Some((c, b)) => (c, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match core.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (core, None),
    };
    let numeric = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let nums: Vec<&str> = core.split('.').collect();
    nums.len() == 3
        && nums.iter().all(|n| numeric(n))
        && pre.is_none_or(|p| {
            p.split('.')
                .all(|i| ident(i) && (!i.bytes().all(|b| b.is_ascii_digit()) || numeric(i)))
        })
        && build.is_none_or(|b| b.split('.').all(ident))
}

/// Every problem of a skill that is already typed (names, version, metadata, templates,
/// schemas, fallbacks, duplicates). Artifact paths are `artifacts[i]` in `skill.artifacts`.
pub fn check_skill(skill: &Skill) -> Vec<Problem> {
    let mut out = Problems::default();
    check_skill_into(skill, &[], None, None, &mut out);
    out.0
}

/// `index` maps positions in `skill.artifacts` to positions in the input (artifacts that
/// could not be read are missing from the skill).
pub(super) fn check_skill_into(
    skill: &Skill,
    unread: &[String],
    index: Option<&[usize]>,
    skip: Option<&str>,
    out: &mut Problems,
) {
    let reported = |out: &Problems, path: &str| out.0.iter().any(|p| p.path == path);
    let pos = |i: usize| index.and_then(|m| m.get(i).copied()).unwrap_or(i);
    if skill.name.trim().is_empty() {
        if !reported(out, "name") {
            out.error("name", "empty-string", "`name` must not be empty");
        }
    } else if skill.name.trim() != skill.name || skill.name.chars().any(char::is_control) {
        out.error(
            "name",
            "invalid-name",
            "`name` must not start or end with spaces or hold control characters",
        );
    } else if skill.name.chars().count() > 200 {
        out.error(
            "name",
            "invalid-name",
            "`name` is longer than 200 characters",
        );
    }
    if skill.description.trim().is_empty() && !reported(out, "description") {
        out.error(
            "description",
            "empty-string",
            "`description` must not be empty",
        );
    }
    if !is_semver(&skill.version) {
        out.error(
            "version",
            "invalid-version",
            format!(
                "`{}` is not a semantic version (MAJOR.MINOR.PATCH)",
                skill.version
            ),
        );
    }
    check_metadata(skill, unread, out);
    let mut keys: Vec<((String, String), usize)> = Vec::new();
    let mut ids: Vec<(&str, usize)> = Vec::new();
    for (i, a) in skill.artifacts.iter().enumerate() {
        let i = pos(i);
        let at = format!("artifacts[{i}]");
        let key = a.unique_key();
        let duplicate = keys.iter().find(|(k, _)| *k == key).map(|(_, j)| *j);
        if let Some(j) = duplicate {
            out.error(
                &join(&at, "name"),
                "duplicate-artifact",
                format!(
                    "artifacts[{j}] already has the name `{}`{}",
                    a.name,
                    if key.1.is_empty() {
                        " (default variant)".to_owned()
                    } else {
                        format!(" and the model variant `{}`", key.1)
                    }
                ),
            );
        } else {
            keys.push((key, i));
        }
        // A derived id repeats exactly when the name and variant do: reported above.
        let same_id = ids
            .iter()
            .find(|(id, _)| *id == a.id)
            .filter(|_| duplicate.is_none());
        if let Some((_, j)) = same_id {
            out.error(
                &join(&at, "id"),
                "duplicate-id",
                format!("artifacts[{j}] already has the id `{}`", a.id),
            );
        } else {
            ids.push((&a.id, i));
        }
        check_artifact(skill, a, &at, unread, skip, out);
    }
}

fn names_of(skill: &Skill, kinds: &[ArtifactKind]) -> Vec<String> {
    skill
        .artifacts
        .iter()
        .filter(|a| kinds.contains(&a.kind))
        .map(|a| format!("`{}`", a.name))
        .fold(Vec::new(), |mut v, n| {
            if !v.contains(&n) {
                v.push(n);
            }
            v
        })
}

fn check_metadata(skill: &Skill, unread: &[String], out: &mut Problems) {
    let m = &skill.metadata;
    let at = |k: &str| format!("metadata.{k}");
    match m.get("framing") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(Value::Object(o)) => match o.get("artifact").and_then(Value::as_str) {
            None => out.error(
                &at("framing"),
                "wrong-type",
                "`framing` is prose (a string) or `{ \"artifact\": name }`",
            ),
            Some(name) => {
                let kinds = [
                    ArtifactKind::PromptTemplate,
                    ArtifactKind::Description,
                    ArtifactKind::Approach,
                ];
                let found = skill
                    .artifacts
                    .iter()
                    .any(|a| a.name == name && kinds.contains(&a.kind));
                if !found && !unread.iter().any(|u| u == name) {
                    out.error(
                        &at("framing.artifact"),
                        "unknown-framing",
                        format!(
                            "the framing names `{name}`, but no prompt_template, description or approach artifact has that name"
                        ),
                    );
                }
            }
        },
        Some(_) => out.error(
            &at("framing"),
            "wrong-type",
            "`framing` is prose (a string) or `{ \"artifact\": name }`",
        ),
    }
    for k in ["parameters", "output_schema"] {
        if let Some(s) = m.get(k) {
            schema::check(s, &at(k), out);
        }
    }
    if let Some(Value::Object(p)) = m.get("parameters") {
        if p.get("type").is_some_and(|t| t != "object") {
            out.error(
                &at("parameters.type"),
                "invalid-schema",
                "the parameter schema describes the parameters object: its `type` must be `object`",
            );
        }
    }
    if let Some(t) = m.get("tool_surface") {
        let ok = t.as_array().is_some_and(|a| {
            a.iter()
                .all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty()))
        });
        if !ok {
            out.error(
                &at("tool_surface"),
                "wrong-type",
                "`tool_surface` must be an array of tool names",
            );
        }
    }
    for k in ["requires_tools", "planner_delegates_shape"] {
        if m.get(k).is_some_and(|v| !v.is_boolean()) {
            out.error(&at(k), "wrong-type", format!("`{k}` must be a boolean"));
        }
    }
    if m.get("max_tool_calls")
        .is_some_and(|v| v.as_u64().is_none_or(|n| n == 0))
    {
        out.error(
            &at("max_tool_calls"),
            "wrong-type",
            "`max_tool_calls` must be a positive integer",
        );
    }
    for k in ["model_preference", "license"] {
        if m.get(k).is_some_and(|v| !v.is_string()) {
            out.error(&at(k), "wrong-type", format!("`{k}` must be a string"));
        }
    }
    match m.get("compatibility") {
        None => {}
        Some(Value::String(s)) if s.chars().count() > 500 => out.warning(
            &at("compatibility"),
            "too-long",
            "`compatibility` is longer than 500 characters (the Agent Skills limit)",
        ),
        Some(Value::String(_)) => {}
        Some(_) => out.error(
            &at("compatibility"),
            "wrong-type",
            "`compatibility` must be a string",
        ),
    }
    if let Some(l) = m.get("labels") {
        if !l
            .as_object()
            .is_some_and(|o| o.values().all(Value::is_string))
        {
            out.error(
                &at("labels"),
                "wrong-type",
                "`labels` must map strings to strings",
            );
        }
    }
    match m.get("interrupts") {
        None => {}
        Some(Value::Array(a)) => {
            let mut seen: Vec<&str> = Vec::new();
            for (i, it) in a.iter().enumerate() {
                let p = format!("metadata.interrupts[{i}]");
                let name = it
                    .as_str()
                    .or_else(|| it.get("name").and_then(Value::as_str));
                match name {
                    Some(n) if is_identifier(n) => {
                        if seen.contains(&n) {
                            out.error(
                                &p,
                                "duplicate-interrupt",
                                format!("`{n}` is declared twice"),
                            );
                        }
                        seen.push(n);
                    }
                    Some(n) => out.error(
                        &p,
                        "invalid-name",
                        format!(
                            "interrupt names are identifiers (letters, digits, `_`); `{n}` is not"
                        ),
                    ),
                    None => out.error(
                        &p,
                        "wrong-type",
                        "an interrupt is a name or `{ name, when?, description? }`",
                    ),
                }
                if let Some(w) = it.get("when") {
                    check_condition(w, &join(&p, "when"), out, 0);
                }
            }
        }
        Some(_) => out.error(
            &at("interrupts"),
            "wrong-type",
            "`interrupts` must be an array",
        ),
    }
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `include_when` / `when` conditions: `"always"`, `"never"`, `{ scope: workspace|channel }`,
/// `{ parameter: name, equals?: value }`, `{ any: [...] }`, `{ all: [...] }`, `{ not: c }`.
fn check_condition(c: &Value, path: &str, out: &mut Problems, depth: usize) {
    const SHAPE: &str = "a condition is \"always\", \"never\", { scope }, { parameter, equals? }, { any: [...] }, { all: [...] } or { not }";
    if depth > 32 {
        out.error(
            path,
            "invalid-condition",
            "the condition nests deeper than 32 levels",
        );
        return;
    }
    match c {
        Value::String(s) if s == "always" || s == "never" => {}
        Value::Object(o) if o.len() == 1 || (o.len() == 2 && o.contains_key("equals")) => {
            if let Some(s) = o.get("scope") {
                if !matches!(s.as_str(), Some("workspace" | "channel")) {
                    out.error(
                        &join(path, "scope"),
                        "invalid-condition",
                        "`scope` is workspace or channel",
                    );
                }
            } else if let Some(p) = o.get("parameter") {
                if p.as_str().is_none_or(|p| p.is_empty()) {
                    out.error(
                        &join(path, "parameter"),
                        "invalid-condition",
                        "`parameter` names a parameter",
                    );
                }
            } else if let Some(Value::Array(a)) = o.get("any").or_else(|| o.get("all")) {
                let k = if o.contains_key("any") { "any" } else { "all" };
                for (i, x) in a.iter().enumerate() {
                    check_condition(x, &format!("{path}.{k}[{i}]"), out, depth + 1);
                }
            } else if let Some(n) = o.get("not") {
                check_condition(n, &join(path, "not"), out, depth + 1);
            } else {
                out.error(path, "invalid-condition", SHAPE);
            }
        }
        _ => out.error(path, "invalid-condition", SHAPE),
    }
}

fn check_artifact(
    skill: &Skill,
    a: &SkillArtifact,
    at: &str,
    unread: &[String],
    skip: Option<&str>,
    out: &mut Problems,
) {
    let m = &a.metadata;
    let mp = |k: &str| format!("{at}.metadata.{k}");
    match a.kind {
        ArtifactKind::PromptTemplate | ArtifactKind::CodeTemplate
            if skip != Some(a.name.as_str()) =>
        {
            if let Err(e) = template::check(&a.content) {
                let line = match (e.line, e.column) {
                    (Some(l), Some(c)) => format!(" on line {l}, column {c}"),
                    (Some(l), None) => format!(" on line {l}"),
                    _ => String::new(),
                };
                out.error(
                    &join(at, "content"),
                    "template-syntax",
                    format!(
                        "the {} does not parse as MiniJinja{line}: {}",
                        a.kind.name(),
                        e.detail
                    ),
                );
            }
        }
        ArtifactKind::PromptTemplate | ArtifactKind::CodeTemplate => {}
        ArtifactKind::DspyModule => {
            let content: Option<Value> = serde_json::from_str(&a.content).ok();
            if !content
                .as_ref()
                .and_then(|c| c.get("template_id"))
                .is_some_and(Value::is_string)
            {
                out.error(
                    &join(at, "content"),
                    "invalid-content",
                    "a dspy_module's content is JSON naming a shipped template: { \"template_id\": … }",
                );
            }
            match m.get("fallback_artifact") {
                None => out.error(
                    &mp("fallback_artifact"),
                    "missing-fallback",
                    "a dspy_module must name its fallback_artifact (a prompt_template of this skill): it runs where no DSPy executor is, or when the executor fails",
                ),
                Some(Value::String(name)) => {
                    let ok = skill
                        .artifacts
                        .iter()
                        .any(|x| x.kind == ArtifactKind::PromptTemplate && &x.name == name);
                    if !ok && !unread.contains(name) {
                        let have = names_of(skill, &[ArtifactKind::PromptTemplate]);
                        out.error(
                            &mp("fallback_artifact"),
                            "unknown-fallback",
                            format!(
                                "the fallback `{name}` names no prompt_template of this skill ({})",
                                if have.is_empty() {
                                    "it has none".to_owned()
                                } else {
                                    format!("it has {}", have.join(", "))
                                }
                            ),
                        );
                    }
                }
                Some(_) => out.error(
                    &mp("fallback_artifact"),
                    "wrong-type",
                    "`fallback_artifact` must be the name of a prompt_template",
                ),
            }
        }
        ArtifactKind::Description => {
            if let Some(c) = m.get("include_when") {
                check_condition(c, &mp("include_when"), out, 0);
            }
        }
        ArtifactKind::Example => {
            if let Some(t) = m.get("tags") {
                if !t.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                    out.error(
                        &mp("tags"),
                        "wrong-type",
                        "`tags` must be an array of strings",
                    );
                }
            }
        }
        ArtifactKind::Approach => check_approach(skill, m, at, out),
    }
    if a.state_blob.is_some() && a.kind != ArtifactKind::DspyModule {
        out.warning(
            &join(at, "state_blob"),
            "unused-field",
            "only dspy_module artifacts use `state_blob`",
        );
    }
    if let Some(asserts) = m.get("assertions") {
        check_assertions(asserts, &mp("assertions"), out);
    }
}

fn check_tool_list(v: &Value, path: &str, skill: &Skill, out: &mut Problems) {
    let Some(a) = v.as_array().filter(|a| a.iter().all(Value::is_string)) else {
        out.error(path, "wrong-type", "a tool list is an array of tool names");
        return;
    };
    let Some(surface) = skill.declared_tool_surface() else {
        return;
    };
    for (i, t) in a.iter().enumerate() {
        if let Some(t) = t.as_str() {
            if !surface.contains(&t) {
                out.error(
                    &format!("{path}[{i}]"),
                    "unknown-tool",
                    format!("`{t}` is not in the skill's tool_surface"),
                );
            }
        }
    }
}

fn check_approach(skill: &Skill, m: &Map<String, Value>, at: &str, out: &mut Problems) {
    let mp = |k: &str| format!("{at}.metadata.{k}");
    if let Some(t) = m.get("tools") {
        check_tool_list(t, &mp("tools"), skill, out);
    }
    if let Some(w) = m.get("when") {
        check_condition(w, &mp("when"), out, 0);
    }
    match m.get("stages") {
        None => {}
        Some(Value::Array(stages)) if !stages.is_empty() => {
            let mut seen: Vec<&str> = Vec::new();
            for (i, s) in stages.iter().enumerate() {
                let p = format!("{}[{i}]", mp("stages"));
                match s.get("name").and_then(Value::as_str) {
                    Some(n) if !n.trim().is_empty() => {
                        if seen.contains(&n) {
                            out.error(
                                &p,
                                "duplicate-stage",
                                format!("stage `{n}` is declared twice"),
                            );
                        }
                        seen.push(n);
                    }
                    _ => out.error(&join(&p, "name"), "missing-field", "a stage needs a `name`"),
                }
                if let Some(t) = s.get("tools") {
                    check_tool_list(t, &join(&p, "tools"), skill, out);
                }
            }
        }
        Some(_) => out.error(
            &mp("stages"),
            "wrong-type",
            "`stages` must be a non-empty array of { name, tools?, description? }",
        ),
    }
}

fn check_assertions(v: &Value, path: &str, out: &mut Problems) {
    let Some(list) = v.as_array() else {
        out.error(path, "wrong-type", "`assertions` must be an array");
        return;
    };
    for (i, a) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let ty = a.get("type").and_then(Value::as_str);
        match ty {
            Some("structural") => match a.get("schema") {
                Some(s) => schema::check(s, &join(&p, "schema"), out),
                None => out.error(
                    &join(&p, "schema"),
                    "missing-field",
                    "a structural assertion needs a `schema`",
                ),
            },
            Some("length") => {
                let min = a.get("min");
                let max = a.get("max");
                let bad = |x: Option<&Value>| x.is_some_and(|x| x.as_u64().is_none());
                if bad(min) || bad(max) || (min.is_none() && max.is_none()) {
                    out.error(
                        &p,
                        "invalid-assertion",
                        "a length assertion needs `min` and/or `max` as non-negative integers",
                    );
                } else if let (Some(lo), Some(hi)) =
                    (min.and_then(Value::as_u64), max.and_then(Value::as_u64))
                {
                    if lo > hi {
                        out.error(
                            &p,
                            "invalid-assertion",
                            format!("`min` ({lo}) is above `max` ({hi})"),
                        );
                    }
                }
                if let Some(c) = a.get("check").and_then(Value::as_str) {
                    if !matches!(c, "char_range" | "token_range" | "word_range") {
                        out.error(
                            &join(&p, "check"),
                            "invalid-assertion",
                            "a length check is char_range, token_range or word_range",
                        );
                    }
                }
            }
            Some("pattern") => match a.get("pattern").and_then(Value::as_str) {
                None => out.error(
                    &join(&p, "pattern"),
                    "missing-field",
                    "a pattern assertion needs a `pattern` string",
                ),
                // Compiled where the composer (which runs the assertion) is built in.
                #[cfg(feature = "composer")]
                Some(re) => {
                    if let Err(e) = regex_lite::Regex::new(re) {
                        out.error(
                            &join(&p, "pattern"),
                            "invalid-pattern",
                            format!("the pattern does not compile: {e}"),
                        );
                    }
                }
                #[cfg(not(feature = "composer"))]
                Some(_) => {}
            },
            Some("semantic") => {
                if !a.get("prompt").is_some_and(Value::is_string) {
                    out.error(
                        &join(&p, "prompt"),
                        "missing-field",
                        "a semantic assertion needs a `prompt` string",
                    );
                }
            }
            _ => out.error(
                &join(&p, "type"),
                "invalid-assertion",
                "an assertion's `type` is structural, semantic, length or pattern",
            ),
        }
        if let Some(s) = a.get("severity") {
            if !matches!(s.as_str(), Some("hard" | "soft")) {
                out.error(
                    &join(&p, "severity"),
                    "invalid-assertion",
                    "`severity` is hard or soft",
                );
            }
        }
    }
}
