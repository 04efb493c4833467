//! Sessions read page by page: a page spans a power of ten of sequence numbers, so that it
//! is one key prefix of the zero-padded message keys ([`crate::compositor::message_key`])
//! and every backend reads it with one prefix scan. The rules every host shares: the page
//! sizes, a page's prefix, the session's last page and the answer's envelope. The reads
//! themselves are [`super::reads::Query::Page`] (hosts with their own backend) and
//! [`super::MessageStore::page`] (a Rust backend).

use super::message_read::session_state;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use serde_json::{Map, Value};

/// What the items of a [`super::reads::Query::Page`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOf {
    /// Every turn (what `thread` answers).
    Thread,
    /// The user messages (what `history` answers).
    History,
    /// The summaries (what `list` answers; no parts are read).
    List,
}

impl PageOf {
    /// The wire name (`thread`, `history`, `list`).
    pub fn name(self) -> &'static str {
        match self {
            PageOf::Thread => "thread",
            PageOf::History => "history",
            PageOf::List => "list",
        }
    }

    /// From its wire name.
    pub fn parse(s: &str) -> Result<PageOf> {
        Ok(match s {
            "thread" => PageOf::Thread,
            "history" => PageOf::History,
            "list" => PageOf::List,
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "a page is of `thread`, `history` or `list`",
                )
                .at("of"))
            }
        })
    }
}

/// One page of a session (see [`super::reads::Query::Page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The turns, user messages or summaries, in order (as JSON documents).
    pub items: Vec<Value>,
    /// This page's number.
    pub page: u64,
    /// The page before, if the session has one.
    pub prev: Option<u64>,
    /// The page after, if the session has one.
    pub next: Option<u64>,
}

impl Page {
    /// From a page read's answer.
    pub fn from_json(text: &str) -> Result<Page> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::json(ErrorKind::Internal, "a page", &e))?;
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        Ok(Page {
            items: v
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            page: n("page").unwrap_or(0),
            prev: n("prev"),
            next: n("next"),
        })
    }
}

/// The page that holds the last sequence number a session gave out (its counter row;
/// 0 for an empty session).
pub fn last_page(session: &str, row: Option<&str>, digits: u32) -> Result<u64> {
    let state = session_state(session, row)?;
    Ok(state.next_seq.saturating_sub(1) / 10u64.saturating_pow(digits))
}

/// `{ items, page, prev, next }` around the items of page `n` (JSON text) of a session
/// whose last page is `last`.
pub fn page_envelope(items: &str, n: u64, last: u64) -> String {
    // `{"next":…,"page":…,"prev":…}` (the map's key order), the items before them.
    let mut o = Map::new();
    o.insert("next".into(), (n < last).then(|| n + 1).into());
    o.insert("page".into(), n.into());
    o.insert("prev".into(), n.checked_sub(1).map(|p| p.min(last)).into());
    let tail = Value::Object(o).json_text();
    format!("{{\"items\":{items},{}", tail.get(1..).unwrap_or("}"))
}

/// The key prefix of page `page` of `session` (see [`super::reads::Query::Page`]).
pub fn page_prefix(session: &str, page: u64, digits: u32) -> String {
    let width = crate::compositor::SEQ_DIGITS.saturating_sub(digits as usize);
    format!("{session}/{page:0width$}")
}

/// The sizes a page may have: powers of ten, so that a page is one key prefix of the
/// zero-padded sequence numbers and every backend reads it with one prefix scan.
pub const PAGE_SIZES: [u64; 6] = [10, 100, 1_000, 10_000, 100_000, 1_000_000];

/// A page size's digit count (`100` → 2), or `InvalidOptions` naming the sizes there are.
pub fn page_digits(size: u64) -> Result<u32> {
    let mut span = 10;
    for digits in 1..=6 {
        if span == size {
            return Ok(digits);
        }
        span *= 10;
    }
    Err(Error::new(
        ErrorKind::InvalidOptions,
        "a page holds 10, 100, 1000, 10000, 100000 or 1000000 messages (a power of ten: one key prefix each)",
    )
    .at("pageSize"))
}

/// The most rows a trace page holds (traces page by cursor, not by number: their keys
/// have no sequence number to share a prefix).
#[cfg(feature = "composer")]
pub const TRACE_PAGE_MAX: usize = 10_000;

/// A trace page's size, checked: `1 ..= TRACE_PAGE_MAX` rows.
#[cfg(feature = "composer")]
pub fn trace_page_size(n: usize) -> Result<usize> {
    if (1..=TRACE_PAGE_MAX).contains(&n) {
        return Ok(n);
    }
    Err(Error::new(
        crate::error::ErrorKind::InvalidOptions,
        format!("a trace page holds 1 to {TRACE_PAGE_MAX} rows (got {n})"),
    )
    .at("pageSize"))
}
