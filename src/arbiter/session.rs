//! Sessions and lanes: the two outer levels of the seed's hierarchy (session → lane →
//! skill → LLM step), as state machines a host drives and draws, over one persisted,
//! append-only log.
//!
//! - **The session** starts, heartbeats and stops. Opening a session whose log ends while
//!   it was still active is a crash recovery: every lane resumes at its last accepted step
//!   (the log is replayed through the arbiter) and a `recovered` event is logged.
//! - **A lane** moves through [`LANE_MACHINE`] on events the host emits (`request` when a
//!   model call goes out, `tool_result` when results go back, `response`, `fail`, `cancel`)
//!   and on those the arbiter emits (an accepted tool call → `waiting_tool`, an ended skill
//!   run → `idle`). One skill runs per lane, under the arbiter.
//! - **The log** is one row per event in the `session_log` table (`<session>/<seq>`), each
//!   written as an insert: two writers of one session cannot both land a step. A proposal
//!   record an accepted `choir.propose.*` call makes is written beside its event, pending
//!   approval ([`super::approval`]).
//!
//! The core has no clock: every call takes the host's time (epoch milliseconds).

use super::approval;
use super::{Arbiter, Event, Outcome, Proposal, Run, SkillRegistry, Status};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::store::{Backend, Op, Table};
use litemap::LiteMap;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The lane machine: `(from, event, to)`. `stopped` is where every lane is while its
/// session is stopped (no event leaves it; reopening the session puts lanes back to `idle`).
pub const LANE_MACHINE: &[(&str, &str, &str)] = &[
    ("idle", "request", "reasoning"),
    ("reasoning", "tool_call", "waiting_tool"),
    ("reasoning", "response", "idle"),
    ("reasoning", "request", "reasoning"),
    ("waiting_tool", "tool_call", "waiting_tool"),
    ("waiting_tool", "tool_result", "reasoning"),
    ("reasoning", "fail", "error"),
    ("waiting_tool", "fail", "error"),
    ("error", "request", "reasoning"),
    ("reasoning", "cancel", "idle"),
    ("waiting_tool", "cancel", "idle"),
    ("error", "cancel", "idle"),
];

/// The session machine: `(from, event, to)`; `recovered` is taken when a session is opened
/// from a log that ends while it was active (a crash).
pub const SESSION_MACHINE: &[(&str, &str, &str)] = &[
    ("new", "started", "active"),
    ("active", "heartbeat", "active"),
    ("active", "recovered", "active"),
    ("active", "stopped", "stopped"),
    ("stopped", "started", "active"),
];

/// The lane states (the first is where a lane starts).
pub const LANE_STATES: [&str; 5] = ["idle", "reasoning", "waiting_tool", "error", "stopped"];

/// The longest session or lane name.
const MAX_NAME: usize = 200;

/// The scan prefix of a session's log rows.
pub fn log_prefix(session: &str) -> String {
    format!("{session}/")
}

pub use crate::store::session_log_key as log_key;

/// Checks a session or lane name: 1–200 characters, no `/`, no control character.
pub fn check_name(name: &str, what: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.chars().count() > MAX_NAME
        || name.contains('/')
        || name.chars().any(char::is_control);
    if bad {
        return Err(Error::new(
            ErrorKind::InvalidRequest,
            format!("a {what} name is 1–{MAX_NAME} characters, without `/` or control characters"),
        )
        .with(what, name));
    }
    Ok(())
}

fn lane_to(from: &str, event: &str) -> Option<&'static str> {
    LANE_MACHINE
        .iter()
        .find(|(f, e, _)| *f == from && *e == event)
        .map(|(_, _, t)| *t)
}

fn lane_events(from: &str) -> Vec<&'static str> {
    LANE_MACHINE
        .iter()
        .filter(|(f, _, _)| *f == from)
        .map(|(_, e, _)| *e)
        .collect()
}

/// A session: its lifecycle, its lanes, the arbiter running their skills, and its log.
#[derive(Debug, Clone)]
pub struct Session {
    id: String,
    registry: Arc<SkillRegistry>,
    retries: u32,
    arbiter: Arbiter,
    status: &'static str,
    lanes: LiteMap<String, &'static str>,
    started_at: u64,
    last_seen: u64,
    recoveries: u32,
    log: Vec<Value>,
    saved: usize,
    unsaved: Vec<Op>,
}

