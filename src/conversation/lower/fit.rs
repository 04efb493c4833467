//! Context fit: an estimate of how many tokens a conversation's request holds, and, when
//! the caller asks (`fit: { reserve?, strategy? }`), the oldest turns left out so that the
//! request fits the model's context window with room for the answer.
//!
//! The estimate reads the lowered JSON of each turn (no tokenizer: nothing is downloaded at
//! run time): ASCII text at four bytes a token, a character of two UTF-8 bytes at half a
//! token, a wider one (CJK, emoji) at one token, and a run of 1,024 or more base64
//! characters (inline media) at [`MEDIA_TOKENS`]. Its error against real tokenizers is
//! measured by `bench/token-estimate.mjs` (the table in BENCHMARKS.md).
//!
//! What is left out: whole turns, oldest first, up to a user turn (so a tool call and its
//! results stay together and no turn is cut in half). System and developer turns are kept.
//! With `strategy: 'mark'` the last turn left out is replaced by a short user note saying
//! how many turns were left out (where a host would put a summary). Each turn left out is
//! a `TurnDropped` repair; the request's estimate, the window and the budget are the
//! report's `fit`.

use super::{lower_turn, Item, LoweredTurn, TurnCx};
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::lower::{Capabilities, NoResolver};
use crate::message::{Part, UserMessage};
use crate::turn::Turn;
use serde::Serialize;
use serde_json::Value;

/// The tokens counted for one inline media block (an image at Anthropic's largest size;
/// OpenAI and Gemini count fewer).
pub const MEDIA_TOKENS: u64 = 1_600;

/// A run of base64 characters at least this long is inline media, not text.
const MEDIA_RUN: usize = 1_024;

/// How the oldest turns make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Left out.
    Drop,
    /// Left out, and a note in their place saying so.
    Mark,
}

/// The caller's `fit` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// Tokens kept free for the answer (default: the `maxOutputTokens` setting, else the
    /// model's largest output).
    pub reserve: Option<u64>,
    /// How the oldest turns make room (default [`Strategy::Drop`]).
    pub strategy: Strategy,
    /// The first user turn (the task, as the user first put it) is kept too.
    pub keep_first: bool,
}

impl Fit {
    /// Parses `true` or `{ reserve?, strategy?: 'drop' | 'mark', keepFirst? }` (`false` /
    /// null: none).
    pub fn from_value(v: Value) -> Result<Option<Fit>> {
        let mut o = match v {
            Value::Null | Value::Bool(false) => return Ok(None),
            Value::Bool(true) => serde_json::Map::new(),
            Value::Object(o) => o,
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "`fit` must be true or an object { reserve?, strategy?: 'drop' | 'mark', keepFirst? }",
                )
                .at("fit"))
            }
        };
        let mut f = Fields::new(&mut o, "fit", ErrorKind::InvalidOptions);
        let reserve = f.opt_u64("reserve")?;
        let strategy = match f.opt_string("strategy")?.as_deref() {
            None | Some("drop") => Strategy::Drop,
            Some("mark") => Strategy::Mark,
            Some(_) => return Err(f.error("strategy", "`fit.strategy` must be 'drop' or 'mark'")),
        };
        let keep_first = f.opt_bool("keepFirst")?.unwrap_or(false);
        if let Some(k) = f.leftover() {
            return Err(Error::new(ErrorKind::InvalidOptions, "unknown fit option")
                .at(format!("fit.{k}"))
                .with("known", "reserve, strategy, keepFirst"));
        }
        Ok(Some(Fit {
            reserve,
            strategy,
            keep_first,
        }))
    }
}

/// What the fit found (the conversation report's `fit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FitReport {
    /// The model's context window, in tokens.
    pub window: u64,
    /// The most the request may hold: the window less the reserve.
    pub budget: u64,
    /// The estimated tokens of the request sent (after any turns were left out).
    pub tokens: u64,
    /// The estimated tokens of the whole conversation.
    pub before: u64,
    /// The turns left out, oldest first.
    pub dropped: Vec<usize>,
    /// Whether a note stands in for them (`strategy: 'mark'`).
    pub marked: bool,
}

