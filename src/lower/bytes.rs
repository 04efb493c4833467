//! Attachment and file bytes as the core sees them: inline base64 or data URLs, or data
//! the host holds (its first bytes and length), decoded only as far as lowering needs.

use super::*;

/// One attachment's or resolved file's bytes, as far as the core can see them.
pub(super) struct Bytes<'a> {
    /// The base64 characters (or the slot holding them).
    pub(super) src: DataSrc<'a>,
    /// The first decoded bytes.
    pub(super) head: Vec<u8>,
    /// Every decoded byte, when the core has them cheaply (small inline data).
    pub(super) full: Option<Vec<u8>>,
    /// Decoded length.
    pub(super) len: u64,
    /// The media type of a data-URL header.
    pub(super) header_mime: Option<String>,
}

pub(super) fn inline_bytes(s: &str) -> Result<Bytes<'_>> {
    if let Some(url) = media::parse_data_url(s) {
        if url.base64 {
            let b64 = media::clean_base64(url.payload)?;
            Ok(from_b64(b64, url.mime))
        } else {
            let data = media::percent_decode(url.payload);
            Ok(Bytes::owned(data, url.mime))
        }
    } else {
        Ok(from_b64(media::clean_base64(s)?, None))
    }
}

/// A resolved file up to this size may be read whole as text (to cut a range out of it).
pub(super) const FILE_TEXT_MAX: u64 = 64 * 1024 * 1024;

/// Inline data up to this decoded size may be decoded whole (to read it as text).
pub(super) const DECODE_FULL_MAX: u64 = 4 * 1024 * 1024;

impl Bytes<'_> {
    /// Bytes the core holds whole (resolved, or decoded from a percent-encoded data URL).
    pub(super) fn owned(data: Vec<u8>, header_mime: Option<String>) -> Bytes<'static> {
        Bytes {
            head: data.iter().take(media::SNIFF_BYTES).copied().collect(),
            len: data.len() as u64,
            src: DataSrc::Inline(Cow::Owned(media::encode(&data))),
            full: Some(data),
            header_mime,
        }
    }

    /// Every decoded byte, decoding inline base64 on first use (never host-held data).
    pub(super) fn full(&mut self) -> Option<&Vec<u8>> {
        if self.full.is_none() && self.len <= DECODE_FULL_MAX {
            if let DataSrc::Inline(b64) = &self.src {
                self.full = media::decode(b64).ok();
            }
        }
        self.full.as_ref()
    }
}

fn from_b64(b64: Cow<'_, str>, header_mime: Option<String>) -> Bytes<'_> {
    let pad = b64.bytes().rev().take(2).filter(|c| *c == b'=').count() as u64;
    Bytes {
        head: media::decode_head(&b64),
        len: media::decoded_len(b64.len() as u64, pad),
        src: DataSrc::Inline(b64),
        full: None,
        header_mime,
    }
}

pub(super) fn host_bytes(h: &HostData) -> Result<Bytes<'static>> {
    media::check_base64(&h.head, true)?;
    Ok(Bytes {
        head: media::decode_head(&h.head),
        len: h.len,
        src: DataSrc::Slot(h.slot),
        full: None,
        header_mime: h.mime.clone(),
    })
}
