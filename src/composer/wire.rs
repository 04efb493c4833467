//! The JSON-text forms both faces (JS and the component) exchange for the composer, the
//! authoring tools and dispatch; the faces only pass strings through.

use super::{authoring, compose_value, nested_request, ComposeRequest, ToolDescriptor};
use crate::dispatch::{self, trace};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::skill::{import_value, ArtifactKind, Skill};
use crate::store::skills::read_summaries;
use serde_json::{Map, Value};

fn parse(text: &str, what: &str) -> Result<Value> {
    crate::wire::json_value(text, what, ErrorKind::InvalidRequest)
}

fn skill_of(text: &str) -> Result<Skill> {
    import_value(&parse(text, "the skill")?, "").map(|(s, _)| s)
}

/// `compose` from the package's JSON text and the rest of the request (JSON, without
/// `skill_package`) → `{ composition }` or `{ needs_shape }`. A package composed again is
/// not validated again.
pub fn compose_split_json(package: &str, rest: &str) -> Result<String> {
    Ok(super::compose_split(package, rest)?.to_json())
}

/// `compose` → `{ composition }` or `{ needs_shape }`.
pub fn compose_json(request: &str) -> Result<String> {
    Ok(compose_request(request)?.to_json())
}

/// `compose` from the request's JSON text → the step.
pub fn compose_request(request: &str) -> Result<super::Step> {
    compose_value(parse(request, "the compose request")?)
}

/// The request of a nested sub-skill (JSON): `parent` is the top-level compose request,
/// `sub` the sub-skill package, `catalog` the host's tool descriptors (JSON array).
pub fn nested_json(
    parent: &str,
    sub: &str,
    catalog: &str,
    user_request: &str,
    parameters: &str,
) -> Result<String> {
    let parent = ComposeRequest::from_value(parse(parent, "the parent request")?)?;
    let sub = skill_of(sub)?;
    let tools = match parse(catalog, "the tool catalog")? {
        Value::Array(a) => a
            .into_iter()
            .enumerate()
            .map(|(i, t)| ToolDescriptor::from_value(t, &format!("tool_catalog[{i}]")))
            .collect::<Result<Vec<_>>>()?,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "the tool catalog must be an array",
            ))
        }
    };
    let params = match parse(parameters, "the parameters")? {
        Value::Object(o) => o,
        Value::Null => Map::new(),
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "the parameters must be an object",
            ))
        }
    };
    let r = nested_request(&parent, sub, &tools, user_request.to_owned(), params);
    let mut o = Map::new();
    o.insert("skill_package".into(), r.skill.to_value());
    o.insert("user_request".into(), r.user_request.into());
    o.insert(
        "invocation_source".into(),
        r.invocation_source.name().into(),
    );
    o.insert("purpose".into(), r.purpose.name().into());
    o.insert(
        "channel_id".into(),
        r.channel_id.map_or(Value::Null, Value::String),
    );
    o.insert("thread_id".into(), r.thread_id.into());
    o.insert(
        "turn_id".into(),
        r.turn_id.map_or(Value::Null, Value::String),
    );
    o.insert(
        "memory_context".into(),
        Value::Array(
            r.memory_context
                .iter()
                .map(|m| {
                    let mut x = Map::new();
                    x.insert("id".into(), m.id.clone().into());
                    x.insert(
                        "tier".into(),
                        m.tier.clone().map_or(Value::Null, Value::String),
                    );
                    x.insert("content".into(), m.content.clone().into());
                    Value::Object(x)
                })
                .collect(),
        ),
    );
    o.insert(
        "available_tools".into(),
        Value::Array(
            r.available_tools
                .iter()
                .map(ToolDescriptor::to_value)
                .collect(),
        ),
    );
    o.insert("caller_capabilities".into(), r.caller_capabilities.0.into());
    o.insert("parameters".into(), Value::Object(r.parameters));
    o.insert("model".into(), r.model.map_or(Value::Null, Value::String));
    o.insert("max_examples".into(), r.max_examples.into());
    o.insert(
        "context_budget".into(),
        r.context_budget.map_or(Value::Null, Value::from),
    );
    o.insert(
        "max_tool_calls".into(),
        r.max_tool_calls.map_or(Value::Null, Value::from),
    );
    o.insert("now".into(), r.now.map_or(Value::Null, Value::String));
    Ok(Value::Object(o).json_text())
}

/// The authoring tools' MCP descriptors (JSON array).
pub fn authoring_tools_json() -> String {
    Value::Array(
        authoring::descriptors()
            .iter()
            .map(ToolDescriptor::to_value)
            .collect(),
    )
    .json_text()
}

