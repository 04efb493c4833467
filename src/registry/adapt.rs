//! Output adapters: a newer contract version declares, per older version, how its output
//! reads in the older shape (`output_adapters: { "0.9": <mapping> }`), so callers pinned to
//! a version that is sunset or gone keep working — the adapter is data the contract's
//! owners ship, run the same way in every host.
//!
//! A mapping is JSON: a text `"$"` is the current value, `"$/a/0/b"` a JSON pointer into
//! it, `"$root/…"` a pointer into the whole output, `"$$…"` a literal text starting with
//! `$`; `{ "$each": "<pointer>", "$map": <mapping> }` maps every element of an array (each
//! becomes the current value); other objects and arrays are mapped member by member, and
//! every other value is itself.

use crate::problems::Problems;
use serde_json::{Map, Value};

/// How deep a mapping may nest.
const MAX_DEPTH: usize = 32;

/// Checks a mapping's shape, adding a problem at `path` for each fault.
pub(crate) fn check(m: &Value, path: &str, out: &mut Problems, depth: usize) {
    if depth > MAX_DEPTH {
        out.error(
            path,
            "too-deep",
            format!("the mapping nests deeper than {MAX_DEPTH} levels"),
        );
        return;
    }
    match m {
        Value::String(s) if s.starts_with('$') && !s.starts_with("$$") => {
            let rest = s.strip_prefix("$root").unwrap_or(&s[1..]);
            if !(rest.is_empty() || rest.starts_with('/')) {
                out.error(
                    path,
                    "invalid-mapping",
                    format!("`{s}` is neither `$`, a `$/pointer`, `$root/pointer` nor `$$literal`"),
                );
            }
        }
        Value::Object(o) if o.contains_key("$each") => {
            if !matches!(o.get("$each"), Some(Value::String(p)) if p.is_empty() || p.starts_with('/'))
            {
                out.error(
                    &format!("{path}.$each"),
                    "invalid-mapping",
                    "`$each` is a JSON pointer (`/edges`)",
                );
            }
            match o.get("$map") {
                Some(inner) => check(inner, &format!("{path}.$map"), out, depth + 1),
                None => out.error(
                    path,
                    "invalid-mapping",
                    "`$each` needs a `$map` for each element",
                ),
            }
            for k in o.keys().filter(|k| *k != "$each" && *k != "$map") {
                out.error(
                    &format!("{path}.{k}"),
                    "invalid-mapping",
                    "beside `$each` only `$map` is allowed",
                );
            }
        }
        Value::Object(o) => {
            for (k, v) in o {
                check(v, &format!("{path}.{k}"), out, depth + 1);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                check(v, &format!("{path}[{i}]"), out, depth + 1);
            }
        }
        _ => {}
    }
}

/// The output `root` read through mapping `m`.
pub fn apply(m: &Value, root: &Value) -> Value {
    eval(m, root, root, 0)
}

fn eval(m: &Value, cur: &Value, root: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    match m {
        Value::String(s) if s.starts_with("$$") => Value::String(s[1..].to_owned()),
        Value::String(s) if s.starts_with("$root") => {
            root.pointer(&s[5..]).cloned().unwrap_or(Value::Null)
        }
        Value::String(s) if s.starts_with('$') => {
            cur.pointer(&s[1..]).cloned().unwrap_or(Value::Null)
        }
        Value::Object(o) if o.contains_key("$each") => {
            let items = o
                .get("$each")
                .and_then(Value::as_str)
                .and_then(|p| cur.pointer(p))
                .and_then(Value::as_array);
            let inner = o.get("$map").unwrap_or(&Value::Null);
            Value::Array(
                items
                    .map(|a| a.iter().map(|x| eval(inner, x, root, depth + 1)).collect())
                    .unwrap_or_default(),
            )
        }
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                out.insert(k.clone(), eval(v, cur, root, depth + 1));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| eval(v, cur, root, depth + 1)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_graph_reads_as_a_flat_list() {
        let m = json!({ "recommendations": { "$each": "/edges", "$map": { "title_id": "$/to", "similarity": "$/weight", "reason": "graph edge", "from": "$root/nodes/0", "tag": "$$lit" } } });
        let out = json!({ "nodes": ["A"], "edges": [{ "from": "A", "to": "B", "weight": 0.5 }] });
        assert_eq!(
            apply(&m, &out),
            json!({ "recommendations": [{ "title_id": "B", "similarity": 0.5, "reason": "graph edge", "from": "A", "tag": "$lit" }] })
        );
        let mut p = Problems::default();
        check(&json!({ "a": "$x", "b": { "$each": 3 } }), "m", &mut p, 0);
        assert_eq!(p.0.len(), 3);
    }
}
