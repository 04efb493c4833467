//! Running a skill's artifacts as a machine without I/O: [`ArtifactRun`] runs one artifact
//! through its handler, [`SkillRun`] runs a skill's artifacts in order. The run decides every
//! step the seed's dispatcher takes — the artifact picked (its variant for the model), the
//! route (context, model, code, DSPy, the host's own handler), the DSPy manifest check and
//! the fallback template when DSPy is missing or fails, the render, the assertions (semantic
//! ones asked of the model), the trace row and its key, the result and its errors — and asks
//! the host for each piece of I/O with an [`Action`]: load an artifact, call the model or an
//! executor, read the clock, store the trace. The npm package's `runArtifact` / `runSkill` and
//! the component's `artifact-run` / `run-artifact` drive it.
//!
//! ```text
//!  pick ─► route ─► [fallback] ─► Load ─► [Manifest ─► fallback? ─► Load] ─► render ─► Time
//!    ─► Dspy | Model | Handler | Code (a failed Dspy: fallback ─► Load ─► Model)
//!    ─► assertions (Ask each semantic one) ─► Time ─► Trace ─► Done
//! ```

use crate::dispatch::assertion::{self, Report};
use crate::dispatch::{self, trace, Executors, Prepared, Route};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::skill::template::Limits;
use crate::skill::{ArtifactKind, ArtifactRef, SkillArtifact};
use crate::wire::json_value;
use serde_json::{Map, Value};

/// What the host can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Host {
    /// The model, the code sandbox, the DSPy executor and the kinds it handles itself.
    pub executors: Executors,
    /// The DSPy executor has a manifest mode (the templates it offers, its version).
    pub manifest: bool,
}

/// One artifact run's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// The skill or its summary (its `artifacts` are references, loaded when they run).
    pub skill: Value,
    /// The artifact's name or id (`None`: the skill's first by the run order).
    pub artifact: Option<String>,
    /// The model id: picks an artifact's model variant; passed to the model.
    pub model_id: Option<String>,
    /// What the host can run.
    pub host: Host,
    /// The invocation's parameters.
    pub parameters: Map<String, Value>,
    /// The caller's context: what templates render against is the parameters with the
    /// context over them.
    pub context: Map<String, Value>,
    /// The trace's session.
    pub session_id: String,
    /// `{ input_per_mtok, output_per_mtok }` for the trace's estimated cost.
    pub pricing: Option<Value>,
    /// The render's bounds.
    pub limits: Limits,
}

fn invalid(path: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        format!("`{path}` must be {what}"),
    )
    .at(path)
}

impl RunOptions {
    /// Reads `{ skill, artifact?, model_id?, executors?: { model?, code?, dspy?, manifest?,
    /// handlers?: [kind] }, parameters?, context?, session_id?, pricing?, render_limits? }`.
    pub fn from_value(v: Value) -> Result<RunOptions> {
        let Value::Object(mut o) = v else {
            return Err(invalid("$", "an object"));
        };
        let skill = match o.remove("skill") {
            Some(s @ Value::Object(_)) => s,
            _ => return Err(invalid("skill", "a skill or its summary (an object)")),
        };
        let mut text = |k: &str| match o.remove(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(k, "a string")),
        };
        let artifact = text("artifact")?;
        let model_id = text("model_id")?;
        let session_id = text("session_id")?.unwrap_or_else(|| "default".into());
        let mut host = Host::default();
        match o.remove("executors") {
            None | Some(Value::Null) => {}
            Some(Value::Object(e)) => {
                let on = |k: &str| e.get(k).and_then(Value::as_bool).unwrap_or(false);
                host.executors.model = on("model");
                host.executors.code = on("code");
                host.executors.dspy = on("dspy");
                host.manifest = on("manifest");
                let kinds: Vec<&str> = e
                    .get("handlers")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                host.executors.handlers = Executors::handler_bits(kinds)?;
            }
            Some(_) => return Err(invalid("executors", "an object")),
        }
        let mut object = |k: &str| match o.remove(k) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(invalid(k, "an object")),
        };
        let parameters = object("parameters")?;
        let context = object("context")?;
        let pricing = o.remove("pricing").filter(|p| !p.is_null());
        let limits = match o.remove("render_limits") {
            None | Some(Value::Null) => Limits::default(),
            Some(Value::Object(m)) => {
                Limits::from_map(m, "render_limits", ErrorKind::InvalidRequest)?
            }
            Some(_) => return Err(invalid("render_limits", "an object")),
        };
        if let Some(k) = o.keys().next() {
            return Err(Error::new(ErrorKind::InvalidOptions, "unknown run option")
                .at(k.as_str())
                .with(
                    "known",
                    "skill, artifact, model_id, executors, parameters, context, session_id, pricing, render_limits",
                ));
        }
        Ok(RunOptions {
            skill,
            artifact,
            model_id,
            host,
            parameters,
            context,
            session_id,
            pricing,
            limits,
        })
    }
}

