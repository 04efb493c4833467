//! System skills: the seed data a skill store's migration writes.
//!
//! System skills are not compiled in. The package ships them as a seed document,
//! `{ "version": N, "skills": [package, …] }` (`system-skills.json` in the npm package; a
//! WASI host reads the same file), and a store opened with it is migrated:
//!
//! - a store that was never seeded gets every package (`created`);
//! - a store seeded with an older version gets the changed packages replaced in place, the
//!   new ones added and the ones the seed dropped deleted (`upgraded`);
//! - a store already at this version, or at a newer one (an older package opened a store a
//!   newer one migrated), is left alone (`current`, `newer`): one row read.
//!
//! What the migration wrote is recorded in one `skill_sync` row ([`SEED_ROW`]): the version
//! and the ids it seeded. The row is written last, so an interrupted migration runs again on
//! the next open. Only skills the seed wrote are ever replaced or deleted: a user's skill
//! that holds a system skill's id or name is reported and kept, and the workspace scope
//! (where a user forks a system skill) is another store, never opened by the migration.
//!
//! A system skill that is a state machine carries its SkillSpec in `metadata.skill_spec`;
//! [`skill_specs`] reads them back from a listing, for the arbiter's registry.

use super::{bad_row, Op, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::{Problem, Problems, Severity};
use crate::skill::model::{content_etag, sort_summaries, Skill, SkillSummary, Source};
use crate::skill::read::read_skill;
use serde_json::{Map, Value};

/// The `skill_sync` row that records the seed a store was migrated with.
pub const SEED_ROW: &str = "promptloom:system-skills";

/// A seed document, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Seed {
    /// The seed's version: a store migrates when its recorded version is older.
    pub version: u64,
    /// The system skills, each stamped `source: system` with a content ETag.
    pub skills: Vec<Skill>,
}

impl Seed {
    /// The SkillSpecs its enabled skills carry in `metadata.skill_spec`, by name.
    pub fn skill_specs(&self) -> Vec<Value> {
        skill_specs(self.skills.iter().map(Skill::summary).collect())
    }
}

/// What a migration does to a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The store had never been seeded.
    Created,
    /// The store was seeded with an older version.
    Upgraded,
    /// The store is at this version: nothing to do.
    Current,
    /// The store was seeded by a newer version: nothing is downgraded.
    Newer,
}

impl Status {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Created => "created",
            Status::Upgraded => "upgraded",
            Status::Current => "current",
            Status::Newer => "newer",
        }
    }

    /// Whether the migration writes anything.
    pub fn writes(self) -> bool {
        matches!(self, Status::Created | Status::Upgraded)
    }
}

/// The seed a store was migrated with (its [`SEED_ROW`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// The version, 0 when never seeded.
    pub version: u64,
    /// The ids the migration seeded.
    pub ids: Vec<String>,
}

impl State {
    /// Reads the row (`None`: never seeded).
    pub fn read(row: Option<&str>) -> Result<State> {
        let Some(text) = row else {
            return Ok(State::default());
        };
        let bad = |why: &str| bad_row(Table::SkillSync, SEED_ROW, why);
        let v: Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
        let version = v
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("no `version`"))?;
        let ids = match v.get("ids") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad("an id is not a string"))
                })
                .collect::<Result<Vec<_>>>()?,
            _ => return Err(bad("no `ids`")),
        };
        Ok(State { version, ids })
    }

    /// What migrating to `version` does.
    pub fn status(&self, version: u64) -> Status {
        match self.version {
            0 => Status::Created,
            v if v < version => Status::Upgraded,
            v if v == version => Status::Current,
            _ => Status::Newer,
        }
    }
}