fn diverged(seq: usize, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::StoreFailed,
        format!("the session log does not replay at event {seq}: {why}"),
    )
    .with("reason", "log-diverged")
    .with("seq", seq as u64)
}

impl Session {
    /// Opens session `id` from its stored log rows (`(key, value)` in key order, as a scan
    /// of [`log_prefix`] returns them) at time `at`: a new session is `started`; a log that
    /// ends while the session was active is replayed and `recovered` (every lane resumes at
    /// its last accepted step); a stopped one is `started` again. The events this logs are
    /// in [`Session::ops`] until the host writes them.
    pub fn open(
        registry: Arc<SkillRegistry>,
        retries: u32,
        id: &str,
        rows: &[(String, String)],
        at: u64,
    ) -> Result<Session> {
        check_name(id, "session")?;
        let mut s = Session::replay(registry, retries, id, rows)?;
        if s.status == "active" {
            let last = s.last_seen;
            s.recoveries += 1;
            s.push(
                at,
                json!({"type": "session", "event": "recovered", "last_seen": last}),
            );
        } else {
            s.status = "active";
            s.started_at = at;
            for l in s.lanes.iter_mut().map(|(_, l)| l) {
                *l = "idle";
            }
            s.push(at, json!({"type": "session", "event": "started"}));
        }
        Ok(s)
    }

    /// The session as its log says it is, nothing appended.
    fn replay(
        registry: Arc<SkillRegistry>,
        retries: u32,
        id: &str,
        rows: &[(String, String)],
    ) -> Result<Session> {
        let mut s = Session {
            id: id.to_owned(),
            arbiter: Arbiter::new(registry.clone()).with_retry_budget(retries),
            registry,
            retries,
            status: "new",
            lanes: LiteMap::new(),
            started_at: 0,
            last_seen: 0,
            recoveries: 0,
            log: Vec::with_capacity(rows.len()),
            saved: 0,
            unsaved: Vec::new(),
        };
        for (i, (key, text)) in rows.iter().enumerate() {
            if *key != log_key(id, i as u64) {
                return Err(diverged(i, format!("row `{key}` is out of sequence")));
            }
            let e: Value = serde_json::from_str(text)
                .map_err(|e| crate::store::bad_row(Table::SessionLog, key, e))?;
            s.apply(i, &e)?;
            s.log.push(e);
        }
        s.saved = s.log.len();
        Ok(s)
    }

    /// Re-applies one logged event.
    fn apply(&mut self, seq: usize, e: &Value) -> Result<()> {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        let at = e.get("at").and_then(Value::as_u64).unwrap_or(0);
        self.last_seen = self.last_seen.max(at);
        match s("type") {
            "session" => match s("event") {
                "started" => {
                    self.status = "active";
                    self.started_at = at;
                    for l in self.lanes.iter_mut().map(|(_, l)| l) {
                        *l = "idle";
                    }
                }
                "stopped" => {
                    self.status = "stopped";
                    for l in self.lanes.iter_mut().map(|(_, l)| l) {
                        *l = "stopped";
                    }
                }
                "recovered" => self.recoveries += 1,
                "heartbeat" => {}
                other => return Err(diverged(seq, format!("unknown session event `{other}`"))),
            },
            "lane" => {
                let lane = s("lane");
                let from = self.lanes.get(lane).copied().unwrap_or("idle");
                match lane_to(from, s("event")) {
                    Some(to) if to == s("to") => {
                        self.lanes.insert(lane.to_owned(), to);
                    }
                    _ => {
                        return Err(diverged(
                            seq,
                            format!("lane `{lane}` cannot take `{}` from `{from}`", s("event")),
                        ))
                    }
                }
            }
            "skill" => {
                let lane = s("lane").to_owned();
                let ev = Event::from_value(e.get("event").unwrap_or(&Value::Null))
                    .map_err(|x| diverged(seq, x.message()))?;
                let logged = e.pointer("/event/accepted").and_then(Value::as_bool);
                let accepted = match ev.kind {
                    "started" => {
                        self.arbiter
                            .start(
                                &lane,
                                ev.skill.as_deref().unwrap_or(""),
                                ev.input.clone().unwrap_or(Value::Null),
                            )
                            .map_err(|x| diverged(seq, x.message()))?;
                        true
                    }
                    "cancelled" => {
                        self.arbiter
                            .cancel(&lane)
                            .map_err(|x| diverged(seq, x.message()))?;
                        true
                    }
                    _ => {
                        let p = ev.proposal.clone().ok_or_else(|| {
                            diverged(seq, "a proposal event without its proposal")
                        })?;
                        self.arbiter
                            .propose(&lane, p)
                            .map_err(|x| diverged(seq, x.message()))?
                            .accepted
                    }
                };
                if logged.is_some_and(|l| l != accepted) {
                    return Err(diverged(
                        seq,
                        "the registry now decides this proposal differently",
                    ));
                }
                self.lanes.entry(lane).or_insert("idle");
            }
            other => return Err(diverged(seq, format!("unknown event type `{other}`"))),
        }
        Ok(())
    }

