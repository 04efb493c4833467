//! Problems: what a validation found, each with its JSON path and a stable code, collected
//! whole (validation never stops at the first one). Skills, SkillSpecs, contracts and
//! marketplace packages all report through these types.

use crate::error::{Error, ErrorKind};
use serde_json::{Map, Value};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The package cannot be stored or composed.
    Error,
    /// Worth fixing; the package still works.
    Warning,
}

/// One problem, with the JSON path it is at and a stable code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// JSON path (`artifacts[1].metadata.fallback_artifact`), or `$` for the root.
    pub path: String,
    /// Stable code (`missing-field`, `template-syntax`, `duplicate-artifact`, …).
    pub code: &'static str,
    /// What is wrong, for people.
    pub message: String,
    /// Error or warning.
    pub severity: Severity,
}

impl Problem {
    /// Whether the problem is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `{ path, code, message, severity }`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("path".into(), self.path.clone().into());
        o.insert("code".into(), self.code.into());
        o.insert("message".into(), self.message.clone().into());
        o.insert(
            "severity".into(),
            match self.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            }
            .into(),
        );
        Value::Object(o)
    }
}

/// The outcome of [`crate::skill::validate_skill`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Validation {
    /// Every problem: the shape of each field first, then the rules across fields.
    pub problems: Vec<Problem>,
}

impl Validation {
    /// No error-severity problem.
    pub fn is_valid(&self) -> bool {
        !self.problems.iter().any(|p| p.severity == Severity::Error)
    }

    /// `{ valid, problems }`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("valid".into(), self.is_valid().into());
        o.insert(
            "problems".into(),
            Value::Array(self.problems.iter().map(Problem::to_value).collect()),
        );
        Value::Object(o)
    }
}

/// The problems found so far.
#[derive(Debug, Default)]
pub(crate) struct Problems(pub(crate) Vec<Problem>);

impl Problems {
    pub(crate) fn error(&mut self, path: &str, code: &'static str, message: impl Into<String>) {
        self.push(path, code, message, Severity::Error);
    }

    pub(crate) fn warning(&mut self, path: &str, code: &'static str, message: impl Into<String>) {
        self.push(path, code, message, Severity::Warning);
    }

    fn push(&mut self, path: &str, code: &'static str, message: impl Into<String>, s: Severity) {
        self.0.push(Problem {
            path: if path.is_empty() {
                "$".into()
            } else {
                path.into()
            },
            code,
            message: message.into(),
            severity: s,
        });
    }

    pub(crate) fn has_errors(&self) -> bool {
        self.0.iter().any(|p| p.severity == Severity::Error)
    }

    /// The `InvalidSkill` error listing every problem (errors first in the message).
    pub(crate) fn into_error(self, what: &str) -> Error {
        let errors: Vec<&Problem> = self
            .0
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        let first = errors
            .first()
            .map(|p| format!("{} (at {})", p.message, p.path))
            .unwrap_or_default();
        let more = match errors.len() {
            0 | 1 => String::new(),
            n => format!(
                "; and {} more problem{}",
                n - 1,
                if n == 2 { "" } else { "s" }
            ),
        };
        Error::new(ErrorKind::InvalidSkill, format!("{what}: {first}{more}")).with(
            "problems",
            Value::Array(self.0.iter().map(Problem::to_value).collect()),
        )
    }
}