/// What the host tells the run; each comes with a payload (a JSON value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The artifact of [`Action::Load`] (`null`: not stored).
    Loaded,
    /// What the executor, handler or model answered (any JSON; the model: a string or
    /// `{ text, usage?, model? }`).
    Output,
    /// The executor, handler or model failed; the payload is its message.
    Failed,
    /// The clock: `{ now, ms }` — the time as the trace stores it (an ISO 8601 string) and
    /// a monotonic reading in milliseconds.
    Time,
    /// The trace of [`Action::Trace`] is stored (or the host keeps none).
    Stored,
}

/// What the run asks the host to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Load the artifact with this id; answer [`Event::Loaded`].
    Load {
        /// The artifact id.
        id: String,
    },
    /// Ask the DSPy executor's manifest mode; answer [`Event::Output`] or [`Event::Failed`].
    Manifest,
    /// Read the clock; answer [`Event::Time`].
    Time,
    /// Run a call: `executor` is `model` (a prompt: `{ purpose, prompt, artifact, model? }`;
    /// `purpose` is `artifact`, or `assertion` for a semantic question), `code`
    /// (`{ code, language, artifact, parameters }`), `dspy` (the DSPy call), or `handler`
    /// (the host's handler of `kind`: `{ kind, input, artifact, parameters, metadata }`);
    /// answer [`Event::Output`] or [`Event::Failed`].
    Call {
        /// `model`, `code`, `dspy` or `handler`.
        executor: &'static str,
        /// For `handler`: the artifact kind.
        kind: Option<&'static str>,
        /// What the executor receives.
        request: Value,
    },
    /// Store the trace row under `key` (where the host keeps traces); answer
    /// [`Event::Stored`].
    Trace {
        /// The row's key in the traces table.
        key: String,
        /// The row.
        row: Value,
    },
    /// The run is over: its result, or its error (whose details hold the trace, when one
    /// was recorded).
    Done(std::result::Result<Value, Error>),
}

impl Action {
    /// The action as JSON text: `{ do: "load", id }`, `{ do: "manifest" }`, `{ do: "time" }`,
    /// `{ do: "call", executor, kind?, request }`, `{ do: "trace", key, row }`, `{ do:
    /// "done", result }` or `{ do: "done", error }` (the error's wire form).
    pub fn to_json(&self) -> String {
        let mut o = crate::json_text::ObjectText::new(256);
        match self {
            Action::Load { id } => {
                o.str("do", "load");
                o.str("id", id);
            }
            Action::Manifest => o.str("do", "manifest"),
            Action::Time => o.str("do", "time"),
            Action::Call {
                executor,
                kind,
                request,
            } => {
                o.str("do", "call");
                o.str("executor", executor);
                if let Some(k) = kind {
                    o.str("kind", k);
                }
                o.value("request", request);
            }
            Action::Trace { key, row } => {
                o.str("do", "trace");
                o.str("key", key);
                o.value("row", row);
            }
            Action::Done(Ok(v)) => {
                o.str("do", "done");
                o.value("result", v);
            }
            Action::Done(Err(e)) => {
                o.str("do", "done");
                o.raw("error", &e.to_json());
            }
        }
        o.finish()
    }
}

impl Event {
    /// An event from its name (`loaded`, `output`, `failed`, `time`, `stored`) and payload
    /// text (JSON; a message for `failed`; empty for none).
    pub fn from_wire(name: &str, payload: &str) -> Result<(Event, Value)> {
        let e = match name {
            "loaded" => Event::Loaded,
            "output" => Event::Output,
            "failed" => Event::Failed,
            "time" => Event::Time,
            "stored" => Event::Stored,
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    format!("`{name}` is not an artifact run event"),
                )
                .with("known", "loaded, output, failed, time, stored"))
            }
        };
        let v = match e {
            Event::Failed => Value::String(payload.to_owned()),
            _ if payload.is_empty() => Value::Null,
            _ => json_value(payload, "the event's payload", ErrorKind::InvalidRequest)?,
        };
        Ok((e, v))
    }
}

/// Where the run is: which event it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The artifact to run; `then` says what follows.
    Load(AfterLoad),
    Manifest,
    Started,
    Running,
    Asking,
    Finished,
    Trace,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterLoad {
    /// The first load: the manifest check (DSPy), then the render.
    First,
    /// After the manifest sent the run to the fallback: the render.
    Prepare,
    /// After a failed DSPy run: the render, then the fallback's route.
    Retry,
}

