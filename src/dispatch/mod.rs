//! Artifact dispatch: one handler per artifact kind behind one router (the seed's
//! `ArtifactDispatcher`), execution traces, and assertions on outputs.
//!
//! The core decides and prepares; the host runs. [`route`] picks the handler for an
//! artifact from the executors the host registered — `description` (and `approach`,
//! `example`) → context; `prompt_template` → render, then the host's model adapter;
//! `code_template` → render, then the host's sandbox executor (none by default: the library
//! never evaluates code); `dspy_module` → the host's DSPy executor, else its
//! `fallback_artifact` prompt template, else an error naming the missing executor.
//! When the DSPy executor fails, [`fallback_after_failure`] runs the fallback instead; its
//! manifest and optimise modes are [`optimize`]'s. [`prepare`] renders the chosen artifact. Routing needs only the artifact reference, so a
//! host loads an artifact's content (and a fallback's) only when its step runs.

pub mod assertion;
pub mod optimize;
pub mod trace;
pub mod used;

use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::skill::template::{self, Limits};
use crate::skill::{ArtifactKind, ArtifactRef, SkillArtifact};
use serde_json::{json, Map, Value};
use used::UsedArtifact;

/// Which executors the host registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Executors {
    /// A model adapter (`prompt_template`, semantic assertions).
    pub model: bool,
    /// A sandbox executor for `code_template`.
    pub code: bool,
    /// A DSPy executor for `dspy_module`.
    pub dspy: bool,
    /// The kinds the host registered its own handler for (bit `i`: `ArtifactKind::ALL[i]`);
    /// such a handler replaces the built-in one.
    pub handlers: u8,
}

impl Executors {
    /// Whether the host registered a handler for `kind`.
    pub fn handles(&self, kind: ArtifactKind) -> bool {
        ArtifactKind::ALL
            .iter()
            .position(|k| *k == kind)
            .is_some_and(|i| self.handlers & (1 << i) != 0)
    }

    /// The handler bits for kind names; a name that is no artifact kind is
    /// `InvalidOptions`.
    pub fn handler_bits<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<u8> {
        let mut bits = 0u8;
        for n in names {
            let i = ArtifactKind::ALL
                .iter()
                .position(|k| k.name() == n)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOptions,
                        format!("`handlers.{n}`: no artifact kind is named `{n}`"),
                    )
                    .at(format!("handlers.{n}"))
                })?;
            bits |= 1 << i;
        }
        Ok(bits)
    }
}

/// An artifact kind no handler serves (the seed's `SkillError::NoHandler`).
pub fn no_handler(kind: &str, name: &str) -> Error {
    let known: Vec<&str> = ArtifactKind::ALL.iter().map(|k| k.name()).collect();
    Error::new(
        ErrorKind::NoHandler,
        format!(
            "no handler for the artifact kind `{kind}` of `{name}` (handlers exist for {})",
            known.join(", ")
        ),
    )
    .with("kind", kind)
    .with("artifact", name)
}

/// The handler an artifact goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Injected as context; nothing runs.
    Context,
    /// Rendered, then sent to the model adapter.
    Model,
    /// Rendered, then run by the sandbox executor.
    Code,
    /// Run by the DSPy executor.
    Dspy,
    /// No DSPy executor: run the named `prompt_template` instead.
    Fallback(String),
    /// The host's own handler for the kind (templates rendered first).
    Handler,
}

impl Route {
    /// The wire name (`context`, `model`, `code`, `dspy`, `fallback`, `handler`).
    pub fn name(&self) -> &'static str {
        match self {
            Route::Context => "context",
            Route::Model => "model",
            Route::Code => "code",
            Route::Dspy => "dspy",
            Route::Fallback(_) => "fallback",
            Route::Handler => "handler",
        }
    }
}

