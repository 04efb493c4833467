//! A chat's rules over a thread: the messages a chat panel shows, what a regenerate drops,
//! which turns an edit keeps, and the session a branch is written to.
//!
//! **The view.** Each turn becomes one message ([`view`]):
//!
//! ```json
//! { "id": "chat/0000000001", "turn": 0, "role": "user", "parts": [ …chips… ], "at": 1796… }
//! { "id": "chat/0000000002", "turn": 1, "role": "assistant", "status": "done" | "cut",
//!   "parts": [ { "type": "text", "text": "…" }, { "type": "reasoning", "text": "…" },
//!              { "type": "tool-call", "id": "c1", "name": "f", "input": {…},
//!                "state": "input-available" | "output-available" | "output-error",
//!                "output"?: …, "content"?: [ …chips… ], "error"?: "…" } ],
//!   "finish_reason"?: "stop", "usage"?: {…}, "model"?: "…" }
//! ```
//!
//! A user message's parts are the compositor's chips (one per part, as the inspector shows
//! them). The tool turns right after an assistant turn that answer its calls fold into
//! that turn's message: each answered call gets its `output` (or `content`, its parts as
//! chips) and the state `output-available`, or `error` and `output-error`. Other results
//! stay a message of their own (`role: "tool"`). An assistant turn whose
//! `metadata.cut` is true (a reply the user stopped, or one its page left mid-stream) has
//! the status `cut`.
//!
//! **Branches.** The store is append-only: a regenerate and an edit never rewrite a turn.
//! They start a branch ([`branch`]): a new session ([`branch_session`]) holding the turns
//! the action keeps ([`keep_for_regenerate`], [`keep_for_edit`]), copied, then the new turn.

use crate::conversation::Turn;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::{JsonText, ObjectText};
use crate::turn::{AssistantPart, AssistantTurn, ToolOutput, ToolPart, ToolResult, ToolTurn};
use serde_json::Value;

/// What separates a thread's root session name from a branch's nonce (`chat~k3x9`).
pub const BRANCH_MARK: char = '~';

/// The message id of the turn at `index`: its stored id (`metadata.id`), or `turn-<index>`
/// for a turn never stored.
pub fn message_id(turn: &Turn, index: usize) -> String {
    match turn.metadata().get("id").and_then(Value::as_str) {
        Some(id) => id.to_owned(),
        None => format!("turn-{index}"),
    }
}

