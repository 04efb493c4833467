//! The storage backend over an imported `wasi:keyvalue` bucket: the raw keys and values;
//! rows live under `<table>:<key>`, and the core's journal protocol
//! ([`crate::store::kv::Journaled`]) makes each commit all or nothing and chunks large
//! values, as the store interface has no transactions.

use super::wasi::keyvalue::store::{self as kv, Bucket};
use crate::error::{Error, ErrorKind, Result};
use crate::store::kv::{Journaled, RawKv};

/// A bucket as a [`crate::store::Backend`]: journaled commits over its raw keys.
pub(crate) type KvBackend = Journaled<Bucketed>;

/// A bucket's raw keys and values.
pub(crate) struct Bucketed {
    bucket: Bucket,
}

pub(crate) fn failed(what: &str, e: kv::Error) -> Error {
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

impl Bucketed {
    /// Opens the bucket `name`, rolling back a write an earlier instance left half done.
    pub(crate) fn open(name: &str) -> Result<KvBackend> {
        let store = Journaled::new(
            Bucketed {
                bucket: kv::open(name).map_err(|e| failed("open", e))?,
            },
            "",
        );
        store.recover()?;
        Ok(store)
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

impl RawKv for Bucketed {
    fn get(&self, key: &str) -> Result<Option<String>> {
        self.text(key)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        self.bucket
            .set(key, value.as_bytes())
            .map_err(|e| failed("set", e))
    }

    fn delete(&mut self, key: &str) -> Result<()> {
        self.bucket.delete(key).map_err(|e| failed("delete", e))
    }

    fn keys(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .bucket
                .list_keys(cursor)
                .map_err(|e| failed("list-keys", e))?;
            keys.extend(page.keys.into_iter().filter(|k| k.starts_with(prefix)));
            match page.cursor {
                Some(c) if cursor != Some(c) => cursor = Some(c),
                _ => break,
            }
        }
        Ok(keys)
    }
}
