//! The composer's own tools for authoring conversations, as MCP tool descriptors (`name`,
//! `description`, `inputSchema`) with handlers over a skill store: `create_skill`,
//! `update_skill`, `list_skills`, `add_artifact`.
//!
//! A call is checked twice: the invocation must be an authoring one whose composition
//! lists the tool (an application invocation never sees these tools, so it can never call
//! them), and the arguments must match the tool's `inputSchema`. The handlers turn the
//! arguments into the store's own operations; the store validates what it writes.

use super::tool::ToolDescriptor;
use crate::error::{Error, ErrorKind, Result};
use crate::json_schema;
use crate::json_text::JsonText;
use crate::skill::model::{artifact_id, ListFilter};
use crate::skill::{import_value, Skill, SkillSummary};
use crate::store::SkillStore;
use serde_json::{json, Value};

/// The authoring tool names.
pub const TOOLS: [&str; 4] = [
    "create_skill",
    "update_skill",
    "list_skills",
    "add_artifact",
];

/// Whether `name` is one of the authoring tools.
pub fn is_authoring_tool(name: &str) -> bool {
    TOOLS.contains(&name)
}

/// The descriptors, as MCP lists them (`authoring_tools.json`: data, not code).
const DESCRIPTORS: &str = include_str!("authoring_tools.json");

/// The four descriptors, MCP-shaped: `{ name, description, inputSchema }`.
pub fn descriptors() -> Vec<ToolDescriptor> {
    let list: Vec<Value> = serde_json::from_str(DESCRIPTORS).unwrap_or_default();
    list.into_iter()
        .filter_map(|d| ToolDescriptor::from_value(d, "authoring_tools").ok())
        .collect()
}

fn schema(name: &str) -> Value {
    descriptors()
        .into_iter()
        .find(|d| d.name == name)
        .and_then(|d| d.descriptor.get("inputSchema").cloned())
        .unwrap_or(Value::Bool(false))
}

/// Checks that a composition may call the authoring tool `name` with `args`: the
/// composition is an authoring one that lists the tool, and `args` match its schema.
pub fn authorize(name: &str, args: &Value, composition: &Value) -> Result<()> {
    if !is_authoring_tool(name) {
        return Err(Error::new(
            ErrorKind::UnknownTool,
            format!("`{name}` is not an authoring tool ({})", TOOLS.join(", ")),
        )
        .with("tool", name));
    }
    let purpose = composition.get("purpose").and_then(Value::as_str);
    let listed = composition
        .pointer("/subgraph/tool_availability")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
        });
    if purpose != Some("authoring") || !listed {
        return Err(Error::new(
            ErrorKind::UnknownTool,
            format!(
                "`{name}` is not available to this invocation: authoring tools exist only in authoring invocations whose caller holds them"
            ),
        )
        .with("tool", name)
        .with("purpose", purpose.unwrap_or("application")));
    }
    if let Err(v) = json_schema::validate(&schema(name), args) {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!("the arguments of `{name}` do not match its inputSchema"),
        )
        .with("tool", name)
        .with(
            "violations",
            Value::Array(v.iter().map(|x| x.to_value()).collect()),
        ));
    }
    Ok(())
}

/// `create_skill`: the package to create (validated as any import is).
pub fn create_package(args: &Value, now: &str) -> Result<Skill> {
    let mut pkg = args.clone();
    if let Some(o) = pkg.as_object_mut() {
        o.insert("source".into(), "user".into());
    }
    import_value(&pkg, now).map(|(s, _)| s)
}

/// `update_skill`: the skill with the changes applied (metadata keys set to `null` are
/// removed; `framing` is a shorthand for `metadata.framing`).
pub fn apply_update(skill: &Skill, args: &Value) -> Result<Skill> {
    let mut v = skill.to_value();
    let (Some(o), Some(a)) = (v.as_object_mut(), args.as_object()) else {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            "update_skill takes an object",
        ));
    };
    for k in [
        "description",
        "version",
        "tags",
        "intent_patterns",
        "trigger_phrases",
    ] {
        if let Some(x) = a.get(k) {
            o.insert(k.into(), x.clone());
        }
    }
    let mut meta = skill.metadata.clone();
    if let Some(Value::Object(m)) = a.get("metadata") {
        for (k, x) in m {
            if x.is_null() {
                meta.remove(k);
            } else {
                meta.insert(k.clone(), x.clone());
            }
        }
    }
    if let Some(f) = a.get("framing") {
        meta.insert("framing".into(), f.clone());
    }
    o.insert("metadata".into(), Value::Object(meta));
    import_value(&v, &skill.updated_at).map(|(s, _)| s)
}