/// One artifact run (see the module's documentation).
#[derive(Debug, Clone)]
pub struct ArtifactRun {
    o: RunOptions,
    /// What templates render against (and handlers receive as `parameters`).
    scope: Map<String, Value>,
    refs: Vec<ArtifactRef>,
    phase: Phase,
    r: ArtifactRef,
    route: Route,
    replaced: Option<ArtifactRef>,
    reason: Option<String>,
    art: Option<SkillArtifact>,
    prepared: Option<Prepared>,
    started_at: String,
    t0: f64,
    output: Option<String>,
    usage: Option<Value>,
    model: Option<String>,
    failure: Option<Error>,
    report: Option<Report>,
    answers: Map<String, Value>,
    asking: Vec<usize>,
    row: Option<Value>,
}

/// `{ purpose, prompt, artifact, model? }` for the model.
fn prompt(purpose: &str, text: &str, artifact: &Value, model: Option<&str>) -> Value {
    let mut o = Map::new();
    o.insert("purpose".into(), purpose.into());
    o.insert("prompt".into(), text.into());
    o.insert("artifact".into(), artifact.clone());
    if let Some(m) = model {
        o.insert("model".into(), m.into());
    }
    Value::Object(o)
}

/// A host's answer as output text: a string stays, anything else is written as JSON.
fn output_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.json_text(),
    }
}

impl ArtifactRun {
    /// Starts a run: picks and routes the artifact, and asks for it to be loaded (or fails
    /// at once: `NotFound`, `NoHandler`, `NoModelAdapter`, `NoExecutor`, …).
    pub fn start(o: RunOptions) -> Result<(ArtifactRun, Action)> {
        if let Some(n) = &o.artifact {
            known_kind(&o.skill, n)?;
        }
        let refs = refs_of(&o.skill)?;
        let name = match &o.artifact {
            Some(n) => n.clone(),
            None => dispatch::run_order(&refs)
                .into_iter()
                .next()
                .unwrap_or_default(),
        };
        let r = pick(&o, &refs, &name, None)?;
        let mut scope = o.parameters.clone();
        scope.extend(o.context.clone());
        let mut run = ArtifactRun {
            scope,
            route: Route::Context,
            r,
            refs,
            o,
            phase: Phase::Load(AfterLoad::First),
            replaced: None,
            reason: None,
            art: None,
            prepared: None,
            started_at: String::new(),
            t0: 0.0,
            output: None,
            usage: None,
            model: None,
            failure: None,
            report: None,
            answers: Map::new(),
            asking: Vec::new(),
            row: None,
        };
        run.model = run.o.model_id.clone();
        run.route = run.route_of()?;
        if let Route::Fallback(f) = run.route.clone() {
            run.fall_back(f, dispatch::NO_DSPY_EXECUTOR.into())?;
        }
        let id = run.r.id.clone();
        Ok((run, Action::Load { id }))
    }

    fn route_of(&self) -> Result<Route> {
        dispatch::route(
            self.r.kind,
            &self.r.name,
            self.r.fallback.as_deref(),
            self.o.host.executors,
        )
    }

    /// The `dspy_module`'s fallback template stands in, for `reason`.
    fn fall_back(&mut self, fallback: String, reason: String) -> Result<()> {
        let next = pick(
            &self.o,
            &self.refs,
            &fallback,
            Some(ArtifactKind::PromptTemplate),
        )?;
        self.replaced = Some(std::mem::replace(&mut self.r, next));
        self.reason = Some(reason);
        self.route = self.route_of()?;
        Ok(())
    }

    /// The fallback after the DSPy executor failed with `failure`.
    fn after_failure(&mut self, failure: &str) -> Result<()> {
        let (f, reason) = dispatch::fallback_after_failure(
            self.r.kind,
            &self.r.name,
            self.r.fallback.as_deref(),
            failure,
        )?;
        self.fall_back(f, reason)
    }

