//! Reading typed fields out of a JSON object that came from outside, naming the JSON path of
//! any field that is missing or of the wrong type (`parts[3].ref.path`, `tools[0].strict`).

use crate::error::{Error, ErrorKind};
use serde_json::{Map, Value};

/// The fields of one object, taken out one by one.
pub(crate) struct Fields<'a> {
    obj: &'a mut Map<String, Value>,
    path: String,
    kind: ErrorKind,
}

impl<'a> Fields<'a> {
    /// Fields of `obj` at `path`; errors are of `kind`.
    pub(crate) fn new(
        obj: &'a mut Map<String, Value>,
        path: impl Into<String>,
        kind: ErrorKind,
    ) -> Self {
        Fields {
            obj,
            path: path.into(),
            kind,
        }
    }

    /// An error about `key` of this object.
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> Error {
        let at = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        };
        Error::new(self.kind, message).at(at)
    }

    /// Takes a field, treating `null` as absent.
    pub(crate) fn take(&mut self, key: &str) -> Option<Value> {
        self.obj.remove(key).filter(|v| !v.is_null())
    }

    /// Takes a field as it is (`null` included).
    pub(crate) fn take_raw(&mut self, key: &str) -> Option<Value> {
        self.obj.remove(key)
    }

    /// A required string.
    pub(crate) fn string(&mut self, key: &str) -> Result<String, Error> {
        self.opt_string(key)?
            .ok_or_else(|| self.error(key, format!("missing string field `{key}`")))
    }

    /// An optional string.
    pub(crate) fn opt_string(&mut self, key: &str) -> Result<Option<String>, Error> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.error(key, format!("`{key}` must be a string"))),
        }
    }

    /// An optional non-negative integer.
    pub(crate) fn opt_u64(&mut self, key: &str) -> Result<Option<u64>, Error> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.error(key, format!("`{key}` must be a non-negative integer"))),
        }
    }

    /// An optional boolean.
    pub(crate) fn opt_bool(&mut self, key: &str) -> Result<Option<bool>, Error> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(self.error(key, format!("`{key}` must be a boolean"))),
        }
    }

    /// An optional object.
    pub(crate) fn opt_object(&mut self, key: &str) -> Result<Option<Map<String, Value>>, Error> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o)),
            Some(_) => Err(self.error(key, format!("`{key}` must be an object"))),
        }
    }

    /// An optional array.
    pub(crate) fn opt_array(&mut self, key: &str) -> Result<Option<Vec<Value>>, Error> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(self.error(key, format!("`{key}` must be an array"))),
        }
    }

    /// The first key not taken yet, if any (to reject unknown options).
    pub(crate) fn leftover(&self) -> Option<&str> {
        self.obj.keys().next().map(String::as_str)
    }
}
