//! Step 8 and the invocation record: which artifacts a composition read (ids, versions and
//! a content hash, so replay can prove the skill is unchanged) and the record the host
//! stores beside the turn.

use super::request::ComposeRequest;
use crate::error::Error;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::dispatch::used::hex;
pub use crate::dispatch::used::{content_hash, UsedArtifact};

/// The identity of the skill an invocation names, read from the package even when it does
/// not validate: `(id, name, version)`.
pub type SkillIdentity = (String, String, String);

/// `(id, name, version)` of a raw package, when it has a name.
pub fn identity_of(pkg: &Value) -> Option<SkillIdentity> {
    let name = pkg.get("name").and_then(Value::as_str)?;
    let id = pkg
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| crate::skill::skill_id(name), str::to_owned);
    let version = pkg
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("1.0.0");
    Some((id, name.to_owned(), version.to_owned()))
}

/// The error variant an invocation record names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RecordError {
    /// The stable code (`UnknownTool`, …).
    pub code: &'static str,
    /// The message.
    pub message: String,
}

/// The invocation record (seed: skill id and version, source, used artifacts, expected tool
/// calls, success or the error variant), with an id derived from its content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InvocationRecord {
    /// `inv-<hex>`: a hash of the other fields.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// Thread.
    pub thread_id: String,
    /// Turn.
    pub turn_id: Option<String>,
    /// Skill id.
    pub skill_id: String,
    /// Skill name.
    pub skill_name: String,
    /// Skill version.
    pub skill_version: String,
    /// Invocation source (wire name).
    pub invocation_source: String,
    /// Purpose (wire name).
    #[cfg_attr(feature = "ts", ts(type = "'application' | 'authoring'"))]
    pub purpose: String,
    /// Channel.
    pub channel_id: Option<String>,
    /// The artifacts read.
    pub used_artifacts: Vec<UsedArtifact>,
    /// The memory items the prompt depends on (those it rendered), with a hash of what was
    /// rendered, so a replay can name the item that changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<MemoryMark>>", optional))]
    pub memory_refs: Vec<MemoryMark>,
    /// The tool-call sequence hint.
    pub expected_tool_calls: Vec<String>,
    /// `success` or `error`.
    #[cfg_attr(feature = "ts", ts(type = "'success' | 'error'"))]
    pub outcome: &'static str,
    /// The error variant, for `error`.
    pub error: Option<RecordError>,
    /// Host time.
    pub composed_at: Option<String>,
    /// The request's inputs as given (a successful composition only), for replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, unknown>"))]
    pub request: Option<Map<String, Value>>,
    /// `sha256-<hex>` of the prompt text (a successful composition only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub prompt_hash: Option<String>,
    /// The parameters after schema defaults (a successful composition only), so a replay
    /// names a parameter whose default changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, unknown>"))]
    pub parameters: Option<Map<String, Value>>,
}

/// `sha256-<hex>` of a prompt text.
pub fn prompt_hash(text: &str) -> String {
    format!("sha256-{}", hex(&Sha256::digest(text.as_bytes())))
}

impl InvocationRecord {
    /// Adds what a replay needs (the request's inputs and the prompt's hash) and derives the
    /// id again.
    pub fn replayable(
        &mut self,
        request: Map<String, Value>,
        parameters: &Map<String, Value>,
        prompt: &str,
    ) {
        self.request = Some(request);
        self.parameters = Some(parameters.clone());
        self.prompt_hash = Some(prompt_hash(prompt));
        self.seal();
    }

    /// Derives the id: a hash of the record's JSON text written without it.
    fn seal(&mut self) {
        self.id = String::new();
        let digest = Sha256::digest(crate::json_text::to_vec(self).unwrap_or_default());
        self.id = format!("inv-{}", hex(digest.get(..12).unwrap_or(&[])));
    }

    /// The JSON form.
    pub fn to_value(&self) -> Value {
        super::json(self)
    }
}

/// A memory item the prompt rendered: its id and `sha256-<hex>` of its tier and content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MemoryMark {
    /// The item id.
    pub id: String,
    /// `sha256-<hex>` of the tier and the content.
    pub content_hash: String,
}