    /// The next action, given what the host did (`event`, with its `payload`). An event the
    /// run does not wait for is `InvalidRequest` and changes nothing; any other error ends the
    /// run as [`Action::Done`].
    pub fn next(&mut self, event: Event, payload: Value) -> Result<Action> {
        let want = match self.phase {
            Phase::Load(_) => Event::Loaded,
            Phase::Started | Phase::Finished => Event::Time,
            Phase::Trace => Event::Stored,
            Phase::Manifest | Phase::Running | Phase::Asking => {
                if matches!(event, Event::Output | Event::Failed) {
                    event
                } else {
                    Event::Output
                }
            }
            Phase::Done => {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    "the artifact run is done",
                ))
            }
        };
        if event != want {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("the artifact run waits for {want:?}, not {event:?}"),
            ));
        }
        // Past the protocol check, an error ends the run: it is the run's outcome.
        match self.step(event, payload) {
            Ok(a) => Ok(a),
            Err(e) => Ok(self.fail_now(e)),
        }
    }

    fn step(&mut self, event: Event, payload: Value) -> Result<Action> {
        match self.phase {
            Phase::Load(after) => self.loaded(after, payload),
            Phase::Manifest => {
                let failure = match event {
                    Event::Failed => Some(format!("manifest: {}", output_text(payload))),
                    _ => self
                        .art
                        .as_ref()
                        .and_then(|a| dispatch::unsupported_template(&a.content, &payload)),
                };
                match failure {
                    Some(f) => {
                        self.after_failure(&f).map_err(|e| self.end(e))?;
                        self.phase = Phase::Load(AfterLoad::Prepare);
                        Ok(Action::Load {
                            id: self.r.id.clone(),
                        })
                    }
                    None => self.prepare(),
                }
            }
            Phase::Started => {
                self.started_at = match payload.get("now") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if !v.is_null() => v.json_text(),
                    _ => String::new(),
                };
                self.t0 = payload.get("ms").and_then(Value::as_f64).unwrap_or(0.0);
                Ok(self.execute())
            }
            Phase::Running => Ok(self.ran(event, payload)),
            Phase::Asking => {
                let answer = self.answer(event, payload, "assertion");
                match answer {
                    Err(e) => Ok(self.fail_now(e)),
                    Ok(text) => {
                        let i = self.asking.remove(0);
                        self.answers.insert(i.to_string(), Value::String(text));
                        Ok(self.ask_next())
                    }
                }
            }
            Phase::Finished => {
                self.row = Some(self.trace_row(&payload)?);
                let row = self.row.clone().unwrap_or(Value::Null);
                let key = match &row {
                    Value::Object(m) => crate::store::traces::key(m),
                    _ => String::new(),
                };
                self.phase = Phase::Trace;
                Ok(Action::Trace { key, row })
            }
            Phase::Trace => Ok(self.finish()),
            Phase::Done => Ok(Action::Done(Err(Error::new(
                ErrorKind::Internal,
                "the run is done",
            )))),
        }
    }

    /// An error that ends the run before any trace.
    fn end(&mut self, e: Error) -> Error {
        self.phase = Phase::Done;
        e
    }

    fn fail_now(&mut self, e: Error) -> Action {
        self.phase = Phase::Done;
        Action::Done(Err(e))
    }

    fn loaded(&mut self, after: AfterLoad, payload: Value) -> Result<Action> {
        let art = if payload.is_null() {
            None
        } else {
            Some(dispatch::artifact_from(&payload))
        };
        let art = match art {
            Some(Ok(a)) => a,
            Some(Err(e)) => return Err(self.end(e)),
            None => {
                let e = Error::new(
                    ErrorKind::NotFound,
                    format!("the artifact `{}` is not stored", self.r.name),
                )
                .with("artifact", self.r.id.as_str());
                if after == AfterLoad::Retry {
                    // Inside the execution: the failure is traced.
                    self.failure = Some(e);
                    return Ok(self.finishing());
                }
                return Err(self.end(e));
            }
        };
        self.art = Some(art);
        match after {
            AfterLoad::First if self.route == Route::Dspy && self.o.host.manifest => {
                self.phase = Phase::Manifest;
                Ok(Action::Manifest)
            }
            AfterLoad::Retry => match self.render() {
                Ok(()) => Ok(self.execute()),
                Err(e) => {
                    self.failure = Some(e);
                    Ok(self.finishing())
                }
            },
            _ => self.prepare(),
        }
    }

    /// Renders the artifact (semantic assertions need a model: checked first), then reads the
    /// clock.
    fn prepare(&mut self) -> Result<Action> {
        let semantic = self
            .art
            .as_ref()
            .and_then(|a| a.metadata.get("assertions"))
            .and_then(Value::as_array)
            .is_some_and(|l| {
                l.iter()
                    .any(|a| a.get("type").and_then(Value::as_str) == Some("semantic"))
            });
        if semantic && !self.o.host.executors.model {
            let name = self.art.as_ref().map_or("", |a| a.name.as_str());
            return Err(self.end(
                Error::new(
                    ErrorKind::NoModelAdapter,
                    format!("the artifact `{name}` has semantic assertions: pass a model `adapter` to evaluate them"),
                )
                .with("artifact", name),
            ));
        }
        self.render().map_err(|e| self.end(e))?;
        self.phase = Phase::Started;
        Ok(Action::Time)
    }

    fn render(&mut self) -> Result<()> {
        let Some(art) = &self.art else {
            return Err(Error::new(ErrorKind::Internal, "no artifact to render"));
        };
        let ctx = Value::Object(self.scope.clone());
        self.prepared = Some(dispatch::prepare(
            art,
            self.route.clone(),
            &ctx,
            self.replaced.clone(),
            self.o.limits,
        )?);
        Ok(())
    }

    fn used(&self) -> Value {
        self.prepared
            .as_ref()
            .map_or(Value::Null, |p| p.artifact.to_value())
    }

    /// The executor of the route, or the output at once (context).
    fn execute(&mut self) -> Action {
        let Some(p) = &self.prepared else {
            return self.fail_now(Error::new(ErrorKind::Internal, "not prepared"));
        };
        let art = self.art.as_ref();
        let parameters = Value::Object(self.scope.clone());
        let (executor, kind, request) = match self.route {
            Route::Context => {
                self.output = Some(p.input.clone());
                return self.assert();
            }
            Route::Dspy => ("dspy", None, p.dspy.clone().unwrap_or(Value::Null)),
            Route::Model => (
                "model",
                None,
                prompt(
                    "artifact",
                    &p.input,
                    &self.used(),
                    self.o.model_id.as_deref(),
                ),
            ),
            Route::Handler => {
                let kind = art.map_or(ArtifactKind::Description, |a| a.kind);
                let mut o = Map::new();
                o.insert("kind".into(), kind.name().into());
                o.insert("input".into(), p.input.clone().into());
                o.insert("artifact".into(), self.used());
                o.insert("parameters".into(), parameters);
                o.insert(
                    "metadata".into(),
                    Value::Object(art.map(|a| a.metadata.clone()).unwrap_or_default()),
                );
                ("handler", Some(kind.name()), Value::Object(o))
            }
            Route::Code => {
                let mut o = Map::new();
                o.insert("code".into(), p.input.clone().into());
                o.insert(
                    "language".into(),
                    art.and_then(|a| a.metadata.get("language"))
                        .cloned()
                        .unwrap_or(Value::Null),
                );
                o.insert("artifact".into(), self.used());
                o.insert("parameters".into(), parameters);
                ("code", None, Value::Object(o))
            }
            Route::Fallback(_) => {
                return self.fail_now(Error::new(ErrorKind::Internal, "an unresolved fallback"))
            }
        };
        self.phase = Phase::Running;
        Action::Call {
            executor,
            kind,
            request,
        }
    }

    /// The model's answer as text (with its usage and model id), or the adapter's error.
    fn answer(&mut self, event: Event, payload: Value, purpose: &str) -> Result<String> {
        let failed = |m: String| Error::new(ErrorKind::AdapterFailed, m).with("purpose", purpose);
        match (event, payload) {
            (Event::Failed, m) => Err(failed(format!(
                "the model adapter failed: {}",
                output_text(m)
            ))),
            (_, Value::String(s)) => Ok(s),
            (_, Value::Object(mut o)) if o.get("text").is_some_and(Value::is_string) => {
                if purpose == "artifact" {
                    self.usage = o.remove("usage").filter(|u| !u.is_null());
                    if let Some(Value::String(m)) = o.remove("model") {
                        self.model = Some(m);
                    }
                }
                Ok(output_text(o.remove("text").unwrap_or(Value::Null)))
            }
            _ => Err(failed(
                "the model adapter must return a string or `{ text, usage?, model? }`".into(),
            )),
        }
    }

    /// What the executor of the route answered.
    fn ran(&mut self, event: Event, payload: Value) -> Action {
        let name = self.art.as_ref().map_or(String::new(), |a| a.name.clone());
        match self.route {
            Route::Dspy => match event {
                Event::Failed => {
                    // A failed DSPy run degrades to the fallback template (AdapterFailed
                    // without one).
                    match self.after_failure(&output_text(payload)) {
                        Ok(()) => {
                            self.phase = Phase::Load(AfterLoad::Retry);
                            return Action::Load {
                                id: self.r.id.clone(),
                            };
                        }
                        Err(e) => self.failure = Some(e),
                    }
                }
                _ => self.output = Some(output_text(payload)),
            },
            Route::Model => match self.answer(event, payload, "artifact") {
                Ok(t) => self.output = Some(t),
                Err(e) => self.failure = Some(e),
            },
            Route::Handler => match event {
                Event::Failed => {
                    let kind = self.art.as_ref().map_or("", |a| a.kind.name());
                    self.failure = Some(
                        Error::new(
                            ErrorKind::AdapterFailed,
                            format!("the {kind} handler failed: {}", output_text(payload)),
                        )
                        .with("artifact", name.as_str())
                        .with("kind", kind),
                    );
                }
                _ => self.output = Some(output_text(payload)),
            },
            _ => match event {
                Event::Failed => {
                    self.failure = Some(
                        Error::new(
                            ErrorKind::AdapterFailed,
                            format!("the code executor failed: {}", output_text(payload)),
                        )
                        .with("artifact", name.as_str()),
                    );
                }
                _ => self.output = Some(output_text(payload)),
            },
        }
        if self.failure.is_some() {
            return self.finishing();
        }
        self.assert()
    }

    /// Checks the assertions; semantic ones are asked of the model first.
    fn assert(&mut self) -> Action {
        let report = self.evaluate();
        self.asking = report.pending().iter().map(|(i, _)| *i).collect();
        self.report = Some(report);
        self.ask_next()
    }

    fn evaluate(&self) -> Report {
        let a = self.art.as_ref().and_then(|a| a.metadata.get("assertions"));
        assertion::evaluate(a, self.output.as_deref().unwrap_or(""), &self.answers)
    }

    fn ask_next(&mut self) -> Action {
        let Some(&i) = self.asking.first() else {
            if !self.answers.is_empty() {
                self.report = Some(self.evaluate());
            }
            return self.finishing();
        };
        let question = self
            .report
            .as_ref()
            .and_then(|r| r.outcomes.iter().find(|o| o.index == i))
            .and_then(|o| o.question.clone())
            .unwrap_or_default();
        self.phase = Phase::Asking;
        Action::Call {
            executor: "model",
            kind: None,
            request: prompt(
                "assertion",
                &question,
                &self.used(),
                self.o.model_id.as_deref(),
            ),
        }
    }

    /// Reads the clock for the trace.
    fn finishing(&mut self) -> Action {
        self.phase = Phase::Finished;
        Action::Time
    }

    /// The trace row of this run, from the host's record of it.
    fn trace_row(&self, time: &Value) -> Result<Value> {
        let art = self.art.as_ref();
        let mut o = Map::new();
        let mut put = |k: &str, v: Value| {
            if !v.is_null() {
                o.insert(k.into(), v);
            }
        };
        let s = |x: Option<&str>| x.map_or(Value::Null, Value::from);
        put("session_id", self.o.session_id.clone().into());
        put("skill_id", s(art.map(|a| a.skill_id.as_str())));
        put("artifact_id", s(art.map(|a| a.id.as_str())));
        put("artifact_kind", s(art.map(|a| a.kind.name())));
        put(
            "rendered_input",
            s(self.prepared.as_ref().map(|p| p.input.as_str())),
        );
        put("raw_output", s(self.output.as_deref()));
        put(
            "error",
            self.failure.as_ref().map_or(Value::Null, |e| {
                Value::String(format!("{}: {}", e.kind().code(), e.message()))
            }),
        );
        put("started_at", self.started_at.clone().into());
        let completed = match time.get("now") {
            Some(Value::String(t)) => Value::String(t.clone()),
            Some(v) if !v.is_null() => Value::String(v.json_text()),
            _ => Value::Null,
        };
        put("completed_at", completed);
        let ms = time.get("ms").and_then(Value::as_f64).unwrap_or(self.t0);
        put(
            "duration_ms",
            ((ms - self.t0).max(0.0).round() as u64).into(),
        );
        let tokens = |k: &str| {
            self.usage
                .as_ref()
                .and_then(|u| u.get(k))
                .cloned()
                .unwrap_or(Value::Null)
        };
        put("input_tokens", tokens("input_tokens"));
        put("output_tokens", tokens("output_tokens"));
        if self.route == Route::Model {
            put("model_id", s(self.model.as_deref()));
        }
        put("pricing", self.o.pricing.clone().unwrap_or(Value::Null));
        let r = self.report.as_ref().filter(|_| self.failure.is_none());
        put("assertions_run", r.map_or(0, Report::run).into());
        put("assertions_passed", r.map_or(0, Report::passed).into());
        if let Some(r) = r {
            put("assertions", r.to_value()["outcomes"].clone());
        }
        put("route", self.route.name().into());
        put(
            "fallback_from",
            s(self.replaced.as_ref().map(|x| x.id.as_str())),
        );
        put("fallback_reason", s(self.reason.as_deref()));
        Ok(Value::Object(trace::row(Value::Object(o))?))
    }

    /// The result, or the error (with the trace in its details).
    fn finish(&mut self) -> Action {
        self.phase = Phase::Done;
        let row = self.row.clone().unwrap_or(Value::Null);
        if let Some(e) = self.failure.take() {
            return Action::Done(Err(e.with("trace", row)));
        }
        let report = self.report.clone().unwrap_or_default();
        let output = self.output.clone().unwrap_or_default();
        let name = self.art.as_ref().map_or("", |a| a.name.as_str());
        if let Some(o) = report.hard_failure() {
            let e = Error::new(
                ErrorKind::AssertionFailed,
                format!(
                    "the {} assertion on `{name}` failed: {}",
                    o.kind,
                    o.explanation.as_deref().unwrap_or("")
                ),
            )
            .with("assertion", o.to_value())
            .with("artifact", name)
            .with("output", output.as_str())
            .with("trace", row);
            return Action::Done(Err(e));
        }
        let p = self.prepared.as_ref();
        let mut o = Map::new();
        o.insert("output".into(), output.into());
        o.insert("route".into(), self.route.name().into());
        o.insert("artifact".into(), self.used());
        o.insert(
            "replaced".into(),
            p.and_then(|p| p.replaced.as_ref())
                .map_or(Value::Null, ArtifactRef::to_value),
        );
        o.insert(
            "fallback_reason".into(),
            self.reason.clone().map_or(Value::Null, Value::String),
        );
        let warnings: Vec<Value> = report
            .outcomes
            .iter()
            .filter(|o| o.status == "failed" && o.severity == "soft")
            .map(assertion::Outcome::to_value)
            .collect();
        o.insert("assertions".into(), report.to_value());
        o.insert("warnings".into(), Value::Array(warnings));
        o.insert("trace".into(), row);
        Action::Done(Ok(Value::Object(o)))
    }
}