/// The messages of `turns`, the thread's turns from index `first` on, as a JSON array: one
/// per turn, except that the tool turns right after an assistant turn whose results all
/// answer its calls are folded into that turn's message. A host that appends a turn shows
/// it by viewing it alone, or, for a tool turn, with the turns the last message shows (the
/// assistant turn and the tool turns folded into it): one message back replaces the last
/// one shown.
pub fn view(turns: &[Turn], first: usize) -> String {
    let mut out = String::from("[");
    let mut i = 0;
    while let Some(t) = turns.get(i) {
        let mut results: Vec<&ToolTurn> = Vec::new();
        if let Turn::Assistant(a) = t {
            while let Some(Turn::Tool(r)) = turns.get(i + 1 + results.len()) {
                if !answers(a, r) {
                    break;
                }
                results.push(r);
            }
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(&message(t, first + i, &results));
        i += 1 + results.len();
    }
    out.push(']');
    out
}

/// Whether every part of `r` is a result of one of `a`'s calls.
fn answers(a: &AssistantTurn, r: &ToolTurn) -> bool {
    r.parts.iter().all(|p| match p {
        ToolPart::Result(res) => a
            .parts
            .iter()
            .any(|c| matches!(c, AssistantPart::ToolCall(c) if c.id == res.call_id)),
        ToolPart::Unknown(_) => false,
    })
}

/// The message a turn is shown as (JSON), with the results of its calls when they follow.
fn message(turn: &Turn, index: usize, results: &[&ToolTurn]) -> String {
    let mut w = ObjectText::new(256);
    w.str("id", &message_id(turn, index));
    w.value("turn", &index.into());
    w.str("role", turn.role());
    w.key("parts");
    match turn {
        Turn::User(m) => w.array(&crate::compositor::chips(&m.parts)),
        Turn::System(s) => w.items(1, |w, _| {
            w.str("type", "text");
            w.str("text", &s.text);
        }),
        Turn::Assistant(a) => {
            let parts: Vec<&AssistantPart> = a
                .parts
                .iter()
                .filter(|p| !matches!(p, AssistantPart::Unknown(_)))
                .collect();
            w.items(parts.len(), |w, i| {
                if let Some(p) = parts.get(i) {
                    assistant_part(w, p, results);
                }
            });
        }
        Turn::Tool(t) => {
            let rs: Vec<&ToolResult> = t
                .parts
                .iter()
                .filter_map(|p| match p {
                    ToolPart::Result(r) => Some(r),
                    ToolPart::Unknown(_) => None,
                })
                .collect();
            w.items(rs.len(), |w, i| {
                if let Some(r) = rs.get(i) {
                    w.str("type", "tool-result");
                    w.str("call_id", &r.call_id);
                    if let Some(n) = &r.name {
                        w.str("name", n);
                    }
                    result(w, r);
                }
            });
        }
    }
    let meta = turn.metadata();
    if let Turn::Assistant(_) = turn {
        let cut = meta.get("cut") == Some(&Value::Bool(true));
        w.str("status", if cut { "cut" } else { "done" });
        for k in ["finish_reason", "usage", "model"] {
            if let Some(v) = meta.get(k) {
                w.value(k, v);
            }
        }
    }
    if let Some(at) = meta.get("submitted_at") {
        w.value("at", at);
    }
    w.finish()
}

fn assistant_part(w: &mut ObjectText, p: &AssistantPart, results: &[&ToolTurn]) {
    match p {
        AssistantPart::Text { text, citations } => {
            w.str("type", "text");
            w.str("text", text);
            if !citations.is_empty() {
                w.key("citations");
                w.array(citations);
            }
        }
        AssistantPart::Reasoning(r) => {
            w.str("type", "reasoning");
            w.str("text", &r.text);
            if r.redacted {
                w.value("redacted", &Value::Bool(true));
            }
        }
        AssistantPart::ToolCall(c) => {
            w.str("type", "tool-call");
            w.str("id", &c.id);
            w.str("name", &c.name);
            w.value("input", &c.input);
            if let Some(k) = &c.kind {
                w.str("kind", k);
            }
            // The last result that answers it (a call answered twice shows the later answer).
            let answer = results.iter().rev().find_map(|r| {
                r.parts.iter().rev().find_map(|p| match p {
                    ToolPart::Result(r) if r.call_id == c.id => Some(r),
                    _ => None,
                })
            });
            match answer {
                Some(r) => result(w, r),
                None => w.str("state", "input-available"),
            }
        }
        AssistantPart::Unknown(_) => {}
    }
}

/// A result's `output`, `content` (chips) or `error`, and the state they make.
fn result(w: &mut ObjectText, r: &ToolResult) {
    match &r.output {
        ToolOutput::Text(t) if r.is_error => w.str("error", t),
        ToolOutput::Json(v) if r.is_error => w.str("error", &v.json_text()),
        ToolOutput::Text(t) => w.str("output", t),
        ToolOutput::Json(v) => w.value("output", v),
        ToolOutput::Parts(p) => {
            w.key("content");
            w.array(&crate::compositor::chips(p));
        }
    }
    let state = if r.is_error {
        "output-error"
    } else {
        "output-available"
    };
    w.str("state", state);
}

/// How many turns a regenerate keeps: every turn up to the last user message (the reply
/// to it, its tool calls and results and whatever followed are dropped, and the message is
/// answered again). A thread with no user message has nothing to answer.
pub fn keep_for_regenerate(turns: &[Turn]) -> Result<usize> {
    match turns.iter().rposition(|t| matches!(t, Turn::User(_))) {
        Some(i) => Ok(i + 1),
        None => Err(Error::new(
            ErrorKind::InvalidRequest,
            "there is no user message to answer again",
        )),
    }
}

/// How many turns an edit of the user message `id` keeps: the turns before it (the edited
/// message takes its place, and everything after it is dropped).
pub fn keep_for_edit(turns: &[Turn], id: &str) -> Result<usize> {
    let Some(i) = turns
        .iter()
        .enumerate()
        .position(|(i, t)| message_id(t, i) == id)
    else {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!("the thread has no message `{id}`"),
        )
        .at("id"));
    };
    match turns.get(i) {
        Some(Turn::User(_)) => Ok(i),
        Some(t) => Err(Error::new(
            ErrorKind::InvalidRequest,
            format!(
                "message `{id}` is a {} turn: only the user's messages are edited",
                t.role()
            ),
        )
        .at("id")),
        None => Err(Error::new(ErrorKind::Internal, "a found turn went missing")),
    }
}

/// The session a branch of `session` is written to: the thread's root name (before the
/// first [`BRANCH_MARK`]) and `nonce`, which the host makes unique (a random id): branches
/// of branches stay one level deep (`chat~a1`, then `chat~b2`, not `chat~a1~b2`).
pub fn branch_session(session: &str, nonce: &str) -> Result<String> {
    if nonce.is_empty() || nonce.contains(BRANCH_MARK) || nonce.contains('\0') {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            format!("a branch nonce is a non-empty string without `{BRANCH_MARK}` or NUL"),
        )
        .at("nonce"));
    }
    let root = session.split(BRANCH_MARK).next().unwrap_or(session);
    Ok(format!("{root}{BRANCH_MARK}{nonce}"))
}

