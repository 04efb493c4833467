//! The JS face (wasm-bindgen). It only converts strings and delegates to the core; the
//! hand-written glue in `pkg/src/api.js` turns errors into `Error` objects and splices
//! host-held attachment data into the body.

use crate::error::{Error, ErrorKind};
use crate::frame;
#[cfg(not(feature = "lowering-only"))]
use crate::json_text::JsonText;
use crate::lower::{self, Capabilities, LowerOptions, Provider};
use crate::message::UserMessage;
use crate::wire;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

mod agent;
#[cfg(feature = "composer")]
mod arbiter;
#[cfg(not(feature = "lowering-only"))]
mod chat;
#[cfg(feature = "composer")]
mod composer;
#[cfg(not(feature = "lowering-only"))]
mod compositor;
mod conversation;
#[cfg(feature = "composer")]
mod gateway;
mod response;
#[cfg(not(feature = "lowering-only"))]
mod skills;
#[cfg(feature = "swb-bench")]
mod swb_bench;

fn js_err(e: Error) -> JsValue {
    JsValue::from_str(&e.to_json())
}

thread_local! {
    /// Where the glue writes a call's input strings (UTF-8, back to back) with
    /// `TextEncoder.encodeInto`: a bulk copy, where wasm-bindgen's string passing walks
    /// ASCII text one character at a time in JS (slow for resolved file contents).
    static INBOX: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Makes room for `len` bytes of input and returns their offset in linear memory. The
/// buffer only grows, so a later call writes over the same bytes without clearing them.
#[wasm_bindgen(js_name = inbox)]
pub fn inbox(len: usize) -> usize {
    INBOX.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() < len {
            b.resize(len, 0);
        }
        b.as_mut_ptr() as usize
    })
}

/// Calls `f` with the glue's pieces in the inbox read as one text (they lie one after the
/// other), borrowed in place: a large input (a catalog) is not copied first.
fn with_inbox_text<T>(lens: &[u32], f: impl FnOnce(&str) -> T) -> Result<T, JsValue> {
    let total = lens.iter().map(|&n| n as usize).sum::<usize>();
    INBOX
        .with(|b| -> Result<T, Error> {
            let b = b.borrow();
            let bytes = b
                .get(..total)
                .ok_or_else(|| Error::new(ErrorKind::Internal, "inbox overrun"))?;
            let text = std::str::from_utf8(bytes)
                .map_err(|_| Error::new(ErrorKind::InvalidMessage, "input is not UTF-8"))?;
            Ok(f(text))
        })
        .map_err(js_err)
}

/// The strings the glue wrote into the inbox, by their byte lengths.
fn inbox_strings(lens: &[u32]) -> Result<Vec<String>, JsValue> {
    INBOX
        .with(|b| -> Result<Vec<String>, Error> {
            let b = b.borrow();
            let mut at = 0usize;
            lens.iter()
                .map(|&n| {
                    let end = at + n as usize;
                    let bytes = b
                        .get(at..end)
                        .ok_or_else(|| Error::new(ErrorKind::Internal, "inbox overrun"))?;
                    at = end;
                    std::str::from_utf8(bytes)
                        .map(str::to_owned)
                        .map_err(|_| Error::new(ErrorKind::InvalidMessage, "input is not UTF-8"))
                })
                .collect()
        })
        .map_err(js_err)
}

/// JSON text from JS as a value, or the coded error naming `what` (`wire::json_value`).
pub(crate) fn parse(text: &str, what: &str, kind: ErrorKind) -> Result<serde_json::Value, JsValue> {
    wire::json_value(text, what, kind).map_err(js_err)
}