/// The reference named `name` for the run's model, or `NotFound` / `NoHandler`.
fn pick(
    o: &RunOptions,
    refs: &[ArtifactRef],
    name: &str,
    kind: Option<ArtifactKind>,
) -> Result<ArtifactRef> {
    pick_ref(
        &o.skill,
        refs,
        name,
        kind,
        o.model_id.as_deref().unwrap_or(""),
    )
}

/// The artifact references of a skill or its summary.
pub fn refs_of(skill: &Value) -> Result<Vec<ArtifactRef>> {
    let id = skill
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let list = crate::store::skills::read_summaries(&[(id, skill.json_text())])?;
    Ok(list
        .into_iter()
        .next()
        .map(|s| s.artifacts)
        .unwrap_or_default())
}

/// `NoHandler` when the artifact `name` of `skill` is of a kind this library has no handler
/// for (a skill written by a newer version, or built by hand): checked before the skill's
/// references are read, which refuse such a kind.
pub fn known_kind(skill: &Value, name: &str) -> Result<()> {
    for a in skill
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| a.get(k).and_then(Value::as_str);
        if (s("name") == Some(name) || s("id") == Some(name))
            && s("kind").is_some_and(|k| ArtifactKind::parse(k).is_none())
        {
            return Err(dispatch::no_handler(s("kind").unwrap_or(""), name));
        }
    }
    Ok(())
}

