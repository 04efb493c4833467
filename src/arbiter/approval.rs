//! The approval pipeline: what `tool-builder` and `skill-builder` propose (through
//! `choir.propose.tool` / `choir.propose.skill`) is never installed by the agent. Each
//! accepted proposal is a row of the `skill_proposals` table, `pending` until a human
//! decides:
//! - **approve**: the payload is validated again (a SkillSpec against the registry's tools;
//!   a tool manifest's name and schema), then installed: a new immutable registry is built
//!   with it (the old one is untouched), and the row says `approved`;
//! - **reject**, with a reason: the row says `rejected`.
//!
//! Every decision is also appended to the `approval_log` table (`<decided_at>/<id>`), an
//! insert: a decision is made once. [`install`] rebuilds a registry with every approved
//! proposal, in decision order, for a host starting up.

use super::{validate_spec, ProposalRecord, SkillRegistry};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::Problems;
use crate::store::{Backend, Op, Table};
use serde_json::{json, Value};

/// The id of the proposal record made by event `seq` of `session`'s log: that event's log
/// key (`<session>/<seq>`, zero-padded, so ids sort in log order).
pub fn proposal_id(session: &str, seq: u64) -> String {
    crate::store::session_log_key(session, seq)
}

/// The key of a decision in the `approval_log` table (zero-padded time first: key order is
/// decision order).
pub fn decision_key(at: u64, id: &str) -> String {
    format!("{at:015}/{id}")
}

/// The name a payload proposes (a spec's or a tool's `name`), or "".
fn payload_name(payload: &Value) -> &str {
    payload.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The row of a new proposal record, pending approval.
pub fn pending_row(
    id: &str,
    r: &ProposalRecord,
    session: &str,
    lane: &str,
    skill: &str,
    at: u64,
) -> Value {
    json!({
        "id": id,
        "kind": r.kind,
        "name": payload_name(&r.payload),
        "payload": r.payload,
        "status": "pending",
        "session": session,
        "lane": lane,
        "skill": skill,
        "step": r.step,
        "proposed_at": at,
    })
}

/// Reads `skill_proposals` rows (as a scan returns them), those with `status` (every one
/// for `None`), oldest proposal first.
pub fn list(rows: &[(String, String)], status: Option<&str>) -> Result<Vec<Value>> {
    if let Some(s) = status {
        if !["pending", "approved", "rejected"].contains(&s) {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("a proposal `status` is pending, approved or rejected, not `{s}`"),
            ));
        }
    }
    let mut out = Vec::new();
    for (k, v) in rows {
        let row: Value =
            serde_json::from_str(v).map_err(|e| crate::store::bad_row(Table::Proposals, k, e))?;
        if status.is_none_or(|s| row.get("status").and_then(Value::as_str) == Some(s)) {
            out.push(row);
        }
    }
    // Oldest first; ties (one instant) stay in key order, which is log order.
    crate::sort::sort_by_key(&mut out, |r| {
        r.get("proposed_at").and_then(Value::as_u64).unwrap_or(0)
    });
    Ok(out)
}

/// A human's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Approve (install) or reject.
    pub approve: bool,
    /// Who decided.
    pub by: String,
    /// Why (required to reject).
    pub reason: String,
    /// When (epoch milliseconds).
    pub at: u64,
}

/// A decision applied: the row as it now is, the writes, and for an approval the new
/// registry.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The proposal row after the decision.
    pub row: Value,
    /// The row's update, then the decision's log insert.
    pub ops: Vec<Op>,
    /// The registry with the proposal installed (approvals only).
    pub registry: Option<SkillRegistry>,
}

/// Checks a proposed tool manifest: a `name` (1–128 characters of letters, digits, `.`,
/// `_`, `-`), an optional string `description`, an optional object `input_schema`.
fn check_tool(payload: &Value) -> Result<String> {
    let name = payload_name(payload);
    let ok_name = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let mut p = Problems::default();
    if !ok_name {
        p.error(
            "name",
            "invalid-tool-name",
            "a tool's `name` is 1–128 letters, digits, `.`, `_` or `-`",
        );
    }
    if payload.get("description").is_some_and(|d| !d.is_string()) {
        p.error(
            "description",
            "invalid-type",
            "a tool's `description` is a string",
        );
    }
    if payload.get("input_schema").is_some_and(|d| !d.is_object()) {
        p.error(
            "input_schema",
            "invalid-type",
            "a tool's `input_schema` is a JSON Schema object",
        );
    }
    if p.has_errors() {
        return Err(p.into_error("the proposed tool manifest is not valid, nothing was installed"));
    }
    Ok(name.to_owned())
}

/// Installs one approved payload into `registry` → the new registry.
fn install_one(registry: &SkillRegistry, kind: &str, payload: &Value) -> Result<SkillRegistry> {
    if kind == "tool" {
        let name = check_tool(payload)?;
        return registry.with_installed(&[], &[name]);
    }
    let v = validate_spec(payload, Some(registry.tools()));
    if !v.is_valid() {
        return Err(Error::new(
            ErrorKind::InvalidSkill,
            "the proposed SkillSpec is no longer valid: nothing was installed",
        )
        .with("problems", v.to_value()["problems"].clone()));
    }
    registry.with_installed(std::slice::from_ref(payload), &[])
}