/// Picks the handler for an artifact of `kind` (with a `dspy_module`'s `fallback` name).
pub fn route(
    kind: ArtifactKind,
    name: &str,
    fallback: Option<&str>,
    ex: Executors,
) -> Result<Route> {
    if ex.handles(kind) {
        return Ok(Route::Handler);
    }
    match kind {
        ArtifactKind::Description | ArtifactKind::Approach | ArtifactKind::Example => Ok(Route::Context),
        ArtifactKind::PromptTemplate if ex.model => Ok(Route::Model),
        ArtifactKind::PromptTemplate => Err(Error::new(
            ErrorKind::NoModelAdapter,
            format!("the prompt_template `{name}` needs a model adapter; pass `adapter` to run it"),
        )
        .with("artifact", name)),
        ArtifactKind::CodeTemplate if ex.code => Ok(Route::Code),
        ArtifactKind::CodeTemplate => Err(Error::new(
            ErrorKind::NoExecutor,
            format!(
                "the code_template `{name}` needs a sandbox executor (`executors.code`); promptloom never evaluates code itself"
            ),
        )
        .with("artifact", name)
        .with("executor", "code")),
        ArtifactKind::DspyModule if ex.dspy => Ok(Route::Dspy),
        ArtifactKind::DspyModule => match fallback {
            Some(f) => Ok(Route::Fallback(f.to_owned())),
            None => Err(Error::new(
                ErrorKind::NoExecutor,
                format!(
                    "the dspy_module `{name}` needs a DSPy executor (`executors.dspy`) and declares no fallback_artifact"
                ),
            )
            .with("artifact", name)
            .with("executor", "dspy")),
        },
    }
}

/// Why a `dspy_module` runs its fallback when no DSPy executor is registered (the trace's
/// `fallback_reason`).
pub const NO_DSPY_EXECUTOR: &str = "no DSPy executor is registered";

/// After the DSPy executor failed on the `dspy_module` `name` (threw, rejected, or said it
/// cannot run it): its fallback template's name and the reason the trace records — or, when
/// the artifact is no `dspy_module` or names no fallback, the failure as `AdapterFailed`.
pub fn fallback_after_failure(
    kind: ArtifactKind,
    name: &str,
    fallback: Option<&str>,
    failure: &str,
) -> Result<(String, String)> {
    let reason = format!("the DSPy executor failed: {failure}");
    match (kind, fallback) {
        (ArtifactKind::DspyModule, Some(f)) => Ok((f.to_owned(), reason)),
        _ => Err(Error::new(
            ErrorKind::AdapterFailed,
            format!("the {} `{name}`: {reason}", kind.name()),
        )
        .with("artifact", name)),
    }
}

/// Whether the DSPy executor's manifest (`{ version?, templates?: [{ template_id, … }] }`)
/// offers the template a `dspy_module`'s content names: `None` when it does (or the
/// manifest lists no templates), else the reason to run the fallback instead.
pub fn unsupported_template(content: &str, manifest: &Value) -> Option<String> {
    let templates = manifest.get("templates")?.as_array()?;
    let id = serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|c| {
            c.get("template_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let offered = templates
        .iter()
        .any(|t| t.get("template_id").and_then(Value::as_str) == Some(id.as_str()));
    (!offered).then(|| format!("the DSPy executor does not offer the template `{id}`"))
}

/// A prepared step: what the host's handler receives.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The handler.
    pub route: Route,
    /// The artifact that runs (the fallback when the route went through one).
    pub artifact: UsedArtifact,
    /// The artifact the invocation named, when a fallback replaced it.
    pub replaced: Option<ArtifactRef>,
    /// The rendered input: context text, prompt, code, or the DSPy call as JSON text.
    pub input: String,
    /// The DSPy call (`{ template_id, content, state_blob, parameters }`).
    pub dspy: Option<Value>,
}

/// Prepares `artifact` for `route` against `context` (a JSON object: the parameters, and
/// whatever else the host passes, e.g. earlier `outputs`). Renders are bounded as the
/// composer's are.
pub fn prepare(
    artifact: &SkillArtifact,
    route: Route,
    context: &Value,
    replaced: Option<ArtifactRef>,
    limits: Limits,
) -> Result<Prepared> {
    let (input, dspy) = match &route {
        Route::Context => (artifact.content.clone(), None),
        Route::Model | Route::Code => (
            template::render(&artifact.content, context, limits, &artifact.name)?,
            None,
        ),
        Route::Handler => match artifact.kind {
            ArtifactKind::PromptTemplate | ArtifactKind::CodeTemplate => (
                template::render(&artifact.content, context, limits, &artifact.name)?,
                None,
            ),
            _ => (artifact.content.clone(), None),
        },
        Route::Dspy => {
            let content: Value = serde_json::from_str(&artifact.content).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidSkill,
                    format!(
                        "the dspy_module `{}` content is not JSON: {e}",
                        artifact.name
                    ),
                )
            })?;
            let call = json!({
                "template_id": content.get("template_id").cloned().unwrap_or(Value::Null),
                "content": content,
                "state_blob": artifact.state_blob,
                "parameters": context,
            });
            (call.json_text(), Some(call))
        }
        Route::Fallback(name) => {
            return Err(Error::new(
                ErrorKind::Internal,
                format!("prepare the fallback `{name}` itself, not the dspy_module"),
            ))
        }
    };
    Ok(Prepared {
        route,
        artifact: UsedArtifact::of(artifact, "dispatch"),
        replaced,
        input,
        dspy,
    })
}

