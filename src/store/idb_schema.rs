//! The IndexedDB schema of the stores, shared by every IndexedDB driver (the JS glue's
//! `pkg/src/stores.js`, and the `indexeddb` feature's Rust backend), so one database opened
//! from JS and from a Rust web app holds the same object stores, indexes and rows.
//! The glue reads it from `pkg/src/constants.js`, written from here by `tests/constants.rs`.
//!
//! - One object store per [`Table`], with out-of-line string keys, except the virtual
//!   tables below.
//! - Rows of indexed tables are stored as `{ v: <JSON text>, ...index fields }` (the fields
//!   [`super::skills::index_fields`] names); every other row is the JSON text itself.
//! - `skill_names` and `artifact_ids` keep no rows: a lookup there reads the unique `name`
//!   index of `skills` or `id` index of `skill_artifacts` (the unique index refuses a taken
//!   name or id, which fails the batch as a conflict), so a skill costs a row per skill and
//!   per artifact.

use super::Table;

/// The database version: 1 the message store; 2 the skill store's tables and indexes;
/// 3 invocation records and traces; 4 session logs, proposal records and approval decisions;
/// 5 the drafts of replies being read.
pub const VERSION: u32 = 5;

/// The native indexes: `(table, field, unique)`, in creation order.
pub const INDEXES: [(Table, &str, bool); 5] = [
    (Table::Skills, "name", true),
    (Table::Skills, "source", false),
    (Table::Artifacts, "id", true),
    (Table::Artifacts, "skill_id", false),
    (Table::Artifacts, "kind", false),
];

/// Where a virtual table's rows are: the object store and its unique index.
pub fn virtual_of(table: Table) -> Option<(Table, &'static str)> {
    match table {
        Table::SkillNames => Some((Table::Skills, "name")),
        Table::ArtifactIds => Some((Table::Artifacts, "id")),
        _ => None,
    }
}

/// The object store `table`'s rows live in (a virtual table's: the store its index is on).
pub fn store_of(table: Table) -> Table {
    virtual_of(table).map_or(table, |(t, _)| t)
}

/// The tables that are object stores, in [`Table::ALL`] order.
pub fn object_stores() -> impl Iterator<Item = Table> {
    Table::ALL.into_iter().filter(|t| virtual_of(*t).is_none())
}

/// Whether rows of `table` carry index fields beside their text.
pub fn indexed(table: Table) -> bool {
    INDEXES.iter().any(|(t, _, _)| *t == table)
}

/// The lower and upper bound of the key range of the keys starting with `prefix` (the
/// upper bound is `prefix` followed by U+FFFF, as the glue's `IDBKeyRange.bound`).
pub fn prefix_range(prefix: &str) -> (String, String) {
    (prefix.to_owned(), format!("{prefix}\u{ffff}"))
}
