//! Reading a skill package from JSON: typed fields out of each object, with a problem and
//! its path for each wrong one; the rules of [`super::checks`] run after the shape.

use super::checks::{check_id, check_skill_into, join};
use super::model::{artifact_id, skill_id, ArtifactKind, Skill, SkillArtifact, Source};
use crate::problems::Problems;
use serde_json::{Map, Value};

/// Reads typed fields out of one object, recording a problem for each wrong one.
struct Obj<'a> {
    o: &'a Map<String, Value>,
    path: String,
    seen: Vec<&'static str>,
}

impl<'a> Obj<'a> {
    fn new(o: &'a Map<String, Value>, path: &str) -> Self {
        Obj {
            o,
            path: path.to_owned(),
            seen: Vec::new(),
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.seen.push(key);
        self.o.get(key).filter(|v| !v.is_null())
    }

    fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }

    fn string(&mut self, key: &'static str, required: bool, out: &mut Problems) -> Option<String> {
        match self.get(key) {
            None => {
                if required {
                    out.error(
                        &self.at(key),
                        "missing-field",
                        format!("missing required field `{key}`"),
                    );
                }
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                out.error(
                    &self.at(key),
                    "wrong-type",
                    format!("`{key}` must be a string"),
                );
                None
            }
        }
    }

    fn strings(&mut self, key: &'static str, out: &mut Problems) -> Vec<String> {
        match self.get(key) {
            None => Vec::new(),
            Some(Value::Array(a)) => {
                let mut v = Vec::with_capacity(a.len());
                for (i, s) in a.iter().enumerate() {
                    let at = format!("{}[{i}]", self.at(key));
                    match s.as_str() {
                        Some(s) if !s.trim().is_empty() => {
                            if v.iter().any(|x: &String| x == s) {
                                out.warning(
                                    &at,
                                    "duplicate-entry",
                                    format!("`{s}` is listed twice"),
                                );
                            } else {
                                v.push(s.to_owned());
                            }
                        }
                        Some(_) => out.error(&at, "empty-string", "entries must not be empty"),
                        None => out.error(&at, "wrong-type", "entries must be strings"),
                    }
                }
                v
            }
            Some(_) => {
                out.error(
                    &self.at(key),
                    "wrong-type",
                    format!("`{key}` must be an array of strings"),
                );
                Vec::new()
            }
        }
    }

    fn object(&mut self, key: &'static str, out: &mut Problems) -> Map<String, Value> {
        match self.get(key) {
            None => Map::new(),
            Some(Value::Object(o)) => o.clone(),
            Some(_) => {
                out.error(
                    &self.at(key),
                    "wrong-type",
                    format!("`{key}` must be an object"),
                );
                Map::new()
            }
        }
    }

    /// Warns about keys no reader took.
    fn unknown(&self, out: &mut Problems, what: &str) {
        for k in self.o.keys() {
            if !self.seen.contains(&k.as_str()) {
                out.warning(
                    &self.at(k),
                    "unknown-field",
                    format!("`{k}` is not a field of {what}; it is ignored"),
                );
            }
        }
    }
}

/// Reads one artifact object at `path` for the skill `skill_id`.
pub(crate) fn read_artifact(
    v: &Value,
    path: &str,
    skill: &str,
    default_ordinal: i64,
    now: &str,
    out: &mut Problems,
) -> Option<SkillArtifact> {
    let Some(o) = v.as_object() else {
        out.error(path, "wrong-type", "an artifact must be an object");
        return None;
    };
    let mut f = Obj::new(o, path);
    let kind_name = f.string("kind", true, out);
    let kind = kind_name.as_deref().and_then(|k| {
        let kind = ArtifactKind::parse(k);
        if kind.is_none() {
            out.error(
                &f.at("kind"),
                "unknown-kind",
                format!(
                    "unknown artifact kind `{k}` (one of {})",
                    ArtifactKind::ALL.map(ArtifactKind::name).join(", ")
                ),
            );
        }
        kind
    });
    let name = f.string("name", true, out);
    if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        out.error(&f.at("name"), "empty-string", "`name` must not be empty");
    }
    let content = f.string("content", true, out);
    let ordinal = match f.get("ordinal") {
        None => default_ordinal,
        Some(n) => n.as_i64().unwrap_or_else(|| {
            out.error(
                &f.at("ordinal"),
                "wrong-type",
                "`ordinal` must be an integer",
            );
            default_ordinal
        }),
    };
    let model_variant = f.string("model_variant", false, out);
    if model_variant
        .as_deref()
        .is_some_and(|v| v.trim().is_empty())
    {
        out.error(
            &f.at("model_variant"),
            "empty-string",
            "`model_variant` must be a family key or null",
        );
    }
    let metadata = f.object("metadata", out);
    let state_blob = f.string("state_blob", false, out);
    let id = f.string("id", false, out);
    if let Some(id) = &id {
        check_id(id, &f.at("id"), out);
    }
    if let Some(owner) = f.string("skill_id", false, out) {
        if owner != skill {
            out.error(
                &f.at("skill_id"),
                "wrong-skill",
                format!("the artifact belongs to skill `{owner}`, not `{skill}`"),
            );
        }
    }
    let created_at = f.string("created_at", false, out);
    let updated_at = f.string("updated_at", false, out);
    f.unknown(out, "an artifact");
    let (kind, name, content) = (kind?, name?, content?);
    let id = id.unwrap_or_else(|| artifact_id(skill, &name, model_variant.as_deref()));
    Some(SkillArtifact {
        id,
        skill_id: skill.to_owned(),
        kind,
        name,
        ordinal,
        content,
        model_variant,
        metadata,
        state_blob,
        created_at: created_at.clone().unwrap_or_else(|| now.to_owned()),
        updated_at: updated_at.or(created_at).unwrap_or_else(|| now.to_owned()),
    })
}

