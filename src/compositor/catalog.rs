//! The command catalog: what `/name` means, and which `@kind` mentions the host resolves.
//!
//! A catalog entry, as the host registers it (JSON):
//!
//! ```json
//! { "name": "review", "kind": "template", "description": "Review a file",
//!   "body": "Review $1 for $2 issues", "argument_hint": "<file> [severity]",
//!   "arguments": [ { "name": "file", "required": true }, { "name": "severity" } ],
//!   "source": "project" }
//! ```
//!
//! Kinds: `action` (a host action the model never sees: `/branch`, `/compact`, `/archive`,
//! `/rewind`), `intent` (a text part plus an intent flag: `/search`), `template` (a
//! project-config command with a body), `prompt` (an MCP prompt: `server` + `prompt`, the
//! host runs `prompts/get`) and `skill` (a skill's slash trigger: `skill`, optional `body`).

use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use serde_json::{Map, Value};

/// What a command does when it is submitted.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// A host action; `action` is the name the host dispatches on.
    Action {
        /// The action name (defaults to the command name).
        action: String,
    },
    /// A text part plus `{ "intent": intent }` flags.
    Intent {
        /// The intent flag, e.g. `search`.
        intent: String,
    },
    /// A template body expanded with the arguments.
    Template {
        /// The body with `$1`, `$ARGUMENTS`, `${name}` slots.
        body: String,
    },
    /// An MCP prompt template; the host runs `prompts/get` and the messages become parts.
    Prompt {
        /// The MCP server name.
        server: String,
        /// The prompt name on that server.
        prompt: String,
    },
    /// A skill's slash trigger: asks the host to activate the skill.
    Skill {
        /// The skill name.
        skill: String,
        /// An optional body expanded with the arguments and sent as text.
        body: Option<String>,
    },
}

impl CommandKind {
    /// The wire name of the kind.
    pub fn name(&self) -> &'static str {
        match self {
            CommandKind::Action { .. } => "action",
            CommandKind::Intent { .. } => "intent",
            CommandKind::Template { .. } => "template",
            CommandKind::Prompt { .. } => "prompt",
            CommandKind::Skill { .. } => "skill",
        }
    }
}

/// A declared argument (the MCP `PromptArgument` shape).
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    /// The argument name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether the command fails without it.
    pub required: bool,
}

/// One catalog entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The name without the slash (`review`).
    pub name: String,
    /// What it does.
    pub kind: CommandKind,
    /// One line for the palette.
    pub description: Option<String>,
    /// A usage hint such as `<file> [severity]`.
    pub argument_hint: Option<String>,
    /// Declared arguments, in positional order.
    pub arguments: Vec<Argument>,
    /// Where it came from: `builtin`, `project`, `mcp`, `skill`, or any host word.
    pub source: String,
}

/// A mention kind the host resolves through a callback (`@selection`, `@open`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct MentionKind {
    /// The kind, as typed after `@`.
    pub name: String,
    /// What it inserts.
    pub description: Option<String>,
    /// `builtin`, or who registered it.
    pub source: String,
}

/// The commands and mention kinds a compositor knows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandCatalog {
    commands: litemap::LiteMap<String, Command>,
    mentions: litemap::LiteMap<String, MentionKind>,
}

/// Names: 1–64 characters of ASCII letters, digits, `_`, `-`, `.` and `:`.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':'))
}

fn invalid(path: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidCommand, msg).at(path)
}

impl CommandCatalog {
    /// An empty catalog.
    pub fn empty() -> Self {
        CommandCatalog::default()
    }

    /// The built-in commands (`/branch`, `/compact`, `/archive`, `/rewind` as host actions,
    /// `/search` as an intent) and mention kinds (`@selection`, `@open`, `@cursor`, `@last`).
    pub fn with_builtins() -> Self {
        let mut c = CommandCatalog::default();
        let actions = [
            ("branch", "Branch this conversation", Some("[name]")),
            (
                "compact",
                "Compact the conversation history",
                Some("[instructions]"),
            ),
            ("archive", "Archive this conversation", None),
            ("rewind", "Rewind to an earlier message", Some("[n]")),
        ];
        for (name, description, hint) in actions {
            c.insert(Command {
                name: name.into(),
                kind: CommandKind::Action {
                    action: name.into(),
                },
                description: Some(description.into()),
                argument_hint: hint.map(Into::into),
                arguments: Vec::new(),
                source: "builtin".into(),
            });
        }
        c.insert(Command {
            name: "search".into(),
            kind: CommandKind::Intent {
                intent: "search".into(),
            },
            description: Some("Search for something".into()),
            argument_hint: Some("<query>".into()),
            arguments: vec![Argument {
                name: "query".into(),
                description: Some("what to search for".into()),
                required: true,
            }],
            source: "builtin".into(),
        });
        for (name, description) in [
            ("selection", "The current selection"),
            ("open", "The open documents"),
            ("cursor", "The cursor position"),
            ("last", "The last action"),
        ] {
            c.mentions.insert(
                name.into(),
                MentionKind {
                    name: name.into(),
                    description: Some(description.into()),
                    source: "builtin".into(),
                },
            );
        }
        c
    }