    /// Appends an event (its `seq` and `at` first), and its row to the unsaved writes.
    fn push(&mut self, at: u64, body: Value) {
        let seq = self.log.len() as u64;
        let mut o = Map::new();
        o.insert("seq".into(), seq.into());
        o.insert("at".into(), at.into());
        if let Value::Object(b) = body {
            o.extend(b);
        }
        let e = Value::Object(o);
        self.last_seen = self.last_seen.max(at);
        self.unsaved.push(Op::Insert {
            table: Table::SessionLog,
            key: log_key(&self.id, seq),
            value: e.json_text(),
        });
        self.log.push(e);
    }

    fn live(&self) -> Result<()> {
        if self.status != "active" {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("session `{}` is stopped: open it again to resume", self.id),
            )
            .with("reason", "session-stopped"));
        }
        Ok(())
    }

    fn move_lane(&mut self, lane: &str, event: &str, at: u64) -> Result<&'static str> {
        let from = self.lanes.get(lane).copied().unwrap_or("idle");
        let to = lane_to(from, event).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                format!("lane `{lane}` is `{from}`: it cannot take `{event}`"),
            )
            .with("reason", "invalid-lane-event")
            .with("lane", lane)
            .with("state", from)
            .with("events", lane_events(from))
        })?;
        self.lanes.insert(lane.to_owned(), to);
        self.push(
            at,
            json!({"type": "lane", "lane": lane, "event": event, "from": from, "to": to}),
        );
        Ok(to)
    }

    /// Logs the arbiter's newest event of `lane` (what it just did).
    fn log_skill(&mut self, lane: &str, at: u64, proposal_id: Option<&str>) {
        // Through its text: the serialiser the run's JSON already uses.
        let ev = self
            .arbiter
            .run(lane)
            .and_then(|r| r.event(r.log_len().wrapping_sub(1)))
            .and_then(|e| crate::json_text::to_string(&e).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        let mut body = json!({"type": "skill", "lane": lane, "event": ev});
        if let Some(id) = proposal_id {
            body["proposal_id"] = id.into();
        }
        self.push(at, body);
    }

    /// A host event on a lane ([`LANE_MACHINE`]): its new state, or `InvalidRequest`
    /// (`invalid-lane-event`) naming the events its state takes. `cancel` also cancels the
    /// lane's running skill.
    pub fn lane_event(&mut self, lane: &str, event: &str, at: u64) -> Result<&'static str> {
        self.live()?;
        check_name(lane, "lane")?;
        let from = self.lanes.get(lane).copied().unwrap_or("idle");
        if lane_to(from, event).is_none() {
            return self.move_lane(lane, event, at);
        }
        if event == "cancel"
            && self
                .arbiter
                .run(lane)
                .is_some_and(|r| r.status == Status::Running)
        {
            self.arbiter.cancel(lane)?;
            self.log_skill(lane, at, None);
        }
        self.move_lane(lane, event, at)
    }

    /// Starts `skill` in `lane` (one running skill per lane) → the run.
    pub fn start_skill(&mut self, lane: &str, skill: &str, input: Value, at: u64) -> Result<&Run> {
        self.live()?;
        check_name(lane, "lane")?;
        self.arbiter.start(lane, skill, input)?;
        self.lanes.entry(lane.to_owned()).or_insert("idle");
        self.log_skill(lane, at, None);
        self.arbiter
            .run(lane)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the run just started is gone"))
    }

    /// The model's proposal in `lane`, validated by the arbiter and logged. The lane moves
    /// with it: a proposal means a model call answered, so an `idle` or `error` lane takes
    /// `request` first and a `waiting_tool` lane `tool_result` (the results went back with
    /// that call); an accepted tool call takes `tool_call`; a run that ends takes the lane
    /// back to `idle`. → the outcome, with `proposal_id` when it made a proposal record
    /// (written with the event, pending approval).
    pub fn propose(&mut self, lane: &str, p: Proposal, at: u64) -> Result<Outcome> {
        self.live()?;
        check_name(lane, "lane")?;
        if self.arbiter.run(lane).is_none() {
            return Err(
                Error::new(ErrorKind::NotFound, format!("lane `{lane}` has no run"))
                    .with("lane", lane),
            );
        }
        let mut o = self.arbiter.propose(lane, p.clone())?;
        match self.lanes.get(lane).copied() {
            Some("idle" | "error") | None => {
                self.move_lane(lane, "request", at)?;
            }
            Some("waiting_tool") => {
                self.move_lane(lane, "tool_result", at)?;
            }
            _ => {}
        }
        let id = o
            .proposal_record
            .as_ref()
            .map(|_| approval::proposal_id(&self.id, self.log.len() as u64));
        self.log_skill(lane, at, id.as_deref());
        if let (Some(r), Some(id)) = (&o.proposal_record, &id) {
            let skill = self
                .arbiter
                .run(lane)
                .map(|r| r.skill.clone())
                .unwrap_or_default();
            let row = approval::pending_row(id, r, &self.id, lane, &skill, at);
            self.unsaved.push(Op::Insert {
                table: Table::Proposals,
                key: id.clone(),
                value: row.json_text(),
            });
        }
        if o.accepted && matches!(p, Proposal::Tool { .. }) && o.status == Status::Running {
            self.move_lane(lane, "tool_call", at)?;
        } else if o.status != Status::Running {
            self.move_lane(lane, "response", at)?;
        }
        o.proposal_id = id;
        Ok(o)
    }

    /// Cancels the running skill of `lane` (refused for one that is not interruptible);
    /// the lane goes back to `idle` → the run.
    pub fn cancel(&mut self, lane: &str, at: u64) -> Result<&Run> {
        self.live()?;
        self.arbiter.cancel(lane)?;
        self.log_skill(lane, at, None);
        if self.lanes.get(lane).is_some_and(|s| *s != "idle") {
            self.move_lane(lane, "cancel", at)?;
        }
        self.arbiter
            .run(lane)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the cancelled run is gone"))
    }

    /// Logs a heartbeat (the host calls it on an interval; [`Session::stale`] reads it).
    pub fn heartbeat(&mut self, at: u64) -> Result<()> {
        self.live()?;
        self.push(at, json!({"type": "session", "event": "heartbeat"}));
        Ok(())
    }

    /// Stops the session: every lane is `stopped` (runs keep where they are; opening the
    /// session again resumes them).
    pub fn stop(&mut self, at: u64) -> Result<()> {
        self.live()?;
        self.status = "stopped";
        for l in self.lanes.iter_mut().map(|(_, l)| l) {
            *l = "stopped";
        }
        self.push(at, json!({"type": "session", "event": "stopped"}));
        Ok(())
    }

    /// Whether an active session has logged nothing for `timeout_ms` at `now` (its host
    /// likely crashed: another host may open it, which recovers it).
    pub fn stale(&self, now: u64, timeout_ms: u64) -> bool {
        self.status == "active" && now.saturating_sub(self.last_seen) > timeout_ms
    }

    /// The arbiter (its runs, step context and offers).
    pub fn arbiter(&self) -> &Arbiter {
        &self.arbiter
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The registry its skills run under.
    pub fn registry(&self) -> &Arc<SkillRegistry> {
        &self.registry
    }

    /// The writes not yet saved: the new log rows (inserts, in order) and the proposal
    /// records made with them.
    pub fn ops(&self) -> &[Op] {
        &self.unsaved
    }

    /// The host wrote [`Session::ops`].
    pub fn saved(&mut self) {
        self.unsaved.clear();
        self.saved = self.log.len();
    }

    /// The host could not write [`Session::ops`]: the session goes back to its saved log
    /// (nothing the store does not hold stays in memory).
    pub fn rollback(&mut self) -> Result<()> {
        let rows: Vec<(String, String)> = self
            .log
            .iter()
            .take(self.saved)
            .enumerate()
            .map(|(i, e)| (log_key(&self.id, i as u64), e.json_text()))
            .collect();
        *self = Session::replay(self.registry.clone(), self.retries, &self.id, &rows)?;
        Ok(())
    }

    /// The log.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// The lane's state (`idle` for a lane never used).
    pub fn lane(&self, lane: &str) -> &'static str {
        self.lanes.get(lane).copied().unwrap_or("idle")
    }

    /// Session → lanes → skill → step, live: the session's status and times, each lane's
    /// state, and its skill run (state, status, step and objective) if it has one.
    pub fn hierarchy(&self) -> Value {
        let lanes: Vec<Value> = self
            .lanes
            .iter()
            .map(|(lane, state)| {
                json!({
                    "lane": lane,
                    "state": state,
                    "events": lane_events(state),
                    "skill": self.arbiter.skill_view(lane),
                })
            })
            .collect();
        json!({
            "session": self.id,
            "status": self.status,
            "started_at": self.started_at,
            "last_seen": self.last_seen,
            "recoveries": self.recoveries,
            "events": self.log.len(),
            "lanes": lanes,
        })
    }
}