/// The seed of a seed document's text. Every package is checked as an import is, must be
/// `source: system` (stamped when absent), and a `metadata.skill_spec` must be an object
/// named like its package; any problem fails the whole seed with `InvalidSkill`, every
/// problem listed with its path (`skills[1].artifacts[0].content`, …).
pub fn read_seed(text: &str, now: &str) -> Result<Seed> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidSkill,
            format!("the system skills seed is not JSON: {e}"),
        )
    })?;
    let mut out = Problems::default();
    let version = v.get("version").and_then(Value::as_u64).filter(|n| *n > 0);
    if version.is_none() {
        out.error(
            "version",
            "invalid-version",
            "the seed needs `version`, a positive integer",
        );
    }
    let entries = match v.get("skills") {
        Some(Value::Array(a)) => a.as_slice(),
        _ => {
            out.error(
                "skills",
                "wrong-type",
                "the seed needs `skills`, an array of packages",
            );
            &[]
        }
    };
    let mut skills: Vec<Skill> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("skills[{i}]");
        let mut pkg = entry.as_object().cloned().unwrap_or_default();
        match pkg.get("source").and_then(Value::as_str) {
            None => {
                pkg.insert("source".into(), Source::System.name().into());
            }
            Some("system") => {}
            Some(other) => out.error(
                &format!("{at}.source"),
                "not-system",
                format!("a seeded skill is `source: system`, not `{other}`"),
            ),
        }
        // The content ETag says whether a stored copy differs (its timestamps aside).
        pkg.insert("sync_etag".into(), content_etag(entry).into());
        let mut own = Problems::default();
        let skill = read_skill(&Value::Object(pkg), now, true, &mut own);
        for mut p in own.0 {
            p.path = if p.path == "$" {
                at.clone()
            } else {
                format!("{at}.{}", p.path)
            };
            out.0.push(p);
        }
        let Some(skill) = skill else { continue };
        if let Some(spec) = skill.metadata.get("skill_spec") {
            let named = spec.get("name").and_then(Value::as_str);
            if !spec.is_object() || named != Some(skill.name.as_str()) {
                out.error(
                    &format!("{at}.metadata.skill_spec"),
                    "spec-name-mismatch",
                    format!(
                        "`metadata.skill_spec` must be a SkillSpec named `{}`, like its package",
                        skill.name
                    ),
                );
            }
        }
        if let Some(j) = skills
            .iter()
            .position(|s| s.name == skill.name || s.id == skill.id)
        {
            out.error(
                &format!("{at}.name"),
                "duplicate-name",
                format!("skills[{j}] and {at} are both `{}`", skill.name),
            );
        }
        skills.push(skill);
    }
    match version {
        Some(version) if !out.has_errors() => Ok(Seed { version, skills }),
        _ => Err(out.into_error("the system skills seed is not valid")),
    }
}

/// One migration's writes, in order: the upserts, then the deletes, then the state row.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// What the migration does.
    pub status: Status,
    /// The version the store was at (0: never seeded).
    pub previous: u64,
    /// The seed's version.
    pub version: u64,
    /// Skills to create or replace (each one write).
    pub upserts: Vec<Skill>,
    /// Ids of skills the seed dropped (each one delete), with their names.
    pub removes: Vec<(String, String)>,
    /// Names whose stored copy is the seed's.
    pub unchanged: Vec<String>,
    /// Seed skills not written, with why.
    pub skipped: Vec<(String, Vec<Problem>)>,
    /// The state row, written last; `None` when nothing is written.
    pub state: Option<Op>,
}

/// Plans migrating a store at `state` to `seed`. `stored` is the store's listing; it is only
/// read when the status writes (a `current` store needs none: pass `None`).
pub fn plan(seed: &Seed, state: &State, stored: Option<&[SkillSummary]>, now: &str) -> Migration {
    let status = state.status(seed.version);
    let mut m = Migration {
        status,
        previous: state.version,
        version: seed.version,
        upserts: Vec::new(),
        removes: Vec::new(),
        unchanged: Vec::new(),
        skipped: Vec::new(),
        state: None,
    };
    if !status.writes() {
        return m;
    }
    let stored = stored.unwrap_or_default();
    for s in &seed.skills {
        let mine = stored.iter().find(|x| x.id() == s.id);
        if mine.is_some_and(|x| x.get_str("source") != Some(Source::System.name())) {
            // The user's own skill holds this id: it is kept.
            m.skipped.push((s.name.clone(), vec![conflict(&s.name)]));
        } else if mine.is_some_and(|x| x.get_str("sync_etag") == s.sync_etag.as_deref()) {
            m.unchanged.push(s.name.clone());
        } else {
            m.upserts.push(s.clone());
        }
    }
    for id in &state.ids {
        let dropped = !seed.skills.iter().any(|s| &s.id == id);
        if let Some(x) = stored.iter().find(|x| x.id() == id) {
            if dropped && x.get_str("source") == Some(Source::System.name()) {
                m.removes.push((id.clone(), x.name().to_owned()));
            }
        }
    }
    m.state = Some(state_op(seed, now));
    m
}

