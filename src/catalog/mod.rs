//! The skill catalog: the two scopes merged, phase-1 matching, and marketplace sync.
//!
//! - [`merge`]: workspace and account summaries merged by name, the workspace winning,
//!   every override reported.
//! - [`rank`]: the deterministic phase-1 ranker over catalog metadata.
//! - [`sync`]: what a marketplace catalog changes in the account scope.
//! - `orchestrator` (with the Skill Composer): the phase-2 decision (direct / activate /
//!   research / clarify) from the phase-1 recommendations.

#[cfg(feature = "composer")]
pub mod orchestrator;
pub mod rank;
pub mod sync;

use crate::error::Result;
use crate::json_text::JsonText;
use crate::skill::model::sort_summaries;
use crate::skill::{ArtifactKind, Skill, SkillArtifact, SkillSummary};
use crate::store::skills::SkillStore;
use serde_json::{Map, Value};

/// Which store a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The workspace store: wins by name.
    Workspace,
    /// The account store.
    Account,
}

impl Scope {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Workspace => "workspace",
            Scope::Account => "account",
        }
    }
}

/// One skill of the merged catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its summary.
    pub summary: SkillSummary,
    /// The store it comes from.
    pub scope: Scope,
    /// The account skill of the same name it hides, when it is a workspace override.
    pub overrides: Option<SkillSummary>,
}

impl Entry {
    /// The summary as JSON with `scope` and, for an override, `overrides: { id, version,
    /// source }` of the hidden account skill.
    pub fn to_value(&self) -> Value {
        let mut v = self.summary.to_value();
        if let Value::Object(o) = &mut v {
            o.insert("scope".into(), self.scope.name().into());
            if let Some(h) = &self.overrides {
                let mut r = Map::new();
                r.insert("scope".into(), "account".into());
                for k in ["id", "version", "source"] {
                    r.insert(k.into(), h.get_str(k).unwrap_or("").into());
                }
                o.insert("overrides".into(), Value::Object(r));
            }
        }
        v
    }
}

/// The merged catalog: every workspace skill, then every account skill whose name no
/// workspace skill has; sorted by name. A hidden account skill is reported on the
/// workspace entry that hides it.
pub fn merge(mut workspace: Vec<SkillSummary>, mut account: Vec<SkillSummary>) -> Vec<Entry> {
    sort_summaries(&mut workspace);
    sort_summaries(&mut account);
    let mut out: Vec<Entry> = Vec::with_capacity(workspace.len() + account.len());
    let mut acc = account.into_iter().peekable();
    for w in workspace {
        // Account skills sorting before this workspace skill come first.
        while let Some(a) = acc.next_if(|a| a.name() < w.name()) {
            push_account(&mut out, a);
        }
        let mut entry = Entry {
            summary: w,
            scope: Scope::Workspace,
            overrides: None,
        };
        while let Some(a) = acc.next_if(|a| a.name() == entry.summary.name()) {
            entry.overrides.get_or_insert(a);
        }
        // Two workspace skills never share a name (one store); keep the first.
        if out
            .last()
            .is_none_or(|l| l.summary.name() != entry.summary.name())
        {
            out.push(entry);
        }
    }
    for a in acc {
        push_account(&mut out, a);
    }
    out
}

fn push_account(out: &mut Vec<Entry>, a: SkillSummary) {
    if out.last().is_none_or(|l| l.summary.name() != a.name()) {
        out.push(Entry {
            summary: a,
            scope: Scope::Account,
            overrides: None,
        });
    }
}

/// The merged catalog as JSON, from the two stores' skill rows.
pub fn list_json(
    workspace: &[(String, String)],
    account: &[(String, String)],
) -> crate::error::Result<String> {
    use crate::store::skills::read_summaries;
    let merged = merge(read_summaries(workspace)?, read_summaries(account)?);
    Ok(Value::Array(merged.iter().map(Entry::to_value).collect()).json_text())
}

/// The SkillSpecs the merged catalog's enabled skills carry (a workspace fork of a system
/// skill gives its own), by name: the arbiter's registry of what the two scopes hold.
pub fn skill_specs(entries: Vec<Entry>) -> Vec<Value> {
    crate::store::seed::skill_specs(entries.into_iter().map(|e| e.summary).collect())
}

/// [`skill_specs`] as a JSON array, from the two stores' skill rows (`account`: `None` for
/// one store alone).
pub fn skill_specs_json(
    workspace: &[(String, String)],
    account: Option<&[(String, String)]>,
) -> crate::error::Result<String> {
    use crate::store::skills::read_summaries;
    let ws = read_summaries(workspace)?;
    let specs = match account {
        Some(a) => skill_specs(merge(ws, read_summaries(a)?)),
        None => crate::store::seed::skill_specs(ws),
    };
    Ok(Value::Array(specs).json_text())
}

/// The documents of the phase-1 index from merged catalog entries.
pub fn docs(entries: &[Entry]) -> Vec<rank::Doc> {
    entries
        .iter()
        .map(|e| {
            let s = &e.summary;
            let list = |k: &str| s.get_strings(k).into_iter().map(str::to_owned).collect();
            rank::Doc {
                id: s.id().to_owned(),
                name: s.name().to_owned(),
                description: s.get_str("description").unwrap_or("").to_owned(),
                tags: list("tags"),
                intent_patterns: list("intent_patterns"),
                trigger_phrases: list("trigger_phrases"),
                scope: e.scope.name().to_owned(),
                enabled: s.enabled(),
            }
        })
        .collect()
}

