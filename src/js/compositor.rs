//! The compositor and message-store layout for JS: conversions only. The glue
//! (`pkg/src/compositor.js`) asks the host's callbacks and drives the storage backend.

use super::{inbox_strings, js_err};
use crate::compositor::{self, CommandCatalog, SessionState, Step, SubmitOptions};
use crate::error::{Error, ErrorKind};
use crate::json_text::{JsonText, ObjectText};
use crate::message::UserMessage;
use crate::store::messages;
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

fn json_in(text: &str, what: &str, kind: ErrorKind) -> Result<Value, JsValue> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    super::parse(text, what, kind)
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
        Ok(old.map(|c| c.to_value().json_text()).unwrap_or_default())
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
        self.inner.list().json_text()
    }

    /// Palette completions for typed text, as a JSON array.
    pub fn complete(&self, typed: &str, limit: u32) -> String {
        Value::Array(self.inner.complete(typed, limit as usize)).json_text()
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
    .json_text()
}

/// One submit step over the inbox strings: message JSON, options JSON, the stored session
/// row ("" when new), the host's answers ("" on the first step). Returns `{"needs":[…]}`,
/// `{"data":[slots]}` (call again with those host slots inline),
/// or `{"done":{id, session, seq, actions, skills, warnings, blobs, batch},"message":…}`
/// followed by the row values, each after a NUL; `batch` lists the rows to write in order,
/// each naming its value by position (`at`).
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
    let (opts, state) = options_and_session(&options, &session)?;
    let answers = match json_in(&answers, "the host answers", ErrorKind::InvalidOptions)? {
        Value::Object(o) => Some(o),
        _ => None,
    };
    let step =
        compositor::submit(&msg, &catalog.inner, &opts, state, answers.as_ref()).map_err(js_err)?;
    let mut out = Map::new();
    match step {
        Step::NeedsData(slots) => {
            out.insert(
                "data".into(),
                Value::Array(slots.into_iter().map(Value::from).collect()),
            );
        }
        Step::Needs(reqs) => {
            out.insert(
                "needs".into(),
                Value::Array(reqs.into_iter().map(|r| r.request).collect()),
            );
        }
        Step::Done(sub) => {
            let (ops, message) = messages::layout(&sub);
            return Ok(done_text(
                &mut |w, batch| sub.summary_into(w, "batch", batch),
                ops,
                &message,
            ));
        }
    }
    Ok(Value::Object(out).json_text())
}

/// What writes a laid-out write's summary fields, given what writes its `batch` (one type
/// for every caller: one copy of [`done_text`] in the module).
type Summary<'a> = dyn FnMut(&mut ObjectText, &mut dyn FnMut(&mut ObjectText)) + 'a;

/// `{"done":{…summary, batch},"message":…}` followed by the row values, each after a NUL:
/// no row is escaped a second time inside another JSON string (JSON text never holds a raw
/// NUL). `batch` lists the rows to write in order, each naming its value by position (`at`).
fn done_text(summary: &mut Summary<'_>, ops: Vec<crate::store::Op>, message: &str) -> String {
    let mut values: Vec<&str> = Vec::with_capacity(ops.len());
    let mut w = ObjectText::new(256 + message.len());
    w.open("done");
    // Each op as `{"at"?,"key","op","table"}` (the keys in the order serde_json sorts
    // them), its value named by position instead of copied; `summary` puts `batch` in its
    // sorted place among its own fields.
    summary(&mut w, &mut |w: &mut ObjectText| {
        w.key("batch");
        w.items(ops.len(), |w, i| {
            if let Some(op) = ops.get(i) {
                super::write_op(op, w, &mut values, None);
            }
        });
    });
    w.close();
    w.raw("message", message);
    let mut text = w.finish();
    for v in values {
        text.push('\0');
        text.push_str(v);
    }
    text
}

/// The submit options and the stored session row, parsed.
fn options_and_session(
    options: &str,
    session: &str,
) -> Result<(SubmitOptions, SessionState), JsValue> {
    let opts =
        SubmitOptions::from_value(json_in(options, "the options", ErrorKind::InvalidOptions)?)
            .map_err(js_err)?;
    let state = SessionState::from_value(&json_in(
        session,
        "the session row",
        ErrorKind::StoreFailed,
    )?);
    Ok((opts, state))
}

/// After the batch of message `id` failed with a conflict on row `key` of `table`, laid out
/// from the session row `row` (absent: a new session) while the store now holds `fresh`:
/// returns when it is to be laid out again from `fresh`, or throws the error to answer with
/// ([`messages::after_conflict`]).
#[wasm_bindgen(js_name = afterConflict)]
pub fn after_conflict(
    table: &str,
    key: &str,
    id: &str,
    row: Option<String>,
    fresh: Option<String>,
    attempt: u32,
) -> Result<(), JsValue> {
    let e = match crate::store::Table::parse(table) {
        Some(t) => crate::store::conflict(t, key),
        None => Error::new(ErrorKind::Internal, format!("unknown table {table}")),
    };
    messages::after_conflict(e, id, row.as_deref(), fresh.as_deref(), attempt).map_err(js_err)
}

