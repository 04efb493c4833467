//! The message store and the skill store over an asynchronous backend: what a Rust web app
//! (Leptos, Dioxus, Yew) uses over IndexedDB (the `indexeddb` feature's
//! `promptloom::indexeddb::IndexedDb`), or over any async database of its own.
//!
//! Nothing here does I/O: the stores run the same machines every host runs — the read
//! plans of [`super::reads`], the message layout of [`super::messages`] with its
//! [`super::messages::after_conflict`] rule, and the skill [`Writer`] — and an
//! [`AsyncBackend`] executes them. Any synchronous [`Backend`] in a `RefCell` is one too,
//! which is how the native tests run the same cases as headless Chromium.

use super::messages::{
    after_conflict, append_turn, append_turns, batch, blob_from_row, session_state, turn_layout,
    turns_layout, TurnAppend,
};
use super::reads::{Plan, Query, Rows, Step};
use super::skills::{self, Plan as WritePlan, Request, Writer};
use super::{bad_row, Backend, Op, Table};
use crate::compositor::{self, Blob, CommandCatalog, SessionState, SubmitOptions};
use crate::conversation::Turn;
use crate::error::{Error, ErrorKind, Result};
use crate::message::UserMessage;
use crate::skill::model::{
    sort_artifacts, sort_summaries, ArtifactKind, Skill, SkillArtifact, SkillSummary,
};
use serde_json::{Map, Value};
use std::cell::RefCell;

/// What [`AsyncBackend::commit_after_read`] calls with the values read: the batch to write.
pub type BuildBatch<'a> = dyn FnMut(&[Option<String>]) -> Result<Vec<Op>> + 'a;

/// A backend whose reads and writes complete later (IndexedDB, a remote key-value store).
///
/// Futures need not be `Send`: the hosts this is for (a browser tab, a worker) run one
/// thread.
#[allow(async_fn_in_trait)]
pub trait AsyncBackend {
    /// The rows of `plan`: each get's value (`None`: absent) and each scan's rows in key
    /// order, read in one transaction where the backend has them.
    async fn read(&self, plan: &Plan) -> Result<Rows>;

    /// Reads the rows `keys`, then writes the batch `build` makes from their values (one per
    /// key), in one transaction where the backend has them, so a row another writer changes
    /// in between is never written over blindly. When `build` fails nothing is written and
    /// its error is returned. An [`Op::Insert`] whose key is taken fails the whole batch
    /// with a [`super::conflict`] error.
    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> Result<()>;
}

/// A synchronous backend is an asynchronous one whose futures are ready at once.
impl<B: Backend> AsyncBackend for RefCell<B> {
    async fn read(&self, plan: &Plan) -> Result<Rows> {
        let b = self.borrow();
        let gets = plan
            .gets
            .iter()
            .map(|(t, k)| b.get(*t, k))
            .collect::<Result<_>>()?;
        let scans = plan
            .scans
            .iter()
            .map(|(t, p)| b.scan(*t, p))
            .collect::<Result<_>>()?;
        let ranges = plan
            .ranges
            .iter()
            .map(|r| b.range(r.table, &r.prefix, r.after.as_deref(), r.limit))
            .collect::<Result<_>>()?;
        Ok(Rows {
            gets,
            scans,
            ranges,
        })
    }

    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> Result<()> {
        let mut b = self.borrow_mut();
        let values = keys
            .iter()
            .map(|(t, k)| b.get(*t, k))
            .collect::<Result<Vec<_>>>()?;
        let ops = build(&values)?;
        b.commit(&ops)
    }
}

/// Stores may share one backend (two tabs' stores over one database, in tests).
impl<T: AsyncBackend + ?Sized> AsyncBackend for &T {
    async fn read(&self, plan: &Plan) -> Result<Rows> {
        (**self).read(plan).await
    }

    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> Result<()> {
        (**self).commit_after_read(keys, build).await
    }
}

/// Runs a read to its answer (JSON text): the same plans the JS glue runs.
pub async fn read<B: AsyncBackend + ?Sized>(backend: &B, query: Query) -> Result<String> {
    let mut step = Step::Read(query.plan(), query);
    // A lookup by id or by name takes two reads; none takes more.
    for _ in 0..4 {
        match step {
            Step::Done(json) => return Ok(json),
            Step::Read(plan, q) => step = q.finish(backend.read(&plan).await?)?,
        }
    }
    Err(Error::new(
        ErrorKind::Internal,
        "a store read did not settle",
    ))
}

