//! The storage layer every store is built on: named tables of string keys → JSON text
//! values, read by key or key prefix, written in batches.
//!
//! The record layouts (which rows a message or a skill becomes) are pure functions here;
//! the faces drive real backends with them: IndexedDB (one object store per table, one
//! transaction per batch) and in-memory maps in JS, a host's async key-value object, and
//! `wasi:keyvalue` in the component. [`Backend`] is the synchronous form the component and
//! the native tests use; [`MemoryBackend`] is its in-memory implementation.
//!
//! Crash safety on backends without transactions: a batch lists dependent rows (blobs,
//! parts) before the row that makes them visible (a message head), so an interrupted
//! batch leaves only unreachable rows, which the next write of the same keys replaces.

pub mod async_backend;
pub mod drafts;
pub mod idb_schema;
#[cfg(feature = "composer")]
pub mod invocations;
pub mod kv;
mod message_read;
mod message_rows;
pub mod messages;
pub mod pages;
pub mod reads;
pub mod seed;
mod skill_plans;
mod skill_rows;
pub mod skills;
#[cfg(feature = "composer")]
pub mod traces;

use crate::error::{Error, ErrorKind, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub use async_backend::{AsyncBackend, AsyncMessageStore, AsyncSkillStore};
pub use messages::MessageStore;
pub use pages::{Page, PageOf, PAGE_SIZES};
pub use skills::{SkillStore, SkillTables};

/// The scan prefix of a thread's invocation records (keys `<thread_id>/<composed_at>/<id>`).
pub fn invocations_prefix(thread_id: &str) -> String {
    format!("{thread_id}/")
}

/// The key of row `seq` of a session's log (`session_log`; zero-padded: key order is log
/// order). A proposal record made by that event has it as its id.
pub fn session_log_key(session: &str, seq: u64) -> String {
    format!("{session}/{seq:012}")
}

/// The key of a trace row: `<session_id>/<started_at>/<id>` (a session's traces are one
/// key range, in start order).
pub fn trace_key(session_id: &str, started_at: &str, id: &str) -> String {
    format!("{session_id}/{started_at}/{id}")
}

/// The scan prefix of a session's traces ("" for every session: all traces).
pub fn traces_prefix(session_id: &str) -> String {
    if session_id.is_empty() {
        String::new()
    } else {
        format!("{session_id}/")
    }
}

/// The tables of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// Message heads (`<session>/<seq>` → metadata, part count).
    Messages,
    /// One row per message part (`<message key>#<index>` → the typed part as JSON).
    Parts,
    /// Split-out attachment bytes (`sha256-…` → `{ mime, size, data }`).
    Blobs,
    /// Per-session counters (`<session>` → `{ next_seq, inline_bytes, messages }`).
    Sessions,
    /// Message ids → message keys.
    Ids,
    /// Skill rows (`<skill id>` → metadata and artifact references, no content).
    Skills,
    /// Skill names → skill ids (a name is unique per store, i.e. per scope).
    SkillNames,
    /// Artifact rows (`<skill id>/<kind>/<artifact id>` → the artifact with its content), so
    /// one skill's artifacts of one kind are one key range.
    Artifacts,
    /// Artifact ids → artifact row keys.
    ArtifactIds,
    /// Marketplace sync state (`<url>` → `{ etag, synced_at }`).
    SkillSync,
    /// Composer invocation records beside their turns
    /// (`<thread_id>/<composed_at>/<record id>` → the record).
    Invocations,
    /// Artifact execution traces (`<session_id>/<started_at>/<trace id>` → the row).
    Traces,
    /// Session logs: one row per event (`<session>/<seq>` → the event), append-only.
    SessionLog,
    /// Proposal records awaiting or past approval (`<session>/<seq>`: the key of the log event that made it → the record).
    Proposals,
    /// Approval decisions, append-only (`<decided_at>/<proposal id>` → the decision).
    ApprovalLog,
    /// The reply a session is reading, kept as it streams (`<session>` → `{ seq, turn }`:
    /// see [`drafts`]), so a reload shows it cut instead of losing it.
    Drafts,
}

impl Table {
    /// Every table, in a fixed order.
    pub const ALL: [Table; 16] = [
        Table::Messages,
        Table::Parts,
        Table::Blobs,
        Table::Sessions,
        Table::Ids,
        Table::Skills,
        Table::SkillNames,
        Table::Artifacts,
        Table::ArtifactIds,
        Table::SkillSync,
        Table::Invocations,
        Table::Traces,
        Table::SessionLog,
        Table::Proposals,
        Table::ApprovalLog,
        Table::Drafts,
    ];

    /// The table's name (the IndexedDB object store, the key prefix in a flat store).
    pub fn name(self) -> &'static str {
        match self {
            Table::Messages => "messages",
            Table::Parts => "parts",
            Table::Blobs => "blobs",
            Table::Sessions => "sessions",
            Table::Ids => "ids",
            Table::Skills => "skills",
            Table::SkillNames => "skill_names",
            Table::Artifacts => "skill_artifacts",
            Table::ArtifactIds => "artifact_ids",
            Table::SkillSync => "skill_sync",
            Table::Invocations => "skill_invocations",
            Table::Traces => "skill_traces",
            Table::SessionLog => "session_log",
            Table::Proposals => "skill_proposals",
            Table::ApprovalLog => "approval_log",
            Table::Drafts => "message_drafts",
        }
    }

    /// The table named `name`.
    pub fn parse(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Insert or replace a row.
    Put {
        /// The table.
        table: Table,
        /// The key.
        key: String,
        /// The value, JSON text.
        value: String,
    },
    /// Insert a row that must not exist yet: a backend refuses the whole batch with a
    /// [`conflict`] error when it does (optimistic concurrency: two writers that laid out
    /// the same message key cannot both land).
    Insert {
        /// The table.
        table: Table,
        /// The key.
        key: String,
        /// The value, JSON text.
        value: String,
    },
    /// Remove a row (absent rows are fine).
    Delete {
        /// The table.
        table: Table,
        /// The key.
        key: String,
    },
}

