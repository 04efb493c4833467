//! What to lower to: the target provider, tool definitions and the options a caller
//! passes.

use super::*;

/// A lowering target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Gemini generateContent.
    Gemini,
}

impl Provider {
    /// Every target, in a fixed order.
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Gemini,
    ];

    /// The wire name: `anthropic`, `openai-chat`, `openai-responses`, `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Gemini => "gemini",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Result<Provider> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOptions,
                    format!(
                        "unknown provider `{name}` (expected anthropic, openai-chat, openai-responses or gemini)"
                    ),
                )
                .at("provider")
                .with("provider", name)
            })
    }
}

/// A tool definition in the neutral shape (`name`, `description`, JSON Schema `parameters`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// `^[a-zA-Z0-9_-]{1,64}$`
    pub name: String,
    /// What the tool does.
    pub description: Option<String>,
    /// The JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// Strict schema adherence, where the provider has it.
    pub strict: Option<bool>,
}

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

impl Tool {
    fn from_value(v: Value, i: usize) -> Result<Tool> {
        let path = format!("tools[{i}]");
        let Value::Object(mut o) = v else {
            return Err(Error::new(ErrorKind::InvalidOptions, "a tool must be an object").at(path));
        };
        let mut f = Fields::new(&mut o, path, ErrorKind::InvalidOptions);
        let name = f.string("name")?;
        let description = f.opt_string("description")?;
        let parameters = match f.opt_object("parameters")? {
            Some(p) => Value::Object(p),
            None => match f.opt_object("input_schema")? {
                Some(p) => Value::Object(p),
                // MCP's descriptor spelling.
                None => match f.opt_object("inputSchema")? {
                    Some(p) => Value::Object(p),
                    None => serde_json::json!({"type": "object", "properties": {}}),
                },
            },
        };
        let strict = f.opt_bool("strict")?;
        let tool = Tool {
            name,
            description,
            parameters,
            strict,
        };
        tool.check(i)?;
        Ok(tool)
    }

    fn check(&self, i: usize) -> Result<()> {
        let ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!(
                    "tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$",
                    self.name
                ),
            )
            .at(format!("tools[{i}].name")));
        }
        if self
            .parameters
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t != "object")
        {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "tool parameters must be an object schema",
            )
            .at(format!("tools[{i}].parameters.type")));
        }
        Ok(())
    }
}
