//! The skill model: one [`Skill`] (a row of the seed's `skills` table plus a `metadata`
//! object for the composer's contract) and its [`SkillArtifact`]s (rows of
//! `skill_artifacts`). JSON field names are the seed's column names.

use crate::json_text::JsonText;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// What an artifact is; the composer and the dispatcher select handlers by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArtifactKind {
    /// What the skill does and when to use it (context injection, `include_when`).
    Description,
    /// A MiniJinja template rendered with the invocation's parameters.
    PromptTemplate,
    /// A MiniJinja-templated script for a host sandbox executor.
    CodeTemplate,
    /// A reference to a host-shipped DSPy template (`template_id`) plus its state.
    DspyModule,
    /// Strategy or methodology guidance; may declare ordered stages and tool subsets.
    Approach,
    /// A worked input/output example for few-shot prompting; may carry tags.
    Example,
}

impl ArtifactKind {
    /// Every kind, in a fixed order.
    pub const ALL: [ArtifactKind; 6] = [
        ArtifactKind::Description,
        ArtifactKind::PromptTemplate,
        ArtifactKind::CodeTemplate,
        ArtifactKind::DspyModule,
        ArtifactKind::Approach,
        ArtifactKind::Example,
    ];

    /// The wire name (`prompt_template`, …).
    pub fn name(self) -> &'static str {
        match self {
            ArtifactKind::Description => "description",
            ArtifactKind::PromptTemplate => "prompt_template",
            ArtifactKind::CodeTemplate => "code_template",
            ArtifactKind::DspyModule => "dspy_module",
            ArtifactKind::Approach => "approach",
            ArtifactKind::Example => "example",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<ArtifactKind> {
        ArtifactKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Where a skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Source {
    /// Shipped with the product (seed data, refreshed from the marketplace).
    System,
    /// From the marketplace.
    Community,
    /// Written or imported by the user.
    #[default]
    User,
}

impl Source {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Source::System => "system",
            Source::Community => "community",
            Source::User => "user",
        }
    }

    /// The source named `name`.
    pub fn parse(name: &str) -> Option<Source> {
        [Source::System, Source::Community, Source::User]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// One artifact of a skill (a `skill_artifacts` row).
#[derive(Debug, Clone, PartialEq)]
pub struct SkillArtifact {
    /// Artifact id (derived from the skill id, name and variant when a package has none).
    pub id: String,
    /// The owning skill.
    pub skill_id: String,
    /// The kind.
    pub kind: ArtifactKind,
    /// Human-readable name; unique per skill together with `model_variant`.
    pub name: String,
    /// Display / execution order.
    pub ordinal: i64,
    /// The content (template, code, prose, or the `dspy_module` JSON).
    pub content: String,
    /// `None` (or `"default"`) is the default variant; else a model family key.
    pub model_variant: Option<String>,
    /// Kind-specific configuration (`include_when`, `tags`, `fallback_artifact`,
    /// `assertions`, `stages`, …); unknown keys are kept.
    pub metadata: Map<String, Value>,
    /// Serialized module state (`dspy_module`), as text (base64 or JSON).
    pub state_blob: Option<String>,
    /// Creation time (ISO 8601, from the host).
    pub created_at: String,
    /// Last update time (ISO 8601, from the host).
    pub updated_at: String,
}

impl SkillArtifact {
    /// The artifact as its JSON row / wire object.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("id".into(), self.id.clone().into());
        o.insert("skill_id".into(), self.skill_id.clone().into());
        o.insert("kind".into(), self.kind.name().into());
        o.insert("name".into(), self.name.clone().into());
        o.insert("ordinal".into(), self.ordinal.into());
        o.insert("content".into(), self.content.clone().into());
        o.insert(
            "model_variant".into(),
            self.model_variant
                .clone()
                .map_or(Value::Null, Value::String),
        );
        o.insert("metadata".into(), Value::Object(self.metadata.clone()));
        o.insert(
            "state_blob".into(),
            self.state_blob.clone().map_or(Value::Null, Value::String),
        );
        o.insert("created_at".into(), self.created_at.clone().into());
        o.insert("updated_at".into(), self.updated_at.clone().into());
        Value::Object(o)
    }

    /// The reference kept in the skill row (no content).
    pub fn to_ref(&self) -> ArtifactRef {
        ArtifactRef {
            id: self.id.clone(),
            kind: self.kind,
            name: self.name.clone(),
            ordinal: self.ordinal,
            model_variant: self.model_variant.clone(),
            fallback: if self.kind == ArtifactKind::DspyModule {
                self.metadata
                    .get("fallback_artifact")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            } else {
                None
            },
        }
    }

    /// Whether this is the default variant (`model_variant` absent or `"default"`).
    pub fn is_default_variant(&self) -> bool {
        self.model_variant.as_deref().is_none_or(|v| v == "default")
    }

    /// The `(name, variant)` uniqueness key (`None` and `"default"` are the same variant).
    pub fn unique_key(&self) -> (String, String) {
        let v = if self.is_default_variant() {
            String::new()
        } else {
            self.model_variant.clone().unwrap_or_default()
        };
        (self.name.clone(), v)
    }
}

/// Sorts artifacts into their display / execution order: by ordinal, then name, then id
/// (ids are unique, so the order is total and the same on every run).
pub fn sort_artifacts(artifacts: &mut [SkillArtifact]) {
    crate::sort::sort_by(artifacts, |a, b| {
        (a.ordinal, &a.name, &a.id).cmp(&(b.ordinal, &b.name, &b.id))
    });
}

/// Sorts summaries by name (then id).
pub fn sort_summaries(list: &mut [SkillSummary]) {
    crate::sort::sort_by(list, |a, b| {
        listing_order((a.name(), a.id()), (b.name(), b.id()))
    });
}

/// The order skills are listed in: by name, then by id, each in code point order (the JS
/// glue asks it through `summaryOrder`: JS compares strings by UTF-16 code units).
pub fn listing_order(a: (&str, &str), b: (&str, &str)) -> std::cmp::Ordering {
    a.cmp(&b)
}

/// An artifact without its content: what listings and phase 1 see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRef {
    /// Artifact id.
    pub id: String,
    /// Kind.
    pub kind: ArtifactKind,
    /// Name.
    pub name: String,
    /// Ordinal.
    pub ordinal: i64,
    /// Model variant.
    pub model_variant: Option<String>,
    /// A `dspy_module`'s `fallback_artifact` (kept so the reference stays checked).
    pub fallback: Option<String>,
}

impl ArtifactRef {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("id".into(), self.id.clone().into());
        o.insert("kind".into(), self.kind.name().into());
        o.insert("name".into(), self.name.clone().into());
        o.insert("ordinal".into(), self.ordinal.into());
        o.insert(
            "model_variant".into(),
            self.model_variant
                .clone()
                .map_or(Value::Null, Value::String),
        );
        if let Some(f) = &self.fallback {
            o.insert("fallback".into(), f.clone().into());
        }
        Value::Object(o)
    }
}

