//! The skill store's layout: which rows a skill becomes, the write plans of the seed's
//! repository operations, and the row readers.
//!
//! Rows:
//! - `skills/<id>` → the skill's metadata and its artifact references (no content): one
//!   key range is the whole listing, and phase 1 never loads content;
//! - `skill_names/<name>` → the id (a name is unique per store, i.e. per scope);
//! - `skill_artifacts/<skill id>/<kind>/<artifact id>` → one artifact with its content:
//!   one skill's artifacts of one kind are one key range (phase 2 loads per kind);
//! - `artifact_ids/<artifact id>` → the artifact's row key.
//!
//! Every write is planned by [`plan`]: it names the rows it must read, and once they are
//! read it returns the ops of one batch. A driver reads, plans, and commits the batch with
//! the same reads checked inside its transaction (IndexedDB) or just before writing (key
//! value stores); a row that changed in between makes the plan ask for other rows, and the
//! driver starts over. The skill row is written last (and deleted first), so an interrupted
//! batch on a store without transactions leaves nothing visible.

use super::{bad_row, is_conflict, Backend, Op, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::{Problems, Severity};
use crate::skill::checks::check_skill;
use crate::skill::model::{
    sort_artifacts, sort_summaries, ArtifactKind, ArtifactRef, Skill, SkillArtifact, SkillSummary,
};
use crate::skill::read::{read_artifact, read_skill};
use serde_json::{Map, Value};

/// One write request: the seed's repository operations, plus `Put` (replace a whole
/// package in one batch: import and marketplace sync).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Create a skill with its artifacts; its id and name must be free.
    Create(Skill),
    /// Create or replace a skill with its artifacts (old artifacts not in it are removed).
    Put(Skill),
    /// Update a skill's metadata; its artifacts stay.
    Update(Skill),
    /// Delete a skill and all its artifacts.
    Delete(String),
    /// Add an artifact to its skill.
    AddArtifact(SkillArtifact),
    /// Replace an artifact (same id).
    UpdateArtifact(SkillArtifact),
    /// Delete an artifact.
    DeleteArtifact(String),
}

fn invalid(what: &str, problems: Problems) -> Error {
    problems.into_error(what)
}

impl Request {
    /// Reads a request from its JSON form: `{ op: create|put|update, skill }`,
    /// `{ op: delete, id }`, `{ op: add_artifact|update_artifact, artifact }` (with
    /// `skill_id`), `{ op: delete_artifact, id }`. `now` stamps rows without timestamps.
    pub fn from_value(v: &Value, now: &str) -> Result<Request> {
        let op = v.get("op").and_then(Value::as_str).unwrap_or("");
        let id = || {
            v.get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| Error::new(ErrorKind::InvalidOptions, "missing `id`").at("id"))
        };
        let skill = || -> Result<Skill> {
            let mut out = Problems::default();
            let s = v.get("skill").unwrap_or(&Value::Null);
            match read_skill(s, now, true, &mut out) {
                Some(s) if !out.has_errors() => Ok(s),
                _ => Err(invalid("the skill is not valid", out)),
            }
        };
        match op {
            "create" => Ok(Request::Create(skill()?)),
            "put" => Ok(Request::Put(skill()?)),
            "update" => Ok(Request::Update(skill()?)),
            "delete" => Ok(Request::Delete(id()?)),
            "delete_artifact" => Ok(Request::DeleteArtifact(id()?)),
            "add_artifact" | "update_artifact" => {
                let a = v.get("artifact").unwrap_or(&Value::Null);
                let owner = a.get("skill_id").and_then(Value::as_str).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidSkill,
                        "the artifact needs the `skill_id` of its skill",
                    )
                    .at("skill_id")
                })?;
                let mut out = Problems::default();
                let art = read_artifact(a, "", owner, 0, now, &mut out);
                match art {
                    Some(a) if !out.has_errors() => Ok(if op == "add_artifact" {
                        Request::AddArtifact(a)
                    } else {
                        Request::UpdateArtifact(a)
                    }),
                    _ => Err(invalid("the artifact is not valid", out)),
                }
            }
            _ => Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("unknown skill store operation `{op}`"),
            )
            .at("op")),
        }
    }
}

/// Rows read so far (`None`: the row is absent). A write reads a handful of rows: a list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reads(Vec<((Table, String), Option<String>)>);

