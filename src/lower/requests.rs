//! Which parts of a message need the host: the resolver requests a message makes, planned
//! before lowering so that a host can answer them (asynchronously, from its files, its
//! editor, its message store) and then lower in one call.
//!
//! The plan follows the lowering walk (`lower::walk`): a file-ref, a file
//! mention, a mention of any host kind other than a skill, and an attachment stored by
//! content id each ask once, by the index of their top-level part (the parts of a resolved
//! command or mention ask under their command's index). A test checks that the walk never
//! asks for a request missing from the plan.

use super::ResolveRequest;
use crate::error::Result;
use crate::message::{file_ref_value, parse_file_ref, Part, UserMessage};
use serde_json::{Map, Value};

/// The kind of a resolver request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A file (a file-ref or a file mention): the answer is text or bytes.
    File,
    /// A mention of a host kind: the answer is a payload (any JSON).
    Mention,
    /// An attachment stored by content id: the answer is its bytes.
    Blob,
}

impl RequestKind {
    /// The wire name (`type` of the request).
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::File => "file",
            RequestKind::Mention => "mention",
            RequestKind::Blob => "blob",
        }
    }
}

/// One resolver request in its wire form: what the host's resolver is called with.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The top-level part it answers for (answers are keyed by it).
    pub part: usize,
    /// What is asked.
    pub kind: RequestKind,
    /// `{ type, part, ref | target | content_id }`.
    pub value: Value,
}

impl ResolveRequest<'_> {
    /// The request in its wire form: `{ type: "file", ref, part }`, `{ type: "mention",
    /// target, part }` or `{ type: "blob", content_id, part }`.
    pub fn to_request(&self) -> Request {
        let mut o = Map::new();
        let kind = match self {
            ResolveRequest::File { file_ref, .. } => {
                o.insert("ref".into(), file_ref_value(file_ref));
                RequestKind::File
            }
            ResolveRequest::Mention { target, .. } => {
                o.insert("target".into(), Value::Object((*target).clone()));
                RequestKind::Mention
            }
            ResolveRequest::Blob { content_id, .. } => {
                o.insert("content_id".into(), (*content_id).into());
                RequestKind::Blob
            }
        };
        o.insert("type".into(), kind.name().into());
        o.insert("part".into(), self.part().into());
        Request {
            part: self.part(),
            kind,
            value: Value::Object(o),
        }
    }
}

/// The resolver requests of a list of user-message parts, in part order. Parts the lowering
/// will refuse (an unresolved command, a file mention without a path) ask nothing: lowering
/// reports them.
pub fn resolve_requests(parts: &[Part]) -> Vec<Request> {
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        walk(i, p, &mut out);
    }
    out
}

fn walk(i: usize, part: &Part, out: &mut Vec<Request>) {
    match part {
        Part::FileRef(r) => out.push(
            ResolveRequest::File {
                part: i,
                file_ref: r,
            }
            .to_request(),
        ),
        Part::FileAttachment(a) if a.data.is_none() => {
            if let Some(cid) = &a.content_id {
                out.push(
                    ResolveRequest::Blob {
                        part: i,
                        content_id: cid,
                    }
                    .to_request(),
                );
            }
        }
        Part::Command {
            resolved: Some(r), ..
        }
        | Part::Mention(crate::message::Mention {
            resolved: Some(r), ..
        }) => {
            for sub in &r.parts {
                walk(i, sub, out);
            }
        }
        Part::Mention(m) => match m.kind.as_str() {
            "skill" => {}
            "file" => {
                if let Ok(r) = parse_file_ref(m.target.clone(), "target") {
                    out.push(
                        ResolveRequest::File {
                            part: i,
                            file_ref: &r,
                        }
                        .to_request(),
                    );
                }
            }
            _ => out.push(
                ResolveRequest::Mention {
                    part: i,
                    target: &m.target,
                }
                .to_request(),
            ),
        },
        _ => {}
    }
}

/// The requests of one message (JSON): a message that does not parse is its error.
pub fn message_requests(message: &str) -> Result<Vec<Request>> {
    let m = UserMessage::from_json(message)?;
    Ok(resolve_requests(&m.parts))
}
