//! Store reads as plans a host executes: which rows to get, which key ranges to scan, and
//! what the rows mean — the read side of what [`super::messages`] lays out on write, for
//! hosts whose backend is not a Rust [`super::Backend`] (the JS glue over IndexedDB, a host
//! KV object, a Worker's KV namespace).
//!
//! A read is a small machine: [`Query::plan`] says what to fetch, [`Query::finish`] reads
//! the rows and either answers or asks for another read (a message found by a host id is
//! read again under its key). Key formats stay here and in the layout: a host never builds
//! a key.

use super::messages::{self, blob_from_row, session_heads};
use super::pages::{last_page, page_digits, page_envelope, page_prefix, PageOf};
use super::skills;
use super::{bad_row, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::frame::FIELD;
use crate::json_text::JsonText;
use serde_json::{Map, Value};

/// What a host reads from a message store or a skill store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// One message by its id (a host id or the default id, its key).
    Message {
        /// The id.
        id: String,
    },
    /// A message whose key the id row gave (the second read of [`Query::Message`]).
    MessageAt {
        /// The id asked for (for the error).
        id: String,
        /// Its key.
        key: String,
    },
    /// Every turn of a session, in order.
    Thread {
        /// The session.
        session: String,
    },
    /// The user messages of a session, in order.
    History {
        /// The session.
        session: String,
    },
    /// Summaries of a session's messages (heads only).
    List {
        /// The session.
        session: String,
    },
    /// One page of a session's turns, user messages or summaries: the messages whose
    /// sequence numbers share all but their last `digits` decimal digits (page `n` of
    /// 100-message pages holds sequence numbers `100n ..= 100n + 99`). Answers `{ items,
    /// page, prev, next }`; `prev` and `next` are the neighbouring page numbers within the
    /// session, or `null`.
    Page {
        /// What each item is.
        of: PageOf,
        /// The session.
        session: String,
        /// The page (`None`: the session's last, read from its counter first).
        page: Option<u64>,
        /// A page spans `10^digits` sequence numbers (1 ..= 6).
        digits: u32,
    },
    /// A session's draft, the reply it was reading: its row, `{ run?, seq, turn? }` (`null`
    /// when none stands: see [`super::drafts`]).
    Draft {
        /// The session.
        session: String,
    },
    /// A split-out attachment by content id (`null` when absent).
    Blob {
        /// The content id.
        content_id: String,
    },
    /// The composer invocation records of a thread, in composition order.
    Invocations {
        /// The thread id.
        thread: String,
    },
    /// A skill with all its artifacts (`null` when absent).
    Skill {
        /// The skill id.
        id: String,
    },
    /// A skill by name (`null` when absent).
    SkillByName {
        /// The name.
        name: String,
    },
    /// A skill's summary by name or id (`null` when absent): no artifact rows.
    Summary {
        /// The name or the id.
        name_or_id: String,
    },
    /// The summary of the skill a name row named (the second read of [`Query::Summary`]).
    SummaryAt {
        /// The skill id.
        id: String,
    },
    /// One skill's artifacts of some kinds (all when empty), by ordinal.
    Artifacts {
        /// The skill id.
        skill: String,
        /// The kinds.
        kinds: Vec<String>,
    },
    /// One artifact by id (`null` when absent).
    Artifact {
        /// The artifact id.
        id: String,
    },
    /// The artifact row an id row named (the second read of [`Query::Artifact`]).
    ArtifactAt {
        /// The row key.
        key: String,
    },
    /// Execution traces as JSON lines (a JSON string), filtered by session, skill and
    /// artifact (empty: any).
    Traces {
        /// The session ("": every session).
        session: String,
        /// The skill id ("": any).
        skill: String,
        /// The artifact id ("": any).
        artifact: String,
        /// "" for JSON lines of rows, "dspy" for a DSPy evaluation dataset
        /// ([`crate::dispatch::trace::Export`]).
        format: String,
    },
    /// One page of execution traces, in key order (a session's in start order): the rows
    /// after the cursor `after` ("": the first page), at most `limit`, filtered by skill and
    /// artifact. Answers `{ items, next }`: `next` is the cursor of the following page, or
    /// `null` at the end (a filter can leave a page short, or empty, before the end).
    #[cfg(feature = "composer")]
    TracePage {
        /// The session ("": every session).
        session: String,
        /// The skill id ("": any).
        skill: String,
        /// The artifact id ("": any).
        artifact: String,
        /// The cursor: the key of the last row of the page before ("": none).
        after: String,
        /// At most this many rows (1 ..= [`super::pages::TRACE_PAGE_MAX`]).
        limit: usize,
    },
}

