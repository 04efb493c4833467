//! The Skill Composer, the authoring tools and artifact dispatch for JS: strings in, strings
//! out (`crate::composer::wire`). The glue (`pkg/src/compose.js`) calls the host's model
//! adapter and executors, and the storage backends.

use super::{inbox_strings, js_err};
use crate::composer::{wire, PreparedSkill};
use crate::dispatch::optimize;
use wasm_bindgen::prelude::*;

fn arg(input: &[String], i: usize) -> &str {
    input.get(i).map(String::as_str).unwrap_or_default()
}

/// Composes (inbox: the skill package JSON, the rest of the request JSON) →
/// `{ composition }` or `{ needs_shape }`.
#[wasm_bindgen(js_name = compose)]
pub fn compose(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    wire::compose_split_json(arg(&input, 0), arg(&input, 1)).map_err(js_err)
}

/// A skill package read and validated once, for many compositions
/// (`crate::composer::PreparedSkill`).
#[wasm_bindgen(js_name = PreparedSkill)]
pub struct JsPreparedSkill(PreparedSkill);

#[wasm_bindgen(js_class = PreparedSkill)]
impl JsPreparedSkill {
    /// Reads and validates the package (inbox: its JSON).
    #[wasm_bindgen(constructor)]
    pub fn new(lens: &[u32]) -> Result<JsPreparedSkill, JsValue> {
        let input = inbox_strings(lens)?;
        PreparedSkill::from_json(arg(&input, 0))
            .map(JsPreparedSkill)
            .map_err(js_err)
    }

    /// The skill's name.
    pub fn name(&self) -> String {
        self.0.skill().map(|s| s.name.clone()).unwrap_or_default()
    }

    /// Composes one invocation (inbox: the request JSON without `skill_package`) →
    /// `{ composition }` or `{ needs_shape }`.
    pub fn compose(&self, lens: &[u32]) -> Result<String, JsValue> {
        let input = inbox_strings(lens)?;
        self.0
            .compose(arg(&input, 0))
            .map(|s| s.to_json())
            .map_err(js_err)
    }
}

/// The request of a nested sub-skill (inbox: parent request, sub-skill, tool catalog,
/// user request, parameters).
#[wasm_bindgen(js_name = nestedRequest)]
pub fn nested_request(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::nested_json(arg(&i, 0), arg(&i, 1), arg(&i, 2), arg(&i, 3), arg(&i, 4)).map_err(js_err)
}

/// The authoring tools' MCP descriptors (JSON array).
#[wasm_bindgen(js_name = authoringTools)]
pub fn authoring_tools() -> String {
    wire::authoring_tools_json()
}

/// One step of an authoring call (inbox: step, tool name, arguments, other, now).
#[wasm_bindgen(js_name = authoringStep)]
pub fn authoring_step(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::authoring_json(arg(&i, 0), arg(&i, 1), arg(&i, 2), arg(&i, 3), arg(&i, 4)).map_err(js_err)
}

/// The orchestrator decision (inbox: the query, the recommendations JSON, the policy JSON
/// or "") → the decision JSON.
#[wasm_bindgen(js_name = decideSkills)]
pub fn decide_skills(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    crate::catalog::orchestrator::decide_json(arg(&i, 0), arg(&i, 1), arg(&i, 2)).map_err(js_err)
}

/// Replays an invocation record (inbox: the record, the skill as stored now, the memory
/// items read back as a JSON array or "") → `{ identical, prompt_hash, recomposed_hash,
/// changes }`.
#[wasm_bindgen(js_name = verifyInvocation)]
pub fn verify_invocation(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    crate::composer::replay::verify_json(arg(&i, 0), arg(&i, 1), arg(&i, 2)).map_err(js_err)
}

/// The DSPy optimise call (inbox: the dspy_module JSON, the traces' DSPy dataset, the
/// fallback template's id or "").
#[wasm_bindgen(js_name = dspyOptimizeCall)]
pub fn dspy_optimize_call(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    optimize::call_json(arg(&i, 0), arg(&i, 1), arg(&i, 2)).map_err(js_err)
}

/// The dspy_module with the optimised state, stamped (inbox: artifact JSON, state blob
/// JSON, manifest JSON, now; `examples`: how many trained it).
#[wasm_bindgen(js_name = dspyStamp)]
pub fn dspy_stamp(lens: &[u32], examples: u32) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    optimize::stamp_json(
        arg(&i, 0),
        arg(&i, 1),
        arg(&i, 2),
        examples as usize,
        arg(&i, 3),
    )
    .map_err(js_err)
}

/// The dspy_modules to re-optimise (inbox: artifacts JSON array, manifest JSON).
#[wasm_bindgen(js_name = dspyStale)]
pub fn dspy_stale(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    optimize::stale_json(arg(&i, 0), arg(&i, 1)).map_err(js_err)
}

