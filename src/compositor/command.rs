//! Resolving a `command` part at submit time: the catalog entry, its arguments (named,
//! positional, the last declared one taking the rest), and the outcome — a host action, an
//! intent, an expanded template, an MCP prompt's messages (asked of the host), a skill
//! trigger, or the typed text passed through for a command the catalog does not know.

use super::catalog::{Command, CommandKind};
use super::submit::Cx;
use super::template::{expand, split_args};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::message::{Data, FileAttachment, FileRef, Outcome, Part, RefTarget, Resolution};
use serde_json::{Map, Value};

/// Arguments as the command received them.
struct Args {
    raw: String,
    positional: Vec<String>,
    named: Map<String, Value>,
}

impl Args {
    fn parse(v: &Value, path: &str) -> Result<Args> {
        let at = |e: Error| e.at(path.to_owned());
        Ok(match v {
            Value::Null => Args {
                raw: String::new(),
                positional: Vec::new(),
                named: Map::new(),
            },
            Value::String(s) => Args {
                raw: s.trim().to_owned(),
                positional: split_args(s).map_err(at)?,
                named: Map::new(),
            },
            Value::Array(items) => {
                let positional: Vec<String> = items.iter().map(scalar_text).collect();
                Args {
                    raw: positional
                        .iter()
                        .map(|p| {
                            if p.contains(char::is_whitespace) {
                                format!("\"{p}\"")
                            } else {
                                p.clone()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    positional,
                    named: Map::new(),
                }
            }
            Value::Object(o) => {
                let mut named = o.clone();
                let raw = match named.remove("raw") {
                    Some(Value::String(s)) => s.trim().to_owned(),
                    _ => String::new(),
                };
                Args {
                    positional: split_args(&raw).map_err(at)?,
                    raw,
                    named,
                }
            }
            other => Args {
                raw: scalar_text(other),
                positional: vec![scalar_text(other)],
                named: Map::new(),
            },
        })
    }

    fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("raw".into(), self.raw.clone().into());
        o.insert(
            "positional".into(),
            Value::Array(self.positional.iter().cloned().map(Value::String).collect()),
        );
        o.insert("named".into(), Value::Object(self.named.clone()));
        Value::Object(o)
    }
}

pub(super) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.json_text(),
    }
}

pub(super) fn text(t: String) -> Part {
    Part::Text { text: t }
}

