//! Composer invocation records, kept beside the conversation's turns in the message store:
//! `skill_invocations` rows under `<thread_id>/<composed_at>/<record id>`, so one thread's
//! records are one key range in composition order.

use super::{Op, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use serde_json::Value;

/// The write that stores an invocation record (as [`crate::composer::invocation_record`]
/// builds it: `thread_id` and `id` are required).
pub fn put(record: &Value) -> Result<Op> {
    let s = |k: &str| record.get(k).and_then(Value::as_str);
    let (Some(thread), Some(id)) = (s("thread_id"), s("id")) else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "an invocation record needs `thread_id` and `id` (store the `invocation_record` a composition returns)",
        ));
    };
    if thread.contains('/') {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "a thread id used as a record key must not contain `/`",
        )
        .with("thread_id", thread));
    }
    Ok(Op::Put {
        table: Table::Invocations,
        key: format!("{thread}/{}/{id}", s("composed_at").unwrap_or("")),
        value: record.json_text(),
    })
}

/// The scan prefix of a thread's records.
pub fn prefix(thread_id: &str) -> String {
    super::invocations_prefix(thread_id)
}
