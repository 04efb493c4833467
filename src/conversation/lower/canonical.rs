//! The conversation in canonical order: tool results placed after their calls (moved,
//! merged, or made up when missing), orphans dropped, each repair reported.

use super::*;

/// A tool result placed after its call: every result part given for it, in order.
pub(super) struct Placed<'a> {
    pub(super) id: &'a str,
    pub(super) name: &'a str,
    pub(super) content: Vec<&'a RBlock>,
    pub(super) is_error: bool,
    pub(super) missing: bool,
    /// The fragment written with the result's turn, when it is the call's only result.
    pub(super) frag: Option<&'a str>,
    /// The last turn a result came from (the call's turn while it has none).
    pub(super) src: usize,
    /// The call's kind, when it is not a function call.
    pub(super) kind: Option<&'a str>,
}

/// The conversation in a provider-neutral order: results right after their calls.
pub(super) enum Seg<'a> {
    System {
        text: &'a str,
        lit: &'a str,
        developer: bool,
        turn: usize,
    },
    User {
        items: &'a [Item],
        turn: usize,
    },
    Note {
        text: String,
        turn: usize,
    },
    Assistant {
        items: &'a [Item],
        turn: usize,
    },
    Results {
        results: Vec<Placed<'a>>,
        turn: usize,
        /// The last turn its results came from.
        src: usize,
    },
}

