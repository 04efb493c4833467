//! Read-time adapters: older message shapes are upgraded on the way out of a store (or in
//! from a host that still writes them); stored rows are never rewritten.
//!
//! | version | change |
//! | --- | --- |
//! | 1 | the foundation's shape |
//! | 2 | a split-out attachment names its blob as `blob: { content_id }` (v1: a top-level `content_id`); commands and mentions may carry `resolved`, file-refs `ref.name` (both additive) |
//!
//! Each step is a function from the raw JSON parts of one version to the next, so a row of
//! any age reaches the current shape by running the steps in order.

use serde_json::{Map, Value};

/// Upgrades the raw parts of a message written at `from` to the current
/// [`crate::message::SCHEMA_VERSION`], in place. Parts that are not objects are left for the
/// parser to reject with their path.
pub fn upgrade(from: u64, parts: &mut [Value]) {
    if from < 2 {
        for part in parts.iter_mut() {
            v1_to_v2(part);
        }
    }
}

/// Version 1 → 2: `file-attachment.content_id` → `file-attachment.blob.content_id`.
fn v1_to_v2(part: &mut Value) {
    let Value::Object(obj) = part else { return };
    if obj.get("type").and_then(Value::as_str) != Some("file-attachment") {
        return;
    }
    if let Some(id) = obj.remove("content_id") {
        if id.is_null() {
            return;
        }
        let mut blob = Map::new();
        blob.insert("content_id".into(), id);
        obj.insert("blob".into(), Value::Object(blob));
    }
}
