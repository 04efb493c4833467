//! The call settings: one set for every provider (`model`, `maxOutputTokens`, sampling,
//! `stopSequences`, `seed`, the penalties, `toolChoice`, `parallelToolCalls`, `reasoning`,
//! `output`, `user`, `metadata`, `stream`), read from the options object, and the rules
//! every provider's writer shares: the model's row ([`crate::models`]), the defaults and
//! clamps it gives, reasoning budgets and efforts translated into each other, and the notes
//! that say what was translated, clamped, defaulted or dropped. Each provider writes the
//! settings where it wants them (its dialect's `settings`, in [`crate::provider`]), and its
//! `providerOptions` entry is merged over the finished body last, verbatim.

use crate::body::Json;
use crate::error::{Error, ErrorKind, Result};
use crate::fields::{At, Fields};
use crate::models::{self, Model, Reasoning};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The settings' option names, for an unknown-option error.
pub(crate) const KEYS: &str = "model, maxOutputTokens, temperature, topP, topK, stopSequences, seed, presencePenalty, frequencyPenalty, toolChoice, parallelToolCalls, reasoning, output, user, metadata, stream, providerOptions, modelInfo";

/// Which tool the model must (or may) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    Auto,
    /// No tool.
    None,
    /// Some tool.
    Required,
    /// This tool.
    Tool(String),
}

/// How much the model reasons before it answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReasoningSetting {
    /// `none`, `minimal`, `low`, `medium`, `high`, `xhigh` or `max`.
    pub effort: Option<&'static str>,
    /// A token budget for the reasoning.
    pub budget_tokens: Option<u64>,
    /// Whether the reasoning text (or its summary) comes back.
    pub include: Option<bool>,
}

/// The answer as JSON: following `schema`, or any JSON (JSON mode) without one.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The JSON Schema of the answer.
    pub schema: Option<Value>,
    /// Its name (`^[a-zA-Z0-9_-]{1,64}$`; `response` when not given).
    pub name: String,
    /// What it is, for the model.
    pub description: Option<String>,
    /// Strict adherence, where the provider has it (OpenAI's `strict`, sent only when given:
    /// a strict schema must close every object with `additionalProperties: false`).
    pub strict: Option<bool>,
}

/// The settings that are one value each, written by every provider from its own table (a
/// place for each), in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simple {
    /// The model id.
    Model,
    /// The largest answer, in tokens.
    MaxOutputTokens,
    /// Sampling temperature (0 to 2; Anthropic's range is 0 to 1).
    Temperature,
    /// Nucleus sampling (0 to 1).
    TopP,
    /// Top-k sampling.
    TopK,
    /// Texts that end the answer.
    StopSequences,
    /// A sampling seed.
    Seed,
    /// Presence penalty (-2 to 2).
    PresencePenalty,
    /// Frequency penalty (-2 to 2).
    FrequencyPenalty,
    /// Whether the model may call several tools at once.
    ParallelToolCalls,
    /// An id of the end user, for the provider's abuse checks.
    User,
    /// String metadata stored with the request.
    Metadata,
    /// Whether the answer streams.
    Stream,
}

/// How a simple setting's value is checked.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Count,
    Range(i8, i8),
    Texts,
    Int,
    Flag,
    Strings,
}

/// The simple settings: option name, what it is, how it is checked.
const SIMPLE: [(&str, Simple, Kind); 13] = [
    ("model", Simple::Model, Kind::Text),
    ("maxOutputTokens", Simple::MaxOutputTokens, Kind::Count),
    ("temperature", Simple::Temperature, Kind::Range(0, 2)),
    ("topP", Simple::TopP, Kind::Range(0, 1)),
    ("topK", Simple::TopK, Kind::Count),
    ("stopSequences", Simple::StopSequences, Kind::Texts),
    ("seed", Simple::Seed, Kind::Int),
    (
        "presencePenalty",
        Simple::PresencePenalty,
        Kind::Range(-2, 2),
    ),
    (
        "frequencyPenalty",
        Simple::FrequencyPenalty,
        Kind::Range(-2, 2),
    ),
    ("parallelToolCalls", Simple::ParallelToolCalls, Kind::Flag),
    ("user", Simple::User, Kind::Text),
    ("metadata", Simple::Metadata, Kind::Strings),
    ("stream", Simple::Stream, Kind::Flag),
];

