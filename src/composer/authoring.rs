//! The composer's own tools for authoring conversations, as MCP tool descriptors (`name`,
//! `description`, `inputSchema`) with handlers over a skill store: `create_skill`,
//! `update_skill`, `list_skills`, `add_artifact`.
//!
//! A call is checked twice: the invocation must be an authoring one whose composition
//! lists the tool (an application invocation never sees these tools, so it can never call
//! them), and the arguments must match the tool's `inputSchema`. The handlers turn the
//! arguments into the store's own operations; the store validates what it writes.

use super::request::ToolDescriptor;
use crate::error::{Error, ErrorKind, Result};
use crate::json_schema;
use crate::skill::{import_value, model::artifact_id, ArtifactKind, Skill, SkillSummary};
use crate::store::SkillStore;
use serde_json::{json, Map, Value};

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

fn schema(name: &str) -> Value {
    let kinds: Vec<&str> = ArtifactKind::ALL.iter().map(|k| k.name()).collect();
    let artifact = json!({
        "type": "object",
        "required": ["kind", "name", "content"],
        "properties": {
            "kind": {"enum": kinds},
            "name": {"type": "string", "minLength": 1},
            "content": {"type": "string"},
            "model_variant": {"type": ["string", "null"]},
            "ordinal": {"type": "integer"},
            "metadata": {"type": "object"}
        }
    });
    match name {
        "create_skill" => json!({
            "type": "object",
            "required": ["name", "description"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "Unique skill name in this scope"},
                "description": {"type": "string", "minLength": 1},
                "version": {"type": "string", "description": "Semantic version (default 1.0.0)"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "intent_patterns": {"type": "array", "items": {"type": "string"}},
                "trigger_phrases": {"type": "array", "items": {"type": "string"}},
                "metadata": {"type": "object", "description": "The contract: framing, parameters, tool_surface, interrupts, output_schema, …"},
                "artifacts": {"type": "array", "items": artifact}
            }
        }),
        "update_skill" => json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "description": "The skill to update"},
                "description": {"type": "string", "minLength": 1},
                "version": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "intent_patterns": {"type": "array", "items": {"type": "string"}},
                "trigger_phrases": {"type": "array", "items": {"type": "string"}},
                "framing": {"description": "Prose, or { artifact: name }"},
                "metadata": {"type": "object", "description": "Keys to set in the skill's metadata (null removes a key)"}
            }
        }),
        "list_skills" => json!({
            "type": "object",
            "properties": {
                "source": {"enum": ["system", "community", "user"]},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Skills carrying every one of these tags"},
                "enabled": {"type": "boolean", "description": "Only enabled (true) or disabled (false) skills"}
            }
        }),
        _ => {
            let mut a = artifact;
            if let Some(o) = a.as_object_mut() {
                o.insert(
                    "required".into(),
                    json!(["skill", "kind", "name", "content"]),
                );
                if let Some(Value::Object(p)) = o.get_mut("properties") {
                    p.insert(
                        "skill".into(),
                        json!({"type": "string", "description": "The skill's name"}),
                    );
                }
            }
            a
        }
    }
}

/// The four descriptors, MCP-shaped: `{ name, description, inputSchema }`.
pub fn descriptors() -> Vec<ToolDescriptor> {
    let text = [
        "Create a new skill package (metadata, contract and optional artifacts) in this scope.",
        "Update an existing skill's metadata or framing; its artifacts stay.",
        "List the skills of this scope, filtered by source, tags or enabled state.",
        "Add a typed artifact (description, prompt_template, code_template, dspy_module, approach, example) to a skill.",
    ];
    TOOLS
        .iter()
        .zip(text)
        .map(|(name, description)| {
            let mut d = Map::new();
            d.insert("name".into(), (*name).into());
            d.insert("description".into(), description.into());
            d.insert("inputSchema".into(), schema(name));
            ToolDescriptor {
                name: (*name).to_owned(),
                descriptor: d,
            }
        })
        .collect()
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

/// `list_skills`: the summaries that pass the filters.
pub fn filter(list: &[SkillSummary], args: &Value) -> Vec<Value> {
    let source = args.get("source").and_then(Value::as_str);
    let tags: Vec<&str> = args
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let enabled = args.get("enabled").and_then(Value::as_bool);
    list.iter()
        .filter(|s| source.is_none_or(|x| s.get_str("source") == Some(x)))
        .filter(|s| {
            let have = s.get_strings("tags");
            tags.iter().all(|t| have.contains(t))
        })
        .filter(|s| {
            let on = s
                .head()
                .get("metadata")
                .and_then(|m| m.get("enabled"))
                .and_then(Value::as_bool)
                .unwrap_or(true);
            enabled.is_none_or(|e| e == on)
        })
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
        .collect()
}

/// An MCP `CallToolResult` for a value: the JSON as text plus `structuredContent`.
pub fn tool_result(v: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": v.to_string()}],
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
        "list_skills" => Ok(Value::Array(filter(&store.list_skills()?, args))),
        _ => {
            let n = args.get("skill").and_then(Value::as_str).unwrap_or("");
            let s = skill_named(store, n)?;
            let row = artifact_row(&s, args);
            let mut problems = crate::skill::validate::Problems::default();
            let a = crate::skill::validate::read_artifact(&row, "", &s.id, 0, now, &mut problems)
                .filter(|_| !problems.has_errors())
                .ok_or_else(|| problems.into_error("the artifact is not valid"))?;
            store.add_artifact(&a, now)?;
            Ok(a.to_ref().to_value())
        }
    }
}
