//! Step 8 and the invocation record: which artifacts a composition read (ids, versions and
//! a content hash, so replay can prove the skill is unchanged) and the record the host
//! stores beside the turn.

use super::request::ComposeRequest;
use crate::error::Error;
use crate::skill::SkillArtifact;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// One artifact the composition read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedArtifact {
    /// Artifact id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Kind (wire name).
    pub kind: &'static str,
    /// Model variant (`None` is the default).
    pub model_variant: Option<String>,
    /// What the composition used it for (`framing`, `description`, `example`, `approach`).
    pub role: &'static str,
    /// `sha256-<hex>` of the kind, name, variant, content, metadata and state.
    pub content_hash: String,
    /// The artifact's `updated_at` (`None` when the package carries no timestamps).
    pub updated_at: Option<String>,
}

fn hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[usize::from(b >> 4)] as char);
        s.push(H[usize::from(b & 15)] as char);
    }
    s
}

/// `sha256-<hex>` of everything about an artifact that can change what it contributes.
pub fn content_hash(a: &SkillArtifact) -> String {
    let mut h = Sha256::new();
    for part in [
        a.kind.name(),
        a.name.as_str(),
        a.model_variant.as_deref().unwrap_or(""),
        a.content.as_str(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(Value::Object(a.metadata.clone()).to_string().as_bytes());
    h.update([0]);
    h.update(a.state_blob.as_deref().unwrap_or("").as_bytes());
    format!("sha256-{}", hex(&h.finalize()))
}

impl UsedArtifact {
    /// The use of `a` in `role`.
    pub fn of(a: &SkillArtifact, role: &'static str) -> Self {
        UsedArtifact {
            id: a.id.clone(),
            name: a.name.clone(),
            kind: a.kind.name(),
            model_variant: a.model_variant.clone(),
            role,
            content_hash: content_hash(a),
            updated_at: Some(a.updated_at.clone()).filter(|u| !u.is_empty()),
        }
    }

    /// The JSON form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("id".into(), self.id.clone().into());
        o.insert("name".into(), self.name.clone().into());
        o.insert("kind".into(), self.kind.into());
        o.insert(
            "model_variant".into(),
            self.model_variant
                .clone()
                .map_or(Value::Null, Value::String),
        );
        o.insert("role".into(), self.role.into());
        o.insert("content_hash".into(), self.content_hash.clone().into());
        o.insert(
            "updated_at".into(),
            self.updated_at.clone().map_or(Value::Null, Value::String),
        );
        Value::Object(o)
    }
}

/// The identity of the skill an invocation names, read from the package even when it does
/// not validate: `(id, name, version)`.
pub type SkillIdentity = (String, String, String);

/// The invocation record (seed: skill id and version, source, used artifacts, expected tool
/// calls, success or the error variant), with an id derived from its content.
pub fn invocation_record(
    req: &RecordInput<'_>,
    used: &[UsedArtifact],
    expected_tool_calls: &[String],
    error: Option<&Error>,
) -> Value {
    let mut o = Map::new();
    o.insert("thread_id".into(), req.thread_id.into());
    o.insert(
        "turn_id".into(),
        req.turn_id.map_or(Value::Null, Value::from),
    );
    o.insert("skill_id".into(), req.skill.0.clone().into());
    o.insert("skill_name".into(), req.skill.1.clone().into());
    o.insert("skill_version".into(), req.skill.2.clone().into());
    o.insert("invocation_source".into(), req.source.into());
    o.insert("purpose".into(), req.purpose.into());
    o.insert(
        "channel_id".into(),
        req.channel_id.map_or(Value::Null, Value::from),
    );
    o.insert(
        "used_artifacts".into(),
        Value::Array(used.iter().map(UsedArtifact::to_value).collect()),
    );
    o.insert(
        "expected_tool_calls".into(),
        expected_tool_calls.to_vec().into(),
    );
    o.insert(
        "outcome".into(),
        if error.is_some() { "error" } else { "success" }.into(),
    );
    o.insert(
        "error".into(),
        error.map_or(Value::Null, |e| {
            let mut m = Map::new();
            m.insert("code".into(), e.code().into());
            m.insert("message".into(), e.to_string().into());
            Value::Object(m)
        }),
    );
    o.insert(
        "composed_at".into(),
        req.now.map_or(Value::Null, Value::from),
    );
    let digest = Sha256::digest(Value::Object(o.clone()).to_string().as_bytes());
    o.insert(
        "id".into(),
        format!("inv-{}", hex(digest.get(..12).unwrap_or(&[]))).into(),
    );
    Value::Object(o)
}

/// What an invocation record reads from a request (also from one whose package did not
/// validate).
#[derive(Debug, Clone)]
pub struct RecordInput<'a> {
    /// Thread.
    pub thread_id: &'a str,
    /// Turn.
    pub turn_id: Option<&'a str>,
    /// `(id, name, version)` of the skill.
    pub skill: SkillIdentity,
    /// Invocation source (wire name).
    pub source: &'a str,
    /// Purpose (wire name).
    pub purpose: &'a str,
    /// Channel.
    pub channel_id: Option<&'a str>,
    /// Host time.
    pub now: Option<&'a str>,
}

impl<'a> RecordInput<'a> {
    /// From a parsed request.
    pub fn of(req: &'a ComposeRequest) -> Self {
        RecordInput {
            thread_id: &req.thread_id,
            turn_id: req.turn_id.as_deref(),
            skill: (
                req.skill.id.clone(),
                req.skill.name.clone(),
                req.skill.version.clone(),
            ),
            source: req.invocation_source.name(),
            purpose: req.purpose.name(),
            channel_id: req.channel_id.as_deref(),
            now: req.now.as_deref(),
        }
    }

    /// From the raw request object, when it names a thread and a skill (for a request that
    /// failed before it was fully read).
    pub fn from_raw(v: &'a Value) -> Option<Self> {
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let pkg = v.get("skill_package")?;
        let name = pkg.get("name").and_then(Value::as_str)?;
        let id = pkg
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| crate::skill::skill_id(name), str::to_owned);
        let version = pkg
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("1.0.0");
        Some(RecordInput {
            thread_id: s("thread_id")?,
            turn_id: s("turn_id"),
            skill: (id, name.to_owned(), version.to_owned()),
            source: s("invocation_source").unwrap_or("explicit"),
            purpose: s("purpose").unwrap_or("application"),
            channel_id: s("channel_id"),
            now: s("now"),
        })
    }
}