impl Reads {
    /// No rows read yet.
    pub fn new() -> Self {
        Reads::default()
    }

    /// Records the row `key` of `table` (`None`: absent).
    pub fn insert(&mut self, key: (Table, String), value: Option<String>) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key, value)),
        }
    }

    /// Whether the row was read.
    pub fn contains_key(&self, key: &(Table, String)) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The row, if read (`Some(None)`: read and absent).
    pub fn get(&self, key: &(Table, String)) -> Option<&Option<String>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// What a write needs next.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Read these rows, then plan again.
    Read(Vec<(Table, String)>),
    /// Commit these ops as one batch; `result` is what the operation returns.
    Write {
        /// The batch.
        ops: Vec<Op>,
        /// The operation's result (the stored summary, the stored artifact, or `{ deleted }`).
        result: Value,
        /// The op whose value is `result` itself (a create, put or update returns the
        /// summary its skill row holds), so a face can send it once.
        row: Option<usize>,
    },
}

fn artifact_key(skill: &str, kind: ArtifactKind, id: &str) -> String {
    format!("{skill}/{}/{id}", kind.name())
}

/// JSON text of a value (serialized straight into bytes, not through `Display`).
pub(crate) fn text(v: &Value) -> String {
    crate::json_text::to_string(v).unwrap_or_default()
}

fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).json_text()
}

fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("no {what} with id `{id}`")).with("id", id)
}

/// The rows still missing from `reads`; `None` when all are there.
fn missing(reads: &Reads, keys: Vec<(Table, String)>) -> Option<Plan> {
    let m: Vec<(Table, String)> = keys
        .into_iter()
        .filter(|k| !reads.contains_key(k))
        .collect();
    (!m.is_empty()).then_some(Plan::Read(m))
}

fn row<'a>(reads: &'a Reads, table: Table, key: &str) -> Option<&'a str> {
    reads
        .get(&(table, key.to_owned()))
        .and_then(|v| v.as_deref())
}