impl Cx<'_> {
    pub(super) fn command(
        &mut self,
        i: usize,
        id: &str,
        raw_args: &Value,
    ) -> Result<Option<Resolution>> {
        let path = format!("parts[{i}].args");
        let args = Args::parse(raw_args, &path)?;
        let Some(cmd) = self.catalog.get(id) else {
            let mut t = if id.starts_with('/') {
                id.to_owned()
            } else {
                format!("/{id}")
            };
            if !args.raw.is_empty() {
                t.push(' ');
                t.push_str(&args.raw);
            }
            return Ok(Some(Resolution::new(Outcome::PassThrough, vec![text(t)])));
        };
        let cmd = cmd.clone();
        let values = self.argument_values(i, &cmd, &args)?;
        let lookup = |name: &str| -> Option<String> {
            values
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone())
                .or_else(|| args.named.get(name).map(scalar_text))
        };
        Ok(Some(match &cmd.kind {
            CommandKind::Action { action } => {
                let mut a = Map::new();
                a.insert("part".into(), i.into());
                a.insert("command".into(), format!("/{}", cmd.name).into());
                a.insert("action".into(), action.clone().into());
                a.insert("args".into(), args.to_value());
                self.actions.push(Value::Object(a));
                let mut r = Resolution::new(Outcome::Action, Vec::new());
                r.flags.insert("action".into(), action.clone().into());
                r
            }
            CommandKind::Intent { intent } => {
                let query = cmd
                    .arguments
                    .first()
                    .and_then(|a| lookup(&a.name))
                    .unwrap_or_else(|| args.raw.clone());
                let parts = if query.is_empty() {
                    Vec::new()
                } else {
                    vec![text(query.clone())]
                };
                let mut r = Resolution::new(Outcome::Parts, parts);
                r.flags.insert("intent".into(), intent.clone().into());
                r.flags.insert("query".into(), query.into());
                r
            }
            CommandKind::Template { body } => {
                let t = expand(
                    body,
                    &args.raw,
                    &args.positional,
                    cmd.arguments.len(),
                    &lookup,
                );
                let parts = if t.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![text(t)]
                };
                Resolution::new(Outcome::Parts, parts)
            }
            CommandKind::Skill { skill, body } => {
                if !self.skill_exists(i, skill) {
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let mut s = Map::new();
                s.insert("part".into(), i.into());
                s.insert("name".into(), skill.clone().into());
                s.insert("via".into(), "command".into());
                s.insert("args".into(), args.to_value());
                self.skills.push(Value::Object(s));
                let t = match body {
                    Some(b) => expand(b, &args.raw, &args.positional, cmd.arguments.len(), &lookup),
                    None => args.raw.clone(),
                };
                let parts = if t.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![text(t)]
                };
                let mut r = Resolution::new(Outcome::Skill, parts);
                r.flags.insert("skill".into(), skill.clone().into());
                r
            }
            CommandKind::Prompt { server, prompt } => {
                let mut req = Map::new();
                req.insert("type".into(), "prompt".into());
                req.insert("part".into(), i.into());
                req.insert("command".into(), format!("/{}", cmd.name).into());
                req.insert("server".into(), server.clone().into());
                req.insert("prompt".into(), prompt.clone().into());
                let mut named = Map::new();
                for (n, v) in &values {
                    if let Some(v) = v {
                        named.insert(n.clone(), v.clone().into());
                    }
                }
                req.insert("arguments".into(), Value::Object(named));
                let Some(answer) = self.ask(i, Value::Object(req)) else {
                    return Ok(None);
                };
                let parts = self.prompt_result(i, &cmd, answer)?;
                let mut r = Resolution::new(Outcome::Parts, parts);
                r.flags.insert("server".into(), server.clone().into());
                r.flags.insert("prompt".into(), prompt.clone().into());
                r
            }
        }))
    }

    /// Declared arguments with their values: named first, then positional in order. When
    /// more values were typed than declared, the last declared argument takes the rest of
    /// the text. A required argument without a value is a `MissingArgument` error.
    fn argument_values(
        &self,
        i: usize,
        cmd: &Command,
        args: &Args,
    ) -> Result<Vec<(String, Option<String>)>> {
        let mut values: Vec<(String, Option<String>)> = cmd
            .arguments
            .iter()
            .map(|a| (a.name.clone(), args.named.get(&a.name).map(scalar_text)))
            .collect();
        let mut pos = args.positional.iter();
        let open: Vec<usize> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.1.is_none())
            .map(|(k, _)| k)
            .collect();
        for (n, &k) in open.iter().enumerate() {
            if n + 1 == open.len() {
                let rest: Vec<&String> = pos.by_ref().collect();
                if !rest.is_empty() {
                    let joined = rest
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if let Some(slot) = values.get_mut(k) {
                        slot.1 = Some(joined);
                    }
                }
            } else if let Some(v) = pos.next() {
                if let Some(slot) = values.get_mut(k) {
                    slot.1 = Some(v.clone());
                }
            }
        }
        let missing: Vec<&str> = cmd
            .arguments
            .iter()
            .zip(&values)
            .filter(|(a, (_, v))| a.required && v.as_deref().is_none_or(str::is_empty))
            .map(|(a, _)| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            let usage = cmd.argument_hint.clone().unwrap_or_else(|| {
                cmd.arguments
                    .iter()
                    .map(|a| {
                        if a.required {
                            format!("<{}>", a.name)
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            return Err(Error::new(
                ErrorKind::MissingArgument,
                format!(
                    "/{} needs the argument{} {} (usage: /{} {usage})",
                    cmd.name,
                    if missing.len() > 1 { "s" } else { "" },
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    cmd.name
                ),
            )
            .at(format!("parts[{i}]"))
            .with("command", format!("/{}", cmd.name))
            .with(
                "missing",
                missing.iter().map(|m| Value::from(*m)).collect::<Vec<_>>(),
            ));
        }
        Ok(values)
    }

    /// An MCP `GetPromptResult` (`{ messages: [{ role, content }] }`) into parts.
    fn prompt_result(&mut self, i: usize, cmd: &Command, answer: Value) -> Result<Vec<Part>> {
        let fail = |why: String| {
            Error::new(
                ErrorKind::UnresolvedCommand,
                format!("/{}: {why}", cmd.name),
            )
            .at(format!("parts[{i}]"))
            .with("command", format!("/{}", cmd.name))
        };
        let messages = match answer {
            Value::Null => {
                return Err(fail(
                    "the host did not run the MCP prompt (no answer)".into(),
                ))
            }
            Value::Object(mut o) => {
                if let Some(e) = o.remove("error") {
                    return Err(fail(format!("the MCP prompt failed: {}", scalar_text(&e))));
                }
                match o.remove("messages") {
                    Some(Value::Array(m)) => m,
                    _ => return Err(fail("the prompt result has no `messages` array".into())),
                }
            }
            _ => return Err(fail("the prompt result must be an object".into())),
        };
        let mut parts = Vec::new();
        for (k, m) in messages.into_iter().enumerate() {
            if m.get("role").and_then(Value::as_str) == Some("assistant") {
                self.warn(
                    i,
                    "PromptRole",
                    format!("message {k} of the prompt has role assistant; sent as user content"),
                );
            }
            let Some(content) = m.get("content") else {
                continue;
            };
            let items: Vec<&Value> = match content {
                Value::Array(a) => a.iter().collect(),
                one => vec![one],
            };
            for c in items {
                let s = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
                match s("type").as_deref() {
                    Some("text") => {
                        if let Some(t) = s("text") {
                            parts.push(text(t));
                        }
                    }
                    Some("image") | Some("audio") => {
                        parts.push(Part::FileAttachment(FileAttachment {
                            data: s("data").map(Data::Inline),
                            mime: s("mimeType"),
                            ..FileAttachment::default()
                        }))
                    }
                    Some("resource") => {
                        let r = c.get("resource").cloned().unwrap_or(Value::Null);
                        let rs = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
                        if let Some(t) = rs("text") {
                            parts.push(text(t));
                        } else if let Some(b) = rs("blob") {
                            parts.push(Part::FileAttachment(FileAttachment {
                                data: Some(Data::Inline(b)),
                                mime: rs("mimeType"),
                                name: rs("uri"),
                                ..FileAttachment::default()
                            }));
                        }
                    }
                    Some("resource_link") => {
                        if let Some(uri) = s("uri") {
                            parts.push(Part::FileRef(FileRef {
                                target: RefTarget::Url(uri),
                                name: s("name"),
                                range: None,
                                mime: s("mimeType"),
                            }));
                        }
                    }
                    other => self.warn(
                        i,
                        "UnknownPartType",
                        format!(
                            "prompt content of type `{}` is not supported; skipped",
                            other.unwrap_or("?")
                        ),
                    ),
                }
            }
        }
        // Attachments inside a prompt result go through the same rules as typed ones.
        parts
            .into_iter()
            .map(|p| match p {
                Part::FileAttachment(a) => self.attachment(i, &a),
                p => Ok(p),
            })
            .collect()
    }
}
