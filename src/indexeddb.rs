//! IndexedDB from Rust (the `indexeddb` feature, `wasm32-unknown-unknown` only): an
//! [`AsyncBackend`] for a Rust web app (Leptos, Dioxus, Yew) that uses the crate directly.
//! Open one with [`IndexedDb::open`] and hand it to
//! [`AsyncMessageStore`](crate::store::AsyncMessageStore) or
//! [`AsyncSkillStore`](crate::store::AsyncSkillStore).
//!
//! This is a face: it only executes what the core plans (which rows to read, the batches
//! to write) against the browser's IndexedDB, over the schema of
//! [`crate::store::idb_schema`] — the one the npm package's glue uses, so a database is
//! readable from both. A batch is one readwrite transaction: all of it lands or none.

use crate::error::{Error, ErrorKind, Result};
use crate::store::async_backend::{AsyncBackend, BuildBatch};
use crate::store::idb_schema::{
    indexed, object_stores, prefix_range, store_of, virtual_of, INDEXES, VERSION,
};
use crate::store::reads::{Plan, Rows};
use crate::store::skills::index_fields;
use crate::store::{conflict, Op, Table};
use indexed_db_futures::database::Database;
use indexed_db_futures::error::{DomException, Error as IdbError};
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use indexed_db_futures::{KeyPath, KeyRange};
use wasm_bindgen::JsValue;

/// One IndexedDB database holding the stores' tables (one database per store name, as in
/// the npm package).
#[derive(Debug)]
pub struct IndexedDb {
    db: Database,
}

/// An IndexedDB failure as a typed error: a full quota is `QuotaExceeded`, anything else
/// `StoreFailed` naming the DOM error.
fn failed(what: &str, e: IdbError) -> Error {
    let (name, message) = match &e {
        IdbError::DomException(d) => {
            let js: &JsValue = d.as_ref();
            let name = js_sys::Reflect::get(js, &JsValue::from_str("name"))
                .ok()
                .and_then(|n| n.as_string())
                .unwrap_or_default();
            (name, d.message())
        }
        other => (String::new(), other.to_string()),
    };
    let said = match (name.is_empty(), message.is_empty()) {
        (false, false) => format!("{name}: {message}"),
        (false, true) => name.clone(),
        (true, false) => message,
        (true, true) => "aborted".to_owned(),
    };
    let kind = if name == "QuotaExceededError" {
        ErrorKind::QuotaExceeded
    } else {
        ErrorKind::StoreFailed
    };
    let mut err = Error::new(kind, format!("{what}: {said}"));
    if !name.is_empty() {
        err = err.with("dom", name);
    }
    err
}

/// A stored value as JSON text: the string itself, or the `v` of an indexed row.
fn text(v: &JsValue) -> Option<String> {
    if let Some(s) = v.as_string() {
        return Some(s);
    }
    js_sys::Reflect::get(v, &JsValue::from_str("v"))
        .ok()
        .and_then(|t| t.as_string())
}

/// A virtual row's value: the JSON text of the primary key the index found.
fn pointer(primary_key: &JsValue) -> Option<String> {
    primary_key
        .as_string()
        .map(|k| serde_json::Value::String(k).to_string())
}

/// The value an IndexedDB row holds for `value` (see [`crate::store::idb_schema`]).
fn stored(table: Table, key: &str, value: &str) -> Result<JsValue> {
    if !indexed(table) {
        return Ok(JsValue::from_str(value));
    }
    let o = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        js_sys::Reflect::set(&o, &JsValue::from_str(k), v)
            .map(drop)
            .map_err(|_| Error::new(ErrorKind::Internal, "cannot build an IndexedDB row"))
    };
    set("v", &JsValue::from_str(value))?;
    for (f, v) in index_fields(table, key, value).unwrap_or_default() {
        let js = match v {
            serde_json::Value::String(s) => JsValue::from_str(&s),
            serde_json::Value::Null => JsValue::NULL,
            other => JsValue::from_str(&other.to_string()),
        };
        set(&f, &js)?;
    }
    Ok(o.into())
}

