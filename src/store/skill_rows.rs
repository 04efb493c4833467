//! The skill store's rows (the layout described in [`super::skills`]): their keys, the
//! fields a backend with native indexes indexes them by, and the readers that turn rows
//! back into summaries, artifacts and skills.

use super::{bad_row, Op, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::Problems;
use crate::skill::model::{
    sort_artifacts, ArtifactKind, ArtifactRef, Skill, SkillArtifact, SkillSummary,
};
use crate::skill::read::{read_artifact, read_skill};
use serde_json::{Map, Value};

pub(super) fn artifact_key(skill: &str, kind: ArtifactKind, id: &str) -> String {
    format!("{skill}/{}/{id}", kind.name())
}

/// JSON text of a value (serialized straight into bytes, not through `Display`).
pub(crate) fn text(v: &Value) -> String {
    crate::json_text::to_string(v).unwrap_or_default()
}

pub(super) fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).json_text()
}

/// The fields a backend with native indexes (IndexedDB) indexes a row by: `name` and
/// `source` of a skill row, `skill_id`, `kind` and `id` of an artifact row; `None` for
/// other tables. (IndexedDB answers the `skill_names` and `artifact_ids` tables from the
/// unique `name` and `id` indexes instead of keeping their rows.) The layout's key ranges answer the same questions on every backend.
pub fn index_fields(table: Table, key: &str, value: &str) -> Option<Map<String, Value>> {
    let mut o = Map::new();
    match table {
        Table::Skills => {
            let v: Value = serde_json::from_str(value).ok()?;
            for f in ["name", "source"] {
                o.insert(f.into(), v.get(f).cloned().unwrap_or(Value::Null));
            }
        }
        Table::Artifacts => {
            let mut parts = key.splitn(3, '/');
            o.insert("skill_id".into(), parts.next()?.into());
            o.insert("kind".into(), parts.next()?.into());
            o.insert("id".into(), parts.next()?.into());
        }
        _ => return None,
    }
    Some(o)
}

/// The sync state row of a catalog URL (`skill_sync/<url>`): the ETag to send next time.
pub fn state_op(url: &str, etag: &str, now: &str) -> Op {
    let mut o = Map::new();
    o.insert(
        "etag".into(),
        if etag.is_empty() {
            Value::Null
        } else {
            etag.into()
        },
    );
    o.insert("synced_at".into(), now.into());
    Op::Put {
        table: Table::SkillSync,
        key: url.to_owned(),
        value: Value::Object(o).json_text(),
    }
}

/// Reads skill rows into summaries (in row order).
pub fn read_summaries(rows: &[(String, String)]) -> Result<Vec<SkillSummary>> {
    rows.iter().map(|(k, v)| read_summary(k, v)).collect()
}

/// Reads a skill row into its summary.
pub fn read_summary(key: &str, value: &str) -> Result<SkillSummary> {
    let v: Value = serde_json::from_str(value).map_err(|e| bad_row(Table::Skills, key, e))?;
    let Value::Object(mut head) = v else {
        return Err(bad_row(Table::Skills, key, "not an object"));
    };
    for f in ["id", "name"] {
        if !head.get(f).is_some_and(Value::is_string) {
            return Err(bad_row(Table::Skills, key, format!("no `{f}`")));
        }
    }
    let refs = match head.remove("artifacts") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|r| {
                read_ref(r)
                    .ok_or_else(|| bad_row(Table::Skills, key, "a malformed artifact reference"))
            })
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
        Some(_) => return Err(bad_row(Table::Skills, key, "`artifacts` is not an array")),
    };
    Ok(SkillSummary::from_parts(head, refs))
}

/// A reference from a skill row's `artifacts` — or from a whole skill's, whose artifacts
/// carry a `dspy_module`'s fallback in `metadata.fallback_artifact`.
pub(super) fn read_ref(v: &Value) -> Option<ArtifactRef> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let kind = ArtifactKind::parse(v.get("kind")?.as_str()?)?;
    let fallback = s("fallback").or_else(|| {
        (kind == ArtifactKind::DspyModule)
            .then(|| {
                v.pointer("/metadata/fallback_artifact")
                    .and_then(Value::as_str)
            })
            .flatten()
            .map(str::to_owned)
    });
    Some(ArtifactRef {
        id: s("id")?,
        kind,
        name: s("name")?,
        ordinal: v.get("ordinal").and_then(Value::as_i64).unwrap_or(0),
        model_variant: s("model_variant"),
        fallback,
    })
}