/// The reference to run among `refs` (of `skill`, a skill or its summary): `name` an
/// artifact name or id, `kind` an optional kind restriction, `model` the model id for
/// variant selection; `NotFound` when there is none.
pub fn pick_ref(
    skill: &Value,
    refs: &[ArtifactRef],
    name: &str,
    kind: Option<ArtifactKind>,
    model: &str,
) -> Result<ArtifactRef> {
    let skill_name = skill.get("name").and_then(Value::as_str).unwrap_or("");
    dispatch::pick(refs, name, kind, model)
        .cloned()
        .ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!(
                    "the skill `{skill_name}` has no {}artifact `{name}`",
                    kind.map(|k| format!("{} ", k.name())).unwrap_or_default()
                ),
            )
            .with("artifact", name)
        })
}

/// A skill's artifacts run in order (the seed's run order by default): each later template
/// sees the earlier outputs as `outputs`; a hard assertion failure stops it.
#[derive(Debug, Clone)]
pub struct SkillRun {
    base: RunOptions,
    names: Vec<String>,
    at: usize,
    outputs: Map<String, Value>,
    results: Vec<Value>,
    run: Option<ArtifactRun>,
}

impl SkillRun {
    /// Starts `names` (`None`: the skill's run order) of `base.skill`.
    pub fn start(base: RunOptions, names: Option<Vec<String>>) -> Result<(SkillRun, Action)> {
        let names = match names {
            Some(n) => n,
            None => dispatch::run_order(&refs_of(&base.skill)?),
        };
        let mut run = SkillRun {
            base,
            names,
            at: 0,
            outputs: Map::new(),
            results: Vec::new(),
            run: None,
        };
        let a = run.begin()?;
        Ok((run, a))
    }

