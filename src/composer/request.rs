//! The composer's input: [`ComposeRequest`], read from its JSON form with a typed
//! `InvalidRequest` error that names the offending field.

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::problems::Problems;
use crate::skill::read::read_skill_except;
use crate::skill::Skill;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::authoring;
pub use super::tool::ToolDescriptor;

/// Who started the invocation (the seed's `InvocationSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvocationSource {
    /// The user asked for the skill by name (a slash command, a picker).
    Explicit,
    /// The planner chose the skill.
    AgentSelected,
    /// A scheduled task.
    Scheduled,
}

impl InvocationSource {
    /// The wire name (`explicit`, `agent-selected`, `scheduled`).
    pub fn name(self) -> &'static str {
        match self {
            InvocationSource::Explicit => "explicit",
            InvocationSource::AgentSelected => "agent-selected",
            InvocationSource::Scheduled => "scheduled",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "explicit" => Some(InvocationSource::Explicit),
            "agent-selected" | "agent_selected" => Some(InvocationSource::AgentSelected),
            "scheduled" => Some(InvocationSource::Scheduled),
            _ => None,
        }
    }
}

/// What the conversation is for: running skills, or writing them. Only an authoring
/// conversation gets the composer's own tools (`create_skill`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A skill runs to produce content; it can never see or call the authoring tools.
    Application,
    /// The user is creating or editing a skill.
    Authoring,
}

impl Purpose {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Application => "application",
            Purpose::Authoring => "authoring",
        }
    }
}

impl serde::Serialize for Purpose {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One prefetched memory item (`{ id, tier?, content }`).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryItem {
    /// The item id (what replay refers to).
    pub id: String,
    /// The memory tier it came from, if the host says.
    pub tier: Option<String>,
    /// The text the prompt includes.
    pub content: String,
}

/// The caller's capability set: tool names, `prefix*` globs, or `*` for every tool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capabilities(pub Vec<String>);

impl Capabilities {
    /// Whether the set grants the tool `name`.
    pub fn allows(&self, name: &str) -> bool {
        self.0.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => c == name,
        })
    }
}

/// Everything one composition reads (the seed's `ComposeRequest`, plus the host's knobs).
#[derive(Debug, Clone, PartialEq)]
pub struct ComposeRequest {
    /// The skill to compose for (shared: a package composed again is not copied).
    pub skill: Arc<Skill>,
    /// Verbatim user text or the scheduled task's prompt.
    pub user_request: String,
    /// Who started the invocation.
    pub invocation_source: InvocationSource,
    /// Application or authoring conversation.
    pub purpose: Purpose,
    /// `None` is a workspace-scope invocation.
    pub channel_id: Option<String>,
    /// The parent turn's thread, carried through untouched.
    pub thread_id: String,
    /// The parent turn (a message id), when the host has one.
    pub turn_id: Option<String>,
    /// Prefetched memory items.
    pub memory_context: Vec<MemoryItem>,
    /// Tools already intersected by the caller's resolver (the composer intersects again).
    pub available_tools: Vec<ToolDescriptor>,
    /// The authoritative capability set.
    pub caller_capabilities: Capabilities,
    /// Invocation parameters, checked against the skill's parameter schema.
    pub parameters: Map<String, Value>,
    /// The model the turn will use (selects model variants of artifacts).
    pub model: Option<String>,
    /// Few-shot example budget (default 3).
    pub max_examples: usize,
    /// Context budget in estimated tokens (characters / 4, rounded up); `None` is unlimited.
    pub context_budget: Option<u64>,
    /// The caller's own tool-call ceiling (the exit condition takes the lower of this and
    /// the skill's `max_tool_calls`).
    pub max_tool_calls: Option<u64>,
    /// Host time (ISO 8601) stamped on the invocation record.
    pub now: Option<String>,
    /// The model's answer to the shape question (`planner_delegates_shape`), JSON.
    pub delegated_shape: Option<Value>,
    /// The bounds of the framing template's render (`render_limits: { fuel, recursion,
    /// max_output, max_value }`; defaults otherwise).
    pub render_limits: crate::skill::template::Limits,
    /// The request's own inputs as given ([`REPLAY_FIELDS`]), which the invocation record
    /// keeps so a replay recomposes from the record.
    pub replay: Map<String, Value>,
    /// The content hash of each of the skill's artifacts, in order, when the package was
    /// prepared (kept validated); empty otherwise, and each used artifact is hashed then.
    pub(crate) artifact_hashes: Arc<[String]>,
}

