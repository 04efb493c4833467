//! The agent loop for JS: conversions only. The glue (`pkg/src/agent.js`) performs each
//! action the core's [`crate::agent::AgentRun`] names and feeds back what happened.

use super::js_err;
use crate::agent::{AgentOptions, AgentRun, Event};
use crate::error::{Error, ErrorKind};
use crate::wire::json_value;
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// One agent run kept in wasm.
#[wasm_bindgen(js_name = AgentRunCore)]
pub struct JsAgentRun {
    inner: AgentRun,
}

fn value(text: &str) -> Result<Value, JsValue> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    json_value(text, "the agent options", ErrorKind::InvalidOptions).map_err(js_err)
}

#[wasm_bindgen(js_class = AgentRunCore)]
impl JsAgentRun {
    /// A run: the conversation's own lowering options and the caller's (JSON objects, or
    /// ""), the tools (a JSON array, or ""), the step limit, and whether an arbiter governs it.
    #[wasm_bindgen(constructor)]
    pub fn new(
        defaults: &str,
        lower: &str,
        tools: &str,
        max_steps: u32,
        arbiter: bool,
    ) -> Result<JsAgentRun, JsValue> {
        let o = AgentOptions::from_parts(
            value(defaults)?,
            value(lower)?,
            value(tools)?,
            max_steps,
            arbiter,
        )
        .map_err(js_err)?;
        Ok(JsAgentRun {
            inner: AgentRun::new(o),
        })
    }

    /// Feeds an event (its index in `crate::agent::EVENTS`) with its payload text → the next
    /// action as JSON (`{ do, … }`).
    pub fn next(&mut self, event: u32, payload: &str) -> Result<String, JsValue> {
        let e = Event::at(event as usize)
            .ok_or_else(|| js_err(Error::new(ErrorKind::Internal, "no such agent event")))?;
        let v = e.payload(payload).map_err(js_err)?;
        self.inner.next(e, v).map(|a| a.to_json()).map_err(js_err)
    }
}
