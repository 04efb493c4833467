//! The JSON forms the faces exchange (JS and WIT take and return the same JSON text), so
//! each face only converts its own types.

use super::read::read_artifact;
use super::validate::Problems;
use super::{
    export_skill_md, import_package, import_skill_md, select_variant, validate_skill, BundledFile,
    Problem,
};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use serde_json::{Map, Value};

fn problems(p: &[Problem]) -> Value {
    Value::Array(p.iter().map(Problem::to_value).collect())
}

/// `{ valid, problems }` of a package given as JSON text.
pub fn validate_json(package: &str) -> Result<String> {
    let v: Value = serde_json::from_str(package)
        .map_err(|e| Error::json(ErrorKind::InvalidSkill, "the skill package", &e))?;
    Ok(validate_skill(&v).to_value().json_text())
}

/// `{ skill, warnings }` of a package given as JSON text.
pub fn import_package_json(package: &str, now: &str) -> Result<String> {
    let (s, warnings) = import_package(package, now)?;
    let mut o = Map::new();
    o.insert("skill".into(), s.to_value());
    o.insert("warnings".into(), problems(&warnings));
    Ok(Value::Object(o).json_text())
}

/// `{ skill, problems }` of a `SKILL.md`.
pub fn import_skill_md_json(
    text: &str,
    files: &[BundledFile],
    dir: Option<&str>,
    now: &str,
) -> Result<String> {
    let r = import_skill_md(text, files, dir, now)?;
    let mut o = Map::new();
    o.insert("skill".into(), r.skill.to_value());
    o.insert("problems".into(), problems(&r.problems));
    Ok(Value::Object(o).json_text())
}

/// Bundled files from their JSON form `[{ path, content, base64? }]`.
pub fn files_from_json(files: &str) -> Result<Vec<BundledFile>> {
    let v: Value = serde_json::from_str(files)
        .map_err(|e| Error::json(ErrorKind::InvalidOptions, "the bundled files", &e))?;
    let Value::Array(list) = v else {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            "the bundled files are an array",
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        let (Some(path), Some(content)) = (
            f.get("path").and_then(Value::as_str),
            f.get("content").and_then(Value::as_str),
        ) else {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "a bundled file is `{ path, content, base64? }`",
            )
            .at(format!("files[{i}]")));
        };
        out.push(BundledFile {
            path: path.to_owned(),
            content: content.to_owned(),
            base64: f.get("base64").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    Ok(out)
}

/// The JSON form of one bundled file.
pub fn file_to_value(f: &BundledFile) -> Value {
    let mut o = Map::new();
    o.insert("path".into(), f.path.clone().into());
    o.insert("content".into(), f.content.clone().into());
    o.insert("base64".into(), f.base64.into());
    Value::Object(o)
}

/// `{ text, files, dropped }` of a skill given as JSON text.
pub fn export_skill_md_json(skill: &str) -> Result<String> {
    let (s, _) = import_package(skill, "")?;
    let out = export_skill_md(&s);
    let mut o = Map::new();
    o.insert("text".into(), out.text.into());
    o.insert(
        "files".into(),
        Value::Array(out.files.iter().map(file_to_value).collect()),
    );
    o.insert("dropped".into(), problems(&out.dropped));
    Ok(Value::Object(o).json_text())
}

/// The index of the variant to use for `model` among artifacts given as a JSON array (see
/// [`select_variant`]); `None` for an empty array. Malformed artifacts are `InvalidSkill`
/// listing their problems.
pub fn select_variant_json(artifacts: &str, model: &str) -> Result<Option<usize>> {
    let v: Value = serde_json::from_str(artifacts)
        .map_err(|e| Error::json(ErrorKind::InvalidSkill, "the artifacts", &e))?;
    let Value::Array(list) = v else {
        return Err(Error::new(
            ErrorKind::InvalidSkill,
            "expected an array of artifacts",
        ));
    };
    let mut out = Problems::default();
    let mut arts = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let owner = a.get("skill_id").and_then(Value::as_str).unwrap_or("skill");
        if let Some(art) = read_artifact(a, &format!("[{i}]"), owner, 0, "", &mut out) {
            arts.push(art);
        }
    }
    if out.has_errors() || arts.len() != list.len() {
        return Err(out.into_error("the artifacts are not valid"));
    }
    let chosen = select_variant(arts.iter(), model);
    Ok(chosen.and_then(|c| arts.iter().position(|a| std::ptr::eq(a, c))))
}