/// The request fields an invocation record keeps for replay (the thread, turn, source,
/// purpose, channel and time are its own fields; the skill is read back by its artifacts'
/// content hashes and the memory items by id).
pub const REPLAY_FIELDS: [&str; 10] = [
    "user_request",
    "parameters",
    "available_tools",
    "caller_capabilities",
    "model",
    "max_examples",
    "context_budget",
    "max_tool_calls",
    "delegated_shape",
    "render_limits",
];

/// The template whose syntax the composer checks by rendering it (the framing artifact).
fn framing_template(pkg: &Value) -> Option<&str> {
    pkg.get("metadata")?
        .get("framing")?
        .get("artifact")?
        .as_str()
}

impl ComposeRequest {
    /// Reads a request from its JSON form. A skill package that does not validate fails
    /// here, closed: a template that does not parse is `MalformedTemplate`, a missing or
    /// empty name is `MissingRequiredField`, any other problem `InvalidSkill` (every problem is
    /// listed in `details.problems`).
    pub fn from_value(v: Value) -> Result<Self> {
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
        let skill = read_package(&pkg)?;
        Self::from_parts(skill, o)
    }

    /// A request from an already validated skill and the other fields (the request object
    /// without `skill_package`).
    pub fn from_parts(skill: impl Into<Arc<Skill>>, o: Map<String, Value>) -> Result<Self> {
        Self::prepared(skill.into(), Arc::from([]), o)
    }

    /// [`ComposeRequest::from_parts`] for a prepared package: its artifacts' content hashes
    /// are already known.
    pub(crate) fn prepared(
        skill: Arc<Skill>,
        artifact_hashes: Arc<[String]>,
        mut o: Map<String, Value>,
    ) -> Result<Self> {
        let replay = crate::sort::json_map_of(REPLAY_FIELDS.iter().filter_map(|k| {
            o.get(*k)
                .filter(|v| !v.is_null())
                .map(|v| ((*k).to_owned(), v.clone()))
        }));
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidRequest);
        let user_request = f.opt_string("user_request")?.unwrap_or_default();
        let invocation_source = match f.opt_string("invocation_source")? {
            None => InvocationSource::Explicit,
            Some(s) => InvocationSource::parse(&s).ok_or_else(|| {
                f.error(
                    "invocation_source",
                    format!(
                        "`{s}` is not an invocation source (explicit, agent-selected, scheduled)"
                    ),
                )
            })?,
        };
        let purpose = match f.opt_string("purpose")?.as_deref() {
            None | Some("application") => Purpose::Application,
            Some("authoring") => Purpose::Authoring,
            Some(p) => {
                return Err(f.error(
                    "purpose",
                    format!("`{p}` is not a purpose (application, authoring)"),
                ))
            }
        };
        let channel_id = f.opt_string("channel_id")?;
        let thread_id = f.string("thread_id")?;
        let turn_id = f.opt_string("turn_id")?;
        let memory_context = f
            .opt_array("memory_context")?
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, m)| memory_item(m, i))
            .collect::<Result<Vec<_>>>()?;
        let mut available_tools = Vec::new();
        for (i, t) in f
            .opt_array("available_tools")?
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let t = ToolDescriptor::from_value(t, &format!("available_tools[{i}]"))?;
            if available_tools
                .iter()
                .any(|x: &ToolDescriptor| x.name == t.name)
            {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    format!("the tool `{}` is listed twice", t.name),
                )
                .at(format!("available_tools[{i}]")));
            }
            available_tools.push(t);
        }
        let caller_capabilities = Capabilities(
            f.opt_array("caller_capabilities")?
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, c)| match c {
                    Value::String(s) => Ok(s),
                    _ => Err(Error::new(
                        ErrorKind::InvalidRequest,
                        "a capability is a tool name, a `prefix*` glob or `*`",
                    )
                    .at(format!("caller_capabilities[{i}]"))),
                })
                .collect::<Result<_>>()?,
        );
        let parameters = f.opt_object("parameters")?.unwrap_or_default();
        let model = f.opt_string("model")?;
        let max_examples = f
            .opt_u64("max_examples")?
            .map_or(3, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let context_budget = f.opt_u64("context_budget")?;
        let max_tool_calls = f.opt_u64("max_tool_calls")?;
        let now = f.opt_string("now")?;
        let delegated_shape = f.take("delegated_shape");
        let render_limits = match f.opt_object("render_limits")? {
            Some(l) => crate::skill::template::Limits::from_map(
                l,
                "render_limits",
                ErrorKind::InvalidRequest,
            )?,
            None => crate::skill::template::Limits::default(),
        };
        if let Some(k) = f.leftover() {
            return Err(Error::new(ErrorKind::InvalidRequest, format!("unknown field `{k}`"))
                .at(k)
                .with("known", "skill_package, user_request, invocation_source, purpose, channel_id, thread_id, turn_id, memory_context, available_tools, caller_capabilities, parameters, model, max_examples, context_budget, max_tool_calls, now, delegated_shape, render_limits"));
        }
        Ok(ComposeRequest {
            skill,
            user_request,
            invocation_source,
            purpose,
            channel_id,
            thread_id,
            turn_id,
            memory_context,
            available_tools,
            caller_capabilities,
            parameters,
            model,
            max_examples,
            context_budget,
            max_tool_calls,
            now,
            delegated_shape,
            render_limits,
            replay,
            artifact_hashes,
        })
    }

    /// Whether the request's available tools contain an authoring tool (only an authoring
    /// invocation may).
    pub fn names_authoring_tool(&self) -> bool {
        self.available_tools
            .iter()
            .any(|t| authoring::is_authoring_tool(&t.name))
    }
}

