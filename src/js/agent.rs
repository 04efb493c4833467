//! The agent loop for JS: conversions only. The glue (`pkg/src/agent.js`) performs each
//! action the core's [`crate::agent::AgentRun`] names and feeds back what happened.

use super::js_err;
use crate::agent::{AgentOptions, AgentRun, Event};
use wasm_bindgen::prelude::*;

/// One agent run kept in wasm.
#[wasm_bindgen(js_name = AgentRunCore)]
pub struct JsAgentRun {
    inner: AgentRun,
}

#[wasm_bindgen(js_class = AgentRunCore)]
impl JsAgentRun {
    /// A run with these options (JSON: `{ defaults?, lower?, tools?, max_steps?, arbiter? }`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> Result<JsAgentRun, JsValue> {
        Ok(JsAgentRun {
            inner: AgentRun::new(AgentOptions::from_json(options).map_err(js_err)?),
        })
    }

    /// Feeds an event (its name and payload, see [`Event::from_wire`]) → the next action as
    /// JSON (`{ do, … }`).
    pub fn next(&mut self, event: &str, payload: &str) -> Result<String, JsValue> {
        let (e, v) = Event::from_wire(event, payload).map_err(js_err)?;
        self.inner.next(e, v).map(|a| a.to_json()).map_err(js_err)
    }
}