    fn insert(&mut self, cmd: Command) -> Option<Command> {
        self.commands.insert(cmd.name.clone(), cmd)
    }

    /// Registers (or replaces) a command from its JSON entry; returns the entry it replaced.
    pub fn register(&mut self, entry: Value) -> Result<Option<Command>> {
        let cmd = Command::from_value(entry)?;
        Ok(self.insert(cmd))
    }

    /// Registers a command.
    pub fn register_command(&mut self, cmd: Command) -> Option<Command> {
        self.insert(cmd)
    }

    /// Registers (or replaces) a mention kind from `{ name, description?, source? }`.
    pub fn register_mention(&mut self, entry: Value) -> Result<Option<MentionKind>> {
        let Value::Object(mut o) = entry else {
            return Err(invalid("$", "a mention kind must be an object"));
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidCommand);
        let name = f.string("name")?;
        let name = name.strip_prefix('@').unwrap_or(&name).to_owned();
        if !valid_name(&name) || name == "skill" || name == "file" {
            return Err(invalid(
                "name",
                format!("`{name}` cannot be a mention kind (1-64 letters, digits, _ - . :; not skill or file)"),
            ));
        }
        let kind = MentionKind {
            name: name.clone(),
            description: f.opt_string("description")?,
            source: f.opt_string("source")?.unwrap_or_else(|| "host".into()),
        };
        Ok(self.mentions.insert(name, kind))
    }

    /// Removes a command (with or without its slash); returns it.
    pub fn unregister(&mut self, name: &str) -> Option<Command> {
        self.commands.remove(name.strip_prefix('/').unwrap_or(name))
    }

    /// The command named `name` (with or without its slash).
    pub fn get(&self, name: &str) -> Option<&Command> {
        self.commands.get(name.strip_prefix('/').unwrap_or(name))
    }

    /// Whether `@kind` is a mention kind the host resolves.
    pub fn mention_kind(&self, kind: &str) -> Option<&MentionKind> {
        self.mentions.get(kind)
    }

    /// All commands, by name.
    pub fn commands(&self) -> impl Iterator<Item = &Command> {
        self.commands.values()
    }

    /// All mention kinds, by name.
    pub fn mention_kinds(&self) -> impl Iterator<Item = &MentionKind> {
        self.mentions.values()
    }

    /// Every entry as JSON: `{ commands: [...], mentions: [...] }`.
    pub fn list(&self) -> Value {
        let mut o = Map::new();
        o.insert(
            "commands".into(),
            Value::Array(self.commands().map(Command::to_value).collect()),
        );
        o.insert(
            "mentions".into(),
            Value::Array(self.mention_kinds().map(MentionKind::to_value).collect()),
        );
        Value::Object(o)
    }

    /// Palette completions for what the user has typed: `/re` lists commands, `@se` mention
    /// kinds (plus `@file:` and `@skill:`). Names starting with the typed text come first,
    /// then names containing it; each group is sorted by name. Case-insensitive.
    pub fn complete(&self, typed: &str, limit: usize) -> Vec<Value> {
        let (sigil, word) = match typed.chars().next() {
            Some('@') => ('@', &typed[1..]),
            Some('/') => ('/', &typed[1..]),
            _ => ('/', typed),
        };
        let word = word.to_ascii_lowercase();
        let mut prefix = Vec::new();
        let mut inner = Vec::new();
        let mut consider = |name: &str, item: Value| {
            let lower = name.to_ascii_lowercase();
            if lower.starts_with(&word) {
                prefix.push(item);
            } else if lower.contains(&word) {
                inner.push(item);
            }
        };
        if sigil == '/' {
            for c in self.commands() {
                consider(&c.name, c.summary());
            }
        } else {
            for (name, description) in [
                ("file:", "A workspace file (add :10-25 for lines)"),
                ("skill:", "Activate a skill"),
            ] {
                let mut o = Map::new();
                o.insert("insert".into(), format!("@{name}").into());
                o.insert("name".into(), name.into());
                o.insert("kind".into(), "mention".into());
                o.insert("description".into(), description.into());
                o.insert("source".into(), "builtin".into());
                consider(name, Value::Object(o));
            }
            for m in self.mention_kinds() {
                let mut o = match m.to_value() {
                    Value::Object(o) => o,
                    _ => Map::new(),
                };
                o.insert("insert".into(), format!("@{}", m.name).into());
                o.insert("kind".into(), "mention".into());
                consider(&m.name, Value::Object(o));
            }
        }
        prefix.extend(inner);
        prefix.truncate(limit);
        prefix
    }
}

