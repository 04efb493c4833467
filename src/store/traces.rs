//! Execution traces in the skill store: `skill_traces` rows under
//! `<session_id>/<started_at>/<id>` (a session's traces are one key range, in start order),
//! each the row [`crate::dispatch::trace::row`] builds.

use super::{Op, Table};
use crate::json_text::JsonText;
use serde_json::{Map, Value};

/// The key of a trace row: `<session_id>/<started_at>/<id>`.
pub fn key(r: &Map<String, Value>) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    super::trace_key(s("session_id"), s("started_at"), s("id"))
}

/// The write that stores a trace row.
pub fn put(r: &Map<String, Value>) -> Op {
    Op::Put {
        table: Table::Traces,
        key: key(r),
        value: Value::Object(r.clone()).json_text(),
    }
}

/// The scan prefix of a session's traces (all traces for `None`).
pub fn prefix(session_id: Option<&str>) -> String {
    super::traces_prefix(session_id.unwrap_or(""))
}

/// A trace page's answer, `{ items, next }` as JSON text, from the rows a range read gave
/// (up to `limit + 1` of them: one more than the page says a page follows). `items` are the
/// rows among the first `limit` whose skill and artifact match (as JSON lines export them);
/// `next` is the key of the last of those `limit` rows, the cursor of the following page,
/// or `null` when the range ended.
pub fn page_json(
    rows: Vec<(String, String)>,
    skill: &str,
    artifact: &str,
    limit: usize,
) -> crate::error::Result<String> {
    let page = rows.get(..limit).unwrap_or(&rows);
    let next = match page.last() {
        Some((k, _)) if rows.len() > limit => Value::from(k.as_str()),
        _ => Value::Null,
    };
    let lines = crate::dispatch::trace::export(
        page.iter().map(|(_, v)| v.as_str()),
        Some(skill).filter(|s| !s.is_empty()),
        Some(artifact).filter(|s| !s.is_empty()),
        crate::dispatch::trace::Export::JsonLines,
    )?;
    // Each line is one row's JSON: the items are the lines joined as an array.
    let items = lines.trim_end().replace('\n', ",");
    Ok(format!(
        "{{\"items\":[{items}],\"next\":{}}}",
        next.json_text()
    ))
}
