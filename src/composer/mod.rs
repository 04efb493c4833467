//! The Skill Composer: a skill package plus one invocation ([`ComposeRequest`]) into a
//! concrete prompt and a subgraph shape ([`Composition`]), by the seed's nine steps, in
//! order and deterministically (the same request gives byte-identical output):
//!
//! 1. validate the package, failing closed ([`request`]);
//! 2. render the framing — MiniJinja against the parameters when it is a
//!    `prompt_template`, literal prose otherwise — with fuel, recursion and output bounds
//!    ([`crate::skill::template`]);
//! 3. select descriptions by `include_when` and examples by tag relevance ([`select`]);
//! 4. assemble framing → descriptions → examples → the current invocation, under fixed
//!    headers; authored prose is never reworded;
//! 5. shape the subgraph: tools ⊆ `available_tools` ∩ `caller_capabilities`, a staged
//!    subgraph when the approach declares stages ([`shape`]);
//! 6. translate contract interrupts into node references;
//! 7. set the exit condition;
//! 8. record the used artifacts with ids, versions and content hashes ([`record`]);
//! 9. return — with the invocation record the host stores beside the turn.
//!
//! The one model call (a skill with `planner_delegates_shape: true`) is the host's: the
//! composer returns [`Step::NeedsShape`] with the question, and the host composes again with
//! the model's answer in `delegated_shape`.

pub mod authoring;
pub mod record;
pub mod replay;
pub mod request;
pub mod select;
pub mod shape;
pub mod tool;
pub mod wire;

pub use record::{
    content_hash, invocation_record, InvocationRecord, MemoryMark, RecordInput, UsedArtifact,
};
pub use request::{
    Capabilities, ComposeRequest, InvocationSource, MemoryItem, Purpose, ToolDescriptor,
};
pub use shape::{ExitCondition, Interrupt, Shaped, SubgraphShape};

use crate::error::{Error, ErrorKind, Result};
use crate::json_schema;
use crate::skill::template;
use crate::skill::{ArtifactKind, Skill, SkillArtifact};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// One section of the composed prompt and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "PromptSection"))]
pub struct Section {
    /// `framing`, `heading`, `description`, `example` or `request`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "'framing' | 'heading' | 'description' | 'example' | 'request'")
    )]
    pub kind: &'static str,
    /// The artifact the text came from (none for prose framing, headings and the request);
    /// written as `{ id, name, kind }`.
    #[serde(serialize_with = "artifact_ref")]
    #[cfg_attr(
        feature = "ts",
        ts(type = "{ id: string; name: string; kind: ArtifactKind } | null")
    )]
    pub artifact: Option<UsedArtifact>,
    /// The section's text as it appears in the prompt.
    pub text: String,
    /// Estimated tokens of `text`.
    pub tokens: u64,
}

/// The composed prompt: its text, and the sections it is made of (joined by a blank line).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ComposedPrompt {
    /// The concrete prompt.
    pub text: String,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

/// The skill a composition is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SkillRef {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
}

fn artifact_ref<S: serde::Serializer>(
    a: &Option<UsedArtifact>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Ref<'a> {
        id: &'a str,
        name: &'a str,
        kind: &'a str,
    }
    a.as_ref()
        .map(|a| Ref {
            id: &a.id,
            name: &a.name,
            kind: a.kind,
        })
        .serialize(s)
}

/// The composition result (the seed's `Composition`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Composition {
    /// The skill.
    pub skill: SkillRef,
    /// The thread, carried through.
    pub thread_id: String,
    /// Application or authoring.
    #[cfg_attr(feature = "ts", ts(type = "'application' | 'authoring'"))]
    pub purpose: Purpose,
    /// The prompt.
    pub prompt: ComposedPrompt,
    /// The subgraph.
    pub subgraph: SubgraphShape,
    /// Every artifact read for this prompt and subgraph.
    pub used_artifacts: Vec<UsedArtifact>,
    /// Best-effort tool-call sequence hint.
    pub expected_tool_calls: Vec<String>,
    /// Declared interrupts and their nodes.
    pub declared_interrupts: Vec<Interrupt>,
    /// What "done" looks like.
    pub exit_condition: ExitCondition,
    /// From the skill's metadata.
    pub model_preference: Option<String>,
    /// The parameters after schema defaults.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub parameters: Map<String, Value>,
    /// Memory items the prompt renders and so depends on (ids, each once; empty items are
    /// not rendered).
    pub memory_refs: Vec<String>,
    /// The invocation record to store beside the turn.
    pub invocation_record: InvocationRecord,
}