/// Estimated tokens of `text` (see the module's note).
#[inline(never)]
pub fn estimate(text: &str) -> u64 {
    let b = text.as_bytes();
    let (mut ascii, mut wide2, mut wide, mut media) = (0u64, 0u64, 0u64, 0u64);
    let mut run = 0usize;
    for &c in b {
        if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' {
            run += 1;
        } else {
            if run >= MEDIA_RUN {
                media += 1;
                ascii -= run as u64;
            }
            run = 0;
        }
        match c {
            0..=0x7f => ascii += 1,
            0xc0..=0xdf => wide2 += 1,
            0xe0..=0xff => wide += 1,
            _ => {}
        }
    }
    if run >= MEDIA_RUN {
        media += 1;
        ascii -= run as u64;
    }
    ascii.div_ceil(4) + wide2.div_ceil(2) + wide + media * MEDIA_TOKENS
}

/// Estimated tokens of one lowered turn (its blocks as written for the provider).
pub(crate) fn turn_tokens(t: &LoweredTurn) -> u64 {
    *t.tokens.get_or_init(|| {
        let mut n = 0;
        for i in &t.items {
            // A block's framing: about four tokens.
            n += 4;
            match i {
                Item::User { json, .. } | Item::Other { json } => n += estimate(json),
                Item::Text { lit, .. } | Item::System { lit, .. } => n += estimate(lit),
                Item::Call { name, json, .. } => n += estimate(name) + estimate(json),
                Item::Result { content, .. } => {
                    for b in content {
                        let (crate::provider::ResultBlock::Text(s)
                        | crate::provider::ResultBlock::Json(s)
                        | crate::provider::ResultBlock::Native(s)) = b;
                        n += estimate(s);
                    }
                }
            }
        }
        n
    })
}

/// What a fitted lowering leaves out (the turns before a user turn, system turns kept),
/// and the note standing in for them.
pub(crate) struct Plan {
    /// The empty stand-in of each turn left out.
    pub(crate) gone: LoweredTurn,
    pub(crate) marker: Option<LoweredTurn>,
    pub(crate) report: FitReport,
    /// The turns left out, as repairs.
    pub(crate) dropped: Vec<usize>,
}

