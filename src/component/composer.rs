//! `promptloom:core/composer`: conversions only; the logic is [`crate::composer`] and
//! [`crate::dispatch`], through the JSON forms of [`crate::composer::wire`].

use super::exports::promptloom::core::composer::{self as wit, Guest};
use super::exports::promptloom::core::lowering as wl;
use super::promptloom::core::handlers;
use super::promptloom::core::types::Error as WitError;
use super::{options, to_wit, Component};
use crate::artifact_run::{ArtifactRun, Event, RunHost, RunOptions, SkillRun};
use crate::composer::{wire, PreparedSkill, Step};
use crate::dispatch::optimize;
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use crate::lower;
use crate::message::UserMessage;
use serde_json::Value;
use std::cell::RefCell;

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

/// `artifact-run`: the core's artifact or skill run, driven by the host.
pub struct ArtifactRunResource {
    run: RefCell<Run>,
    first: RefCell<String>,
}

enum Run {
    One(Box<ArtifactRun>),
    Skill(Box<SkillRun>),
}

/// The run's options and the names of a skill run (`None`: one artifact).
fn run_inputs(
    options: &str,
    artifacts: Option<String>,
) -> crate::error::Result<(RunOptions, Option<Option<Vec<String>>>)> {
    let o = RunOptions::from_value(crate::wire::json_value(
        options,
        "the run options",
        ErrorKind::InvalidOptions,
    )?)?;
    let names = match artifacts {
        None => None,
        Some(t) => Some(serde_json::from_str(&t).map_err(|e| {
            Error::new(
                ErrorKind::InvalidOptions,
                format!("`artifacts` must be a JSON array of names or null: {e}"),
            )
            .at("artifacts")
        })?),
    };
    Ok((o, names))
}

impl wit::GuestArtifactRun for ArtifactRunResource {
    fn create(options: String, artifacts: Option<String>) -> Result<wit::ArtifactRun, WitError> {
        let run = || -> crate::error::Result<ArtifactRunResource> {
            let (o, names) = run_inputs(&options, artifacts)?;
            let (run, a) = match names {
                None => {
                    let (r, a) = ArtifactRun::start(o)?;
                    (Run::One(Box::new(r)), a)
                }
                Some(list) => {
                    let (r, a) = SkillRun::start(o, list)?;
                    (Run::Skill(Box::new(r)), a)
                }
            };
            Ok(ArtifactRunResource {
                run: RefCell::new(run),
                first: RefCell::new(a.to_json()),
            })
        };
        run().map(wit::ArtifactRun::new).map_err(to_wit)
    }

    fn first(&self) -> String {
        std::mem::take(&mut *self.first.borrow_mut())
    }

    fn next(&self, event: String, payload: String) -> Result<String, WitError> {
        let (e, v) = Event::from_wire(&event, &payload).map_err(to_wit)?;
        let a = match &mut *self.run.borrow_mut() {
            Run::One(r) => r.next(e, v),
            Run::Skill(r) => r.next(e, v),
        };
        a.map(|a| a.to_json()).map_err(to_wit)
    }
}

/// `run-artifact`'s host: the `handlers` import and the skill store.
struct Host<'a> {
    skill: Value,
    store: Option<&'a super::skills::StoreResource>,
}

impl RunHost for Host<'_> {
    fn load(&mut self, id: &str) -> crate::error::Result<Option<Value>> {
        let inline = self
            .skill
            .get("artifacts")
            .and_then(Value::as_array)
            .and_then(|l| {
                l.iter().find(|a| {
                    a.get("id").and_then(Value::as_str) == Some(id) && a.get("content").is_some()
                })
            })
            .cloned();
        match (inline, self.store) {
            (Some(a), _) => Ok(Some(a)),
            (None, Some(s)) => Ok(s.tables().get_artifact(id)?.map(|a| a.to_value())),
            (None, None) => Ok(None),
        }
    }

    fn call(
        &mut self,
        executor: &str,
        kind: Option<&str>,
        request: &Value,
    ) -> Result<Value, String> {
        let text = request.json_text();
        let out = match (executor, kind) {
            ("model", _) => handlers::complete(&text)?,
            ("handler", Some(k)) => handlers::execute(k, &text)?,
            (e, _) => handlers::execute(e, &text)?,
        };
        serde_json::from_str(&out).map_err(|e| format!("the host's answer is not JSON: {e}"))
    }

    fn time(&mut self) -> (String, f64) {
        let ms = handlers::now_ms();
        (crate::artifact_run::iso_time(ms), ms)
    }

    fn trace(&mut self, _key: &str, row: &Value) -> crate::error::Result<()> {
        if let (Some(s), Value::Object(r)) = (self.store, row) {
            s.tables_mut().put_trace(r)?;
        }
        Ok(())
    }
}

impl Guest for Component {
    type ArtifactRun = ArtifactRunResource;

    fn run_artifact(
        options: String,
        artifacts: Option<String>,
        store: Option<wit::SkillStoreBorrow<'_>>,
    ) -> Result<String, WitError> {
        let run = || -> crate::error::Result<String> {
            let store = store
                .as_ref()
                .map(|s| s.get::<super::skills::StoreResource>());
            // A skill named by its name is read from the store.
            let mut v =
                crate::wire::json_value(&options, "the run options", ErrorKind::InvalidOptions)?;
            if let (Some(Value::String(name)), Some(s)) = (v.get("skill").cloned(), store) {
                let skill = s.tables().get_by_name(&name)?.ok_or_else(|| {
                    Error::new(
                        ErrorKind::NotFound,
                        format!("no skill `{name}` in the store"),
                    )
                    .with("skill", name.as_str())
                })?;
                v["skill"] = skill.to_value();
            }
            let (o, names) = run_inputs(&v.json_text(), artifacts)?;
            let mut host = Host {
                skill: o.skill.clone(),
                store,
            };
            crate::artifact_run::run(o, names, &mut host).map(|r| r.json_text())
        };
        run().map_err(to_wit)
    }

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
            if let Some(schema) = &parts.output {
                options_in.settings =
                    wire::settings_with_output(options_in.settings.take(), schema)?;
            }
            lowered(&msg, options_in)
        };
        run().map_err(to_wit)
    }

    fn lower_model_request(
        request: String,
        mut options_in: wl::LowerOptions,
    ) -> Result<wl::Lowered, WitError> {
        let run = || -> crate::error::Result<wl::Lowered> {
            let parts = wire::model_request_lowering(&request, None)?;
            let msg = UserMessage::from_json(&parts.message_json())?;
            options_in.system = parts.system(options_in.system.take());
            options_in.settings = parts.settings(options_in.settings.take())?;
            lowered(&msg, options_in)
        };
        run().map_err(to_wit)
    }

    fn model_answer(turn: String, model: Option<String>) -> Result<String, WitError> {
        wire::model_answer(&turn, model.as_deref()).map_err(to_wit)
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

    fn verify_invocation(
        invocation: String,
        skill: String,
        memory: String,
    ) -> Result<String, WitError> {
        crate::composer::replay::verify_json(&invocation, &skill, &memory).map_err(to_wit)
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
}

/// A message lowered with the WIT options (what `lower-composition` and
/// `lower-model-request` answer).
fn lowered(msg: &UserMessage, options_in: wl::LowerOptions) -> crate::error::Result<wl::Lowered> {
    let (opts, table) = options(options_in)?;
    let out = lower::lower(msg, &opts, &table)?;
    Ok(wl::Lowered {
        body: out.body,
        report: out.report.to_json(),
    })
}
