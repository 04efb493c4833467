//! `promptloom:core/compositor`: conversions only; the store logic is
//! [`crate::store::MessageStore`] over the key-value backend.

use super::exports::promptloom::core::compositor::{self as wit, Guest, GuestMessageStore};
use super::exports::promptloom::core::lowering as wl;
use super::keyvalue::{Bucketed, KvBackend};
use super::promptloom::core::types::Error as WitError;
use super::{options, to_wit, Component};
use crate::compositor::{parse_input, CommandCatalog, Step, SubmitOptions};
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use crate::lower;
use crate::message::UserMessage;
use crate::store::{MessageStore, PageOf};
use serde_json::{Map, Value};
use std::cell::RefCell;

fn json(text: &str, what: &str, kind: ErrorKind) -> Result<Value, Error> {
    crate::wire::json_value(text, what, kind)
}

/// The options of an append (`{ session?, id?, now? }`).
fn append_options(options: &str) -> Result<SubmitOptions, Error> {
    SubmitOptions::from_value(json(
        options,
        "the append options",
        ErrorKind::InvalidOptions,
    )?)
}

fn catalog(c: wit::Catalog) -> Result<CommandCatalog, Error> {
    let mut cat = if c.builtins {
        CommandCatalog::with_builtins()
    } else {
        CommandCatalog::empty()
    };
    for (i, e) in c.commands.iter().enumerate() {
        cat.register(json(e, "a command entry", ErrorKind::InvalidCommand)?)
            .map_err(|err| err.with("command", i as u64))?;
    }
    for e in &c.mentions {
        cat.register_mention(json(e, "a mention kind", ErrorKind::InvalidCommand)?)?;
    }
    Ok(cat)
}

impl Guest for Component {
    type MessageStore = StoreResource;

    fn inspect(message: String, options_in: wl::LowerOptions) -> Result<String, WitError> {
        let msg = UserMessage::from_json(&message).map_err(to_wit)?;
        let (opts, table) = options(options_in).map_err(to_wit)?;
        Ok(crate::compositor::inspect::views(&msg, &opts, &table).json_text())
    }

    fn parse_input(text: String, c: wit::Catalog) -> Result<String, WitError> {
        let cat = catalog(c).map_err(to_wit)?;
        Ok(Value::Array(
            parse_input(&text, &cat)
                .iter()
                .map(|p| p.to_value())
                .collect(),
        )
        .json_text())
    }

    fn complete(typed: String, c: wit::Catalog, limit: u32) -> Result<String, WitError> {
        let cat = catalog(c).map_err(to_wit)?;
        Ok(Value::Array(cat.complete(&typed, limit as usize)).json_text())
    }
}

/// The `message-store` resource.
pub struct StoreResource {
    store: RefCell<MessageStore<KvBackend>>,
}

impl StoreResource {
    /// Appends a turn to `session` (the agent loop's driver persists each turn with it).
    pub(crate) fn append_to(
        &self,
        turn: &crate::conversation::Turn,
        session: &str,
    ) -> Result<(), Error> {
        let mut o = serde_json::Map::new();
        o.insert("session".into(), session.into());
        let opts = SubmitOptions::from_value(Value::Object(o))?;
        self.store.borrow_mut().append(turn, &opts).map(|_| ())
    }
}

impl GuestMessageStore for StoreResource {
    fn open(name: String) -> Result<wit::MessageStore, WitError> {
        let backend = Bucketed::open(&name).map_err(to_wit)?;
        Ok(wit::MessageStore::new(StoreResource {
            store: RefCell::new(MessageStore::new(backend)),
        }))
    }

    fn submit(
        &self,
        message: String,
        c: wit::Catalog,
        options_json: String,
        answers: Option<Vec<wit::HostAnswer>>,
    ) -> Result<wit::SubmitStep, WitError> {
        let run = || -> Result<wit::SubmitStep, Error> {
            let msg = UserMessage::from_json(&message)?;
            let cat = catalog(c)?;
            let opts = SubmitOptions::from_value(json(
                &options_json,
                "the submit options",
                ErrorKind::InvalidOptions,
            )?)?;
            let answers = answers
                .map(|list| {
                    let mut m = Map::new();
                    for a in list {
                        let v = json(&a.value, "an answer", ErrorKind::InvalidOptions)?;
                        m.insert(a.part.to_string(), v);
                    }
                    Ok::<_, Error>(m)
                })
                .transpose()?;
            let mut store = self.store.borrow_mut();
            Ok(match store.submit(&msg, &cat, &opts, answers.as_ref())? {
                Step::Needs(reqs) => wit::SubmitStep::Needs(
                    Value::Array(reqs.into_iter().map(|r| r.request).collect()).json_text(),
                ),
                Step::NeedsData(slots) => {
                    return Err(Error::new(
                        ErrorKind::InvalidMessage,
                        "attachment data refers to host slots, but no host holds data here: send it inline",
                    )
                    .with("slots", slots.iter().map(|s| Value::from(*s)).collect::<Vec<_>>()))
                }
                Step::Done(sub) => {
                    wit::SubmitStep::Done(sub.summary_json("message", &sub.message.to_json()))
                }
            })
        };
        run().map_err(to_wit)
    }

