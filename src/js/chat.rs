//! A chat's rules for JS (`crate::chat`): conversions only. The glue (`pkg/src/chat.js`)
//! holds the state, streams the reply and writes the store.

use super::{js_err, parse};
use crate::chat;
use crate::conversation::Turn;
use crate::error::ErrorKind;
use crate::store::drafts;
use wasm_bindgen::prelude::*;

fn thread(text: &str) -> Result<Vec<Turn>, JsValue> {
    Turn::list_from_value(parse(text, "the thread", ErrorKind::InvalidMessage)?).map_err(js_err)
}

/// The messages of turns (a JSON array), the thread's from index `first` on, as a JSON
/// array ([`chat::view`]).
#[wasm_bindgen(js_name = chatView)]
pub fn chat_view(turns: &str, first: u32) -> Result<String, JsValue> {
    Ok(chat::view(&thread(turns)?, first as usize))
}

/// Where a regenerate (`edit` absent) or an edit of user message `edit` goes on, in a
/// thread (JSON) of `session`: the turns it keeps, a space, and the session
/// ([`chat::branch`]; `nonce` names a branch).
#[wasm_bindgen(js_name = chatBranch)]
pub fn chat_branch(
    turns: &str,
    session: &str,
    edit: Option<String>,
    nonce: &str,
) -> Result<String, JsValue> {
    let b = chat::branch(&thread(turns)?, session, edit.as_deref(), nonce).map_err(js_err)?;
    Ok(format!("{} {}", b.keep, b.session))
}

/// What a chat opening a session does with its standing draft (`run`: whether it names a
/// run; `turn`: whether it holds a turn; `relays`: the chat relays with reconnects): 0
/// attach, 1 append, 2 drop ([`drafts::Adopt::of`]; a number, which costs no string glue).
#[wasm_bindgen(js_name = chatAdopt)]
pub fn chat_adopt(run: bool, turn: bool, relays: bool) -> u32 {
    drafts::Adopt::of(run, turn, relays) as u32
}
