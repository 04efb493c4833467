//! The storage backend over an imported `wasi:keyvalue` bucket. Rows live under
//! `<table>:<key>`; a commit writes them one by one in the layout's order (dependent rows
//! first, the row that makes them visible last), as the store interface has no transactions.

use super::wasi::keyvalue::store::{self as kv, Bucket};
use crate::error::{Error, ErrorKind, Result};
use crate::store::{Backend, Op, Table};

/// A bucket as a [`Backend`].
pub(crate) struct KvBackend {
    bucket: Bucket,
}

fn failed(what: &str, e: kv::Error) -> Error {
    let why = match e {
        kv::Error::NoSuchStore => "no such store".to_owned(),
        kv::Error::AccessDenied => "access denied".to_owned(),
        kv::Error::Other(m) => m,
    };
    Error::new(
        ErrorKind::StoreFailed,
        format!("the key-value store failed in {what}: {why}"),
    )
}

fn flat(table: Table, key: &str) -> String {
    format!("{}:{key}", table.name())
}

impl KvBackend {
    /// Opens the bucket `name`.
    pub(crate) fn open(name: &str) -> Result<KvBackend> {
        Ok(KvBackend {
            bucket: kv::open(name).map_err(|e| failed("open", e))?,
        })
    }

    fn text(&self, key: &str) -> Result<Option<String>> {
        match self.bucket.get(key).map_err(|e| failed("get", e))? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                Error::new(
                    ErrorKind::StoreFailed,
                    format!("the row `{key}` is not UTF-8"),
                )
            }),
        }
    }
}

impl Backend for KvBackend {
    fn get(&self, table: Table, key: &str) -> Result<Option<String>> {
        self.text(&flat(table, key))
    }

    fn scan(&self, table: Table, prefix: &str) -> Result<Vec<(String, String)>> {
        let full = flat(table, prefix);
        let strip = table.name().len() + 1;
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .bucket
                .list_keys(cursor)
                .map_err(|e| failed("list-keys", e))?;
            keys.extend(page.keys.into_iter().filter(|k| k.starts_with(&full)));
            match page.cursor {
                Some(c) if cursor != Some(c) => cursor = Some(c),
                _ => break,
            }
        }
        keys.sort();
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(v) = self.text(&k)? {
                out.push((k.get(strip..).unwrap_or_default().to_owned(), v));
            }
        }
        Ok(out)
    }

    fn commit(&mut self, ops: &[Op]) -> Result<()> {
        // The store interface has no transactions: inserts are checked before anything is
        // written (a single writer per bucket is assumed for the check to be exact).
        for op in ops {
            if let Op::Insert { table, key, .. } = op {
                if self
                    .bucket
                    .exists(&flat(*table, key))
                    .map_err(|e| failed("exists", e))?
                {
                    return Err(crate::store::conflict(*table, key));
                }
            }
        }
        for op in ops {
            match op {
                Op::Put { table, key, value } | Op::Insert { table, key, value } => self
                    .bucket
                    .set(&flat(*table, key), value.as_bytes())
                    .map_err(|e| failed("set", e))?,
                Op::Delete { table, key } => self
                    .bucket
                    .delete(&flat(*table, key))
                    .map_err(|e| failed("delete", e))?,
            }
        }
        Ok(())
    }
}