/// A workspace store and an account store seen as one catalog (the seed's `SkillCatalog`):
/// the merged listing, lookups workspace first, phase-1 matching with an index built on
/// first use (until [`SkillCatalog::refresh`]), and marketplace sync into the account store.
pub struct SkillCatalog<W: SkillStore, A: SkillStore> {
    /// The workspace store (wins by name).
    pub workspace: W,
    /// The account store (marketplace sync writes here).
    pub account: A,
    index: Option<rank::SkillIndex>,
}

impl<W: SkillStore, A: SkillStore> SkillCatalog<W, A> {
    /// A catalog over the two stores.
    pub fn new(workspace: W, account: A) -> Self {
        SkillCatalog {
            workspace,
            account,
            index: None,
        }
    }

    /// Every skill once, workspace first by name (see [`merge`]).
    pub fn list(&self) -> Result<Vec<Entry>> {
        Ok(merge(
            self.workspace.list_skills()?,
            self.account.list_skills()?,
        ))
    }

    /// The SkillSpecs of the merged catalog (see [`skill_specs`]).
    pub fn skill_specs(&self) -> Result<Vec<Value>> {
        Ok(skill_specs(self.list()?))
    }

    /// The skill named `name`, workspace first, with its scope.
    pub fn get(&self, name: &str) -> Result<Option<(Skill, Scope)>> {
        if let Some(s) = self.workspace.get_skill_by_name(name)? {
            return Ok(Some((s, Scope::Workspace)));
        }
        Ok(self
            .account
            .get_skill_by_name(name)?
            .map(|s| (s, Scope::Account)))
    }

    /// Phase 2: the artifacts of the given kinds of the skill named `name`, workspace first.
    pub fn load(&self, name: &str, kinds: &[ArtifactKind]) -> Result<Option<Vec<SkillArtifact>>> {
        if let Some(id) = self.workspace.skill_id(name)? {
            return self.workspace.get_artifacts(&id, kinds).map(Some);
        }
        match self.account.skill_id(name)? {
            Some(id) => self.account.get_artifacts(&id, kinds).map(Some),
            None => Ok(None),
        }
    }

    /// Phase 1: ranked recommendations for `query`, as JSON.
    pub fn rank(&mut self, query: &str, opts: &rank::MatchOptions) -> Result<Value> {
        if self.index.is_none() {
            self.index = Some(rank::SkillIndex::build(docs(&self.list()?)));
        }
        Ok(match &self.index {
            Some(ix) => ix.to_json(&ix.rank(query, opts)),
            None => Value::Array(Vec::new()),
        })
    }

    #[cfg(feature = "composer")]
    /// Phase 1 then the orchestrator decision for `query`: the recommendations weighed by
    /// `policy`, each activated skill with the artifacts it runs (its run order).
    pub fn decide(
        &mut self,
        query: &str,
        opts: &rank::MatchOptions,
        policy: &orchestrator::Policy,
    ) -> Result<orchestrator::Decision> {
        let recs = self.rank(query, opts)?;
        let mut d = orchestrator::decide(query, &recs, policy)?;
        for name in d.activated() {
            if let Some((skill, _)) = self.get(&name)? {
                let refs: Vec<_> = skill.artifacts.iter().map(SkillArtifact::to_ref).collect();
                d.set_artifacts(&name, crate::skill::model::run_order(&refs));
            }
        }
        Ok(d)
    }

    /// Rebuilds the index on the next match (after writes to either store).
    pub fn refresh(&mut self) {
        self.index = None;
    }

    /// Applies a marketplace catalog body (a 200 response) fetched by the host: changed
    /// packages are upserted into the account store, the ETag recorded; the report says what
    /// changed. A malformed body is `SyncFailed` before anything is written; a package that
    /// cannot be stored (its name held by another account skill) is reported as skipped.
    pub fn apply_sync(
        &mut self,
        url: &str,
        body: &str,
        etag: Option<&str>,
        now: &str,
    ) -> Result<Value> {
        let names: Vec<String> = self
            .workspace
            .list_skills()?
            .iter()
            .map(|s| s.name().to_owned())
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let plan = sync::plan_sync(body, &self.account.list_skills()?, &names, now)?;
        let report = plan.report();
        // The migration's writer: one package that cannot be stored is reported, not fatal.
        use crate::store::seed::{Input, Migrate, Step};
        let (mut m, mut step) = Migrate::writes(plan.upserts, None, report);
        let mut report = loop {
            step = match step {
                Step::Done(r) => break r,
                Step::Put(s) => m.next(Input::Put(self.account.put_skill(&s, now).err()))?,
                _ => m.next(Input::Done)?,
            };
        };
        self.account.set_sync_etag(url, etag, now)?;
        self.index = None;
        if let Value::Object(o) = &mut report {
            o.insert("status".into(), "updated".into());
            o.insert("etag".into(), etag.map_or(Value::Null, Value::from));
        }
        Ok(report)
    }
}