/// A skill package: the `skills` row and its artifacts.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// Skill id (derived from the name when a package has none).
    pub id: String,
    /// Human-readable identifier, unique per scope.
    pub name: String,
    /// Short description for catalog display.
    pub description: String,
    /// Semantic version (default `1.0.0`).
    pub version: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Where it came from.
    pub source: Source,
    /// Author display name.
    pub author: Option<String>,
    /// Creation time (ISO 8601, from the host).
    pub created_at: String,
    /// Last update time (ISO 8601, from the host).
    pub updated_at: String,
    /// Phase-1 intent patterns.
    pub intent_patterns: Vec<String>,
    /// Phase-1 trigger phrases (an exact hit ranks first).
    pub trigger_phrases: Vec<String>,
    /// Marketplace id (`None` for local-only skills).
    pub marketplace_id: Option<String>,
    /// ETag of the marketplace version last synced.
    pub sync_etag: Option<String>,
    /// The composer's contract and format extras: `framing`, `parameters`, `tool_surface`,
    /// `requires_tools`, `interrupts`, `output_schema`, `max_tool_calls`,
    /// `planner_delegates_shape`, `model_preference`, `license`, `compatibility`, `labels`,
    /// `frontmatter`; unknown keys are kept.
    pub metadata: Map<String, Value>,
    /// The artifacts, in ordinal order.
    pub artifacts: Vec<SkillArtifact>,
}

impl Skill {
    /// The metadata columns as JSON (no artifacts).
    fn head(&self) -> Map<String, Value> {
        let strings = |v: &[String]| Value::Array(v.iter().cloned().map(Value::String).collect());
        let opt = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
        let mut o = Map::new();
        o.insert("id".into(), self.id.clone().into());
        o.insert("name".into(), self.name.clone().into());
        o.insert("description".into(), self.description.clone().into());
        o.insert("version".into(), self.version.clone().into());
        o.insert("tags".into(), strings(&self.tags));
        o.insert("source".into(), self.source.name().into());
        o.insert("author".into(), opt(&self.author));
        o.insert("created_at".into(), self.created_at.clone().into());
        o.insert("updated_at".into(), self.updated_at.clone().into());
        o.insert("intent_patterns".into(), strings(&self.intent_patterns));
        o.insert("trigger_phrases".into(), strings(&self.trigger_phrases));
        o.insert("marketplace_id".into(), opt(&self.marketplace_id));
        o.insert("sync_etag".into(), opt(&self.sync_etag));
        o.insert("metadata".into(), Value::Object(self.metadata.clone()));
        o
    }