/// The id a `skill_names` / `artifact_ids` row holds.
fn pointer(reads: &Reads, table: Table, key: &str) -> Result<Option<String>> {
    match row(reads, table, key) {
        None => Ok(None),
        Some(v) => serde_json::from_str::<String>(v)
            .map(Some)
            .map_err(|e| bad_row(table, key, e)),
    }
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
fn read_ref(v: &Value) -> Option<ArtifactRef> {
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
fn row_or_error<T>(built: Option<T>, out: Problems, table: Table, key: &str) -> Result<T> {
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
fn skill_of(summary: &SkillSummary, key: &str) -> Result<Skill> {
    let mut out = Problems::default();
    let s = read_skill(&Value::Object(summary.head().clone()), "", false, &mut out);
    row_or_error(s, out, Table::Skills, key)
}

/// The skill of a summary with content-less stand-ins for its artifacts (enough for the
/// cross-reference rules: names, variants, kinds, fallbacks).
fn with_stubs(summary: &SkillSummary, key: &str) -> Result<Skill> {
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

/// The errors of artifact `index` (and of the skill's references) in `skill`.
fn check_one(skill: &Skill, index: usize) -> Result<()> {
    let at = format!("artifacts[{index}]");
    let errors: Vec<_> = check_skill(skill)
        .into_iter()
        .filter(|p| {
            p.severity == Severity::Error
                && (p.path.starts_with(&at) || p.path.starts_with("metadata"))
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    if errors
        .iter()
        .any(|p| p.code == "duplicate-artifact" || p.code == "duplicate-id")
    {
        let p = &errors[0];
        return Err(Error::new(ErrorKind::AlreadyExists, p.message.clone()).at(p.path.clone()));
    }
    Err(invalid("the artifact is not valid", Problems(errors)))
}

fn summary_row(skill: &Skill) -> String {
    text(&skill.summary().to_value())
}

fn put(table: Table, key: String, value: String) -> Op {
    Op::Put { table, key, value }
}

fn delete(table: Table, key: String) -> Op {
    Op::Delete { table, key }
}

/// Plans `req` from the rows read so far.
pub fn plan(req: &Request, reads: &Reads, now: &str) -> Result<Plan> {
    match req {
        Request::Create(s) | Request::Put(s) => {
            plan_put(s, matches!(req, Request::Create(_)), reads)
        }
        Request::Update(s) => plan_update(s, reads, now),
        Request::Delete(id) => plan_delete(id, reads),
        Request::AddArtifact(a) => plan_artifact(a, reads, now, true),
        Request::UpdateArtifact(a) => plan_artifact(a, reads, now, false),
        Request::DeleteArtifact(id) => plan_delete_artifact(id, reads, now),
    }
}

fn plan_put(s: &Skill, create: bool, reads: &Reads) -> Result<Plan> {
    let mut keys = vec![
        (Table::Skills, s.id.clone()),
        (Table::SkillNames, s.name.clone()),
    ];
    keys.extend(
        s.artifacts
            .iter()
            .map(|a| (Table::ArtifactIds, a.id.clone())),
    );
    if let Some(p) = missing(reads, keys) {
        return Ok(p);
    }
    let old = row(reads, Table::Skills, &s.id)
        .map(|v| read_summary(&s.id, v))
        .transpose()?;
    if create && old.is_some() {
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("a skill with id `{}` already exists", s.id),
        )
        .at("id")
        .with("id", s.id.clone()));
    }
    name_free(reads, s)?;
    for (i, a) in s.artifacts.iter().enumerate() {
        if let Some(k) = pointer(reads, Table::ArtifactIds, &a.id)? {
            if !k.starts_with(&format!("{}/", s.id)) {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("the artifact id `{}` belongs to another skill", a.id),
                )
                .at(format!("artifacts[{i}].id")));
            }
        }
    }
    Ok(put_ops(s, create, old.as_ref()))
}

/// The batch of a create or put, once the checks passed (`old`: the stored summary a put
/// replaces). Rows that must be new are inserts, so a create planned without reading
/// ([`plan_optimistic`]) still cannot write over anything.
fn put_ops(s: &Skill, create: bool, old: Option<&SkillSummary>) -> Plan {
    let mut ops = Vec::new();
    let mut created = None;
    if let Some(old) = old {
        created = old.get_str("created_at");
        for r in &old.artifacts {
            let gone = !s.artifacts.iter().any(|a| a.id == r.id && a.kind == r.kind);
            if gone {
                ops.push(delete(Table::Artifacts, artifact_key(&s.id, r.kind, &r.id)));
                if !s.artifacts.iter().any(|a| a.id == r.id) {
                    ops.push(delete(Table::ArtifactIds, r.id.clone()));
                }
            }
        }
        if old.name() != s.name {
            ops.push(delete(Table::SkillNames, old.name().to_owned()));
        }
    }
    let write = |table: Table, key: String, value: String| {
        if create {
            Op::Insert { table, key, value }
        } else {
            put(table, key, value)
        }
    };
    for a in &s.artifacts {
        let key = artifact_key(&s.id, a.kind, &a.id);
        ops.push(write(Table::ArtifactIds, a.id.clone(), json_str(&key)));
        ops.push(put(Table::Artifacts, key, text(&a.to_value())));
    }
    ops.push(write(Table::SkillNames, s.name.clone(), json_str(&s.id)));
    // A replaced skill keeps its creation time.
    let mut summary = s.summary().to_value();
    if let (Some(c), Value::Object(o)) = (created, &mut summary) {
        o.insert("created_at".into(), c.into());
    }
    ops.push(write(Table::Skills, s.id.clone(), text(&summary)));
    Plan::Write {
        row: Some(ops.len() - 1),
        ops,
        result: summary,
    }
}

/// A plan that needs no reads, when the request has one: a create is all inserts, so a
/// backend refuses the whole batch (a conflict) if any of its keys is taken — then the
/// driver plans again with [`plan`], which reads and names the taken one.
pub fn plan_optimistic(req: &Request) -> Option<Plan> {
    optimistic_skill(req).map(|s| put_ops(s, true, None))
}

/// The skill a request writes without reading first: a create's.
fn optimistic_skill(req: &Request) -> Option<&Skill> {
    match req {
        Request::Create(s) => Some(s),
        _ => None,
    }
}

/// Fails with `AlreadyExists` when another skill of this store holds `s.name`.
fn name_free(reads: &Reads, s: &Skill) -> Result<()> {
    match pointer(reads, Table::SkillNames, &s.name)? {
        Some(owner) if owner != s.id => Err(Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "the name `{}` is taken by skill `{owner}` in this store",
                s.name
            ),
        )
        .at("name")
        .with("id", owner)),
        _ => Ok(()),
    }
}