impl Prepared {
    /// The JSON form `{ route, artifact, replaced, input, dspy }`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("route".into(), self.route.name().into());
        o.insert("artifact".into(), self.artifact.to_value());
        o.insert(
            "replaced".into(),
            self.replaced
                .as_ref()
                .map_or(Value::Null, ArtifactRef::to_value),
        );
        o.insert("input".into(), self.input.clone().into());
        o.insert("dspy".into(), self.dspy.clone().unwrap_or(Value::Null));
        Value::Object(o)
    }
}

/// Routes and prepares in one step for a skill whose artifacts are all at hand (native
/// hosts, tests): `name` is an artifact name (variant chosen for `model`) or id.
pub fn dispatch_in(
    skill: &crate::skill::Skill,
    name: &str,
    model: &str,
    context: &Value,
    ex: Executors,
) -> Result<Prepared> {
    let find = |n: &str, kinds: Option<&[ArtifactKind]>| {
        crate::skill::select_variant(
            skill.artifacts.iter().filter(|a| {
                (a.name == n || a.id == n) && kinds.is_none_or(|k| k.contains(&a.kind))
            }),
            model,
        )
    };
    let a = find(name, None).ok_or_else(|| {
        Error::new(
            ErrorKind::NotFound,
            format!("the skill `{}` has no artifact `{name}`", skill.name),
        )
        .with("artifact", name)
    })?;
    let fallback = a.to_ref().fallback;
    match route(a.kind, &a.name, fallback.as_deref(), ex)? {
        Route::Fallback(f) => {
            let fb = find(&f, Some(&[ArtifactKind::PromptTemplate])).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidSkill,
                    format!(
                        "the fallback `{f}` of `{}` is not a prompt_template of the skill",
                        a.name
                    ),
                )
            })?;
            let r = route(fb.kind, &fb.name, None, ex)?;
            prepare(fb, r, context, Some(a.to_ref()), Limits::default())
        }
        r => prepare(a, r, context, None, Limits::default()),
    }
}

pub use crate::skill::model::run_order;

/// An artifact from its JSON form (a stored artifact), or `InvalidSkill` listing what is
/// wrong with it.
pub fn artifact_from(v: &Value) -> Result<SkillArtifact> {
    let skill = v
        .get("skill_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut problems = crate::problems::Problems::default();
    match crate::skill::read::read_artifact(v, "artifact", &skill, 0, "", &mut problems) {
        Some(a) if !problems.has_errors() => Ok(a),
        _ => Err(problems.into_error("the artifact is not valid")),
    }
}

/// The artifact reference named `name` (a name or an id) among `refs`, the variant for
/// `model`; `kind` restricts the kinds (a fallback is a `prompt_template`).
pub fn pick<'a>(
    refs: &'a [ArtifactRef],
    name: &str,
    kind: Option<ArtifactKind>,
    model: &str,
) -> Option<&'a ArtifactRef> {
    // Variant selection reads only the name, variant, ordinal and id.
    let stand_ins: Vec<SkillArtifact> = refs
        .iter()
        .filter(|r| (r.name == name || r.id == name) && kind.is_none_or(|k| r.kind == k))
        .map(|r| SkillArtifact {
            id: r.id.clone(),
            skill_id: String::new(),
            kind: r.kind,
            name: r.name.clone(),
            ordinal: r.ordinal,
            content: String::new(),
            model_variant: r.model_variant.clone(),
            metadata: Map::new(),
            state_blob: None,
            created_at: String::new(),
            updated_at: String::new(),
        })
        .collect();
    let chosen = crate::skill::select_variant(stand_ins.iter(), model)?;
    refs.iter().find(|r| r.id == chosen.id)
}