    /// The whole package as JSON (the import format: metadata plus `artifacts`).
    pub fn to_value(&self) -> Value {
        let mut o = self.head();
        o.insert(
            "artifacts".into(),
            Value::Array(self.artifacts.iter().map(SkillArtifact::to_value).collect()),
        );
        Value::Object(o)
    }

    /// The summary (metadata plus artifact references, no content).
    pub fn summary(&self) -> SkillSummary {
        let mut refs: Vec<ArtifactRef> = self.artifacts.iter().map(|a| a.to_ref()).collect();
        crate::sort::sort_by(&mut refs, |a, b| {
            (a.ordinal, &a.name, &a.id).cmp(&(b.ordinal, &b.name, &b.id))
        });
        SkillSummary {
            head: self.head(),
            artifacts: refs,
        }
    }

    /// The artifacts of `kind`, in ordinal order.
    pub fn artifacts_of(&self, kind: ArtifactKind) -> impl Iterator<Item = &SkillArtifact> {
        self.artifacts.iter().filter(move |a| a.kind == kind)
    }

    /// Whether the skill may be matched and composed: `metadata.enabled` is not `false`.
    pub fn enabled(&self) -> bool {
        enabled(self.metadata.get("enabled"))
    }

    /// A `metadata` string field.
    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    /// The declared tool surface (`metadata.tool_surface`), empty when absent.
    pub fn tool_surface(&self) -> Vec<&str> {
        self.declared_tool_surface().unwrap_or_default()
    }

    /// The tool surface as declared: `None` when the skill declares none (no narrowing: the
    /// caller's capabilities alone decide), `Some(empty)` when it declares that it uses no
    /// tools. One meaning at the top level and for a nested sub-skill.
    pub fn declared_tool_surface(&self) -> Option<Vec<&str>> {
        self.metadata
            .get("tool_surface")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
    }
}

/// What a listing returns: the skill's metadata and its artifact references.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillSummary {
    head: Map<String, Value>,
    /// Artifact references, by ordinal.
    pub artifacts: Vec<ArtifactRef>,
}

impl SkillSummary {
    /// A summary from its parts (the store's row reader).
    pub(crate) fn from_parts(head: Map<String, Value>, artifacts: Vec<ArtifactRef>) -> Self {
        SkillSummary { head, artifacts }
    }

    /// The metadata columns (no artifact references).
    pub fn head(&self) -> &Map<String, Value> {
        &self.head
    }

    /// A metadata string field (`id`, `name`, `description`, `source`, …).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.head.get(key).and_then(Value::as_str)
    }

    /// A metadata array of strings (`tags`, `intent_patterns`, `trigger_phrases`).
    pub fn get_strings(&self, key: &str) -> Vec<&str> {
        self.head
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// Whether the skill may be matched and composed: `metadata.enabled` is not `false`.
    pub fn enabled(&self) -> bool {
        enabled(self.head.get("metadata").and_then(|m| m.get("enabled")))
    }

    /// The id.
    pub fn id(&self) -> &str {
        self.get_str("id").unwrap_or("")
    }

    /// The name.
    pub fn name(&self) -> &str {
        self.get_str("name").unwrap_or("")
    }

    /// The summary as JSON (the skill row: metadata plus `artifacts` references).
    pub fn to_value(&self) -> Value {
        let mut o = self.head.clone();
        o.insert(
            "artifacts".into(),
            Value::Array(self.artifacts.iter().map(ArtifactRef::to_value).collect()),
        );
        Value::Object(o)
    }
}

fn hex16(bytes: &[u8]) -> String {
    hex(bytes, &[4, 6, 8, 10])
}

/// The first 16 bytes of the SHA-256 of `bytes` in hex, a `-` before the bytes at `dashes`.
fn hex(bytes: &[u8], dashes: &[usize]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(36);
    for (i, b) in digest.iter().take(16).enumerate() {
        if dashes.contains(&i) {
            s.push('-');
        }
        s.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        s.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
    }
    s
}

/// A package's content ETag (`"sha256-…"`, quoted as HTTP has them): a hash of its JSON
/// text, for a marketplace entry without an `etag` and for a seeded system skill.
pub fn content_etag(package: &Value) -> String {
    format!("\"sha256-{}\"", hex(package.json_text().as_bytes(), &[]))
}

/// The id of a skill that arrived without one: UUID-shaped, derived from its name, so the
/// same package imported twice gets the same id.
pub fn skill_id(name: &str) -> String {
    hex16(format!("promptloom-skill\0{name}").as_bytes())
}