impl Simple {
    /// Its option name (`maxOutputTokens`, …).
    pub fn name(self) -> &'static str {
        SIMPLE[self as usize].0
    }
}

/// Where a provider writes a simple setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A top-level field.
    Top(&'static str),
    /// A field of the provider's generation config object (Gemini `generationConfig`).
    Config(&'static str),
    /// The provider's dialect writes it itself (or leaves it to the URL).
    Own,
    /// The provider has no such setting: dropped, noted.
    No,
}

/// The call settings (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// The simple settings' values, by [`Simple`] (checked).
    values: [Option<Value>; 13],
    /// Which tool the model must call.
    pub tool_choice: Option<ToolChoice>,
    /// Reasoning effort, budget and whether its text comes back.
    pub reasoning: Option<ReasoningSetting>,
    /// The answer as JSON.
    pub output: Option<Output>,
    /// Per provider family (`anthropic`, `openai`, `gemini`), top-level fields merged over
    /// the finished body, verbatim (objects merged key by key).
    pub provider_options: Map<String, Value>,
    /// A description of the model over (or instead of) its row in the table.
    pub model_info: Option<Map<String, Value>>,
}

const EFFORTS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Whether `v` is a value of kind `k`.
fn fits(k: Kind, v: &Value) -> bool {
    match k {
        Kind::Text => v.is_string(),
        Kind::Count => v.as_u64().is_some_and(|n| n >= 1),
        Kind::Range(lo, hi) => v
            .as_f64()
            .is_some_and(|x| (f64::from(lo)..=f64::from(hi)).contains(&x)),
        Kind::Texts => v
            .as_array()
            .is_some_and(|a| a.iter().all(|s| s.as_str().is_some_and(|s| !s.is_empty()))),
        Kind::Int => v.is_i64() || v.is_u64(),
        Kind::Flag => v.is_boolean(),
        Kind::Strings => v
            .as_object()
            .is_some_and(|o| o.values().all(Value::is_string)),
    }
}

fn expected(k: Kind) -> String {
    match k {
        Kind::Text => "a string".into(),
        Kind::Count => "an integer of at least 1".into(),
        Kind::Range(lo, hi) => format!("a number from {} to {}", i32::from(lo), i32::from(hi)),
        Kind::Texts => "a list of non-empty strings".into(),
        Kind::Int => "an integer".into(),
        Kind::Flag => "a boolean".into(),
        Kind::Strings => "an object of strings".into(),
    }
}

impl Settings {
    /// The value of a simple setting, if given.
    pub fn get(&self, key: Simple) -> Option<&Value> {
        self.values[key as usize].as_ref()
    }