impl MemoryMark {
    /// The mark of an item rendered with `tier` and `content`.
    pub fn of(id: &str, tier: Option<&str>, content: &str) -> Self {
        let mut h = Sha256::new();
        h.update(tier.unwrap_or("").as_bytes());
        h.update([0]);
        h.update(content.as_bytes());
        MemoryMark {
            id: id.to_owned(),
            content_hash: format!("sha256-{}", hex(&h.finalize())),
        }
    }
}

/// Builds the invocation record; its id hashes the record's JSON text (written without the
/// id).
pub fn invocation_record(
    req: &RecordInput,
    used: &[UsedArtifact],
    memory: &[MemoryMark],
    expected_tool_calls: &[String],
    error: Option<&Error>,
) -> InvocationRecord {
    let mut r = unsealed(req, used, memory, expected_tool_calls, error);
    r.seal();
    r
}

/// The record of a successful composition with what a replay needs: the id is derived once,
/// over the whole record ([`InvocationRecord::replayable`] on a sealed record hashes twice).
pub(crate) fn replayable_record(
    req: &RecordInput,
    used: &[UsedArtifact],
    memory: &[MemoryMark],
    expected_tool_calls: &[String],
    replay: (Map<String, Value>, &Map<String, Value>, &str),
) -> InvocationRecord {
    let mut r = unsealed(req, used, memory, expected_tool_calls, None);
    r.replayable(replay.0, replay.1, replay.2);
    r
}

/// The record with no id yet.
fn unsealed(
    req: &RecordInput,
    used: &[UsedArtifact],
    memory: &[MemoryMark],
    expected_tool_calls: &[String],
    error: Option<&Error>,
) -> InvocationRecord {
    InvocationRecord {
        id: String::new(),
        thread_id: req.thread_id.clone(),
        turn_id: req.turn_id.clone(),
        skill_id: req.skill.0.clone(),
        skill_name: req.skill.1.clone(),
        skill_version: req.skill.2.clone(),
        invocation_source: req.source.clone(),
        purpose: req.purpose.clone(),
        channel_id: req.channel_id.clone(),
        used_artifacts: used.to_vec(),
        memory_refs: memory.to_vec(),
        expected_tool_calls: expected_tool_calls.to_vec(),
        outcome: if error.is_some() { "error" } else { "success" },
        error: error.map(|e| RecordError {
            code: e.code(),
            message: e.to_string(),
        }),
        composed_at: req.now.clone(),
        request: None,
        prompt_hash: None,
        parameters: None,
    }
}

/// What an invocation record reads from a request (owned: a request that fails part way
/// still names its thread and skill).
#[derive(Debug, Clone)]
pub struct RecordInput {
    /// Thread.
    pub thread_id: String,
    /// Turn.
    pub turn_id: Option<String>,
    /// `(id, name, version)` of the skill.
    pub skill: SkillIdentity,
    /// Invocation source (wire name).
    pub source: String,
    /// Purpose (wire name).
    pub purpose: String,
    /// Channel.
    pub channel_id: Option<String>,
    /// Host time.
    pub now: Option<String>,
}

impl RecordInput {
    /// From a parsed request.
    pub fn of(req: &ComposeRequest) -> Self {
        RecordInput {
            thread_id: req.thread_id.clone(),
            turn_id: req.turn_id.clone(),
            skill: (
                req.skill.id.clone(),
                req.skill.name.clone(),
                req.skill.version.clone(),
            ),
            source: req.invocation_source.name().to_owned(),
            purpose: req.purpose.name().to_owned(),
            channel_id: req.channel_id.clone(),
            now: req.now.clone(),
        }
    }

    /// From the request's fields (without the package) and the package's identity, when
    /// they name a thread and a skill.
    pub fn from_fields(v: &Map<String, Value>, skill: Option<SkillIdentity>) -> Option<Self> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(RecordInput {
            thread_id: s("thread_id")?,
            turn_id: s("turn_id"),
            skill: skill?,
            source: s("invocation_source").unwrap_or_else(|| "explicit".into()),
            purpose: s("purpose").unwrap_or_else(|| "application".into()),
            channel_id: s("channel_id"),
            now: s("now"),
        })
    }
}
