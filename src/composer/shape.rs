//! Steps 5–7: the subgraph a composition runs in. Tool availability is the caller's ceiling
//! narrowed (never widened): `available_tools` ∩ `caller_capabilities` (∩ the skill's
//! `tool_surface` when it declares one), or the subset the selected approach declares. An
//! approach with ordered stages gives a staged subgraph; otherwise a planner–executor loop.
//! Contract interrupts become references to graph nodes; the exit condition comes from the
//! contract.

use super::authoring;
use super::request::{ComposeRequest, Purpose, ToolDescriptor};
use crate::error::{Error, ErrorKind, Result};
use crate::skill::SkillArtifact;
use serde::Serialize;
use serde_json::{Map, Value};

/// One node of the subgraph.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SubgraphNode"))]
pub struct Node {
    /// Stable id (`input_validation`, `planner`, `executor`, `output_validation`,
    /// `stage-1`, …).
    pub id: String,
    /// `input_validation`, `planner`, `executor`, `stage` or `output_validation`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "'input_validation' | 'planner' | 'executor' | 'stage' | 'output_validation'")
    )]
    pub kind: &'static str,
    /// A stage's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    /// A stage's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
    /// Tools callable at this node (names).
    pub tools: Vec<String>,
    /// Interrupts this node may fire.
    pub interrupts: Vec<String>,
}

/// One edge: `from` → `to` when `on` happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SubgraphEdge"))]
pub struct Edge {
    /// Source node id.
    pub from: String,
    /// Target node id (`exit` ends the subgraph).
    pub to: String,
    /// The event (`valid`, `tool_call`, `result`, `answer`, `invalid`, `done`).
    #[cfg_attr(
        feature = "ts",
        ts(type = "'valid' | 'tool_call' | 'result' | 'answer' | 'invalid' | 'done'")
    )]
    pub on: &'static str,
}

/// A declared interrupt and the nodes that fire it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Interrupt {
    /// The contract name (`on_ambiguous_input`).
    pub name: String,
    /// The node ids.
    pub nodes: Vec<String>,
    /// The contract's condition, as declared.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub when: Option<Value>,
    /// The contract's description.
    pub description: Option<String>,
}

/// What "done" looks like.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExitCondition {
    /// The primary condition: `output_schema`, `tool_budget` or `cancellation`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "'output_schema' | 'tool_budget' | 'cancellation'")
    )]
    pub kind: &'static str,
    /// Output matching this schema ends the subgraph.
    #[cfg_attr(feature = "ts", ts(type = "object | null"))]
    pub output_schema: Option<Value>,
    /// At most this many tool calls (the lower of the skill's and the caller's ceilings).
    pub max_tool_calls: Option<u64>,
    /// Interrupts that end the run when they fire.
    pub interrupts: Vec<String>,
    /// The caller can always cancel.
    #[cfg_attr(feature = "ts", ts(type = "true"))]
    pub cancellable: bool,
}

/// The shape of the subgraph.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SubgraphShape {
    /// `loop` (planner–executor) or `staged`.
    #[cfg_attr(feature = "ts", ts(type = "'loop' | 'staged'"))]
    pub kind: &'static str,
    /// The entry node id.
    pub entry: String,
    /// Nodes in order.
    pub nodes: Vec<Node>,
    /// Edges in order.
    pub edges: Vec<Edge>,
    /// The tools of the whole subgraph, descriptors as the caller gave them.
    #[cfg_attr(feature = "ts", ts(type = "Array<Exclude<ToolDescriptor, string>>"))]
    pub tool_availability: Vec<ToolDescriptor>,
    /// `approach` (declared by the skill), `model` (the planner decided) or `default`.
    #[cfg_attr(feature = "ts", ts(type = "'approach' | 'model' | 'default'"))]
    pub decided_by: &'static str,
}