pub(crate) fn memory_item(v: Value, i: usize) -> Result<MemoryItem> {
    let path = format!("memory_context[{i}]");
    let Value::Object(mut o) = v else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "a memory item is `{ id, tier?, content }`",
        )
        .at(path));
    };
    let mut f = Fields::new(&mut o, path, ErrorKind::InvalidRequest);
    Ok(MemoryItem {
        id: f.string("id")?,
        tier: f.opt_string("tier")?,
        content: f.string("content")?,
    })
}

/// Reads and validates the package, failing closed with the composer's variants.
pub fn read_package(pkg: &Value) -> Result<Skill> {
    let mut out = Problems::default();
    let skill = read_skill_except(pkg, framing_template(pkg), &mut out);
    if !out.has_errors() {
        if let Some(s) = skill {
            return Ok(s);
        }
    }
    let problems: Vec<Value> = out.0.iter().map(|p| p.to_value()).collect();
    let first = |code: &str| out.0.iter().find(|p| p.code == code && p.is_error());
    let mut position = None;
    let (kind, message) = if let Some(p) = first("template-syntax") {
        // `artifacts[i].content`: the line and column, structured.
        let content = p
            .path
            .strip_prefix("artifacts[")
            .and_then(|r| r.split(']').next())
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| pkg.get("artifacts")?.get(i)?.get("content")?.as_str());
        position = content.and_then(|c| crate::skill::template::check(c).err());
        (ErrorKind::MalformedTemplate, p.message.clone())
    } else if let Some(p) = out.0.iter().find(|p| {
        p.is_error() && (p.code == "missing-field" || p.code == "empty-string") && p.path == "name"
    }) {
        (ErrorKind::MissingRequiredField, p.message.clone())
    } else if let Some(p) = first("unknown-tool") {
        (ErrorKind::UnknownTool, p.message.clone())
    } else {
        (
            ErrorKind::InvalidSkill,
            "the skill package is not valid".to_owned(),
        )
    };
    let path = out
        .0
        .iter()
        .find(|p| p.is_error())
        .map(|p| format!("skill_package.{}", p.path));
    let mut e = Error::new(kind, message).with("problems", problems);
    if let Some(p) = path {
        e = e.at(p.trim_end_matches('.').to_owned());
    }
    if let Some(s) = position {
        e = e.with("reason", "syntax").with("detail", s.detail);
        if let Some(l) = s.line {
            e = e.with("line", l as u64);
        }
        if let Some(c) = s.column {
            e = e.with("column", c as u64);
        }
    }
    Err(e)
}
