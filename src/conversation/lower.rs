//! Lowering a conversation: each turn to provider fragments (cacheable: they depend only
//! on the turn, the provider, the capability table and the resolver's answers), then one
//! assembly pass that places tool results after their calls, merges roles where the
//! provider requires alternation, repairs what the provider would reject and places cache
//! breakpoints.
//!
//! | rule | Anthropic | OpenAI Chat | OpenAI Responses | Gemini |
//! |---|---|---|---|---|
//! | assistant text | `text` block | `content` | `{role: assistant, content}` item | `{text}` in a `model` turn |
//! | reasoning | `thinking` / `redacted_thinking` (own signature only) | dropped | `reasoning` item (own id or encrypted content) | `thought` part with `thoughtSignature` |
//! | tool call | `tool_use` | `tool_calls[]` | `function_call` item | `functionCall` part |
//! | tool result | `tool_result` first in the next user turn | one `role: tool` message each | `function_call_output` item | one `functionResponse` per call, first in the next user turn |
//! | system turn, leading | `system` | `system` / `developer` message | `system` / `developer` item | `systemInstruction` |
//! | system turn, later | user text `<system_instruction>` (reported) | in place | in place | user text (reported) |
//! | same role twice | merged (reported) | kept | kept | merged (reported) |

use crate::body::{self as json, s, Json, SlotMode};
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::json_text::JsonText;
use crate::lower::render;
use crate::lower::report::{BlockNote, DropNote, Warning};
use crate::lower::{
    part_blocks, Block, Capabilities, LowerOptions, NoResolver, Provider, Resolver,
};
use crate::provider::ids::provider_id;
use crate::provider::{is_own, Layout, ResultBlock as RBlock, MISSING_RESULT};
use crate::turn::{AssistantPart, Reasoning, ToolCall, ToolOutput, ToolPart, ToolResult, Turn};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

/// Prompt caching.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CacheOptions {
    /// Place Anthropic `cache_control` breakpoints (at most 4: tools or system, and the last
    /// two user turns).
    pub breakpoints: bool,
    /// Anthropic's cache lifetime (`5m` or `1h`); the provider's default when absent.
    pub ttl: Option<String>,
    /// OpenAI `prompt_cache_key` (Chat and Responses).
    pub key: Option<String>,
}

/// What to lower a conversation to.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationOptions {
    /// The provider, system prompt, tools, capability override and params, as for one
    /// message.
    pub lower: LowerOptions,
    /// Prompt caching; none when absent.
    pub cache: CacheOptions,
}

impl ConversationOptions {
    /// Options for `provider` with nothing else.
    pub fn new(provider: Provider) -> Self {
        ConversationOptions {
            lower: LowerOptions::new(provider),
            cache: CacheOptions::default(),
        }
    }

    /// Parses `{ provider, system?, tools?, capabilities?, params?, cache? }`; `cache` is
    /// `true` or `{ breakpoints?, ttl?, key? }`.
    pub fn from_value(value: Value) -> Result<ConversationOptions> {
        let Value::Object(mut o) = value else {
            return Err(Error::new(ErrorKind::InvalidOptions, "options must be an object").at("$"));
        };
        let cache = match o.remove("cache") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => CacheOptions::default(),
            Some(Value::Bool(true)) => CacheOptions {
                breakpoints: true,
                ..CacheOptions::default()
            },
            Some(Value::Object(mut c)) => {
                let mut f = Fields::new(&mut c, "cache", ErrorKind::InvalidOptions);
                let breakpoints = f.opt_bool("breakpoints")?.unwrap_or(true);
                let ttl = f.opt_string("ttl")?;
                if let Some(t) = &ttl {
                    if t != "5m" && t != "1h" {
                        return Err(f.error("ttl", "cache.ttl must be \"5m\" or \"1h\""));
                    }
                }
                let key = f.opt_string("key")?;
                if let Some(k) = f.leftover() {
                    return Err(
                        Error::new(ErrorKind::InvalidOptions, "unknown cache option")
                            .at(format!("cache.{k}"))
                            .with("known", "breakpoints, ttl, key"),
                    );
                }
                CacheOptions {
                    breakpoints,
                    ttl,
                    key,
                }
            }
            Some(_) => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "`cache` must be true, false or an object { breakpoints?, ttl?, key? }",
                )
                .at("cache"))
            }
        };
        let lower = LowerOptions::from_value(Value::Object(o)).map_err(|e| {
            if e.message() == "unknown option" {
                e.with(
                    "known",
                    "provider, system, tools, capabilities, params, cache",
                )
            } else {
                e
            }
        })?;
        Ok(ConversationOptions { lower, cache })
    }
}

/// One output block of a turn, written for the provider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// A user-role content block; `lit`, the JSON string literal, when it is plain text.
    User { json: String, lit: Option<String> },
    /// Visible assistant text, and its JSON string literal (escaped once, when lowered).
    Text { text: String, lit: String },
    /// Another assistant block (reasoning), written for the provider.
    Other { json: String },
    /// A tool call: the original id, the tool name and the provider fragment.
    Call {
        id: String,
        name: String,
        json: String,
        part: usize,
    },
    /// A tool result.
    Result {
        call_id: String,
        name: Option<String>,
        is_error: bool,
        content: Vec<RBlock>,
        part: usize,
        /// The provider fragment when this result is its call's only one (for Gemini:
        /// written with its own name, used when the call has that name).
        frag: Option<String>,
    },
    /// Instructions, and their JSON string literal.
    System {
        text: String,
        lit: String,
        developer: bool,
    },
}

/// How each part of one turn was lowered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TurnReport {
    /// `user`, `assistant`, `tool`, `system` or `developer`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "'system' | 'developer' | 'user' | 'assistant' | 'tool'")
    )]
    pub role: &'static str,
    /// One note per output block, in order.
    pub blocks: Vec<BlockNote>,
    /// Parts that produced no block.
    pub dropped: Vec<DropNote>,
    /// Fallbacks and adjustments.
    pub warnings: Vec<Warning>,
}