/// The question for the host's model on the `planner_delegates_shape` path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeQuestion {
    /// System prompt for the model call.
    pub system: String,
    /// The question.
    pub prompt: String,
    /// JSON Schema of the expected answer.
    pub schema: Value,
}

/// What one call of [`compose`] returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The composition.
    Composed(Box<Composition>),
    /// The skill delegates its shape to a model: ask it, then compose again with the
    /// answer in `delegated_shape`.
    NeedsShape(ShapeQuestion),
}

/// Composes from the JSON request. A failure after the request names its thread and skill
/// carries the invocation record in `details.invocation_record`.
pub fn compose_value(v: Value) -> Result<Step> {
    let Value::Object(mut o) = v else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "a compose request must be an object",
        )
        .at("$"));
    };
    let pkg = o
        .remove("skill_package")
        .filter(|p| !p.is_null())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                "missing the `skill_package` object",
            )
            .at("skill_package")
        })?;
    compose_parts(Prepared::of(&pkg, false), o)
}

/// The steps after the package is read: the other fields, then [`compose`]; a failure
/// carries the invocation record once the request names its thread and skill.
fn compose_parts(package: Prepared, o: Map<String, Value>) -> Result<Step> {
    let raw = RecordInput::from_fields(&o, package.identity);
    let with_record = |e: Error| match &raw {
        Some(r) => {
            let rec = invocation_record(r, &[], &[], &[], Some(&e));
            e.with("invocation_record", rec.to_value())
        }
        None => e,
    };
    let skill = package.skill.map_err(with_record)?;
    let req = ComposeRequest::prepared(skill, package.artifact_hashes, o).map_err(with_record)?;
    compose(&req).map_err(with_record)
}

/// The JSON value of an output type (they all serialize; `null` cannot happen).
pub(crate) fn json<T: Serialize>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or(Value::Null)
}

/// How many validated packages [`compose_split`] keeps.
const PACKAGES: usize = 16;

/// A package read once for every composition of it: its validated skill (or why it
/// failed), the identity the invocation record names and each artifact's content hash.
#[derive(Debug, Clone)]
struct Prepared {
    skill: Result<Arc<Skill>>,
    identity: Option<record::SkillIdentity>,
    artifact_hashes: Arc<[String]>,
}

impl Prepared {
    /// Reads `pkg`; `hash`: whether to hash every artifact now (worth it for a package that
    /// is kept; a composition made once hashes only the artifacts it uses).
    fn of(pkg: &Value, hash: bool) -> Prepared {
        let skill = request::read_package(pkg).map(Arc::new);
        let artifact_hashes = match &skill {
            Ok(s) if hash => s.artifacts.iter().map(content_hash).collect(),
            _ => Arc::from([]),
        };
        Prepared {
            skill,
            identity: record::identity_of(pkg),
            artifact_hashes,
        }
    }
}

/// A skill package read and validated once for many compositions: the skill, the identity
/// its invocation records name and each artifact's content hash are kept, so composing it
/// again reads only the invocation. Composing through it gives the same composition, byte
/// for byte, as [`compose_value`] with the package in the request.
#[derive(Debug, Clone)]
pub struct PreparedSkill(Prepared);