/// Page `n`'s answer, `{ items, page, prev, next }` as JSON text, from the session's counter
/// row and the rows of the page's prefix (`parts` unread for a list).
pub fn page_json(
    of: PageOf,
    session: &str,
    n: u64,
    digits: u32,
    row: Option<&str>,
    heads: Vec<(String, String)>,
    parts: &[(String, String)],
) -> Result<String> {
    let last = last_page(session, row, digits)?;
    Ok(page_envelope(
        &items_json(of, session, heads, parts)?,
        n,
        last,
    ))
}

/// A session's turns, user messages or summaries (JSON text) from the rows of its message
/// and part key ranges (a nested session's rows, which share the prefix, left out).
fn items_json(
    of: PageOf,
    session: &str,
    heads: Vec<(String, String)>,
    parts: &[(String, String)],
) -> Result<String> {
    let heads = session_heads(session, heads);
    match of {
        PageOf::List => summaries_json(heads),
        PageOf::History => messages::assemble_history_json(&heads, parts),
        PageOf::Thread => messages::assemble_many_json(&heads, parts),
    }
}

/// Message heads as their summaries (a JSON array).
fn summaries_json(heads: Vec<(String, String)>) -> Result<String> {
    let mut out = Vec::with_capacity(heads.len());
    for (k, v) in heads {
        let row: Map<String, Value> =
            serde_json::from_str(&v).map_err(|e| bad_row(Table::Messages, &k, e))?;
        out.push(Value::Object(row));
    }
    Ok(Value::Array(out).json_text())
}

/// The rows a read needs: point reads, prefix scans (each in key order) and pages of key
/// ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// `(table, key)` rows to get.
    pub gets: Vec<(Table, String)>,
    /// `(table, prefix)` key ranges to scan.
    pub scans: Vec<(Table, String)>,
    /// Pages of key ranges ([`super::Backend::range`]).
    pub ranges: Vec<RangeRead>,
}

/// One page of a key range: the rows of `table` whose key starts with `prefix` and comes
/// after `after` (from the first for `None`), in key order, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRead {
    /// The table.
    pub table: Table,
    /// The key prefix.
    pub prefix: String,
    /// The key the page starts after.
    pub after: Option<String>,
    /// At most this many rows.
    pub limit: usize,
}

/// What a host read: one value (or none) per get, one list of rows per scan and per range,
/// in the plan's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    /// Per get, the row's value.
    pub gets: Vec<Option<String>>,
    /// Per scan, its `(key, value)` rows in key order.
    pub scans: Vec<Vec<(String, String)>>,
    /// Per range, its `(key, value)` rows in key order.
    pub ranges: Vec<Vec<(String, String)>>,
}

/// What a read comes to after its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Read these rows next, then finish `query` with them.
    Read(Plan, Query),
    /// The answer, as JSON text.
    Done(String),
}