fn existing(reads: &Reads, id: &str) -> Result<SkillSummary> {
    let v = row(reads, Table::Skills, id).ok_or_else(|| not_found("skill", id))?;
    read_summary(id, v)
}

fn plan_update(s: &Skill, reads: &Reads, now: &str) -> Result<Plan> {
    let keys = vec![
        (Table::Skills, s.id.clone()),
        (Table::SkillNames, s.name.clone()),
    ];
    if let Some(p) = missing(reads, keys) {
        return Ok(p);
    }
    let old = existing(reads, &s.id)?;
    name_free(reads, s)?;
    // The metadata changes; the artifacts stay (their references are checked again).
    let mut skill = s.clone();
    skill.artifacts = with_stubs(&old, &s.id)?.artifacts;
    skill.created_at = old.get_str("created_at").unwrap_or(now).to_owned();
    skill.updated_at = now.to_owned();
    let errors: Vec<_> = check_skill(&skill)
        .into_iter()
        .filter(|p| p.severity == Severity::Error && !p.path.starts_with("artifacts"))
        .collect();
    if !errors.is_empty() {
        return Err(invalid("the skill is not valid", Problems(errors)));
    }
    let mut ops = Vec::new();
    if old.name() != s.name {
        ops.push(delete(Table::SkillNames, old.name().to_owned()));
        ops.push(Op::Insert {
            table: Table::SkillNames,
            key: s.name.clone(),
            value: json_str(&s.id),
        });
    }
    let mut summary = skill.summary();
    summary.artifacts = old.artifacts.clone();
    let summary = summary.to_value();
    ops.push(put(Table::Skills, s.id.clone(), text(&summary)));
    Ok(Plan::Write {
        row: Some(ops.len() - 1),
        ops,
        result: summary,
    })
}

fn plan_delete(id: &str, reads: &Reads) -> Result<Plan> {
    if let Some(p) = missing(reads, vec![(Table::Skills, id.to_owned())]) {
        return Ok(p);
    }
    let old = existing(reads, id)?;
    // The skill row goes first: an interrupted batch leaves only unreachable rows.
    let mut ops = vec![delete(Table::Skills, id.to_owned())];
    ops.push(delete(Table::SkillNames, old.name().to_owned()));
    for r in &old.artifacts {
        ops.push(delete(Table::Artifacts, artifact_key(id, r.kind, &r.id)));
        ops.push(delete(Table::ArtifactIds, r.id.clone()));
    }
    let mut result = Map::new();
    result.insert("deleted".into(), id.into());
    result.insert("artifacts".into(), old.artifacts.len().into());
    Ok(Plan::Write {
        ops,
        result: Value::Object(result),
        row: None,
    })
}

fn plan_artifact(a: &SkillArtifact, reads: &Reads, now: &str, add: bool) -> Result<Plan> {
    let keys = vec![
        (Table::Skills, a.skill_id.clone()),
        (Table::ArtifactIds, a.id.clone()),
    ];
    if let Some(p) = missing(reads, keys) {
        return Ok(p);
    }
    let summary = existing(reads, &a.skill_id)?;
    let taken = pointer(reads, Table::ArtifactIds, &a.id)?;
    // An update keeps the row's creation time: read the old row too.
    let mut prev_created = None;
    if let (false, Some(k)) = (add, &taken) {
        if let Some(p) = missing(reads, vec![(Table::Artifacts, k.clone())]) {
            return Ok(p);
        }
        if let Some(v) = row(reads, Table::Artifacts, k) {
            prev_created = Some(read_artifact_row(k, v)?.created_at);
        }
    }
    let mut skill = with_stubs(&summary, &a.skill_id)?;
    let old = skill.artifacts.iter().position(|x| x.id == a.id);
    let mut ops = Vec::new();
    let mut art = a.clone();
    art.updated_at = now.to_owned();
    match (add, old, taken) {
        (true, _, Some(_)) => {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("an artifact with id `{}` already exists", a.id),
            )
            .at("id"))
        }
        (false, None, _) => return Err(not_found("artifact", &a.id)),
        (false, Some(i), _) => {
            let prev = skill.artifacts.remove(i);
            art.created_at = prev_created.unwrap_or_else(|| now.to_owned());
            if prev.kind != a.kind {
                ops.push(delete(
                    Table::Artifacts,
                    artifact_key(&a.skill_id, prev.kind, &a.id),
                ));
            }
        }
        (true, _, None) => art.created_at = now.to_owned(),
    }
    skill.artifacts.push(art.clone());
    check_one(&skill, skill.artifacts.len() - 1)?;
    let key = artifact_key(&a.skill_id, a.kind, &a.id);
    ops.push(put(Table::ArtifactIds, a.id.clone(), json_str(&key)));
    ops.push(put(Table::Artifacts, key, text(&art.to_value())));
    skill.updated_at = now.to_owned();
    let row = summary_row(&skill);
    ops.push(put(Table::Skills, a.skill_id.clone(), row));
    Ok(Plan::Write {
        ops,
        result: art.to_value(),
        row: None,
    })
}