/// Lowers many messages with one set of options. The inbox holds the messages as a JSON
/// array (large data replaced by host slots), the options JSON, the resolver answers (a
/// JSON array with one answers object per message, or ""), then each resolved file text
/// (the answers name them by index, `{"text_at": n}`). Returns one segment per message,
/// separated by `\u{4}`: the report JSON, a NUL, then the body with `\u{1}n\u{1}` slot
/// markers; or `\u{3}` and the error JSON for a message that failed. If the core must read
/// host slots whole, it returns `\u{2}` and their comma-separated numbers instead (the glue
/// calls again with them inline). Raw control characters never occur in JSON text, so
/// the separators cannot collide with content.
///
/// With `\u{5}` in place of the answers (the host has a resolver and has not asked it
/// yet), the core plans the resolver requests first (`lower::requests`): when no message
/// asks anything it lowers at once; otherwise it returns `\u{5}` and the requests, a JSON
/// array of arrays (one per message), and the glue calls again with the answers.
#[wasm_bindgen(js_name = lowerManyInbox)]
pub fn lower_many_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let mut it = input.into_iter();
    let (Some(messages), Some(options), Some(resolved)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let opts = parsed_options(options).map_err(js_err)?;
    let parsed = UserMessage::many_from_json(&messages).map_err(js_err)?;
    let plan = resolved.starts_with(frame::ASK) && resolved.len() == frame::ASK.len_utf8();
    let tables = if plan {
        (0..parsed.len()).map(|_| Default::default()).collect()
    } else {
        wire::resolver_tables(&resolved, it.collect(), parsed.len()).map_err(js_err)?
    };
    if plan {
        let lists: Vec<Vec<lower::Request>> = parsed
            .iter()
            .map(|m| match m {
                Ok(m) => lower::resolve_requests(&m.parts),
                Err(_) => Vec::new(),
            })
            .collect();
        if lists.iter().any(|l| !l.is_empty()) {
            let values: Vec<Vec<serde_json::Value>> = lists
                .into_iter()
                .map(|l| l.into_iter().map(|r| r.value).collect())
                .collect();
            let json = crate::json_text::to_string(&values)
                .map_err(|e| js_err(Error::new(ErrorKind::Internal, e.to_string())))?;
            // The parsed messages wait here for the answers (one lowering at a time: a
            // newer plan replaces an older one, whose answers then come with the messages).
            let id = PENDING.with(|p| {
                let mut p = p.borrow_mut();
                let id = p.as_ref().map_or(1, |old| old.id.wrapping_add(1));
                *p = Some(Pending { id, opts, parsed });
                id
            });
            return Ok(format!("{}{id}{}{json}", frame::ASK, frame::FIELD));
        }
    }
    Ok(lower_parsed(parsed, &opts, &tables))
}

thread_local! {
    /// The options text of the last `lowerManyInbox` call and what it parsed to: an editor
    /// passes the same options with every message, and reading them again was a tenth of
    /// lowering a short message.
    static LAST_OPTIONS: std::cell::RefCell<Option<(String, Rc<LowerOptions>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The options read from their JSON text, or the last call's when the text is the same.
fn parsed_options(text: String) -> crate::error::Result<Rc<LowerOptions>> {
    let hit = LAST_OPTIONS.with(|l| match l.borrow().as_ref() {
        Some((t, o)) if *t == text => Some(Rc::clone(o)),
        _ => None,
    });
    if let Some(o) = hit {
        return Ok(o);
    }
    let opts = serde_json::from_str(&text)
        .map_err(|e| Error::json(ErrorKind::InvalidOptions, "options", &e))
        .and_then(LowerOptions::from_value)
        .map(Rc::new)?;
    LAST_OPTIONS.with(|l| *l.borrow_mut() = Some((text, Rc::clone(&opts))));
    Ok(opts)
}

/// Messages parsed by a planning call of `lowerManyInbox`, waiting for the resolver's
/// answers (`lowerPendingInbox`).
struct Pending {
    id: u32,
    opts: Rc<LowerOptions>,
    parsed: Vec<crate::error::Result<UserMessage>>,
}

thread_local! {
    static PENDING: std::cell::RefCell<Option<Pending>> = const { std::cell::RefCell::new(None) };
}

/// Lowers the messages a planning call kept (`id`, from its `\u{5}` answer) with the
/// resolver's answers: the inbox holds the answers JSON and the file texts, as for
/// `lowerManyInbox`, and the output is the same. `\u{6}` when those messages are no
/// longer kept (a newer plan replaced them): the glue then sends them again.
#[wasm_bindgen(js_name = lowerPendingInbox)]
pub fn lower_pending_inbox(lens: &[u32], id: u32) -> Result<String, JsValue> {
    let Some(pending) = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.as_ref() {
            Some(k) if k.id == id => p.take(),
            _ => None,
        }
    }) else {
        return Ok(frame::LOST.to_string());
    };
    let input = inbox_strings(lens)?;
    let mut it = input.into_iter();
    let answers = it.next().unwrap_or_default();
    let tables =
        wire::resolver_tables(&answers, it.collect(), pending.parsed.len()).map_err(js_err)?;
    Ok(lower_parsed(pending.parsed, &pending.opts, &tables))
}

