//! The lowering chain: a typed user message in, a provider-native request body out.
//!
//! Each part is first lowered to a provider-neutral `Block` by the spec's table (text
//! verbatim, file-refs resolved and sliced, attachments native or described, editor context
//! in its marker, mentions resolved out), checked against the target's [`Capabilities`];
//! then `providers` writes the blocks in the target's own JSON. Every decision lands in
//! the [`Report`]. The same inputs give byte-identical output.

mod bytes;
pub mod capabilities;
pub(crate) mod json;
mod options;
pub(crate) mod providers;
pub mod render;
pub mod report;
pub mod requests;
mod resolver;
pub mod schema;
mod walk;

pub use capabilities::{Capabilities, MediaSupport};
pub use options::{LowerOptions, Provider, Tool};
pub use report::{BlockNote, DropNote, Report, Warning};
pub use requests::{resolve_requests, Request, RequestKind};
pub use resolver::{NoResolver, ResolveRequest, Resolved, Resolver, TableResolver};
pub(crate) use walk::{part_blocks, Block, Source};

use crate::error::{Error, ErrorKind, Result};
use crate::fields::{At, Fields};
use crate::media::{self, MediaClass};
use crate::message::{
    file_ref_at, Data, EditorContext, FileAttachment, FileRef, HostData, Part, RefTarget,
    UserMessage,
};
use json::{DataSrc, SlotMode};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// A lowered request.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// The request body as JSON text, ready to send.
    pub body: String,
    /// Every decision made.
    pub report: Report,
}

impl Lowered {
    /// The body parsed as a JSON value.
    pub fn body_value(&self) -> Result<Value> {
        serde_json::from_str(&self.body).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
    }
}

/// Lowers a message for `options.provider`, resolving file-refs through `resolver`.
pub fn lower(
    message: &UserMessage,
    options: &LowerOptions,
    resolver: &dyn Resolver,
) -> Result<Lowered> {
    match lower_in(message, options, resolver, SlotMode::Forbid)? {
        Marked::Lowered(l) => Ok(l),
        Marked::NeedsData(_) => Err(Error::new(
            ErrorKind::Internal,
            "host data requested without a host",
        )),
    }
}

/// What [`lower_marked`] gives back.
#[derive(Debug, Clone, PartialEq)]
pub enum Marked {
    /// The lowered request; host-held data appears as `\u{1}n\u{1}` markers in the body.
    Lowered(Lowered),
    /// The core must read these host slots whole (text, or unlabelled bytes that may be
    /// text): call again with their data inline.
    NeedsData(Vec<u32>),
}

/// Like [`lower`], but host-held data is written as `\u{1}n\u{1}` markers for the host to
/// splice (used by the bindings).
pub fn lower_marked(
    message: &UserMessage,
    options: &LowerOptions,
    resolver: &dyn Resolver,
) -> Result<Marked> {
    lower_in(message, options, resolver, SlotMode::Mark)
}

fn lower_in(
    message: &UserMessage,
    options: &LowerOptions,
    resolver: &dyn Resolver,
    mode: SlotMode,
) -> Result<Marked> {
    options.limits.check_message(message, "the message")?;
    let caps = Capabilities::with_override(options.provider, options.capabilities.as_ref())?;
    let (blocks, mut report, needs) =
        part_blocks(&message.parts, options.provider, &caps, resolver)?;
    if !needs.is_empty() {
        if mode == SlotMode::Forbid {
            return Err(Error::new(
                ErrorKind::InvalidMessage,
                "attachment data refers to a host slot, but no host holds it here",
            )
            .with("slots", needs));
        }
        return Ok(Marked::NeedsData(needs));
    }
    if blocks.is_empty() {
        return Err(Error::new(
            ErrorKind::EmptyMessage,
            "the message has no content for the model after lowering",
        )
        .with("dropped", report.dropped.len() as u64));
    }
    let tree = providers::request(options, caps.text_documents, blocks, &mut report)?;
    let body = json::write(&tree, mode)?;
    Ok(Marked::Lowered(Lowered { body, report }))
}
