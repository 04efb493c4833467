//! Resolving a `mention` part at submit time: a skill (an activation request, nothing in
//! the model view), a file (a file-ref), an editor kind in the catalog (the host's
//! `editor-context` payloads) or any other entity (an editor-context `ref` when the host
//! resolves it).

use super::command::scalar_text;
use super::submit::Cx;
use crate::error::{Error, ErrorKind, Result};
use crate::message::{parse_file_ref, EditorContext, Mention, Outcome, Part, Resolution};
use serde_json::{Map, Value};

impl Cx<'_> {
    pub(super) fn skill_exists(&mut self, i: usize, name: &str) -> bool {
        match &self.options.skills {
            Some(known) if !known.iter().any(|k| k == name) => {
                self.warn(
                    i,
                    "UnknownSkill",
                    format!("no skill named `{name}`; the mention is kept but activates nothing"),
                );
                false
            }
            _ => true,
        }
    }

    pub(super) fn mention(&mut self, i: usize, m: &Mention) -> Result<Option<Resolution>> {
        let path = format!("parts[{i}].target");
        match m.kind.as_str() {
            "skill" => {
                let name = match m.target.get("name") {
                    Some(Value::String(n)) if !n.is_empty() => n.clone(),
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidMessage,
                            "a skill mention needs a `name`",
                        )
                        .at(format!("{path}.name")))
                    }
                };
                if !self.skill_exists(i, &name) {
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let mut s = Map::new();
                s.insert("part".into(), i.into());
                s.insert("name".into(), name.clone().into());
                s.insert("via".into(), "mention".into());
                self.skills.push(Value::Object(s));
                let mut r = Resolution::new(Outcome::Skill, Vec::new());
                r.flags.insert("skill".into(), name.into());
                Ok(Some(r))
            }
            "file" => {
                let mut t = m.target.clone();
                t.insert("kind".into(), "path".into());
                let r = parse_file_ref(t, &path)?;
                Ok(Some(Resolution::new(
                    Outcome::Parts,
                    vec![Part::FileRef(r)],
                )))
            }
            kind => {
                let editor = self.catalog.mention_kind(kind).is_some();
                let mut req = Map::new();
                req.insert(
                    "type".into(),
                    if editor { "mention" } else { "resolve" }.into(),
                );
                req.insert("part".into(), i.into());
                req.insert("kind".into(), kind.into());
                req.insert("target".into(), Value::Object(m.target.clone()));
                let Some(answer) = self.ask(i, Value::Object(req)) else {
                    return Ok(None);
                };
                if let Some(e) = answer
                    .get("error")
                    .filter(|_| answer.as_object().is_some_and(|o| o.len() == 1))
                {
                    self.warn(
                        i,
                        "ResolverFailed",
                        format!("resolving `@{kind}` failed: {}; dropped", scalar_text(e)),
                    );
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let items: Vec<Value> = match answer {
                    Value::Null => Vec::new(),
                    Value::Array(a) if editor => a,
                    other => vec![other],
                };
                if items.is_empty() {
                    self.warn(
                        i,
                        "UnresolvedMention",
                        format!("the host did not resolve `@{kind}`; dropped"),
                    );
                    return Ok(Some(Resolution::new(Outcome::Dropped, Vec::new())));
                }
                let parts = items
                    .into_iter()
                    .map(|item| {
                        let (payload, source, at) = match item {
                            Value::Object(mut o) if o.contains_key("payload") => (
                                o.remove("payload").unwrap_or(Value::Null),
                                o.remove("source")
                                    .and_then(|s| s.as_str().map(str::to_owned)),
                                o.remove("emitted_at").and_then(|t| t.as_i64()),
                            ),
                            other => (other, None, None),
                        };
                        Part::EditorContext(EditorContext {
                            kind: if editor {
                                kind.to_owned()
                            } else {
                                "ref".into()
                            },
                            source: if editor {
                                source
                            } else {
                                source.or_else(|| Some(kind.to_owned()))
                            },
                            payload,
                            emitted_at: at.or(self.options.now),
                        })
                    })
                    .collect();
                Ok(Some(Resolution::new(Outcome::Parts, parts)))
            }
        }
    }
}
