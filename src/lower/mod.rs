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
use crate::settings::Cx;
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
    let caps = Capabilities::for_call(
        options.provider,
        &options.settings,
        options.capabilities.as_ref(),
    )?;
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

/// The call settings written into `body` where the provider wants them (before the
/// head), each note a warning in `report`; the answer's forced tool, where it goes through
/// one.
#[inline(never)]
pub(crate) fn settings<'a>(
    opts: &'a LowerOptions,
    body: &mut Json<'a>,
    report: &mut Report,
) -> Result<Option<&'a Tool>> {
    let d = opts.provider.dialect();
    let spec = d.spec();
    let tools = !opts.tools.is_empty();
    let native = |r: Option<&crate::models::Model>| d.native_output(r);
    let mut cx = Cx::new(&opts.settings, spec.family, spec.display, tools, &native)?;
    d.settings(&mut cx, body);
    let forced = cx.output_tool.is_some();
    report.call = opts.settings.call();
    report
        .warnings
        .extend(cx.notes.into_iter().map(|(code, message)| Warning {
            part: None,
            code,
            message,
        }));
    Ok(if forced {
        opts.output_tool.as_ref()
    } else {
        None
    })
}

/// The caller's `providerOptions` for this provider, merged over the finished body.
pub(crate) fn provider_options<'a>(opts: &'a LowerOptions, body: &mut Json<'a>) -> Result<()> {
    let spec = opts.provider.spec();
    match opts.settings.provider_options.get(spec.family) {
        Some(Value::Object(o)) => crate::settings::merge(
            body,
            o,
            spec.reserved,
            &format!("providerOptions.{}", spec.family),
        ),
        _ => Ok(()),
    }
}

/// The tool definitions of the options (and the answer's forced tool, `extra`), a warning
/// in `report` for each tool the provider could not take whole.
pub(crate) fn tools<'a>(
    opts: &'a LowerOptions,
    extra: Option<&'a Tool>,
    report: &mut Report,
) -> Option<Json<'a>> {
    let mut dropped = Vec::new();
    let t = crate::provider::tools(opts.provider, &opts.tools, extra, &mut dropped);
    for (_, code, message) in dropped {
        report.warnings.push(Warning {
            part: None,
            code,
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
    let forced = settings(opts, &mut body, report)?;
    let system = opts.system.as_deref().filter(|s| !s.is_empty());
    let tools = tools(opts, forced, report);
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
    provider_options(opts, &mut body)?;
    Ok(body)
}
