//! `promptloom:core/chat`: conversions only; the rules are [`crate::chat`].

use super::exports::promptloom::core::chat::{BranchPlan, Guest};
use super::promptloom::core::types::Error as WitError;
use super::{to_wit, Component};
use crate::chat;
use crate::conversation::Turn;
use crate::error::{Error, ErrorKind};

fn thread(text: &str) -> Result<Vec<Turn>, Error> {
    Turn::list_from_value(crate::wire::json_value(
        text,
        "the thread",
        ErrorKind::InvalidMessage,
    )?)
}

impl Guest for Component {
    fn view(thread_json: String, first: u32) -> Result<String, WitError> {
        thread(&thread_json)
            .map(|t| chat::view(&t, first as usize))
            .map_err(to_wit)
    }

    fn branch(
        thread_json: String,
        session: String,
        edit: Option<String>,
        nonce: String,
    ) -> Result<BranchPlan, WitError> {
        thread(&thread_json)
            .and_then(|t| chat::branch(&t, &session, edit.as_deref(), &nonce))
            .map(|b| BranchPlan {
                keep: u32::try_from(b.keep).unwrap_or(u32::MAX),
                session: b.session,
            })
            .map_err(to_wit)
    }
}
