//! Media types: sniffing from the first bytes, classes, base64 and `data:` URLs, and
//! media types from file names.

use crate::error::{Error, ErrorKind, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// How many leading bytes the sniffer looks at (the JS face passes only these for large data).
pub const SNIFF_BYTES: usize = 48;

/// The broad class of a media type, which decides how it lowers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaClass {
    /// `image/*`
    Image,
    /// `application/pdf`
    Pdf,
    /// `audio/*`
    Audio,
    /// `video/*`
    Video,
    /// Text the model can read inline: `text/*`, JSON, XML, YAML, scripts.
    Text,
    /// Anything else: never inlined.
    Binary,
}

impl MediaClass {
    /// A short stable name (`image`, `pdf`, `audio`, `video`, `text`, `binary`).
    pub fn name(self) -> &'static str {
        match self {
            MediaClass::Image => "image",
            MediaClass::Pdf => "pdf",
            MediaClass::Audio => "audio",
            MediaClass::Video => "video",
            MediaClass::Text => "text",
            MediaClass::Binary => "binary",
        }
    }
}

/// The class of a (lower-case, parameter-free) media type.
pub fn class_of(mime: &str) -> MediaClass {
    let (top, sub) = mime.split_once('/').unwrap_or((mime, ""));
    match top {
        "image" => MediaClass::Image,
        "audio" => MediaClass::Audio,
        "video" => MediaClass::Video,
        "text" => MediaClass::Text,
        "application" => match sub {
            "pdf" => MediaClass::Pdf,
            "json" | "xml" | "javascript" | "x-javascript" | "ecmascript" | "typescript"
            | "x-typescript" | "yaml" | "x-yaml" | "toml" | "x-toml" | "sql" | "x-sh"
            | "x-shellscript" | "graphql" | "ld+json" | "x-ndjson" | "csv" => MediaClass::Text,
            s if s.ends_with("+json") || s.ends_with("+xml") => MediaClass::Text,
            _ => MediaClass::Binary,
        },
        _ => MediaClass::Binary,
    }
}

/// The class the lowering reads a media type as: [`class_of`], with SVG read as text (it is
/// XML, and no provider takes it as an image). The glue asks this (`mediaClass`) to know
/// which data the core reads whole.
pub fn read_class(mime: &str) -> MediaClass {
    if mime == "image/svg+xml" {
        MediaClass::Text
    } else {
        class_of(mime)
    }
}

/// Lower-cases a declared media type and strips its parameters (`; charset=…`).
pub fn normalize_mime(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The media type the first bytes prove, when they prove one.
pub fn sniff(b: &[u8]) -> Option<&'static str> {
    let at = |off: usize, sig: &[u8]| b.get(off..off + sig.len()) == Some(sig);
    if at(0, b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if at(0, b"\xFF\xD8\xFF") {
        return Some("image/jpeg");
    }
    if at(0, b"GIF87a") || at(0, b"GIF89a") {
        return Some("image/gif");
    }
    if at(0, b"RIFF") && at(8, b"WEBP") {
        return Some("image/webp");
    }
    if at(0, b"RIFF") && at(8, b"WAVE") {
        return Some("audio/wav");
    }
    if at(0, b"RIFF") && at(8, b"AVI ") {
        return Some("video/x-msvideo");
    }
    if at(0, b"%PDF-") {
        return Some("application/pdf");
    }
    if at(0, b"8BPS") {
        return Some("image/vnd.adobe.photoshop");
    }
    if at(0, b"BM") && b.len() >= 14 {
        return Some("image/bmp");
    }
    if at(0, b"II*\0") || at(0, b"MM\0*") {
        return Some("image/tiff");
    }
    if at(4, b"ftyp") {
        let brand = b.get(8..12)?;
        return Some(match brand {
            b"heic" | b"heix" | b"hevc" | b"heim" | b"heis" => "image/heic",
            b"mif1" | b"msf1" | b"heif" => "image/heif",
            b"avif" | b"avis" => "image/avif",
            b"M4A " | b"M4B " => "audio/mp4",
            b"qt  " => "video/quicktime",
            b"3gp4" | b"3gp5" | b"3g2a" => "video/3gpp",
            _ => "video/mp4",
        });
    }
    if at(0, b"ID3") || mpeg_frame(b) {
        return Some("audio/mpeg");
    }
    if at(0, b"fLaC") {
        return Some("audio/flac");
    }
    if at(0, b"OggS") {
        return Some("audio/ogg");
    }
    if at(0, b"FORM") && (at(8, b"AIFF") || at(8, b"AIFC")) {
        return Some("audio/aiff");
    }
    if at(0, b"\x1A\x45\xDF\xA3") {
        return Some("video/webm");
    }
    if at(0, b"PK\x03\x04") {
        return Some("application/zip");
    }
    if at(0, b"\x1F\x8B") {
        return Some("application/gzip");
    }
    if at(0, b"\x7FELF") {
        return Some("application/x-elf");
    }
    None
}

/// An MPEG audio frame header: sync bits, a defined version and layer, a real bitrate and
/// sample rate (so that text such as a UTF-16 byte-order mark is not taken for MP3).
fn mpeg_frame(b: &[u8]) -> bool {
    let [0xFF, b1, b2, ..] = *b else { return false };
    let sync = b1 & 0xE0 == 0xE0;
    let version_ok = (b1 >> 3) & 3 != 1;
    let layer_ok = (b1 >> 1) & 3 != 0;
    let bitrate = b2 >> 4;
    let rate_ok = (b2 >> 2) & 3 != 3;
    sync && version_ok && layer_ok && bitrate != 0 && bitrate != 0xF && rate_ok
}

/// The path part of a URL (no scheme, host, query or fragment); other strings unchanged.
pub fn url_path(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => {
            let rest = rest.split(['?', '#']).next().unwrap_or(rest);
            rest.find('/').map_or("", |i| &rest[i..])
        }
        None => url,
    }
}

