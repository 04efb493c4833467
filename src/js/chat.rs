//! A chat's rules for JS (`crate::chat`): conversions only. The glue (`pkg/src/chat.js`)
//! holds the state, streams the reply and writes the store.

use super::{js_err, parse};
use crate::chat;
use crate::conversation::Turn;
use crate::error::ErrorKind;
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
