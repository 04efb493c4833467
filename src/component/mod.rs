//! The WASI component face (wit-bindgen): the `promptloom:core/lowering`,
//! `promptloom:core/compositor` and `promptloom:core/skills` interfaces of `wit/world.wit`.
//! It only converts WIT values and delegates to the core; the message and skill stores'
//! backend is the imported `wasi:keyvalue` bucket.

#[cfg(not(feature = "lowering-only"))]
mod agent;
#[cfg(not(feature = "lowering-only"))]
mod arbiter;
#[cfg(not(feature = "lowering-only"))]
mod chat;
#[cfg(not(feature = "lowering-only"))]
mod composer;
#[cfg(not(feature = "lowering-only"))]
mod compositor;
#[cfg(not(feature = "lowering-only"))]
mod gateway;
#[cfg(not(feature = "lowering-only"))]
mod keyvalue;
mod response;
#[cfg(not(feature = "lowering-only"))]
mod skills;

use crate::conversation::{lower_conversation, Answers, Conversation, ConversationOptions, Turn};
use crate::error::{Error, ErrorClass, ErrorKind};
use crate::json_text::JsonText;
use crate::lower::{self, Capabilities, LowerOptions, Provider, Resolved, TableResolver};
use crate::message::UserMessage;
use serde_json::Value;

#[cfg(not(feature = "lowering-only"))]
wit_bindgen::generate!({
    world: "promptloom",
    path: "wit",
    generate_all,
});

#[cfg(feature = "lowering-only")]
wit_bindgen::generate!({
    world: "promptloom-lowering",
    path: "wit",
});

use exports::promptloom::core::lowering::{self as wit, Guest};
use promptloom::core::types::{Error as WitError, ErrorClass as WitClass, ErrorCode};

pub(crate) struct Component;

/// Both directions between the core's error kinds and the WIT `error-code` enum, written
/// from the core's list (`each_error_kind!`): a kind the WIT lacks, or a WIT code the core
/// lacks, fails to compile.
macro_rules! error_variants {
    ($($k:ident),* $(,)?) => {
        fn wit_code(k: ErrorKind) -> ErrorCode {
            match k {
                $(ErrorKind::$k => ErrorCode::$k,)*
            }
        }

        fn core_kind(c: ErrorCode) -> ErrorKind {
            match c {
                $(ErrorCode::$k => ErrorKind::$k,)*
            }
        }
    };
}

pub(crate) fn to_wit(e: Error) -> WitError {
    WitError {
        class: match e.kind().class() {
            ErrorClass::Invalid => WitClass::Invalid,
            ErrorClass::Refused => WitClass::Refused,
            ErrorClass::Unavailable => WitClass::Unavailable,
            ErrorClass::Failed => WitClass::Failed,
            ErrorClass::Internal => WitClass::Internal,
        },
        code: wit_code(e.kind()),
        message: e.to_string(),
        path: e.path().map(str::to_owned),
        details: e.details().json_text(),
    }
}

/// The core error of a WIT error a host passes back (to ask whether to retry it). The code
/// decides; the class a host put it in does not.
pub(crate) fn from_wit(w: &WitError) -> Error {
    Error::with_details(
        core_kind(w.code),
        w.message.clone(),
        serde_json::from_str(&w.details).unwrap_or_default(),
    )
}

crate::error::each_error_kind!(error_variants);

fn provider(p: wit::Provider) -> Provider {
    match p {
        wit::Provider::Anthropic => Provider::Anthropic,
        wit::Provider::OpenaiChat => Provider::OpenAiChat,
        wit::Provider::OpenaiResponses => Provider::OpenAiResponses,
        wit::Provider::Gemini => Provider::Gemini,
    }
}

fn json_opt(field: &str, text: Option<String>) -> Result<Option<Value>, Error> {
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            Error::json(ErrorKind::InvalidOptions, &format!("`{field}`"), &e).at(field)
        })
    })
    .transpose()
}