/// The value of row `key` of `table`, read in `tx` (a virtual row: the JSON of the primary
/// key its index finds).
async fn get_in(
    tx: &Transaction<'_>,
    table: Table,
    key: &str,
) -> std::result::Result<Option<String>, IdbError> {
    let store = tx.object_store(store_of(table).name())?;
    Ok(match virtual_of(table) {
        Some((_, field)) => {
            let k: Option<JsValue> = store
                .index(field)?
                .get_key(key)
                .with_key_type::<JsValue>()
                .primitive()?
                .await?;
            k.as_ref().and_then(pointer)
        }
        None => {
            let v: Option<JsValue> = store.get(key).primitive()?.await?;
            v.as_ref().and_then(text)
        }
    })
}

/// Every key and every value of an object store or an index in `$range`, at most `$limit`,
/// in key order (a macro: the crate's query sources share no public trait bound).
macro_rules! some_in {
    ($source:expr, $range:expr, $limit:expr) => {{
        let keys: Vec<JsValue> = $source
            .get_all_keys()
            .with_query::<String, _>($range)
            .with_limit($limit)
            .primitive()?
            .await?
            .collect::<std::result::Result<_, _>>()?;
        let values: Vec<JsValue> = $source
            .get_all()
            .with_query::<String, _>($range)
            .with_limit($limit)
            .primitive()?
            .await?
            .collect::<std::result::Result<_, _>>()?;
        (keys, values)
    }};
}

/// One page of `table`'s rows whose key starts with `prefix`: those after `after`, at most
/// `limit`, in key order, read in `tx` (IndexedDB starts the read at the key and stops at
/// the count).
async fn range_in(
    tx: &Transaction<'_>,
    table: Table,
    prefix: &str,
    after: Option<&str>,
    limit: usize,
) -> std::result::Result<Vec<(String, String)>, IdbError> {
    let (lo, hi) = prefix_range(prefix);
    let bounds = || match after {
        Some(a) if a >= prefix => KeyRange::Bound(a.to_owned(), true, hi.clone(), false),
        _ => KeyRange::Bound(lo.clone(), false, hi.clone(), false),
    };
    let count = u32::try_from(limit).unwrap_or(u32::MAX);
    let store = tx.object_store(store_of(table).name())?;
    Ok(match virtual_of(table) {
        Some((_, field)) => {
            let index = store.index(field)?;
            let (keys, records) = some_in!(index, bounds(), count);
            records
                .iter()
                .zip(&keys)
                .filter_map(|(r, k)| {
                    let at = js_sys::Reflect::get(r, &JsValue::from_str(field)).ok()?;
                    Some((at.as_string()?, pointer(k)?))
                })
                .collect()
        }
        None => {
            let (keys, values) = some_in!(store, bounds(), count);
            keys.iter()
                .zip(&values)
                .filter_map(|(k, v)| Some((k.as_string()?, text(v)?)))
                .collect()
        }
    })
}

/// The rows of `table` whose key starts with `prefix`, read in `tx` (a virtual table: the
/// index's entries, each with the JSON of its primary key).
async fn scan_in(
    tx: &Transaction<'_>,
    table: Table,
    prefix: &str,
) -> std::result::Result<Vec<(String, String)>, IdbError> {
    range_in(tx, table, prefix, None, usize::MAX).await
}

impl IndexedDb {
    /// Opens (creating or upgrading) the database `name`. Fails with `StoreFailed` when
    /// IndexedDB is not available or the open is refused.
    pub async fn open(name: &str) -> Result<IndexedDb> {
        let db = Database::open(name)
            .with_version(VERSION)
            .with_on_upgrade_needed(|_event, db: Database| {
                let existing: Vec<String> = db.object_store_names().collect();
                for t in object_stores() {
                    if existing.iter().any(|n| n == t.name()) {
                        continue;
                    }
                    let store = db.create_object_store(t.name()).build()?;
                    for (_, field, unique) in INDEXES.iter().filter(|(x, _, _)| *x == t) {
                        store
                            .create_index(*field, KeyPath::One(*field))
                            .with_unique(*unique)
                            .build()?;
                    }
                }
                Ok(())
            })
            .await
            .map_err(|e| {
                Error::new(
                    ErrorKind::StoreFailed,
                    format!("cannot open the IndexedDB database \"{name}\": {e}"),
                )
            })?;
        Ok(IndexedDb { db })
    }