/// Whether a URL is a YouTube video page (`youtube.com/watch`, `youtu.be/…`, shorts).
pub fn is_youtube(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    let host = rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let path = rest.get(host.len()..).unwrap_or_default();
    match host.as_str() {
        "youtu.be" => path.len() > 1,
        "youtube.com" | "www.youtube.com" | "m.youtube.com" => {
            path.starts_with("/watch?")
                || path.starts_with("/shorts/")
                || path.starts_with("/live/")
        }
        _ => false,
    }
}

/// The media type a file name's extension suggests (`#` and `?` are part of a path; pass
/// URLs through [`url_path`] first).
pub fn mime_from_name(name: &str) -> Option<&'static str> {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let ext = file.rsplit_once('.')?.1.to_ascii_lowercase();
    // A table searched in order rather than a `match` on each extension: the same answers,
    // a few KB less code in every module (the lookup runs once per attachment or reference).
    MIME_BY_EXTENSION
        .iter()
        .find(|(exts, _)| exts.split(' ').any(|e| e == ext))
        .map(|(_, mime)| *mime)
}

/// The media types by file extension (space-separated extensions, then the type).
const MIME_BY_EXTENSION: [(&str, &str); 36] = [
    ("png", "image/png"),
    ("jpg jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("heic", "image/heic"),
    ("heif", "image/heif"),
    ("avif", "image/avif"),
    ("bmp", "image/bmp"),
    ("svg", "image/svg+xml"),
    ("psd", "image/vnd.adobe.photoshop"),
    ("pdf", "application/pdf"),
    ("wav", "audio/wav"),
    ("mp3", "audio/mpeg"),
    ("aiff aif", "audio/aiff"),
    ("aac", "audio/aac"),
    ("ogg oga", "audio/ogg"),
    ("flac", "audio/flac"),
    ("m4a", "audio/mp4"),
    ("mp4 m4v", "video/mp4"),
    ("mov", "video/quicktime"),
    ("webm", "video/webm"),
    ("json", "application/json"),
    ("xml", "application/xml"),
    ("yaml yml", "application/yaml"),
    ("toml", "application/toml"),
    ("csv", "text/csv"),
    ("html htm", "text/html"),
    ("css", "text/css"),
    ("md markdown", "text/markdown"),
    ("js mjs cjs jsx", "text/javascript"),
    (
        "ts tsx mts cts rs py go java kt c h cc cpp hpp cs rb php swift sh bash zsh sql lua txt log ini cfg conf vue svelte scala hs ml ex exs erl zig nim dart r pl tex wit",
        "text/plain",
    ),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
];

/// The extension of a path (lower-case, without the dot), used as a code fence language.
pub fn extension(path: &str) -> Option<String> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (stem, ext) = file.rsplit_once('.')?;
    if stem.is_empty() || ext.is_empty() || !ext.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(ext.to_ascii_lowercase())
}

