//! Replay: recompose an invocation from its stored record — the skill as it is now (its
//! artifacts compared by content hash), the memory items by id — and prove the prompt is
//! byte-identical (the same `sha256`), or name exactly what changed.

use super::record::{prompt_hash, MemoryMark};
use super::request::MemoryItem;
use super::{compose_value, Step};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::skill::{ArtifactKind, Skill};
use serde_json::{Map, Value};

fn change(kind: &str, what: Map<String, Value>) -> Value {
    let mut o = Map::new();
    o.insert("kind".into(), kind.into());
    o.extend(what);
    Value::Object(o)
}

fn fields(pairs: &[(&str, Value)]) -> Map<String, Value> {
    crate::sort::json_map_of(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
}

/// The kind a changed artifact is reported as: `template` for a prompt template (what a
/// render reads), `artifact` for the rest.
fn artifact_kind(kind: &str) -> &'static str {
    if kind == ArtifactKind::PromptTemplate.name() {
        "template"
    } else {
        "artifact"
    }
}

/// Verifies a stored invocation record against the skill as stored now and the memory
/// items the host reads back by id: `{ identical, prompt_hash, recomposed_hash, changes }`.
/// Each change is `{ kind: artifact | template | memory | parameter | skill | error, … }`:
/// an artifact or template `removed`, `modified` or newly `added` (by id and content hash),
/// a memory item `missing` or `modified`, a parameter whose value after schema defaults
/// differs, the skill's own contract when nothing else explains a different prompt, or the
/// error the recomposition now fails with. A record without replay inputs (a failed
/// composition) is `InvalidRequest`.
pub fn verify(record: &Value, skill: &Skill, memory: &[MemoryItem]) -> Result<Value> {
    let s = |k: &str| record.get(k).and_then(Value::as_str);
    let (Some(request), Some(recorded)) = (
        record.get("request").and_then(Value::as_object),
        s("prompt_hash"),
    ) else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "the record holds no replay inputs (`request`, `prompt_hash`): only a successful composition can be replayed",
        ));
    };
    let mut changes: Vec<Value> = Vec::new();
    // The artifacts it read, by id and content hash.
    let used = record
        .get("used_artifacts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for u in &used {
        let g = |k: &str| u.get(k).and_then(Value::as_str).unwrap_or("");
        let kind = artifact_kind(g("kind"));
        let now = skill.artifacts.iter().find(|a| a.id == g("id"));
        let what = match now {
            None => "removed",
            Some(a) if super::content_hash(a) != g("content_hash") => "modified",
            Some(_) => continue,
        };
        changes.push(change(
            kind,
            fields(&[
                ("id", g("id").into()),
                ("name", g("name").into()),
                ("change", what.into()),
            ]),
        ));
    }
    // The memory items it rendered, by id.
    let marks = record
        .get("memory_refs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut items: Vec<Value> = Vec::new();
    for m in &marks {
        let id = m.get("id").and_then(Value::as_str).unwrap_or("");
        let Some(item) = memory.iter().find(|x| x.id == id) else {
            changes.push(change(
                "memory",
                fields(&[("id", id.into()), ("change", "missing".into())]),
            ));
            continue;
        };
        let hash = MemoryMark::of(id, item.tier.as_deref(), &item.content).content_hash;
        if Some(hash.as_str()) != m.get("content_hash").and_then(Value::as_str) {
            changes.push(change(
                "memory",
                fields(&[("id", id.into()), ("change", "modified".into())]),
            ));
        }
        let mut x = Map::new();
        x.insert("id".into(), item.id.clone().into());
        if let Some(t) = &item.tier {
            x.insert("tier".into(), t.clone().into());
        }
        x.insert("content".into(), item.content.clone().into());
        items.push(Value::Object(x));
    }
    // Recompose: the record's inputs, the skill as it is, the memory read back.
    let mut req = request.clone();
    req.insert("skill_package".into(), skill.to_value());
    req.insert("memory_context".into(), Value::Array(items));
    for (field, key) in [
        ("thread_id", "thread_id"),
        ("turn_id", "turn_id"),
        ("invocation_source", "invocation_source"),
        ("purpose", "purpose"),
        ("channel_id", "channel_id"),
        ("now", "composed_at"),
    ] {
        if let Some(v) = record.get(key).filter(|v| !v.is_null()) {
            req.insert(field.into(), v.clone());
        }
    }
    let recomposed = match compose_value(Value::Object(req)) {
        Ok(Step::Composed(c)) => Some(c),
        Ok(Step::NeedsShape(_)) => {
            changes.push(change(
                "error",
                fields(&[
                    ("code", "NoModelAdapter".into()),
                    (
                        "message",
                        "the recomposition asks the model for the shape again".into(),
                    ),
                ]),
            ));
            None
        }
        Err(e) => {
            changes.push(change(
                "error",
                fields(&[("code", e.code().into()), ("message", e.message().into())]),
            ));
            None
        }
    };
    let mut recomposed_hash = Value::Null;
    let mut identical = false;
    if let Some(c) = recomposed {
        let hash = prompt_hash(&c.prompt.text);
        identical = hash == recorded;
        recomposed_hash = hash.into();
        for u in &c.used_artifacts {
            if !used
                .iter()
                .any(|x| x.get("id").and_then(Value::as_str) == Some(u.id.as_str()))
            {
                changes.push(change(
                    artifact_kind(u.kind),
                    fields(&[
                        ("id", u.id.clone().into()),
                        ("name", u.name.clone().into()),
                        ("change", "added".into()),
                    ]),
                ));
            }
        }
        if let Some(before) = record.get("parameters").and_then(Value::as_object) {
            let mut names: Vec<&String> = before.keys().chain(c.parameters.keys()).collect();
            crate::sort::sort(&mut names);
            names.dedup();
            for n in names {
                if before.get(n) != c.parameters.get(n) {
                    changes.push(change(
                        "parameter",
                        fields(&[
                            ("name", n.clone().into()),
                            ("before", before.get(n).cloned().unwrap_or(Value::Null)),
                            ("after", c.parameters.get(n).cloned().unwrap_or(Value::Null)),
                        ]),
                    ));
                }
            }
        }
        if !identical && changes.is_empty() {
            changes.push(change(
                "skill",
                fields(&[(
                    "change",
                    "the skill's own contract changed (its framing prose, metadata or tool surface)".into(),
                )]),
            ));
        }
    }
    let mut o = Map::new();
    o.insert("identical".into(), identical.into());
    o.insert("prompt_hash".into(), recorded.into());
    o.insert("recomposed_hash".into(), recomposed_hash);
    o.insert("changes".into(), Value::Array(changes));
    Ok(Value::Object(o))
}

/// [`verify`] over JSON text: the record, the skill as stored now, and the memory items
/// read back (a JSON array of `{ id, tier?, content }`; empty text: none).
pub fn verify_json(record: &str, skill: &str, memory: &str) -> Result<String> {
    let parse = |t: &str, what: &str| {
        serde_json::from_str::<Value>(t)
            .map_err(|e| Error::json(ErrorKind::InvalidRequest, what, &e))
    };
    let record = parse(record, "the invocation record")?;
    let skill = super::request::read_package(&parse(skill, "the skill")?)?;
    let mut items = Vec::new();
    if !memory.trim().is_empty() {
        let Value::Array(list) = parse(memory, "the memory items")? else {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "the memory items must be an array of { id, tier?, content }",
            ));
        };
        for (i, m) in list.into_iter().enumerate() {
            items.push(super::request::memory_item(m, i)?);
        }
    }
    Ok(verify(&record, &skill, &items)?.json_text())
}
