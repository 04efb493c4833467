//! The skill store's write plans: each of the seed's repository operations ([`Request`])
//! names the rows it must read, and once they are read returns the ops of one batch
//! ([`plan`]); [`Writer`] runs a plan to its batch for a driver, re-planning when a row
//! changed between the read and the write.

use super::skill_rows::{
    artifact_key, delete, json_str, put, read_artifact_row, read_summary, summary_row, text,
    with_stubs,
};
use super::{bad_row, is_conflict, Op, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::problems::{Problems, Severity};
use crate::skill::checks::check_skill;
use crate::skill::model::{Skill, SkillArtifact, SkillSummary};
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

pub(super) fn invalid(what: &str, problems: Problems) -> Error {
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

pub(super) fn not_found(what: &str, id: &str) -> Error {
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

/// The errors of artifact `index` (and of the skill's references) in `skill`.
pub(super) fn check_one(skill: &Skill, index: usize) -> Result<()> {
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
/// driver (the synchronous [`SkillTables`](super::skills::SkillTables), the async store over IndexedDB in Rust, the JS
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
