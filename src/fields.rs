//! Reading typed fields out of a JSON object that came from outside, naming the JSON path of
//! any field that is missing or of the wrong type (`parts[3].ref.path`, `tools[0].strict`).

use crate::error::{Error, ErrorKind};
use serde_json::{Map, Value};

/// A JSON path written out only when an error names it: a parser walking a message
/// passes these down (no text per part and field); `Display` gives `parts[3].ref.path`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At<'a> {
    /// A path already written (`""` is the root).
    Text(&'a str),
    /// `parent.key` (just `key` under the root).
    Key(&'a At<'a>, &'a str),
    /// `parent[i]`.
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    /// The path as text.
    pub(crate) fn text(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Text(t) => f.write_str(t),
            At::Key(At::Text(""), k) => f.write_str(k),
            At::Key(p, k) => write!(f, "{p}.{k}"),
            At::Index(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

/// Where the fields' object sits.
enum Path<'a> {
    Text(String),
    At(At<'a>),
}

/// The fields of one object, taken out one by one.
pub(crate) struct Fields<'a> {
    obj: &'a mut Map<String, Value>,
    path: Path<'a>,
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
            path: Path::Text(path.into()),
            kind,
        }
    }

    /// Fields of `obj` at the path `at`, written out only for an error.
    pub(crate) fn at(obj: &'a mut Map<String, Value>, at: At<'a>, kind: ErrorKind) -> Self {
        Fields {
            obj,
            path: Path::At(at),
            kind,
        }
    }

    /// An error about `key` of this object.
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> Error {
        let at = match &self.path {
            Path::Text(p) => At::Key(&At::Text(p), key).text(),
            Path::At(a) => At::Key(a, key).text(),
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

#[cfg(test)]
mod tests {
    use super::At;

    #[test]
    fn paths_are_written_as_json_paths() {
        let root = At::Text("");
        let parts = At::Key(&root, "parts");
        let third = At::Index(&parts, 3);
        let r = At::Key(&third, "ref");
        assert_eq!(parts.text(), "parts");
        assert_eq!(At::Key(&r, "path").text(), "parts[3].ref.path");
        let out = At::Key(&At::Text("turns[1]"), "output");
        assert_eq!(At::Index(&out, 0).text(), "turns[1].output[0]");
    }
}