/// `add_artifact`: the artifact row for `skill` (placed after its last artifact unless the
/// arguments give an ordinal).
pub fn artifact_row(skill: &Skill, args: &Value) -> Value {
    let skill_id = skill.id.as_str();
    let mut a = args.as_object().cloned().unwrap_or_default();
    a.remove("skill");
    let next = skill
        .artifacts
        .iter()
        .map(|x| x.ordinal)
        .max()
        .map_or(0, |m| m.saturating_add(1));
    a.entry("ordinal").or_insert_with(|| next.into());
    let name = a
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let variant = a
        .get("model_variant")
        .and_then(Value::as_str)
        .map(str::to_owned);
    a.insert("skill_id".into(), skill_id.into());
    a.entry("id")
        .or_insert_with(|| artifact_id(skill_id, &name, variant.as_deref()).into());
    Value::Object(a)
}

/// `list_skills`: the summaries that pass the filters (see [`ListFilter`]).
pub fn filter(list: &[SkillSummary], args: &Value) -> Result<Vec<Value>> {
    // The tool's own three filters (its input schema was checked before the call).
    let mut known = serde_json::Map::new();
    for k in ["source", "tags", "enabled"] {
        if let Some(v) = args.get(k) {
            known.insert(k.into(), v.clone());
        }
    }
    let f = ListFilter::from_value(&Value::Object(known))?;
    Ok(list
        .iter()
        .filter(|s| f.keeps(s))
        .map(|s| {
            json!({
                "id": s.id(),
                "name": s.name(),
                "description": s.get_str("description"),
                "version": s.get_str("version"),
                "source": s.get_str("source"),
                "tags": s.get_strings("tags"),
            })
        })
        .collect())
}

/// An MCP `CallToolResult` for a value: the JSON as text plus `structuredContent`.
pub fn tool_result(v: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": v.json_text()}],
        "structuredContent": v,
        "isError": false,
    })
}

/// An MCP `CallToolResult` for an error: `isError` with the code and message.
pub fn tool_error(e: &Error) -> Value {
    json!({
        "content": [{"type": "text", "text": format!("{}: {}", e.code(), e)}],
        "structuredContent": {"code": e.code(), "message": e.to_string(), "details": e.details()},
        "isError": true,
    })
}

/// Runs an authorized call against a synchronous store (the component, native hosts).
pub fn call(
    store: &mut dyn SkillStore,
    name: &str,
    args: &Value,
    composition: &Value,
    now: &str,
) -> Result<Value> {
    authorize(name, args, composition)?;
    let skill_named = |store: &dyn SkillStore, n: &str| -> Result<Skill> {
        store.get_skill_by_name(n)?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("no skill is named `{n}` in this scope"),
            )
            .with("name", n)
        })
    };
    match name {
        "create_skill" => {
            let s = create_package(args, now)?;
            store.create_skill(&s, now)?;
            Ok(s.summary().to_value())
        }
        "update_skill" => {
            let n = args.get("name").and_then(Value::as_str).unwrap_or("");
            let s = apply_update(&skill_named(store, n)?, args)?;
            store.update_skill(&s, now)?;
            Ok(s.summary().to_value())
        }
        "list_skills" => Ok(Value::Array(filter(&store.list_skills()?, args)?)),
        _ => {
            let n = args.get("skill").and_then(Value::as_str).unwrap_or("");
            let s = skill_named(store, n)?;
            let row = artifact_row(&s, args);
            let mut problems = crate::problems::Problems::default();
            let a = crate::skill::read::read_artifact(&row, "", &s.id, 0, now, &mut problems)
                .filter(|_| !problems.has_errors())
                .ok_or_else(|| problems.into_error("the artifact is not valid"))?;
            store.add_artifact(&a, now)?;
            Ok(a.to_ref().to_value())
        }
    }
}