fn conflict(name: &str) -> Problem {
    Problem {
        path: "name".into(),
        code: "name-conflict",
        message: format!(
            "this store has a skill of its own as `{name}`; the system skill is not written over it"
        ),
        severity: Severity::Warning,
    }
}

/// The state row recording that the store holds `seed`.
pub fn state_op(seed: &Seed, now: &str) -> Op {
    let mut o = Map::new();
    o.insert("version".into(), seed.version.into());
    o.insert(
        "ids".into(),
        Value::Array(seed.skills.iter().map(|s| s.id.clone().into()).collect()),
    );
    o.insert("synced_at".into(), now.into());
    Op::Put {
        table: Table::SkillSync,
        key: SEED_ROW.into(),
        value: Value::Object(o).json_text(),
    }
}

impl Migration {
    /// Records that the upsert of `name` failed with `e` (its name held by another skill):
    /// it moves from the upserts to the skipped.
    pub fn skip(&mut self, name: &str, e: &Error) {
        self.upserts.retain(|s| s.name != name);
        self.skipped.push((name.to_owned(), vec![failed_upsert(e)]));
    }

    /// The report: `{ status, version, previous, upserted, unchanged, removed, skipped }`.
    pub fn report(&self) -> Value {
        let names = |v: &mut dyn Iterator<Item = &str>| Value::Array(v.map(Value::from).collect());
        let mut o = Map::new();
        o.insert("status".into(), self.status.name().into());
        o.insert("version".into(), self.version.into());
        o.insert("previous".into(), self.previous.into());
        o.insert(
            "upserted".into(),
            names(&mut self.upserts.iter().map(|s| s.name.as_str())),
        );
        o.insert(
            "unchanged".into(),
            names(&mut self.unchanged.iter().map(String::as_str)),
        );
        o.insert(
            "removed".into(),
            names(&mut self.removes.iter().map(|(_, n)| n.as_str())),
        );
        o.insert("skipped".into(), skipped_value(&self.skipped));
        Value::Object(o)
    }

    /// The plan as JSON for a face that runs it: `{ report, upserts: [package…], removes:
    /// [id…], state }` (`state`: the op, or null).
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("report".into(), self.report());
        o.insert(
            "upserts".into(),
            Value::Array(self.upserts.iter().map(Skill::to_value).collect()),
        );
        o.insert(
            "removes".into(),
            Value::Array(
                self.removes
                    .iter()
                    .map(|(id, _)| id.clone().into())
                    .collect(),
            ),
        );
        o.insert(
            "state".into(),
            self.state.as_ref().map_or(Value::Null, Op::to_value),
        );
        Value::Object(o)
    }
}

/// The problem of an upsert the store refused (a sync's or a seed's).
pub fn failed_upsert(e: &Error) -> Problem {
    Problem {
        path: "name".into(),
        code: e.code(),
        message: e.to_string(),
        severity: Severity::Error,
    }
}

/// `{ name, problems }` of one skipped package.
pub fn skipped_entry(name: &str, problems: &[Problem]) -> Value {
    let mut s = Map::new();
    s.insert("name".into(), name.into());
    s.insert(
        "problems".into(),
        Value::Array(problems.iter().map(Problem::to_value).collect()),
    );
    Value::Object(s)
}

/// `[{ name, problems }]` of skipped packages.
pub fn skipped_value(skipped: &[(String, Vec<Problem>)]) -> Value {
    Value::Array(skipped.iter().map(|(n, p)| skipped_entry(n, p)).collect())
}