impl MentionKind {
    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("name".into(), self.name.clone().into());
        if let Some(d) = &self.description {
            o.insert("description".into(), d.clone().into());
        }
        o.insert("source".into(), self.source.clone().into());
        Value::Object(o)
    }
}

impl Command {
    /// Parses a catalog entry (see the module docs); every error names its field.
    pub fn from_value(entry: Value) -> Result<Command> {
        let Value::Object(mut o) = entry else {
            return Err(invalid("$", "a command entry must be an object"));
        };
        let mut f = Fields::new(&mut o, "", ErrorKind::InvalidCommand);
        let name = f.string("name")?;
        let name = name.strip_prefix('/').unwrap_or(&name).to_owned();
        if !valid_name(&name) {
            return Err(invalid(
                "name",
                format!("`{name}` is not a command name (1-64 letters, digits, _ - . :)"),
            ));
        }
        let kind_name = f.opt_string("kind")?.unwrap_or_else(|| "template".into());
        let kind = match kind_name.as_str() {
            "action" => CommandKind::Action {
                action: f.opt_string("action")?.unwrap_or_else(|| name.clone()),
            },
            "intent" => CommandKind::Intent {
                intent: f.opt_string("intent")?.unwrap_or_else(|| name.clone()),
            },
            "template" => CommandKind::Template {
                body: f.string("body")?,
            },
            "prompt" => CommandKind::Prompt {
                server: f.string("server")?,
                prompt: f.opt_string("prompt")?.unwrap_or_else(|| name.clone()),
            },
            "skill" => CommandKind::Skill {
                skill: f.opt_string("skill")?.unwrap_or_else(|| name.clone()),
                body: f.opt_string("body")?,
            },
            other => {
                return Err(invalid(
                    "kind",
                    format!("unknown command kind `{other}` (expected action, intent, template, prompt or skill)"),
                ))
            }
        };
        let mut arguments = Vec::new();
        for (i, a) in f
            .opt_array("arguments")?
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let path = format!("arguments[{i}]");
            let Value::Object(mut ao) = a else {
                return Err(invalid(path, "an argument must be an object"));
            };
            let mut af = Fields::new(&mut ao, path.clone(), ErrorKind::InvalidCommand);
            let arg = Argument {
                name: af.string("name")?,
                description: af.opt_string("description")?,
                required: af.opt_bool("required")?.unwrap_or(false),
            };
            if arguments.iter().any(|x: &Argument| x.name == arg.name) {
                return Err(invalid(
                    format!("{path}.name"),
                    format!("argument `{}` is declared twice", arg.name),
                ));
            }
            arguments.push(arg);
        }
        Ok(Command {
            name,
            kind,
            description: f.opt_string("description")?,
            argument_hint: f.opt_string("argument_hint")?,
            arguments,
            source: f.opt_string("source")?.unwrap_or_else(|| "host".into()),
        })
    }

    /// The entry as JSON (the shape [`Command::from_value`] reads).
    pub fn to_value(&self) -> Value {
        let mut o = match self.summary() {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let mut put = |k: &str, v: &str| {
            o.insert(k.into(), v.into());
        };
        match &self.kind {
            CommandKind::Action { action } => put("action", action),
            CommandKind::Intent { intent } => put("intent", intent),
            CommandKind::Template { body } => put("body", body),
            CommandKind::Prompt { server, prompt } => {
                put("server", server);
                put("prompt", prompt);
            }
            CommandKind::Skill { skill, body } => {
                put("skill", skill);
                if let Some(b) = body {
                    put("body", b);
                }
            }
        }
        o.remove("insert");
        Value::Object(o)
    }

    /// What the palette shows: name, kind, description, hint, arguments, source, and the
    /// text to insert.
    pub fn summary(&self) -> Value {
        let mut o = Map::new();
        o.insert("name".into(), self.name.clone().into());
        o.insert("insert".into(), format!("/{}", self.name).into());
        o.insert("kind".into(), self.kind.name().into());
        if let Some(d) = &self.description {
            o.insert("description".into(), d.clone().into());
        }
        if let Some(h) = &self.argument_hint {
            o.insert("argument_hint".into(), h.clone().into());
        }
        if !self.arguments.is_empty() {
            let args = self
                .arguments
                .iter()
                .map(|a| {
                    let mut ao = Map::new();
                    ao.insert("name".into(), a.name.clone().into());
                    if let Some(d) = &a.description {
                        ao.insert("description".into(), d.clone().into());
                    }
                    ao.insert("required".into(), a.required.into());
                    Value::Object(ao)
                })
                .collect();
            o.insert("arguments".into(), Value::Array(args));
        }
        o.insert("source".into(), self.source.clone().into());
        Value::Object(o)
    }
}