/// Lowers parsed messages, one output segment each (see `lowerManyInbox`).
fn lower_parsed(
    parsed: Vec<crate::error::Result<UserMessage>>,
    opts: &LowerOptions,
    tables: &[lower::TableResolver],
) -> String {
    let mut out = String::new();
    let mut needs = Vec::new();
    for (i, (m, table)) in parsed.into_iter().zip(tables.iter()).enumerate() {
        if i > 0 {
            out.push(frame::NEXT);
        }
        let result = m.and_then(|msg| lower::lower_marked(&msg, opts, table));
        match result {
            Ok(lower::Marked::Lowered(l)) => {
                out.push_str(&l.report.to_json());
                out.push(frame::FIELD);
                out.push_str(&l.body);
            }
            Ok(lower::Marked::NeedsData(slots)) => needs.extend(slots),
            Err(e) => {
                out.push(frame::FAILED);
                out.push_str(&e.to_json());
            }
        }
    }
    if !needs.is_empty() {
        let list: Vec<String> = needs.iter().map(u32::to_string).collect();
        return format!("{}{}", frame::NEEDS_DATA, list.join(","));
    }
    out
}

/// The resolver requests of each conversation turn in the inbox's one string (a JSON
/// array), as a JSON array of arrays (`conversation::requests_json`).
#[wasm_bindgen(js_name = resolveRequestsInbox)]
pub fn resolve_requests_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let items = input.first().map(String::as_str).unwrap_or("[]");
    crate::conversation::requests_json(items).map_err(js_err)
}

/// The resolver requests of one message (JSON), as a JSON array; a message that does not
/// parse is its error.
#[wasm_bindgen(js_name = resolveRequests)]
pub fn resolve_requests(message: &str) -> Result<String, JsValue> {
    let list: Vec<serde_json::Value> = lower::requests::message_requests(message)
        .map_err(js_err)?
        .into_iter()
        .map(|r| r.value)
        .collect();
    crate::json_text::to_string(&list)
        .map_err(|e| js_err(Error::new(ErrorKind::Internal, e.to_string())))
}

/// The default capability table of a provider, as JSON text.
#[wasm_bindgen(js_name = defaultCapabilities)]
pub fn default_capabilities(provider: &str) -> Result<String, JsValue> {
    let p = Provider::parse(provider).map_err(js_err)?;
    crate::json_text::to_string(&Capabilities::default_for(p))
        .map_err(|e| js_err(Error::new(ErrorKind::Internal, e.to_string())))
}

/// Parses and re-serialises a message (round trip; unknown parts kept).
#[wasm_bindgen(js_name = normalizeMessage)]
pub fn normalize_message(message: &str) -> Result<String, JsValue> {
    UserMessage::from_json(message)
        .map(|m| m.to_json())
        .map_err(js_err)
}

/// The key-value commit plan (see `store::kv::plan_text` for the text forms in and out).
#[cfg(not(feature = "lowering-only"))]
#[wasm_bindgen(js_name = kvPlan)]
pub fn kv_plan(prefix: &str, ops: &str, olds: &str) -> Result<String, JsValue> {
    crate::store::kv::plan_text(prefix, ops, olds).map_err(js_err)
}

/// The writes (`[[key, value | null]]`) that roll back an interrupted commit, from its
/// journal's value and the journal key's raw value.
#[cfg(not(feature = "lowering-only"))]
#[wasm_bindgen(js_name = kvUndo)]
pub fn kv_undo(prefix: &str, journal: &str, journal_raw: &str) -> Result<String, JsValue> {
    let writes = crate::store::kv::undo(prefix, journal, journal_raw).map_err(js_err)?;
    Ok(serde_json::Value::Array(
        writes
            .into_iter()
            .map(|(k, v)| serde_json::json!([k, v]))
            .collect(),
    )
    .json_text())
}

