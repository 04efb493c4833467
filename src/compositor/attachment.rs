//! Classifying an attachment at submit time (declared type and magic bytes), and deciding
//! where its bytes go: inline in the message, or split out to the blob store under their
//! content id (text above its threshold becomes a content-id file-ref).

use super::submit::{content_id, Blob, Cx};
use crate::error::{Error, ErrorKind, Result};
use crate::media::{self, MediaClass};
use crate::message::{Data, FileAttachment, FileRef, Part, RefTarget};

/// Where an attachment's base64 is.
enum Src<'s> {
    /// In the message (checked, whitespace removed).
    Inline(std::borrow::Cow<'s, str>),
    /// Held by the host.
    Host(&'s crate::message::HostData),
}

impl Cx<'_> {
    pub(super) fn attachment(&mut self, i: usize, a: &FileAttachment) -> Result<Part> {
        let path = format!("parts[{i}].data");
        // Where the base64 is: here, or held by the host (a slot: the first characters and
        // the length only; the host splices the rest into the rows).
        let (url_mime, src): (Option<String>, Src<'_>) = match &a.data {
            None => return Ok(Part::FileAttachment(a.clone())),
            Some(Data::Host(h)) => (h.mime.clone(), Src::Host(h)),
            Some(Data::Inline(raw)) => match media::parse_data_url(raw) {
                Some(d) if d.base64 => (
                    d.mime,
                    Src::Inline(media::clean_base64(d.payload).map_err(|e| e.at(path.clone()))?),
                ),
                Some(d) => (
                    d.mime,
                    Src::Inline(media::encode(&media::percent_decode(d.payload)).into()),
                ),
                None => (
                    None,
                    Src::Inline(media::clean_base64(raw).map_err(|e| e.at(path.clone()))?),
                ),
            },
        };
        let size = match &src {
            Src::Inline(b64) => {
                let pad = b64.bytes().rev().take(2).take_while(|c| *c == b'=').count() as u64;
                media::decoded_len(b64.len() as u64, pad)
            }
            Src::Host(h) => h.len,
        };
        let limits = self.options.limits;
        if size > limits.max_attachment_bytes {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "attachment {} is {size} bytes; the limit is {} (nothing was stored)",
                    a.name.as_deref().unwrap_or("(unnamed)"),
                    limits.max_attachment_bytes
                ),
            )
            .at(path)
            .with("size", size)
            .with("limit", limits.max_attachment_bytes));
        }
        if self.answers.is_none() && self.deferring {
            // First step: checked, not yet classified (that waits until no host question
            // is left, so a step that ends in questions does no wasted work).
            return Ok(Part::FileAttachment(a.clone()));
        }
        // The whole payload is decoded only when it must be read: to tell text from
        // binary when the first bytes prove no type, or to hash a blob. Data the host holds
        // is then asked for (the glue calls again with it inline).
        let head = match &src {
            Src::Inline(b64) => media::decode_head(b64),
            Src::Host(h) => media::decode_head(&h.head),
        };
        let sniffed = media::sniff(&head);
        let mut bytes = None;
        let textual = match (sniffed, &src) {
            (Some(_), _) => false,
            (None, Src::Host(h)) => return Ok(self.need(h.slot, a)),
            (None, Src::Inline(b64)) => {
                let b = media::decode(b64).map_err(|e| e.at(path.clone()))?;
                let t = media::looks_textual(&b);
                bytes = Some(b);
                t
            }
        };
        let declared = a
            .mime
            .as_deref()
            .map(media::normalize_mime)
            .or(url_mime)
            .or_else(|| {
                a.name
                    .as_deref()
                    .and_then(media::mime_from_name)
                    .map(str::to_owned)
            });
        let mime = match (&declared, sniffed) {
            (Some(d), Some(s)) if d != s => {
                self.warn(
                    i,
                    "MimeMismatch",
                    format!("declared `{d}` but the bytes are `{s}`; `{s}` is used"),
                );
                s.to_owned()
            }
            (_, Some(s)) => s.to_owned(),
            (Some(d), None) => {
                if media::class_of(d) == MediaClass::Text && !textual {
                    self.warn(
                        i,
                        "MimeMismatch",
                        format!("declared `{d}` but the bytes are not text; treated as binary"),
                    );
                    "application/octet-stream".to_owned()
                } else {
                    d.clone()
                }
            }
            (None, None) if textual => "text/plain".to_owned(),
            (None, None) => "application/octet-stream".to_owned(),
        };
        let class = media::class_of(&mime);
        let split = match class {
            MediaClass::Binary => true,
            MediaClass::Text => size > limits.text_inline_max,
            _ => {
                size > limits.blob_threshold || self.inline_bytes + size > limits.session_inline_max
            }
        };
        if !split {
            self.inline_bytes += size;
            return Ok(Part::FileAttachment(FileAttachment {
                data: Some(match src {
                    Src::Inline(b64) => Data::Inline(b64.into_owned()),
                    Src::Host(h) => Data::Host(h.clone()),
                }),
                content_id: None,
                mime: Some(mime),
                name: a.name.clone(),
                size: Some(size),
            }));
        }
        let b64 = match src {
            Src::Inline(b64) => b64,
            Src::Host(h) => return Ok(self.need(h.slot, a)),
        };
        let bytes = match bytes {
            Some(b) => b,
            None => media::decode(&b64).map_err(|e| e.at(path.clone()))?,
        };
        let cid = content_id(&bytes);
        if !self.blobs.iter().any(|b| b.content_id == cid) {
            self.blobs.push(Blob {
                content_id: cid.clone(),
                mime: mime.clone(),
                size,
                data: b64.into_owned(),
            });
        }
        if class == MediaClass::Text {
            return Ok(Part::FileRef(FileRef {
                target: RefTarget::ContentId(cid),
                name: a.name.clone(),
                range: None,
                mime: Some(mime),
            }));
        }
        Ok(Part::FileAttachment(FileAttachment {
            data: None,
            content_id: Some(cid),
            mime: Some(mime),
            name: a.name.clone(),
            size: Some(size),
        }))
    }
}
