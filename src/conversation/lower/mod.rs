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

mod assemble;
mod canonical;
pub mod fit;
mod out;
mod turn;

pub(crate) use assemble::{assemble, Assembled, Head, Resume};
pub(crate) use out::{Key, Prev};
pub(crate) use turn::{lower_turn, TurnCx};

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
    /// Context fit; none when absent.
    pub fit: Option<fit::Fit>,
}

impl ConversationOptions {
    /// Options for `provider` with nothing else.
    pub fn new(provider: Provider) -> Self {
        ConversationOptions {
            lower: LowerOptions::new(provider),
            cache: CacheOptions::default(),
            fit: None,
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
        let fit = fit::Fit::from_value(o.remove("fit").unwrap_or(Value::Null))?;
        let lower = LowerOptions::from_value(Value::Object(o)).map_err(|e| {
            if e.message() == "unknown option" {
                e.with(
                    "known",
                    "provider, system, tools, capabilities, the call settings, cache, fit",
                )
            } else {
                e
            }
        })?;
        Ok(ConversationOptions { lower, cache, fit })
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
        /// Not a function call (see `ToolCall::kind`): its result is written for the kind.
        kind: Option<String>,
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
    /// Its estimated tokens, once a fit asked (see [`fit`]).
    pub(crate) tokens: std::cell::OnceCell<u64>,
}

impl LoweredTurn {
    /// The stand-in of a turn a context fit leaves out: nothing to send, nothing reported.
    pub(crate) fn left_out() -> LoweredTurn {
        LoweredTurn {
            items: Vec::new(),
            report: Rc::new(TurnReport {
                role: "left-out",
                blocks: Vec::new(),
                dropped: Vec::new(),
                warnings: Vec::new(),
            }),
            needs: Vec::new(),
            tokens: std::cell::OnceCell::new(),
        }
    }

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
    /// `ToolResultsMerged`, `SystemAsUser`, `TurnsMerged`, `EmptyTurn`, `TurnDropped`,
    /// `TrailingWhitespace`, `ErrorFlagNotCarried`, `ReasoningLeftOut` (a server that takes reasoning back in the tool loop only, `compat`).
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
    /// The model and streaming the request asks for (when the settings name either): the
    /// adapter builds the URL from them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Call"))]
    pub call: Option<serde_json::Value>,
    /// The context fit, when asked for (`fit`): the estimate, the window and what was left
    /// out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub fit: Option<fit::FitReport>,
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

/// The JSON string literal of `t` (quotes included). Writing a string cannot fail.
fn lit(t: &str) -> String {
    crate::json_text::to_string(t).unwrap_or_else(|_| String::from("\"\""))
}

fn write(j: &Json<'_>, mode: SlotMode) -> Result<String> {
    json::write(j, mode)
}
