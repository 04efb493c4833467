//! What each provider accepts natively, as data.
//!
//! Every provider has a default [`Capabilities`] (from its public documentation, see
//! `docs/providers.md` of the team). A host overrides any field per model with a partial
//! JSON object that is merged over the default: `{"images":{"max_bytes":3145728}}`.

use crate::error::{Error, ErrorKind, Result};
use litemap::LiteMap;
use serde::Serialize;
use serde_json::Value;

/// One MiB.
pub(crate) const MB: u64 = 1024 * 1024;

/// Native support for one class of media.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MediaSupport {
    /// Media types sent as native blocks (canonical lower-case names).
    pub mimes: Vec<String>,
    /// The largest item, counted as sent: base64 characters (4/3 of the bytes).
    pub max_bytes: u64,
    /// Whether a URL (file-ref of kind `url`) can be passed through as a native block.
    pub urls: bool,
}

/// What a target accepts natively, and how the rest is routed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Capabilities {
    /// Images (`image/*`).
    pub images: MediaSupport,
    /// PDF documents.
    pub pdf: MediaSupport,
    /// Audio.
    pub audio: MediaSupport,
    /// Video.
    pub video: MediaSupport,
    /// At most this many images in one request.
    pub max_images: u64,
    /// At most this many base64 characters of inline media in one request.
    pub max_request_bytes: u64,
    /// Text attachments and resolved files up to this many bytes are inlined; larger ones
    /// become descriptors routed to a reading tool.
    pub inline_text_max_bytes: u64,
    /// Whether text attachments go as native text documents (Anthropic `document` with a
    /// `text` source) rather than fenced text.
    pub text_documents: bool,
    /// Tool suggested in a descriptor, by exact media type or by class name (`image`, `pdf`,
    /// `audio`, `video`, `text`, `binary`; `url` for an unresolved text URL); an exact type
    /// wins.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, string>"))]
    pub tool_routes: LiteMap<String, String>,
}

/// Support for `mimes` up to `max_mb` MiB, URLs passed through or not.
pub(crate) fn support(mimes: &[&str], max_mb: u64, urls: bool) -> MediaSupport {
    MediaSupport {
        mimes: mimes.iter().map(|m| (*m).to_owned()).collect(),
        max_bytes: max_mb * MB,
        urls,
    }
}

/// The default tool routes every provider's table starts from.
pub(crate) fn routes() -> LiteMap<String, String> {
    let mut m = LiteMap::new();
    for (k, v) in [
        ("image", "read_image"),
        ("pdf", "pdf_to_text"),
        ("audio", "transcribe_audio"),
        ("video", "extract_frames"),
        ("text", "read_file"),
        ("url", "web_fetch"),
    ] {
        m.insert(k.to_owned(), v.to_owned());
    }
    m
}

impl Capabilities {
    /// These capabilities with a host's partial override merged over them: an object merged
    /// field by field (a media class's too; the tool routes route by route). Every field
    /// named must be one a capability table has.
    pub fn overridden(&self, overrides: &Value) -> Result<Capabilities> {
        if !overrides.is_object() {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "`capabilities` must be an object",
            )
            .at("capabilities"));
        }
        let mut caps = self.clone();
        caps.apply(overrides).map_err(|why| {
            Error::new(
                ErrorKind::InvalidOptions,
                format!("invalid capabilities override: {why}"),
            )
            .at("capabilities")
        })?;
        Ok(caps)
    }

    fn apply(&mut self, over: &Value) -> std::result::Result<(), String> {
        let Value::Object(o) = over else {
            return Err(expected(over, "struct Capabilities"));
        };
        for (k, v) in o {
            match k.as_str() {
                "images" => self.images.apply(v)?,
                "pdf" => self.pdf.apply(v)?,
                "audio" => self.audio.apply(v)?,
                "video" => self.video.apply(v)?,
                "max_images" => self.max_images = u64_of(v)?,
                "max_request_bytes" => self.max_request_bytes = u64_of(v)?,
                "inline_text_max_bytes" => self.inline_text_max_bytes = u64_of(v)?,
                "text_documents" => self.text_documents = bool_of(v)?,
                "tool_routes" => {
                    let Value::Object(r) = v else {
                        return Err(expected(v, "a map"));
                    };
                    for (m, t) in r {
                        let Value::String(t) = t else {
                            return Err(expected(t, "a string"));
                        };
                        self.tool_routes.insert(m.clone(), t.clone());
                    }
                }
                _ => return Err(unknown(k, CAPABILITY_FIELDS)),
            }
        }
        Ok(())
    }

    /// The native support of a media class, if it has one.
    pub fn support(&self, class: crate::media::MediaClass) -> Option<&MediaSupport> {
        use crate::media::MediaClass::*;
        match class {
            Image => Some(&self.images),
            Pdf => Some(&self.pdf),
            Audio => Some(&self.audio),
            Video => Some(&self.video),
            Text | Binary => None,
        }
    }

    /// The tool a descriptor of this media type suggests.
    pub fn route(&self, mime: &str, class: crate::media::MediaClass) -> Option<&str> {
        self.tool_routes
            .get(mime)
            .or_else(|| self.tool_routes.get(class.name()))
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }
}

const CAPABILITY_FIELDS: &[&str] = &[
    "images",
    "pdf",
    "audio",
    "video",
    "max_images",
    "max_request_bytes",
    "inline_text_max_bytes",
    "text_documents",
    "tool_routes",
];

/// `unknown field `k`, expected one of `a`, `b`` (the words serde's readers use).
fn unknown(k: &str, fields: &[&str]) -> String {
    let mut m = format!("unknown field `{k}`, expected one of ");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            m.push_str(", ");
        }
        m.push('`');
        m.push_str(f);
        m.push('`');
    }
    m
}

/// `invalid type: <what v is>, expected <what>`.
fn expected(v: &Value, what: &str) -> String {
    let got = match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    };
    format!("invalid type: {got}, expected {what}")
}

fn u64_of(v: &Value) -> std::result::Result<u64, String> {
    v.as_u64().ok_or_else(|| expected(v, "u64"))
}

fn bool_of(v: &Value) -> std::result::Result<bool, String> {
    v.as_bool().ok_or_else(|| expected(v, "a boolean"))
}

impl MediaSupport {
    /// Merges an override (an object) over this class's support.
    fn apply(&mut self, over: &Value) -> std::result::Result<(), String> {
        let Value::Object(o) = over else {
            return Err(expected(over, "struct MediaSupport"));
        };
        for (k, v) in o {
            match k.as_str() {
                "mimes" => {
                    let Value::Array(a) = v else {
                        return Err(expected(v, "a sequence"));
                    };
                    let mut mimes = Vec::with_capacity(a.len());
                    for m in a {
                        let Value::String(m) = m else {
                            return Err(expected(m, "a string"));
                        };
                        mimes.push(m.clone());
                    }
                    self.mimes = mimes;
                }
                "max_bytes" => self.max_bytes = u64_of(v)?,
                "urls" => self.urls = bool_of(v)?,
                _ => return Err(unknown(k, &["mimes", "max_bytes", "urls"])),
            }
        }
        Ok(())
    }
}