/// What a migration (or a marketplace sync's writes) asks a backend for next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Read one row; answer [`Input::Row`].
    Read {
        /// The table.
        table: Table,
        /// The key.
        key: String,
    },
    /// Read every skill row; answer [`Input::Rows`].
    Scan,
    /// Write the skill as `put` does; answer [`Input::Put`] (its error, if it failed).
    Put(Box<Skill>),
    /// Delete the skill (and its artifacts) with this id; answer [`Input::Done`].
    Delete(String),
    /// Commit this op (the state row, written last); answer [`Input::Done`].
    Commit(Op),
    /// Finished: the report.
    Done(Value),
}

/// What the backend did for a [`Step`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The row read (`None`: absent).
    Row(Option<String>),
    /// The skill rows, `(key, value)`.
    Rows(Vec<(String, String)>),
    /// The put's outcome: `None` when written.
    Put(Option<Error>),
    /// The delete or the commit is done.
    Done,
}

/// A migration to a seed, or a sync's plan, run by any backend one [`Step`] at a time (the
/// store over a synchronous backend, the async stores, the JS glue over IndexedDB or a host
/// KV drive this one machine): the seed state row read, the skills listed when the status
/// writes, each upsert written (one whose name another skill holds is reported in `skipped`;
/// a failing store stops the migration), each dropped skill deleted, the state row committed
/// last, so an interrupted migration runs again.
#[derive(Debug, Clone)]
pub struct Migrate {
    seed: Option<Seed>,
    state: State,
    now: String,
    upserts: Vec<Skill>,
    removes: Vec<String>,
    commit: Option<Op>,
    report: Value,
    at: usize,
}

impl Migrate {
    /// Migrating to `seed` (read with [`read_seed`], which fails on an invalid seed before
    /// anything is read) → the machine and its first step.
    pub fn seed(seed: Seed, now: &str) -> (Migrate, Step) {
        let m = Migrate {
            seed: Some(seed),
            state: State::default(),
            now: now.to_owned(),
            upserts: Vec::new(),
            removes: Vec::new(),
            commit: None,
            report: Value::Null,
            at: 0,
        };
        (
            m,
            Step::Read {
                table: Table::SkillSync,
                key: SEED_ROW.into(),
            },
        )
    }

    /// Writing a plan made elsewhere (a marketplace sync's): `upserts`, then `commit`; its
    /// `report` holds `upserted` and `skipped`.
    pub fn writes(upserts: Vec<Skill>, commit: Option<Op>, report: Value) -> (Migrate, Step) {
        let mut m = Migrate {
            seed: None,
            state: State::default(),
            now: String::new(),
            upserts,
            removes: Vec::new(),
            commit,
            report,
            at: 0,
        };
        let s = m.write();
        (m, s)
    }

    /// The next step, given what the backend did.
    pub fn next(&mut self, input: Input) -> Result<Step> {
        match input {
            Input::Row(row) => {
                self.state = State::read(row.as_deref())?;
                let Some(seed) = &self.seed else {
                    return Err(Error::new(
                        ErrorKind::Internal,
                        "a row this migration did not ask for",
                    ));
                };
                if self.state.status(seed.version).writes() {
                    return Ok(Step::Scan);
                }
                Ok(Step::Done(
                    plan(seed, &self.state, None, &self.now).report(),
                ))
            }
            Input::Rows(rows) => {
                let stored = super::skill_rows::read_summaries(&rows)?;
                let Some(seed) = &self.seed else {
                    return Err(Error::new(
                        ErrorKind::Internal,
                        "rows this migration did not ask for",
                    ));
                };
                let m = plan(seed, &self.state, Some(&stored), &self.now);
                self.report = m.report();
                self.upserts = m.upserts;
                self.removes = m.removes.into_iter().map(|(id, _)| id).collect();
                self.commit = m.state;
                Ok(self.write())
            }
            Input::Put(failed) => {
                if let Some(e) = failed {
                    if e.kind() == ErrorKind::StoreFailed {
                        return Err(e);
                    }
                    let name = self
                        .upserts
                        .get(self.at.wrapping_sub(1))
                        .map(|s| s.name.clone())
                        .unwrap_or_default();
                    self.skip(&name, &e);
                }
                Ok(self.write())
            }
            Input::Done => Ok(self.write()),
        }
    }