/// The fit of `turns` under `options` (none when `fit` is not asked for).
pub(crate) fn plan(
    turns: &[&LoweredTurn],
    options: &super::ConversationOptions,
    caps: &Capabilities,
) -> Result<Option<Plan>> {
    let Some(fit) = &options.fit else {
        return Ok(None);
    };
    let opts = &options.lower;
    let spec = opts.provider.spec();
    let row = crate::settings::row_of(&opts.settings, spec.family)?;
    let Some(row) = row.filter(|r| r.context_window > 0) else {
        return Err(Error::new(
            ErrorKind::InvalidOptions,
            "`fit` needs the model's context window: name a model the table knows, or describe it with `modelInfo: { contextWindow }`",
        )
        .at("fit"));
    };
    let window = u64::from(row.context_window);
    let reserve = fit.reserve.unwrap_or_else(|| {
        opts.settings
            .get(crate::settings::Simple::MaxOutputTokens)
            .and_then(Value::as_u64)
            .unwrap_or(u64::from(row.max_output_tokens))
    });
    let budget = window.saturating_sub(reserve);
    let head = opts.system.as_deref().map_or(0, estimate)
        + opts
            .tools
            .iter()
            .map(|t| {
                estimate(&t.name)
                    + t.description.as_deref().map_or(0, estimate)
                    + estimate(&t.parameters.to_string())
                    + 8
            })
            .sum::<u64>();
    let per: Vec<u64> = turns.iter().map(|t| turn_tokens(t)).collect();
    let before = head + per.iter().sum::<u64>();
    // The first user turn, when the caller keeps it: counted, like system turns, whatever
    // the cut.
    let first = fit
        .keep_first
        .then(|| turns.iter().position(|t| t.report.role == "user"))
        .flatten();
    let system = |t: &LoweredTurn| matches!(t.report.role, "system" | "developer");
    let kept = |i: usize, t: &LoweredTurn| system(t) || Some(i) == first;
    let mut report = FitReport {
        window,
        budget,
        tokens: before,
        before,
        dropped: Vec::new(),
        marked: false,
    };
    if before <= budget {
        return Ok(Some(Plan {
            gone: LoweredTurn::left_out(),
            marker: None,
            report,
            dropped: Vec::new(),
        }));
    }
    // The smallest cut at a user turn that fits: system turns always count.
    let kept_system: u64 = turns
        .iter()
        .zip(&per)
        .enumerate()
        .filter(|(i, (t, _))| kept(*i, t))
        .map(|(_, (_, n))| n)
        .sum();
    let mut suffix = 0u64; // the non-system turns from `cut` on
    let mut best = None;
    let mark = fit.strategy == Strategy::Mark;
    let lowest = first.map_or(1, |f| f + 1);
    for cut in (lowest..turns.len()).rev() {
        let Some((t, n)) = turns.get(cut).zip(per.get(cut)) else {
            break;
        };
        if !kept(cut, t) {
            suffix += n;
        }
        if t.report.role != "user" {
            continue;
        }
        let note = if mark { 24 } else { 0 };
        let total = head + kept_system + suffix + note;
        // Every earlier cut keeps more: the first that does not fit ends the search.
        if total > budget {
            break;
        }
        best = Some((cut, total));
    }
    let Some((cut, total)) = best else {
        return Err(Error::new(
            ErrorKind::ContextTooLong,
            "the conversation does not fit the model's context window even from its last user turn on",
        )
        .with("tokens", before)
        .with("budget", budget)
        .at("fit"));
    };
    let dropped: Vec<usize> = (0..cut)
        .filter(|i| turns.get(*i).is_some_and(|t| !kept(*i, t)))
        .collect();
    let marker = if mark && !dropped.is_empty() {
        let text = format!(
            "[{} earlier turn{} of this conversation were left out to fit the context window.]",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" }
        );
        let turn = Turn::User(UserMessage::new(vec![Part::Text { text }]));
        let cx = TurnCx {
            provider: opts.provider,
            caps,
            mode: crate::body::SlotMode::Forbid,
            keep_reasoning: false,
            details: false,
        };
        Some(lower_turn(&turn, &NoResolver, &cx)?)
    } else {
        None
    };
    report.tokens = total;
    report.dropped.clone_from(&dropped);
    report.marked = marker.is_some();
    Ok(Some(Plan {
        gone: LoweredTurn::left_out(),
        marker,
        report,
        dropped,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_text_by_script_and_media_as_a_block() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
        // Two-byte characters (Cyrillic) at half a token, wider ones (CJK) at one.
        assert_eq!(estimate("привет"), 3);
        assert_eq!(estimate("你好世界"), 4);
        // A long base64 run is one media block, whatever its length.
        let img = "A".repeat(MEDIA_RUN * 3);
        assert_eq!(
            estimate(&format!("{{\"data\":\"{img}\"}}")),
            MEDIA_TOKENS + 3
        );
        // Text of ordinary words never makes a run that long.
        let words = "word ".repeat(1000);
        assert_eq!(estimate(&words), 1250);
    }

    #[test]
    fn fit_option_shapes() {
        assert_eq!(Fit::from_value(Value::Bool(false)).ok(), Some(None));
        let on = Fit::from_value(Value::Bool(true)).ok().flatten();
        assert_eq!(
            on.map(|f| (f.reserve, f.strategy)),
            Some((None, Strategy::Drop))
        );
        let v = serde_json::json!({ "reserve": 10, "strategy": "mark", "keepFirst": true });
        let f = Fit::from_value(v).ok().flatten();
        assert_eq!(
            f.map(|f| (f.reserve, f.strategy, f.keep_first)),
            Some((Some(10), Strategy::Mark, true))
        );
        for bad in [
            serde_json::json!(3),
            serde_json::json!({ "reserve": -1 }),
            serde_json::json!({ "x": 1 }),
        ] {
            assert!(Fit::from_value(bad).is_err());
        }
    }
}