/// Where a regenerate or an edit goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// The turns it keeps (the thread's first `keep`).
    pub keep: usize,
    /// The session it continues in: a new branch ([`branch_session`]) when it leaves turns
    /// out or replaces one; the same session when a regenerate drops nothing (the reply
    /// failed, and the message is sent again).
    pub session: String,
}

/// Where a regenerate (`edit` absent) or an edit of user message `edit` goes on, in a
/// thread of `session`: the turns it keeps and the session (`nonce` names a branch).
pub fn branch(turns: &[Turn], session: &str, edit: Option<&str>, nonce: &str) -> Result<Branch> {
    let keep = match edit {
        Some(id) => keep_for_edit(turns, id)?,
        None => keep_for_regenerate(turns)?,
    };
    let session = if edit.is_none() && keep == turns.len() {
        session.to_owned()
    } else {
        branch_session(session, nonce)?
    };
    Ok(Branch { keep, session })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turns(v: Value) -> Vec<Turn> {
        Turn::list_from_value(v).unwrap()
    }

    #[test]
    fn results_fold_into_their_calls() {
        let t = turns(json!([
            { "role": "user", "parts": [{ "type": "text", "text": "hi" }], "metadata": { "id": "s/1" } },
            { "role": "assistant", "parts": [{ "type": "text", "text": "Let me look" },
                { "type": "tool-call", "id": "c1", "name": "f", "input": { "a": 1 } },
                { "type": "tool-call", "id": "c2", "name": "g", "input": {} }] },
            { "role": "tool", "parts": [{ "type": "tool-result", "call_id": "c1", "output": { "ok": true } },
                { "type": "tool-result", "call_id": "c2", "output": "no", "is_error": true }] },
            { "role": "tool", "parts": [{ "type": "tool-result", "call_id": "zz", "output": "lost" }] },
        ]));
        let v: Vec<Value> = serde_json::from_str(&view(&t, 0)).unwrap();
        let part = |from: usize, to: usize| -> Vec<Value> {
            serde_json::from_str(&view(&t[from..to], from)).unwrap()
        };
        assert_eq!(v.len(), 3);
        assert_eq!(v[0]["id"], "s/1");
        assert_eq!(v[1]["id"], "turn-1");
        assert_eq!(v[1]["parts"][1]["state"], "output-available");
        assert_eq!(v[1]["parts"][1]["output"], json!({ "ok": true }));
        assert_eq!(v[1]["parts"][2]["state"], "output-error");
        assert_eq!(v[1]["parts"][2]["error"], "no");
        assert_eq!(v[2]["role"], "tool");
        assert_eq!(v[2]["turn"], 3);
        // Appended one at a time: the tool turn with the assistant turn before it is one
        // message, which replaces the one shown; a tool turn answering no call of it is not.
        assert_eq!(part(1, 3), v[1..2]);
        assert_eq!(part(3, 4), v[2..]);
    }

    #[test]
    fn regenerate_and_edit_keep_the_turns_before() {
        let t = turns(json!([
            { "role": "user", "parts": [{ "type": "text", "text": "a" }], "metadata": { "id": "s/1" } },
            { "role": "assistant", "parts": [{ "type": "text", "text": "b" }], "metadata": { "id": "s/2" } },
            { "role": "user", "parts": [{ "type": "text", "text": "c" }], "metadata": { "id": "s/3" } },
            { "role": "assistant", "parts": [{ "type": "text", "text": "d" }], "metadata": { "id": "s/4", "cut": true } },
        ]));
        assert_eq!(keep_for_regenerate(&t).unwrap(), 3);
        assert_eq!(keep_for_regenerate(&t[..3]).unwrap(), 3);
        assert_eq!(keep_for_edit(&t, "s/3").unwrap(), 2);
        assert_eq!(
            keep_for_edit(&t, "s/2").unwrap_err().kind(),
            ErrorKind::InvalidRequest
        );
        assert_eq!(
            keep_for_edit(&t, "s/9").unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            keep_for_regenerate(&t[1..2]).unwrap_err().kind(),
            ErrorKind::InvalidRequest
        );
        let v: Vec<Value> = serde_json::from_str(&view(&t, 0)).unwrap();
        assert_eq!(v[3]["status"], "cut");
        let b = branch(&t, "s", None, "n1").unwrap();
        assert_eq!((b.keep, b.session.as_str()), (3, "s~n1"));
        let b = branch(&t[..3], "s", None, "n1").unwrap();
        assert_eq!((b.keep, b.session.as_str()), (3, "s"));
        let b = branch(&t, "s~n1", Some("s/1"), "n2").unwrap();
        assert_eq!((b.keep, b.session.as_str()), (0, "s~n2"));
    }

    #[test]
    fn branches_stay_one_level_deep() {
        assert_eq!(branch_session("chat", "a1").unwrap(), "chat~a1");
        assert_eq!(branch_session("chat~a1", "b2").unwrap(), "chat~b2");
        assert!(branch_session("chat", "").is_err());
        assert!(branch_session("chat", "x~y").is_err());
    }
}