impl PreparedSkill {
    /// Reads and validates a package (JSON text). A package that does not validate fails
    /// as [`compose_value`] fails on it (`MalformedTemplate`, `MissingRequiredField`,
    /// `InvalidSkill` with `details.problems`), without an invocation record: there is no
    /// invocation yet.
    pub fn from_json(package: &str) -> Result<PreparedSkill> {
        let pkg: Value = serde_json::from_str(package).map_err(|e| {
            Error::json(ErrorKind::InvalidRequest, "the skill package", &e).at("skill_package")
        })?;
        let prepared = Prepared::of(&pkg, true);
        match &prepared.skill {
            Ok(_) => Ok(PreparedSkill(prepared)),
            Err(e) => Err(e.clone()),
        }
    }

    /// The validated skill.
    pub fn skill(&self) -> Option<&Skill> {
        self.0.skill.as_deref().ok()
    }

    /// Composes one invocation of the skill: `rest` is the request's JSON object without
    /// `skill_package` (a `skill_package` field in it is an error: the package is this
    /// one).
    pub fn compose(&self, rest: &str) -> Result<Step> {
        let o = request_object(rest)?;
        if o.contains_key("skill_package") {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "a prepared skill composes its own package: pass the invocation without `skill_package`",
            )
            .at("skill_package"));
        }
        compose_parts(self.0.clone(), o)
    }
}

/// A package's JSON text and what was prepared from it.
type CachedPackage = (String, Prepared);

thread_local! {
    /// Validated packages by their JSON text (the last [`PACKAGES`]).
    static PACKAGE_CACHE: std::cell::RefCell<Vec<CachedPackage>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Composes from the package's JSON text and the rest of the request (JSON object text
/// without `skill_package`): the same result as [`compose_value`] on the whole request, but
/// a package composed again is not parsed and validated again (the validated skill is kept
/// by its text).
pub fn compose_split(package: &str, rest: &str) -> Result<Step> {
    let cached = PACKAGE_CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(t, _)| t == package)
            .map(|(_, p)| p.clone())
    });
    let prepared = match cached {
        Some(hit) => hit,
        None => {
            let pkg: Value = serde_json::from_str(package).map_err(|e| {
                Error::json(ErrorKind::InvalidRequest, "the skill package", &e).at("skill_package")
            })?;
            let prepared = Prepared::of(&pkg, true);
            PACKAGE_CACHE.with(|c| {
                let mut c = c.borrow_mut();
                if c.len() >= PACKAGES {
                    drop(c.remove(0));
                }
                c.push((package.to_owned(), prepared.clone()));
            });
            prepared
        }
    };
    compose_parts(prepared, request_object(rest)?)
}

/// The request's JSON object without its package.
fn request_object(rest: &str) -> Result<Map<String, Value>> {
    let rest: Value = serde_json::from_str(rest)
        .map_err(|e| Error::json(ErrorKind::InvalidRequest, "the compose request", &e))?;
    let Value::Object(o) = rest else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "a compose request must be an object",
        )
        .at("$"));
    };
    Ok(o)
}

/// The use of `a` (an artifact of the request's skill) in `role`, with the content hash
/// prepared with the package when there is one.
fn use_of(req: &ComposeRequest, a: &SkillArtifact, role: &'static str) -> UsedArtifact {
    let prepared = req
        .skill
        .artifacts
        .iter()
        .position(|x| std::ptr::eq(x, a))
        .and_then(|i| req.artifact_hashes.get(i));
    match prepared {
        Some(hash) => UsedArtifact::with_hash(a, role, hash.clone()),
        None => UsedArtifact::of(a, role),
    }
}

