//! The message store: a persisted [`Submission`] is a head row, one row per part (the typed
//! part as JSON, the spec's `data_json`), its blobs, the session counters and an id row.
//! Reading assembles the rows and runs the read-time adapter ([`crate::versions`]), so a
//! row written at an older `schema_version` comes back in the current shape; rows are
//! never rewritten.

pub(crate) use super::message_read::canonical_value;
pub use super::message_read::{
    assemble, assemble_history_json, assemble_json, assemble_many, assemble_many_json,
    blob_from_row, session_heads, session_state,
};
use super::message_read::{assemble_turn, group, parse_row};
pub use super::message_rows::{
    append_turn, append_turns, batch, layout, turn_layout, turns_layout, TurnAppend,
};

use super::pages::{last_page, page_digits, page_envelope, page_prefix, Page, PageOf};
use super::{bad_row, Backend, Table};
use crate::compositor::{
    self, Blob, CommandCatalog, SessionState, Step, Submission, SubmitOptions,
};
use crate::conversation::Turn;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::lower::{ResolveRequest, Resolved, Resolver};
use crate::message::UserMessage;
use serde_json::{Map, Value};

pub use crate::compositor::message_key;

/// How many times a message write is laid out again after another writer took its
/// sequence number.
const RELAYS: u32 = 8;

/// The rule after a message or turn batch failed with `e` (attempt `attempt`, counted from
/// 0): `Ok` to lay it out again from the fresh session row (another writer took the
/// sequence number: the row changed since it was laid out), or the error to answer with.
/// A conflict with the session row unchanged is a taken id, reported as `InvalidOptions`
/// naming it.
pub fn after_conflict(
    e: Error,
    id: &str,
    laid_out_from: Option<&str>,
    fresh: Option<&str>,
    attempt: u32,
) -> Result<()> {
    if !super::is_conflict(&e) {
        return Err(e);
    }
    if laid_out_from == fresh || attempt >= RELAYS {
        return Err(id_taken(e, id));
    }
    Ok(())
}

fn id_taken(e: Error, id: &str) -> Error {
    if e.details().get("table").and_then(Value::as_str) == Some(Table::Ids.name()) {
        Error::new(
            ErrorKind::InvalidOptions,
            format!("a message with id `{id}` is already stored"),
        )
        .at("id")
        .with("id", id)
    } else {
        e
    }
}

/// A message store over a synchronous backend (the component's `wasi:keyvalue`, memory).
#[derive(Debug, Default)]
pub struct MessageStore<B> {
    backend: B,
}