/// A parsed `data:` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataUrl<'a> {
    /// The media type of the header, lower-cased without parameters (`None` when empty).
    pub mime: Option<String>,
    /// Whether the payload is base64 (`;base64`).
    pub base64: bool,
    /// The payload after the comma, still encoded.
    pub payload: &'a str,
}

/// Parses `data:[<mediatype>][;base64],<payload>`; `None` if `s` is not a data URL.
pub fn parse_data_url(s: &str) -> Option<DataUrl<'_>> {
    let rest = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .map(|_| &s[5..])?;
    let (header, payload) = rest.split_once(',')?;
    let mut params = header.split(';');
    let mime = params.next().map(normalize_mime).filter(|m| !m.is_empty());
    let base64 = params.any(|p| p.trim().eq_ignore_ascii_case("base64"));
    Some(DataUrl {
        mime,
        base64,
        payload,
    })
}

/// Decodes `%XX` escapes of a percent-encoded data URL payload into bytes.
pub fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' {
            if let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Byte classes for base64 text: 1 = alphabet, 2 = ASCII whitespace, 0 = anything else.
static B64_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' {
            1
        } else if c.is_ascii_whitespace() {
            2
        } else {
            0
        };
        i += 1;
    }
    t
};

/// The offset of the first byte outside the base64 alphabet (padding excluded), if any.
fn first_non_alphabet(b: &[u8]) -> Option<usize> {
    let mut chunks = b.chunks_exact(16);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        // Branch-free over the chunk; only a failing chunk is searched.
        if !chunk
            .iter()
            .fold(true, |ok, &c| ok & (B64_CLASS[c as usize] == 1))
        {
            return chunk
                .iter()
                .position(|&c| B64_CLASS[c as usize] != 1)
                .map(|p| at + p);
        }
        at += 16;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| B64_CLASS[c as usize] != 1)
        .map(|p| at + p)
}

