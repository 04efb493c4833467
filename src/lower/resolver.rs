//! The resolver API: what lowering asks the host (files, mention payloads, stored
//! attachments) and the answers it takes.

use super::*;
use litemap::LiteMap;

/// What the host is asked to resolve.
#[derive(Debug, Clone, Copy)]
pub enum ResolveRequest<'a> {
    /// A file-ref (or a file mention): return its text or bytes.
    File {
        /// The part index.
        part: usize,
        /// The reference.
        file_ref: &'a FileRef,
    },
    /// A non-skill, non-file mention: return a payload for an `editor-context` `ref`.
    Mention {
        /// The part index.
        part: usize,
        /// The mention target, verbatim.
        target: &'a Map<String, Value>,
    },
    /// An attachment stored by content id: return its bytes.
    Blob {
        /// The part index.
        part: usize,
        /// The content id.
        content_id: &'a str,
    },
}

impl ResolveRequest<'_> {
    /// The part index of the request.
    pub fn part(&self) -> usize {
        match self {
            ResolveRequest::File { part, .. }
            | ResolveRequest::Mention { part, .. }
            | ResolveRequest::Blob { part, .. } => *part,
        }
    }
}

/// What a resolver found.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// Text content.
    Text(String),
    /// Bytes, with a media type when the host knows it.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// The media type, if known.
        mime: Option<String>,
    },
    /// Bytes the host keeps (see [`crate::message::Data::Host`]).
    Host {
        /// Head, length and slot.
        data: HostData,
        /// The media type, if known.
        mime: Option<String>,
    },
    /// A payload for a mention.
    Payload(Value),
    /// Nothing found.
    Missing,
}

/// Supplies file contents, mention payloads and blobs during lowering.
pub trait Resolver {
    /// Resolves one request; `Err` is the host's failure message.
    fn resolve(&self, request: &ResolveRequest<'_>) -> std::result::Result<Resolved, String>;
}

/// A resolver that resolves nothing: file-refs become descriptors the model can read with a
/// tool.
pub struct NoResolver;

impl Resolver for NoResolver {
    fn resolve(&self, _: &ResolveRequest<'_>) -> std::result::Result<Resolved, String> {
        Ok(Resolved::Missing)
    }
}

/// A resolver answering from a table of results by part index (what the bindings build
/// from the host's answers). Each answer is handed out once, without copying.
#[derive(Debug, Default)]
pub struct TableResolver {
    entries: std::cell::RefCell<LiteMap<usize, std::result::Result<Resolved, String>>>,
}

impl TableResolver {
    /// Records the answer for a part (`Err` holds the host's failure message).
    pub fn insert(&mut self, part: usize, answer: std::result::Result<Resolved, String>) {
        self.entries.get_mut().insert(part, answer);
    }
}

impl TableResolver {
    /// The answers, by part index.
    pub fn into_entries(self) -> LiteMap<usize, std::result::Result<Resolved, String>> {
        self.entries.into_inner()
    }
}

impl Resolver for TableResolver {
    fn resolve(&self, request: &ResolveRequest<'_>) -> std::result::Result<Resolved, String> {
        self.entries
            .borrow_mut()
            .remove(&request.part())
            .unwrap_or(Ok(Resolved::Missing))
    }
}