/// The effective parameters: schema defaults filled in, then checked against the schema.
fn parameters(req: &ComposeRequest) -> Result<Map<String, Value>> {
    let schema = req.skill.metadata.get("parameters");
    let Some(schema) = schema else {
        if req.parameters.is_empty() {
            return Ok(Map::new());
        }
        return Err(Error::new(
            ErrorKind::MissingRequiredField,
            format!(
                "the skill `{}` declares no parameter schema, but the invocation passes parameters",
                req.skill.name
            ),
        )
        .at("skill_package.metadata.parameters")
        .with("field", "parameters"));
    };
    let mut p = req.parameters.clone();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, s) in props {
            if let Some(d) = s.get("default") {
                p.entry(k.clone()).or_insert_with(|| d.clone());
            }
        }
    }
    let value = Value::Object(p);
    if let Err(v) = json_schema::validate(schema, &value) {
        let first = v.first().map(|x| {
            if x.instance_path.is_empty() {
                x.message.clone()
            } else {
                format!("{}: {}", x.instance_path, x.message)
            }
        });
        return Err(Error::new(
            ErrorKind::ParameterMismatch,
            format!(
                "the parameters do not match the skill's parameter schema: {}",
                first.unwrap_or_default()
            ),
        )
        .at("parameters")
        .with(
            "violations",
            Value::Array(v.iter().map(|x| x.to_value()).collect()),
        ));
    }
    match value {
        Value::Object(p) => Ok(p),
        _ => Ok(Map::new()),
    }
}

/// The framing: its text and the artifact it came from.
fn framing(
    req: &ComposeRequest,
    params: &Map<String, Value>,
    model: &str,
) -> Result<(String, Option<UsedArtifact>)> {
    let skill = &req.skill;
    match skill.metadata.get("framing") {
        Some(Value::String(prose)) if !prose.trim().is_empty() => Ok((prose.clone(), None)),
        Some(Value::Object(o)) => {
            let name = o.get("artifact").and_then(Value::as_str).unwrap_or("");
            let kinds = [
                ArtifactKind::PromptTemplate,
                ArtifactKind::Description,
                ArtifactKind::Approach,
            ];
            let a = select::named(skill, name, &kinds, model).ok_or_else(|| {
                Error::new(
                    ErrorKind::MissingRequiredField,
                    format!(
                        "the framing names the artifact `{name}`, which the package does not hold"
                    ),
                )
                .at("skill_package.metadata.framing")
                .with("field", "framing")
            })?;
            let text = if a.kind == ArtifactKind::PromptTemplate {
                template::render(
                    &a.content,
                    &Value::Object(params.clone()),
                    req.render_limits,
                    &a.name,
                )?
            } else {
                a.content.clone()
            };
            Ok((text, Some(use_of(req, a, "framing"))))
        }
        _ => Err(Error::new(
            ErrorKind::MissingRequiredField,
            format!("the skill `{}` has no framing", skill.name),
        )
        .at("skill_package.metadata.framing")
        .with("field", "framing")),
    }
}

fn param_line(k: &str, v: &Value) -> String {
    match v {
        Value::String(s) if s.contains('\n') => {
            let body: Vec<String> = s.lines().map(|l| format!("    {l}")).collect();
            format!("- {k}: |\n{}", body.join("\n"))
        }
        Value::String(s) => format!("- {k}: {s}"),
        other => format!("- {k}: {other}"),
    }
}

fn section(kind: &'static str, artifact: Option<UsedArtifact>, text: String) -> Section {
    Section {
        kind,
        artifact,
        tokens: select::tokens(&text),
        text,
    }
}

/// The question for a skill that delegates its shape to the planner model.
fn shape_question(req: &ComposeRequest, approach: Option<&SkillArtifact>) -> ShapeQuestion {
    let tools: Vec<String> = shape::ceiling(req)
        .iter()
        .map(|t| {
            let d = t
                .descriptor
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            if d.is_empty() {
                format!("- {}", t.name)
            } else {
                format!("- {}: {d}", t.name)
            }
        })
        .collect();
    let prompt = format!(
        "Skill: {}\n\nApproach:\n{}\n\nAvailable tools:\n{}\n\nRequest:\n{}\n\nAnswer with one JSON object: {{\"kind\": \"loop\" or \"staged\", \"tools\": [tool names this invocation needs], \"stages\": [{{\"name\", \"description\", \"tools\"}}] for a staged shape, \"expected_tool_calls\": [tool names in the expected order]}}. Use only the available tools.",
        req.skill.name,
        approach.map_or("(none)", |a| a.content.as_str()),
        if tools.is_empty() { "(none)".to_owned() } else { tools.join("\n") },
        req.user_request,
    );
    ShapeQuestion {
        system: "You decide the shape of the subgraph that runs one skill invocation. Answer with JSON only.".into(),
        prompt,
        schema: json!({
            "type": "object",
            "required": ["kind"],
            "properties": {
                "kind": {"enum": ["loop", "staged"]},
                "tools": {"type": "array", "items": {"type": "string"}},
                "stages": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "description": {"type": "string"},
                    "tools": {"type": "array", "items": {"type": "string"}}}}},
                "expected_tool_calls": {"type": "array", "items": {"type": "string"}}
            }
        }),
    }
}

