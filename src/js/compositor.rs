//! The compositor and message-store layout for JS: conversions only. The glue
//! (`pkg/src/compositor.js`) asks the host's callbacks and drives the storage backend.

use super::{inbox_strings, js_err};
use crate::compositor::{self, CommandCatalog, SessionState, Step, SubmitOptions};
use crate::error::{Error, ErrorKind};
use crate::message::UserMessage;
use crate::store::messages;
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

fn json_in(text: &str, what: &str, kind: ErrorKind) -> Result<Value, JsValue> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text)
        .map_err(|e| js_err(Error::new(kind, format!("{what} is not valid JSON: {e}"))))
}

/// The command catalog (commands and mention kinds).
#[wasm_bindgen(js_name = CommandCatalog)]
pub struct JsCatalog {
    inner: CommandCatalog,
}

#[wasm_bindgen(js_class = CommandCatalog)]
impl JsCatalog {
    /// A catalog, with the built-ins unless `builtins` is false.
    #[wasm_bindgen(constructor)]
    pub fn new(builtins: bool) -> JsCatalog {
        JsCatalog {
            inner: if builtins {
                CommandCatalog::with_builtins()
            } else {
                CommandCatalog::empty()
            },
        }
    }

    /// Registers a command entry (JSON); returns the replaced entry's JSON, or "".
    pub fn register(&mut self, entry: &str) -> Result<String, JsValue> {
        let v = json_in(entry, "the command entry", ErrorKind::InvalidCommand)?;
        let old = self.inner.register(v).map_err(js_err)?;
        Ok(old.map(|c| c.to_value().to_string()).unwrap_or_default())
    }

    /// Registers a mention kind (JSON); returns whether one was replaced.
    #[wasm_bindgen(js_name = registerMention)]
    pub fn register_mention(&mut self, entry: &str) -> Result<bool, JsValue> {
        let v = json_in(entry, "the mention kind", ErrorKind::InvalidCommand)?;
        Ok(self.inner.register_mention(v).map_err(js_err)?.is_some())
    }

    /// Removes a command; returns whether it existed.
    pub fn unregister(&mut self, name: &str) -> bool {
        self.inner.unregister(name).is_some()
    }

    /// `{ commands, mentions }` as JSON.
    pub fn list(&self) -> String {
        self.inner.to_value().to_string()
    }

    /// Palette completions for typed text, as a JSON array.
    pub fn complete(&self, typed: &str, limit: u32) -> String {
        Value::Array(self.inner.complete(typed, limit as usize)).to_string()
    }
}

/// Parses typed text into parts (JSON array).
#[wasm_bindgen(js_name = parseInput)]
pub fn parse_input(text: &str, catalog: &JsCatalog) -> String {
    Value::Array(
        compositor::parse_input(text, &catalog.inner)
            .iter()
            .map(|p| p.to_value())
            .collect(),
    )
    .to_string()
}

/// One submit step over the inbox strings: message JSON, options JSON, the stored session
/// row ("" when new), the host's answers ("" on the first step). Returns
/// `{"needs":[…]}` or `{"done":{id, session, seq, message, actions, skills, warnings,
/// blobs, batch}}` where `batch` is the rows to write, in order.
#[wasm_bindgen(js_name = submitInbox)]
pub fn submit_inbox(lens: &[u32], catalog: &JsCatalog) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(message), Some(options), Some(session), Some(answers)) =
        (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let msg = UserMessage::from_json(&message).map_err(js_err)?;
    let opts = SubmitOptions::from_value(json_in(
        &options,
        "the submit options",
        ErrorKind::InvalidOptions,
    )?)
    .map_err(js_err)?;
    let state = SessionState::from_value(&json_in(
        &session,
        "the session row",
        ErrorKind::StoreFailed,
    )?);
    let answers = match json_in(&answers, "the host answers", ErrorKind::InvalidOptions)? {
        Value::Object(o) => Some(o),
        _ => None,
    };
    let step =
        compositor::submit(&msg, &catalog.inner, &opts, state, answers.as_ref()).map_err(js_err)?;
    let mut out = Map::new();
    match step {
        Step::Needs(reqs) => {
            out.insert(
                "needs".into(),
                Value::Array(reqs.into_iter().map(|r| r.request).collect()),
            );
        }
        Step::Done(sub) => {
            let mut d = Map::new();
            d.insert("id".into(), sub.id.clone().into());
            d.insert("session".into(), sub.session.clone().into());
            d.insert("seq".into(), sub.seq.into());
            d.insert("message".into(), sub.message.to_value());
            d.insert("actions".into(), Value::Array(sub.actions.clone()));
            d.insert("skills".into(), Value::Array(sub.skills.clone()));
            d.insert(
                "warnings".into(),
                serde_json::to_value(&sub.warnings)
                    .map_err(|e| js_err(Error::new(ErrorKind::Internal, e.to_string())))?,
            );
            let blobs = sub
                .blobs
                .iter()
                .map(|b| {
                    let mut o = Map::new();
                    o.insert("content_id".into(), b.content_id.clone().into());
                    o.insert("mime".into(), b.mime.clone().into());
                    o.insert("size".into(), b.size.into());
                    Value::Object(o)
                })
                .collect();
            d.insert("blobs".into(), Value::Array(blobs));
            d.insert(
                "batch".into(),
                Value::Array(messages::batch(&sub).iter().map(|o| o.to_value()).collect()),
            );
            out.insert("done".into(), Value::Object(d));
        }
    }
    Ok(Value::Object(out).to_string())
}

fn rows(v: Value, what: &str) -> Result<Vec<(String, String)>, JsValue> {
    let bad = || {
        js_err(Error::new(
            ErrorKind::StoreFailed,
            format!("{what} must be [key, value] string pairs"),
        ))
    };
    let Value::Array(items) = v else {
        return Err(bad());
    };
    items
        .into_iter()
        .map(|r| match r {
            Value::Array(mut kv) if kv.len() == 2 => match (kv.pop(), kv.pop()) {
                (Some(Value::String(v)), Some(Value::String(k))) => Ok((k, v)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        })
        .collect()
}

/// Assembles stored rows (inbox: heads JSON, part rows JSON, each `[[key, value], …]`,
/// and a session name that keeps only that session's heads, or "")
/// into messages in the current shape (a JSON array).
#[wasm_bindgen(js_name = assembleInbox)]
pub fn assemble_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(heads), Some(parts), Some(session)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let mut heads = rows(
        json_in(&heads, "the message rows", ErrorKind::StoreFailed)?,
        "message rows",
    )?;
    if !session.is_empty() {
        heads = messages::session_heads(&session, heads);
    }
    let parts = rows(
        json_in(&parts, "the part rows", ErrorKind::StoreFailed)?,
        "part rows",
    )?;
    let msgs = messages::assemble_many(&heads, &parts).map_err(js_err)?;
    Ok(Value::Array(msgs.iter().map(UserMessage::to_value).collect()).to_string())
}

/// The user view of a message: one chip per part (JSON array).
#[wasm_bindgen(js_name = userView)]
pub fn user_view(message: &str) -> Result<String, JsValue> {
    let msg = UserMessage::from_json(message).map_err(js_err)?;
    Ok(Value::Array(compositor::chips(&msg.parts)).to_string())
}

/// The message key of `seq` in `session` (the layout's; the glue reads by it).
#[wasm_bindgen(js_name = messageKey)]
pub fn message_key(session: &str, seq: u32) -> String {
    messages::message_key(session, u64::from(seq))
}