/// A turn lowered for one provider (what the conversation cache keeps).
#[derive(Debug, Clone, PartialEq)]
pub struct LoweredTurn {
    pub(crate) items: Vec<Item>,
    /// How it was lowered (shared: every report of a conversation refers to it).
    pub report: Rc<TurnReport>,
    /// Host slots the core must read whole before it can lower this turn.
    pub(crate) needs: Vec<u32>,
}

impl LoweredTurn {
    /// About how many bytes the turn holds (for the cache's bound).
    pub fn weight(&self) -> usize {
        let items: usize = self
            .items
            .iter()
            .map(|i| match i {
                Item::User { json, lit } => json.len() + lit.as_ref().map_or(0, String::len),
                Item::Text { text, lit } => text.len() + lit.len(),
                Item::Other { json } => json.len(),
                Item::Call { id, name, json, .. } => id.len() + name.len() + json.len(),
                Item::Result {
                    call_id,
                    content,
                    frag,
                    ..
                } => {
                    call_id.len()
                        + frag.as_ref().map_or(0, String::len)
                        + content
                            .iter()
                            .map(|b| match b {
                                RBlock::Text(t) | RBlock::Json(t) | RBlock::Native(t) => t.len(),
                            })
                            .sum::<usize>()
                }
                Item::System { text, lit, .. } => text.len() + lit.len(),
            } + 48)
            .sum();
        items
            + 64 * (self.report.blocks.len()
                + self.report.dropped.len()
                + self.report.warnings.len())
    }
}

/// A change made so that the provider accepts the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Repair {
    /// The turn it concerns.
    pub turn: usize,
    /// The part, when one part is concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub part: Option<usize>,
    /// A stable code: `MissingToolResult`, `OrphanToolResult`, `ToolResultMoved`,
    /// `ToolResultsMerged`, `SystemAsUser`, `TurnsMerged`, `EmptyTurn`,
    /// `TrailingWhitespace`, `ErrorFlagNotCarried`.
    #[cfg_attr(feature = "ts", ts(type = "RepairCode"))]
    pub code: &'static str,
    /// What was done, for a person.
    pub message: String,
}

/// A tool call id sent in another form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IdMapping {
    /// The id in the conversation.
    pub from: String,
    /// The id in the body.
    pub to: String,
}

/// Where the body's cacheable prefix ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CacheReport {
    /// Anthropic `cache_control` breakpoints placed (`tools`, `system`, `messages[3]`).
    pub breakpoints: Vec<String>,
    /// The bytes of the body before its last message: what a previous request of the same
    /// conversation sent identically (provider prefix caches hit on it).
    pub prefix_bytes: usize,
}

/// Everything the conversation lowering decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConversationReport {
    /// The target.
    #[cfg_attr(feature = "ts", ts(type = "Provider"))]
    pub provider: &'static str,
    /// One report per input turn.
    #[cfg_attr(feature = "ts", ts(as = "Vec<TurnReport>"))]
    pub turns: Vec<Rc<TurnReport>>,
    /// Changes made so that the provider accepts the conversation.
    pub repairs: Vec<Repair>,
    /// Tool call ids sent in another form (map the provider's answers back with these).
    pub ids: Vec<IdMapping>,
    /// Option-level warnings (tool schemas).
    pub warnings: Vec<Warning>,
    /// Prompt caching.
    pub cache: CacheReport,
}

impl ConversationReport {
    /// The report as JSON text.
    pub fn to_json(&self) -> String {
        crate::json_text::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

/// A lowered conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct LoweredConversation {
    /// The request body, ready to send.
    pub body: String,
    /// Every decision made.
    pub report: ConversationReport,
}

/// What the provider-independent parts of turn lowering need.
pub(crate) struct TurnCx<'c> {
    pub(crate) provider: Provider,
    pub(crate) caps: &'c Capabilities,
    pub(crate) mode: SlotMode,
}

/// The JSON string literal of `t` (quotes included). Writing a string cannot fail.
fn lit(t: &str) -> String {
    crate::json_text::to_string(t).unwrap_or_else(|_| String::from("\"\""))
}

fn write(j: &Json<'_>, mode: SlotMode) -> Result<String> {
    json::write(j, mode)
}