/// Runs the nine steps.
pub fn compose(req: &ComposeRequest) -> Result<Step> {
    let skill = &req.skill;
    let model = req.model.as_deref().unwrap_or("");
    // Step 1 (the package was validated when the request was read, where a missing or
    // empty name is already `MissingRequiredField`; this check holds for requests built in
    // Rust): the contract's required fields and the parameters.
    if skill.name.trim().is_empty() {
        return Err(
            Error::new(ErrorKind::MissingRequiredField, "the skill has no name")
                .at("skill_package.name")
                .with("field", "name"),
        );
    }
    if !skill.enabled() {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!(
                "the skill `{}` is disabled (`metadata.enabled` is false): enable it to compose it",
                skill.name
            ),
        )
        .at("skill_package.metadata.enabled")
        .with("skill", skill.name.clone())
        .with("disabled", true));
    }
    let requires = skill.metadata.get("requires_tools") == Some(&Value::Bool(true));
    if requires && req.available_tools.is_empty() && req.purpose == Purpose::Application {
        return Err(Error::new(
            ErrorKind::CapabilityNarrowing,
            format!(
                "the skill `{}` requires tools, and the invocation has none available",
                skill.name
            ),
        )
        .at("available_tools"));
    }
    let params = parameters(req)?;
    let framing_name = skill
        .metadata
        .get("framing")
        .and_then(|f| f.get("artifact"))
        .and_then(Value::as_str);
    let approach = select::approach(skill, req, model, framing_name);
    // The shape is the skill author's unless the skill delegates it: a caller's shape for a
    // skill that did not opt in would replace authored stages, so it is refused.
    let delegates = skill.metadata.get("planner_delegates_shape") == Some(&Value::Bool(true));
    if !delegates && req.delegated_shape.is_some() {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!(
                "the skill `{}` does not delegate its subgraph shape (`metadata.planner_delegates_shape` is not true): `delegated_shape` is refused",
                skill.name
            ),
        )
        .at("delegated_shape")
        .with("skill", skill.name.clone()));
    }
    // Step 2.
    let (framing_text, framing_use) = framing(req, &params, model)?;
    // Step 3.
    let descriptions = select::descriptions(skill, req, model, framing_name);
    let examples = select::examples(skill, req, &params, model);
    // Step 4.
    let mut used: Vec<UsedArtifact> = Vec::new();
    let mut sections = vec![section(
        "framing",
        framing_use.clone(),
        framing_text.trim_end_matches(['\n', '\r']).to_owned(),
    )];
    if let Some(u) = framing_use {
        used.push(u);
    }
    if !descriptions.is_empty() {
        sections.push(section("heading", None, "## Context".into()));
        for d in &descriptions {
            let u = use_of(req, d, "description");
            used.push(u.clone());
            let body = d.content.trim_end_matches(['\n', '\r']);
            sections.push(section(
                "description",
                Some(u),
                format!("### {}\n\n{body}", d.name),
            ));
        }
    }
    if !examples.is_empty() {
        sections.push(section("heading", None, "## Examples".into()));
        for (i, e) in examples.iter().enumerate() {
            let u = use_of(req, e.artifact, "example");
            used.push(u.clone());
            let body = e.artifact.content.trim_end_matches(['\n', '\r']);
            sections.push(section(
                "example",
                Some(u),
                format!("### Example {}: {}\n\n{body}", i + 1, e.artifact.name),
            ));
        }
    }
    let mut request = String::from("## Request");
    if !req.user_request.is_empty() {
        request.push_str("\n\n");
        request.push_str(&req.user_request);
    }
    if !params.is_empty() {
        request.push_str("\n\n### Parameters\n\n");
        let lines: Vec<String> = params.iter().map(|(k, v)| param_line(k, v)).collect();
        request.push_str(&lines.join("\n"));
    }
    // Memory marks: the items the prompt renders — each id once, never an empty one — are
    // the ones it depends on, and the record keeps them.
    let mut marks: Vec<MemoryMark> = Vec::new();
    for m in &req.memory_context {
        if m.content.trim().is_empty() || marks.iter().any(|k| k.id == m.id) {
            continue;
        }
        request.push_str(if marks.is_empty() {
            "\n\n### Memory\n\n"
        } else {
            "\n"
        });
        match &m.tier {
            Some(t) => request.push_str(&format!("- [{t}] {}", m.content)),
            None => request.push_str(&format!("- {}", m.content)),
        }
        marks.push(MemoryMark::of(&m.id, m.tier.as_deref(), &m.content));
    }
    sections.push(section("request", None, request));
    if let Some(a) = approach {
        used.push(use_of(req, a, "approach"));
    }
    let text = sections
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    // The context budget.
    let total = select::tokens(&text);
    if let Some(budget) = req.context_budget {
        if total > budget {
            return Err(over_budget(budget, total, &sections, &examples));
        }
    }
    // Steps 5–7. The steps before ran in order and fail closed first: only a skill whose
    // framing rendered and whose prompt fits asks the model for its shape (a paid call).
    if delegates && req.delegated_shape.is_none() {
        return Ok(Step::NeedsShape(shape_question(req, approach)));
    }
    let shaped = shape::shape(req, approach, req.delegated_shape.as_ref())?;
    // Step 8 and the record.
    let rec = record::replayable_record(
        &RecordInput::of(req),
        &used,
        &marks,
        &shaped.expected_tool_calls,
        (req.replay.clone(), &params, &text),
    );
    Ok(Step::Composed(Box::new(Composition {
        skill: SkillRef {
            id: skill.id.clone(),
            name: skill.name.clone(),
            version: skill.version.clone(),
        },
        thread_id: req.thread_id.clone(),
        purpose: req.purpose,
        prompt: ComposedPrompt { text, sections },
        subgraph: shaped.subgraph,
        used_artifacts: used,
        expected_tool_calls: shaped.expected_tool_calls,
        declared_interrupts: shaped.interrupts,
        exit_condition: shaped.exit,
        model_preference: skill
            .metadata
            .get("model_preference")
            .and_then(Value::as_str)
            .map(str::to_owned),
        parameters: params,
        memory_refs: marks.iter().map(|m| m.id.clone()).collect(),
        invocation_record: rec,
    })))
}