    fn begin(&mut self) -> Result<Action> {
        let Some(name) = self.names.get(self.at) else {
            return Ok(self.done());
        };
        // The caller's context, the parameters over it, and the outputs so far.
        let mut o = self.base.clone();
        o.artifact = Some(name.clone());
        o.context.extend(std::mem::take(&mut o.parameters));
        o.context
            .insert("outputs".into(), Value::Object(self.outputs.clone()));
        let (run, a) = ArtifactRun::start(o).map_err(|e| self.with_results(e))?;
        self.run = Some(run);
        self.pass(a)
    }

    fn with_results(&self, e: Error) -> Error {
        e.with("results", Value::Array(self.results.clone()))
    }

    fn pass(&mut self, a: Action) -> Result<Action> {
        match a {
            Action::Done(Ok(r)) => {
                let name = self.names.get(self.at).cloned().unwrap_or_default();
                self.outputs
                    .insert(name, r.get("output").cloned().unwrap_or(Value::Null));
                self.results.push(r);
                self.at += 1;
                self.begin()
            }
            Action::Done(Err(e)) => Ok(Action::Done(Err(self.with_results(e)))),
            other => Ok(other),
        }
    }

    fn done(&self) -> Action {
        let warnings: Vec<Value> = self
            .results
            .iter()
            .flat_map(|r| {
                r.get("warnings")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        let mut o = Map::new();
        o.insert("outputs".into(), Value::Object(self.outputs.clone()));
        o.insert("results".into(), Value::Array(self.results.clone()));
        o.insert("warnings".into(), Value::Array(warnings));
        Action::Done(Ok(Value::Object(o)))
    }

    /// The next action, as [`ArtifactRun::next`].
    pub fn next(&mut self, event: Event, payload: Value) -> Result<Action> {
        let Some(run) = self.run.as_mut() else {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "the skill run is done",
            ));
        };
        let a = run.next(event, payload).map_err(|e| self.with_results(e))?;
        self.pass(a)
    }
}