/// Lowers one turn for the provider (no cross-turn context: the result is cacheable).
pub(crate) fn lower_turn(
    turn: &Turn,
    resolver: &dyn Resolver,
    cx: &TurnCx<'_>,
) -> Result<LoweredTurn> {
    let p = cx.provider;
    let mut report = TurnReport {
        role: turn.role(),
        blocks: Vec::new(),
        dropped: Vec::new(),
        warnings: Vec::new(),
    };
    let mut items = Vec::new();
    let mut needs = Vec::new();
    let note = |report: &mut TurnReport, part: usize, rule: &str| {
        report.blocks.push(BlockNote {
            part,
            rule: rule.to_owned(),
            mime: None,
        })
    };
    let drop = |report: &mut TurnReport, part: usize, rule: &str, reason: String| {
        report.dropped.push(DropNote {
            part,
            rule: rule.to_owned(),
            reason,
        })
    };
    match turn {
        Turn::System(st) => {
            if st.text.trim().is_empty() {
                drop(
                    &mut report,
                    0,
                    "system-empty",
                    "an empty instruction is not sent".into(),
                );
            } else {
                note(&mut report, 0, "system");
                items.push(Item::System {
                    text: st.text.clone(),
                    lit: lit(&st.text),
                    developer: st.developer,
                });
            }
        }
        Turn::User(m) => {
            let (blocks, r, n) = part_blocks(&m.parts, p, cx.caps, resolver)?;
            needs = n;
            report.dropped = r.dropped;
            report.warnings = r.warnings;
            for (b, bn) in blocks.into_iter().zip(r.blocks) {
                let text = match &b {
                    Block::Text(t) => Some(lit(t)),
                    _ => None,
                };
                let j = block_json(p, b, cx.caps.text_documents);
                items.push(Item::User {
                    json: write(&j, cx.mode)?,
                    lit: text,
                });
                report.blocks.push(bn);
            }
        }
        Turn::Assistant(a) => {
            for (i, part) in a.parts.iter().enumerate() {
                match part {
                    AssistantPart::Text(t) => {
                        if t.trim().is_empty() {
                            drop(&mut report, i, "text-empty", "empty or white-space-only assistant text is not sent (providers reject it)".into());
                        } else {
                            note(&mut report, i, "text");
                            items.push(Item::Text {
                                text: t.clone(),
                                lit: lit(t),
                            });
                        }
                    }
                    AssistantPart::Reasoning(r) => match reasoning(p, r)? {
                        Ok(json) => {
                            note(&mut report, i, "reasoning");
                            items.push(Item::Other { json });
                        }
                        Err(why) => drop(&mut report, i, "reasoning-dropped", why),
                    },
                    AssistantPart::ToolCall(c) => {
                        let (json, wrapped) = call_json(p, c)?;
                        if wrapped {
                            report.warnings.push(Warning {
                                part: Some(i),
                                code: "ToolInputWrapped",
                                message: format!(
                                    "the input of tool call `{}` is not a JSON object; it is sent as {{\"value\": …}}",
                                    c.id
                                ),
                            });
                        }
                        note(&mut report, i, "tool-call");
                        items.push(Item::Call {
                            id: c.id.clone(),
                            name: c.name.clone(),
                            json,
                            part: i,
                        });
                    }
                    AssistantPart::Unknown(v) => {
                        let ty = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                        match v.get("text").and_then(Value::as_str) {
                            Some(t) if !t.trim().is_empty() => {
                                report.warnings.push(Warning {
                                    part: Some(i),
                                    code: "UnknownPartType",
                                    message: format!(
                                        "part type `{ty}` is unknown; its text is sent"
                                    ),
                                });
                                note(&mut report, i, "unknown-text");
                                items.push(Item::Text {
                                    text: t.to_owned(),
                                    lit: lit(t),
                                });
                            }
                            _ => {
                                report.warnings.push(Warning {
                                    part: Some(i),
                                    code: "UnknownPartType",
                                    message: format!("part type `{ty}` is unknown and has no text; it is not sent"),
                                });
                                drop(
                                    &mut report,
                                    i,
                                    "unknown",
                                    format!("`{ty}` parts have no model view"),
                                );
                            }
                        }
                    }
                }
            }
        }
        Turn::Tool(t) => {
            for (i, part) in t.parts.iter().enumerate() {
                match part {
                    ToolPart::Result(r) => {
                        let content = result_content(p, r, cx, i, &mut report)?;
                        let refs: Vec<&RBlock> = content.iter().collect();
                        let d = p.dialect();
                        let frag = match (&r.name, d.spec().results_by_name) {
                            (None, true) => None,
                            (name, _) => Some(d.result(
                                &r.call_id,
                                name.as_deref().unwrap_or(""),
                                &refs,
                                r.is_error,
                                false,
                            )?),
                        };
                        note(&mut report, i, "tool-result");
                        items.push(Item::Result {
                            call_id: r.call_id.clone(),
                            name: r.name.clone(),
                            is_error: r.is_error,
                            content,
                            part: i,
                            frag,
                        });
                    }
                    ToolPart::Unknown(v) => {
                        let ty = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                        report.warnings.push(Warning {
                            part: Some(i),
                            code: "UnknownPartType",
                            message: format!(
                                "part type `{ty}` in a tool turn is unknown; it is not sent"
                            ),
                        });
                        drop(
                            &mut report,
                            i,
                            "unknown",
                            format!("`{ty}` parts have no model view"),
                        );
                    }
                }
            }
        }
    }
    Ok(LoweredTurn {
        items,
        report: Rc::new(report),
        needs,
    })
}

fn block_json(p: Provider, b: Block<'_>, text_documents: bool) -> Json<'_> {
    p.dialect().block(b, text_documents)
}

/// The provider fragment of a reasoning part, or why it cannot be sent.
fn reasoning(p: Provider, r: &Reasoning) -> Result<std::result::Result<String, String>> {
    match p.dialect().reasoning(r, is_own(p, r.provider.as_deref())) {
        Ok(j) => Ok(Ok(write(&j, SlotMode::Forbid)?)),
        Err(why) => Ok(Err(why)),
    }
}

/// The arguments as an object, and whether a non-object had to be wrapped.
fn call_input(c: &ToolCall) -> (Cow<'_, Value>, bool) {
    match &c.input {
        Value::Object(_) => (Cow::Borrowed(&c.input), false),
        Value::String(t) => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => (Cow::Owned(v), false),
            _ => (Cow::Owned(wrap(c.input.clone())), true),
        },
        other => (Cow::Owned(wrap(other.clone())), true),
    }
}

fn wrap(v: Value) -> Value {
    let mut m = Map::new();
    m.insert("value".into(), v);
    Value::Object(m)
}

fn call_json(p: Provider, c: &ToolCall) -> Result<(String, bool)> {
    let d = p.dialect();
    let id = provider_id(p, &c.id);
    let (input, wrapped) = call_input(c);
    let own = is_own(p, c.provider.as_deref());
    let j = d.call(c, id, input.as_ref(), own);
    // A string the model wrote goes verbatim where arguments travel as text: nothing was
    // wrapped there.
    let wrapped = wrapped && !(c.input.is_string() && d.spec().arguments_as_text);
    Ok((write(&j, SlotMode::Forbid)?, wrapped))
}