/// `ArtifactBudgetExceeded` with a suggested trimming: the least relevant examples first
/// (untagged, then fewest matched tags, later ordinal first), then descriptions (later
/// ordinal first), until the prompt fits; the framing and the request are never dropped.
fn over_budget(
    budget: u64,
    total: u64,
    sections: &[Section],
    examples: &[select::Ranked<'_>],
) -> Error {
    let mut order: Vec<&Section> = Vec::new();
    let mut ex: Vec<&Section> = sections.iter().filter(|s| s.kind == "example").collect();
    crate::sort::sort_by_key(&mut ex, |s| {
        let matched = examples
            .iter()
            .find(|e| s.artifact.as_ref().is_some_and(|a| a.id == e.artifact.id))
            .map_or(0, |e| e.matched.len());
        std::cmp::Reverse(matched)
    });
    ex.reverse();
    order.extend(ex);
    order.extend(sections.iter().filter(|s| s.kind == "description").rev());
    let mut after = total;
    let mut drop = Vec::new();
    for s in order {
        if after <= budget {
            break;
        }
        after = after.saturating_sub(s.tokens);
        if let Some(a) = &s.artifact {
            drop.push(json!({"id": a.id, "name": a.name, "kind": a.kind, "tokens": s.tokens}));
        }
    }
    let fits = after <= budget;
    let per: Vec<Value> = sections
        .iter()
        .map(|s| {
            json!({"kind": s.kind, "name": s.artifact.as_ref().map(|a| a.name.clone()), "tokens": s.tokens})
        })
        .collect();
    Error::new(
        ErrorKind::ArtifactBudgetExceeded,
        if fits {
            format!(
                "the composed prompt needs about {total} tokens, over the budget of {budget}; dropping {} artifact(s) would bring it to about {after}",
                drop.len()
            )
        } else {
            format!(
                "the composed prompt needs about {total} tokens, over the budget of {budget}; even without every example and description it needs about {after}"
            )
        },
    )
    .with("budget", budget)
    .with("total", total)
    .with("sections", Value::Array(per))
    .with(
        "suggested_trimming",
        json!({"drop": drop, "tokens_after": after, "fits": fits}),
    )
}

impl Section {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        json(self)
    }
}

