//! What a model is offered at each step of a running skill, and what its tool calls
//! propose. The state's allowed tools become tool definitions under names every provider
//! accepts (`[A-Za-z0-9_-]`, ≤ 64; `choir.fs.read` → `choir_fs_read`); the model proposes
//! a transition by calling `skill_transition` (its `event` one of the state's transitions)
//! and, in a terminal state, finishes by calling `skill_finish` (its `output` checked
//! against the skill's output schema). An agent loop lowers with the offer's `system` and
//! `tools`, and turns each tool call back into a proposal with [`call_proposal`].

use super::{Arbiter, Proposal, Status};
use crate::agent::{AgentHost, Reply};
use crate::error::{Error, ErrorKind, Result};
use serde_json::{json, Map, Value};

pub use crate::agent::{FINISH_TOOL, TRANSITION_TOOL};

/// `name` as a provider tool name: other characters become `_`, at most 64 bytes.
pub(crate) fn safe_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.truncate(64);
    if s.is_empty() {
        s.push('_');
    }
    s
}

impl Arbiter {
    /// The offer for the lane's next model call: `{ system, tools, names }` — the system
    /// text (skill, state, objective, step budget, how to move on), the tool definitions of
    /// the state's allowed tools (from `tools`, the host's `{ name, description?,
    /// inputSchema? }` list; a tool the host does not describe gets an open object schema)
    /// plus `skill_transition` / `skill_finish`, and `names`: offered name → tool name.
    pub fn step_offer(&self, lane: &str, tools: &Value) -> Result<Value> {
        let cx = self.step_context(lane, &Value::Null)?;
        let described: Vec<&Value> = tools
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let mut offered = Vec::new();
        let mut names = Map::new();
        let allowed = cx["allowed_tools"].as_array().cloned().unwrap_or_default();
        for t in allowed.iter().filter_map(Value::as_str) {
            let mut name = safe_name(t);
            let mut n = 2;
            while names.contains_key(&name) || name == TRANSITION_TOOL || name == FINISH_TOOL {
                name = format!("{}_{n}", safe_name(t).chars().take(60).collect::<String>());
                n += 1;
            }
            names.insert(name.clone(), t.into());
            let at = described
                .iter()
                .position(|d| d.get("name").and_then(Value::as_str) == Some(t));
            let def = at.and_then(|i| described.get(i));
            if let Some(old) = def.and_then(|d| {
                ["parameters", "input_schema"]
                    .into_iter()
                    .find(|k| d.get(k).is_some_and(|v| !v.is_null()))
            }) {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    format!("a tool's schema is `inputSchema`, not `{old}`"),
                )
                .at(format!("tools[{}].{old}", at.unwrap_or_default()))
                .with("use", "inputSchema"));
            }
            let schema = def
                .and_then(|d| d.get("inputSchema"))
                .cloned()
                .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
            let mut o = Map::new();
            o.insert("name".into(), name.into());
            if let Some(d) = def
                .and_then(|d| d.get("description"))
                .and_then(Value::as_str)
            {
                o.insert("description".into(), d.into());
            }
            o.insert("inputSchema".into(), schema);
            offered.push(Value::Object(o));
        }
        let events: Vec<Value> = cx["transitions"].as_array().cloned().unwrap_or_default();
        if !events.is_empty() {
            offered.push(json!({
                "name": TRANSITION_TOOL,
                "description": "Moves the skill to its next state when this state's objective is met.",
                "inputSchema": { "type": "object", "properties": { "event": { "type": "string", "enum": events } }, "required": ["event"] },
            }));
        }
        let terminal = cx["terminal"].as_bool() == Some(true);
        if terminal {
            let spec = self.registry.get(cx["skill"].as_str().unwrap_or_default());
            let output = spec
                .and_then(|s| s.output_schema.clone())
                .unwrap_or_else(|| json!({}));
            offered.push(json!({
                "name": FINISH_TOOL,
                "description": "Finishes the skill with its output.",
                "inputSchema": { "type": "object", "properties": { "output": output }, "required": ["output"] },
            }));
        }
        let mut system = format!(
            "You are running the skill `{}`, in state `{}` (step {} of at most {}).\nObjective: {}",
            cx["skill"].as_str().unwrap_or_default(),
            cx["state"].as_str().unwrap_or_default(),
            cx["step"],
            cx["max_steps"],
            cx["objective"].as_str().unwrap_or_default(),
        );
        if !events.is_empty() {
            let list: Vec<&str> = events.iter().filter_map(Value::as_str).collect();
            system.push_str(&format!(
                "\nWhen the objective is met, call `{TRANSITION_TOOL}` with one of: {}.",
                list.join(", ")
            ));
        }
        if terminal {
            system.push_str(&format!(
                "\nWhen you are done, call `{FINISH_TOOL}` with the output."
            ));
        }
        Ok(json!({ "system": system, "tools": offered, "names": names }))
    }
}