/// The session and lane machines as SkillSpec-shaped data (`states` with their
/// `transitions`), to draw with the arbiter's Mermaid writer: `{ session, lane }`.
pub fn machines() -> Value {
    fn spec(name: &str, initial: &str, table: &[(&str, &str, &str)], states: &[&str]) -> Value {
        let mut o = Map::new();
        for s in states {
            let t: Vec<Value> = table
                .iter()
                .filter(|(f, _, _)| f == s)
                .map(|(_, e, to)| json!({"on": e, "to": to}))
                .collect();
            let mut st = Map::new();
            st.insert("objective".into(), Value::from(*s));
            if t.is_empty() {
                st.insert("terminal".into(), true.into());
            } else {
                st.insert("transitions".into(), Value::Array(t));
            }
            o.insert((*s).into(), Value::Object(st));
        }
        json!({"name": name, "description": format!("The {name} state machine."), "initial_state": initial, "states": o})
    }
    // Drawn with the session's stop, which takes every live lane to `stopped`.
    let mut lane: Vec<(&str, &str, &str)> = LANE_MACHINE.to_vec();
    for s in &LANE_STATES[..4] {
        lane.push((s, "session stopped", "stopped"));
    }
    json!({
        "session": spec("session", "new", SESSION_MACHINE, &["new", "active", "stopped"]),
        "lane": spec("lane", "idle", &lane, &LANE_STATES),
    })
}

