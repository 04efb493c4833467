//! The lowering chain: a typed user message in, a provider-native request body out.
//!
//! Each part is first lowered to a provider-neutral `Block` by the spec's table (text
//! verbatim, file-refs resolved and sliced, attachments native or described, editor context
//! in its marker, mentions resolved out), checked against the target's [`Capabilities`];
//! then `providers` writes the blocks in the target's own JSON. Every decision lands in
//! the [`Report`]. The same inputs give byte-identical output.

mod bytes;
mod options;
pub mod render;
pub mod report;
pub mod requests;
mod resolver;
mod walk;

pub use crate::capabilities::{Capabilities, MediaSupport};
pub(crate) use crate::provider::{Block, Source};
pub use crate::provider::{Provider, Tool};
pub use options::LowerOptions;
pub use report::{BlockNote, DropNote, Report, Warning};
pub use requests::{resolve_requests, Request, RequestKind};
pub use resolver::{NoResolver, ResolveRequest, Resolved, Resolver, TableResolver};
pub(crate) use walk::part_blocks;

use crate::body::{self as json, obj, s, DataSrc, Json, SlotMode};
use crate::error::{Error, ErrorKind, Result};
use crate::fields::{At, Fields};
use crate::media::{self, MediaClass};
use crate::message::{
    file_ref_at, Data, EditorContext, FileAttachment, FileRef, HostData, Part, RefTarget,
    UserMessage,
};
use crate::provider::Layout;
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
    let tree = request(options, caps.text_documents, blocks, &mut report)?;
    let body = json::write(&tree, mode)?;
    Ok(Marked::Lowered(Lowered { body, report }))
}

/// The caller's params, then what the provider writes itself: an error for a param that
/// names one of its own keys.
pub(crate) fn params<'a>(opts: &'a LowerOptions, body: &mut Json<'a>) -> Result<()> {
    let reserved = opts.provider.spec().reserved;
    for (k, v) in &opts.params {
        if reserved.contains(&k.as_str()) {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("`params.{k}` is written by the lowering; pass it through its own option"),
            )
            .at(format!("params.{k}")));
        }
        body.push(k.as_str(), Json::Value(Cow::Borrowed(v)));
    }
    Ok(())
}

/// The tool definitions of the options, a warning in `report` for each tool the provider
/// could not take whole.
pub(crate) fn tools<'a>(opts: &'a LowerOptions, report: &mut Report) -> Option<Json<'a>> {
    let mut dropped = Vec::new();
    let t = crate::provider::tools(opts.provider, &opts.tools, &mut dropped);
    for (_, message) in dropped {
        report.warnings.push(Warning {
            part: None,
            code: "SchemaKeyDropped",
            message,
        });
    }
    t
}

/// One user message's whole request body.
fn request<'a>(
    opts: &'a LowerOptions,
    text_documents: bool,
    blocks: Vec<Block<'a>>,
    report: &mut Report,
) -> Result<Json<'a>> {
    let mut body = Json::Obj(Vec::new());
    params(opts, &mut body)?;
    let system = opts.system.as_deref().filter(|s| !s.is_empty());
    let tools = tools(opts, report);
    let d = opts.provider.dialect();
    let layout = d.spec().layout;
    let content = match (layout, blocks.as_slice()) {
        // A chat message of one text is a string.
        (Layout::Chat, [Block::Text(t)]) => s(t.clone()),
        _ => Json::Arr(
            blocks
                .into_iter()
                .map(|b| d.block(b, text_documents))
                .collect(),
        ),
    };
    let mut messages = Vec::with_capacity(2);
    if let (Layout::Chat, Some(sys)) = (layout, system) {
        messages.push(obj([("role", s("system")), ("content", s(sys))]));
    }
    let key = match layout {
        Layout::Blocks(b) => b.content,
        Layout::Chat | Layout::Items => "content",
    };
    messages.push(obj([("role", s("user")), (key, content)]));
    let leading: Vec<&str> = system.into_iter().collect();
    d.head(
        &mut body,
        &leading,
        system,
        tools,
        Json::Arr(messages),
        None,
        &mut Vec::new(),
    );
    Ok(body)
}
