//! What to lower to: the target provider, tool definitions and the options a caller
//! passes (the provider and the tool shape are [`crate::provider`]'s).

use super::*;

/// What to lower to, and what goes beside the user turn.
#[derive(Debug, Clone, PartialEq)]
pub struct LowerOptions {
    /// The target.
    pub provider: Provider,
    /// The system prompt, placed where the target wants it.
    pub system: Option<String>,
    /// Tool definitions.
    pub tools: Vec<Tool>,
    /// A partial override of the target's capability table (per model).
    pub capabilities: Option<Value>,
    /// Top-level request fields written first (`model`, `max_tokens`, `temperature`, …).
    pub params: Map<String, Value>,
    /// Bounds on what the caller hands in (parts, bytes, turns).
    pub limits: crate::limits::Limits,
}

impl LowerOptions {
    /// Options for `provider` with nothing else.
    pub fn new(provider: Provider) -> Self {
        LowerOptions {
            provider,
            system: None,
            tools: Vec::new(),
            capabilities: None,
            params: Map::new(),
            limits: crate::limits::Limits::default(),
        }
    }

    /// Parses the options object of the bindings:
    /// `{ provider, system?, tools?, capabilities?, params?, limits? }`.
    pub fn from_value(value: Value) -> Result<LowerOptions> {
        let Value::Object(mut o) = value else {
            return Err(Error::new(ErrorKind::InvalidOptions, "options must be an object").at("$"));
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidOptions);
        let provider = match f.opt_string("provider")? {
            Some(p) => Provider::parse(&p)?,
            None => return Err(f.error("provider", "options need a string `provider`")),
        };
        let system = f.opt_string("system")?;
        let tools = f
            .opt_array("tools")?
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, t)| Tool::from_value(t, i))
            .collect::<Result<_>>()?;
        let params = f.opt_object("params")?.unwrap_or_default();
        let capabilities = f.take("capabilities");
        let limits = match f.take("limits") {
            Some(v) => crate::limits::Limits::from_value(v, "limits")?,
            None => crate::limits::Limits::default(),
        };
        if let Some(k) = f.leftover() {
            return Err(Error::new(ErrorKind::InvalidOptions, "unknown option")
                .at(k)
                .with(
                    "known",
                    "provider, system, tools, capabilities, params, limits",
                ));
        }
        Ok(LowerOptions {
            provider,
            system,
            tools,
            capabilities,
            params,
            limits,
        })
    }
}