impl Query {
    /// The rows to read first.
    pub fn plan(&self) -> Plan {
        match self {
            // A default id is the message key: one read finds the id row, the head and the
            // parts; a host id needs a second read under the key the id row names.
            Query::Message { id } => Plan {
                gets: vec![(Table::Ids, id.clone()), (Table::Messages, id.clone())],
                scans: vec![(Table::Parts, format!("{id}#"))],
                ranges: Vec::new(),
            },
            Query::MessageAt { key, .. } => Plan {
                gets: vec![(Table::Messages, key.clone())],
                scans: vec![(Table::Parts, format!("{key}#"))],
                ranges: Vec::new(),
            },
            Query::Thread { session } | Query::History { session } => Plan {
                gets: Vec::new(),
                scans: vec![
                    (Table::Messages, format!("{session}/")),
                    (Table::Parts, format!("{session}/")),
                ],
                ranges: Vec::new(),
            },
            Query::List { session } => Plan {
                gets: Vec::new(),
                scans: vec![(Table::Messages, format!("{session}/"))],
                ranges: Vec::new(),
            },
            Query::Page {
                of,
                session,
                page,
                digits,
            } => Plan {
                gets: vec![(Table::Sessions, session.clone())],
                scans: match page {
                    None => Vec::new(),
                    Some(n) => {
                        let prefix = page_prefix(session, *n, *digits);
                        if *of == PageOf::List {
                            vec![(Table::Messages, prefix)]
                        } else {
                            vec![(Table::Messages, prefix.clone()), (Table::Parts, prefix)]
                        }
                    }
                },
                ranges: Vec::new(),
            },
            Query::Draft { session } => Plan {
                gets: vec![
                    (Table::Sessions, session.clone()),
                    (Table::Drafts, session.clone()),
                ],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::Blob { content_id } => Plan {
                gets: vec![(Table::Blobs, content_id.clone())],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::Invocations { thread } => Plan {
                gets: Vec::new(),
                scans: vec![(Table::Invocations, super::invocations_prefix(thread))],
                ranges: Vec::new(),
            },
            Query::Skill { id } => Plan {
                gets: vec![(Table::Skills, id.clone())],
                scans: vec![(Table::Artifacts, format!("{id}/"))],
                ranges: Vec::new(),
            },
            Query::SkillByName { name } => Plan {
                gets: vec![(Table::SkillNames, name.clone())],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::Summary { name_or_id } => Plan {
                gets: vec![
                    (Table::SkillNames, name_or_id.clone()),
                    (Table::Skills, name_or_id.clone()),
                ],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::SummaryAt { id } => Plan {
                gets: vec![(Table::Skills, id.clone())],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::Artifacts { skill, kinds } => Plan {
                gets: Vec::new(),
                scans: if kinds.is_empty() {
                    vec![(Table::Artifacts, format!("{skill}/"))]
                } else {
                    kinds
                        .iter()
                        .map(|k| (Table::Artifacts, format!("{skill}/{k}/")))
                        .collect()
                },
                ranges: Vec::new(),
            },
            Query::Artifact { id } => Plan {
                gets: vec![(Table::ArtifactIds, id.clone())],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::ArtifactAt { key } => Plan {
                gets: vec![(Table::Artifacts, key.clone())],
                scans: Vec::new(),
                ranges: Vec::new(),
            },
            Query::Traces { session, .. } => Plan {
                gets: Vec::new(),
                scans: vec![(Table::Traces, super::traces_prefix(session))],
                ranges: Vec::new(),
            },
            // One more row than the page holds says whether another page follows.
            #[cfg(feature = "composer")]
            Query::TracePage {
                session,
                after,
                limit,
                ..
            } => Plan {
                gets: Vec::new(),
                scans: Vec::new(),
                ranges: vec![RangeRead {
                    table: Table::Traces,
                    prefix: super::traces_prefix(session),
                    after: Some(after.clone()).filter(|a| !a.is_empty()),
                    limit: limit.saturating_add(1),
                }],
            },
        }
    }

    /// The answer from the rows of [`Self::plan`], or the next read.
    pub fn finish(&self, mut rows: Rows) -> Result<Step> {
        let not_found = |id: &str| {
            Error::new(ErrorKind::NotFound, format!("no message with id `{id}`")).with("id", id)
        };
        let scans_read = rows.scans.len();
        let mut scan = |i: usize| std::mem::take(rows.scans.get_mut(i).unwrap_or(&mut Vec::new()));
        match self {
            Query::Message { id } => {
                let Some(Some(key_row)) = rows.gets.first() else {
                    return Err(not_found(id));
                };
                let key: String =
                    serde_json::from_str(key_row).map_err(|e| bad_row(Table::Ids, id, e))?;
                let parts = scan(0);
                if key != *id {
                    let next = Query::MessageAt {
                        id: id.clone(),
                        key,
                    };
                    return Ok(Step::Read(next.plan(), next));
                }
                let Some(Some(head)) = rows.gets.get(1) else {
                    return Err(not_found(id));
                };
                messages::assemble_json(&key, head, &parts).map(Step::Done)
            }
            Query::MessageAt { id, key } => {
                let parts = scan(0);
                let Some(Some(head)) = rows.gets.first() else {
                    return Err(not_found(id));
                };
                messages::assemble_json(key, head, &parts).map(Step::Done)
            }
            Query::Thread { session } => {
                items_json(PageOf::Thread, session, scan(0), &scan(1)).map(Step::Done)
            }
            Query::History { session } => {
                items_json(PageOf::History, session, scan(0), &scan(1)).map(Step::Done)
            }
            Query::List { session } => {
                items_json(PageOf::List, session, scan(0), &[]).map(Step::Done)
            }
            Query::Page {
                of,
                session,
                page,
                digits,
            } => {
                let row = rows.gets.first().and_then(Option::as_deref);
                let Some(n) = page else {
                    let next = Query::Page {
                        of: *of,
                        session: session.clone(),
                        page: Some(last_page(session, row, *digits)?),
                        digits: *digits,
                    };
                    return Ok(Step::Read(next.plan(), next));
                };
                page_json(*of, session, *n, *digits, row, scan(0), &scan(1)).map(Step::Done)
            }
            Query::Draft { session } => {
                let got = |i: usize| rows.gets.get(i).and_then(Option::as_deref);
                let state = super::messages::session_state(session, got(0))?;
                let row = super::drafts::standing(session, &state, got(1))?;
                Ok(Step::Done(row.unwrap_or("null").to_owned()))
            }
            Query::Blob { content_id } => match rows.gets.first() {
                // The row is the answer (`{ content_id, mime, size, data }`), once checked.
                Some(Some(text)) => {
                    blob_from_row(content_id, text)?;
                    Ok(Step::Done(text.clone()))
                }
                _ => Ok(Step::Done("null".into())),
            },
            Query::Invocations { .. } => {
                let mut out = String::from("[");
                for (n, (k, v)) in scan(0).into_iter().enumerate() {
                    serde_json::from_str::<serde::de::IgnoredAny>(&v)
                        .map_err(|e| bad_row(Table::Invocations, &k, e))?;
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(&v);
                }
                out.push(']');
                Ok(Step::Done(out))
            }
            Query::Skill { id } => match rows.gets.first() {
                Some(Some(row)) => {
                    let s = skills::assemble(id, row, &scan(0))?;
                    Ok(Step::Done(s.to_value().json_text()))
                }
                _ => Ok(Step::Done("null".into())),
            },
            Query::SkillByName { name } => match rows.gets.first() {
                Some(Some(id)) => read_next(Table::SkillNames, name, id, |id| Query::Skill { id }),
                _ => Ok(Step::Done("null".into())),
            },
            Query::Summary { name_or_id } => match (rows.gets.first(), rows.gets.get(1)) {
                (_, Some(Some(row))) => summary(name_or_id, row),
                (Some(Some(id)), _) => read_next(Table::SkillNames, name_or_id, id, |id| {
                    Query::SummaryAt { id }
                }),
                _ => Ok(Step::Done("null".into())),
            },
            Query::SummaryAt { id } => match rows.gets.first() {
                Some(Some(row)) => summary(id, row),
                _ => Ok(Step::Done("null".into())),
            },
            Query::Artifacts { .. } => {
                let mut arts = Vec::new();
                for i in 0..scans_read {
                    for (k, v) in scan(i) {
                        arts.push(skills::read_artifact_row(&k, &v)?);
                    }
                }
                crate::skill::model::sort_artifacts(&mut arts);
                Ok(Step::Done(
                    Value::Array(arts.iter().map(|a| a.to_value()).collect()).json_text(),
                ))
            }
            Query::Artifact { id } => match rows.gets.first() {
                Some(Some(key)) => {
                    read_next(Table::ArtifactIds, id, key, |key| Query::ArtifactAt { key })
                }
                _ => Ok(Step::Done("null".into())),
            },
            Query::ArtifactAt { key } => match rows.gets.first() {
                Some(Some(row)) => Ok(Step::Done(
                    skills::read_artifact_row(key, row)?.to_value().json_text(),
                )),
                _ => Ok(Step::Done("null".into())),
            },
            Query::Traces {
                skill,
                artifact,
                format,
                ..
            } => traces(&scan(0), skill, artifact, format),
            #[cfg(feature = "composer")]
            Query::TracePage {
                skill,
                artifact,
                limit,
                ..
            } => {
                let rows = rows.ranges.into_iter().next().unwrap_or_default();
                trace_page(rows, skill, artifact, *limit)
            }
        }
    }

    /// The query from its wire form: its kind and its fields, each ended by a NUL
    /// (`message NUL id NUL`; see [`Self::to_text`] for every kind).
    pub fn from_text(text: &str) -> Result<Query> {
        let mut f = text.strip_suffix(FIELD).unwrap_or(text).split(FIELD);
        let kind = f.next().unwrap_or("");
        let mut next = || f.next().map(str::to_owned).unwrap_or_default();
        let q = match kind {
            "message" => Query::Message { id: next() },
            "message_at" => {
                let key = next();
                Query::MessageAt { id: next(), key }
            }
            "thread" => Query::Thread { session: next() },
            "history" => Query::History { session: next() },
            "list" => Query::List { session: next() },
            "page" => {
                let of = PageOf::parse(&next())?;
                let session = next();
                let number = |t: String| t.parse::<usize>().map(|n| n as u64).ok();
                let page = next();
                let page = match page.as_str() {
                    "" => None,
                    _ => Some(number(page).ok_or_else(bad_page)?),
                };
                let digits = page_digits(number(next()).ok_or_else(bad_page)?)?;
                Query::Page {
                    of,
                    session,
                    page,
                    digits,
                }
            }
            "blob" => Query::Blob { content_id: next() },
            "draft" => Query::Draft { session: next() },
            "invocations" => Query::Invocations { thread: next() },
            "skill" => Query::Skill { id: next() },
            "skill_by_name" => Query::SkillByName { name: next() },
            "summary" => Query::Summary { name_or_id: next() },
            "summary_at" => Query::SummaryAt { id: next() },
            "artifact" => Query::Artifact { id: next() },
            "artifact_at" => Query::ArtifactAt { key: next() },
            "traces" => {
                let session = next();
                let skill = next();
                let artifact = next();
                Query::Traces {
                    session,
                    skill,
                    artifact,
                    format: next(),
                }
            }
            #[cfg(not(feature = "composer"))]
            "trace_page" => return Err(needs_composer()),
            #[cfg(feature = "composer")]
            "trace_page" => {
                let session = next();
                let skill = next();
                let artifact = next();
                let after = next();
                let limit = super::pages::trace_page_size(next().parse().unwrap_or(0))?;
                Query::TracePage {
                    session,
                    skill,
                    artifact,
                    after,
                    limit,
                }
            }
            "artifacts" => {
                let skill = next();
                let kinds = f.map(str::to_owned).collect();
                Query::Artifacts { skill, kinds }
            }
            _ => return Err(Error::new(ErrorKind::Internal, "unknown store read")),
        };
        Ok(q)
    }

    /// The query's wire form: its kind, then its fields, each ended by a NUL (keys never
    /// hold a NUL: submit and the stores refuse them).
    pub fn to_text(&self) -> String {
        let page_fields;
        #[cfg(feature = "composer")]
        let limit_field;
        let (kind, fields): (&str, Vec<&str>) = match self {
            #[cfg(feature = "composer")]
            Query::TracePage {
                session,
                skill,
                artifact,
                after,
                limit,
            } => {
                limit_field = limit.to_string();
                (
                    "trace_page",
                    vec![session, skill, artifact, after, &limit_field],
                )
            }
            Query::Page {
                of,
                session,
                page,
                digits,
            } => {
                page_fields = [
                    page.map(|p| p.to_string()).unwrap_or_default(),
                    10u64.saturating_pow(*digits).to_string(),
                ];
                (
                    "page",
                    vec![of.name(), session, &page_fields[0], &page_fields[1]],
                )
            }
            Query::Message { id } => ("message", vec![id]),
            Query::MessageAt { id, key } => ("message_at", vec![key, id]),
            Query::Thread { session } => ("thread", vec![session]),
            Query::History { session } => ("history", vec![session]),
            Query::List { session } => ("list", vec![session]),
            Query::Blob { content_id } => ("blob", vec![content_id]),
            Query::Draft { session } => ("draft", vec![session]),
            Query::Invocations { thread } => ("invocations", vec![thread]),
            Query::Skill { id } => ("skill", vec![id]),
            Query::SkillByName { name } => ("skill_by_name", vec![name]),
            Query::Summary { name_or_id } => ("summary", vec![name_or_id]),
            Query::SummaryAt { id } => ("summary_at", vec![id]),
            Query::Artifact { id } => ("artifact", vec![id]),
            Query::ArtifactAt { key } => ("artifact_at", vec![key]),
            Query::Traces {
                session,
                skill,
                artifact,
                format,
            } => ("traces", vec![session, skill, artifact, format]),
            Query::Artifacts { skill, kinds } => (
                "artifacts",
                std::iter::once(skill.as_str())
                    .chain(kinds.iter().map(String::as_str))
                    .collect(),
            ),
        };
        let mut out = String::from(kind);
        out.push(FIELD);
        for f in fields {
            out.push_str(f);
            out.push(FIELD);
        }
        out
    }
}

fn bad_page() -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        "a page read names its kind, session, page number and page size",
    )
}

/// Runs a read over a Rust backend the way a host does: plan, read, finish, until done.
pub fn run<B: super::Backend + ?Sized>(b: &B, q: Query) -> Result<String> {
    let mut step = Step::Read(q.plan(), q);
    loop {
        match step {
            Step::Done(s) => return Ok(s),
            Step::Read(plan, q) => {
                let mut rows = Rows::default();
                for (t, k) in &plan.gets {
                    rows.gets.push(b.get(*t, k)?);
                }
                for (t, p) in &plan.scans {
                    rows.scans.push(b.scan(*t, p)?);
                }
                for r in &plan.ranges {
                    rows.ranges
                        .push(b.range(r.table, &r.prefix, r.after.as_deref(), r.limit)?);
                }
                step = q.finish(rows)?;
            }
        }
    }
}

/// The read a lookup row leads to: `row` (in `table` under `key`) holds the JSON string that
/// `next` reads by.
fn read_next(
    table: Table,
    key: &str,
    row: &str,
    next: impl FnOnce(String) -> Query,
) -> Result<Step> {
    let to: String = serde_json::from_str(row).map_err(|e| bad_row(table, key, e))?;
    let q = next(to);
    Ok(Step::Read(q.plan(), q))
}

/// A skill row as its summary (JSON).
fn summary(key: &str, row: &str) -> Result<Step> {
    let list = skills::read_summaries(&[(key.to_owned(), row.to_owned())])?;
    Ok(Step::Done(match list.first() {
        Some(s) => skills::text(&s.to_value()),
        None => "null".into(),
    }))
}

/// Trace rows as JSON lines (a JSON string), filtered by skill and artifact, in the
/// export `format` ("" rows, "dspy" a DSPy dataset).
#[cfg(feature = "composer")]
fn traces(rows: &[(String, String)], skill: &str, artifact: &str, format: &str) -> Result<Step> {
    use crate::dispatch::trace::{export, Export};
    let how = match format {
        "" | "jsonl" => Export::JsonLines,
        "dspy" => Export::Dspy,
        other => {
            return Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("unknown trace export format `{other}`: \"jsonl\" or \"dspy\""),
            )
            .at("format"))
        }
    };
    let lines = export(
        rows.iter().map(|(_, v)| v.as_str()),
        Some(skill).filter(|s| !s.is_empty()),
        Some(artifact).filter(|s| !s.is_empty()),
        how,
    )?;
    Ok(Step::Done(Value::String(lines).json_text()))
}

/// Trace rows are read by the Skill Composer's module.
#[cfg(not(feature = "composer"))]
fn traces(_: &[(String, String)], _: &str, _: &str, _: &str) -> Result<Step> {
    Err(needs_composer())
}

/// A page of trace rows (`{ items, next }`) from a range read of `limit + 1` rows.
#[cfg(feature = "composer")]
fn trace_page(
    rows: Vec<(String, String)>,
    skill: &str,
    artifact: &str,
    limit: usize,
) -> Result<Step> {
    super::traces::page_json(rows, skill, artifact, limit).map(Step::Done)
}

/// The error of a trace read in a module without the Skill Composer.
#[cfg(not(feature = "composer"))]
fn needs_composer() -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        "traces are part of the Skill Composer: import everything from \"promptloom/composer\"",
    )
    .with("needs", "promptloom/composer")
}

