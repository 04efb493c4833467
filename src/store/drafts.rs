//! Drafts: the reply a session is reading, kept as it streams so that a page that goes away
//! mid-reply (a reload, a closed tab) finds it again instead of losing it. A draft is one
//! row per session in [`Table::Drafts`]: `{ seq, turn?, run? }` — the reply read so far as
//! [`crate::agent::cut`] keeps a stopped reply (its text, marked `cut`), the relayed run that
//! is reading it on a server (what a reloaded page attaches to: see
//! [`crate::event_stream::RUN_HEADER`]), and the sequence number the reply would take. It
//! stands for a reply only while that number is still the session's next: once a turn is
//! stored there (the reply itself, or anything else), the draft is stale and reads as none,
//! so a writer that stored its reply and went away before dropping the draft leaves nothing
//! wrong behind. The row is written apart from the session's counters, so a draft never
//! races with an append.

use super::{Op, Table};
use crate::compositor::SessionState;
use crate::conversation::Turn;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::{JsonText, ObjectText};
use serde_json::{Map, Value};

/// A session's draft: the reply read so far (cut), and the relayed run reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// The reply so far, cut (`None`: nothing of it was shown yet).
    pub turn: Option<Turn>,
    /// The relayed run reading it on a server, to attach to.
    pub run: Option<String>,
}

impl Draft {
    /// `{ turn?, run? }`, what the hosts answer.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        if let Some(r) = &self.run {
            o.insert("run".into(), r.clone().into());
        }
        if let Some(t) = &self.turn {
            o.insert("turn".into(), t.to_value());
        }
        Value::Object(o)
    }

    /// Reads `{ turn?, run? }` (a host's draft to save): the turn as read so far, uncut.
    pub fn from_value(v: Value) -> Result<Draft> {
        let Value::Object(mut o) = v else {
            return Err(Error::new(
                ErrorKind::InvalidMessage,
                "a draft is an object: { turn?, run? }",
            ));
        };
        let run = match o.remove("run") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::InvalidMessage,
                    "a draft's `run` is a string (at run)",
                ))
            }
        };
        let turn = match o.remove("turn") {
            None | Some(Value::Null) => None,
            Some(t) => Some(Turn::from_value(t)?),
        };
        Ok(Draft { turn, run })
    }
}

/// The rows that keep `draft` (the reply read so far, and the run reading it) as `session`'s
/// draft, after a session whose counters are `state`, and whether anything is kept: a reply
/// with no text yet and no run keeps nothing, and drops an older draft.
pub fn draft_rows(session: &str, state: &SessionState, draft: &Draft) -> (Vec<Op>, bool) {
    let kept = draft
        .turn
        .as_ref()
        .and_then(|t| crate::agent::cut(t.to_value()));
    if kept.is_none() && draft.run.is_none() {
        return (drop_rows(session), false);
    }
    let mut row = ObjectText::new(64);
    if let Some(r) = &draft.run {
        row.str("run", r);
    }
    row.value("seq", &state.next_seq.max(1).into());
    if let Some(t) = &kept {
        row.raw("turn", &t.json_text());
    }
    let op = Op::Put {
        table: Table::Drafts,
        key: session.to_owned(),
        value: row.finish(),
    };
    (vec![op], true)
}

/// The rows that drop `session`'s draft.
pub fn drop_rows(session: &str) -> Vec<Op> {
    vec![Op::Delete {
        table: Table::Drafts,
        key: session.to_owned(),
    }]
}

/// `session`'s stored draft row (`{ run?, seq, turn? }`, as [`draft_rows`] wrote it) when it
/// still stands for the reply after the session's last message (its `seq` is the next one
/// of `state`); `None` for no row or a stale one. A row without a `seq` is `StoreFailed`.
pub fn standing<'r>(
    session: &str,
    state: &SessionState,
    row: Option<&'r str>,
) -> Result<Option<&'r str>> {
    let Some(text) = row else {
        return Ok(None);
    };
    let seq = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("seq").and_then(Value::as_u64))
        .ok_or_else(|| super::bad_row(Table::Drafts, session, "no seq"))?;
    Ok((seq == state.next_seq.max(1)).then_some(text))
}