/// Decides the proposal `id` whose stored row is `row` (`None`: absent). Only a pending
/// proposal is decided (`InvalidRequest`, `not-pending`, otherwise); a rejection needs a
/// reason; an approval validates the payload again against `registry` and builds the new
/// registry with it (`InvalidSkill` with the problems, nothing written, when it fails).
pub fn decide(
    id: &str,
    row: Option<&str>,
    d: &Decision,
    registry: &SkillRegistry,
) -> Result<Decided> {
    let row = row.ok_or_else(|| {
        Error::new(ErrorKind::NotFound, format!("no proposal `{id}`")).with("id", id)
    })?;
    let mut r: Value =
        serde_json::from_str(row).map_err(|e| crate::store::bad_row(Table::Proposals, id, e))?;
    let status = r.get("status").and_then(Value::as_str).unwrap_or("");
    if status != "pending" {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!("proposal `{id}` was already {status}: a decision is made once"),
        )
        .with("reason", "not-pending")
        .with("status", status));
    }
    if d.by.trim().is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            "a decision names who made it (`by`)",
        ));
    }
    if !d.approve && d.reason.trim().is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            "a rejection needs a `reason`",
        ));
    }
    let kind = r
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let payload = r.get("payload").cloned().unwrap_or(Value::Null);
    let registry = if d.approve {
        let replaces = kind == "skill" && registry.get(payload_name(&payload)).is_some();
        r["replaces"] = replaces.into();
        Some(install_one(registry, &kind, &payload)?)
    } else {
        None
    };
    let status = if d.approve { "approved" } else { "rejected" };
    r["status"] = status.into();
    r["decided_at"] = d.at.into();
    r["decided_by"] = d.by.clone().into();
    if !d.reason.is_empty() {
        r["reason"] = d.reason.clone().into();
    }
    let entry = json!({
        "id": id, "kind": kind, "name": payload_name(&payload), "decision": status,
        "by": d.by, "reason": d.reason, "at": d.at,
    });
    let ops = vec![
        Op::Put {
            table: Table::Proposals,
            key: id.to_owned(),
            value: r.json_text(),
        },
        Op::Insert {
            table: Table::ApprovalLog,
            key: decision_key(d.at, id),
            value: entry.json_text(),
        },
    ];
    Ok(Decided {
        row: r,
        ops,
        registry,
    })
}

/// `registry` with every approved proposal of `rows` (a `skill_proposals` scan) installed,
/// in decision order → the new registry.
pub fn install(registry: &SkillRegistry, rows: &[(String, String)]) -> Result<SkillRegistry> {
    let at = |r: &Value| r.get("decided_at").and_then(Value::as_u64).unwrap_or(0);
    // Per skill name, the latest approval; tools are a set.
    let mut specs: Vec<(u64, Value)> = Vec::new();
    let mut tools = Vec::new();
    for r in list(rows, Some("approved"))? {
        let payload = r.get("payload").cloned().unwrap_or(Value::Null);
        if r.get("kind").and_then(Value::as_str) == Some("tool") {
            tools.push(check_tool(&payload)?);
            continue;
        }
        let when = at(&r);
        match specs
            .iter_mut()
            .find(|(_, s)| payload_name(s) == payload_name(&payload))
        {
            Some(slot) if slot.0 <= when => *slot = (when, payload),
            Some(_) => {}
            None => specs.push((when, payload)),
        }
    }
    let specs: Vec<Value> = specs.into_iter().map(|(_, s)| s).collect();
    registry.with_installed(&specs, &tools)
}

/// The `approval_log` rows (a scan) as decisions, oldest first.
pub fn history(rows: &[(String, String)]) -> Result<Vec<Value>> {
    rows.iter()
        .map(|(k, v)| {
            serde_json::from_str(v).map_err(|e| crate::store::bad_row(Table::ApprovalLog, k, e))
        })
        .collect()
}

/// A decision from its JSON form: `{ approve, by, reason?, at }`.
pub fn decision_from_json(text: &str) -> Result<Decision> {
    let v = crate::wire::json_value(text, "the decision", ErrorKind::InvalidOptions)?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Ok(Decision {
        approve: v.get("approve").and_then(Value::as_bool).unwrap_or(false),
        by: s("by"),
        reason: s("reason"),
        at: v.get("at").and_then(Value::as_u64).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOptions,
                "a decision needs its time `at` (epoch milliseconds)",
            )
        })?,
    })
}

/// [`decide`] in JSON: `{ row, ops }` (ops in the JS backends' wire form), and the new
/// registry for an approval.
pub fn decide_json(
    id: &str,
    row: Option<&str>,
    decision: &str,
    registry: &SkillRegistry,
) -> Result<(String, Option<SkillRegistry>)> {
    let d = decide(id, row, &decision_from_json(decision)?, registry)?;
    let ops: Vec<Value> = d.ops.iter().map(Op::to_value).collect();
    Ok((json!({"row": d.row, "ops": ops}).json_text(), d.registry))
}

/// Over a synchronous [`Backend`]: decides proposal `id` (read, decided, written).
pub fn decide_in<B: Backend>(
    backend: &mut B,
    id: &str,
    d: &Decision,
    registry: &SkillRegistry,
) -> Result<Decided> {
    let row = backend.get(Table::Proposals, id)?;
    let out = decide(id, row.as_deref(), d, registry)?;
    backend.commit(&out.ops)?;
    Ok(out)
}

/// Over a synchronous [`Backend`]: the proposals with `status` (all for `None`), or with
/// `history` the decisions (JSON array text).
pub fn read_in<B: Backend>(backend: &B, status: Option<&str>, history: bool) -> Result<String> {
    let out = if history {
        super::approval::history(&backend.scan(Table::ApprovalLog, "")?)?
    } else {
        list(&backend.scan(Table::Proposals, "")?, status)?
    };
    Ok(Value::Array(out).json_text())
}