fn result_content(
    p: Provider,
    r: &ToolResult,
    cx: &TurnCx<'_>,
    i: usize,
    report: &mut TurnReport,
) -> Result<Vec<RBlock>> {
    Ok(match &r.output {
        ToolOutput::Text(t) => vec![RBlock::Text(t.clone())],
        ToolOutput::Json(v) => vec![RBlock::Json(v.json_text())],
        ToolOutput::Parts(parts) => {
            let (blocks, sub, _) = part_blocks(parts, p, cx.caps, &NoResolver)
                .map_err(|e| e.within(&format!("parts[{i}].output")))?;
            for w in sub.warnings {
                report.warnings.push(Warning {
                    part: Some(i),
                    code: w.code,
                    message: w.message,
                });
            }
            let mut out = Vec::with_capacity(blocks.len());
            for b in blocks {
                match b {
                    Block::Text(t) => out.push(RBlock::Text(t.into_owned())),
                    Block::TextDoc { fenced, .. } => out.push(RBlock::Text(fenced)),
                    Block::Media {
                        class,
                        mime,
                        source,
                        name,
                    } => {
                        let native = p.dialect().native_in_result(class);
                        if native {
                            let b = Block::Media {
                                class,
                                mime,
                                source,
                                name,
                            };
                            out.push(RBlock::Native(write(
                                &block_json(p, b, cx.caps.text_documents),
                                cx.mode,
                            )?));
                        } else {
                            report.warnings.push(Warning {
                                part: Some(i),
                                code: "UnsupportedMedia",
                                message: format!(
                                    "{} takes no {mime} in a tool result; a descriptor is sent",
                                    p.name()
                                ),
                            });
                            let mut attrs = vec![("mime", mime)];
                            if let Some(n) = name {
                                attrs.insert(0, ("name", n));
                            }
                            out.push(RBlock::Text(render::descriptor(
                                "attachment",
                                &attrs,
                                "this tool result holds media the provider does not accept in tool results",
                            )));
                        }
                    }
                }
            }
            if out.is_empty() {
                out.push(RBlock::Text(String::new()));
            }
            out
        }
    })
}

/// A tool result placed after its call: every result part given for it, in order.
struct Placed<'a> {
    id: &'a str,
    name: &'a str,
    content: Vec<&'a RBlock>,
    is_error: bool,
    missing: bool,
    /// The fragment written with the result's turn, when it is the call's only result.
    frag: Option<&'a str>,
    /// The last turn a result came from (the call's turn while it has none).
    src: usize,
}

/// The conversation in a provider-neutral order: results right after their calls.
enum Seg<'a> {
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
fn canonical<'a>(
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
            if lt.report.role != "tool" {
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
                    if let Item::Call { id, name, part, .. } = it {
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
                            r.frag = if r.missing
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
struct Canon<'a> {
    segs: Vec<Seg<'a>>,
    /// The first assistant turn with a call that has no result.
    first_open: Option<usize>,
}

static MISSING_BLOCK: RBlock = RBlock::Text(String::new());

fn result_blocks<'a>(r: &'a Placed<'a>) -> (Vec<&'a RBlock>, bool) {
    if r.missing {
        (vec![&MISSING_BLOCK], true)
    } else {
        (r.content.clone(), r.is_error)
    }
}

/// A message being assembled: a role and its blocks.
struct Msg<'a> {
    role: &'static str,
    blocks: Vec<B<'a>>,
    /// The first turn that contributed.
    turn: usize,
    /// Whether a user turn (not only results or notes) contributed.
    user: bool,
    /// The turn of its first piece (in the conversation's order).
    first: usize,
    /// The turn of its last piece.
    last: usize,
    /// The last turn any of its pieces came from.
    src: usize,
}

/// A block of an assembled message.
enum B<'a> {
    /// Plain text and its JSON literal (written per provider; trimmed when it ends the
    /// conversation).
    Text(Cow<'a, str>, Cow<'a, str>),
    /// A fragment written before; `cacheable` is false for reasoning blocks.
    Raw(Cow<'a, str>, bool),
}

#[allow(clippy::too_many_arguments)]
fn push_block<'a>(
    msgs: &mut Vec<Msg<'a>>,
    role: &'static str,
    turn: usize,
    src: usize,
    user: bool,
    b: B<'a>,
    merge: bool,
    repairs: &mut Vec<Repair>,
) {
    if let Some(last) = msgs.last_mut() {
        if last.role == role && (merge || last.turn == turn) {
            if last.turn != turn && merge && user && last.user {
                repairs.push(Repair {
                    turn,
                    part: None,
                    code: "TurnsMerged",
                    message: format!("two {role} turns in a row are sent as one message"),
                });
                last.turn = turn;
            } else if last.turn != turn && merge && (role == "assistant" || role == "model") {
                repairs.push(Repair {
                    turn,
                    part: None,
                    code: "TurnsMerged",
                    message: "two assistant turns in a row are sent as one message".into(),
                });
                last.turn = turn;
            }
            last.user |= user;
            last.src = last.src.max(src);
            last.last = last.last.max(turn);
            last.blocks.push(b);
            return;
        }
    }
    msgs.push(Msg {
        role,
        blocks: vec![b],
        turn,
        first: turn,
        last: turn,
        src,
        user,
    });
}

/// What one piece of a message was: text that lives as long as the conversation's lowered
/// turns (or the program), known by its address; or text made for this call, known by its
/// bytes. Two messages with the same keys are the same bytes (see [`Assembled::keys`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    /// Address and length of text that does not move while its turn is held.
    At(usize, usize),
    /// Text made for this call.
    Bytes(Box<str>),
}

/// What the previous lowering of the same conversation wrote (its turns still held).
pub(crate) struct Prev<'p> {
    /// The body before its messages array.
    pub(crate) head: &'p str,
    /// Its messages' keys, one after another.
    pub(crate) keys: &'p [Key],
    /// Where each message's keys begin.
    pub(crate) key_starts: &'p [usize],
}

impl Prev<'_> {
    fn message(&self, i: usize) -> Option<&[Key]> {
        let from = *self.key_starts.get(i)?;
        let to = self
            .key_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.keys.len());
        self.keys.get(from..to)
    }
}

/// A piece of the message being probed, kept to be written if it differs after all.
enum Pend<'a> {
    Ref(&'a str),
    Key(usize),
}

/// The messages array being written. While the messages repeat the previous lowering's
/// (same keys, in order) nothing is written, only measured; from the first one that
/// differs, the body is written from the end of the last repeated message on.
struct Out<'a, 'p> {
    /// The body from `base` on.
    buf: String,
    base: usize,
    /// The body's length so far (written or not).
    len: usize,
    prev: Option<Prev<'p>>,
    probing: bool,
    head_len: usize,
    /// Leading messages that repeat the previous lowering's.
    matched: usize,
    starts: Vec<usize>,
    ends: Vec<usize>,
    keys: Vec<Key>,
    key_starts: Vec<usize>,
    pending: Vec<Pend<'a>>,
    /// Messages kept before the first one written here (continuing a lowering).
    before: usize,
    /// Each message's first and last turn, and the last turn its pieces came from.
    msg_first: Vec<usize>,
    msg_last: Vec<usize>,
    msg_src: Vec<usize>,
}