/// What readers see while an interrupted commit cannot be rolled back: `{ rawKey: old raw
/// value | null }` from its journal.
#[cfg(not(feature = "lowering-only"))]
#[wasm_bindgen(js_name = kvOverlay)]
pub fn kv_overlay(journal: &str) -> Result<String, JsValue> {
    let o = crate::store::kv::overlay(journal).map_err(js_err)?;
    Ok(
        serde_json::Value::Object(crate::sort::json_map_of(o.into_iter().map(|(k, v)| {
            (
                k,
                v.map_or(serde_json::Value::Null, serde_json::Value::String),
            )
        })))
        .json_text(),
    )
}

/// The chunk keys a chunked row's raw value points to, in order, NUL-separated ("" for a
/// plain value); `rest` is the key after the prefix.
#[cfg(not(feature = "lowering-only"))]
#[wasm_bindgen(js_name = kvChunks)]
pub fn kv_chunks(prefix: &str, rest: &str, raw: &str) -> String {
    crate::store::kv::chunks_of(prefix, rest, raw).join("\0")
}

/// The class of an error code (`invalid`, `refused`, `unavailable`, `failed`, `internal`:
/// what the caller can do about it), or "" for a code that is not the core's; the glue's
/// `PromptloomError#class`.
#[wasm_bindgen(js_name = errorClass)]
pub fn error_class(code: &str) -> String {
    ErrorKind::from_code(code)
        .map(|k| k.class().name())
        .unwrap_or_default()
        .to_owned()
}

/// The size of the allocation the render budget refused just before a trap (0: none); the
/// glue reads it from the trapped instance to name the limit.
#[wasm_bindgen(js_name = trapReason)]
pub fn trap_reason() -> f64 {
    crate::budget::tripped() as f64
}

/// The media class (`image`, `pdf`, `audio`, `video`, `text`, `binary`) of a declared media
/// type, or of a file name's extension when the type is empty; "" when neither says. The
/// glue keeps large data out of wasm only for classes the core never reads as text.
#[wasm_bindgen(js_name = mediaClass)]
pub fn media_class(mime: &str, name: &str) -> String {
    let m = crate::media::normalize_mime(mime);
    let m = if m.is_empty() || m == "application/octet-stream" {
        crate::media::mime_from_name(name)
            .map(str::to_owned)
            .unwrap_or(m)
    } else {
        m
    };
    if m.is_empty() {
        return String::new();
    }
    crate::media::read_class(&m).name().to_owned()
}

/// The media type of a base64 `data:` URL's header (`data:<type>[;params];base64,`, up to
/// and with its comma): `""` when the header names none, `undefined` when it is not a
/// base64 data URL. The glue asks this before it keeps a data URL's payload on its side.
#[wasm_bindgen(js_name = dataUrlMime)]
pub fn data_url_mime(header: &str) -> Option<String> {
    let d = crate::media::parse_data_url(header)?;
    (d.base64 && d.payload.is_empty()).then(|| d.mime.unwrap_or_default())
}

/// Writes `op` into `w` (an open object) as a batch crosses to the glue:
/// `{ at?, index?, key, op, table }` (the keys in the order serde_json sorts them), its value
/// not copied but pushed onto `values` and named by position (`at`); `index` the fields a
/// backend with native indexes (IndexedDB) indexes the row by.
#[cfg(not(feature = "lowering-only"))]
fn write_op<'a>(
    op: &'a crate::store::Op,
    w: &mut crate::json_text::ObjectText,
    values: &mut Vec<&'a str>,
    index: Option<&serde_json::Map<String, serde_json::Value>>,
) {
    let (table, key, value) = op.row();
    if let Some(v) = value {
        w.value("at", &values.len().into());
        values.push(v);
    }
    if let Some(ix) = index {
        w.map("index", ix);
    }
    w.str("key", key);
    w.str("op", op.name());
    w.str("table", table.name());
}