/// One step of an authoring call for a host whose store is asynchronous: `step` is
/// `authorize` (→ `""`), `create` (args → package), `update` (args + the current skill →
/// skill), `artifact` (args + the skill → artifact row), `list` (args + skill rows → list).
pub fn authoring_json(
    step: &str,
    name: &str,
    args: &str,
    other: &str,
    now: &str,
) -> Result<String> {
    let a = parse(args, "the tool arguments")?;
    match step {
        "authorize" => authoring::authorize(name, &a, &parse(other, "the composition")?)
            .map(|()| String::new()),
        "create" => authoring::create_package(&a, now).map(|s| s.to_value().json_text()),
        "update" => {
            authoring::apply_update(&skill_of(other)?, &a).map(|s| s.to_value().json_text())
        }
        "artifact" => Ok(authoring::artifact_row(&skill_of(other)?, &a).json_text()),
        "list" => {
            let rows: Vec<(String, String)> = match parse(other, "the skill list")? {
                Value::Array(list) => list
                    .into_iter()
                    .map(|s| {
                        (
                            s.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                            s.json_text(),
                        )
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let list = read_summaries(&rows)?;
            Ok(Value::Array(authoring::filter(&list, &a)?).json_text())
        }
        _ => Err(Error::new(
            ErrorKind::Internal,
            format!("unknown authoring step `{step}`"),
        )),
    }
}

/// A trace row (JSON) from the host's record → `{ key, row }`.
pub fn trace_json(input: &str) -> Result<String> {
    let r = trace::row(parse(input, "the trace")?)?;
    let mut o = Map::new();
    o.insert("key".into(), crate::store::traces::key(&r).into());
    o.insert("row".into(), Value::Object(r));
    Ok(Value::Object(o).json_text())
}

/// The key of an invocation record (JSON).
pub fn invocation_key_json(record: &str) -> Result<String> {
    match crate::store::invocations::put(&parse(record, "the invocation record")?)? {
        crate::store::Op::Put { key, .. } => Ok(key),
        _ => Err(Error::new(ErrorKind::Internal, "unexpected op")),
    }
}

/// The artifact names a whole-skill run executes, in order ([`dispatch::run_order`]), from a
/// skill or its summary (JSON): a JSON array.
pub fn run_order_json(summary: &str) -> Result<String> {
    Ok(Value::from(run_order(summary)?).json_text())
}

/// [`run_order_json`] as a list.
pub fn run_order(summary: &str) -> Result<Vec<String>> {
    Ok(dispatch::run_order(&crate::artifact_run::refs_of(&parse(
        summary,
        "the skill",
    )?)?))
}

/// The artifact reference to run: `summary` is a skill or its summary (JSON), `name` an
/// artifact name or id, `kind` an optional kind restriction (empty for any), `model` the
/// model id for variant selection → the reference (JSON with `fallback` for a
/// `dspy_module`), or `NotFound`.
pub fn pick_json(summary: &str, name: &str, kind: &str, model: &str) -> Result<String> {
    let v = parse(summary, "the skill")?;
    let kind = if kind.is_empty() {
        None
    } else {
        Some(ArtifactKind::parse(kind).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                format!("`{kind}` is not an artifact kind"),
            )
        })?)
    };
    crate::artifact_run::known_kind(&v, name)?;
    let refs = crate::artifact_run::refs_of(&v)?;
    crate::artifact_run::pick_ref(&v, &refs, name, kind, model).map(|r| r.to_value().json_text())
}

/// How a composition is lowered: the user turn, and the system text and tools to lower it
/// with (the caller's merged in).
#[derive(Debug, Clone, PartialEq)]
pub struct CompositionLowering {
    /// The caller's system text (if any), a blank line, then the prompt's framing, context
    /// and examples.
    pub system: String,
    /// The request section as the user turn (a message in its wire form).
    pub message: Value,
    /// The composition's tool availability as tool definitions, then the caller's tools.
    pub tools: Vec<Value>,
    /// The composition's `output_schema` (its exit condition), for the request's `output`.
    pub output: Option<Value>,
}

impl CompositionLowering {
    /// `{ system, message, tools }` as JSON text.
    pub fn to_json(&self) -> String {
        let mut v = serde_json::json!({ "system": self.system, "message": self.message, "tools": self.tools });
        if let (Some(o), Value::Object(m)) = (&self.output, &mut v) {
            m.insert("output".into(), o.clone());
        }
        v.json_text()
    }
}

