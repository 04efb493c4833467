//! DSPy optimisation, the host executor's second and third modes (the seed's sidecar
//! `optimize` and `manifest`; `execute` is [`super::route`] / [`super::prepare`]).
//!
//! - The **manifest** (`{ version, templates?: [{ template_id, signature? }] }`) says which
//!   executor version runs and which templates it offers ([`Manifest::read`]).
//! - **Optimise**: [`call`] builds the executor's input — the `dspy_module`'s template and
//!   current state, and training examples from the traces (the passed examples of the module
//!   and of its fallback template, which does the same task) — and [`stamp`] writes the
//!   state blob the executor returned into the artifact, stamped with the executor's version.
//! - **Re-optimisation**: a state blob stamped by another version (or not stamped) is stale
//!   ([`stale`]): the host lists those and optimises them on request.

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use serde_json::{Map, Value};

/// What a DSPy executor's manifest says.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The executor's version (a DSPy version bump changes it).
    pub version: String,
}

impl Manifest {
    /// Reads a manifest (`{ version: string, templates?: [...] }`); anything else is
    /// `AdapterFailed` (the executor answered wrongly).
    pub fn read(v: &Value) -> Result<Manifest> {
        let version = v
            .get("version")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::AdapterFailed,
                    "the DSPy executor's manifest must be { version: string, templates?: [{ template_id }] }",
                )
            })?;
        if v.get("templates").is_some_and(|t| !t.is_array()) {
            return Err(Error::new(
                ErrorKind::AdapterFailed,
                "the DSPy executor's manifest `templates` must be an array",
            ));
        }
        Ok(Manifest {
            version: version.to_owned(),
        })
    }
}

fn dspy_module(artifact: &Value) -> Result<&Map<String, Value>> {
    artifact
        .as_object()
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("dspy_module"))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                "optimisation takes a dspy_module artifact (with its content)",
            )
        })
}

/// The optimise call for the `dspy_module` `artifact` (JSON with content): `{ template_id,
/// content, state_blob, training_data }`. `dataset` is the DSPy dataset export of the
/// skill's traces (JSON lines); the training data are its passed examples of the module or
/// of `fallback_id` (its fallback template), as `{ rendered_input, raw_output, score }`.
pub fn call(artifact: &Value, dataset: &str, fallback_id: Option<&str>) -> Result<Value> {
    let a = dspy_module(artifact)?;
    let id = a.get("id").and_then(Value::as_str).unwrap_or("");
    let content: Value = a
        .get("content")
        .and_then(Value::as_str)
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null);
    let mut examples = Vec::new();
    for line in dataset.lines().filter(|l| !l.trim().is_empty()) {
        let e: Value = serde_json::from_str(line).map_err(|err| {
            Error::new(
                ErrorKind::InvalidRequest,
                format!("a dataset line is not JSON: {err}"),
            )
        })?;
        let of = e.get("artifact_id").and_then(Value::as_str);
        let ours = of == Some(id) || (of.is_some() && of == fallback_id);
        if !ours || e.get("passed") != Some(&Value::Bool(true)) {
            continue;
        }
        let mut x = Map::new();
        for k in ["rendered_input", "raw_output", "score"] {
            x.insert(k.into(), e.get(k).cloned().unwrap_or(Value::Null));
        }
        examples.push(Value::Object(x));
    }
    let mut o = Map::new();
    o.insert(
        "template_id".into(),
        content.get("template_id").cloned().unwrap_or(Value::Null),
    );
    o.insert("content".into(), content);
    o.insert(
        "state_blob".into(),
        a.get("state_blob").cloned().unwrap_or(Value::Null),
    );
    o.insert("training_data".into(), Value::Array(examples));
    Ok(Value::Object(o))
}

/// The `dspy_module` `artifact` with the executor's new `state_blob` (text; an object is
/// written as JSON) and `metadata.optimized = { executor_version, optimized_at, examples }`.
pub fn stamp(
    artifact: &Value,
    state_blob: &Value,
    version: &str,
    examples: usize,
    now: &str,
) -> Result<Value> {
    let mut a = dspy_module(artifact)?.clone();
    let blob =
        match state_blob {
            Value::String(s) if !s.is_empty() => s.clone(),
            Value::Object(_) | Value::Array(_) => state_blob.json_text(),
            _ => return Err(Error::new(
                ErrorKind::AdapterFailed,
                "the DSPy executor's optimize must return the state blob (JSON text or an object)",
            )),
        };
    a.insert("state_blob".into(), blob.into());
    let mut stamp = Map::new();
    stamp.insert("executor_version".into(), version.into());
    stamp.insert("optimized_at".into(), now.into());
    stamp.insert("examples".into(), examples.into());
    let meta = a
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(m) = meta {
        m.insert("optimized".into(), Value::Object(stamp));
    }
    Ok(Value::Object(a))
}