/// One row, read alone.
async fn get<B: AsyncBackend + ?Sized>(b: &B, table: Table, key: &str) -> Result<Option<String>> {
    let plan = Plan {
        gets: vec![(table, key.to_owned())],
        ..Plan::default()
    };
    Ok(b.read(&plan).await?.gets.into_iter().next().flatten())
}

/// One key range, read alone.
async fn scan<B: AsyncBackend + ?Sized>(
    b: &B,
    table: Table,
    prefix: &str,
) -> Result<Vec<(String, String)>> {
    let plan = Plan {
        scans: vec![(table, prefix.to_owned())],
        ..Plan::default()
    };
    Ok(b.read(&plan)
        .await?
        .scans
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// Writes `ops` with no reads (the batch's inserts catch another writer).
async fn write<B: AsyncBackend + ?Sized>(b: &B, ops: Vec<Op>) -> Result<()> {
    let mut ops = Some(ops);
    b.commit_after_read(&[], &mut |_| Ok(ops.take().unwrap_or_default()))
        .await
}

fn json(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::StoreFailed,
            format!("a store answer is not JSON: {e}"),
        )
    })
}

/// The message store ([`super::MessageStore`]) over an [`AsyncBackend`]: submit, append
/// and read back messages and turns; several writers (tabs) may share the backend.
#[derive(Debug, Default)]
pub struct AsyncMessageStore<B> {
    backend: B,
}