impl<'a, 'p> Out<'a, 'p> {
    fn new(head_pre: &str, prev: Option<Prev<'p>>, capacity: usize, messages: usize) -> Self {
        let probing = prev.as_ref().is_some_and(|p| p.head == head_pre);
        let mut buf = String::with_capacity(if probing { 4096 } else { capacity });
        if !probing {
            buf.push_str(head_pre);
            buf.push('[');
        }
        Out {
            buf,
            base: 0,
            len: head_pre.len() + 1,
            prev: if probing { prev } else { None },
            probing,
            head_len: head_pre.len(),
            matched: 0,
            starts: Vec::with_capacity(messages),
            ends: Vec::with_capacity(messages),
            keys: Vec::with_capacity(4 * messages),
            key_starts: Vec::with_capacity(messages),
            pending: Vec::new(),
            before: 0,
            msg_first: Vec::with_capacity(messages),
            msg_last: Vec::with_capacity(messages),
            msg_src: Vec::with_capacity(messages),
        }
    }

    /// Continues a body whose first `before` messages end at byte `len`.
    fn after(len: usize, before: usize, head_len: usize) -> Self {
        Out {
            buf: String::with_capacity(1024),
            base: len,
            len,
            prev: None,
            probing: false,
            head_len,
            matched: 0,
            starts: Vec::new(),
            ends: Vec::new(),
            keys: Vec::new(),
            key_starts: Vec::new(),
            pending: Vec::new(),
            before,
            msg_first: Vec::new(),
            msg_last: Vec::new(),
            msg_src: Vec::new(),
        }
    }

    /// Ends the open message: while probing, compares it with the previous lowering's.
    fn close(&mut self) {
        let i = self.ends.len();
        if i >= self.starts.len() {
            return;
        }
        self.ends.push(self.len);
        if !self.probing {
            return;
        }
        let from = self.key_starts.get(i).copied().unwrap_or(0);
        let same = match &self.prev {
            Some(p) => p.message(i).is_some() && p.message(i) == self.keys.get(from..),
            None => false,
        };
        if same {
            self.matched += 1;
            self.pending.clear();
            return;
        }
        // The first message that differs: write from the end of the one before it.
        self.probing = false;
        self.base = if i == 0 {
            self.head_len + 1
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0)
        };
        self.buf.clear();
        if i > 0 {
            self.buf.push(',');
        }
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pend::Ref(t) => self.buf.push_str(t),
                Pend::Key(k) => {
                    if let Some(Key::Bytes(b)) = self.keys.get(k) {
                        self.buf.push_str(b);
                    }
                }
            }
        }
    }

    /// Starts a message (the separator before it, and its offset).
    fn begin(&mut self, first: usize, last: usize, src: usize) {
        self.close();
        self.msg_first.push(first);
        self.msg_last.push(last);
        self.msg_src.push(src);
        if !self.starts.is_empty() || self.before > 0 {
            if !self.probing {
                self.buf.push(',');
            }
            self.len += 1;
        }
        self.starts.push(self.len);
        self.key_starts.push(self.keys.len());
    }

    /// Writes text that stays where it is while the lowered turns are held (a cached
    /// fragment, a static string).
    fn held(&mut self, t: &'a str) {
        self.keys.push(Key::At(t.as_ptr() as usize, t.len()));
        self.len += t.len();
        if self.probing {
            self.pending.push(Pend::Ref(t));
        } else {
            self.buf.push_str(t);
        }
    }

    /// Writes text made for this call.
    fn made(&mut self, t: &str) {
        self.keys.push(Key::Bytes(t.into()));
        self.len += t.len();
        if self.probing {
            self.pending.push(Pend::Key(self.keys.len() - 1));
        } else {
            self.buf.push_str(t);
        }
    }

    #[allow(clippy::ptr_arg)] // the variant says which kind of text it is
    fn cow(&mut self, t: &Cow<'a, str>) {
        match t {
            Cow::Borrowed(b) => self.held(b),
            Cow::Owned(o) => self.made(o),
        }
    }

    /// Closes the array and the body; gives where the written part starts, the written
    /// part, and what was recorded.
    fn finish(mut self, head_post: &str) -> (usize, String, Self) {
        self.close();
        if self.probing {
            // Every message repeats the previous lowering: only the end is new.
            self.base = self.ends.last().copied().unwrap_or(self.head_len + 1);
            self.buf.clear();
            self.probing = false;
        }
        self.buf.push(']');
        self.buf.push_str(head_post);
        let buf = std::mem::take(&mut self.buf);
        (self.base, buf, self)
    }
}

/// An assembled body: written whole, or, given the previous lowering, from the end of the
/// messages it repeats.
pub(crate) struct Assembled {
    pub(crate) report: ConversationReport,
    /// Bytes of the previous body this one starts with (0: `tail` is the whole body).
    pub(crate) keep: usize,
    /// The body from `keep` on.
    pub(crate) tail: String,
    /// Leading messages that repeat the previous lowering's.
    pub(crate) matched: usize,
    /// Where each message starts and ends in the body.
    pub(crate) starts: Vec<usize>,
    pub(crate) ends: Vec<usize>,
    /// What each message was made of, one after another (see [`Key`]).
    pub(crate) keys: Vec<Key>,
    /// Where each message's keys begin.
    pub(crate) key_starts: Vec<usize>,
    /// The body before the messages array.
    pub(crate) head: String,
    /// Each message's first and last turn, and the last turn its pieces came from.
    pub(crate) msg_first: Vec<usize>,
    pub(crate) msg_last: Vec<usize>,
    pub(crate) msg_src: Vec<usize>,
    /// The first assistant turn with a call that has no result.
    pub(crate) first_open: Option<usize>,
    /// The calls of every turn assembled here (id → turn), in order.
    pub(crate) calls: Vec<(String, usize)>,
    /// The id mappings, each with the turn of its call.
    pub(crate) id_turns: Vec<usize>,
}