    fn get(&self, id: String) -> Result<String, WitError> {
        self.store
            .borrow()
            .get(&id)
            .map(|m| m.to_json())
            .map_err(to_wit)
    }

    fn append_turn(&self, turn: String, options: String) -> Result<String, WitError> {
        let run = || -> Result<String, Error> {
            let t = crate::conversation::Turn::from_value(json(
                &turn,
                "the turn",
                ErrorKind::InvalidMessage,
            )?)?;
            let a = self
                .store
                .borrow_mut()
                .append(&t, &append_options(&options)?)?;
            let mut o = serde_json::Map::new();
            o.insert("id".into(), a.id.into());
            o.insert("session".into(), a.session.into());
            o.insert("seq".into(), a.seq.into());
            o.insert("turn".into(), a.turn.to_value());
            Ok(Value::Object(o).json_text())
        };
        run().map_err(to_wit)
    }

    fn append_turns(&self, turns: String, options: String) -> Result<String, WitError> {
        let run = || -> Result<String, Error> {
            let t = crate::conversation::Turn::list_from_value(json(
                &turns,
                "the turns",
                ErrorKind::InvalidMessage,
            )?)?;
            let opts = append_options(&options)?;
            let appends = self.store.borrow_mut().append_turns(&t, &opts)?;
            let list = |f: &dyn Fn(&crate::store::messages::TurnAppend) -> Value| {
                Value::Array(appends.iter().map(f).collect())
            };
            let mut o = serde_json::Map::new();
            o.insert("ids".into(), list(&|a| a.id.clone().into()));
            o.insert("session".into(), opts.session.clone().into());
            o.insert("turns".into(), list(&|a| a.turn.to_value()));
            Ok(Value::Object(o).json_text())
        };
        run().map_err(to_wit)
    }

    fn save_draft(&self, session: String, draft: String) -> Result<bool, WitError> {
        let run = || -> Result<bool, Error> {
            let d = crate::store::drafts::Draft::from_value(json(
                &draft,
                "the draft",
                ErrorKind::InvalidMessage,
            )?)?;
            self.store.borrow_mut().save_draft(&session, &d)
        };
        run().map_err(to_wit)
    }

    fn draft(&self, session: String) -> Result<Option<String>, WitError> {
        self.store.borrow().draft_json(&session).map_err(to_wit)
    }

    fn thread(&self, session: String) -> Result<String, WitError> {
        self.store
            .borrow()
            .thread(&session)
            .map(|ts| {
                Value::Array(ts.iter().map(crate::conversation::Turn::to_value).collect())
                    .json_text()
            })
            .map_err(to_wit)
    }

    fn history(&self, session: String) -> Result<String, WitError> {
        self.store
            .borrow()
            .history(&session)
            .map(|ms| Value::Array(ms.iter().map(UserMessage::to_value).collect()).json_text())
            .map_err(to_wit)
    }

    fn list(&self, session: String) -> Result<String, WitError> {
        self.store
            .borrow()
            .list(&session)
            .map(|v| Value::Array(v).json_text())
            .map_err(to_wit)
    }

    fn page(
        &self,
        of: wit::PageOf,
        session: String,
        page: Option<u64>,
        size: u64,
    ) -> Result<String, WitError> {
        let of = match of {
            wit::PageOf::Thread => PageOf::Thread,
            wit::PageOf::History => PageOf::History,
            wit::PageOf::List => PageOf::List,
        };
        self.store
            .borrow()
            .page_json(of, &session, page, size)
            .map_err(to_wit)
    }

    fn blob(&self, content_id: String) -> Result<Option<String>, WitError> {
        let b = self.store.borrow().blob(&content_id).map_err(to_wit)?;
        Ok(b.map(|b| serde_json::json!({"content_id": b.content_id, "mime": b.mime, "size": b.size, "data": b.data}).json_text()))
    }

    fn lower(&self, id: String, o: wl::LowerOptions) -> Result<wl::Lowered, WitError> {
        let run = || -> Result<wl::Lowered, Error> {
            let store = self.store.borrow();
            let msg = store.get(&id)?;
            let (opts, table) = options(o)?;
            let out = lower::lower(&msg, &opts, &store.resolver(&table))?;
            Ok(wl::Lowered {
                body: out.body,
                report: out.report.to_json(),
            })
        };
        run().map_err(to_wit)
    }

    fn record_invocation(&self, invocation: String) -> Result<(), WitError> {
        let v: Value = serde_json::from_str(&invocation)
            .map_err(|e| to_wit(Error::json(ErrorKind::InvalidRequest, "the record", &e)))?;
        self.store
            .borrow_mut()
            .record_invocation(&v)
            .map_err(to_wit)
    }

    fn invocations(&self, thread_id: String) -> Result<String, WitError> {
        let list = self
            .store
            .borrow()
            .invocations(&thread_id)
            .map_err(to_wit)?;
        Ok(Value::Array(list).json_text())
    }
}