fn plan_delete_artifact(id: &str, reads: &Reads, now: &str) -> Result<Plan> {
    if let Some(p) = missing(reads, vec![(Table::ArtifactIds, id.to_owned())]) {
        return Ok(p);
    }
    let key = pointer(reads, Table::ArtifactIds, id)?.ok_or_else(|| not_found("artifact", id))?;
    let skill_id = key.split('/').next().unwrap_or("").to_owned();
    if let Some(p) = missing(reads, vec![(Table::Skills, skill_id.clone())]) {
        return Ok(p);
    }
    let summary = existing(reads, &skill_id)?;
    let mut skill = with_stubs(&summary, &skill_id)?;
    let Some(i) = skill.artifacts.iter().position(|x| x.id == id) else {
        return Err(not_found("artifact", id));
    };
    let gone = skill.artifacts.remove(i);
    // Removing it must not break a reference (the framing, a fallback).
    let errors: Vec<_> = check_skill(&skill)
        .into_iter()
        .filter(|p| {
            p.severity == Severity::Error
                && matches!(p.code, "unknown-framing" | "unknown-fallback")
        })
        .collect();
    if let Some(p) = errors.first() {
        return Err(Error::new(
            ErrorKind::InvalidSkill,
            format!("`{}` cannot be deleted: {}", gone.name, p.message),
        )
        .at(p.path.clone()));
    }
    skill.updated_at = now.to_owned();
    let ops = vec![
        delete(Table::Artifacts, key),
        delete(Table::ArtifactIds, id.to_owned()),
        put(Table::Skills, skill_id, summary_row(&skill)),
    ];
    let mut result = Map::new();
    result.insert("deleted".into(), id.into());
    Ok(Plan::Write {
        ops,
        result: Value::Object(result),
        row: None,
    })
}

/// How many write transactions one skill write may take (a conflict or a plan that needs
/// more rows starts another) before it gives up.
const WRITE_ROUNDS: u32 = 10;

/// One skill write as a machine a host drives, without I/O: the rule for which rows to
/// read, when a batch may be written without reads, and when a conflict is retried. Every
/// driver (the synchronous [`SkillTables`], the async store over IndexedDB in Rust, the JS
/// glue) runs the same loop:
///
/// 1. open a write transaction and read [`Writer::keys`] in it;
/// 2. [`Writer::build`] with those values: [`Plan::Write`] is the batch to write in the same
///    transaction; [`Plan::Read`] means the plan needs more rows (abort, go to 1);
/// 3. a commit that fails goes to [`Writer::failed`]: a conflict (another writer took a key
///    first) goes to 1, anything else is the answer.
///
/// A create is tried first with no reads (it is all inserts, so a taken key fails the
/// batch whole); after a conflict it is planned with reads, which names the taken key.
#[derive(Debug, Clone)]
pub struct Writer {
    req: Request,
    now: String,
    keys: Vec<(Table, String)>,
    optimistic: bool,
    rounds: u32,
}

impl Writer {
    /// A write of `req`, stamping rows with `now`.
    pub fn new(req: Request, now: &str) -> Writer {
        let mut w = Writer {
            // Whether a plan without reads exists, without laying it out (`build` does).
            optimistic: optimistic_skill(&req).is_some(),
            req,
            now: now.to_owned(),
            keys: Vec::new(),
            rounds: 0,
        };
        if !w.optimistic {
            w.keys = w.first_keys();
        }
        w
    }

    /// The rows the checked plan reads first.
    fn first_keys(&self) -> Vec<(Table, String)> {
        match plan(&self.req, &Reads::new(), &self.now) {
            Ok(Plan::Read(keys)) => keys,
            _ => Vec::new(),
        }
    }

    /// The request.
    pub fn request(&self) -> &Request {
        &self.req
    }