/// A trace row (inbox: the host's record JSON) → `{ key, row }`.
#[wasm_bindgen(js_name = traceRow)]
pub fn trace_row(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::trace_json(arg(&i, 0)).map_err(js_err)
}

/// The store key of an invocation record (JSON).
#[wasm_bindgen(js_name = invocationKey)]
pub fn invocation_key(record: &str) -> Result<String, JsValue> {
    wire::invocation_key_json(record).map_err(js_err)
}

/// The artifact reference to run (inbox: skill or summary JSON, artifact name or id, kind
/// or "", model id).
#[wasm_bindgen(js_name = pickArtifact)]
pub fn pick_artifact(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::pick_json(arg(&i, 0), arg(&i, 1), arg(&i, 2), arg(&i, 3)).map_err(js_err)
}

/// The artifact names a whole-skill run executes, in order (inbox: skill or summary JSON).
#[wasm_bindgen(js_name = runOrder)]
pub fn run_order(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::run_order_json(arg(&i, 0)).map_err(js_err)
}

/// `{ system, message, tools }` for lowering a composition (inbox: the composition JSON,
/// the caller's system text, the caller's tools as a JSON array or "").
#[wasm_bindgen(js_name = compositionLowering)]
pub fn composition_lowering(lens: &[u32]) -> Result<String, JsValue> {
    let i = inbox_strings(lens)?;
    wire::composition_lowering(arg(&i, 0), Some(arg(&i, 1)), Some(arg(&i, 2)))
        .map(|l| l.to_json())
        .map_err(js_err)
}

/// A model request for a provider adapter, in two steps (`step`): `lower`, the request
/// (JSON) as `{ message, options }` — the prompt as the user turn and the options it adds
/// (`model`, `system`, `output`) —; `answer`, the adapter's turn (JSON) as `{ text, usage?,
/// model? }`. `model`: the caller's model id, or the one asked for ("" none).
#[wasm_bindgen(js_name = modelRequest)]
pub fn model_request(step: &str, json: &str, model: &str) -> Result<String, JsValue> {
    let model = Some(model).filter(|m| !m.is_empty());
    match step {
        "lower" => wire::model_request_lowering(json, model).map(|l| l.to_json()),
        _ => wire::model_answer(json, model),
    }
    .map_err(js_err)
}

/// An artifact run or a skill run kept in wasm ([`crate::artifact_run`]).
#[wasm_bindgen(js_name = ArtifactRunCore)]
pub struct JsArtifactRun {
    run: Run,
    first: Option<String>,
}

enum Run {
    One(Box<crate::artifact_run::ArtifactRun>),
    Skill(Box<crate::artifact_run::SkillRun>),
}

#[wasm_bindgen(js_class = ArtifactRunCore)]
impl JsArtifactRun {
    /// A run (inbox: the options JSON, then the artifact names: "" for one artifact run,
    /// `null` for the skill's run order, or a JSON array of names); its first action waits
    /// in [`Self::first`].
    #[wasm_bindgen(constructor)]
    pub fn new(lens: &[u32]) -> Result<JsArtifactRun, JsValue> {
        use crate::artifact_run::{ArtifactRun, RunOptions, SkillRun};
        let i = inbox_strings(lens)?;
        let o = RunOptions::from_value(super::parse(
            arg(&i, 0),
            "the run options",
            crate::error::ErrorKind::InvalidOptions,
        )?)
        .map_err(js_err)?;
        let names = arg(&i, 1);
        let (run, a) = if names.is_empty() {
            let (r, a) = ArtifactRun::start(o).map_err(js_err)?;
            (Run::One(Box::new(r)), a)
        } else {
            let list: Option<Vec<String>> = serde_json::from_str(names).map_err(|e| {
                js_err(
                    crate::error::Error::new(
                        crate::error::ErrorKind::InvalidOptions,
                        format!("`artifacts` must be an array of names: {e}"),
                    )
                    .at("artifacts"),
                )
            })?;
            let (r, a) = SkillRun::start(o, list).map_err(js_err)?;
            (Run::Skill(Box::new(r)), a)
        };
        Ok(JsArtifactRun {
            run,
            first: Some(a.to_json()),
        })
    }

    /// The first action (JSON).
    pub fn first(&mut self) -> String {
        self.first.take().unwrap_or_default()
    }

    /// Feeds an event (`loaded`, `output`, `failed`, `time`, `stored`) with its payload →
    /// the next action (JSON).
    pub fn next(&mut self, event: &str, payload: &str) -> Result<String, JsValue> {
        let (e, v) = crate::artifact_run::Event::from_wire(event, payload).map_err(js_err)?;
        let a = match &mut self.run {
            Run::One(r) => r.next(e, v),
            Run::Skill(r) => r.next(e, v),
        };
        a.map(|a| a.to_json()).map_err(js_err)
    }
}