/// The options object of the core from the WIT record's fields (JSON text fields parsed).
fn options_value(
    p: wit::Provider,
    system: Option<String>,
    json_fields: [(&str, Option<String>); 5],
) -> Result<Value, Error> {
    let mut v = serde_json::Map::new();
    v.insert("provider".into(), provider(p).name().into());
    if let Some(s) = system {
        v.insert("system".into(), s.into());
    }
    for (key, text) in json_fields {
        match json_opt(key, text)? {
            // The settings sit beside the other options in the core's object.
            Some(Value::Object(s)) if key == "settings" => {
                if let Some(k) = s.keys().find(|k| {
                    v.contains_key(*k)
                        || matches!(
                            k.as_str(),
                            "provider" | "system" | "tools" | "capabilities" | "cache" | "limits"
                        )
                }) {
                    return Err(Error::new(
                        ErrorKind::InvalidOptions,
                        format!("`{k}` is a field of the options record, not a setting"),
                    )
                    .at(format!("settings.{k}")));
                }
                v.extend(s)
            }
            Some(_) if key == "settings" => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "`settings` must be a JSON object",
                )
                .at("settings"))
            }
            Some(val) => {
                v.insert(key.into(), val);
            }
            None => {}
        }
    }
    Ok(Value::Object(v))
}

pub(crate) fn options(o: wit::LowerOptions) -> Result<(LowerOptions, TableResolver), Error> {
    let fields = [
        ("tools", o.tools),
        ("capabilities", o.capabilities),
        ("settings", o.settings),
        ("cache", None),
        ("limits", o.limits),
    ];
    let opts = LowerOptions::from_value(options_value(o.provider, o.system, fields)?)?;
    let table = resolved_table(o.resolved)?;
    Ok((opts, table))
}

/// One answer table per message or turn of `n`, from the host's answers by index (answers
/// for an index past the end are ignored, as for a conversation's non-user turns).
fn answer_tables(n: usize, answers: Vec<wit::TurnAnswers>) -> Result<Vec<TableResolver>, Error> {
    let mut tables: Vec<TableResolver> = (0..n).map(|_| TableResolver::default()).collect();
    for a in answers {
        let t = resolved_table(a.resolved)?;
        if let Some(slot) = tables.get_mut(a.turn as usize) {
            *slot = t;
        }
    }
    Ok(tables)
}

fn resolved_table(list: Vec<wit::ResolvedPart>) -> Result<TableResolver, Error> {
    let mut table = TableResolver::default();
    for r in list {
        let entry = match r.content {
            wit::ResolvedContent::Text(t) => Ok(Resolved::Text(t)),
            wit::ResolvedContent::Bytes(b) => Ok(Resolved::Bytes {
                data: b.data,
                mime: b.mime,
            }),
            wit::ResolvedContent::Payload(p) => Ok(Resolved::Payload(
                json_opt("resolved.payload", Some(p))?.unwrap_or(Value::Null),
            )),
            wit::ResolvedContent::Missing => Ok(Resolved::Missing),
            wit::ResolvedContent::Failed(m) => Err(m),
        };
        table.insert(r.part as usize, entry);
    }
    Ok(table)
}

fn conversation_options(o: wit::ConversationOptions) -> Result<ConversationOptions, Error> {
    let fields = [
        ("tools", o.tools),
        ("capabilities", o.capabilities),
        ("settings", o.settings),
        ("cache", o.cache),
        ("limits", o.limits),
    ];
    ConversationOptions::from_value(options_value(o.provider, o.system, fields)?)
}

fn lowered(l: crate::conversation::LoweredConversation) -> wit::Lowered {
    wit::Lowered {
        body: l.body,
        report: l.report.to_json(),
    }
}

/// The `conversation` resource: the core's [`Conversation`].
pub(crate) struct ConversationResource {
    pub(crate) inner: std::cell::RefCell<Conversation>,
}

impl wit::GuestConversation for ConversationResource {
    fn new(cache_bytes: Option<u32>) -> Self {
        ConversationResource {
            inner: std::cell::RefCell::new(match cache_bytes {
                Some(n) => Conversation::new(n as usize),
                None => Conversation::default(),
            }),
        }
    }