    /// The rows to read inside the next write transaction, before [`Self::build`].
    pub fn keys(&self) -> &[(Table, String)] {
        &self.keys
    }

    /// Plans the batch from the values of [`Self::keys`] (one per key, `None`: absent),
    /// inside the transaction. [`Plan::Read`] names rows the plan still needs: they are added
    /// to [`Self::keys`], and the transaction starts over.
    pub fn build(&mut self, values: &[Option<String>]) -> Result<Plan> {
        self.rounds += 1;
        if self.rounds > WRITE_ROUNDS {
            return Err(Error::new(
                ErrorKind::StoreFailed,
                "the skill write kept conflicting with other writers; nothing was written",
            )
            .with("rounds", WRITE_ROUNDS));
        }
        if self.optimistic {
            if let Some(p) = plan_optimistic(&self.req) {
                return Ok(p);
            }
        }
        let mut reads = Reads::new();
        for (i, k) in self.keys.iter().enumerate() {
            reads.insert(k.clone(), values.get(i).cloned().flatten());
        }
        let p = plan(&self.req, &reads, &self.now)?;
        if let Plan::Read(more) = &p {
            self.keys.extend(more.iter().cloned());
        }
        Ok(p)
    }

    /// After the batch failed with `e`: `Ok` to run the next transaction (a conflict), or
    /// the error to answer with.
    pub fn failed(&mut self, e: Error) -> Result<()> {
        if !is_conflict(&e) {
            return Err(e);
        }
        self.conflicted();
        Ok(())
    }

    /// Records that the batch lost to another writer (a taken key): the next transaction
    /// plans with reads.
    pub fn conflicted(&mut self) {
        if self.optimistic {
            self.optimistic = false;
            self.keys = self.first_keys();
        }
    }
}

/// The seed's skill repository (`SkillStorageRepository`), synchronous: what a catalog
/// reads and the authoring tools write. [`SkillTables`] implements it over any
/// [`Backend`]; a host can implement it over its own database.
pub trait SkillStore {
    /// Summaries of every skill (metadata and artifact references, no content), by name.
    fn list_skills(&self) -> Result<Vec<SkillSummary>>;
    /// A skill with all its artifacts.
    fn get_skill(&self, id: &str) -> Result<Option<Skill>>;
    /// A skill by name (names are unique per store).
    fn get_skill_by_name(&self, name: &str) -> Result<Option<Skill>>;
    /// The id of the skill named `name`, without loading it.
    fn skill_id(&self, name: &str) -> Result<Option<String>>;
    /// One skill's artifacts of the given kinds (all when empty), by ordinal.
    fn get_artifacts(&self, skill_id: &str, kinds: &[ArtifactKind]) -> Result<Vec<SkillArtifact>>;
    /// One artifact by id.
    fn get_artifact(&self, id: &str) -> Result<Option<SkillArtifact>>;
    /// Creates a skill with its artifacts; its id and name must be free.
    fn create_skill(&mut self, skill: &Skill, now: &str) -> Result<()>;
    /// Creates or replaces a skill with its artifacts.
    fn put_skill(&mut self, skill: &Skill, now: &str) -> Result<()>;
    /// Updates a skill's metadata; its artifacts stay.
    fn update_skill(&mut self, skill: &Skill, now: &str) -> Result<()>;
    /// Deletes a skill and all its artifacts.
    fn delete_skill(&mut self, id: &str) -> Result<()>;
    /// Adds an artifact to its skill.
    fn add_artifact(&mut self, artifact: &SkillArtifact, now: &str) -> Result<()>;
    /// Replaces an artifact (same id).
    fn update_artifact(&mut self, artifact: &SkillArtifact, now: &str) -> Result<()>;
    /// Deletes an artifact.
    fn delete_artifact(&mut self, id: &str, now: &str) -> Result<()>;
    /// The ETag last synced from a marketplace `url`.
    fn sync_etag(&self, url: &str) -> Result<Option<String>>;
    /// Records the ETag synced from `url`.
    fn set_sync_etag(&mut self, url: &str, etag: Option<&str>, now: &str) -> Result<()>;
}

/// The skill layout over a synchronous [`Backend`] (the component's `wasi:keyvalue`,
/// native tests). The JS face drives the same plans over its async backends.
pub struct SkillTables<B: Backend> {
    backend: B,
}