impl Composition {
    /// The JSON form (the seed's field names).
    pub fn to_value(&self) -> Value {
        json(self)
    }
}

impl Step {
    /// The JSON form: `{ composition }` or `{ needs_shape: { system, prompt, schema } }`.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.to_json()).unwrap_or(Value::Null)
    }

    /// The composition's JSON text, or the shape question's (what [`Step::to_json`] wraps).
    pub fn inner_json(&self) -> String {
        match self {
            Step::Composed(c) => crate::json_text::to_string(c.as_ref()),
            Step::NeedsShape(q) => crate::json_text::to_string(q),
        }
        .unwrap_or_default()
    }

    /// The JSON text of [`Step::to_value`], written directly (no value tree).
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        enum Wire<'a> {
            #[serde(rename = "composition")]
            Composition(&'a Composition),
            #[serde(rename = "needs_shape")]
            NeedsShape(&'a ShapeQuestion),
        }
        let w = match self {
            Step::Composed(c) => Wire::Composition(c),
            Step::NeedsShape(q) => Wire::NeedsShape(q),
        };
        crate::json_text::to_string(&w).unwrap_or_default()
    }
}

/// The request for a sub-skill dispatched from inside a composed subgraph: same thread,
/// the top-level caller's capabilities (never the parent skill's surface), and
/// `available_tools` = the sub-skill's `tool_surface` ∩ those capabilities, drawn from the
/// host's tool catalog.
pub fn nested_request(
    parent: &ComposeRequest,
    sub_skill: crate::skill::Skill,
    tool_catalog: &[ToolDescriptor],
    user_request: String,
    parameters: Map<String, Value>,
) -> ComposeRequest {
    // A sub-skill that declares no surface is not narrowed by one (as at the top level);
    // one that declares an empty surface uses no tools.
    let surface = sub_skill
        .declared_tool_surface()
        .map(|s| s.into_iter().map(str::to_owned).collect::<Vec<_>>());
    let available_tools = tool_catalog
        .iter()
        .filter(|t| {
            surface.as_ref().is_none_or(|s| s.contains(&t.name))
                && parent.caller_capabilities.allows(&t.name)
        })
        .filter(|t| parent.purpose == Purpose::Authoring || !authoring::is_authoring_tool(&t.name))
        .cloned()
        .collect();
    ComposeRequest {
        skill: Arc::new(sub_skill),
        user_request,
        invocation_source: InvocationSource::AgentSelected,
        purpose: parent.purpose,
        channel_id: parent.channel_id.clone(),
        thread_id: parent.thread_id.clone(),
        turn_id: parent.turn_id.clone(),
        memory_context: parent.memory_context.clone(),
        available_tools,
        caller_capabilities: parent.caller_capabilities.clone(),
        parameters,
        model: parent.model.clone(),
        max_examples: parent.max_examples,
        context_budget: parent.context_budget,
        max_tool_calls: parent.max_tool_calls,
        now: parent.now.clone(),
        delegated_shape: None,
        render_limits: parent.render_limits,
        replay: Map::new(),
        artifact_hashes: Arc::from([]),
    }
}
