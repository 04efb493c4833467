//! Agent Skills `SKILL.md`: YAML frontmatter, a Markdown body, bundled resource files.
//!
//! Import maps the file onto the model:
//! - `name`, `description` → the skill's; `license`, `compatibility` → `metadata.license`,
//!   `metadata.compatibility`; the frontmatter `metadata` map → `metadata.labels` (its
//!   `version`, when a semantic version, also becomes the skill's version);
//!   `allowed-tools` → `metadata.tool_surface` (split on spaces outside parentheses, so
//!   `Bash(git add:*)` stays one tool);
//! - other keys (Claude Code's `argument-hint`, `model`, …) are not in the Agent Skills
//!   spec: they are reported and kept in `metadata.frontmatter`, so export writes them back;
//! - the body → an `approach` artifact named `SKILL.md`, which `metadata.framing` names;
//! - each bundled file → a `description` artifact named by its path, with
//!   `metadata.path` and `include_when: "never"` (loaded on request, never injected).
//!
//! Import is lenient where the Agent Skills client guide is: a name that breaks the naming
//! rules, an over-long description or compatibility, unknown keys are warnings; a missing
//! description, no frontmatter or YAML that does not parse (even after quoting values with
//! unquoted colons, the guide's retry) are errors.

use super::checks::{check_skill, is_semver};
use super::model::{artifact_id, skill_id, ArtifactKind, Skill, SkillArtifact, Source};
use super::validate::{Problem, Problems, Severity};
use super::yaml::{self, Node};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::words::{fold, is_word_char};
use serde_json::{Map, Value};

/// The name of the artifact that holds the body.
pub const BODY_ARTIFACT: &str = "SKILL.md";

/// The frontmatter keys of the Agent Skills specification.
const SPEC_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// A file bundled beside `SKILL.md` (`scripts/…`, `references/…`, `assets/…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundledFile {
    /// Path relative to the skill directory, with `/` separators.
    pub path: String,
    /// Text, or base64 when `base64` is set (binary files).
    pub content: String,
    /// Whether `content` is base64.
    pub base64: bool,
}

/// What [`import_skill_md`] returns: the skill and every problem found (warnings only; an
/// error fails the import).
#[derive(Debug, Clone, PartialEq)]
pub struct SkillMdImport {
    /// The imported skill.
    pub skill: Skill,
    /// Where the file breaks the Agent Skills spec without making it unusable.
    pub problems: Vec<Problem>,
}

/// What [`export_skill_md`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillMdExport {
    /// The `SKILL.md` text.
    pub text: String,
    /// The bundled files.
    pub files: Vec<BundledFile>,
    /// What the format cannot hold (artifacts other than the body and the files, tags,
    /// intent patterns, trigger phrases, composer metadata), one warning each.
    pub dropped: Vec<Problem>,
}

/// Splits `---\n yaml \n---\n body`; returns the YAML and the body.
fn split(text: &str) -> Result<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let fail = |m: &str| Error::new(ErrorKind::InvalidSkill, m.to_owned()).at("SKILL.md");
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    if first.trim_end() != "---" {
        return Err(fail(
            "SKILL.md must start with a `---` line opening the YAML frontmatter",
        ));
    }
    let mut at = 0usize;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = rest.get(..at).unwrap_or("");
            let body = rest.get(at + line.len()..).unwrap_or("");
            return Ok((yaml, body));
        }
        at += line.len();
    }
    Err(fail(
        "the frontmatter is not closed: no `---` line after the opening one",
    ))
}

/// The Agent Skills guide's retry: a `key: value` line whose value holds an unquoted
/// `: ` is quoted (and a tab after a key's colon, which the YAML parser refuses, becomes a
/// space).
fn quote_colons(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let tabbed = body.split_once(":\t").map(|(k, v)| format!("{k}: {v}"));
        let body_fixed = tabbed.as_deref().unwrap_or(body);
        let quoted = body_fixed.split_once(": ").and_then(|(k, v)| {
            let plain_key = !k.is_empty()
                && !k.starts_with([' ', '\t', '-', '#'])
                && k.chars().all(|c| is_word_char(c) || c == '-' || c == '_');
            let v = v.trim();
            let needs = v.contains(": ") || v.ends_with(':');
            let already = v.starts_with(['"', '\'', '[', '{', '|', '>']);
            (plain_key && needs && !already).then(|| {
                let esc = v.replace('\\', "\\\\").replace('"', "\\\"");
                format!("{k}: \"{esc}\"")
            })
        });
        match (quoted, tabbed.is_some()) {
            (Some(q), _) => out.push_str(&q),
            (None, true) => out.push_str(body_fixed),
            (None, false) => out.push_str(body),
        }
        out.push_str(&line[body.len()..]);
    }
    out
}

