//! Which artifacts a composition or a dispatch used, each named with a content hash (so a
//! replay can tell whether it changed).

use crate::json_text::JsonText;
use crate::skill::SkillArtifact;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One artifact the composition read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UsedArtifact {
    /// Artifact id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Kind (wire name).
    #[cfg_attr(feature = "ts", ts(type = "ArtifactKind"))]
    pub kind: &'static str,
    /// Model variant (none: the default).
    pub model_variant: Option<String>,
    /// What the composition used it for (`framing`, `description`, `example`, `approach`).
    #[cfg_attr(
        feature = "ts",
        ts(type = "'framing' | 'description' | 'example' | 'approach' | 'dispatch'")
    )]
    pub role: &'static str,
    /// `sha256-<hex>` of the kind, name, variant, content, metadata and state.
    pub content_hash: String,
    /// The artifact's `updated_at` (none when the package carries no timestamps).
    pub updated_at: Option<String>,
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
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
    h.update(Value::Object(a.metadata.clone()).json_text().as_bytes());
    h.update([0]);
    h.update(a.state_blob.as_deref().unwrap_or("").as_bytes());
    format!("sha256-{}", hex(&h.finalize()))
}

impl UsedArtifact {
    /// The use of `a` in `role`.
    pub fn of(a: &SkillArtifact, role: &'static str) -> Self {
        Self::with_hash(a, role, content_hash(a))
    }

    /// The use of `a` in `role`, its [`content_hash`] already known.
    pub fn with_hash(a: &SkillArtifact, role: &'static str, content_hash: String) -> Self {
        UsedArtifact {
            id: a.id.clone(),
            name: a.name.clone(),
            kind: a.kind.name(),
            model_variant: a.model_variant.clone(),
            role,
            content_hash,
            updated_at: Some(a.updated_at.clone()).filter(|u| !u.is_empty()),
        }
    }

    /// The JSON form.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