/// The subgraph plus the composition fields derived with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    /// The subgraph.
    pub subgraph: SubgraphShape,
    /// Best-effort tool-call sequence hint.
    pub expected_tool_calls: Vec<String>,
    /// Declared interrupts with their nodes.
    pub interrupts: Vec<Interrupt>,
    /// The exit condition.
    pub exit: ExitCondition,
}

/// The tools the invocation may use at most: `available_tools` (the seed's hard ceiling: the
/// planner wires the authoring tools into it for an authoring conversation, the composer
/// never adds one) that the caller's capabilities grant, without authoring tools unless the
/// invocation is an authoring one, narrowed to the skill's `tool_surface` when it declares
/// one. An authoring tool keeps the composer's own descriptor (its description and schema).
pub fn ceiling(req: &ComposeRequest) -> Vec<ToolDescriptor> {
    let authoring = req.purpose == Purpose::Authoring;
    let own = if authoring && req.names_authoring_tool() {
        authoring::descriptors()
    } else {
        Vec::new()
    };
    let mut out: Vec<ToolDescriptor> = req
        .available_tools
        .iter()
        .filter(|t| authoring || !authoring::is_authoring_tool(&t.name))
        .filter(|t| req.caller_capabilities.allows(&t.name))
        .map(|t| own.iter().find(|d| d.name == t.name).unwrap_or(t).clone())
        .collect();
    if let Some(surface) = req.skill.declared_tool_surface() {
        out.retain(|t| {
            surface.contains(&t.name.as_str())
                || (authoring && authoring::is_authoring_tool(&t.name))
        });
    }
    out
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn unknown_tool(tool: &str, what: &str, ceiling: &[ToolDescriptor]) -> Error {
    Error::new(
        ErrorKind::UnknownTool,
        format!(
            "{what} names the tool `{tool}`, which is not available to this invocation; fix the skill or the caller's capabilities"
        ),
    )
    .with("tool", tool)
    .with("referenced_by", what)
    .with(
        "available",
        Value::Array(ceiling.iter().map(|t| t.name.clone().into()).collect()),
    )
}

/// Checks that every tool in `names` is within the ceiling.
fn within(names: &[String], what: &str, ceiling: &[ToolDescriptor]) -> Result<()> {
    match names
        .iter()
        .find(|n| !ceiling.iter().any(|t| &t.name == *n))
    {
        Some(t) => Err(unknown_tool(t, what, ceiling)),
        None => Ok(()),
    }
}

/// A stage as declared (by an approach or by the model).
struct Stage {
    name: String,
    description: Option<String>,
    tools: Option<Vec<String>>,
}

fn read_stages(v: Option<&Value>) -> Vec<Stage> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| {
                    Some(Stage {
                        name: s.get("name")?.as_str()?.to_owned(),
                        description: s
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        tools: s.get("tools").map(|t| strings(Some(t))),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

const INPUT: [&str; 6] = [
    "on_ambiguous_input",
    "on_missing_input",
    "on_invalid_input",
    "on_missing_parameter",
    "on_unclear_request",
    "on_clarification_needed",
];
const TOOL: [&str; 6] = [
    "before_tool_call",
    "on_tool_error",
    "on_approval_required",
    "before_write",
    "on_permission_required",
    "on_tool_budget_exhausted",
];
const OUTPUT: [&str; 5] = [
    "on_invalid_output",
    "on_output_invalid",
    "on_low_confidence",
    "before_submit",
    "before_output",
];

/// Shapes the subgraph. `approach` is the selected approach artifact; `delegated` the
/// model's answer on the `planner_delegates_shape` path (already required by the caller).
pub fn shape(
    req: &ComposeRequest,
    approach: Option<&SkillArtifact>,
    delegated: Option<&Value>,
) -> Result<Shaped> {
    let skill = &req.skill;
    let ceiling = ceiling(req);
    let requires = skill.metadata.get("requires_tools") == Some(&Value::Bool(true));
    if requires && ceiling.is_empty() {
        return Err(Error::new(
            ErrorKind::CapabilityNarrowing,
            format!(
                "the skill `{}` requires tools, but none of its tool surface is within the caller's capabilities",
                skill.name
            ),
        )
        .with("tool_surface", Value::Array(skill.tool_surface().into_iter().map(Value::from).collect()))
        .with("available_tools", Value::Array(req.available_tools.iter().map(|t| t.name.clone().into()).collect()))
        .with("caller_capabilities", Value::Array(req.caller_capabilities.0.iter().cloned().map(Value::from).collect())));
    }
    // Who decides: the model's answer, the approach, or the default loop.
    let (source, decided_by, what): (Option<&Map<String, Value>>, &'static str, String) =
        match (delegated, approach) {
            (Some(Value::Object(d)), _) => (Some(d), "model", "the model's shape answer".into()),
            (Some(_), _) => {
                return Err(Error::new(
                    ErrorKind::AdapterFailed,
                    "the model's shape answer is not a JSON object",
                ))
            }
            (None, Some(a)) => (
                Some(&a.metadata),
                "approach",
                format!("the approach `{}`", a.name),
            ),
            (None, None) => (None, "default", String::new()),
        };
    let declared = source
        .and_then(|s| s.get("tools"))
        .map(|t| strings(Some(t)));
    let stages = read_stages(source.and_then(|s| s.get("stages")));
    if decided_by == "model" {
        if let Some(k) = source.and_then(|s| s.get("kind")).and_then(Value::as_str) {
            if !matches!(k, "loop" | "staged") || (k == "staged" && stages.is_empty()) {
                return Err(Error::new(
                    ErrorKind::AdapterFailed,
                    "the model's shape answer must be `{ kind: loop | staged, tools?, stages? }` with stages for a staged shape",
                )
                .with("answer", delegated.cloned().unwrap_or(Value::Null)));
            }
        }
    }
    if let Some(d) = &declared {
        within(d, &what, &ceiling)?;
    }
    for s in &stages {
        if let Some(t) = &s.tools {
            within(t, &format!("{what}, stage `{}`", s.name), &ceiling)?;
        }
    }
    let tool_availability: Vec<ToolDescriptor> = match &declared {
        Some(d) => d
            .iter()
            .filter_map(|n| ceiling.iter().find(|t| &t.name == n).cloned())
            .collect(),
        None => ceiling.clone(),
    };
    let all: Vec<String> = tool_availability.iter().map(|t| t.name.clone()).collect();
    if requires && all.is_empty() {
        return Err(Error::new(
            ErrorKind::CapabilityNarrowing,
            format!(
                "{what} leaves the skill `{}` no tools, and it requires tools",
                skill.name
            ),
        ));
    }
    let mut expected = strings(source.and_then(|s| s.get("expected_tool_calls")));
    if expected.is_empty() {
        for s in &stages {
            for t in s.tools.iter().flatten() {
                if !expected.contains(t) {
                    expected.push(t.clone());
                }
            }
        }
    }
    if expected.is_empty() {
        if let Some(d) = &declared {
            expected = d.clone();
        }
    }
    within(
        &expected,
        &format!("{what} (expected_tool_calls)"),
        &tool_availability,
    )?;

    let node = |id: &str, kind: &'static str, tools: Vec<String>| Node {
        id: id.to_owned(),
        kind,
        name: None,
        description: None,
        tools,
        interrupts: Vec::new(),
    };
    let edge = |from: &str, to: &str, on: &'static str| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        on,
    };
    let output_schema = skill.metadata.get("output_schema").cloned();
    let staged = !stages.is_empty();
    let mut nodes = vec![node("input_validation", "input_validation", Vec::new())];
    let mut edges = Vec::new();
    if staged {
        let mut prev = "input_validation".to_owned();
        for (i, s) in stages.iter().enumerate() {
            let id = format!("stage-{}", i + 1);
            let mut n = node(&id, "stage", s.tools.clone().unwrap_or_else(|| all.clone()));
            n.name = Some(s.name.clone());
            n.description = s.description.clone();
            nodes.push(n);
            edges.push(edge(&prev, &id, if i == 0 { "valid" } else { "done" }));
            prev = id;
        }
        nodes.push(node("output_validation", "output_validation", Vec::new()));
        edges.push(edge(&prev, "output_validation", "done"));
        if output_schema.is_some() {
            edges.push(edge("output_validation", &prev, "invalid"));
        }
    } else {
        nodes.push(node("planner", "planner", Vec::new()));
        nodes.push(node("executor", "executor", all.clone()));
        nodes.push(node("output_validation", "output_validation", Vec::new()));
        edges.push(edge("input_validation", "planner", "valid"));
        edges.push(edge("planner", "executor", "tool_call"));
        edges.push(edge("executor", "planner", "result"));
        edges.push(edge("planner", "output_validation", "answer"));
        if output_schema.is_some() {
            edges.push(edge("output_validation", "planner", "invalid"));
        }
    }
    edges.push(edge("output_validation", "exit", "valid"));

    // Step 6: interrupts → nodes.
    let mut interrupts = Vec::new();
    for it in skill
        .metadata
        .get("interrupts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = match it
            .as_str()
            .or_else(|| it.get("name").and_then(Value::as_str))
        {
            Some(n) => n.to_owned(),
            None => continue,
        };
        let at = it.get("at").and_then(Value::as_str);
        let work: Vec<String> = nodes
            .iter()
            .filter(|n| matches!(n.kind, "planner" | "stage"))
            .map(|n| n.id.clone())
            .collect();
        let tool_nodes: Vec<String> = nodes
            .iter()
            .filter(|n| matches!(n.kind, "executor" | "stage"))
            .map(|n| n.id.clone())
            .collect();
        let targets: Vec<String> = if let Some(at) = at {
            let found: Vec<String> = nodes
                .iter()
                .filter(|n| n.id == at || n.name.as_deref() == Some(at))
                .map(|n| n.id.clone())
                .collect();
            if found.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidSkill,
                    format!("the interrupt `{name}` is placed `at` `{at}`, which is no node or stage of this subgraph"),
                )
                .at("skill_package.metadata.interrupts")
                .with("nodes", Value::Array(nodes.iter().map(|n| n.id.clone().into()).collect())));
            }
            found
        } else if INPUT.contains(&name.as_str()) {
            vec!["input_validation".to_owned()]
        } else if TOOL.contains(&name.as_str()) {
            tool_nodes
        } else if OUTPUT.contains(&name.as_str()) {
            vec!["output_validation".to_owned()]
        } else {
            work
        };
        for n in nodes.iter_mut().filter(|n| targets.contains(&n.id)) {
            n.interrupts.push(name.clone());
        }
        interrupts.push(Interrupt {
            name,
            nodes: targets,
            when: it.get("when").cloned(),
            description: it
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
    }

    // Step 7: exit condition.
    let skill_max = skill.metadata.get("max_tool_calls").and_then(Value::as_u64);
    let max_tool_calls = match (skill_max, req.max_tool_calls) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let kind = if output_schema.is_some() {
        "output_schema"
    } else if max_tool_calls.is_some() {
        "tool_budget"
    } else {
        "cancellation"
    };
    let exit = ExitCondition {
        kind,
        output_schema,
        max_tool_calls,
        interrupts: interrupts.iter().map(|i| i.name.clone()).collect(),
        cancellable: true,
    };
    Ok(Shaped {
        subgraph: SubgraphShape {
            kind: if staged { "staged" } else { "loop" },
            entry: "input_validation".into(),
            nodes,
            edges,
            tool_availability,
            decided_by,
        },
        expected_tool_calls: expected,
        interrupts,
        exit,
    })
}

impl SubgraphShape {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        super::json(self)
    }
}

impl Interrupt {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        super::json(self)
    }
}

impl ExitCondition {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        super::json(self)
    }
}