impl<B: AsyncBackend> AsyncMessageStore<B> {
    /// A store over `backend`.
    pub fn new(backend: B) -> Self {
        AsyncMessageStore { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Resolves and persists a message (persisted before anything is lowered). Returns
    /// [`compositor::Step::Needs`] when the host must answer first (call again with
    /// `answers`). Another writer that took the sequence number first makes it lay the
    /// message out again after the new last message.
    pub async fn submit(
        &self,
        message: &UserMessage,
        catalog: &CommandCatalog,
        options: &SubmitOptions,
        answers: Option<&Map<String, Value>>,
    ) -> Result<compositor::Step> {
        self.lay_out_and_write(&options.session, |state| {
            let step = compositor::submit(message, catalog, options, state, answers)?;
            let write = match &step {
                compositor::Step::Done(sub) => Some((sub.id.clone(), batch(sub))),
                _ => None,
            };
            Ok((step, write))
        })
        .await
    }

    /// Persists a turn of any role after the session's last message (an assistant reply,
    /// tool results, an instruction; a user's message goes through [`Self::submit`]).
    pub async fn append(&self, turn: &Turn, options: &SubmitOptions) -> Result<TurnAppend> {
        self.lay_out_and_write(&options.session, |state| {
            let a = append_turn(turn, options, state);
            let write = (!a.stored).then(|| (a.id.clone(), turn_layout(&a).0));
            Ok((a, write))
        })
        .await
    }

    /// Persists `turns` after the session's last message in one write, each with the next
    /// sequence number (see [`crate::chat`]); a turn already stored in this session is
    /// passed over.
    pub async fn append_turns(
        &self,
        turns: &[Turn],
        options: &SubmitOptions,
    ) -> Result<Vec<TurnAppend>> {
        let options = SubmitOptions {
            id: None,
            ..options.clone()
        };
        self.lay_out_and_write(&options.session, |state| {
            let appends = append_turns(turns, &options, state);
            let (ops, _) = turns_layout(&appends);
            let write = appends
                .iter()
                .find(|a| !a.stored)
                .map(|a| (a.id.clone(), ops));
            Ok((appends, write))
        })
        .await
    }

    /// Lays rows out from the session's counters and writes them (`lay` gives the answer
    /// and, when there is something to write, the message id and the batch); when another
    /// writer took the sequence number first, lays them out again from the fresh row, as
    /// [`after_conflict`] says.
    async fn lay_out_and_write<T>(
        &self,
        session: &str,
        mut lay: impl FnMut(SessionState) -> Result<(T, Option<(String, Vec<Op>)>)>,
    ) -> Result<T> {
        let mut row = get(&self.backend, Table::Sessions, session).await?;
        for attempt in 0.. {
            let (out, write_op) = lay(session_state(session, row.as_deref())?)?;
            let Some((id, ops)) = write_op else {
                return Ok(out);
            };
            match write(&self.backend, ops).await {
                Ok(()) => return Ok(out),
                Err(e) => {
                    let fresh = get(&self.backend, Table::Sessions, session).await?;
                    after_conflict(e, &id, row.as_deref(), fresh.as_deref(), attempt)?;
                    row = fresh;
                }
            }
        }
        Err(Error::new(
            ErrorKind::Internal,
            "a message write did not settle",
        ))
    }

    /// The message stored under `id`, in the current shape (`NotFound` when none is).
    pub async fn get(&self, id: &str) -> Result<UserMessage> {
        let text = read(&self.backend, Query::Message { id: id.to_owned() }).await?;
        UserMessage::from_json(&text)
    }

    /// Keeps `draft` (the reply `session` is reading so far, and the relayed run reading
    /// it) as its draft (see [`super::drafts`]); returns whether anything was kept.
    pub async fn save_draft(&self, session: &str, draft: &super::drafts::Draft) -> Result<bool> {
        let row = get(&self.backend, Table::Sessions, session).await?;
        let state = session_state(session, row.as_deref())?;
        let (ops, kept) = super::drafts::draft_rows(session, &state, draft);
        write(&self.backend, ops).await?;
        Ok(kept)
    }

    /// `session`'s draft (the reply so far, cut; the run reading it), or `None` (none, or a
    /// turn was stored after it).
    pub async fn draft(&self, session: &str) -> Result<Option<super::drafts::Draft>> {
        let q = Query::Draft {
            session: session.to_owned(),
        };
        match json(&read(&self.backend, q).await?)? {
            Value::Null => Ok(None),
            v => super::drafts::Draft::from_value(v).map(Some),
        }
    }

    /// Drops `session`'s draft.
    pub async fn drop_draft(&self, session: &str) -> Result<()> {
        write(&self.backend, super::drafts::drop_rows(session)).await
    }

    /// Every turn of `session` (user, assistant, tool, system), in order.
    pub async fn thread(&self, session: &str) -> Result<Vec<Turn>> {
        let q = Query::Thread {
            session: session.to_owned(),
        };
        Turn::list_from_value(json(&read(&self.backend, q).await?)?)
    }

    /// The user messages of `session`, in order.
    pub async fn history(&self, session: &str) -> Result<Vec<UserMessage>> {
        Ok(self
            .thread(session)
            .await?
            .into_iter()
            .filter_map(|t| match t {
                Turn::User(m) => Some(m),
                _ => None,
            })
            .collect())
    }

    /// Summaries of the messages of `session` (`{ id, session, seq, part_count, metadata }`),
    /// in order, without reading their parts.
    pub async fn list(&self, session: &str) -> Result<Vec<Value>> {
        let q = Query::List {
            session: session.to_owned(),
        };
        match json(&read(&self.backend, q).await?)? {
            Value::Array(a) => Ok(a),
            _ => Ok(Vec::new()),
        }
    }

    /// One page of `session` (see [`super::MessageStore::page`]).
    pub async fn page(
        &self,
        of: super::pages::PageOf,
        session: &str,
        page: Option<u64>,
        size: u64,
    ) -> Result<super::pages::Page> {
        let q = Query::Page {
            of,
            session: session.to_owned(),
            page,
            digits: super::pages::page_digits(size)?,
        };
        super::pages::Page::from_json(&read(&self.backend, q).await?)
    }

    /// A split-out attachment by content id.
    pub async fn blob(&self, content_id: &str) -> Result<Option<Blob>> {
        get(&self.backend, Table::Blobs, content_id)
            .await?
            .map(|t| blob_from_row(content_id, &t))
            .transpose()
    }

    /// Stores a composer invocation record beside the thread's turns.
    #[cfg(feature = "composer")]
    pub async fn record_invocation(&self, record: &Value) -> Result<()> {
        write(&self.backend, vec![super::invocations::put(record)?]).await
    }

    /// The invocation records of a thread, in composition order.
    #[cfg(feature = "composer")]
    pub async fn invocations(&self, thread_id: &str) -> Result<Vec<Value>> {
        let q = Query::Invocations {
            thread: thread_id.to_owned(),
        };
        match json(&read(&self.backend, q).await?)? {
            Value::Array(a) => Ok(a),
            _ => Ok(Vec::new()),
        }
    }
}

/// The skill store ([`super::SkillTables`]) over an [`AsyncBackend`]: every write runs the
/// skill [`Writer`], its reads inside its write transaction.
#[derive(Debug, Default)]
pub struct AsyncSkillStore<B> {
    backend: B,
}

impl<B: AsyncBackend> AsyncSkillStore<B> {
    /// A store over `backend`.
    pub fn new(backend: B) -> Self {
        AsyncSkillStore { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Runs one write request to completion; returns its result (the stored summary, the
    /// stored artifact, or `{ deleted }`).
    pub async fn write(&self, req: &Request, now: &str) -> Result<Value> {
        let mut w = Writer::new(req.clone(), now);
        loop {
            let keys = w.keys().to_vec();
            let mut result = None;
            let mut more = false;
            let done = self
                .backend
                .commit_after_read(&keys, &mut |values| match w.build(values)? {
                    WritePlan::Write { ops, result: r, .. } => {
                        result = Some(r);
                        Ok(ops)
                    }
                    WritePlan::Read(_) => {
                        // The plan needs more rows: this transaction writes nothing.
                        more = true;
                        Err(Error::new(
                            ErrorKind::StoreFailed,
                            "the write needs more rows",
                        ))
                    }
                })
                .await;
            match (done, result) {
                (Ok(()), Some(r)) => return Ok(r),
                (Ok(()), None) => {
                    return Err(Error::new(ErrorKind::Internal, "a write committed no plan"))
                }
                (Err(_), _) if more => {}
                (Err(e), _) => w.failed(e)?,
            }
        }
    }

    /// Creates a skill with its artifacts; its id and name must be free.
    pub async fn create(&self, skill: &Skill, now: &str) -> Result<Value> {
        self.write(&Request::Create(skill.clone()), now).await
    }

    /// Creates or replaces a skill with its artifacts.
    pub async fn put(&self, skill: &Skill, now: &str) -> Result<Value> {
        self.write(&Request::Put(skill.clone()), now).await
    }

    /// Updates a skill's metadata; its artifacts stay.
    pub async fn update(&self, skill: &Skill, now: &str) -> Result<Value> {
        self.write(&Request::Update(skill.clone()), now).await
    }

    /// Deletes a skill and all its artifacts.
    pub async fn delete(&self, id: &str) -> Result<Value> {
        self.write(&Request::Delete(id.to_owned()), "").await
    }

    /// Migrates this store to the system skills of the seed document `seed`, as
    /// [`super::SkillTables::seed`] does (the same machine); returns the report.
    pub async fn seed(&self, seed: &super::seed::Seed, now: &str) -> Result<Value> {
        use super::seed::{Input, Migrate, Step};
        let (mut m, mut step) = Migrate::seed(seed.clone(), now);
        loop {
            let input = match step {
                Step::Done(report) => return Ok(report),
                Step::Read { table, key } => Input::Row(get(&self.backend, table, &key).await?),
                Step::Scan => Input::Rows(scan(&self.backend, Table::Skills, "").await?),
                Step::Put(s) => Input::Put(self.put(&s, now).await.err()),
                Step::Delete(id) => {
                    self.delete(&id).await?;
                    Input::Done
                }
                Step::Commit(op) => {
                    self.backend
                        .commit_after_read(&[], &mut |_| Ok(vec![op.clone()]))
                        .await?;
                    Input::Done
                }
            };
            step = m.next(input)?;
        }
    }

    /// The SkillSpecs this store's enabled skills carry ([`super::seed::skill_specs`]).
    pub async fn skill_specs(&self) -> Result<Vec<Value>> {
        Ok(super::seed::skill_specs(self.list().await?))
    }

    /// Summaries of every skill, by name.
    pub async fn list(&self) -> Result<Vec<SkillSummary>> {
        let mut out = skills::read_summaries(&scan(&self.backend, Table::Skills, "").await?)?;
        sort_summaries(&mut out);
        Ok(out)
    }

    /// A skill with all its artifacts.
    pub async fn get(&self, id: &str) -> Result<Option<Skill>> {
        let plan = Query::Skill { id: id.to_owned() }.plan();
        let mut rows = self.backend.read(&plan).await?;
        let Some(Some(row)) = rows.gets.pop() else {
            return Ok(None);
        };
        let artifacts = rows.scans.pop().unwrap_or_default();
        skills::assemble(id, &row, &artifacts).map(Some)
    }

    /// A skill by name.
    pub async fn get_by_name(&self, name: &str) -> Result<Option<Skill>> {
        match get(&self.backend, Table::SkillNames, name).await? {
            None => Ok(None),
            Some(v) => {
                let id: String =
                    serde_json::from_str(&v).map_err(|e| bad_row(Table::SkillNames, name, e))?;
                self.get(&id).await
            }
        }
    }

    /// One skill's artifacts of the given kinds (all kinds when empty), by ordinal.
    pub async fn get_artifacts(
        &self,
        skill: &str,
        kinds: &[ArtifactKind],
    ) -> Result<Vec<SkillArtifact>> {
        let plan = Query::Artifacts {
            skill: skill.to_owned(),
            kinds: kinds.iter().map(|k| k.name().to_owned()).collect(),
        }
        .plan();
        let mut out = Vec::new();
        for rows in self.backend.read(&plan).await?.scans {
            for (key, v) in rows {
                out.push(skills::read_artifact_row(&key, &v)?);
            }
        }
        sort_artifacts(&mut out);
        Ok(out)
    }

    /// One artifact by id.
    pub async fn get_artifact(&self, id: &str) -> Result<Option<SkillArtifact>> {
        let Some(k) = get(&self.backend, Table::ArtifactIds, id).await? else {
            return Ok(None);
        };
        let key: String =
            serde_json::from_str(&k).map_err(|e| bad_row(Table::ArtifactIds, id, e))?;
        match get(&self.backend, Table::Artifacts, &key).await? {
            None => Ok(None),
            Some(v) => skills::read_artifact_row(&key, &v).map(Some),
        }
    }

    /// Stores an execution trace (a row [`crate::dispatch::trace::row`] builds); returns it.
    #[cfg(feature = "composer")]
    pub async fn record_trace(&self, trace: Value) -> Result<Value> {
        let r = crate::dispatch::trace::row(trace)?;
        write(&self.backend, vec![super::traces::put(&r)]).await?;
        Ok(Value::Object(r))
    }

    /// The traces of a session (all sessions for `None`), in start order, filtered by
    /// skill and artifact, as JSON lines of rows or as a DSPy dataset (`how`).
    #[cfg(feature = "composer")]
    pub async fn export_traces(
        &self,
        session_id: Option<&str>,
        skill_id: Option<&str>,
        artifact_id: Option<&str>,
        how: crate::dispatch::trace::Export,
    ) -> Result<String> {
        let q = Query::Traces {
            session: session_id.unwrap_or_default().to_owned(),
            skill: skill_id.unwrap_or_default().to_owned(),
            artifact: artifact_id.unwrap_or_default().to_owned(),
            format: match how {
                crate::dispatch::trace::Export::JsonLines => String::new(),
                crate::dispatch::trace::Export::Dspy => "dspy".into(),
            },
        };
        match json(&read(&self.backend, q).await?)? {
            Value::String(lines) => Ok(lines),
            _ => Ok(String::new()),
        }
    }

    /// One page of traces (see [`super::SkillTables::trace_page_json`]): `{ items, next }`
    /// JSON, one key-range read.
    #[cfg(feature = "composer")]
    pub async fn trace_page_json(
        &self,
        session_id: Option<&str>,
        skill_id: Option<&str>,
        artifact_id: Option<&str>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<String> {
        let q = Query::TracePage {
            session: session_id.unwrap_or_default().to_owned(),
            skill: skill_id.unwrap_or_default().to_owned(),
            artifact: artifact_id.unwrap_or_default().to_owned(),
            after: after.unwrap_or_default().to_owned(),
            limit: super::pages::trace_page_size(limit)?,
        };
        read(&self.backend, q).await
    }
}
