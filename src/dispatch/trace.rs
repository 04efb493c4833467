//! Execution traces: one row per artifact execution with the seed's columns (rendered
//! input, raw output, error, timing, tokens, model, estimated cost, assertions run and
//! passed), stored per scope (the row's key and write are `store::traces`) and exported as JSON
//! lines.

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::json_text::JsonText;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The trace columns of the seed's `skill_execution_traces`, in order.
pub const COLUMNS: [&str; 18] = [
    "id",
    "session_id",
    "skill_id",
    "artifact_id",
    "artifact_kind",
    "rendered_input",
    "raw_output",
    "error",
    "started_at",
    "completed_at",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "model_id",
    "estimated_cost",
    "assertions_run",
    "assertions_passed",
    "created_at",
];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Builds a trace row from the host's record of one execution (`{ session_id, skill_id,
/// artifact_id, artifact_kind, rendered_input?, raw_output?, error?, started_at,
/// completed_at?, duration_ms?, input_tokens?, output_tokens?, model_id?, pricing?: {
/// input_per_mtok, output_per_mtok }, assertions_run?, assertions_passed?, assertions?,
/// route?, fallback_from?, fallback_reason? }`). The id derives from the content; `estimated_cost` is
/// computed from `pricing` (USD per million tokens) when both token counts are known.
pub fn row(input: Value) -> Result<Map<String, Value>> {
    let Value::Object(mut o) = input else {
        return Err(Error::new(ErrorKind::InvalidRequest, "a trace is an object").at("$"));
    };
    let mut f = Fields::new(&mut o, "", ErrorKind::InvalidRequest);
    let mut r = Map::new();
    for k in [
        "session_id",
        "skill_id",
        "artifact_id",
        "artifact_kind",
        "started_at",
    ] {
        r.insert(k.into(), f.string(k)?.into());
    }
    for k in [
        "rendered_input",
        "raw_output",
        "error",
        "completed_at",
        "model_id",
    ] {
        r.insert(
            k.into(),
            f.opt_string(k)?.map_or(Value::Null, Value::String),
        );
    }
    let mut ints = |k: &str, f: &mut Fields<'_>| -> Result<Option<u64>> {
        let v = f.opt_u64(k)?;
        r.insert(k.into(), v.map_or(Value::Null, Value::from));
        Ok(v)
    };
    ints("duration_ms", &mut f)?;
    let tin = ints("input_tokens", &mut f)?;
    let tout = ints("output_tokens", &mut f)?;
    let run = ints("assertions_run", &mut f)?;
    let passed = ints("assertions_passed", &mut f)?;
    let created_at = f.opt_string("created_at")?;
    let pricing = f.opt_object("pricing")?;
    let cost = match (pricing, tin, tout) {
        (Some(p), Some(i), Some(o)) => {
            let rate = |k: &str| p.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let c = (i as f64 * rate("input_per_mtok") + o as f64 * rate("output_per_mtok")) / 1e6;
            serde_json::Number::from_f64((c * 1e9).round() / 1e9).map_or(Value::Null, Value::Number)
        }
        _ => Value::Null,
    };
    r.insert("estimated_cost".into(), cost);
    r.insert("assertions_run".into(), run.unwrap_or(0).into());
    r.insert("assertions_passed".into(), passed.unwrap_or(0).into());
    for k in ["assertions", "route", "fallback_from", "fallback_reason"] {
        if let Some(v) = f.take(k) {
            r.insert(k.into(), v);
        }
    }
    if let Some(k) = f.leftover() {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!("unknown trace field `{k}`"),
        )
        .at(k));
    }
    let digest = Sha256::digest(Value::Object(r.clone()).json_text().as_bytes());
    r.insert(
        "id".into(),
        format!("trace-{}", hex(digest.get(..12).unwrap_or(&[]))).into(),
    );
    // When the row was made: the host's time if it says, else when the execution ended (or
    // began). Not part of the id, which stays a digest of the execution itself.
    let created = created_at
        .map(Value::String)
        .or_else(|| r.get("completed_at").filter(|v| v.is_string()).cloned())
        .or_else(|| r.get("started_at").cloned())
        .unwrap_or(Value::Null);
    r.insert("created_at".into(), created);
    Ok(r)
}