    /// Sets a simple setting (checked as when read from options).
    pub fn set(&mut self, key: Simple, value: Value) -> Result<()> {
        let (name, _, kind) = SIMPLE[key as usize];
        if !fits(kind, &value) {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("`{name}` must be {}", expected(kind)),
            )
            .at(name));
        }
        self.values[key as usize] = Some(value);
        Ok(())
    }

    /// The model id, if given.
    pub fn model(&self) -> Option<&str> {
        self.get(Simple::Model).and_then(Value::as_str)
    }

    /// The model and streaming the request asks for, when either was given (the report's
    /// `call`, a [`Call`] as JSON, which an adapter reads to build the URL: Gemini takes both
    /// there).
    pub fn call(&self) -> Option<Value> {
        let mut o = Map::new();
        for key in [Simple::Model, Simple::Stream] {
            if let Some(v) = self.get(key) {
                o.insert(key.name().to_owned(), v.clone());
            }
        }
        (!o.is_empty()).then_some(Value::Object(o))
    }

    /// Takes the settings out of an options object (the other options stay).
    pub(crate) fn take(f: &mut Fields) -> Result<Settings> {
        if f.take_raw("params").is_some() {
            return Err(f.error(
                "params",
                "`params` is gone: pass the settings (`model`, `maxOutputTokens`, `temperature`, …) or a provider's own fields in `providerOptions`",
            ));
        }
        let mut s = Settings::default();
        for (name, key, _) in SIMPLE {
            if let Some(v) = f.take(name) {
                s.set(key, v)?;
            }
        }
        s.tool_choice = match f.take("toolChoice") {
            None => None,
            Some(Value::String(c)) => Some(match c.as_str() {
                "auto" => ToolChoice::Auto,
                "none" => ToolChoice::None,
                "required" => ToolChoice::Required,
                _ => ToolChoice::Tool(c),
            }),
            Some(Value::Object(mut o)) if o.len() == 1 && o.get("tool").is_some_and(Value::is_string) => {
                o.remove("tool").and_then(|v| v.as_str().map(|n| ToolChoice::Tool(n.into())))
            }
            Some(_) => {
                return Err(f.error(
                    "toolChoice",
                    "`toolChoice` must be \"auto\", \"none\", \"required\", a tool's name or { tool: name }",
                ))
            }
        };
        s.reasoning = match f.take("reasoning") {
            None => None,
            Some(Value::String(e)) => Some(ReasoningSetting {
                effort: Some(effort(&e)?),
                ..ReasoningSetting::default()
            }),
            Some(Value::Object(mut o)) => {
                let mut g = Fields::new(&mut o, "reasoning", ErrorKind::InvalidOptions);
                let r = ReasoningSetting {
                    effort: match g.opt_string("effort")? {
                        Some(e) => Some(effort(&e)?),
                        None => None,
                    },
                    budget_tokens: g.opt_u64("budgetTokens")?,
                    include: g.opt_bool("include")?,
                };
                if let Some(k) = g.leftover() {
                    return Err(unknown(format!("reasoning.{k}"), "effort, budgetTokens, include"));
                }
                Some(r)
            }
            Some(_) => {
                return Err(f.error(
                    "reasoning",
                    "`reasoning` must be an effort (\"low\", \"medium\", \"high\", …) or { effort?, budgetTokens?, include? }",
                ))
            }
        };
        s.output = match f.take("output") {
            None => None,
            Some(Value::String(j)) if j == "json" => Some(Output {
                schema: None,
                name: "response".into(),
                description: None,
                strict: None,
            }),
            Some(Value::Object(mut o)) => Some(output(&mut o)?),
            Some(_) => {
                return Err(f.error(
                    "output",
                    "`output` must be \"json\" or { schema?, name?, description?, strict? }",
                ))
            }
        };
        s.provider_options = f.opt_object("providerOptions")?.unwrap_or_default();
        for (k, v) in &s.provider_options {
            if !matches!(k.as_str(), "anthropic" | "openai" | "gemini") || !v.is_object() {
                return Err(unknown(
                    format!("providerOptions.{k}"),
                    "anthropic, openai, gemini (each an object)",
                ));
            }
        }
        s.model_info = f.opt_object("modelInfo")?;
        Ok(s)
    }
}

fn effort(e: &str) -> Result<&'static str> {
    EFFORTS.into_iter().find(|x| *x == e).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOptions,
            format!(
                "unknown reasoning effort `{e}` (none, minimal, low, medium, high, xhigh, max)"
            ),
        )
        .at("reasoning")
    })
}

fn unknown(at: String, known: &str) -> Error {
    Error::new(ErrorKind::InvalidOptions, "unknown option")
        .at(at)
        .with("known", known)
}

/// Reads `output: { schema?, name?, description?, strict? }`.
fn output(o: &mut Map<String, Value>) -> Result<Output> {
    let mut f = Fields::new(o, "output", ErrorKind::InvalidOptions);
    let schema = f.take("schema");
    if let Some(s) = &schema {
        check_schema(s, At::Text("output.schema"))?;
    }
    let name = f.opt_string("name")?.unwrap_or_else(|| "response".into());
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(f.error("name", "`output.name` must match ^[a-zA-Z0-9_-]{1,64}$"));
    }
    let out = Output {
        schema,
        name,
        description: f.opt_string("description")?,
        strict: f.opt_bool("strict")?,
    };
    if let Some(k) = f.leftover() {
        return Err(unknown(
            format!("output.{k}"),
            "schema, name, description, strict",
        ));
    }
    Ok(out)
}