/// [`standing`], read as a [`Draft`].
pub fn draft_of(session: &str, state: &SessionState, row: Option<&str>) -> Result<Option<Draft>> {
    match standing(session, state, row)? {
        None => Ok(None),
        Some(text) => Draft::from_value(serde_json::from_str(text).unwrap_or_default())
            .map(Some)
            .map_err(|e| super::bad_row(Table::Drafts, session, e)),
    }
}

/// What a chat that opens a session does with the session's standing draft (the reply its
/// last page was reading when it went away).
#[derive(Debug, Clone, PartialEq)]
pub enum Adoption {
    /// Attach to the relayed run still reading the reply on the server (the chat relays with
    /// reconnects): the server replays it from its start. `fallback` is the reply so far, cut,
    /// appended instead when the server no longer has the run.
    Attach {
        /// The run to attach to.
        run: String,
        /// The reply so far, cut, if any of it was shown.
        fallback: Option<Turn>,
    },
    /// Append the reply so far, cut, so the thread shows it; then drop the draft.
    Append(Turn),
    /// Nothing was shown and nothing can be attached to: drop the draft.
    Drop,
}

impl Adoption {
    /// `{ attach, turn? }`, `{ append }` or `{}`, what the hosts answer.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        match self {
            Adoption::Attach { run, fallback } => {
                o.insert("attach".into(), run.clone().into());
                if let Some(t) = fallback {
                    o.insert("turn".into(), t.to_value());
                }
            }
            Adoption::Append(t) => {
                o.insert("append".into(), t.to_value());
            }
            Adoption::Drop => {}
        }
        Value::Object(o)
    }
}

/// What a chat opening a session does with a draft, by what the draft holds: see [`adopt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Adopt {
    /// Attach to the draft's run (the turn, if any, is the fallback).
    Attach = 0,
    /// Append the draft's turn, cut.
    Append = 1,
    /// Drop the draft.
    Drop = 2,
}

impl Adopt {
    /// The one rule for a draft found on open: a chat that relays with reconnects attaches to
    /// the draft's run (the reply goes on where the server kept it); any other chat appends
    /// the reply so far, cut (a run is of no use without reconnects); a draft with neither is
    /// dropped.
    pub fn of(has_run: bool, has_turn: bool, relays: bool) -> Adopt {
        match (has_run && relays, has_turn) {
            (true, _) => Adopt::Attach,
            (false, true) => Adopt::Append,
            (false, false) => Adopt::Drop,
        }
    }

    /// `attach`, `append` or `drop`.
    pub fn as_str(self) -> &'static str {
        match self {
            Adopt::Attach => "attach",
            Adopt::Append => "append",
            Adopt::Drop => "drop",
        }
    }
}