/// The frontmatter mapping; `true` when it parsed only after quoting colons.
fn parse_yaml(yaml: &str) -> Result<(Vec<(String, Node)>, bool)> {
    let first = yaml::parse(yaml);
    let retried = first.is_err();
    let doc = match first {
        Ok(d) => d,
        Err(e) => yaml::parse(&quote_colons(yaml)).map_err(|_| {
            // Line 1 of the YAML is line 2 of the file.
            Error::new(
                ErrorKind::InvalidSkill,
                format!(
                    "the frontmatter is not valid YAML (SKILL.md line {}, column {}): {}",
                    e.marker().line() + 1,
                    e.marker().col() + 1,
                    e.info()
                ),
            )
            .at("SKILL.md")
            .with("line", e.marker().line() + 1)
        })?,
    };
    match doc {
        Node::Map(m) => Ok((m, retried)),
        Node::Null => Ok((Vec::new(), retried)),
        _ => Err(Error::new(
            ErrorKind::InvalidSkill,
            "the frontmatter must be a YAML mapping of keys to values",
        )
        .at("SKILL.md")),
    }
}

/// Whether `s` is standard base64 (padded; line breaks allowed, as MIME writes it).
fn is_base64(s: &str) -> bool {
    use base64::Engine;
    let compact: String = s.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .is_ok()
}

/// Splits `allowed-tools` on whitespace and commas outside parentheses (the spec separates
/// tools with spaces; Claude Code files often use `Bash(git add:*), Read`).
fn split_tools(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if (c.is_whitespace() || c == ',') && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn check_name(name: &str, dir: Option<&str>, out: &mut Problems) {
    let n = name.chars().count();
    if n == 0 || n > 64 {
        out.warning(
            "name",
            "name-rule",
            "an Agent Skills name is 1–64 characters",
        );
    }
    if name
        .chars()
        .any(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    {
        let unicode_ok = name
            .chars()
            .all(|c| c == '-' || (is_word_char(c) && fold(c) == c));
        if unicode_ok {
            out.warning(
                "name",
                "name-rule",
                "the name has non-ASCII letters: the spec text allows a–z, 0–9 and `-` (some validators accept lowercase Unicode letters)",
            );
        } else {
            out.warning(
                "name",
                "name-rule",
                format!("`{name}` breaks the naming rule: lowercase letters, digits and `-` only"),
            );
        }
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        out.warning(
            "name",
            "name-rule",
            "a name must not start or end with `-` or contain `--`",
        );
    }
    if let Some(d) = dir {
        if d != name {
            out.warning(
                "name",
                "name-dir-mismatch",
                format!("the name `{name}` differs from its directory `{d}`"),
            );
        }
    }
}

fn check_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains(':')
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != ".." && s != ".")
}

