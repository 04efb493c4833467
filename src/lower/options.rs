//! What to lower to: the target provider, tool definitions and the options a caller
//! passes (the provider and the tool shape are [`crate::provider`]'s).

use super::*;
use crate::settings::{Output, Settings, ToolChoice};

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
    /// The call settings (`model`, `maxOutputTokens`, `temperature`, `toolChoice`,
    /// `reasoning`, `output`, …, and `providerOptions`), written the way the provider wants
    /// them.
    pub settings: Settings,
    /// The answer's forced tool, where the provider takes no JSON Schema for it (built
    /// from `settings.output`).
    pub(crate) output_tool: Option<Tool>,
    /// Bounds on what the caller hands in (parts, bytes, turns).
    pub limits: crate::limits::Limits,
    /// The OpenAI-compatible server behind `openai-chat` (`compat`: its name or base URL):
    /// whether reasoning goes back to it (see [`crate::provider::Compat`]). Other providers
    /// do not use it.
    pub compat: Option<crate::provider::Compat>,
}

impl LowerOptions {
    /// Options for `provider` with nothing else.
    pub fn new(provider: Provider) -> Self {
        LowerOptions {
            provider,
            system: None,
            tools: Vec::new(),
            capabilities: None,
            settings: Settings::default(),
            output_tool: None,
            limits: crate::limits::Limits::default(),
            compat: None,
        }
    }

    /// Parses the options object of the bindings:
    /// `{ provider, system?, tools?, capabilities?, limits?, …settings }` (the settings'
    /// fields, [`Settings`], sit beside the others).
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
        let tools: Vec<Tool> = f
            .opt_array("tools")?
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, t)| Tool::from_value(t, i))
            .collect::<Result<_>>()?;
        let settings = Settings::take(&mut f)?;
        match &settings.tool_choice {
            Some(ToolChoice::Tool(n)) if !tools.iter().any(|t| &t.name == n) => {
                return Err(f.error(
                    "toolChoice",
                    format!("`toolChoice` names `{n}`, which is not among the tools"),
                ));
            }
            Some(ToolChoice::Required) if tools.is_empty() => {
                return Err(f.error(
                    "toolChoice",
                    "`toolChoice` is \"required\" but no tools are declared",
                ));
            }
            _ => {}
        }
        let output_tool = match &settings.output {
            Some(Output {
                schema: Some(schema),
                name,
                description,
                strict,
            }) => Some(Tool {
                name: name.clone(),
                description: Some(
                    description
                        .clone()
                        .unwrap_or_else(|| "Give the answer as this tool's input.".into()),
                ),
                parameters: schema.clone(),
                strict: *strict,
                kind: Default::default(),
            }),
            _ => None,
        };
        // Checked for every provider (one options object serves several), used by
        // openai-chat alone.
        let compat = match f.opt_string("compat")? {
            None => None,
            Some(c) => Some(crate::provider::Compat::parse(&c)?),
        };
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
                    format!(
                        "provider, system, tools, capabilities, limits, compat, {}",
                        crate::settings::KEYS
                    ),
                ));
        }
        Ok(LowerOptions {
            provider,
            system,
            tools,
            capabilities,
            settings,
            output_tool,
            limits,
            compat,
        })
    }
}