/// [`Adopt::of`] over a draft: what to attach to or append (the stored turn is already cut,
/// [`draft_rows`]), with the reply so far kept as the fallback of an attach.
pub fn adopt(draft: Draft, relays: bool) -> Adoption {
    match (
        Adopt::of(draft.run.is_some(), draft.turn.is_some(), relays),
        draft.run,
        draft.turn,
    ) {
        (Adopt::Attach, Some(run), fallback) => Adoption::Attach { run, fallback },
        (Adopt::Append, _, Some(turn)) => Adoption::Append(turn),
        _ => Adoption::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn draft(v: Value) -> Draft {
        Draft::from_value(v).unwrap() // ok: test
    }

    fn state(next_seq: u64) -> SessionState {
        SessionState {
            next_seq,
            inline_bytes: 0,
            messages: next_seq - 1,
            blob_bytes: 0,
        }
    }

    fn put_value(ops: &[Op]) -> &str {
        match ops.first() {
            Some(Op::Put { value, .. }) => value,
            _ => panic!("a put: {ops:?}"), // ok: test
        }
    }

    #[test]
    fn a_draft_reads_back_cut_until_its_place_is_taken() {
        let d = draft(json!({ "turn": { "role": "assistant", "parts": [
            { "type": "reasoning", "text": "hm" }, { "type": "text", "text": "Hel" },
            { "type": "tool-call", "id": "c", "name": "f", "input": {} } ] } }));
        let (ops, kept) = draft_rows("s", &state(3), &d);
        assert!(kept);
        let back = draft_of("s", &state(3), Some(put_value(&ops)))
            .unwrap()
            .unwrap(); // ok: test
        let v = back.to_value();
        assert_eq!(
            v["turn"]["parts"],
            json!([{ "type": "reasoning", "text": "hm" }, { "type": "text", "text": "Hel" }])
        );
        assert_eq!(v["turn"]["metadata"]["cut"], json!(true));
        assert_eq!(back.run, None);
        // A turn stored at seq 3: the draft is stale.
        assert!(draft_of("s", &state(4), Some(put_value(&ops)))
            .unwrap()
            .is_none()); // ok: test
        assert!(draft_of("s", &state(3), None).unwrap().is_none()); // ok: test
    }

    #[test]
    fn a_relayed_run_is_kept_before_any_text() {
        let d = draft(json!({ "run": "r1", "turn": { "role": "assistant", "parts": [] } }));
        let (ops, kept) = draft_rows("s", &state(2), &d);
        assert!(kept);
        let back = draft_of("s", &state(2), Some(put_value(&ops)))
            .unwrap()
            .unwrap(); // ok: test
        assert_eq!(back.to_value(), json!({ "run": "r1" }));
    }

    #[test]
    fn nothing_shown_and_no_run_drops_the_draft() {
        let d = draft(json!({ "turn": { "role": "assistant", "parts": [] } }));
        let (ops, kept) = draft_rows("s", &state(1), &d);
        assert!(!kept);
        assert_eq!(ops, drop_rows("s"));
        assert_eq!(
            draft_rows("s", &state(1), &draft(json!({}))).0,
            drop_rows("s")
        );
    }

    #[test]
    fn bad_drafts_and_bad_rows_are_refused() {
        for bad in [
            json!(1),
            json!({ "run": 2 }),
            json!({ "turn": { "role": "nobody" } }),
        ] {
            assert!(Draft::from_value(bad.clone()).is_err(), "{bad}");
        }
        for bad in ["{", "{}", r#"{"seq":1,"turn":{"role":"nobody"}}"#] {
            let e = draft_of("s", &state(1), Some(bad)).unwrap_err(); // ok: test
            assert_eq!(e.kind(), ErrorKind::StoreFailed, "{bad}");
        }
    }

    #[test]
    fn a_relaying_chat_attaches_and_any_other_appends() {
        let turn = json!({ "role": "assistant", "parts": [{ "type": "text", "text": "Hel" }],
            "metadata": { "cut": true, "schema_version": 3 } });
        let both = draft(json!({ "run": "r1", "turn": turn.clone() }));
        assert_eq!(
            adopt(both.clone(), true).to_value(),
            json!({ "attach": "r1", "turn": turn.clone() })
        );
        assert_eq!(adopt(both, false).to_value(), json!({ "append": turn }));
        assert_eq!(
            adopt(draft(json!({ "run": "r1" })), true).to_value(),
            json!({ "attach": "r1" })
        );
        assert_eq!(adopt(draft(json!({ "run": "r1" })), false), Adoption::Drop);
        assert_eq!(adopt(draft(json!({})), true), Adoption::Drop);
        assert_eq!(Adopt::of(true, false, true).as_str(), "attach");
        assert_eq!(Adopt::of(true, true, false).as_str(), "append");
        assert_eq!(Adopt::of(false, false, true).as_str(), "drop");
    }
}