/// One DSPy example line for a trace row, or nothing when the execution failed or gave no
/// output (it is no example of the artifact's behaviour).
fn dspy_example(v: &Map<String, Value>, out: &mut String) {
    let (Some(input), Some(output)) = (
        v.get("rendered_input").and_then(Value::as_str),
        v.get("raw_output").and_then(Value::as_str),
    ) else {
        return;
    };
    if v.get("error").is_some_and(|e| !e.is_null()) {
        return;
    }
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (run, passed) = (n("assertions_run"), n("assertions_passed"));
    let score = if run == 0 {
        Value::Null
    } else {
        serde_json::Number::from_f64(passed as f64 / run as f64).map_or(Value::Null, Value::Number)
    };
    let id = |k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    let mut e = Map::new();
    e.insert("rendered_input".into(), input.into());
    e.insert("raw_output".into(), output.into());
    e.insert("passed".into(), (passed == run).into());
    e.insert("score".into(), score);
    e.insert("skill_id".into(), id("skill_id"));
    e.insert("artifact_id".into(), id("artifact_id"));
    e.insert("trace_id".into(), id("id"));
    e.insert(
        "dspy_inputs".into(),
        Value::Array(vec!["rendered_input".into()]),
    );
    out.push_str(&Value::Object(e).json_text());
    out.push('\n');
}

/// How traces are exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Export {
    /// One row per line, the seed's columns first, in order, then the extras.
    #[default]
    JsonLines,
    /// A DSPy evaluation dataset: one example per line for each execution that produced
    /// output without an error: `rendered_input` (the input), `raw_output` (the label),
    /// `passed` (every assertion held) and `score` (assertions passed / run; `null` when
    /// none ran), the ids, and `dspy_inputs: ["rendered_input"]`, the keys to pass to
    /// `Example.with_inputs`.
    Dspy,
}

/// Trace rows (JSON texts) filtered by skill and artifact, as JSON lines: the seed's
/// columns first, in order, then the extras.
pub fn export_jsonl<'a>(
    rows: impl IntoIterator<Item = &'a str>,
    skill_id: Option<&str>,
    artifact_id: Option<&str>,
) -> Result<String> {
    export(rows, skill_id, artifact_id, Export::JsonLines)
}

/// Trace rows (JSON texts) filtered by skill and artifact, in the form `how` names.
pub fn export<'a>(
    rows: impl IntoIterator<Item = &'a str>,
    skill_id: Option<&str>,
    artifact_id: Option<&str>,
    how: Export,
) -> Result<String> {
    // One body for every kind of row source: the generic part is only this call.
    export_each(&mut rows.into_iter(), skill_id, artifact_id, how)
}

fn export_each(
    rows: &mut dyn Iterator<Item = &str>,
    skill_id: Option<&str>,
    artifact_id: Option<&str>,
    how: Export,
) -> Result<String> {
    let mut out = String::new();
    for text in rows {
        let v: Map<String, Value> = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::StoreFailed,
                format!("a trace row is not JSON: {e}"),
            )
        })?;
        let get = |k: &str| v.get(k).and_then(Value::as_str);
        if skill_id.is_some_and(|s| get("skill_id") != Some(s))
            || artifact_id.is_some_and(|a| get("artifact_id") != Some(a))
        {
            continue;
        }
        if how == Export::Dspy {
            dspy_example(&v, &mut out);
            continue;
        }
        // Columns in the seed's order (serde_json's map is sorted, so write by hand).
        out.push('{');
        let mut first = true;
        let mut field = |k: &str, x: &Value, out: &mut String| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&Value::String(k.to_owned()).json_text());
            out.push(':');
            out.push_str(&x.json_text());
        };
        for k in COLUMNS {
            field(k, v.get(k).unwrap_or(&Value::Null), &mut out);
        }
        for (k, x) in &v {
            if !COLUMNS.contains(&k.as_str()) {
                field(k, x, &mut out);
            }
        }
        out.push_str("}\n");
    }
    Ok(out)
}
