//! What each provider accepts natively, as data.
//!
//! Every provider has a default [`Capabilities`] (from its public documentation, see
//! `docs/providers.md` of the team). A host overrides any field per model with a partial
//! JSON object that is merged over the default: `{"images":{"max_bytes":3145728}}`.

use crate::error::{Error, ErrorKind, Result};
use crate::lower::Provider;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use litemap::LiteMap;

const MB: u64 = 1024 * 1024;

/// Native support for one class of media.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaSupport {
    /// Media types sent as native blocks (canonical lower-case names).
    pub mimes: Vec<String>,
    /// The largest item, counted as sent: base64 characters (4/3 of the bytes).
    pub max_bytes: u64,
    /// Whether a URL (file-ref of kind `url`) can be passed through as a native block.
    pub urls: bool,
}

/// What a target accepts natively, and how the rest is routed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[serde(deserialize_with = "routes_from")]
    pub tool_routes: LiteMap<String, String>,
}

fn support(mimes: &[&str], max_mb: u64, urls: bool) -> MediaSupport {
    MediaSupport {
        mimes: mimes.iter().map(|m| (*m).to_owned()).collect(),
        max_bytes: max_mb * MB,
        urls,
    }
}

fn routes() -> LiteMap<String, String> {
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

/// `tool_routes` read from a JSON object of strings (through the JSON map the module has
/// anyway, not the map's own generic reader).
fn routes_from<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<LiteMap<String, String>, D::Error> {
    let o = serde_json::Map::<String, Value>::deserialize(d)?;
    let mut m = LiteMap::new();
    for (k, v) in o {
        match v {
            Value::String(s) => {
                m.insert(k, s);
            }
            _ => {
                return Err(serde::de::Error::custom(format!(
                    "tool_routes.{k} must be a tool name (a string)"
                )))
            }
        }
    }
    Ok(m)
}

const OPENAI_IMAGES: &[&str] = &["image/png", "image/jpeg", "image/webp", "image/gif"];

impl Capabilities {
    /// The documented defaults of a provider.
    pub fn default_for(provider: Provider) -> Capabilities {
        let none = support(&[], 0, false);
        match provider {
            Provider::Anthropic => Capabilities {
                images: support(
                    &["image/jpeg", "image/png", "image/gif", "image/webp"],
                    5,
                    true,
                ),
                pdf: support(&["application/pdf"], 32, true),
                audio: none.clone(),
                video: none,
                max_images: 100,
                max_request_bytes: 32 * MB,
                inline_text_max_bytes: 256 * 1024,
                text_documents: true,
                tool_routes: routes(),
            },
            Provider::OpenAiChat => Capabilities {
                images: support(OPENAI_IMAGES, 20, true),
                pdf: support(&["application/pdf"], 32, false),
                audio: support(&["audio/wav", "audio/mpeg"], 20, false),
                video: none,
                max_images: 500,
                max_request_bytes: 50 * MB,
                inline_text_max_bytes: 256 * 1024,
                text_documents: false,
                tool_routes: routes(),
            },
            Provider::OpenAiResponses => Capabilities {
                images: support(OPENAI_IMAGES, 20, true),
                pdf: support(&["application/pdf"], 32, true),
                audio: none.clone(),
                video: none,
                max_images: 500,
                max_request_bytes: 50 * MB,
                inline_text_max_bytes: 256 * 1024,
                text_documents: false,
                tool_routes: routes(),
            },
            Provider::Gemini => Capabilities {
                images: support(
                    &[
                        "image/png",
                        "image/jpeg",
                        "image/webp",
                        "image/heic",
                        "image/heif",
                    ],
                    100,
                    true,
                ),
                pdf: support(&["application/pdf"], 50, true),
                audio: support(
                    &[
                        "audio/wav",
                        "audio/mpeg",
                        "audio/aiff",
                        "audio/aac",
                        "audio/ogg",
                        "audio/flac",
                    ],
                    100,
                    true,
                ),
                video: support(
                    &[
                        "video/mp4",
                        "video/mpeg",
                        "video/quicktime",
                        "video/x-msvideo",
                        "video/x-flv",
                        "video/webm",
                        "video/x-ms-wmv",
                        "video/3gpp",
                    ],
                    100,
                    true,
                ),
                max_images: 3000,
                max_request_bytes: 100 * MB,
                inline_text_max_bytes: 256 * 1024,
                text_documents: false,
                tool_routes: routes(),
            },
        }
    }

    /// The documented defaults of a provider, built once.
    pub fn defaults(provider: Provider) -> &'static Capabilities {
        static TABLES: std::sync::OnceLock<[Capabilities; 4]> = std::sync::OnceLock::new();
        let tables = TABLES.get_or_init(|| Provider::ALL.map(Capabilities::default_for));
        match provider {
            Provider::Anthropic => &tables[0],
            Provider::OpenAiChat => &tables[1],
            Provider::OpenAiResponses => &tables[2],
            Provider::Gemini => &tables[3],
        }
    }

    /// The provider default with a host's partial override merged over it.
    pub fn with_override(
        provider: Provider,
        overrides: Option<&Value>,
    ) -> Result<std::borrow::Cow<'static, Capabilities>> {
        let base = Capabilities::defaults(provider);
        let Some(over) = overrides.filter(|v| !v.is_null()) else {
            return Ok(std::borrow::Cow::Borrowed(base));
        };
        if !over.is_object() {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                "`capabilities` must be an object",
            )
            .at("capabilities"));
        }
        let mut merged = serde_json::to_value(base)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        merge(&mut merged, over);
        serde_json::from_value(merged)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| {
                Error::new(
                    ErrorKind::InvalidOptions,
                    format!("invalid capabilities override: {e}"),
                )
                .at("capabilities")
            })
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

/// Deep-merges `over` into `base`: objects merge key by key, anything else replaces.
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn override_merges_and_rejects_typos() {
        let c = Capabilities::with_override(
            Provider::Anthropic,
            Some(&json!({"images": {"max_bytes": 10}, "tool_routes": {"image/vnd.adobe.photoshop": "psd_to_png"}})),
        )
        .unwrap(); // ok: test
        assert_eq!(c.images.max_bytes, 10);
        assert_eq!(c.images.mimes.len(), 4);
        assert_eq!(
            c.tool_routes.get("image").map(String::as_str),
            Some("read_image")
        );
        assert_eq!(
            c.route("image/vnd.adobe.photoshop", crate::media::MediaClass::Image),
            Some("psd_to_png")
        );
        let e = Capabilities::with_override(Provider::Gemini, Some(&json!({"imagez": {}})))
            .unwrap_err();
        assert_eq!(e.code(), "InvalidOptions");
        let e = Capabilities::with_override(Provider::Gemini, Some(&json!(3))).unwrap_err();
        assert_eq!(e.code(), "InvalidOptions");
    }
}
