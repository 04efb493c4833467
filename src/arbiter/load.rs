//! Loading SkillSpecs in bulk — the seed's `skills/*.json`: the host reads a folder (or has
//! a list of files) and passes each file's path and text (in the order it wants them); every file is read and validated
//! before anything is used, and one error lists every problem of every file.

use super::{validate, PROPOSE_SKILL, PROPOSE_TOOL};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::Severity;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// What a bulk load gives: the specs (in the files' order; a file holding an array gives
/// each in turn) and the warnings, each naming its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The specs, ready for [`super::SkillRegistry::build`].
    pub specs: Vec<Value>,
    /// `{ file, path, code, message, severity: "warning" }` for each warning.
    pub warnings: Vec<Value>,
}

fn problem(file: &str, path: &str, code: &str, message: String, severity: &str) -> Value {
    let mut o = Map::new();
    o.insert("file".into(), file.into());
    o.insert("path".into(), path.into());
    o.insert("code".into(), code.into());
    o.insert("message".into(), message.into());
    o.insert("severity".into(), severity.into());
    Value::Object(o)
}

/// Reads and validates every file (`(path, text)`; a file holds one spec object or an array
/// of them), against `tools` (plus the arbiter's proposal tools) when given. Any error in
/// any file — not JSON, not a spec, an invalid spec, a name two specs share — fails the
/// whole load with `InvalidSkill` whose `details.problems` lists every problem of every file
/// (`{ file, path, code, message, severity }`), errors and warnings.
pub fn load_files(files: &[(String, String)], tools: Option<&BTreeSet<String>>) -> Result<Loaded> {
    let tools = tools.map(|t| {
        let mut t = t.clone();
        t.insert(PROPOSE_TOOL.into());
        t.insert(PROPOSE_SKILL.into());
        t
    });
    let mut specs = Vec::new();
    let mut problems: Vec<Value> = Vec::new();
    let mut errors = 0usize;
    let mut names: Vec<(String, &str)> = Vec::new();
    for (file, text) in files {
        let parsed: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                errors += 1;
                problems.push(problem(
                    file,
                    "$",
                    "invalid-json",
                    format!("not JSON: {e}"),
                    "error",
                ));
                continue;
            }
        };
        let (list, many) = match parsed {
            Value::Array(a) => (a, true),
            v @ Value::Object(_) => (vec![v], false),
            _ => {
                errors += 1;
                problems.push(problem(
                    file,
                    "$",
                    "not-a-spec",
                    "a spec file holds one SkillSpec object or an array of them".into(),
                    "error",
                ));
                continue;
            }
        };
        for (i, spec) in list.into_iter().enumerate() {
            let at = |p: &str| match (many, p) {
                (false, _) => p.to_owned(),
                (true, "" | "$") => format!("[{i}]"),
                (true, _) => format!("[{i}].{p}"),
            };
            for p in validate::validate_spec(&spec, tools.as_ref()).problems {
                let sev = match p.severity {
                    Severity::Error => {
                        errors += 1;
                        "error"
                    }
                    Severity::Warning => "warning",
                };
                problems.push(problem(file, &at(&p.path), p.code, p.message, sev));
            }
            if let Some(name) = spec.get("name").and_then(Value::as_str) {
                if let Some((_, first)) = names.iter().find(|(n, _)| n == name) {
                    errors += 1;
                    problems.push(problem(
                        file,
                        &at("name"),
                        "duplicate-name",
                        format!("`{name}` is also the name of a spec in {first}"),
                        "error",
                    ));
                } else {
                    names.push((name.to_owned(), file));
                }
            }
            specs.push(spec);
        }
    }
    if errors > 0 {
        let first = problems
            .iter()
            .find(|p| p["severity"] == "error")
            .map(|p| {
                format!(
                    "{} (at {} {})",
                    p["message"].as_str().unwrap_or(""),
                    p["file"].as_str().unwrap_or(""),
                    p["path"].as_str().unwrap_or("")
                )
            })
            .unwrap_or_default();
        return Err(Error::new(
            ErrorKind::InvalidSkill,
            format!("{errors} problem(s) in the spec files, nothing loaded: {first}"),
        )
        .with("problems", Value::Array(problems)));
    }
    Ok(Loaded {
        specs,
        warnings: problems,
    })
}

/// [`load_files`] over JSON text: `files` is `[{ path, text }]`, `tools` a JSON array of
/// names or `null` → `{ specs, warnings }`.
pub fn load_files_json(files: &str, tools: &str) -> Result<String> {
    let bad = |m: &str| Error::new(ErrorKind::InvalidRequest, m.to_owned());
    let list: Value =
        serde_json::from_str(files).map_err(|_| bad("the spec files are not JSON"))?;
    let Value::Array(list) = list else {
        return Err(bad("the spec files must be an array of { path, text }"));
    };
    let mut pairs = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let s = |k: &str| f.get(k).and_then(Value::as_str).map(str::to_owned);
        match (s("path"), s("text")) {
            (Some(p), Some(t)) => pairs.push((p, t)),
            _ => {
                return Err(
                    bad("each spec file is { path, text } (strings)").at(format!("files[{i}]"))
                )
            }
        }
    }
    let tools: Option<BTreeSet<String>> = if tools.trim().is_empty() {
        None
    } else {
        match serde_json::from_str::<Value>(tools) {
            Ok(Value::Null) => None,
            Ok(Value::Array(a)) if a.iter().all(Value::is_string) => Some(crate::sort::set_of(
                a.iter().filter_map(Value::as_str).map(str::to_owned),
            )),
            _ => return Err(bad("`tools` must be an array of tool names")),
        }
    };
    let loaded = load_files(&pairs, tools.as_ref())?;
    let mut o = Map::new();
    o.insert("specs".into(), Value::Array(loaded.specs));
    o.insert("warnings".into(), Value::Array(loaded.warnings));
    Ok(Value::Object(o).json_text())
}