/// Reads a package object (the seed's JSON form). Returns the skill when its required fields
/// are there, and every problem of the shape (the rules of [`check_skill`] are applied too).
pub(crate) fn read_skill(v: &Value, now: &str, check: bool, out: &mut Problems) -> Option<Skill> {
    let rules = if check { Rules::All } else { Rules::ShapeOnly };
    read_skill_with(v, now, rules, out)
}

/// Which rules a read applies beyond the package's shape.
#[derive(Debug, Clone, Copy)]
enum Rules<'a> {
    /// The shape only (rows the store wrote, already checked).
    ShapeOnly,
    /// Every rule of [`check_skill`].
    All,
    /// Every rule except the syntax check of the template with this name (the composer
    /// parses that one when it renders it).
    #[cfg_attr(not(feature = "composer"), allow(dead_code))]
    AllBut(&'a str),
}

#[cfg(feature = "composer")]
/// [`read_skill`] for the composer: every rule runs except the syntax check of the template
/// named `skip` (the composer parses that one when it renders it).
pub(crate) fn read_skill_except(
    v: &Value,
    skip: Option<&str>,
    out: &mut Problems,
) -> Option<Skill> {
    let rules = match skip {
        Some(name) => Rules::AllBut(name),
        None => Rules::All,
    };
    read_skill_with(v, "", rules, out)
}

fn read_skill_with(v: &Value, now: &str, rules: Rules<'_>, out: &mut Problems) -> Option<Skill> {
    let Some(o) = v.as_object() else {
        out.error("", "wrong-type", "a skill package must be a JSON object");
        return None;
    };
    let mut f = Obj::new(o, "");
    let name = f.string("name", true, out);
    let id = f.string("id", false, out);
    if let Some(id) = &id {
        check_id(id, "id", out);
    }
    let description = f.string("description", true, out);
    let version = f.string("version", false, out);
    let tags = f.strings("tags", out);
    let source = f.string("source", false, out).and_then(|s| {
        let parsed = Source::parse(&s);
        if parsed.is_none() {
            out.error(
                "source",
                "invalid-source",
                format!("`source` is `{s}`; it must be system, community or user"),
            );
        }
        parsed
    });
    let author = f.string("author", false, out);
    let created_at = f.string("created_at", false, out);
    let updated_at = f.string("updated_at", false, out);
    let intent_patterns = f.strings("intent_patterns", out);
    let trigger_phrases = f.strings("trigger_phrases", out);
    let marketplace_id = f.string("marketplace_id", false, out);
    let sync_etag = f.string("sync_etag", false, out);
    let metadata = f.object("metadata", out);
    let raw_artifacts = match f.get("artifacts") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(_) => {
            out.error("artifacts", "wrong-type", "`artifacts` must be an array");
            Vec::new()
        }
    };
    f.unknown(out, "a skill package");
    let required = name.is_some() && description.is_some();
    let name = name.unwrap_or_default();
    let id = id.unwrap_or_else(|| skill_id(&name));
    let total = raw_artifacts.len();
    let mut artifacts = Vec::with_capacity(total);
    let mut index = Vec::with_capacity(total);
    let mut unread: Vec<String> = Vec::new();
    for (i, a) in raw_artifacts.into_iter().enumerate() {
        let ordinal = i64::try_from(i).unwrap_or(i64::MAX);
        match read_artifact(a, &format!("artifacts[{i}]"), &id, ordinal, now, out) {
            Some(a) => {
                artifacts.push(a);
                index.push(i);
            }
            None => unread.push(
                a.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            ),
        }
    }
    let skill = Skill {
        id,
        name,
        description: description.unwrap_or_default(),
        version: version.unwrap_or_else(|| "1.0.0".into()),
        tags,
        source: source.unwrap_or_default(),
        author,
        created_at: created_at.clone().unwrap_or_else(|| now.to_owned()),
        updated_at: updated_at.or(created_at).unwrap_or_else(|| now.to_owned()),
        intent_patterns,
        trigger_phrases,
        marketplace_id,
        sync_etag,
        metadata,
        artifacts,
    };
    // Every rule runs even when a field is missing, so one pass lists every problem; a
    // reference to an artifact that could not be read is not reported again.
    match rules {
        Rules::ShapeOnly => {}
        Rules::All => check_skill_into(&skill, &unread, Some(&index), None, out),
        Rules::AllBut(skip) => check_skill_into(&skill, &unread, Some(&index), Some(skip), out),
    }
    required.then_some(skill)
}
