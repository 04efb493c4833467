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