/// What lowering a composition needs: the prompt's framing, context and examples as the
/// system prompt (after `system`, the caller's, when it is not empty), the request section
/// as the user turn, and the tool availability as tool definitions (before `tools`, the
/// caller's, a JSON array).
pub fn composition_lowering(
    composition: &str,
    system: Option<&str>,
    tools: Option<&str>,
) -> Result<CompositionLowering> {
    let caller_tools = match tools.map(str::trim).filter(|t| !t.is_empty()) {
        None => Vec::new(),
        Some(t) => match serde_json::from_str(t) {
            Ok(Value::Array(items)) => items,
            Ok(_) => {
                return Err(
                    Error::new(ErrorKind::InvalidOptions, "`tools` must be an array").at("tools"),
                )
            }
            Err(e) => return Err(Error::json(ErrorKind::InvalidOptions, "`tools`", &e)),
        },
    };
    let c = parse(composition, "the composition")?;
    let sections = c
        .pointer("/prompt/sections")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                "the composition has no prompt sections",
            )
        })?;
    let text = |s: &Value| {
        s.get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let system_texts: Vec<String> = sections
        .iter()
        .filter(|s| s.get("kind").and_then(Value::as_str) != Some("request"))
        .map(text)
        .collect();
    let user: Vec<String> = sections
        .iter()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some("request"))
        .map(text)
        .collect();
    let mut tools = match c.pointer("/subgraph/tool_availability") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    tools.extend(caller_tools);
    let mut msg = Map::new();
    msg.insert("role".into(), "user".into());
    msg.insert(
        "parts".into(),
        serde_json::json!([{"type": "text", "text": user.join("\n\n")}]),
    );
    msg.insert(
        "metadata".into(),
        serde_json::json!({"schema_version": crate::message::SCHEMA_VERSION}),
    );
    let own = system_texts.join("\n\n");
    Ok(CompositionLowering {
        system: match system.filter(|s| !s.is_empty()) {
            Some(s) => format!("{s}\n\n{own}"),
            None => own,
        },
        message: Value::Object(msg),
        tools,
        output: c
            .pointer("/exit_condition/output_schema")
            .filter(|s| !s.is_null())
            .cloned(),
    })
}

/// The settings (JSON text of an object, or none) with `output: { schema }` added when
/// they ask for no output of their own: a composition's answer schema becomes the
/// request's.
pub fn settings_with_output(settings: Option<String>, schema: &Value) -> Result<Option<String>> {
    let mut s = match settings.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        None => Map::new(),
        Some(t) => match serde_json::from_str(t) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "`settings` must be a JSON object",
                )
                .at("settings"))
            }
        },
    };
    s.entry("output")
        .or_insert_with(|| serde_json::json!({ "schema": schema }));
    Ok(Some(Value::Object(s).json_text()))
}

/// A model request (what the composer asks a model for the subgraph shape, or an artifact
/// run for a template's answer: `{ purpose, system?, prompt, schema?, model? }`) as a
/// provider request: the prompt as the user turn, `system` as the system text, `schema` as
/// the JSON answer asked for (`output`), and `model` — the request's own, else `model`, the
/// caller's — as the model id.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequestLowering {
    /// The prompt: the user turn's text.
    pub prompt: String,
    /// The system text (none when absent or empty).
    pub system: Option<String>,
    /// The JSON Schema of the answer asked for.
    pub schema: Option<Value>,
    /// The model id.
    pub model: Option<String>,
}

/// Reads a model request (JSON text) for lowering; `model` is the caller's model id, which
/// the request's own `model` overrides.
pub fn model_request_lowering(request: &str, model: Option<&str>) -> Result<ModelRequestLowering> {
    let r = parse(request, "the model request")?;
    let text = |k: &str| {
        r.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let Some(Value::String(prompt)) = r.get("prompt") else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "a model request needs its `prompt` text",
        )
        .at("prompt"));
    };
    Ok(ModelRequestLowering {
        prompt: prompt.clone(),
        system: text("system"),
        schema: r.get("schema").filter(|s| s.is_object()).cloned(),
        model: text("model").or_else(|| model.filter(|m| !m.is_empty()).map(str::to_owned)),
    })
}

/// `"key":value` (JSON text) onto `out`, an object being written, when there is a value
/// (after a comma unless it is the object's first).
fn member(out: &mut String, key: &str, value: Option<String>) {
    if let Some(v) = value {
        if !out.ends_with('{') {
            out.push(',');
        }
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out.push_str(&v);
    }
}

/// A string as JSON text.
fn quoted(s: &str) -> String {
    Value::from(s).json_text()
}

impl ModelRequestLowering {
    /// The user turn (JSON text): a message holding the prompt.
    pub fn message_json(&self) -> String {
        format!(
            "{{\"role\":\"user\",\"parts\":[{{\"type\":\"text\",\"text\":{}}}]}}",
            quoted(&self.prompt)
        )
    }