impl<B: Backend> MessageStore<B> {
    /// A store over `backend`.
    pub fn new(backend: B) -> Self {
        MessageStore { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Stores a composer invocation record beside the thread's turns.
    #[cfg(feature = "composer")]
    pub fn record_invocation(&mut self, record: &serde_json::Value) -> Result<()> {
        let op = super::invocations::put(record)?;
        self.backend.commit(&[op])
    }

    /// The invocation records of a thread, in composition order.
    #[cfg(feature = "composer")]
    pub fn invocations(&self, thread_id: &str) -> Result<Vec<serde_json::Value>> {
        self.backend
            .scan(Table::Invocations, &super::invocations::prefix(thread_id))?
            .into_iter()
            .map(|(k, v)| {
                serde_json::from_str(&v).map_err(|e| super::bad_row(Table::Invocations, &k, e))
            })
            .collect()
    }

    /// The counters of `session` (a new session starts at sequence 1).
    pub fn session(&self, session: &str) -> Result<SessionState> {
        session_state(
            session,
            self.backend.get(Table::Sessions, session)?.as_deref(),
        )
    }

    /// Resolves and persists a message (persisted before anything is lowered). Returns
    /// [`Step::Needs`] when the host must answer first (call again with `answers`).
    pub fn submit(
        &mut self,
        message: &UserMessage,
        catalog: &CommandCatalog,
        options: &SubmitOptions,
        answers: Option<&Map<String, Value>>,
    ) -> Result<Step> {
        let state = self.session(&options.session)?;
        let step = compositor::submit(message, catalog, options, state, answers)?;
        if let Step::Done(sub) = &step {
            self.put(sub)?;
        }
        Ok(step)
    }

    /// Writes a submission.
    pub fn put(&mut self, sub: &Submission) -> Result<()> {
        // The id row is an insert: a taken id fails the whole batch, which writes nothing.
        self.backend
            .commit(&batch(sub))
            .map_err(|e| id_taken(e, &sub.id))
    }

    fn key_of(&self, id: &str) -> Result<String> {
        let text = self.backend.get(Table::Ids, id)?.ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("no message with id `{id}`")).with("id", id)
        })?;
        serde_json::from_str::<String>(&text).map_err(|e| bad_row(Table::Ids, id, e))
    }

    /// The message stored under `id`, in the current shape.
    pub fn get(&self, id: &str) -> Result<UserMessage> {
        let key = self.key_of(id)?;
        let head = self.backend.get(Table::Messages, &key)?.ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("no message with id `{id}`")).with("id", id)
        })?;
        let parts = self.backend.scan(Table::Parts, &format!("{key}#"))?;
        assemble(&key, &head, &parts)
    }

    /// Persists a turn of any role after the session's last message (an assistant reply,
    /// tool results, an instruction; a user's message goes through [`Self::submit`]).
    pub fn append(&mut self, turn: &Turn, options: &SubmitOptions) -> Result<TurnAppend> {
        let state = self.session(&options.session)?;
        let a = append_turn(turn, options, state);
        if a.stored {
            return Ok(a);
        }
        self.backend
            .commit(&turn_layout(&a).0)
            .map_err(|e| id_taken(e, &a.id))?;
        Ok(a)
    }

    /// Persists `turns` after the session's last message in one write, each with the next
    /// sequence number (a branch's copy of the turns it keeps: see [`crate::chat`]). A turn
    /// already stored in this session is passed over.
    pub fn append_turns(
        &mut self,
        turns: &[Turn],
        options: &SubmitOptions,
    ) -> Result<Vec<TurnAppend>> {
        let state = self.session(&options.session)?;
        let options = SubmitOptions {
            id: None,
            ..options.clone()
        };
        let appends = append_turns(turns, &options, state);
        let (ops, _) = turns_layout(&appends);
        if !ops.is_empty() {
            let first = appends.iter().find(|a| !a.stored).map(|a| a.id.clone());
            self.backend
                .commit(&ops)
                .map_err(|e| id_taken(e, first.as_deref().unwrap_or_default()))?;
        }
        Ok(appends)
    }

    /// Keeps `draft` — the reply `session` is reading so far, and the relayed run reading
    /// it — as the session's draft (see [`super::drafts`]): what a page that goes away
    /// mid-reply finds again with [`Self::draft`]. Returns whether anything was kept (a
    /// reply with no text yet and no run is not).
    pub fn save_draft(&mut self, session: &str, draft: &super::drafts::Draft) -> Result<bool> {
        let state = self.session(session)?;
        let (ops, kept) = super::drafts::draft_rows(session, &state, draft);
        self.backend.commit(&ops)?;
        Ok(kept)
    }

    /// `session`'s draft: the reply it was reading when its writer went away, cut (text,
    /// `metadata.cut`), and the relayed run reading it; `None` when there is none or a turn
    /// was stored after it. Append its turn to keep it in the thread (that also makes the
    /// draft stale), or attach to its run.
    pub fn draft(&self, session: &str) -> Result<Option<super::drafts::Draft>> {
        let state = self.session(session)?;
        let row = self.backend.get(Table::Drafts, session)?;
        super::drafts::draft_of(session, &state, row.as_deref())
    }

    /// [`Self::draft`] as the stored row's JSON text, `{ run?, seq, turn? }` (what the hosts
    /// answer).
    pub fn draft_json(&self, session: &str) -> Result<Option<String>> {
        let state = self.session(session)?;
        let row = self.backend.get(Table::Drafts, session)?;
        Ok(super::drafts::standing(session, &state, row.as_deref())?.map(str::to_owned))
    }

    /// Drops `session`'s draft (the reply ended, or it was appended).
    pub fn drop_draft(&mut self, session: &str) -> Result<()> {
        self.backend.commit(&super::drafts::drop_rows(session))
    }

    /// Every turn of `session` (user, assistant, tool, system), in order.
    pub fn thread(&self, session: &str) -> Result<Vec<Turn>> {
        let prefix = format!("{session}/");
        let heads = self.backend.scan(Table::Messages, &prefix)?;
        let parts = self.backend.scan(Table::Parts, &prefix)?;
        group(&session_heads(session, heads), &parts)
            .into_iter()
            .map(|(key, head, rows)| assemble_turn(key, head, rows))
            .collect()
    }

    /// The user messages of `session`, in order (its other turns are in [`Self::thread`]).
    pub fn history(&self, session: &str) -> Result<Vec<UserMessage>> {
        Ok(self
            .thread(session)?
            .into_iter()
            .filter_map(|t| match t {
                Turn::User(m) => Some(m),
                _ => None,
            })
            .collect())
    }

    /// Summaries of the messages of `session` (`{ id, session, seq, part_count, metadata }`),
    /// in order, without reading their parts.
    pub fn list(&self, session: &str) -> Result<Vec<Value>> {
        let heads = self.backend.scan(Table::Messages, &format!("{session}/"))?;
        session_heads(session, heads)
            .into_iter()
            .map(|(k, v)| parse_row(Table::Messages, &k, &v).map(Value::Object))
            .collect()
    }

    /// One page of `session`'s turns, user messages or summaries (`of`), `size` sequence
    /// numbers to a page (10, 100, … 1 000 000: one prefix scan each); `page` `None` is the
    /// session's last. Reads that page's rows only.
    pub fn page(&self, of: PageOf, session: &str, page: Option<u64>, size: u64) -> Result<Page> {
        Page::from_json(&self.page_json(of, session, page, size)?)
    }

    /// [`Self::page`] as JSON text, `{ items, page, prev, next }` (what the hosts answer).
    pub fn page_json(
        &self,
        of: PageOf,
        session: &str,
        page: Option<u64>,
        size: u64,
    ) -> Result<String> {
        let digits = page_digits(size)?;
        let row = self.backend.get(Table::Sessions, session)?;
        let last = last_page(session, row.as_deref(), digits)?;
        let n = page.unwrap_or(last);
        let prefix = page_prefix(session, n, digits);
        // The typed reads `thread` and `list` make (what a Rust host links already).
        let heads = session_heads(session, self.backend.scan(Table::Messages, &prefix)?);
        let items: Vec<Value> = match of {
            PageOf::List => heads
                .into_iter()
                .map(|(k, v)| parse_row(Table::Messages, &k, &v).map(Value::Object))
                .collect::<Result<_>>()?,
            _ => {
                let parts = self.backend.scan(Table::Parts, &prefix)?;
                let mut out = Vec::new();
                for (key, head, rows) in group(&heads, &parts) {
                    let t = assemble_turn(key, head, rows)?;
                    if of == PageOf::Thread || matches!(t, Turn::User(_)) {
                        out.push(t.to_value());
                    }
                }
                out
            }
        };
        Ok(page_envelope(&Value::Array(items).json_text(), n, last))
    }

    /// A blob by content id.
    pub fn blob(&self, content_id: &str) -> Result<Option<Blob>> {
        self.backend
            .get(Table::Blobs, content_id)?
            .map(|t| blob_from_row(content_id, &t))
            .transpose()
    }

    /// A resolver that answers blob requests from this store and passes file and mention
    /// requests to `inner`.
    pub fn resolver<'a>(&'a self, inner: &'a dyn Resolver) -> StoreResolver<'a, B> {
        StoreResolver { store: self, inner }
    }
}

/// See [`MessageStore::resolver`].
pub struct StoreResolver<'a, B> {
    store: &'a MessageStore<B>,
    inner: &'a dyn Resolver,
}

impl<B: Backend> Resolver for StoreResolver<'_, B> {
    fn resolve(&self, request: &ResolveRequest<'_>) -> std::result::Result<Resolved, String> {
        match request {
            ResolveRequest::Blob { content_id, .. } => match self.store.blob(content_id) {
                Ok(Some(b)) => crate::media::decode(&b.data)
                    .map(|data| Resolved::Bytes {
                        data,
                        mime: Some(b.mime),
                    })
                    .map_err(|e| e.to_string()),
                Ok(None) => self.inner.resolve(request),
                Err(e) => Err(e.to_string()),
            },
            _ => self.inner.resolve(request),
        }
    }
}