/// Reads an artifact row.
pub fn read_artifact_row(key: &str, value: &str) -> Result<SkillArtifact> {
    let v: Value = serde_json::from_str(value).map_err(|e| bad_row(Table::Artifacts, key, e))?;
    let skill = key.split('/').next().unwrap_or("");
    let mut out = Problems::default();
    let a = read_artifact(&v, "", skill, 0, "", &mut out);
    row_or_error(a, out, Table::Artifacts, key)
}

/// What a row reader built, or `StoreFailed` naming the row and its first problem.
pub(super) fn row_or_error<T>(
    built: Option<T>,
    out: Problems,
    table: Table,
    key: &str,
) -> Result<T> {
    match built {
        Some(t) if !out.has_errors() => Ok(t),
        _ => {
            let why = out
                .0
                .first()
                .map(|p| format!("{} (at {})", p.message, p.path))
                .unwrap_or_default();
            Err(bad_row(table, key, why))
        }
    }
}

/// A whole skill from its row and its artifact rows.
pub fn assemble(key: &str, value: &str, artifacts: &[(String, String)]) -> Result<Skill> {
    let summary = read_summary(key, value)?;
    let mut skill = skill_of(&summary, key)?;
    skill.artifacts = artifacts
        .iter()
        .map(|(k, v)| read_artifact_row(k, v))
        .collect::<Result<Vec<_>>>()?;
    sort_artifacts(&mut skill.artifacts);
    Ok(skill)
}

/// The skill of a summary, with no artifacts.
pub(super) fn skill_of(summary: &SkillSummary, key: &str) -> Result<Skill> {
    let mut out = Problems::default();
    let s = read_skill(&Value::Object(summary.head().clone()), "", false, &mut out);
    row_or_error(s, out, Table::Skills, key)
}

/// The skill of a summary with content-less stand-ins for its artifacts (enough for the
/// cross-reference rules: names, variants, kinds, fallbacks).
pub(super) fn with_stubs(summary: &SkillSummary, key: &str) -> Result<Skill> {
    let mut skill = skill_of(summary, key)?;
    skill.artifacts = summary
        .artifacts
        .iter()
        .map(|r| {
            let mut metadata = Map::new();
            if let Some(f) = &r.fallback {
                metadata.insert("fallback_artifact".into(), f.clone().into());
            }
            SkillArtifact {
                id: r.id.clone(),
                skill_id: skill.id.clone(),
                kind: r.kind,
                name: r.name.clone(),
                ordinal: r.ordinal,
                content: String::new(),
                model_variant: r.model_variant.clone(),
                metadata,
                state_blob: None,
                created_at: String::new(),
                updated_at: String::new(),
            }
        })
        .collect();
    Ok(skill)
}

pub(super) fn summary_row(skill: &Skill) -> String {
    text(&skill.summary().to_value())
}

pub(super) fn put(table: Table, key: String, value: String) -> Op {
    Op::Put { table, key, value }
}

pub(super) fn delete(table: Table, key: String) -> Op {
    Op::Delete { table, key }
}

/// The summaries (JSON array text) that pass `filter` (JSON text, a
/// [`crate::skill::model::ListFilter`]) → a JSON array.
pub fn filter_json(summaries: &str, filter: &str) -> Result<String> {
    use crate::skill::model::ListFilter;
    let f = ListFilter::from_text(filter)?;
    let list: Vec<Value> = serde_json::from_str(summaries).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("the summaries are not a JSON array: {e}"),
        )
    })?;
    let rows: Vec<(String, String)> = list
        .iter()
        .map(|v| {
            (
                v.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                v.json_text(),
            )
        })
        .collect();
    let kept: Vec<Value> = read_summaries(&rows)?
        .iter()
        .zip(list)
        .filter(|(s, _)| f.keeps(s))
        .map(|(_, v)| v)
        .collect();
    Ok(Value::Array(kept).json_text())
}
