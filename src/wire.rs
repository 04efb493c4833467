//! Wire forms shared by the bindings: the resolver answers the JS glue sends as JSON.
//!
//! `{ "<part index>": {"text": "…"} | {"text_at": n} | {"bytes": "<base64>", "mime"?: "…"} |
//!   {"slot": {"$slot": n, "head": "…", "len": n}, "mime"?: "…"} | {"payload": any} |
//!   {"error": "…"} }` — a part with no entry is unresolved.

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::lower::{Resolved, TableResolver};
use crate::message::{Data, Part};
use serde_json::Value;

/// JSON text from outside as a value, or the error of `kind` naming `what` (surrogate and
/// depth problems said plainly): the one parse every face uses.
pub fn json_value(text: &str, what: &str, kind: ErrorKind) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::json(kind, what, &e))
}

/// Parses a JSON array of messages (a history for `lowerMany` / `lower-many`); anything
/// else is `InvalidMessage`.
pub fn message_array(text: &str) -> Result<Vec<Value>> {
    crate::message::array_values(text)
}

/// Parses the resolver answers into a [`TableResolver`].
pub fn resolver_table(text: &str) -> Result<TableResolver> {
    resolver_table_with(text, Vec::new())
}

/// Like [`resolver_table`], where `{"text_at": n}` answers take `texts[n]` (moved, not copied).
pub fn resolver_table_with(text: &str, texts: Vec<String>) -> Result<TableResolver> {
    let mut texts: Vec<Option<String>> = texts.into_iter().map(Some).collect();
    if text.trim().is_empty() {
        return Ok(TableResolver::default());
    }
    let value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    table_from(value, &mut texts)
}

fn bad(m: String) -> Error {
    Error::new(ErrorKind::InvalidOptions, m).at("resolved")
}

/// One table per message from `[answers, …]` (lowering many messages at once); texts are
/// shared, each taken by the answer that names it. An empty `text` gives empty tables.
pub fn resolver_tables(text: &str, texts: Vec<String>, n: usize) -> Result<Vec<TableResolver>> {
    if text.trim().is_empty() {
        return Ok((0..n).map(|_| TableResolver::default()).collect());
    }
    let mut texts: Vec<Option<String>> = texts.into_iter().map(Some).collect();
    let Value::Array(items) =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?
    else {
        return Err(bad("resolver answers must be an array".into()));
    };
    let mut tables: Vec<TableResolver> = items
        .into_iter()
        .map(|v| table_from(v, &mut texts))
        .collect::<Result<_>>()?;
    tables.resize_with(n.max(tables.len()), TableResolver::default);
    Ok(tables)
}

fn table_from(value: Value, texts: &mut [Option<String>]) -> Result<TableResolver> {
    let mut table = TableResolver::default();
    let map = match value {
        Value::Object(map) => map,
        Value::Null => return Ok(table),
        _ => return Err(bad("resolver answers must be an object".into())),
    };
    for (k, v) in map {
        let part: usize = k
            .parse()
            .map_err(|_| bad(format!("`{k}` is not a part index")))?;
        let Value::Object(mut o) = v else {
            return Err(bad(format!("answer for part {part} must be an object")));
        };
        let mime = o.remove("mime").and_then(|m| m.as_str().map(str::to_owned));
        let entry = if let Some(Value::String(t)) = o.remove("text") {
            Ok(Resolved::Text(t))
        } else if let Some(at) = o.remove("text_at") {
            let t = at
                .as_u64()
                .and_then(|n| texts.get_mut(n as usize))
                .and_then(Option::take)
                .ok_or_else(|| bad(format!("answer for part {part} names a missing text")))?;
            Ok(Resolved::Text(t))
        } else if let Some(Value::String(b64)) = o.remove("bytes") {
            let data =
                crate::media::decode(&b64).map_err(|e| e.at(format!("resolved.{part}.bytes")))?;
            Ok(Resolved::Bytes { data, mime })
        } else if let Some(slot) = o.remove("slot") {
            // Reuse the message parser's reading of a host slot object.
            let probe = serde_json::json!({"type": "file-attachment", "data": slot});
            match Part::from_value(probe, part)? {
                Part::FileAttachment(a) => match a.data {
                    Some(Data::Host(h)) => Ok(Resolved::Host { data: h, mime }),
                    _ => return Err(bad(format!("answer for part {part} has a malformed slot"))),
                },
                _ => return Err(bad(format!("answer for part {part} has a malformed slot"))),
            }
        } else if let Some(p) = o.remove("payload") {
            Ok(Resolved::Payload(p))
        } else if let Some(e) = o.remove("error") {
            Err(e
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| e.json_text()))
        } else {
            Ok(Resolved::Missing)
        };
        table.insert(part, entry);
    }
    Ok(table)
}