/// Lays out a turn of any role for the store, after the session's last message: the
/// inbox holds the turn JSON, the options JSON (`{ session?, id?, now? }`) and the stored
/// session row ("" when new). Returns what [`submit_inbox`] returns when done.
#[wasm_bindgen(js_name = appendTurnInbox)]
pub fn append_turn_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(turn), Some(options), Some(session)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let turn = crate::conversation::Turn::from_value(json_in(
        &turn,
        "the turn",
        ErrorKind::InvalidMessage,
    )?)
    .map_err(js_err)?;
    turn_done(&turn, &options, &session, true)
}

/// Lays out several turns for the store, after the session's last message, as one write
/// (a branch's copy of the turns it keeps): the inbox holds the turns (a JSON array), the
/// options JSON (`{ session?, now? }`) and the stored session row ("" when new). Returns
/// what [`submit_inbox`] returns when done, with `ids` and `message` the turns as stored.
#[wasm_bindgen(js_name = appendTurnsInbox)]
pub fn append_turns_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(turns), Some(options), Some(session)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let turns = crate::conversation::Turn::list_from_value(json_in(
        &turns,
        "the turns",
        ErrorKind::InvalidMessage,
    )?)
    .map_err(js_err)?;
    turns_done(&turns, &options, &session, Some(true))
}

/// Lays out `session`'s draft (`store::drafts`): the inbox holds the draft JSON (`{ turn?,
/// run? }`: the reply read so far and the relayed run reading it; "" to drop the draft),
/// the session name and the stored session row ("" when new). Returns what
/// [`submit_inbox`] returns when done, with `kept`.
#[wasm_bindgen(js_name = draftRowsInbox)]
pub fn draft_rows_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(draft), Some(session), Some(row)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let (ops, kept) = if draft.is_empty() {
        (crate::store::drafts::drop_rows(&session), false)
    } else {
        let draft = crate::store::drafts::Draft::from_value(json_in(
            &draft,
            "the draft",
            ErrorKind::InvalidMessage,
        )?)
        .map_err(js_err)?;
        let row = Some(row.as_str()).filter(|r| !r.is_empty());
        let state = crate::store::messages::session_state(&session, row).map_err(js_err)?;
        crate::store::drafts::draft_rows(&session, &state, &draft)
    };
    Ok(done_text(
        &mut |w, batch| {
            batch(w);
            w.value("kept", &kept.into());
        },
        ops,
        "null",
    ))
}

/// The rows of `turn` appended after the session's last message (`options`: `{ session?,
/// id?, now? }`; `session`: the stored session row, "" when new), as [`append_turn_inbox`]
/// answers; without `message` when the caller holds the turn already.
pub(super) fn turn_done(
    turn: &crate::conversation::Turn,
    options: &str,
    session: &str,
    message: bool,
) -> Result<String, JsValue> {
    turns_done(
        std::slice::from_ref(turn),
        options,
        session,
        message.then_some(false),
    )
}

/// The rows of `turns` appended after the session's last message: one turn (`many` false,
/// or absent to leave its text out: `id` and `seq` in the summary), or several (`many`
/// true: `ids`, their texts as an array, and no `id` option: each gets its own).
fn turns_done(
    turns: &[crate::conversation::Turn],
    options: &str,
    session: &str,
    many: Option<bool>,
) -> Result<String, JsValue> {
    let (mut opts, state) = options_and_session(options, session)?;
    let several = many == Some(true);
    if several {
        opts.id = None;
    }
    let appends = messages::append_turns(turns, &opts, state);
    let (ops, texts) = messages::turns_layout(&appends);
    let mut summary = |w: &mut ObjectText, batch: &mut dyn FnMut(&mut ObjectText)| {
        batch(w);
        if several {
            w.value(
                "ids",
                &Value::Array(appends.iter().map(|a| a.id.clone().into()).collect()),
            );
        } else if let Some(a) = appends.first() {
            w.str("id", &a.id);
            w.value("seq", &a.seq.into());
        }
        w.str("session", &opts.session);
    };
    let message = match many {
        None => "null".to_owned(),
        Some(true) => format!("[{}]", texts.join(",")),
        Some(false) => texts.into_iter().next().unwrap_or_default(),
    };
    Ok(done_text(&mut summary, ops, &message))
}

/// One step of a message-store read (`store::reads`): the inbox holds the query JSON and,
/// after the first step, the rows read (NUL-framed, see `reads::rows_from_text`). Returns
/// `R` + `{ read, query }` (what to read next) or `D` + the answer's JSON.
#[wasm_bindgen(js_name = readStepInbox)]
pub fn read_step_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let query = input.first().map(String::as_str).unwrap_or_default();
    crate::store::reads::step_text(query, input.get(1).map(String::as_str)).map_err(js_err)
}

/// The user view of a message: one chip per part (JSON array).
#[wasm_bindgen(js_name = userView)]
pub fn user_view(message: &str) -> Result<String, JsValue> {
    let msg = UserMessage::from_json(message).map_err(js_err)?;
    Ok(Value::Array(compositor::chips(&msg.parts)).json_text())
}