impl Op {
    /// The op's wire name: `put`, `insert` or `delete`.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Put { .. } => "put",
            Op::Insert { .. } => "insert",
            Op::Delete { .. } => "delete",
        }
    }

    /// Its table, key and value (a delete has none).
    pub fn row(&self) -> (Table, &str, Option<&str>) {
        match self {
            Op::Put { table, key, value } | Op::Insert { table, key, value } => {
                (*table, key, Some(value))
            }
            Op::Delete { table, key } => (*table, key, None),
        }
    }

    /// The wire form the JS face executes: `{ op, table, key, value? }`.
    pub fn to_value(&self) -> Value {
        let (table, key, value) = self.row();
        let mut o = Map::new();
        o.insert("op".into(), self.name().into());
        o.insert("table".into(), table.name().into());
        o.insert("key".into(), key.into());
        if let Some(v) = value {
            o.insert("value".into(), v.into());
        }
        Value::Object(o)
    }
}

/// A synchronous backend.
pub trait Backend {
    /// The value under `key`.
    fn get(&self, table: Table, key: &str) -> Result<Option<String>>;
    /// All rows whose key starts with `prefix`, in key order.
    fn scan(&self, table: Table, prefix: &str) -> Result<Vec<(String, String)>>;
    /// One page of a key range: the rows whose key starts with `prefix` and comes after
    /// `after` (from the first for `None`), in key order, at most `limit`. The default reads
    /// the whole range; a backend that can start a read at a key does better.
    fn range(
        &self,
        table: Table,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        let mut rows = self.scan(table, prefix)?;
        if let Some(a) = after {
            rows.retain(|(k, _)| k.as_str() > a);
        }
        rows.truncate(limit);
        Ok(rows)
    }
    /// Applies the writes in order; all or nothing where the backend can promise it.
    fn commit(&mut self, ops: &[Op]) -> Result<()>;
}

/// An in-memory backend (ordered maps); a commit is all or nothing.
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    tables: BTreeMap<Table, BTreeMap<String, String>>,
}

impl MemoryBackend {
    /// An empty store.
    pub fn new() -> Self {
        MemoryBackend::default()
    }

    /// How many rows `table` holds.
    pub fn len(&self, table: Table) -> usize {
        self.tables.get(&table).map_or(0, BTreeMap::len)
    }

    /// Whether no table holds a row.
    pub fn is_empty(&self) -> bool {
        self.tables.values().all(BTreeMap::is_empty)
    }
}

impl Backend for MemoryBackend {
    fn get(&self, table: Table, key: &str) -> Result<Option<String>> {
        Ok(self.tables.get(&table).and_then(|t| t.get(key)).cloned())
    }

    fn scan(&self, table: Table, prefix: &str) -> Result<Vec<(String, String)>> {
        Ok(self
            .tables
            .get(&table)
            .map(|t| {
                t.range(prefix.to_owned()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn range(
        &self,
        table: Table,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        use std::ops::Bound;
        let Some(t) = self.tables.get(&table) else {
            return Ok(Vec::new());
        };
        let from = match after {
            Some(a) if a >= prefix => Bound::Excluded(a.to_owned()),
            _ => Bound::Included(prefix.to_owned()),
        };
        Ok(t.range((from, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }

    fn commit(&mut self, ops: &[Op]) -> Result<()> {
        for op in ops {
            if let Op::Insert { table, key, .. } = op {
                if self.tables.get(table).is_some_and(|t| t.contains_key(key)) {
                    return Err(conflict(*table, key));
                }
            }
        }
        for op in ops {
            match op {
                Op::Put { table, key, value } | Op::Insert { table, key, value } => {
                    self.tables
                        .entry(*table)
                        .or_default()
                        .insert(key.clone(), value.clone());
                }
                Op::Delete { table, key } => {
                    if let Some(t) = self.tables.get_mut(table) {
                        t.remove(key);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The error of an [`Op::Insert`] whose key is taken: `StoreFailed` with `conflict` details.
pub fn conflict(table: Table, key: &str) -> Error {
    Error::new(
        ErrorKind::StoreFailed,
        format!(
            "the {} row `{key}` was written by another writer first; nothing was written",
            table.name()
        ),
    )
    .with("conflict", true)
    .with("table", table.name())
    .with("key", key)
}

/// Whether `e` is a [`conflict`]: another writer took a key of the batch first.
pub fn is_conflict(e: &Error) -> bool {
    e.kind() == ErrorKind::StoreFailed && e.details().get("conflict") == Some(&Value::Bool(true))
}

/// A `StoreFailed` error about the row `key` of `table`.
pub(crate) fn bad_row(table: Table, key: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::StoreFailed,
        format!("the {} row `{key}` cannot be read: {why}", table.name()),
    )
    .with("table", table.name())
    .with("key", key)
}