    /// One package that cannot be stored (a name another skill holds) is reported, not fatal.
    fn skip(&mut self, name: &str, e: &Error) {
        if let Some(Value::Array(up)) = self.report.get_mut("upserted") {
            up.retain(|n| n.as_str() != Some(name));
        }
        if let Some(Value::Array(sk)) = self.report.get_mut("skipped") {
            sk.push(skipped_entry(name, &[failed_upsert(e)]));
        }
    }

    /// The writes made and the writes in all (upserts and deletes), once they are known:
    /// what a host reports as a seed's or a sync's progress.
    pub fn progress(&self) -> (usize, usize) {
        let total = self.upserts.len() + self.removes.len();
        (self.at.saturating_sub(1).min(total), total)
    }

    /// The step as JSON for a face ([`Step::to_json`]), a write with its place among the
    /// writes (`done`, `total`).
    pub fn step_json(&self, step: &Step) -> String {
        step.json(Some(self.progress()))
    }

    /// The next write: each upsert, each delete, the commit, then the report.
    fn write(&mut self) -> Step {
        let n = self.upserts.len();
        let i = self.at;
        self.at += 1;
        if let Some(s) = self.upserts.get(i) {
            return Step::Put(Box::new(s.clone()));
        }
        if let Some(id) = self.removes.get(i - n) {
            return Step::Delete(id.clone());
        }
        match self.commit.take() {
            Some(op) => Step::Commit(op),
            None => Step::Done(std::mem::take(&mut self.report)),
        }
    }
}

impl Step {
    /// The step as JSON for a face: `{ do: "read", table, key }`, `{ do: "scan" }`, `{ do:
    /// "put", skill }`, `{ do: "delete", id }`, `{ do: "commit", op }` or `{ do: "done",
    /// report }`.
    pub fn to_json(&self) -> String {
        self.json(None)
    }

    /// [`Self::to_json`], a write with `(done, total)` when given.
    fn json(&self, progress: Option<(usize, usize)>) -> String {
        let mut o = Map::new();
        if let (Some((done, total)), Step::Put(_) | Step::Delete(_)) = (progress, self) {
            o.insert("done".into(), done.into());
            o.insert("total".into(), total.into());
        }
        let mut put = |k: &str, v: Value| {
            o.insert(k.into(), v);
        };
        match self {
            Step::Read { table, key } => {
                put("do", "read".into());
                put("table", table.name().into());
                put("key", key.as_str().into());
            }
            Step::Scan => put("do", "scan".into()),
            Step::Put(s) => {
                put("do", "put".into());
                put("skill", s.to_value());
            }
            Step::Delete(id) => {
                put("do", "delete".into());
                put("id", id.as_str().into());
            }
            Step::Commit(op) => {
                put("do", "commit".into());
                put("op", op.to_value());
            }
            Step::Done(r) => {
                put("do", "done".into());
                put("report", r.clone());
            }
        }
        Value::Object(o).json_text()
    }
}

/// The SkillSpecs of a seed document's text ([`Seed::skill_specs`]) as a JSON array.
pub fn specs_json(seed: &str) -> Result<String> {
    Ok(Value::Array(read_seed(seed, "")?.skill_specs()).json_text())
}

/// The SkillSpecs the listed skills carry in `metadata.skill_spec`, by name, disabled skills
/// (`metadata.enabled: false`) left out: a store's state machines, for the arbiter's
/// registry.
pub fn skill_specs(mut summaries: Vec<SkillSummary>) -> Vec<Value> {
    sort_summaries(&mut summaries);
    summaries
        .iter()
        .filter(|s| s.enabled())
        .filter_map(|s| s.head().get("metadata")?.get("skill_spec"))
        .filter(|spec| spec.is_object())
        .cloned()
        .collect()
}