/// The JSON types a schema's `type` may name.
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Whether `s` reads as a JSON Schema: an object (or a boolean) whose `type` names JSON
/// types, whose `required` lists names, and whose subschemas (`properties`, `items`,
/// `anyOf`, …) read as schemas too. An error names the first place that does not.
pub(crate) fn check_schema(s: &Value, at: At) -> Result<()> {
    let o = match s {
        Value::Bool(_) => return Ok(()),
        Value::Object(o) => o,
        _ => return Err(not_schema(at, "a schema is an object")),
    };
    for (k, v) in o {
        let here = At::Key(&at, k);
        let ok = match k.as_str() {
            "type" => match v {
                Value::Array(a) => a
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
                t => t.as_str().is_some_and(|t| TYPES.contains(&t)),
            },
            "required" => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            "properties" | "$defs" | "definitions" | "patternProperties" => match v {
                Value::Object(m) => {
                    for (name, sub) in m {
                        check_schema(sub, At::Key(&here, name))?;
                    }
                    true
                }
                _ => false,
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match v {
                Value::Array(list) => {
                    for (n, sub) in list.iter().enumerate() {
                        check_schema(sub, At::Index(&here, n))?;
                    }
                    true
                }
                _ => false,
            },
            "items" | "additionalProperties" | "not" => {
                check_schema(v, here)?;
                true
            }
            _ => true,
        };
        if !ok {
            return Err(not_schema(
                here,
                "this keyword does not have the shape JSON Schema gives it",
            ));
        }
    }
    Ok(())
}

fn not_schema(at: At, why: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        format!("not a JSON Schema: {why}"),
    )
    .at(at.text())
}

/// The model and streaming a request was lowered with: what an adapter needs beside the
/// body to send it (Gemini's URL names both; the other providers read them in the body).
/// (The reports hold it as JSON; this type describes it.)
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Call {
    /// The model id, when given.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model: Option<String>,
    /// Whether the answer streams, when given.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub stream: Option<bool>,
}

/// The model's row for a provider of `family`: the table's, under the caller's
/// `modelInfo`; none for an unknown model without one.
pub(crate) fn row_of(s: &Settings, family: &'static str) -> Result<Option<Model>> {
    let base = s.model().and_then(|m| models::find(family, m));
    Ok(match &s.model_info {
        Some(info) => Some(models::with_info(base, family, info)?),
        None => base.copied(),
    })
}

/// What one provider's writer works from: the settings, the model's row, and the notes it
/// adds to the report.
pub(crate) struct Cx<'a> {
    /// The settings.
    pub(crate) s: &'a Settings,
    /// The model's row (the table's, under the caller's `modelInfo`), if known.
    pub(crate) row: Option<Model>,
    /// Whether the request declares tools (the caller's; a forced output tool not counted).
    pub(crate) tools: bool,
    /// The answer goes through a forced tool of this name (Anthropic without native
    /// structured output).
    pub(crate) output_tool: Option<&'a str>,
    /// `(code, message)` for the report: `SettingDropped`, `SettingClamped`,
    /// `SettingDefaulted`, `SettingTranslated`, `SettingInUrl`, `ModelUnknown`.
    pub(crate) notes: Vec<(&'static str, String)>,
    /// The provider's name, for the notes.
    pub(crate) who: &'static str,
}

/// The `max_tokens` Anthropic gets for a model the table does not know.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// How a provider takes the simple settings (its dialect's table).
#[derive(Debug)]
pub(crate) struct Places {
    /// Where each simple setting goes, by [`Simple`].
    pub(crate) at: [Place; 13],
    /// The most stop sequences it takes.
    pub(crate) max_stops: usize,
}