/// The id of an artifact that arrived without one, derived from its uniqueness key.
pub fn artifact_id(skill_id: &str, name: &str, variant: Option<&str>) -> String {
    let v = variant.filter(|v| *v != "default").unwrap_or("");
    hex16(format!("promptloom-artifact\0{skill_id}\0{name}\0{v}").as_bytes())
}

/// The rule for `metadata.enabled`: a skill is enabled unless the field is exactly `false`
/// (absent, `true` or any other value: enabled). A disabled skill is never matched by the
/// phase-1 index nor composed, and `list_skills` filters on the same rule.
pub fn enabled(field: Option<&Value>) -> bool {
    field != Some(&Value::Bool(false))
}

/// The artifacts a whole-skill run executes, in order: every artifact of a kind that runs
/// (`description`, `prompt_template`, `code_template`, `dspy_module`) by ordinal, each name
/// once (model variants share a name: `dispatch::pick` chooses among them), without the prompt
/// templates that only stand in as a `dspy_module`'s fallback.
pub fn run_order(refs: &[ArtifactRef]) -> Vec<String> {
    let mut list: Vec<&ArtifactRef> = refs.iter().collect();
    crate::sort::sort_by_key(&mut list, |a| a.ordinal);
    let fallbacks: Vec<&str> = list.iter().filter_map(|a| a.fallback.as_deref()).collect();
    let mut names: Vec<String> = Vec::new();
    for a in list {
        let runs = matches!(
            a.kind,
            ArtifactKind::Description
                | ArtifactKind::PromptTemplate
                | ArtifactKind::CodeTemplate
                | ArtifactKind::DspyModule
        );
        if !runs || (a.kind == ArtifactKind::PromptTemplate && fallbacks.contains(&a.name.as_str()))
        {
            continue;
        }
        if !names.contains(&a.name) {
            names.push(a.name.clone());
        }
    }
    names
}

/// Which skills a listing keeps (`list({ source, tags, enabled })`, the `list_skills`
/// authoring tool, WIT `skill-store.list-filtered`): every given field must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListFilter {
    /// The skill's `source` (`system`, `community`, `user`).
    pub source: Option<String>,
    /// Tags the skill must all carry.
    pub tags: Vec<String>,
    /// Only enabled (`true`) or disabled (`false`) skills, by [`enabled`]'s rule.
    pub enabled: Option<bool>,
}

impl ListFilter {
    /// Reads `{ source?, tags?, enabled? }` (`null` fields are absent); a field of the wrong
    /// type or an unknown field is `InvalidOptions` naming it.
    pub fn from_value(v: &Value) -> crate::error::Result<ListFilter> {
        use crate::error::{Error, ErrorKind};
        let bad = |k: &str, what: &str| {
            Error::new(ErrorKind::InvalidOptions, format!("`{k}` must be {what}")).at(k)
        };
        let mut f = ListFilter::default();
        let Some(o) = v.as_object() else {
            return match v {
                Value::Null => Ok(f),
                _ => Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "a skill filter is an object { source?, tags?, enabled? }",
                )),
            };
        };
        for (k, x) in o {
            match (k.as_str(), x) {
                (_, Value::Null) => {}
                ("source", Value::String(s)) => f.source = Some(s.clone()),
                ("source", _) => return Err(bad(k, "a string")),
                ("tags", Value::Array(a)) if a.iter().all(Value::is_string) => {
                    f.tags = a
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect();
                }
                ("tags", _) => return Err(bad(k, "an array of strings")),
                ("enabled", Value::Bool(b)) => f.enabled = Some(*b),
                ("enabled", _) => return Err(bad(k, "a boolean")),
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOptions,
                        format!("unknown filter field `{k}` (source, tags, enabled)"),
                    )
                    .at(k.as_str()))
                }
            }
        }
        Ok(f)
    }

    /// Reads a filter from JSON text (see [`ListFilter::from_value`]).
    pub fn from_text(text: &str) -> crate::error::Result<ListFilter> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            crate::error::Error::new(
                crate::error::ErrorKind::InvalidOptions,
                format!("the filter is not JSON: {e}"),
            )
        })?;
        ListFilter::from_value(&v)
    }

    /// Whether `s` passes.
    pub fn keeps(&self, s: &SkillSummary) -> bool {
        self.source
            .as_deref()
            .is_none_or(|x| s.get_str("source") == Some(x))
            && {
                let have = s.get_strings("tags");
                self.tags.iter().all(|t| have.contains(&t.as_str()))
            }
            && self.enabled.is_none_or(|e| e == s.enabled())
    }
}