/// One `[table, key, …tail]` entry of a plan's JSON (after a comma when `sep`).
fn entry(out: &mut String, sep: bool, table: Table, key: &str, tail: &str) {
    if sep {
        out.push(',');
    }
    out.push_str("[\"");
    out.push_str(table.name());
    out.push_str("\",");
    out.push_str(&Value::from(key).json_text());
    out.push_str(tail);
    out.push(']');
}

impl Plan {
    /// `{"gets":[[table,key]],"scans":[[table,prefix]]}` as JSON text; a range is a scan
    /// with its cursor and count, `[table, prefix, after | null, limit]`, after the scans.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"gets\":[");
        for (i, (t, k)) in self.gets.iter().enumerate() {
            entry(&mut out, i > 0, *t, k, "");
        }
        out.push_str("],\"scans\":[");
        for (i, (t, k)) in self.scans.iter().enumerate() {
            entry(&mut out, i > 0, *t, k, "");
        }
        // Only trace pages read ranges (the Skill Composer's).
        #[cfg(feature = "composer")]
        for (i, r) in self.ranges.iter().enumerate() {
            let after = r.after.as_deref().map_or(Value::Null, Value::from);
            let tail = format!(",{},{}", after.json_text(), r.limit);
            entry(
                &mut out,
                i + self.scans.len() > 0,
                r.table,
                &r.prefix,
                &tail,
            );
        }
        out.push_str("]}");
        out
    }
}