impl<'a> Cx<'a> {
    /// The context of `s` for a provider of `family` (`who` names it in notes); `native`
    /// says whether it takes a JSON Schema for the answer natively, given the row.
    #[inline(never)]
    pub(crate) fn new(
        s: &'a Settings,
        family: &'static str,
        who: &'static str,
        tools: bool,
        native_output: &dyn Fn(Option<&Model>) -> bool,
    ) -> Result<Cx<'a>> {
        let row = row_of(s, family)?;
        let mut cx = Cx {
            s,
            row,
            tools,
            output_tool: None,
            notes: Vec::new(),
            who,
        };
        if let (Some(m), None) = (s.model(), &cx.row) {
            cx.notes.push((
                "ModelUnknown",
                format!("`{m}` is not in the model table ({}): its settings are written as given, with no defaults or limits; describe it with `modelInfo`", models::DATE),
            ));
        }
        if let Some(o) = &s.output {
            if o.schema.is_some() && !native_output(cx.row.as_ref()) {
                cx.output_tool = Some(o.name.as_str());
                cx.note(
                    "SettingTranslated",
                    "output",
                    format!("{who} takes no JSON Schema for this model's answer: the answer is asked for as a call of the tool `{}`", o.name),
                );
            }
        }
        Ok(cx)
    }

    /// Adds a note about the setting `key`.
    pub(crate) fn note(&mut self, code: &'static str, key: &str, why: String) {
        self.notes.push((code, format!("`{key}`: {why}")));
    }

    /// Notes that `key` is not sent.
    pub(crate) fn drop(&mut self, key: &str, why: &str) {
        self.note("SettingDropped", key, format!("not sent: {why}"));
    }

    /// Whether the model samples (takes temperature, top_p and penalties); an unknown one
    /// is taken to.
    fn samples(&self) -> bool {
        self.row.is_none_or(|r| r.sampling)
    }

    /// The answer's token limit: the caller's, clamped to the model's; or, when
    /// `required`, the model's own (the table's default for an unknown model).
    pub(crate) fn max_tokens(&mut self, required: bool) -> Option<u64> {
        let limit = self
            .row
            .map(|r| u64::from(r.max_output_tokens))
            .filter(|n| *n > 0);
        match (
            self.s.get(Simple::MaxOutputTokens).and_then(Value::as_u64),
            limit,
        ) {
            (Some(n), Some(l)) if n > l => {
                self.note(
                    "SettingClamped",
                    "maxOutputTokens",
                    format!("{n} is over this model's {l}: {l} sent"),
                );
                Some(l)
            }
            (Some(n), _) => Some(n),
            (None, l) if required && self.s.model().is_some() => {
                let n = l.unwrap_or(DEFAULT_MAX_TOKENS);
                let whose = if l.is_some() {
                    "the model's largest answer"
                } else {
                    "the default for a model the table does not know"
                };
                self.note(
                    "SettingDefaulted",
                    "maxOutputTokens",
                    format!("{} requires it: {n} sent ({whose})", self.who),
                );
                Some(n)
            }
            (None, _) => None,
        }
    }

    /// Writes the simple settings where `p` says: top-level fields into `body`, the
    /// generation config's into `config`; the ones a provider has not noted as dropped;
    /// the token limit defaulted and clamped, the temperature clamped, the sampling
    /// settings a reasoning model refuses dropped.
    #[inline(never)]
    pub(crate) fn write(
        &mut self,
        p: &Places,
        max: Option<u64>,
        body: &mut Json<'a>,
        config: &mut Json<'a>,
    ) {
        let s = self.s;
        for (name, key, _) in SIMPLE {
            let place = p.at[key as usize];
            let mut v = match key {
                Simple::MaxOutputTokens => match max {
                    Some(n) => num(n),
                    None => continue,
                },
                _ => match s.get(key) {
                    Some(v) => Json::Value(Cow::Borrowed(v)),
                    None => continue,
                },
            };
            let sampling = matches!(
                key,
                Simple::Temperature
                    | Simple::TopP
                    | Simple::PresencePenalty
                    | Simple::FrequencyPenalty
            );
            if place == Place::Own {
                continue;
            }
            if place == Place::No {
                self.drop(name, &format!("{} has no such setting", self.who));
                continue;
            }
            if key == Simple::ParallelToolCalls && !self.tools {
                self.drop(name, "the request declares no tools");
                continue;
            }
            if sampling && !self.samples() {
                self.drop(
                    name,
                    "this model is a reasoning model and refuses sampling settings",
                );
                continue;
            }
            let all = match key {
                Simple::StopSequences => s.get(key).and_then(Value::as_array),
                _ => None,
            };
            if let Some(all) = all.filter(|a| a.len() > p.max_stops) {
                let why = format!(
                    "{} takes up to {}: the first {} of {} sent",
                    self.who,
                    p.max_stops,
                    p.max_stops,
                    all.len()
                );
                self.note("SettingClamped", name, why);
                v = Json::Arr(
                    all.iter()
                        .take(p.max_stops)
                        .map(|x| Json::Value(Cow::Borrowed(x)))
                        .collect(),
                );
            }
            match place {
                Place::Top(k) => body.push(k, v),
                Place::Config(k) => config.push(k, v),
                Place::Own | Place::No => {}
            }
        }
    }

    /// The reasoning effort to send (an effort model): the caller's, or the nearest to
    /// their budget (noted).
    pub(crate) fn effort(&mut self) -> Option<&'static str> {
        let r = self.s.reasoning.as_ref()?;
        if let Some(e) = r.effort {
            return Some(e);
        }
        let b = r.budget_tokens?;
        let e = match b {
            0..2048 => "low",
            2048..16384 => "medium",
            _ => "high",
        };
        self.note(
            "SettingTranslated",
            "reasoning.budgetTokens",
            format!("this model takes an effort, not a budget: {b} tokens sent as `{e}`"),
        );
        Some(e)
    }

    /// The reasoning budget to send (a budget model, `min..=max`): the caller's, or one
    /// for their effort (noted); `Some(0)`: reasoning switched off.
    pub(crate) fn budget(&mut self, min: u32, max: u32, off: bool) -> Option<u64> {
        let r = self.s.reasoning.as_ref()?;
        let (min, max) = (u64::from(min), u64::from(max));
        let b = match (r.budget_tokens, r.effort) {
            (Some(b), _) => b,
            (None, Some("none")) if off => return Some(0),
            (None, Some("none")) => {
                self.drop("reasoning.effort", "this model always reasons");
                return None;
            }
            (None, Some(e)) => {
                let b = match e {
                    "minimal" => min,
                    "low" => 2048,
                    "medium" => 8192,
                    "high" => 16384,
                    _ => max,
                }
                .max(min)
                .min(max);
                self.note(
                    "SettingTranslated",
                    "reasoning.effort",
                    format!("this model takes a budget: `{e}` sent as {b} tokens"),
                );
                return Some(b);
            }
            (None, None) => return None,
        };
        let c = b.max(min).min(max);
        if c != b {
            self.note(
                "SettingClamped",
                "reasoning.budgetTokens",
                format!("{b} is outside this model's {min} to {max}: {c} sent"),
            );
        }
        Some(c)
    }

    /// How the model reasons: its row's rule, or `unknown` for a model the table does not
    /// know.
    pub(crate) fn reasoning_rule(&self, unknown: Reasoning) -> Reasoning {
        self.row.map_or(unknown, |r| r.reasoning)
    }

    /// The tool choice given, noted as dropped when the request declares no tools.
    pub(crate) fn tool_choice(&mut self) -> Option<&'a ToolChoice> {
        let c = self.s.tool_choice.as_ref()?;
        if !self.tools {
            self.drop("toolChoice", "the request declares no tools");
            return None;
        }
        Some(c)
    }

    /// Notes `reasoning` as dropped (the model does not reason), when given.
    pub(crate) fn no_reasoning(&mut self) {
        if self.s.reasoning.is_some() {
            self.drop("reasoning", "this model does not reason");
        }
    }
}