    /// Closes the connection.
    pub fn close(self) {
        self.db.close();
    }

    /// Deletes the database `name` (tests, "forget me" actions).
    pub async fn delete(name: &str) -> Result<()> {
        Database::delete_by_name(name)
            .map_err(|e| {
                Error::new(
                    ErrorKind::StoreFailed,
                    format!("cannot delete the IndexedDB database \"{name}\": {e}"),
                )
            })?
            .await
            .map_err(|e| failed("cannot delete the IndexedDB database", e))
    }

    fn stores_of<'a>(tables: impl Iterator<Item = &'a Table>) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = tables.map(|t| store_of(*t).name()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

impl AsyncBackend for IndexedDb {
    async fn read(&self, plan: &Plan) -> Result<Rows> {
        let tables = Self::stores_of(
            plan.gets
                .iter()
                .chain(&plan.scans)
                .map(|(t, _)| t)
                .chain(plan.ranges.iter().map(|r| &r.table)),
        );
        if tables.is_empty() {
            return Ok(Rows::default());
        }
        let fail = |e| failed("the IndexedDB read failed", e);
        let tx = self
            .db
            .transaction(tables)
            .with_mode(TransactionMode::Readonly)
            .build()
            .map_err(fail)?;
        let mut rows = Rows::default();
        for (t, key) in &plan.gets {
            rows.gets.push(get_in(&tx, *t, key).await.map_err(fail)?);
        }
        for (t, prefix) in &plan.scans {
            rows.scans
                .push(scan_in(&tx, *t, prefix).await.map_err(fail)?);
        }
        for r in &plan.ranges {
            rows.ranges.push(
                range_in(&tx, r.table, &r.prefix, r.after.as_deref(), r.limit)
                    .await
                    .map_err(fail)?,
            );
        }
        Ok(rows)
    }

    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> Result<()> {
        let fail = |e| failed("the IndexedDB write was aborted; nothing was written", e);
        let names: Vec<&'static str> = object_stores().map(Table::name).collect();
        let tx = self
            .db
            .transaction(names)
            .with_mode(TransactionMode::Readwrite)
            .build()
            .map_err(fail)?;
        // The reads, inside the write transaction.
        let mut values = Vec::with_capacity(keys.len());
        for (t, key) in keys {
            values.push(get_in(&tx, *t, key).await.map_err(fail)?);
        }
        // `build` failing drops the transaction, which aborts it: nothing is written.
        let ops = build(&values)?;
        let mut pending = Vec::with_capacity(ops.len());
        for op in &ops {
            match op {
                Op::Put { table, key, value } | Op::Insert { table, key, value } => {
                    // A virtual row is the unique index of the row written beside it.
                    if virtual_of(*table).is_some() {
                        continue;
                    }
                    let store = tx.object_store(table.name()).map_err(fail)?;
                    let v = stored(*table, key, value)?;
                    let req = if matches!(op, Op::Insert { .. }) {
                        store
                            .add(v)
                            .with_key(key.as_str())
                            .without_key_type()
                            .primitive()
                    } else {
                        store
                            .put(v)
                            .with_key(key.as_str())
                            .without_key_type()
                            .primitive()
                    }
                    .map_err(fail)?;
                    pending.push((*table, key.clone(), req));
                }
                Op::Delete { table, key } => {
                    if virtual_of(*table).is_some() {
                        continue;
                    }
                    let store = tx.object_store(table.name()).map_err(fail)?;
                    store.delete(key.as_str()).primitive().map_err(fail)?;
                }
            }
        }
        match tx.commit().await {
            Ok(()) => Ok(()),
            Err(e) => {
                // A taken key (add) or a taken unique name or id (the skills' indexes) aborts
                // the transaction with a ConstraintError: a conflict.
                for (table, key, req) in pending {
                    if let Err(IdbError::DomException(DomException::ConstraintError(_))) = req.await
                    {
                        return Err(conflict(table, &key));
                    }
                }
                Err(fail(e))
            }
        }
    }
}