/// Where a lowering continues the previous one: its messages for the turns before `from`
/// stand.
pub(crate) struct Resume<'p> {
    /// The first turn assembled again.
    pub(crate) from: usize,
    /// The messages kept.
    pub(crate) messages: usize,
    /// The body's bytes up to the end of the kept messages.
    pub(crate) len: usize,
    /// The call ids of the turns before `from`.
    pub(crate) calls: &'p HashMap<String, usize>,
    /// The repairs of the turns before `from`.
    pub(crate) repairs: Vec<Repair>,
    /// The id mappings of the calls before `from`.
    pub(crate) ids: Vec<IdMapping>,
    /// Where the last kept message starts.
    pub(crate) last_start: usize,
}

/// Lowers the lowered turns into one request body. `size_hint` is the size of the body
/// expected (the previous one's), to write it without growing the buffer.
pub(crate) fn assemble(
    turns: &[&LoweredTurn],
    options: &ConversationOptions,
    size_hint: usize,
    prev: Option<Prev<'_>>,
    head_memo: Option<&mut Option<Head>>,
    resume: Option<Resume<'_>>,
) -> Result<Option<Assembled>> {
    let opts = &options.lower;
    let p = opts.provider;
    let d = p.dialect();
    let layout = d.spec().layout;
    let (mut repairs, mut ids, from) = match &resume {
        Some(r) => (r.repairs.clone(), r.ids.clone(), r.from),
        None => (Vec::new(), Vec::new(), 0),
    };
    let Some(canon) = canonical(turns, &mut repairs, from, resume.as_ref().map(|r| r.calls))?
    else {
        return Ok(None);
    };
    let segs = canon.segs;
    let mut calls = Vec::new();
    let mut id_turns = Vec::new();
    for seg in &segs {
        if let Seg::Assistant { items, turn } = seg {
            for it in items.iter() {
                if let Item::Call { id, .. } = it {
                    calls.push((id.clone(), *turn));
                    if d.spec().max_id_len.is_none() {
                        continue;
                    }
                    let to = provider_id(p, id);
                    if to != id.as_str() && !ids.iter().any(|m: &IdMapping| &m.from == id) {
                        ids.push(IdMapping {
                            from: id.clone(),
                            to: to.into_owned(),
                        });
                        id_turns.push(*turn);
                    }
                }
            }
        }
    }
    let system_opt = opts.system.as_deref().filter(|s| !s.trim().is_empty());
    // A conversation of blocks takes instructions only before it: the leading system turns
    // join the system option there.
    let mut system: Vec<&str> = system_opt.into_iter().collect();
    let hoist = matches!(layout, Layout::Blocks(_));
    let mut leading = 0usize;
    let kept_system: Option<Vec<String>> = match (&resume, head_memo.as_deref()) {
        (Some(_), Some(Some(h))) => Some(h.system.clone()),
        _ => None,
    };
    if let Some(k) = &kept_system {
        // The kept messages hold every leading instruction: they are the head's.
        system = k.iter().map(String::as_str).collect();
    } else if resume.is_some() {
        return Ok(None);
    } else if hoist {
        for seg in &segs {
            match seg {
                Seg::System { text, .. } => {
                    system.push(text);
                    leading += 1;
                }
                _ => break,
            }
        }
    }
    let cache = d.spec().breakpoints && options.cache.breakpoints;
    if cache && resume.is_some() {
        // Breakpoints move with every turn: written whole.
        return Ok(None);
    }
    let mut breakpoints = Vec::new();
    let mut warnings = Vec::new();

    let system_owned: Vec<String> = system.iter().map(|t| (*t).to_owned()).collect();
    let memo = head_memo.map(|m| {
        if m.as_ref()
            .is_some_and(|h| h.options != *options || h.system != system_owned)
        {
            *m = None;
        }
        m
    });
    let fresh;
    let head: &Head = match memo {
        Some(m) => {
            if m.is_none() {
                *m = Some(build_head(options, &system, system_owned)?);
            }
            match m {
                Some(h) => h,
                None => return Err(Error::new(ErrorKind::Internal, "the head was lost")),
            }
        }
        None => {
            fresh = build_head(options, &system, system_owned)?;
            &fresh
        }
    };
    let (head_pre, head_post) = (head.pre.as_str(), head.post.as_str());
    breakpoints.extend(head.breakpoints.iter().cloned());
    warnings.extend(head.warnings.iter().cloned());
    let mut out = match &resume {
        Some(r) => Out::after(r.len, r.messages, head_pre.len()),
        None => Out::new(
            head_pre,
            prev,
            size_hint.max(head_pre.len() + 256),
            segs.len() + 2,
        ),
    };

    match layout {
        Layout::Blocks(bl) => {
            let (user, model) = ("user", bl.model);
            let mut msgs: Vec<Msg<'_>> = Vec::new();
            for seg in segs.iter().skip(leading) {
                match seg {
                    Seg::System { text, turn, .. } => {
                        repairs.push(Repair {
                            turn: *turn,
                            part: None,
                            code: "SystemAsUser",
                            message: format!("{} takes instructions only before the conversation; this one is sent as user text", p.name()),
                        });
                        let t = render::descriptor("system_instruction", &[], text);
                        let l = lit(&t);
                        push_block(
                            &mut msgs,
                            user,
                            *turn,
                            *turn,
                            true,
                            B::Text(Cow::Owned(t), Cow::Owned(l)),
                            true,
                            &mut repairs,
                        );
                    }
                    Seg::User { items, turn } => {
                        for it in items.iter() {
                            if let Item::User { json, .. } = it {
                                push_block(
                                    &mut msgs,
                                    user,
                                    *turn,
                                    *turn,
                                    true,
                                    B::Raw(Cow::Borrowed(json), true),
                                    true,
                                    &mut repairs,
                                );
                            }
                        }
                    }
                    Seg::Note { text, turn } => {
                        push_block(
                            &mut msgs,
                            user,
                            *turn,
                            *turn,
                            true,
                            B::Text(Cow::Borrowed(text), Cow::Owned(lit(text))),
                            true,
                            &mut repairs,
                        );
                    }
                    Seg::Assistant { items, turn } => {
                        for it in items.iter() {
                            let b = match it {
                                Item::Text { text, lit } => {
                                    B::Text(Cow::Borrowed(text), Cow::Borrowed(lit))
                                }
                                Item::Other { json } => B::Raw(Cow::Borrowed(json), false),
                                Item::Call { json, .. } => B::Raw(Cow::Borrowed(json), true),
                                _ => continue,
                            };
                            push_block(
                                &mut msgs,
                                model,
                                *turn,
                                *turn,
                                false,
                                b,
                                true,
                                &mut repairs,
                            );
                        }
                    }
                    Seg::Results { results, turn, src } => {
                        for r in results {
                            let frag = match r.frag {
                                Some(f) => Cow::Borrowed(f),
                                None => {
                                    let (content, is_error) = result_blocks(r);
                                    Cow::Owned(
                                        d.result(r.id, r.name, &content, is_error, r.missing)?,
                                    )
                                }
                            };
                            push_block(
                                &mut msgs,
                                user,
                                *turn,
                                *src,
                                false,
                                B::Raw(frag, true),
                                true,
                                &mut repairs,
                            );
                        }
                    }
                }
            }
            // The final assistant text may not end in white space where the provider rejects it.
            if let Some(last) = msgs.last_mut() {
                if last.role == model && bl.trims_final_text {
                    if let Some(B::Text(t, l)) = last.blocks.last_mut() {
                        let trimmed = t.trim_end();
                        if trimmed.len() != t.len() {
                            *l = Cow::Owned(lit(trimmed));
                            repairs.push(Repair {
                                turn: last.turn,
                                part: None,
                                code: "TrailingWhitespace",
                                message: format!("the final assistant text ends in white space, which {} rejects; it is trimmed", d.spec().display),
                            });
                        }
                    }
                }
            }
            if cache {
                // The last two messages that hold a user turn.
                let targets: Vec<usize> = msgs
                    .iter()
                    .enumerate()
                    .rev()
                    .filter(|(_, m)| m.role == "user")
                    .map(|(i, _)| i)
                    .take(2)
                    .collect();
                for &i in targets.iter().rev() {
                    let Some(m) = msgs.get_mut(i) else { continue };
                    let Some(pos) = m
                        .blocks
                        .iter()
                        .rposition(|b| !matches!(b, B::Raw(_, false)))
                    else {
                        continue;
                    };
                    let cc = cache_control(options);
                    if let Some(b) = m.blocks.get_mut(pos) {
                        let frag = match b {
                            B::Text(_, l) => format!("{{\"type\":\"text\",\"text\":{l}}}"),
                            B::Raw(r, _) => r.to_string(),
                        };
                        *b = B::Raw(Cow::Owned(with_key(&frag, "cache_control", &cc)), true);
                        breakpoints.push(format!("messages[{i}]"));
                    }
                }
            }
            for m in &msgs {
                out.begin(m.first, m.last, m.src);
                out.held(if m.role == user {
                    bl.user_open
                } else {
                    bl.model_open
                });
                for (k, b) in m.blocks.iter().enumerate() {
                    if k > 0 {
                        out.held(",");
                    }
                    match b {
                        B::Text(_, l) => {
                            out.held(bl.text_open);
                            out.cow(l);
                            out.held("}");
                        }
                        B::Raw(r, _) => out.cow(r),
                    }
                }
                out.held("]}");
            }
        }
        Layout::Chat | Layout::Items => {
            let chat = layout == Layout::Chat;
            if let (true, Some(sys), None) = (chat, system_opt, &resume) {
                out.begin(0, 0, 0);
                out.held("{\"role\":\"system\",\"content\":");
                out.made(&lit(sys));
                out.held("}");
            }
            for seg in &segs {
                match seg {
                    Seg::System {
                        lit,
                        developer,
                        turn,
                        ..
                    } => {
                        out.begin(*turn, *turn, *turn);
                        out.held(if *developer {
                            "{\"role\":\"developer\",\"content\":"
                        } else {
                            "{\"role\":\"system\",\"content\":"
                        });
                        out.held(lit);
                        out.held("}");
                    }
                    Seg::User { items, turn } => {
                        out.begin(*turn, *turn, *turn);
                        out.held("{\"role\":\"user\",\"content\":");
                        match items {
                            [Item::User { lit: Some(l), .. }] if chat => out.held(l),
                            _ => {
                                out.held("[");
                                let mut first = true;
                                for it in items.iter() {
                                    if let Item::User { json, .. } = it {
                                        if !first {
                                            out.held(",");
                                        }
                                        first = false;
                                        out.held(json);
                                    }
                                }
                                out.held("]");
                            }
                        }
                        out.held("}");
                    }
                    Seg::Note { text, turn } => {
                        out.begin(*turn, *turn, *turn);
                        out.held(if chat {
                            "{\"role\":\"user\",\"content\":"
                        } else {
                            "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
                        });
                        out.made(&lit(text));
                        out.held(if chat { "}" } else { "}]}" });
                    }
                    Seg::Assistant { items, turn } => {
                        if chat {
                            let texts = items
                                .iter()
                                .filter(|i| matches!(i, Item::Text { .. }))
                                .count();
                            let calls = items
                                .iter()
                                .filter(|i| matches!(i, Item::Call { .. }))
                                .count();
                            if texts == 0 && calls == 0 {
                                repairs.push(Repair {
                                    turn: *turn,
                                    part: None,
                                    code: "EmptyTurn",
                                    message: format!("the assistant turn has nothing {} can carry; it is left out", d.spec().display),
                                });
                                continue;
                            }
                            out.begin(*turn, *turn, *turn);
                            out.held("{\"role\":\"assistant\"");
                            if texts > 0 {
                                out.held(if texts == 1 {
                                    ",\"content\":"
                                } else {
                                    ",\"content\":["
                                });
                                let mut k = 0;
                                for it in items.iter() {
                                    if let Item::Text { lit, .. } = it {
                                        if texts == 1 {
                                            out.held(lit);
                                        } else {
                                            if k > 0 {
                                                out.held(",");
                                            }
                                            out.held("{\"type\":\"text\",\"text\":");
                                            out.held(lit);
                                            out.held("}");
                                        }
                                        k += 1;
                                    }
                                }
                                if texts > 1 {
                                    out.held("]");
                                }
                            }
                            if calls > 0 {
                                out.held(",\"tool_calls\":[");
                                let mut k = 0;
                                for it in items.iter() {
                                    if let Item::Call { json, .. } = it {
                                        if k > 0 {
                                            out.held(",");
                                        }
                                        out.held(json);
                                        k += 1;
                                    }
                                }
                                out.held("]");
                            }
                            out.held("}");
                        } else {
                            for it in items.iter() {
                                match it {
                                    Item::Text { lit, .. } => {
                                        out.begin(*turn, *turn, *turn);
                                        out.held("{\"role\":\"assistant\",\"content\":");
                                        out.held(lit);
                                        out.held("}");
                                    }
                                    Item::Other { json } | Item::Call { json, .. } => {
                                        out.begin(*turn, *turn, *turn);
                                        out.held(json);
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                    Seg::Results { results, turn, src } => {
                        for r in results {
                            let (content, is_error) = result_blocks(r);
                            if is_error && !d.spec().marks_error_results && !r.missing {
                                repairs.push(Repair {
                                    turn: *turn,
                                    part: None,
                                    code: "ErrorFlagNotCarried",
                                    message: format!("{} cannot mark a tool result as an error (call `{}`); its text is sent as it is", d.spec().display, r.id),
                                });
                            }
                            out.begin(*turn, *turn, *src);
                            match r.frag {
                                Some(f) => out.held(f),
                                None => out
                                    .made(&d.result(r.id, r.name, &content, is_error, r.missing)?),
                            }
                        }
                    }
                }
            }
        }
    }
    let has_content =
        out.before + out.starts.len() > usize::from(layout == Layout::Chat && system_opt.is_some());
    if !has_content {
        return Err(Error::new(
            ErrorKind::EmptyMessage,
            "the conversation has no content for the model after lowering",
        ));
    }
    let prefix_bytes = out
        .starts
        .last()
        .copied()
        .or(resume.as_ref().map(|r| r.last_start))
        .unwrap_or(0);
    let (keep, tail, out) = out.finish(head_post);
    Ok(Some(Assembled {
        report: ConversationReport {
            provider: p.name(),
            turns: turns.iter().map(|t| t.report.clone()).collect(),
            repairs: sorted(repairs),
            ids,
            warnings,
            cache: CacheReport {
                breakpoints,
                prefix_bytes,
            },
        },
        keep,
        tail,
        matched: out.matched,
        starts: out.starts,
        ends: out.ends,
        keys: out.keys,
        key_starts: out.key_starts,
        head: head_pre.to_owned(),
        msg_first: out.msg_first,
        msg_last: out.msg_last,
        msg_src: out.msg_src,
        first_open: canon.first_open,
        calls,
        id_turns,
    }))
}

/// The body around the messages array, for these options and leading instructions.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) options: ConversationOptions,
    system: Vec<String>,
    pre: String,
    post: String,
    breakpoints: Vec<String>,
    warnings: Vec<Warning>,
}

fn build_head(
    options: &ConversationOptions,
    system: &[&str],
    system_owned: Vec<String>,
) -> Result<Head> {
    let opts = &options.lower;
    let d = opts.provider.dialect();
    let system_opt = opts.system.as_deref().filter(|s| !s.trim().is_empty());
    let cache = (d.spec().breakpoints && options.cache.breakpoints).then(|| cache_control(options));
    let mut breakpoints = Vec::new();
    let mut warnings = Vec::new();
    // The top level, with the messages array as a marker to write it in place.
    const MARK: &str = "\u{5}";
    let mut head = Json::Obj(Vec::new());
    crate::lower::params(opts, &mut head)?;
    if let (Some(key), Some(field)) = (&options.cache.key, d.spec().cache_key_field) {
        if !opts.params.contains_key(field) {
            head.push(field, s(key.as_str()));
        }
    }
    let mut report_lower = crate::lower::Report::default();
    let tools = crate::lower::tools(opts, &mut report_lower);
    warnings.extend(report_lower.warnings);
    d.head(
        &mut head,
        system,
        system_opt,
        tools,
        Json::Raw(Cow::Borrowed(MARK)),
        cache,
        &mut breakpoints,
    );
    let head = write(&head, SlotMode::Mark)?;
    let Some((head_pre, head_post)) = head.split_once(MARK) else {
        return Err(Error::new(
            ErrorKind::Internal,
            "the messages marker was lost",
        ));
    };
    Ok(Head {
        options: options.clone(),
        system: system_owned,
        pre: head_pre.to_owned(),
        post: head_post.to_owned(),
        breakpoints,
        warnings,
    })
}

/// The `cache_control` of a breakpoint.
fn cache_control(options: &ConversationOptions) -> String {
    match options.cache.ttl.as_deref() {
        Some(t) => format!("{{\"type\":\"ephemeral\",\"ttl\":\"{t}\"}}"),
        None => "{\"type\":\"ephemeral\"}".to_owned(),
    }
}

/// Repairs in turn order (stable: the order they were found within a turn).
fn sorted(repairs: Vec<Repair>) -> Vec<Repair> {
    let mut out: Vec<Repair> = Vec::with_capacity(repairs.len());
    for r in repairs {
        let at = out.partition_point(|x| x.turn <= r.turn);
        out.insert(at, r);
    }
    out
}

/// `{…}` with `"key":value` added before its closing brace.
fn with_key(frag: &str, key: &str, value: &str) -> String {
    let body = frag.strip_suffix('}').unwrap_or(frag);
    let sep = if body.ends_with('{') { "" } else { "," };
    format!("{body}{sep}\"{key}\":{value}}}")
}