/// A number node.
pub(crate) fn num<'a>(v: impl Into<serde_json::Number>) -> Json<'a> {
    Json::Value(Cow::Owned(Value::Number(v.into())))
}

/// Merges `over` into the object `body`, key by key (objects the lowering wrote into
/// objects; anything else replaces); a key in `reserved` (one the lowering writes) is
/// refused, naming `at`.
pub(crate) fn merge<'a>(
    body: &mut Json<'a>,
    over: &'a Map<String, Value>,
    reserved: &[&str],
    at: &str,
) -> Result<()> {
    if let Some(k) = over.keys().find(|k| reserved.contains(&k.as_str())) {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            format!("`{k}` is written by the lowering; it cannot come from `{at}`"),
        )
        .at(format!("{at}.{k}")));
    }
    put(body, over);
    Ok(())
}

fn put<'a>(node: &mut Json<'a>, over: &'a Map<String, Value>) {
    let Json::Obj(pairs) = node else { return };
    for (k, v) in over {
        match (pairs.iter_mut().find(|(key, _)| key == k), v) {
            (Some((_, slot @ Json::Obj(_))), Value::Object(o)) => put(slot, o),
            (Some((_, slot)), _) => *slot = Json::Value(Cow::Borrowed(v)),
            (None, _) => pairs.push((Cow::Borrowed(k.as_str()), Json::Value(Cow::Borrowed(v)))),
        }
    }
}