/// Imports a `SKILL.md` (and the files bundled beside it). `dir` is the skill directory's
/// name when known (the spec wants it to equal `name`; without a `name` it supplies one);
/// `now` stamps the rows.
pub fn import_skill_md(
    text: &str,
    files: &[BundledFile],
    dir: Option<&str>,
    now: &str,
) -> Result<SkillMdImport> {
    let (yaml, body) = split(text)?;
    let (fm, retried) = parse_yaml(yaml)?;
    let mut out = Problems::default();
    if retried {
        out.warning(
            "SKILL.md",
            "unquoted-colon",
            "the frontmatter is not valid YAML as written (a value holds an unquoted `: `, or a tab follows a key's colon); it was read with that fixed",
        );
    }
    let get = |k: &str| fm.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let text_of = |y: Option<&Node>, key: &str, out: &mut Problems| -> Option<String> {
        match y {
            None | Some(Node::Null) => None,
            Some(y) => y.text().map(str::to_owned).or_else(|| {
                out.error(key, "wrong-type", format!("`{key}` must be a string"));
                None
            }),
        }
    };
    let name = match text_of(get("name"), "name", &mut out) {
        Some(n) => {
            check_name(&n, dir, &mut out);
            n
        }
        None => match dir {
            Some(d) => {
                out.warning(
                    "name",
                    "missing-field",
                    format!("no `name` in the frontmatter; the directory name `{d}` is used"),
                );
                d.to_owned()
            }
            None => {
                out.error("name", "missing-field", "the frontmatter has no `name`");
                String::new()
            }
        },
    };
    let description = text_of(get("description"), "description", &mut out).unwrap_or_default();
    if description.trim().is_empty() {
        out.error(
            "description",
            "missing-field",
            "the frontmatter has no `description` (clients skip such skills)",
        );
    } else {
        if description.chars().count() > 1024 {
            out.warning(
                "description",
                "too-long",
                "the description is longer than 1,024 characters (the Agent Skills limit)",
            );
        }
        if description.contains(['<', '>']) {
            out.warning(
                "description",
                "angle-brackets",
                "some validators reject `<` and `>` in descriptions (they read as XML tags)",
            );
        }
    }
    let mut metadata = Map::new();
    if let Some(l) = text_of(get("license"), "license", &mut out) {
        metadata.insert("license".into(), l.into());
    }
    if let Some(c) = text_of(get("compatibility"), "compatibility", &mut out) {
        metadata.insert("compatibility".into(), c.into());
    }
    let mut version = None;
    match get("metadata") {
        None | Some(Node::Null) => {}
        Some(Node::Map(h)) => {
            let mut labels = Map::new();
            for (key, v) in h {
                let key = key.clone();
                let text = v.text().map(str::to_owned).unwrap_or_else(|| {
                    out.warning(
                        &format!("metadata.{key}"),
                        "wrong-type",
                        "`metadata` maps strings to strings; this value is kept as JSON text",
                    );
                    v.to_json().json_text()
                });
                if v.is_typed_scalar() {
                    out.warning(
                        &format!("metadata.{key}"),
                        "coerced",
                        format!("`metadata.{key}` is not a string; it is read as \"{text}\""),
                    );
                }
                if key == "version" && is_semver(&text) {
                    version = Some(text.clone());
                }
                labels.insert(key, text.into());
            }
            metadata.insert("labels".into(), Value::Object(labels));
        }
        Some(_) => out.error(
            "metadata",
            "wrong-type",
            "`metadata` must be a mapping of strings to strings",
        ),
    }
    match get("allowed-tools") {
        None | Some(Node::Null) => {}
        Some(Node::Scalar { text, .. }) => {
            let tools = split_tools(text);
            metadata.insert(
                "tool_surface".into(),
                Value::Array(tools.into_iter().map(Value::String).collect()),
            );
        }
        Some(Node::Seq(a)) => {
            out.warning(
                "allowed-tools",
                "wrong-type",
                "the spec writes `allowed-tools` as one space-separated string; a list is accepted",
            );
            let tools: Vec<Value> = a
                .iter()
                .filter_map(Node::text)
                .map(|t| Value::String(t.to_owned()))
                .collect();
            metadata.insert("tool_surface".into(), Value::Array(tools));
        }
        Some(_) => out.error(
            "allowed-tools",
            "wrong-type",
            "`allowed-tools` must be a space-separated string",
        ),
    }
    let mut extra = Map::new();
    for (key, v) in &fm {
        let key = key.clone();
        if !SPEC_KEYS.contains(&key.as_str()) {
            out.warning(
                &key,
                "unknown-field",
                format!("`{key}` is not an Agent Skills frontmatter field; it is kept for export"),
            );
            extra.insert(key, v.to_json());
        }
    }
    if !extra.is_empty() {
        metadata.insert("frontmatter".into(), Value::Object(extra));
    }
    let id = skill_id(&name);
    let mut artifacts = Vec::new();
    if body.trim().is_empty() {
        out.warning(
            "body",
            "empty-body",
            "the body is empty: the skill has no instructions",
        );
    } else {
        if body.lines().count() > 500 {
            out.warning(
                "body",
                "long-body",
                "the body is over 500 lines; the spec suggests moving detail into references/",
            );
        }
        metadata.insert(
            "framing".into(),
            serde_json::json!({ "artifact": BODY_ARTIFACT }),
        );
        artifacts.push(artifact(
            &id,
            ArtifactKind::Approach,
            BODY_ARTIFACT,
            0,
            body,
            Map::new(),
            now,
        ));
    }
    for (i, f) in files.iter().enumerate() {
        if f.path == "SKILL.md" || f.path == "skill.md" {
            continue;
        }
        if !check_path(&f.path) {
            out.error(
                &format!("files[{i}].path"),
                "invalid-path",
                format!(
                    "`{}` is not a relative path inside the skill directory",
                    f.path
                ),
            );
            continue;
        }
        if f.base64 && !is_base64(&f.content) {
            out.error(
                &format!("files[{i}].content"),
                "invalid-base64",
                format!(
                    "`{}` is marked base64 but its content is not base64",
                    f.path
                ),
            );
            continue;
        }
        let mut m = Map::new();
        m.insert("path".into(), f.path.clone().into());
        m.insert("include_when".into(), "never".into());
        if f.base64 {
            m.insert("encoding".into(), "base64".into());
        }
        let ordinal = i64::try_from(i + 1).unwrap_or(i64::MAX);
        artifacts.push(artifact(
            &id,
            ArtifactKind::Description,
            &f.path,
            ordinal,
            &f.content,
            m,
            now,
        ));
    }
    let skill = Skill {
        id,
        name,
        description,
        version: version.unwrap_or_else(|| "1.0.0".into()),
        tags: Vec::new(),
        source: Source::User,
        author: None,
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
        intent_patterns: Vec::new(),
        trigger_phrases: Vec::new(),
        marketplace_id: None,
        sync_etag: None,
        metadata,
        artifacts,
    };
    // The model's own rules (names, duplicate paths…) on top of the format's, each path
    // reported once.
    for p in check_skill(&skill) {
        if !out.0.iter().any(|q| q.path == p.path) {
            out.0.push(p);
        }
    }
    if out.has_errors() {
        return Err(out.into_error("the SKILL.md cannot be imported"));
    }
    Ok(SkillMdImport {
        skill,
        problems: out.0,
    })
}

