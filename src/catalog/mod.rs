//! The skill catalog: the two scopes merged, phase-1 matching, and marketplace sync.
//!
//! - [`merge`]: workspace and account summaries merged by name, the workspace winning,
//!   every override reported.
//! - [`rank`]: the deterministic phase-1 ranker over catalog metadata.
//! - [`sync`]: what a marketplace catalog changes in the account scope.

pub mod rank;
pub mod sync;

use crate::skill::model::sort_summaries;
use crate::skill::SkillSummary;
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
    let read = |rows: &[(String, String)]| {
        rows.iter()
            .map(|(k, v)| crate::store::skills::read_summary(k, v))
            .collect::<crate::error::Result<Vec<_>>>()
    };
    let merged = merge(read(workspace)?, read(account)?);
    Ok(Value::Array(merged.iter().map(Entry::to_value).collect()).to_string())
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
            }
        })
        .collect()
}