    /// `{ message, options }`: the message and the lowering options it adds (`model`,
    /// `system`, `output: { schema }`, each only when there is one), as JSON text.
    pub fn to_json(&self) -> String {
        let mut out = format!("{{\"message\":{},\"options\":{{", self.message_json());
        member(&mut out, "model", self.model.as_deref().map(quoted));
        member(&mut out, "system", self.system.as_deref().map(quoted));
        let schema = self.schema.as_ref().map(JsonText::json_text);
        member(
            &mut out,
            "output",
            schema.map(|v| format!("{{\"schema\":{v}}}")),
        );
        out.push_str("}}");
        out
    }

    /// The system text to lower with: the request's, else `theirs` (the caller's).
    pub fn system(&self, theirs: Option<String>) -> Option<String> {
        self.system.clone().or(theirs)
    }

    /// The settings (JSON text of an object, or none) with the request's model and answer
    /// schema: its `model` replaces theirs, its schema is the `output` unless they ask for
    /// their own.
    pub fn settings(&self, settings: Option<String>) -> Result<Option<String>> {
        let settings = match &self.schema {
            Some(schema) => settings_with_output(settings, schema)?,
            None => settings,
        };
        let Some(model) = &self.model else {
            return Ok(settings);
        };
        let mut s = match settings.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(m))) => m,
            _ => Map::new(),
        };
        s.insert("model".into(), model.as_str().into());
        Ok(Some(Value::Object(s).json_text()))
    }
}

/// What a provider's answer to a model request says, as a model adapter answers:
/// `{ text, usage?, model? }` — the turn's text parts joined, its usage, and the model that
/// answered (the turn's, else `model`, the one asked for).
pub fn model_answer(turn: &str, model: Option<&str>) -> Result<String> {
    let t = parse(turn, "the assistant turn")?;
    let mut text = String::new();
    for p in t
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some("text"), Some(s)) = (
            p.get("type").and_then(Value::as_str),
            p.get("text").and_then(Value::as_str),
        ) {
            text.push_str(s);
        }
    }
    let answered = t
        .pointer("/metadata/model")
        .and_then(Value::as_str)
        .or(model);
    let mut out = format!("{{\"text\":{}", quoted(&text));
    let usage = t.pointer("/metadata/usage").filter(|u| !u.is_null());
    member(&mut out, "usage", usage.map(JsonText::json_text));
    member(&mut out, "model", answered.map(quoted));
    out.push('}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_request_is_a_user_turn_with_its_system_schema_and_model() {
        let req = r#"{"purpose":"shape","system":"Answer in JSON.","prompt":"Which stages?","schema":{"type":"object"}}"#;
        let l = model_request_lowering(req, Some("claude-sonnet-4-5")).unwrap(); // ok: test
        assert_eq!(
            l.to_json(),
            r#"{"message":{"role":"user","parts":[{"type":"text","text":"Which stages?"}]},"options":{"model":"claude-sonnet-4-5","system":"Answer in JSON.","output":{"schema":{"type":"object"}}}}"#
        );
        // The request's own model wins; an empty system is none; no schema, no output.
        let own =
            model_request_lowering(r#"{"prompt":"Hi","system":"","model":"gpt-4o"}"#, Some("x"))
                .unwrap(); // ok: test
        assert_eq!(
            (own.model.as_deref(), own.system, own.schema),
            (Some("gpt-4o"), None, None)
        );
        // Settings: the model replaces theirs, the schema is the output unless they ask for one.
        assert_eq!(
            l.settings(Some(r#"{"model":"old","temperature":0}"#.into())).unwrap(), // ok: test
            Some(r#"{"model":"claude-sonnet-4-5","output":{"schema":{"type":"object"}},"temperature":0}"#.into())
        );
        let e = model_request_lowering(r#"{"purpose":"shape"}"#, None).unwrap_err(); // ok: test
        assert_eq!(
            (e.kind(), e.path()),
            (ErrorKind::InvalidRequest, Some("prompt"))
        );
    }

    #[test]
    fn a_turn_answers_a_model_request_with_its_text_usage_and_model() {
        let turn = r#"{"role":"assistant","parts":[{"type":"reasoning","text":"hm"},{"type":"text","text":"{\"a\":"},{"type":"text","text":"1}"}],"metadata":{"usage":{"input_tokens":3}}}"#;
        assert_eq!(
            model_answer(turn, Some("m")).unwrap(), // ok: test
            r#"{"text":"{\"a\":1}","usage":{"input_tokens":3},"model":"m"}"#
        );
        let named = r#"{"role":"assistant","parts":[],"metadata":{"model":"gemini-2.5-pro"}}"#;
        assert_eq!(
            model_answer(named, Some("m")).unwrap(), // ok: test
            r#"{"text":"","model":"gemini-2.5-pro"}"#
        );
    }
}