    fn append(&self, turn: String, resolved: Vec<wit::ResolvedPart>) -> Result<u32, WitError> {
        let answers = resolved_table(resolved).map_err(to_wit)?;
        self.inner
            .borrow_mut()
            .append_json(&turn, Answers(answers.into_entries()))
            .map(|i| i as u32)
            .map_err(to_wit)
    }

    fn lower(&self, options: wit::ConversationOptions) -> Result<wit::Lowered, WitError> {
        let opts = conversation_options(options).map_err(to_wit)?;
        self.inner
            .borrow_mut()
            .lower(&opts)
            .map(lowered)
            .map_err(to_wit)
    }

    fn turns(&self) -> String {
        let c = self.inner.borrow();
        Value::Array(c.turns().map(Turn::to_value).collect()).json_text()
    }

    fn len(&self) -> u32 {
        self.inner.borrow().len() as u32
    }

    fn truncate(&self, n: u32) {
        self.inner.borrow_mut().truncate(n as usize);
    }

    fn cache_stats(&self) -> String {
        crate::json_text::to_string(&self.inner.borrow().cache_stats()).unwrap_or_default()
    }
}

impl Guest for Component {
    type Conversation = ConversationResource;

    fn lower_conversation(
        turns: String,
        options: wit::ConversationOptions,
        answers: Vec<wit::TurnAnswers>,
    ) -> Result<wit::Lowered, WitError> {
        let run = || -> Result<wit::Lowered, Error> {
            let value = serde_json::from_str(&turns)
                .map_err(|e| Error::json(ErrorKind::InvalidMessage, "turns", &e).at("turns"))?;
            let turns = Turn::list_from_value(value)?;
            let opts = conversation_options(options)?;
            let tables = answer_tables(turns.len(), answers)?;
            lower_conversation(&turns, &opts, &tables).map(lowered)
        };
        run().map_err(to_wit)
    }

    fn lower(message: String, options_in: wit::LowerOptions) -> Result<wit::Lowered, WitError> {
        let run = || -> Result<wit::Lowered, Error> {
            let msg = UserMessage::from_json(&message)?;
            let (opts, table) = options(options_in)?;
            let out = lower::lower(&msg, &opts, &table)?;
            Ok(wit::Lowered {
                body: out.body,
                report: out.report.to_json(),
            })
        };
        run().map_err(to_wit)
    }

    fn lower_many(
        messages: String,
        options_in: wit::LowerOptions,
        answers: Vec<wit::TurnAnswers>,
    ) -> Result<Vec<Result<wit::Lowered, WitError>>, WitError> {
        if !options_in.resolved.is_empty() {
            return Err(to_wit(Error::new(
                ErrorKind::InvalidOptions,
                "lower-many takes each message's answers in `answers` (by index); `options.resolved` must be empty",
            )));
        }
        let (opts, _) = options(options_in).map_err(to_wit)?;
        let list = UserMessage::many_from_json(&messages).map_err(to_wit)?;
        let tables = answer_tables(list.len(), answers).map_err(to_wit)?;
        Ok(list
            .into_iter()
            .zip(tables.iter())
            .map(|(m, table)| {
                m.and_then(|msg| lower::lower(&msg, &opts, table))
                    .map(|out| wit::Lowered {
                        body: out.body,
                        report: out.report.to_json(),
                    })
                    .map_err(to_wit)
            })
            .collect())
    }

    fn resolve_requests(message: String) -> Result<Vec<wit::ResolveRequest>, WitError> {
        let requests = lower::requests::message_requests(&message).map_err(to_wit)?;
        Ok(requests
            .into_iter()
            .map(|r| wit::ResolveRequest {
                part: u32::try_from(r.part).unwrap_or(u32::MAX),
                kind: match r.kind {
                    lower::RequestKind::File => wit::RequestKind::File,
                    lower::RequestKind::Mention => wit::RequestKind::Mention,
                    lower::RequestKind::Blob => wit::RequestKind::Blob,
                },
                request: r.value.json_text(),
            })
            .collect())
    }

    fn default_capabilities(p: wit::Provider) -> String {
        crate::json_text::to_string(&Capabilities::default_for(provider(p))).unwrap_or_default()
    }
}

export!(Component);