/// The `dspy_module` artifacts among `artifacts` (JSON with metadata) whose state blob needs
/// re-optimising under the executor `version`: `[{ skill_id, artifact_id, name, reason:
/// "unstamped" | "version-changed", optimized_with }]`. An artifact without a state blob
/// is not listed (nothing was optimised; it runs from its template as shipped).
pub fn stale(artifacts: &[Value], version: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for a in artifacts {
        let s = |k: &str| a.get(k).and_then(Value::as_str);
        if s("kind") != Some("dspy_module") || s("state_blob").is_none_or(str::is_empty) {
            continue;
        }
        let with = a
            .pointer("/metadata/optimized/executor_version")
            .and_then(Value::as_str);
        let reason = match with {
            Some(v) if v == version => continue,
            Some(_) => "version-changed",
            None => "unstamped",
        };
        let mut o = Map::new();
        o.insert("skill_id".into(), s("skill_id").unwrap_or("").into());
        o.insert("artifact_id".into(), s("id").unwrap_or("").into());
        o.insert("name".into(), s("name").unwrap_or("").into());
        o.insert("reason".into(), reason.into());
        o.insert(
            "optimized_with".into(),
            with.map_or(Value::Null, Value::from),
        );
        out.push(Value::Object(o));
    }
    out
}

fn json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidRequest,
            format!("{what} is not JSON: {e}"),
        )
    })
}

/// [`call`] over JSON text (`fallback_id` empty: none).
pub fn call_json(artifact: &str, dataset: &str, fallback_id: &str) -> Result<String> {
    let fb = (!fallback_id.is_empty()).then_some(fallback_id);
    Ok(call(&json(artifact, "the artifact")?, dataset, fb)?.json_text())
}

/// [`stamp`] over JSON text: `manifest` is the executor's manifest, `state_blob` what its
/// optimize returned (JSON).
pub fn stamp_json(
    artifact: &str,
    state_blob: &str,
    manifest: &str,
    examples: usize,
    now: &str,
) -> Result<String> {
    let m = Manifest::read(&json(manifest, "the DSPy manifest")?)?;
    let blob = json(state_blob, "the state blob")?;
    Ok(stamp(
        &json(artifact, "the artifact")?,
        &blob,
        &m.version,
        examples,
        now,
    )?
    .json_text())
}

/// [`stale`] over JSON text: `artifacts` an array, `manifest` the executor's manifest.
pub fn stale_json(artifacts: &str, manifest: &str) -> Result<String> {
    let m = Manifest::read(&json(manifest, "the DSPy manifest")?)?;
    let list = match json(artifacts, "the artifacts")? {
        Value::Array(a) => a,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "the artifacts must be an array",
            ))
        }
    };
    Ok(Value::Array(stale(&list, &m.version)).json_text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn module() -> Value {
        json!({ "id": "a1", "skill_id": "s1", "kind": "dspy_module", "name": "M",
                "content": "{\"template_id\":\"cot\"}", "state_blob": null, "metadata": { "fallback_artifact": "P" } })
    }

    #[test]
    fn call_stamp_and_stale() {
        let data = [
            json!({ "artifact_id": "a1", "passed": true, "rendered_input": "i1", "raw_output": "o1", "score": 1.0 }),
            json!({ "artifact_id": "p1", "passed": true, "rendered_input": "i2", "raw_output": "o2", "score": null }),
            json!({ "artifact_id": "p1", "passed": false, "rendered_input": "i3", "raw_output": "o3", "score": 0.0 }),
            json!({ "artifact_id": "zz", "passed": true, "rendered_input": "i4", "raw_output": "o4", "score": null }),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
        let c = call(&module(), &data, Some("p1")).unwrap(); // ok: test
        assert_eq!(c["template_id"], "cot");
        assert_eq!(c["training_data"].as_array().map(Vec::len), Some(2));
        let s = stamp(&module(), &json!({ "demos": [] }), "dspy-2.6", 2, "T").unwrap(); // ok: test
        assert_eq!(s["state_blob"], "{\"demos\":[]}");
        assert_eq!(s["metadata"]["fallback_artifact"], "P");
        assert_eq!(s["metadata"]["optimized"]["executor_version"], "dspy-2.6");
        assert!(stale(std::slice::from_ref(&s), "dspy-2.6").is_empty());
        assert_eq!(stale(&[s], "dspy-3.0")[0]["reason"], "version-changed");
        let mut raw = module();
        raw["state_blob"] = json!("{}");
        assert_eq!(stale(&[raw], "x")[0]["reason"], "unstamped");
        assert!(
            stale(&[module()], "x").is_empty(),
            "no blob: nothing to re-optimise"
        );
        assert!(stamp(&module(), &json!(null), "v", 0, "T").is_err());
        assert!(call(&json!({ "kind": "prompt_template" }), "", None).is_err());
        assert!(Manifest::read(&json!({ "templates": [] })).is_err());
        assert_eq!(
            Manifest::read(&json!({ "version": "v" })).unwrap().version, // ok: test
            "v"
        );
    }
}