/// One step of a read over its wire forms (what the JS face calls): `query` in its text
/// form; with `rows` `None`, the first plan; with rows (NUL-framed: see [`rows_from_text`]),
/// the answer or the next read. Out: `R`, the plan's JSON, a NUL and the next query's text;
/// or `D` and the answer's JSON.
pub fn step_text(query: &str, rows: Option<&str>) -> Result<String> {
    let q = Query::from_text(query)?;
    let step = match rows {
        None => Step::Read(q.plan(), q),
        Some(text) => {
            let scans = q.plan().scans.len();
            q.finish(rows_from_text(text, scans)?)?
        }
    };
    Ok(match step {
        Step::Read(plan, next) => format!("R{}{FIELD}{}", plan.to_json(), next.to_text()),
        Step::Done(json) => format!("D{json}"),
    })
}

/// Rows in the NUL-framed text the glue writes (row values are JSON text and keys never
/// hold a raw NUL, so no escaping): the number of gets, then per get `-` (absent) or `+`
/// and the value; then per scan (the plan's scans, then its ranges: they travel as scans)
/// its row count and its keys and values; every field ends with a NUL. The first `scans`
/// lists are the plan's scans, the rest its ranges.
pub fn rows_from_text(text: &str, scans: usize) -> Result<Rows> {
    let bad = || Error::new(ErrorKind::Internal, "malformed store rows");
    let mut it = text.split(FIELD);
    let mut rows = Rows::default();
    let n: usize = it.next().and_then(|c| c.parse().ok()).ok_or_else(bad)?;
    for _ in 0..n {
        let f = it.next().ok_or_else(bad)?;
        rows.gets.push(f.strip_prefix('+').map(str::to_owned));
    }
    while let Some(count) = it.next() {
        if count.is_empty() {
            break;
        }
        let count: usize = count.parse().map_err(|_| bad())?;
        let mut scan = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            let (Some(k), Some(v)) = (it.next(), it.next()) else {
                return Err(bad());
            };
            scan.push((k.to_owned(), v.to_owned()));
        }
        if rows.scans.len() < scans {
            rows.scans.push(scan);
        } else {
            rows.ranges.push(scan);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryBackend, MessageStore};

    #[test]
    fn pages_read_one_prefix_each_and_cover_the_thread() {
        let mut store = MessageStore::new(MemoryBackend::default());
        let catalog = crate::compositor::CommandCatalog::with_builtins();
        for (session, n) in [("s", 250), ("s/0000000001", 3), ("t", 0)] {
            for i in 0..n {
                let m = crate::message::UserMessage::from_value(serde_json::json!({
                    "parts": [{ "type": "text", "text": format!("m{i}") }]
                }))
                .unwrap(); // ok: test
                let o = crate::compositor::SubmitOptions::from_value(
                    serde_json::json!({ "session": session, "now": 5 }),
                )
                .unwrap(); // ok: test
                assert!(matches!(
                    store.submit(&m, &catalog, &o, None),
                    Ok(crate::compositor::Step::Done(_))
                ));
            }
        }
        let page = |of, s: &str, p, size| store.page(of, s, p, size).unwrap(); // ok: test
                                                                               // Seq 1..=250 in pages of 100: 1..=99, 100..=199, 200..=250.
        let last = page(PageOf::Thread, "s", None, 100);
        assert_eq!(
            (last.page, last.prev, last.next, last.items.len()),
            (2, Some(1), None, 51)
        );
        let first = page(PageOf::History, "s", Some(0), 100);
        assert_eq!(
            (first.prev, first.next, first.items.len()),
            (None, Some(1), 99)
        );
        let mid = page(PageOf::List, "s", Some(1), 100);
        assert_eq!(mid.items.len(), 100);
        assert_eq!(mid.items[0]["seq"], 100);
        // Every page of ten, in order, is the thread; the nested session is not in it.
        let mut all = Vec::new();
        let mut at = Some(0);
        while let Some(p) = at {
            let got = page(PageOf::Thread, "s", Some(p), 10);
            all.extend(got.items);
            at = got.next;
        }
        let thread: Vec<Value> = store
            .thread("s")
            .unwrap()
            .iter()
            .map(|t| t.to_value())
            .collect(); // ok: test
        assert_eq!(all, thread);
        assert_eq!(all.len(), 250);
        // An empty session has one empty page; a page past the end points back.
        let empty = page(PageOf::Thread, "t", None, 10);
        assert_eq!(
            (empty.page, empty.prev, empty.next, empty.items.len()),
            (0, None, None, 0)
        );
        let past = page(PageOf::Thread, "s", Some(9), 100);
        assert_eq!((past.prev, past.next, past.items.len()), (Some(2), None, 0));
        // Sizes are powers of ten.
        let e = store.page(PageOf::Thread, "s", None, 50).unwrap_err(); // ok: test
        assert_eq!(
            (e.kind(), e.path()),
            (ErrorKind::InvalidOptions, Some("pageSize"))
        );
        // The wire form round-trips.
        let q = Query::Page {
            of: PageOf::List,
            session: "a/b".into(),
            page: Some(7),
            digits: 3,
        };
        assert_eq!(Query::from_text(&q.to_text()).unwrap(), q); // ok: test
        let q = Query::Page {
            of: PageOf::History,
            session: "".into(),
            page: None,
            digits: 1,
        };
        assert_eq!(Query::from_text(&q.to_text()).unwrap(), q); // ok: test
    }

    #[test]
    fn reads_answer_what_the_rust_store_answers() {
        let mut store = MessageStore::new(MemoryBackend::default());
        let opts = |id: Option<&str>| {
            crate::compositor::SubmitOptions::from_value(serde_json::json!({
                "session": "s", "id": id, "now": 5
            }))
            .unwrap() // ok: test
        };
        let msg = |t: &str| {
            crate::message::UserMessage::from_value(serde_json::json!({
                "parts": [{ "type": "text", "text": t }]
            }))
            .unwrap() // ok: test
        };
        let catalog = crate::compositor::CommandCatalog::with_builtins();
        let mut ids = Vec::new();
        for (text, id) in [("one", None), ("two", Some("host-7"))] {
            match store.submit(&msg(text), &catalog, &opts(id), None) {
                Ok(crate::compositor::Step::Done(sub)) => ids.push(sub.id),
                other => panic!("submit: {other:?}"),
            }
        }
        let back = store.backend();
        assert_eq!(ids[1], "host-7");
        for id in &ids {
            let got = run(back, Query::Message { id: id.into() }).unwrap(); // ok: test
            assert_eq!(got, store.get(id).unwrap().to_json()); // ok: test
        }
        let e = run(back, Query::Message { id: "nope".into() }).unwrap_err(); // ok: test
        assert_eq!(e.kind(), ErrorKind::NotFound);
        let thread = run(
            back,
            Query::Thread {
                session: "s".into(),
            },
        )
        .unwrap(); // ok: test
        let v: Vec<Value> = serde_json::from_str(&thread).unwrap(); // ok: test
        assert_eq!(v.len(), 2);
        let list = run(
            back,
            Query::List {
                session: "s".into(),
            },
        )
        .unwrap(); // ok: test
        let want: Vec<Value> = store.list("s").unwrap(); // ok: test
        assert_eq!(serde_json::from_str::<Vec<Value>>(&list).unwrap(), want); // ok: test
        assert_eq!(
            run(
                back,
                Query::Blob {
                    content_id: "x".into()
                }
            )
            .unwrap(),
            "null"
        ); // ok: test
    }

    #[test]
    fn the_wire_forms_round_trip() {
        for q in [
            Query::Message { id: "a".into() },
            Query::MessageAt {
                id: "a".into(),
                key: "s/1".into(),
            },
            Query::Thread {
                session: "s".into(),
            },
            Query::History {
                session: "s".into(),
            },
            Query::List {
                session: "s".into(),
            },
            Query::Blob {
                content_id: "c".into(),
            },
            Query::Draft {
                session: "s".into(),
            },
            Query::Invocations { thread: "t".into() },
            Query::Skill { id: "i".into() },
            Query::SkillByName { name: "n".into() },
            Query::Summary {
                name_or_id: "n".into(),
            },
            Query::SummaryAt { id: "i".into() },
            Query::Artifacts {
                skill: "i".into(),
                kinds: vec!["description".into()],
            },
            Query::Artifacts {
                skill: "i".into(),
                kinds: vec![],
            },
            Query::Artifact { id: "a".into() },
            Query::ArtifactAt {
                key: "i/description/a".into(),
            },
            Query::Traces {
                session: "s".into(),
                skill: "k".into(),
                artifact: String::new(),
                format: "dspy".into(),
            },
        ] {
            assert_eq!(Query::from_text(&q.to_text()).unwrap(), q); // ok: test
        }
        let rows = rows_from_text("2\0+\"v\"\0-\x001\0k\0{}\0", 1).unwrap(); // ok: test
        assert_eq!(rows.gets, vec![Some("\"v\"".to_owned()), None]);
        assert_eq!(rows.scans, vec![vec![("k".to_owned(), "{}".to_owned())]]);
        assert!(rows_from_text("x", 0).is_err());
    }
}
