//! The compositor: the stage before lowering. It turns what the user composed (typed text
//! or parts from a rich editor) into a resolved message that is persisted, then lowered.
//!
//! - [`catalog`]: the command catalog (`/name`) and the mention kinds (`@selection`, …).
//! - [`template`]: argument splitting and `$1` / `$ARGUMENTS` expansion.
//! - [`text`]: the text front end (`parse_input`).
//! - [`submit`](mod@submit): the submit step (options, session counters, the outcome); the
//!   resolution of each part kind is in `command`, `mention` and `attachment`.
//! - [`inspect`]: the user view (chips) beside the persisted and model views.

mod attachment;
pub mod catalog;
mod command;
pub mod inspect;
mod mention;
pub mod submit;
pub mod template;
pub mod text;

pub use catalog::{Argument, Command, CommandCatalog, CommandKind, MentionKind};
pub use inspect::chips;
pub use submit::{
    content_id, message_key, submit, Blob, HostRequest, Limits, SessionState, Step, Submission,
    SubmitOptions, SEQ_DIGITS,
};
pub use text::parse_input;
