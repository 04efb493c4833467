//! Marketplace sync: what a marketplace catalog changes in the account scope.
//!
//! The marketplace serves one catalog document at a URL, with an `ETag`. The host sends a
//! conditional GET (`If-None-Match` with the ETag of the last sync); a 304 keeps the cache.
//! A 200 body is `{ "skills": [package, …] }` (or a bare array): each entry is a skill
//! package in the import format, optionally with `etag` (else its `sync_etag`, else a hash
//! of its content) and `marketplace_id` (else its `id`, else its name).
//!
//! [`plan_sync`] compares each entry with the account store's skills (by marketplace id,
//! then by name): an entry whose ETag differs is upserted into the **account** scope
//! (keeping the stored skill's id, so its artifacts are replaced in one batch); equal ETags
//! are left alone; workspace skills are never written — a workspace skill of the same name
//! is reported as an override that keeps hiding the update. A body that is not a catalog
//! fails the whole sync before anything is written; an invalid package inside a valid
//! catalog is skipped and reported.

use crate::error::{Error, ErrorKind, Result};
use crate::problems::{Problem, Problems};
use crate::skill::model::{content_etag, Skill, SkillSummary, Source};
use crate::skill::read::read_skill;
use serde_json::{Map, Value};

/// What one sync changes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncPlan {
    /// Skills to upsert into the account scope (each one batch).
    pub upserts: Vec<Skill>,
    /// Names whose ETag matched: nothing to do.
    pub unchanged: Vec<String>,
    /// Names the workspace overrides (the account copy is updated; the workspace one wins).
    pub shadowed: Vec<String>,
    /// Entries skipped because they are not valid packages, with their problems.
    pub skipped: Vec<(String, Vec<Problem>)>,
}

impl SyncPlan {
    /// The report: `{ upserted, unchanged, shadowed, skipped: [{ name, problems }] }`.
    pub fn report(&self) -> Value {
        let names = |v: Vec<&str>| Value::Array(v.into_iter().map(Value::from).collect());
        let mut o = Map::new();
        o.insert(
            "upserted".into(),
            names(self.upserts.iter().map(|s| s.name.as_str()).collect()),
        );
        o.insert(
            "unchanged".into(),
            names(self.unchanged.iter().map(String::as_str).collect()),
        );
        o.insert(
            "shadowed".into(),
            names(self.shadowed.iter().map(String::as_str).collect()),
        );
        o.insert(
            "skipped".into(),
            crate::store::seed::skipped_value(&self.skipped),
        );
        Value::Object(o)
    }
}

fn failed(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::SyncFailed, message)
}

/// Plans a sync from a 200 response `body`, the account store's summaries and the
/// workspace's skill names. `now` stamps upserted rows.
pub fn plan_sync(
    body: &str,
    account: &[SkillSummary],
    workspace_names: &[&str],
    now: &str,
) -> Result<SyncPlan> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| failed(format!("the marketplace catalog is not valid JSON: {e}")))?;
    let entries =
        match &v {
            Value::Array(a) => a,
            Value::Object(o) => match o.get("skills") {
                Some(Value::Array(a)) => a,
                _ => return Err(failed(
                    "the marketplace catalog must be { \"skills\": [...] } or an array of packages",
                )),
            },
            _ => {
                return Err(failed(
                    "the marketplace catalog must be { \"skills\": [...] } or an array of packages",
                ))
            }
        };
    let mut plan = SyncPlan::default();
    for (i, entry) in entries.iter().enumerate() {
        let Some(obj) = entry.as_object() else {
            return Err(failed(format!(
                "skills[{i}] of the marketplace catalog is not an object"
            )));
        };
        let mut pkg = obj.clone();
        let etag = match pkg.remove("etag") {
            Some(Value::String(e)) => e,
            _ => pkg
                .get("sync_etag")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| content_etag(entry)),
        };
        let label = pkg
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("skills[{i}]"), str::to_owned);
        let mid = pkg
            .get("marketplace_id")
            .or_else(|| pkg.get("id"))
            .and_then(Value::as_str)
            .map_or_else(|| label.clone(), str::to_owned);
        let stored = account
            .iter()
            .find(|s| s.get_str("marketplace_id") == Some(mid.as_str()))
            .or_else(|| account.iter().find(|s| s.name() == label));
        if stored.is_some_and(|s| s.get_str("marketplace_id").is_none()) {
            // A local account skill of the same name is the user's own: never overwritten.
            plan.skipped.push((
                label.clone(),
                vec![Problem {
                    path: format!("skills[{i}].name"),
                    code: "name-conflict",
                    message: format!(
                        "the account store has a local skill named `{label}`; the marketplace copy is not written over it"
                    ),
                    severity: crate::skill::Severity::Warning,
                }],
            ));
            continue;
        }
        if stored.is_some_and(|s| s.get_str("sync_etag") == Some(etag.as_str())) {
            plan.unchanged.push(label);
            continue;
        }
        pkg.insert("marketplace_id".into(), mid.into());
        pkg.insert("sync_etag".into(), etag.into());
        if !pkg.contains_key("source") {
            pkg.insert("source".into(), Source::Community.name().into());
        }
        if let Some(s) = stored {
            // Replace the stored skill in place (same id: its old artifacts go in the same batch).
            pkg.insert("id".into(), s.id().into());
            if let Some(c) = s.get_str("created_at") {
                pkg.insert("created_at".into(), c.into());
            }
            pkg.insert("updated_at".into(), now.into());
            if let Some(Value::Array(arts)) = pkg.get_mut("artifacts") {
                for a in arts.iter_mut().filter_map(Value::as_object_mut) {
                    a.remove("skill_id");
                }
            }
        }
        let mut out = Problems::default();
        match read_skill(&Value::Object(pkg), now, true, &mut out) {
            Some(skill) if !out.has_errors() => {
                if workspace_names.contains(&skill.name.as_str()) {
                    plan.shadowed.push(skill.name.clone());
                }
                plan.upserts.push(skill);
            }
            _ => plan.skipped.push((label, out.0)),
        }
    }
    Ok(plan)
}

pub use crate::store::skills::state_op;