/// The proposal a tool call makes: `skill_transition` → `{ type: "transition", event }`,
/// `skill_finish` → `{ type: "finish", output }`, any other offered name → `{ type: "tool",
/// name (the tool's own name, from `names`), arguments }`.
pub fn call_proposal(name: &str, input: &Value, names: &Value) -> Result<Value> {
    match name {
        TRANSITION_TOOL => match input.get("event").and_then(Value::as_str) {
            Some(e) => Ok(json!({ "type": "transition", "event": e })),
            None => Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("`{TRANSITION_TOOL}` needs an `event` string"),
            )
            .at("event")),
        },
        FINISH_TOOL => Ok(
            json!({ "type": "finish", "output": input.get("output").cloned().unwrap_or(Value::Null) }),
        ),
        _ => {
            let tool = names.get(name).and_then(Value::as_str).unwrap_or(name);
            Ok(json!({ "type": "tool", "name": tool, "arguments": input }))
        }
    }
}

/// An [`AgentHost`] whose runs an [`Arbiter`] governs: the host's model, tools and store, the
/// lane's step offers, every call proposed to the arbiter, the loop stopping when the lane's
/// run ends. What the npm package's `runAgent({ arbiter, lane })` and the component's
/// `run-agent` do.
pub struct WithArbiter<'a, H> {
    /// The host doing the I/O.
    pub host: H,
    /// The arbiter.
    pub arbiter: &'a mut Arbiter,
    /// The lane whose run is offered and proposed to.
    pub lane: String,
}

impl<H: AgentHost> AgentHost for WithArbiter<'_, H> {
    fn send(&mut self, body: &str, step: u32) -> Result<Reply> {
        self.host.send(body, step)
    }

    fn call_tool(
        &mut self,
        name: &str,
        call: &Value,
    ) -> Option<std::result::Result<Value, String>> {
        self.host.call_tool(name, call)
    }

    fn persist(&mut self, turn: &Value) -> Result<()> {
        self.host.persist(turn)
    }

    fn offer(&mut self, tools: &[Value]) -> Result<Value> {
        self.arbiter
            .step_offer(&self.lane, &Value::Array(tools.to_vec()))
    }

    fn propose(&mut self, call: &Value, names: &Value) -> Result<Value> {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        let input = call.get("input").cloned().unwrap_or(Value::Null);
        let p = Proposal::from_value(&call_proposal(name, &input, names)?)?;
        let o = self.arbiter.propose(&self.lane, p)?;
        serde_json::to_value(&o).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
    }

    fn running(&mut self) -> Result<bool> {
        Ok(self
            .arbiter
            .run(&self.lane)
            .is_none_or(|r| r.status == Status::Running))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbiter::SkillRegistry;
    use std::sync::Arc;

    fn tool_names(offer: &Value) -> Vec<&str> {
        offer["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn offers_follow_the_state_and_calls_map_back() {
        let spec = json!({
            "name": "research", "initial_state": "search", "output_schema": { "type": "object" },
            "states": {
                "search": { "objective": "Search.", "allowed_tools": ["docs.search", "docs:search"], "transitions": [{ "on": "found", "to": "report" }] },
                "report": { "objective": "Report.", "terminal": true }
            }
        });
        let tools = ["docs.search".to_owned(), "docs:search".to_owned()];
        let reg = SkillRegistry::build(&[spec], &[], &tools).unwrap();
        let mut a = Arbiter::new(Arc::new(reg));
        a.start("l", "research", Value::Null).unwrap();
        let o = a
            .step_offer(
                "l",
                &json!([{ "name": "docs.search", "description": "Finds." }]),
            )
            .unwrap();
        let names = tool_names(&o);
        // Two tools that sanitise alike get distinct names.
        assert_eq!(names, ["docs_search", "docs_search_2", TRANSITION_TOOL]);
        assert_eq!(o["tools"][0]["description"], "Finds.");
        assert_eq!(o["names"]["docs_search_2"], "docs:search");
        assert!(o["system"].as_str().unwrap().contains("Objective: Search."));
        let p = call_proposal("docs_search_2", &json!({"q": 1}), &o["names"]).unwrap();
        assert_eq!(
            p,
            json!({ "type": "tool", "name": "docs:search", "arguments": { "q": 1 } })
        );
        assert!(call_proposal(TRANSITION_TOOL, &json!({}), &o["names"]).is_err());
        let t = call_proposal(TRANSITION_TOOL, &json!({ "event": "found" }), &o["names"]).unwrap();
        let out = a
            .propose("l", crate::arbiter::Proposal::from_value(&t).unwrap())
            .unwrap();
        assert_eq!(out.state, "report");
        let o = a.step_offer("l", &Value::Null).unwrap();
        let names = tool_names(&o);
        assert_eq!(names, [FINISH_TOOL]);
        assert_eq!(
            o["tools"][0]["inputSchema"]["properties"]["output"],
            json!({ "type": "object" })
        );
    }
}