/// Puts the turns in an order every provider accepts: each call's results right after the
/// assistant turn that made it, missing results added, orphan results turned into text.
pub(super) fn canonical<'a>(
    turns: &'a [&'a LoweredTurn],
    repairs: &mut Vec<Repair>,
    from: usize,
    prefix: Option<&HashMap<String, usize>>,
) -> Result<Option<Canon<'a>>> {
    // A call of a kept turn (those before `from`).
    let kept = |id: &str| prefix.is_some_and(|p| p.get(id).is_some_and(|t| *t < from));
    let mut segs: Vec<Seg<'a>> = Vec::with_capacity(turns.len().saturating_sub(from) + 4);
    // call id → (segment of its assistant turn, turn, index among the turn's calls)
    let mut calls: HashMap<&'a str, (usize, usize, usize)> = HashMap::new();
    // segment → the results of its calls
    let mut placed: Vec<Option<Vec<Placed<'a>>>> = Vec::new();
    let mut leading = true;
    for (t, lt) in turns.iter().enumerate().skip(from) {
        let items = lt.items.as_slice();
        if items.is_empty() {
            // An empty tool turn has nothing to answer; a turn a fit left out is reported there.
            if !matches!(lt.report.role, "tool" | "left-out") {
                repairs.push(Repair {
                    turn: t,
                    part: None,
                    code: "EmptyTurn",
                    message: format!(
                        "the {} turn has nothing to send; it is left out",
                        lt.report.role
                    ),
                });
            }
            continue;
        }
        match lt.report.role {
            "system" | "developer" => {
                for it in items {
                    if let Item::System {
                        text,
                        lit,
                        developer,
                    } = it
                    {
                        segs.push(Seg::System {
                            text,
                            lit,
                            developer: *developer,
                            turn: t,
                        });
                    }
                }
            }
            "user" => {
                leading = false;
                segs.push(Seg::User { items, turn: t });
            }
            "assistant" => {
                leading = false;
                let seg = segs.len();
                let mut results = Vec::new();
                for it in items {
                    if let Item::Call {
                        id,
                        name,
                        part,
                        kind,
                        ..
                    } = it
                    {
                        if kept(id) {
                            return Ok(None);
                        }
                        if let Some(&(_, first, _)) = calls.get(id.as_str()) {
                            return Err(Error::new(
                                ErrorKind::InvalidMessage,
                                format!(
                                    "tool call id `{id}` is used twice (first in turns[{first}])"
                                ),
                            )
                            .at(format!("turns[{t}].parts[{part}].id")));
                        }
                        calls.insert(id, (seg, t, results.len()));
                        results.push(Placed {
                            id,
                            name,
                            content: Vec::new(),
                            is_error: false,
                            missing: true,
                            frag: None,
                            src: t,
                            kind: kind.as_deref(),
                        });
                    }
                }
                segs.push(Seg::Assistant { items, turn: t });
                if !results.is_empty() {
                    placed.resize_with(seg + 1, || None);
                    if let Some(slot) = placed.get_mut(seg) {
                        *slot = Some(results);
                    }
                }
            }
            _ => {
                for it in items {
                    let Item::Result {
                        call_id,
                        name,
                        is_error,
                        content,
                        part,
                        frag,
                    } = it
                    else {
                        continue;
                    };
                    match calls.get(call_id.as_str()) {
                        Some(&(seg, call_turn, k)) => {
                            let Some(r) = placed
                                .get_mut(seg)
                                .and_then(Option::as_mut)
                                .and_then(|v| v.get_mut(k))
                            else {
                                continue;
                            };
                            if !r.missing {
                                repairs.push(Repair {
                                    turn: t,
                                    part: Some(*part),
                                    code: "ToolResultsMerged",
                                    message: format!("call `{call_id}` has several results; they are sent as one"),
                                });
                            } else if turns[call_turn + 1..t]
                                .iter()
                                .any(|x| x.report.role != "tool" && !x.items.is_empty())
                            {
                                repairs.push(Repair {
                                    turn: t,
                                    part: Some(*part),
                                    code: "ToolResultMoved",
                                    message: format!("the result of call `{call_id}` is sent right after the call (turns came between them)"),
                                });
                            }
                            // One result: its own fragment (Gemini's only under the call's
                            // name); more: written here, merged.
                            // A call of a kind: written for the kind, here.
                            r.frag = if r.missing
                                && r.kind.is_none()
                                && (name.is_none() || name.as_deref() == Some(r.name))
                            {
                                frag.as_deref()
                            } else {
                                None
                            };
                            r.missing = false;
                            r.src = t;
                            r.is_error |= *is_error;
                            r.content.extend(content.iter());
                        }
                        None if kept(call_id) => {
                            // It answers a call the kept messages hold: start over.
                            return Ok(None);
                        }
                        None => {
                            repairs.push(Repair {
                                turn: t,
                                part: Some(*part),
                                code: "OrphanToolResult",
                                message: format!("no earlier tool call has id `{call_id}`; the result is sent as user text"),
                            });
                            let mut text = String::new();
                            for c in content {
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                match c {
                                    RBlock::Text(x) | RBlock::Json(x) => text.push_str(x),
                                    RBlock::Native(_) => text.push_str("[media]"),
                                }
                            }
                            let mut attrs = vec![("call_id", call_id.clone())];
                            if let Some(n) = name {
                                attrs.push(("name", n.clone()));
                            }
                            if *is_error {
                                attrs.push(("is_error", "true".into()));
                            }
                            segs.push(Seg::Note {
                                text: render::descriptor("tool_result", &attrs, &text),
                                turn: t,
                            });
                            leading = false;
                        }
                    }
                }
            }
        }
        let _ = leading;
    }
    // Results go right after their assistant turn.
    let mut first_open = None;
    let mut out = Vec::with_capacity(segs.len() + placed.len());
    for (k, seg) in segs.into_iter().enumerate() {
        let turn = match &seg {
            Seg::Assistant { turn, .. } => Some(*turn),
            _ => None,
        };
        out.push(seg);
        if let (Some(turn), Some(results)) = (turn, placed.get_mut(k).and_then(Option::take)) {
            for r in results.iter().filter(|r| r.missing) {
                first_open = first_open.or(Some(turn));
                repairs.push(Repair {
                    turn,
                    part: None,
                    code: "MissingToolResult",
                    message: format!(
                        "tool call `{}` has no result; \"{MISSING_RESULT}\" is sent as an error result",
                        r.id
                    ),
                });
            }
            let src = results.iter().map(|r| r.src).max().unwrap_or(turn);
            out.push(Seg::Results { results, turn, src });
        }
    }
    Ok(Some(Canon {
        segs: out,
        first_open,
    }))
}

/// The conversation in order ([`canonical`]).
pub(super) struct Canon<'a> {
    pub(super) segs: Vec<Seg<'a>>,
    /// The first assistant turn with a call that has no result.
    pub(super) first_open: Option<usize>,
}

pub(super) static MISSING_BLOCK: RBlock = RBlock::Text(String::new());

pub(super) fn result_blocks<'a>(r: &'a Placed<'a>) -> (Vec<&'a RBlock>, bool) {
    if r.missing {
        (vec![&MISSING_BLOCK], true)
    } else {
        (r.content.clone(), r.is_error)
    }
}