impl<B: Backend> SkillStore for SkillTables<B> {
    fn list_skills(&self) -> Result<Vec<SkillSummary>> {
        self.list()
    }
    fn get_skill(&self, id: &str) -> Result<Option<Skill>> {
        self.get(id)
    }
    fn get_skill_by_name(&self, name: &str) -> Result<Option<Skill>> {
        self.get_by_name(name)
    }
    fn skill_id(&self, name: &str) -> Result<Option<String>> {
        match self.backend.get(Table::SkillNames, name)? {
            None => Ok(None),
            Some(v) => serde_json::from_str(&v)
                .map(Some)
                .map_err(|e| bad_row(Table::SkillNames, name, e)),
        }
    }
    fn get_artifacts(&self, skill_id: &str, kinds: &[ArtifactKind]) -> Result<Vec<SkillArtifact>> {
        SkillTables::get_artifacts(self, skill_id, kinds)
    }
    fn get_artifact(&self, id: &str) -> Result<Option<SkillArtifact>> {
        SkillTables::get_artifact(self, id)
    }
    fn create_skill(&mut self, skill: &Skill, now: &str) -> Result<()> {
        self.write(&Request::Create(skill.clone()), now).map(drop)
    }
    fn put_skill(&mut self, skill: &Skill, now: &str) -> Result<()> {
        self.write(&Request::Put(skill.clone()), now).map(drop)
    }
    fn update_skill(&mut self, skill: &Skill, now: &str) -> Result<()> {
        self.write(&Request::Update(skill.clone()), now).map(drop)
    }
    fn delete_skill(&mut self, id: &str) -> Result<()> {
        self.write(&Request::Delete(id.to_owned()), "").map(drop)
    }
    fn add_artifact(&mut self, artifact: &SkillArtifact, now: &str) -> Result<()> {
        self.write(&Request::AddArtifact(artifact.clone()), now)
            .map(drop)
    }
    fn update_artifact(&mut self, artifact: &SkillArtifact, now: &str) -> Result<()> {
        self.write(&Request::UpdateArtifact(artifact.clone()), now)
            .map(drop)
    }
    fn delete_artifact(&mut self, id: &str, now: &str) -> Result<()> {
        self.write(&Request::DeleteArtifact(id.to_owned()), now)
            .map(drop)
    }
    fn sync_etag(&self, url: &str) -> Result<Option<String>> {
        let row = self.backend.get(Table::SkillSync, url)?;
        Ok(row
            .and_then(|r| serde_json::from_str::<Value>(&r).ok())
            .and_then(|v| v.get("etag").and_then(Value::as_str).map(str::to_owned)))
    }
    fn set_sync_etag(&mut self, url: &str, etag: Option<&str>, now: &str) -> Result<()> {
        let op = state_op(url, etag.unwrap_or(""), now);
        self.backend.commit(&[op])
    }
}

impl<B: Backend> SkillTables<B> {
    /// A store over `backend`.
    pub fn new(backend: B) -> Self {
        SkillTables { backend }
    }

    /// The backend (tests inspect rows through it).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Stores an execution trace (a row [`crate::dispatch::trace::row`] built); returns it.
    #[cfg(feature = "composer")]
    pub fn record_trace(&mut self, trace: serde_json::Value) -> Result<serde_json::Value> {
        let r = crate::dispatch::trace::row(trace)?;
        self.put_trace(&r)?;
        Ok(serde_json::Value::Object(r))
    }

    /// Stores a trace row (one an artifact run built) under its key.
    #[cfg(feature = "composer")]
    pub fn put_trace(&mut self, row: &serde_json::Map<String, serde_json::Value>) -> Result<()> {
        self.backend.commit(&[super::traces::put(row)])
    }

    /// The traces of a session (all sessions for `None`), in start order, filtered by
    /// skill and artifact, as JSON lines of rows or as a DSPy dataset (`how`).
    #[cfg(feature = "composer")]
    pub fn export_traces(
        &self,
        session_id: Option<&str>,
        skill_id: Option<&str>,
        artifact_id: Option<&str>,
        how: crate::dispatch::trace::Export,
    ) -> Result<String> {
        let rows = self
            .backend
            .scan(Table::Traces, &super::traces::prefix(session_id))?;
        crate::dispatch::trace::export(
            rows.iter().map(|(_, v)| v.as_str()),
            skill_id,
            artifact_id,
            how,
        )
    }

