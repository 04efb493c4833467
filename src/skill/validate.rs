//! Importing and validating a skill package: the entry points. Validation never stops at
//! the first problem: it walks the whole package ([`super::read`]) and applies every rule
//! ([`super::checks`]), reporting every problem with its JSON path
//! (`artifacts[2].content`, `metadata.parameters.properties.x.type`). Errors make a package
//! unusable; warnings are kept beside an imported skill.

pub use super::checks::check_skill;
use super::model::Skill;
use super::read::read_skill;
use crate::error::{Error, ErrorKind, Result};
pub(crate) use crate::problems::Problems;
pub use crate::problems::{Problem, Severity, Validation};
use serde_json::Value;

/// Reads and validates a JSON skill package (the seed's import format). `now` stamps rows
/// that carry no timestamps. Returns the skill and its warnings; any error-severity
/// problem fails the import with `InvalidSkill`, whose `details.problems` lists them all.
pub fn import_package(json: &str, now: &str) -> Result<(Skill, Vec<Problem>)> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| Error::json(ErrorKind::InvalidSkill, "the skill package", &e))?;
    import_value(&v, now)
}

/// [`import_package`] for an already parsed value.
pub fn import_value(v: &Value, now: &str) -> Result<(Skill, Vec<Problem>)> {
    let mut out = Problems::default();
    let skill = read_skill(v, now, true, &mut out);
    match skill {
        Some(s) if !out.has_errors() => Ok((s, out.0)),
        _ => Err(out.into_error("the skill package is not valid")),
    }
}

/// Every problem of a package, errors and warnings, without storing anything.
pub fn validate_skill(v: &Value) -> Validation {
    let mut out = Problems::default();
    read_skill(v, "", true, &mut out);
    Validation { problems: out.0 }
}