/// Machine `name` (`session` or `lane`) of [`machines`] as a Mermaid state diagram,
/// `current` marked.
pub fn machine_mermaid(name: &str, current: Option<&str>) -> Option<String> {
    let m = machines();
    let mut problems = crate::problems::Problems::default();
    let spec = super::spec::read(m.get(name)?, &mut problems)?;
    Some(super::mermaid::to_mermaid(&spec, current))
}

/// The JSON forms both faces use (conversions only).
impl Session {
    /// Stored log rows from their JSON form (`[[key, value], …]`).
    pub fn rows_from_json(text: &str) -> Result<Vec<(String, String)>> {
        let bad = || {
            Error::new(
                ErrorKind::StoreFailed,
                "the session log rows are not `[[key, value], …]`",
            )
        };
        let v = crate::wire::json_value(text, "the session log rows", ErrorKind::StoreFailed)?;
        v.as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|r| {
                match (
                    r.get(0).and_then(Value::as_str),
                    r.get(1).and_then(Value::as_str),
                ) {
                    (Some(k), Some(v)) => Ok((k.to_owned(), v.to_owned())),
                    _ => Err(bad()),
                }
            })
            .collect()
    }

    /// One call by name, in text (what the JS face dispatches through, so a session costs
    /// the web module one method): `lane_event` (`a`: the event) → the state; `start` (`a`:
    /// the skill, `b`: the input JSON or "") → the run; `propose` (`a`: the proposal JSON)
    /// → the outcome; `cancel` → the run; `heartbeat`, `stop` → ""; `hierarchy`; `log`;
    /// `ops` (the unsaved writes in the JS backends' wire form); `lane` → the state; `run` →
    /// the run or ""; `step_context` (`a`: the host context JSON); `step_offer` (`a`: the
    /// tools JSON).
    pub fn call(&mut self, op: &str, lane: &str, a: &str, b: &str, at: u64) -> Result<String> {
        let before = self.log.len();
        let out = self.call_inner(op, lane, a, b, at);
        if out.is_err() && self.log.len() > before {
            // A call either happens whole or not at all.
            self.rollback()?;
        }
        out
    }

    fn call_inner(&mut self, op: &str, lane: &str, a: &str, b: &str, at: u64) -> Result<String> {
        let json = |text: &str, what: &str| -> Result<Value> {
            if text.is_empty() {
                Ok(Value::Null)
            } else {
                crate::wire::json_value(text, what, ErrorKind::InvalidRequest)
            }
        };
        let run = |r: &Run| crate::json_text::to_string(r).unwrap_or_default();
        Ok(match op {
            "lane_event" => self.lane_event(lane, a, at)?.to_owned(),
            "start" => {
                let input = json(b, "the input")?;
                run(self.start_skill(lane, a, input, at)?)
            }
            "propose" => {
                let p = Proposal::from_value(&json(a, "the proposal")?)?;
                crate::json_text::to_string(&self.propose(lane, p, at)?).unwrap_or_default()
            }
            "cancel" => run(self.cancel(lane, at)?),
            "heartbeat" => self.heartbeat(at).map(|_| String::new())?,
            "stop" => self.stop(at).map(|_| String::new())?,
            "hierarchy" => self.hierarchy().json_text(),
            "log" => Value::Array(self.log.clone()).json_text(),
            "ops" => Value::Array(self.unsaved.iter().map(Op::to_value).collect()).json_text(),
            "lane" => self.lane(lane).to_owned(),
            "run" => self.arbiter.run(lane).map(run).unwrap_or_default(),
            "step_context" => self
                .arbiter
                .step_context(lane, &json(a, "the context")?)?
                .json_text(),
            "step_offer" => self
                .arbiter
                .step_offer(lane, &json(a, "tools")?)?
                .json_text(),
            other => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("no session call `{other}`"),
                ))
            }
        })
    }
}

/// Over a synchronous [`Backend`] (the component's `wasi:keyvalue` bucket, the native
/// tests): the reads and writes a host does around a session.
impl Session {
    /// Opens session `id` from `backend`'s log and writes what opening logged.
    pub fn open_in<B: Backend>(
        backend: &mut B,
        registry: Arc<SkillRegistry>,
        retries: u32,
        id: &str,
        at: u64,
    ) -> Result<Session> {
        check_name(id, "session")?;
        let rows = backend.scan(Table::SessionLog, &log_prefix(id))?;
        let mut s = Session::open(registry, retries, id, &rows, at)?;
        s.save_in(backend)?;
        Ok(s)
    }

    /// Writes the unsaved rows; when the write fails the session goes back to its saved
    /// log and the error is returned.
    pub fn save_in<B: Backend>(&mut self, backend: &mut B) -> Result<()> {
        if self.unsaved.is_empty() {
            return Ok(());
        }
        match backend.commit(&self.unsaved) {
            Ok(()) => {
                self.saved();
                Ok(())
            }
            Err(e) => {
                self.rollback()?;
                Err(e)
            }
        }
    }
}