fn artifact(
    skill: &str,
    kind: ArtifactKind,
    name: &str,
    ordinal: i64,
    content: &str,
    metadata: Map<String, Value>,
    now: &str,
) -> SkillArtifact {
    SkillArtifact {
        id: artifact_id(skill, name, None),
        skill_id: skill.to_owned(),
        kind,
        name: name.to_owned(),
        ordinal,
        content: content.to_owned(),
        model_variant: None,
        metadata,
        state_blob: None,
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
    }
}

fn dropped(path: &str, message: String) -> Problem {
    Problem {
        path: path.to_owned(),
        code: "not-exported",
        message,
        severity: Severity::Warning,
    }
}

/// Writes a skill as `SKILL.md` plus its bundled files, and lists what the format cannot
/// hold. The body is the framing artifact (or the framing prose); files are the artifacts
/// with `metadata.path`.
pub fn export_skill_md(skill: &Skill) -> SkillMdExport {
    let m = &skill.metadata;
    let mut yaml = String::new();
    let mut entry = |k: &str, v: Value| yaml::write_entry(&mut yaml, 0, k, &v);
    entry("name", skill.name.clone().into());
    entry("description", skill.description.clone().into());
    for k in ["license", "compatibility"] {
        if let Some(v) = m.get(k).and_then(Value::as_str) {
            entry(k, v.into());
        }
    }
    let tools = skill.tool_surface();
    if !tools.is_empty() {
        entry("allowed-tools", tools.join(" ").into());
    }
    let mut labels = m
        .get("labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if skill.version != "1.0.0" && !labels.contains_key("version") {
        labels.insert("version".into(), skill.version.clone().into());
    }
    if !labels.is_empty() {
        entry("metadata", Value::Object(labels));
    }
    if let Some(extra) = m.get("frontmatter").and_then(Value::as_object) {
        for (k, v) in extra {
            if !SPEC_KEYS.contains(&k.as_str()) {
                entry(k, v.clone());
            }
        }
    }

    let framing = m.get("framing");
    let body_name = framing
        .and_then(|f| f.get("artifact"))
        .and_then(Value::as_str);
    let mut body = framing.and_then(Value::as_str).unwrap_or("").to_owned();
    let mut files = Vec::new();
    let mut lost = Vec::new();
    for (i, a) in skill.artifacts.iter().enumerate() {
        let at = format!("artifacts[{i}]");
        if Some(a.name.as_str()) == body_name
            && matches!(a.kind, ArtifactKind::Approach | ArtifactKind::Description)
        {
            body = a.content.clone();
        } else if let Some(p) = a.metadata.get("path").and_then(Value::as_str) {
            files.push(BundledFile {
                path: p.to_owned(),
                content: a.content.clone(),
                base64: a.metadata.get("encoding").and_then(Value::as_str) == Some("base64"),
            });
        } else {
            lost.push(dropped(
                &at,
                format!(
                    "the {} artifact `{}` has no place in SKILL.md",
                    a.kind.name(),
                    a.name
                ),
            ));
        }
    }
    for (k, v) in [
        ("tags", &skill.tags),
        ("intent_patterns", &skill.intent_patterns),
        ("trigger_phrases", &skill.trigger_phrases),
    ] {
        if !v.is_empty() {
            lost.push(dropped(k, format!("SKILL.md has no field for `{k}`")));
        }
    }
    for k in m.keys() {
        let kept = [
            "license",
            "compatibility",
            "labels",
            "tool_surface",
            "frontmatter",
            "framing",
        ];
        if !kept.contains(&k.as_str()) {
            lost.push(dropped(
                &format!("metadata.{k}"),
                format!("SKILL.md has no field for `metadata.{k}`"),
            ));
        }
    }
    if body_name.is_some() && body.is_empty() {
        lost.push(dropped(
            "metadata.framing",
            "the framing names a template artifact; SKILL.md bodies are plain Markdown".into(),
        ));
    }
    let mut text = String::with_capacity(yaml.len() + body.len() + 16);
    text.push_str("---\n");
    text.push_str(&yaml);
    text.push_str("---\n");
    text.push_str(&body);
    SkillMdExport {
        text,
        files,
        dropped: lost,
    }
}