    /// Mutable access to the backend.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Runs one write request to completion; returns its result.
    pub fn write(&mut self, req: &Request, now: &str) -> Result<Value> {
        let mut w = Writer::new(req.clone(), now);
        loop {
            let values = w
                .keys()
                .iter()
                .map(|(t, k)| self.backend.get(*t, k))
                .collect::<Result<Vec<_>>>()?;
            if let Plan::Write { ops, result, .. } = w.build(&values)? {
                match self.backend.commit(&ops) {
                    Ok(()) => return Ok(result),
                    Err(e) => w.failed(e)?,
                }
            }
        }
    }

    /// Migrates this store to the system skills of `seed` ([`super::seed`]): the changed
    /// and new ones written, the dropped ones deleted, then the version recorded. Returns the
    /// report; a store already at the version is one read.
    pub fn seed(&mut self, seed: &super::seed::Seed, now: &str) -> Result<Value> {
        let (m, step) = super::seed::Migrate::seed(seed.clone(), now);
        self.migrate(m, step, now)
    }

    /// Runs a migration's steps ([`super::seed::Migrate`]) on this store.
    pub fn migrate(
        &mut self,
        mut m: super::seed::Migrate,
        mut step: super::seed::Step,
        now: &str,
    ) -> Result<Value> {
        use super::seed::{Input, Step};
        loop {
            let input = match step {
                Step::Done(report) => return Ok(report),
                Step::Read { table, key } => Input::Row(self.backend.get(table, &key)?),
                Step::Scan => Input::Rows(self.backend.scan(Table::Skills, "")?),
                Step::Put(s) => Input::Put(self.put_skill(&s, now).err()),
                Step::Delete(id) => {
                    self.delete_skill(&id)?;
                    Input::Done
                }
                Step::Commit(op) => {
                    self.backend.commit(std::slice::from_ref(&op))?;
                    Input::Done
                }
            };
            step = m.next(input)?;
        }
    }

    /// The SkillSpecs this store's enabled skills carry ([`super::seed::skill_specs`]).
    pub fn skill_specs(&self) -> Result<Vec<Value>> {
        Ok(super::seed::skill_specs(self.list()?))
    }

    /// Summaries of every skill, by name.
    pub fn list(&self) -> Result<Vec<SkillSummary>> {
        let mut out = read_summaries(&self.backend.scan(Table::Skills, "")?)?;
        sort_summaries(&mut out);
        Ok(out)
    }

    /// A skill with all its artifacts.
    pub fn get(&self, id: &str) -> Result<Option<Skill>> {
        let Some(v) = self.backend.get(Table::Skills, id)? else {
            return Ok(None);
        };
        let rows = self.backend.scan(Table::Artifacts, &format!("{id}/"))?;
        assemble(id, &v, &rows).map(Some)
    }

    /// A skill by name.
    pub fn get_by_name(&self, name: &str) -> Result<Option<Skill>> {
        match self.backend.get(Table::SkillNames, name)? {
            None => Ok(None),
            Some(v) => {
                let id: String =
                    serde_json::from_str(&v).map_err(|e| bad_row(Table::SkillNames, name, e))?;
                self.get(&id)
            }
        }
    }

    /// One skill's artifacts of the given kinds (all kinds when empty), by ordinal.
    pub fn get_artifacts(&self, skill: &str, kinds: &[ArtifactKind]) -> Result<Vec<SkillArtifact>> {
        let kinds: Vec<ArtifactKind> = if kinds.is_empty() {
            ArtifactKind::ALL.to_vec()
        } else {
            kinds.to_vec()
        };
        let mut out = Vec::new();
        for k in kinds {
            for (key, v) in self
                .backend
                .scan(Table::Artifacts, &format!("{skill}/{}/", k.name()))?
            {
                out.push(read_artifact_row(&key, &v)?);
            }
        }
        sort_artifacts(&mut out);
        Ok(out)
    }

    /// One artifact by id.
    pub fn get_artifact(&self, id: &str) -> Result<Option<SkillArtifact>> {
        let Some(k) = self.backend.get(Table::ArtifactIds, id)? else {
            return Ok(None);
        };
        let key: String =
            serde_json::from_str(&k).map_err(|e| bad_row(Table::ArtifactIds, id, e))?;
        match self.backend.get(Table::Artifacts, &key)? {
            None => Ok(None),
            Some(v) => read_artifact_row(&key, &v).map(Some),
        }
    }
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