/// Returns base64 text with ASCII whitespace removed (line-wrapped base64), borrowing when
/// there is none, after checking the alphabet, padding and length.
pub fn clean_base64(s: &str) -> Result<std::borrow::Cow<'_, str>> {
    match check_base64(s, true) {
        Ok(()) => Ok(s.into()),
        Err(e) if s.bytes().any(|c| B64_CLASS[c as usize] == 2) => {
            let cleaned: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            match check_base64(&cleaned, true) {
                Ok(()) => Ok(cleaned.into()),
                Err(_) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// Checks base64 text: the alphabet everywhere (or only the head and tail when `full` is
/// false), a length that is a multiple of 4, and padding only at the end.
pub fn check_base64(s: &str, full: bool) -> Result<()> {
    let b = s.as_bytes();
    let bad = |what: &str| {
        Error::new(
            ErrorKind::InvalidData,
            format!("attachment data is not valid base64: {what}"),
        )
    };
    let body_end = b.len() - b.iter().rev().take(2).take_while(|c| **c == b'=').count();
    let check = |from: usize, to: usize| -> Result<()> {
        match first_non_alphabet(b.get(from..to).unwrap_or_default()) {
            Some(p) => Err(bad("unexpected character").with("offset", (from + p) as u64)),
            None => Ok(()),
        }
    };
    if full || body_end <= 2 * 64 {
        check(0, body_end)?;
    } else {
        check(0, 64)?;
        check(body_end - 64, body_end)?;
    }
    if !b.len().is_multiple_of(4) {
        return Err(bad("its length is not a multiple of 4").with("length", b.len() as u64));
    }
    Ok(())
}

/// The decoded byte length of `len` base64 characters ending in `pad` `=` signs.
pub fn decoded_len(len: u64, pad: u64) -> u64 {
    (len / 4 * 3).saturating_sub(pad)
}

/// Decodes the first [`SNIFF_BYTES`] bytes of base64 text (for sniffing).
pub fn decode_head(b64: &str) -> Vec<u8> {
    let n = (SNIFF_BYTES / 3 * 4).min(b64.len() / 4 * 4);
    STANDARD
        .decode(b64.get(..n).unwrap_or(""))
        .unwrap_or_default()
}

/// Decodes base64 text in full (it must have been checked).
pub fn decode(b64: &str) -> Result<Vec<u8>> {
    STANDARD.decode(b64).map_err(|e| {
        Error::new(
            ErrorKind::InvalidData,
            format!("attachment data is not valid base64: {e}"),
        )
    })
}

/// Encodes bytes as standard base64.
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Whether bytes look like text (valid UTF-8, no NUL).
pub fn looks_textual(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_common_types() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), Some("image/png"));
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0"), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), Some("audio/wav"));
        assert_eq!(sniff(b"%PDF-1.7"), Some("application/pdf"));
        assert_eq!(sniff(b"\0\0\0\x18ftypheic"), Some("image/heic"));
        assert_eq!(sniff(b"\0\0\0\x18ftypisom"), Some("video/mp4"));
        assert_eq!(sniff(b"8BPS\0\x01"), Some("image/vnd.adobe.photoshop"));
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn data_urls() {
        let d = parse_data_url("data:text/plain;charset=utf-8,a%2Cb,c").unwrap(); // ok: test
        assert_eq!(d.mime.as_deref(), Some("text/plain"));
        assert!(!d.base64);
        assert_eq!(percent_decode(d.payload), b"a,b,c");
        let d = parse_data_url("DATA:image/PNG;base64,iVBO").unwrap(); // ok: test
        assert_eq!(d.mime.as_deref(), Some("image/png"));
        assert!(d.base64);
        assert_eq!(d.payload, "iVBO");
        assert!(parse_data_url("iVBORw0KGgo=").is_none());
        assert_eq!(percent_decode("%zz%4"), b"%zz%4");
    }

    #[test]
    fn base64_checks() {
        assert!(check_base64("aGVsbG8=", true).is_ok());
        assert!(check_base64("aGVsbG8", true).is_err());
        assert!(check_base64("aGV\"bG8=", true).is_err());
        assert!(check_base64("a=VsbG8=", true).is_err());
        assert_eq!(clean_base64("aGVs\r\nbG8=").unwrap(), "aGVsbG8="); // ok: test
        assert_eq!(decoded_len(8, 1), 5);
        assert_eq!(decode_head("aGVsbG8="), b"hello");
    }

    #[test]
    fn names() {
        assert_eq!(mime_from_name("a/b c/icon.PNG"), Some("image/png"));
        assert_eq!(
            mime_from_name(url_path("https://x.test/a.pdf?x=1#p")),
            Some("application/pdf")
        );
        assert_eq!(url_path("https://x.test"), "");
        assert!(is_youtube("https://www.youtube.com/watch?v=abc"));
        assert!(is_youtube("https://youtu.be/abc"));
        assert!(!is_youtube("https://youtube.com/"));
        assert!(!is_youtube("https://notyoutube.com/watch?v=a"));
        assert!(!is_youtube("ftp://youtu.be/abc"));
        assert_eq!(extension("src/my dir/a#b c.ts"), Some("ts".into()));
        assert_eq!(sniff(b"\xFF\xFE\x00b"), None);
        assert_eq!(sniff(b"\xFF\xFB\x90\x44"), Some("audio/mpeg"));
        assert_eq!(mime_from_name("Makefile"), None);
        // Every extension of the table, each to its type (a few the match used to hold).
        for (name, mime) in [
            ("a.jpeg", "image/jpeg"),
            ("a.aif", "audio/aiff"),
            ("a.oga", "audio/ogg"),
            ("a.m4v", "video/mp4"),
            ("a.yml", "application/yaml"),
            ("a.htm", "text/html"),
            ("a.markdown", "text/markdown"),
            ("a.cjs", "text/javascript"),
            ("a.wit", "text/plain"),
            ("a.R", "text/plain"),
            ("a.tsx", "text/plain"),
            ("a.gz", "application/gzip"),
            (
                "a.pptx",
                "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            ),
        ] {
            assert_eq!(mime_from_name(name), Some(mime), "{name}");
        }
        assert_eq!(mime_from_name("a.tx"), None);
        assert_eq!(mime_from_name("a."), None);
        assert_eq!(extension("src/lib/foo.ts"), Some("ts".into()));
        assert_eq!(extension("dir.d/.hidden"), None);
        assert_eq!(class_of("application/vnd.api+json"), MediaClass::Text);
        assert_eq!(class_of("application/octet-stream"), MediaClass::Binary);
    }
}
