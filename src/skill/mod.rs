//! Skill packages: the model of the seed's `skills` and `skill_artifacts` tables, the
//! validation that lists every problem, model-variant selection, and the formats in and
//! out (the JSON package, Agent Skills `SKILL.md`).
//!
//! - [`model`]: [`Skill`], [`SkillArtifact`], [`ArtifactKind`], [`Source`], summaries.
//! - [`validate`]: importing and validating a package, collecting every [`Problem`] with its path;
//!   [`read`] reads its shape from JSON, [`checks`] holds the rules.
//! - [`schema`]: the structural check of JSON Schema documents (parameters, outputs).
//! - [`template`]: the MiniJinja syntax check of `prompt_template` / `code_template`.
//! - [`variant`]: model-variant selection (exact family → default → first by ordinal).
//! - [`skill_md`]: `SKILL.md` import (frontmatter + body + bundled files) and export.
//! - [`wire`]: the JSON forms both faces exchange.
//! - [`yaml`]: the frontmatter's YAML (parsed with `yaml-rust2`'s event parser).

pub mod checks;
pub mod model;
pub mod read;
pub mod schema;
pub mod skill_md;
pub mod template;
pub mod validate;
pub mod variant;
pub mod wire;
pub mod yaml;

pub use model::{
    artifact_id, skill_id, ArtifactKind, ArtifactRef, Skill, SkillArtifact, SkillSummary, Source,
};
pub use skill_md::{export_skill_md, import_skill_md, BundledFile, SkillMdExport, SkillMdImport};
pub use validate::{
    check_skill, import_package, import_value, validate_skill, Problem, Severity, Validation,
};
pub use variant::{model_family, select_variant};
