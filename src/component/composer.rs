//! `promptloom:core/composer`: conversions only; the logic is [`crate::composer`] and
//! [`crate::dispatch`], through the JSON forms of [`crate::composer::wire`].

use super::exports::promptloom::core::composer::{self as wit, Guest};
use super::exports::promptloom::core::lowering as wl;
use super::promptloom::core::types::Error as WitError;
use super::{options, to_wit, Component};
use crate::composer::{wire, PreparedSkill, Step};
use crate::dispatch::optimize;
use crate::json_text::JsonText;
use crate::lower;
use crate::message::UserMessage;
use serde_json::Value;

/// The step as the WIT variant.
fn step(s: Step) -> wit::ComposeStep {
    let json = s.inner_json();
    match s {
        Step::Composed(_) => wit::ComposeStep::Composed(json),
        Step::NeedsShape(_) => wit::ComposeStep::NeedsShape(json),
    }
}

/// `prepared-skill`: a validated package kept for many compositions.
pub struct PreparedSkillResource(PreparedSkill);

impl wit::GuestPreparedSkill for PreparedSkillResource {
    fn prepare(skill_package: String) -> Result<wit::PreparedSkill, WitError> {
        let p = PreparedSkill::from_json(&skill_package).map_err(to_wit)?;
        Ok(wit::PreparedSkill::new(PreparedSkillResource(p)))
    }

    fn name(&self) -> String {
        self.0.skill().map(|s| s.name.clone()).unwrap_or_default()
    }

    fn compose(&self, request: String) -> Result<wit::ComposeStep, WitError> {
        self.0.compose(&request).map(step).map_err(to_wit)
    }
}

impl Guest for Component {
    type PreparedSkill = PreparedSkillResource;

    fn compose(request: String) -> Result<wit::ComposeStep, WitError> {
        wire::compose_request(&request).map(step).map_err(to_wit)
    }

    fn nested_request(
        parent: String,
        sub_skill: String,
        tool_catalog: String,
        user_request: String,
        parameters: String,
    ) -> Result<String, WitError> {
        wire::nested_json(
            &parent,
            &sub_skill,
            &tool_catalog,
            &user_request,
            &parameters,
        )
        .map_err(to_wit)
    }

    fn lower_composition(
        composition: String,
        mut options_in: wl::LowerOptions,
    ) -> Result<wl::Lowered, WitError> {
        let run = || -> crate::error::Result<wl::Lowered> {
            let parts = wire::composition_lowering(
                &composition,
                options_in.system.as_deref(),
                options_in.tools.as_deref(),
            )?;
            let msg = UserMessage::from_value(parts.message)?;
            options_in.system = Some(parts.system);
            options_in.tools = Some(Value::Array(parts.tools).json_text());
            let (opts, table) = options(options_in)?;
            let out = lower::lower(&msg, &opts, &table)?;
            Ok(wl::Lowered {
                body: out.body,
                report: out.report.to_json(),
            })
        };
        run().map_err(to_wit)
    }

    fn run_order(skill: String) -> Result<Vec<String>, WitError> {
        wire::run_order(&skill).map_err(to_wit)
    }

    fn authoring_tools() -> String {
        wire::authoring_tools_json()
    }

    fn pick_artifact(
        skill: String,
        artifact: String,
        kind: String,
        model_id: String,
    ) -> Result<String, WitError> {
        wire::pick_json(&skill, &artifact, &kind, &model_id).map_err(to_wit)
    }

    fn route_artifact(reference: String, ex: wit::Executors) -> Result<String, WitError> {
        let kinds: Vec<&str> = ex.handlers.iter().map(String::as_str).collect();
        wire::route_json(&reference, ex.model, ex.code, ex.dspy, &kinds).map_err(to_wit)
    }

    fn verify_invocation(
        invocation: String,
        skill: String,
        memory: String,
    ) -> Result<String, WitError> {
        crate::composer::replay::verify_json(&invocation, &skill, &memory).map_err(to_wit)
    }

    fn fallback_route(reference: String, failure: String) -> Result<String, WitError> {
        wire::fallback_json(&reference, &failure).map_err(to_wit)
    }

    fn unsupported_template(
        artifact: String,
        manifest: String,
    ) -> Result<Option<String>, WitError> {
        let v: Value =
            serde_json::from_str(&wire::unsupported_json(&artifact, &manifest).map_err(to_wit)?)
                .unwrap_or(Value::Null);
        Ok(v.as_str().map(str::to_owned))
    }

    fn dspy_optimize_call(
        artifact: String,
        dataset: String,
        fallback_id: String,
    ) -> Result<String, WitError> {
        optimize::call_json(&artifact, &dataset, &fallback_id).map_err(to_wit)
    }

    fn dspy_stamp(
        artifact: String,
        state_blob: String,
        manifest: String,
        examples: u32,
        now: String,
    ) -> Result<String, WitError> {
        optimize::stamp_json(&artifact, &state_blob, &manifest, examples as usize, &now)
            .map_err(to_wit)
    }

    fn dspy_stale(artifacts: String, manifest: String) -> Result<String, WitError> {
        optimize::stale_json(&artifacts, &manifest).map_err(to_wit)
    }

    fn prepare_artifact(
        artifact: String,
        route: String,
        context: String,
        replaced: String,
        render_limits: String,
    ) -> Result<String, WitError> {
        wire::prepare_json(&artifact, &route, &context, &replaced, &render_limits).map_err(to_wit)
    }

    fn check_assertions(
        assertions: String,
        output: String,
        answers: String,
    ) -> Result<String, WitError> {
        wire::assertions_json(&assertions, &output, &answers).map_err(to_wit)
    }
}