/// What a host does for [`run`]: load artifacts, call its model and executors, read its
/// clock, store traces.
pub trait RunHost {
    /// The artifact with this id (its JSON form), or `None` when it is not stored.
    fn load(&mut self, id: &str) -> Result<Option<Value>>;
    /// Calls `executor` (`model`, `code`, `dspy`, `dspy-manifest`, or `handler` with the
    /// artifact `kind`) with `request`: the answer, or the failure's message.
    fn call(
        &mut self,
        executor: &str,
        kind: Option<&str>,
        request: &Value,
    ) -> std::result::Result<Value, String>;
    /// The time: an ISO 8601 string for the trace, and a monotonic reading in milliseconds.
    fn time(&mut self) -> (String, f64);
    /// Stores a trace row under `key` (default: traces are not kept).
    fn trace(&mut self, key: &str, row: &Value) -> Result<()> {
        let _ = (key, row);
        Ok(())
    }
}

/// Runs one artifact (`names`: `None`) or a skill's artifacts (`Some(None)`: its run order;
/// `Some(Some(list))`: these) with `host` doing the I/O: the driver of [`ArtifactRun`] and
/// [`SkillRun`] for Rust hosts. Returns the result, or the run's error.
pub fn run(
    options: RunOptions,
    names: Option<Option<Vec<String>>>,
    host: &mut dyn RunHost,
) -> Result<Value> {
    enum Either {
        One(Box<ArtifactRun>),
        Skill(Box<SkillRun>),
    }
    let (mut machine, mut action) = match names {
        None => {
            let (r, a) = ArtifactRun::start(options)?;
            (Either::One(Box::new(r)), a)
        }
        Some(list) => {
            let (r, a) = SkillRun::start(options, list)?;
            (Either::Skill(Box::new(r)), a)
        }
    };
    loop {
        let answer = |r: std::result::Result<Value, String>| match r {
            Ok(v) => (Event::Output, v),
            Err(m) => (Event::Failed, Value::String(m)),
        };
        let (event, payload) = match action {
            Action::Done(r) => return r,
            Action::Load { id } => (Event::Loaded, host.load(&id)?.unwrap_or(Value::Null)),
            Action::Manifest => answer(host.call("dspy-manifest", None, &Value::Null)),
            Action::Time => {
                let (now, ms) = host.time();
                let mut t = Map::new();
                t.insert("now".into(), now.into());
                t.insert("ms".into(), ms.into());
                (Event::Time, Value::Object(t))
            }
            Action::Call {
                executor,
                kind,
                request,
            } => answer(host.call(executor, kind, &request)),
            Action::Trace { key, row } => {
                host.trace(&key, &row)?;
                (Event::Stored, Value::Null)
            }
        };
        action = match &mut machine {
            Either::One(r) => r.next(event, payload)?,
            Either::Skill(r) => r.next(event, payload)?,
        };
    }
}

/// Epoch milliseconds as an ISO 8601 time in UTC (`2026-11-27T12:08:03.120Z`), for hosts
/// whose clock gives milliseconds.
pub fn iso_time(ms: f64) -> String {
    let ms = if ms.is_finite() {
        ms.max(0.0) as i64
    } else {
        0
    };
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::iso_time;

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_795_781_283_120.0), "2026-11-27T12:08:03.120Z");
        assert_eq!(iso_time(951_782_400_000.0), "2000-02-29T00:00:00.000Z");
    }
}
