//! The JS face (wasm-bindgen). It only converts strings and delegates to the core; the
//! hand-written glue in `pkg/src/api.js` turns errors into `Error` objects and splices
//! host-held attachment data into the body.

use crate::error::{Error, ErrorKind};
use crate::lower::{self, Capabilities, LowerOptions, Provider};
use crate::message::UserMessage;
use crate::wire;
use wasm_bindgen::prelude::*;

fn js_err(e: Error) -> JsValue {
    JsValue::from_str(&e.to_json())
}

/// Lowers a prepared message. Arguments are JSON text: the message (large data replaced by
/// host slots), the options, and the host's resolver answers by part index. Returns the
/// report JSON, a NUL, then the body with `\u{1}n\u{1}` slot markers.
#[wasm_bindgen(js_name = lowerPrepared)]
pub fn lower_prepared(message: &str, options: &str, resolved: &str) -> Result<String, JsValue> {
    let msg = UserMessage::from_json(message).map_err(js_err)?;
    let opts = serde_json::from_str(options)
        .map_err(|e| {
            Error::new(
                ErrorKind::InvalidOptions,
                format!("options are not valid JSON: {e}"),
            )
        })
        .and_then(LowerOptions::from_value)
        .map_err(js_err)?;
    let table = wire::resolver_table(resolved).map_err(js_err)?;
    let out = lower::lower_marked(&msg, &opts, &table).map_err(js_err)?;
    let mut s = out.report.to_json();
    s.push('\0');
    s.push_str(&out.body);
    Ok(s)
}

/// The default capability table of a provider, as JSON text.
#[wasm_bindgen(js_name = defaultCapabilities)]
pub fn default_capabilities(provider: &str) -> Result<String, JsValue> {
    let p = Provider::parse(provider).map_err(js_err)?;
    serde_json::to_string(&Capabilities::default_for(p))
        .map_err(|e| js_err(Error::new(ErrorKind::Internal, e.to_string())))
}

/// The media type the first bytes prove, or an empty string.
#[wasm_bindgen(js_name = sniffMime)]
pub fn sniff_mime(head: &[u8]) -> String {
    crate::media::sniff(head).unwrap_or("").to_owned()
}

/// Parses and re-serialises a message (round trip; unknown parts kept).
#[wasm_bindgen(js_name = normalizeMessage)]
pub fn normalize_message(message: &str) -> Result<String, JsValue> {
    UserMessage::from_json(message)
        .map(|m| m.to_json())
        .map_err(js_err)
}
