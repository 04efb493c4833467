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

pub use super::skill_plans::{plan, plan_optimistic, Plan, Reads, Request, Writer};
pub(crate) use super::skill_rows::text;
pub use super::skill_rows::{
    assemble, filter_json, index_fields, read_artifact_row, read_summaries, read_summary, state_op,
};

use super::{bad_row, Backend, Table};
use crate::error::Result;
use crate::skill::model::{
    sort_artifacts, sort_summaries, ArtifactKind, Skill, SkillArtifact, SkillSummary,
};
use serde_json::Value;

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

    /// One page of traces in key order (a session's in start order): at most `limit` rows
    /// after the cursor `after` (`None`: the first page), filtered by skill and artifact, as
    /// `{ items, next }` JSON; `next` is the following page's cursor, or `null` at the end.
    /// The backend reads one key range ([`Backend::range`]).
    #[cfg(feature = "composer")]
    pub fn trace_page_json(
        &self,
        session_id: Option<&str>,
        skill_id: Option<&str>,
        artifact_id: Option<&str>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<String> {
        let limit = super::pages::trace_page_size(limit)?;
        let rows = self.backend.range(
            Table::Traces,
            &super::traces::prefix(session_id),
            after.filter(|a| !a.is_empty()),
            limit.saturating_add(1),
        )?;
        super::traces::page_json(
            rows,
            skill_id.unwrap_or_default(),
            artifact_id.unwrap_or_default(),
            limit,
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
