//! Sessions, lanes and the approval pipeline (`arbiter::session`, `arbiter::approval`) over
//! the in-memory backend: a session's log is written, the process "crashes" (the session is
//! dropped) and a reopened session resumes every lane at its last accepted step; lane
//! events follow the lane machine; a failed write rolls back; two writers of one session
//! cannot both land; proposals are persisted, listed, approved (validated again, a new
//! registry built) or rejected, every decision logged.
#![cfg(all(not(target_arch = "wasm32"), feature = "composer"))]

mod common;

use promptloom::arbiter::approval::{self, Decision};
use promptloom::arbiter::session::{self, Session};
use promptloom::arbiter::{Proposal, SkillRegistry};
use promptloom::store::{Backend, MemoryBackend, Table};
use promptloom::ErrorKind;
use serde_json::{json, Value};
use std::sync::Arc;

const TOOLS: [&str; 3] = ["choir.memory.query", "choir.fs.read", "choir.fs.write"];

fn registry() -> Arc<SkillRegistry> {
    let spec: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/arbiter/specs/build-feature.json").unwrap(), // ok: test
    )
    .unwrap(); // ok: test
    let tools: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    let mut specs = common::system_specs();
    specs.push(spec);
    Arc::new(SkillRegistry::build(&specs, &[], &tools).unwrap()) // ok: test
}

fn rows(b: &MemoryBackend, id: &str) -> Vec<(String, String)> {
    b.scan(Table::SessionLog, &session::log_prefix(id)).unwrap() // ok: test
}

fn save(b: &mut MemoryBackend, s: &mut Session) {
    b.commit(s.ops()).unwrap(); // ok: test
    s.saved();
}

fn open(b: &MemoryBackend, id: &str, at: u64) -> Session {
    Session::open(registry(), 2, id, &rows(b, id), at).unwrap() // ok: test
}

fn tool(name: &str) -> Proposal {
    Proposal::Tool {
        name: name.into(),
        arguments: json!({}),
    }
}

fn transition(event: &str) -> Proposal {
    Proposal::Transition {
        event: event.into(),
    }
}

#[test]
fn a_crashed_session_resumes_every_lane_at_its_last_accepted_step() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s1", 1_000);
    assert_eq!(s.hierarchy()["status"], "active");
    s.start_skill("core", "build_feature", json!({"feature": "search"}), 1_001)
        .unwrap(); // ok: test
    let o = s
        .propose("core", tool("choir.memory.query"), 1_002)
        .unwrap(); // ok: test
    assert!(o.accepted);
    // The proposal means a model call answered: the idle lane took `request`, then the
    // accepted tool call `tool_call`.
    assert_eq!(s.lane("core"), "waiting_tool");
    assert_eq!(
        s.lane_event("core", "tool_result", 1_003).unwrap(),
        "reasoning"
    ); // ok: test
    s.propose("core", transition("complete"), 1_004).unwrap(); // ok: test
    let bad = s.propose("core", tool("choir.fs.write"), 1_005).unwrap(); // ok: test
    assert!(!bad.accepted, "fs.write is not allowed while planning");
    assert_eq!(s.lane("core"), "reasoning");
    s.start_skill("edge", "build_feature", json!({"feature": "search"}), 1_006)
        .unwrap(); // ok: test
    s.heartbeat(1_007).unwrap(); // ok: test
    save(&mut b, &mut s);
    let before = s.arbiter().run("core").cloned().unwrap(); // ok: test
    let edge = s.arbiter().run("edge").cloned().unwrap(); // ok: test
    let logged = s.log().len();
    drop(s);

    let mut r = open(&b, "s1", 9_000);
    let h = r.hierarchy();
    assert_eq!(h["recoveries"], 1);
    assert_eq!(h["last_seen"], 9_000);
    assert_eq!(r.log().len(), logged + 1);
    assert_eq!(r.log()[logged]["event"], "recovered");
    assert_eq!(r.log()[logged]["last_seen"], 1_007);
    let after = r.arbiter().run("core").unwrap(); // ok: test
    assert_eq!(after.state, before.state);
    assert_eq!(after.step, before.step);
    assert_eq!(after.retries, before.retries);
    assert_eq!(after.log_len(), before.log_len());
    assert_eq!(r.arbiter().run("edge").unwrap().state, edge.state); // ok: test
    assert_eq!(r.lane("core"), "reasoning");
    assert_eq!(h["lanes"][0]["lane"], "core");
    assert_eq!(h["lanes"][0]["skill"]["state"], "plan");
    assert_eq!(h["lanes"][0]["skill"]["step"]["n"], 3);
    // It goes on from there, and its writes continue the same log.
    let o = r.propose("core", transition("complete"), 9_001).unwrap(); // ok: test
    assert!(o.accepted);
    assert_eq!(o.state, "modify");
    save(&mut b, &mut r);
    assert_eq!(rows(&b, "s1").len(), r.log().len());
}

#[test]
fn stop_then_reopen_starts_again_with_lanes_idle_and_runs_kept() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s2", 10);
    s.start_skill("core", "build_feature", json!({"feature": "search"}), 11)
        .unwrap(); // ok: test
    s.propose("core", tool("choir.memory.query"), 12).unwrap(); // ok: test
    s.stop(13).unwrap(); // ok: test
    assert_eq!(s.lane("core"), "stopped");
    let e = s.heartbeat(14).unwrap_err(); // ok: test
    assert_eq!(e.details()["reason"], "session-stopped");
    assert!(!s.stale(1_000_000, 10), "a stopped session is never stale");
    save(&mut b, &mut s);
    let r = open(&b, "s2", 20);
    let h = r.hierarchy();
    assert_eq!(
        h["recoveries"], 0,
        "a stopped session reopens without recovery"
    );
    assert_eq!(h["started_at"], 20);
    assert_eq!(r.lane("core"), "idle");
    assert_eq!(r.arbiter().run("core").unwrap().step, 1); // ok: test
    assert!(r.stale(20 + 5_001, 5_000));
    assert!(!r.stale(20 + 5_000, 5_000));
}

#[test]
fn lane_events_follow_the_lane_machine() {
    let b = MemoryBackend::new();
    let mut s = open(&b, "s3", 0);
    let e = s.lane_event("edge", "tool_result", 1).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(e.details()["reason"], "invalid-lane-event");
    assert_eq!(e.details()["state"], "idle");
    assert_eq!(e.details()["events"], json!(["request"]));
    assert_eq!(s.lane_event("edge", "request", 2).unwrap(), "reasoning"); // ok: test
    assert_eq!(
        s.lane_event("edge", "tool_call", 3).unwrap(),
        "waiting_tool"
    ); // ok: test
    assert_eq!(s.lane_event("edge", "fail", 4).unwrap(), "error"); // ok: test
    assert_eq!(s.lane_event("edge", "request", 5).unwrap(), "reasoning"); // ok: test
    assert_eq!(s.lane_event("edge", "response", 6).unwrap(), "idle"); // ok: test
    for bad in ["", "a/b", "x\u{0}"] {
        let e = s.lane_event(bad, "request", 7).unwrap_err(); // ok: test
        assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{bad:?}");
    }
    assert!(Session::open(registry(), 2, "a/b", &[], 0).is_err());
    // `cancel` cancels the lane's running skill too.
    s.start_skill("core", "build_feature", json!({"feature": "search"}), 8)
        .unwrap(); // ok: test
    s.lane_event("core", "request", 9).unwrap(); // ok: test
    s.lane_event("core", "cancel", 10).unwrap(); // ok: test
    assert_eq!(
        s.arbiter().run("core").unwrap().status, // ok: test
        promptloom::arbiter::Status::Cancelled
    );
    // The machines are data a host draws (as SkillSpecs: the arbiter's Mermaid writer).
    let m = session::machines();
    assert_eq!(m["lane"]["initial_state"], "idle");
    let drawn = session::machine_mermaid("lane", Some("idle")).unwrap(); // ok: test
    assert!(
        drawn.contains("waiting_tool --> reasoning : tool_result"),
        "{drawn}"
    );
    assert!(session::machine_mermaid("session", None).is_some());
    assert!(session::machine_mermaid("skill", None).is_none());
}

#[test]
fn a_failed_write_rolls_back_and_two_writers_cannot_both_land() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s4", 0);
    save(&mut b, &mut s);
    let mut other = open(&b, "s4", 1);
    // Both append event 1: the first lands, the second is a conflict.
    s.heartbeat(2).unwrap(); // ok: test
    b.commit(other.ops()).unwrap(); // ok: test
    other.saved();
    let e = b.commit(s.ops()).unwrap_err(); // ok: test
    assert!(promptloom::store::is_conflict(&e));
    s.rollback().unwrap(); // ok: test
    assert_eq!(s.log().len(), 1);
    assert!(s.ops().is_empty());
    assert_eq!(
        rows(&b, "s4").len(),
        2,
        "nothing of the losing writer landed"
    );
}

#[test]
fn a_log_the_registry_no_longer_replays_is_refused() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s5", 0);
    s.start_skill("core", "build_feature", json!({"feature": "search"}), 1)
        .unwrap(); // ok: test
    save(&mut b, &mut s);
    let bare = Arc::new(SkillRegistry::build(&[], &[], &[]).unwrap()); // ok: test
    let e = Session::open(bare, 2, "s5", &rows(&b, "s5"), 2).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::StoreFailed);
    assert_eq!(e.details()["reason"], "log-diverged");
    assert_eq!(e.details()["seq"], 1);
    let mut gap = rows(&b, "s5");
    gap.remove(0);
    let e = Session::open(registry(), 2, "s5", &gap, 3).unwrap_err(); // ok: test
    assert_eq!(e.details()["reason"], "log-diverged");
    let mut torn = rows(&b, "s5");
    torn[1].1 = "{not json".into();
    assert_eq!(
        Session::open(registry(), 2, "s5", &torn, 3)
            .unwrap_err()
            .kind(), // ok: test
        ErrorKind::StoreFailed
    );
}

/// A one-state spec writing notes (with `choir.fs.write`).
fn notes() -> Value {
    json!({"name": "notes", "description": "Take notes.", "initial_state": "write",
        "states": {"write": {"objective": "Write.", "allowed_tools": ["choir.fs.write"],
            "transitions": [{"on": "complete", "to": "done"}]}, "done": {"terminal": true}}})
}

/// Runs `builder` in `lane` up to its `propose` state and proposes `payload`.
fn propose(s: &mut Session, lane: &str, builder: &str, tool: &str, payload: Value) -> String {
    s.start_skill(lane, builder, json!({}), 100).unwrap(); // ok: test
    for _ in 0..3 {
        s.propose(lane, transition("complete"), 101).unwrap(); // ok: test
    }
    let o = s
        .propose(
            lane,
            Proposal::Tool {
                name: tool.into(),
                arguments: payload,
            },
            102,
        )
        .unwrap(); // ok: test
    assert!(o.accepted, "{:?}", o.error);
    o.proposal_id.unwrap() // ok: test
}

fn decide(
    b: &mut MemoryBackend,
    id: &str,
    approve: bool,
    reason: &str,
    reg: &SkillRegistry,
    at: u64,
) -> promptloom::Result<approval::Decided> {
    let row = b.get(Table::Proposals, id).unwrap(); // ok: test
    let d = approval::decide(
        id,
        row.as_deref(),
        &Decision {
            approve,
            by: "ana".into(),
            reason: reason.into(),
            at,
        },
        reg,
    )?;
    b.commit(&d.ops)?;
    Ok(d)
}

#[test]
fn proposals_are_persisted_then_approved_or_rejected_once_and_logged() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s6", 0);
    let t = propose(
        &mut s,
        "a",
        "tool-builder",
        "choir.propose.tool",
        json!({"name": "http.get", "description": "GET a URL", "input_schema": {"type": "object"}}),
    );
    let spec = json!({"name": "triage", "description": "Triage an issue.", "initial_state": "look",
        "states": {"look": {"objective": "Read it.", "allowed_tools": ["http.get"], "transitions": [{"on": "complete", "to": "done"}]},
                   "done": {"terminal": true}}});
    // The arbiter validated the spec against today's tools: `http.get` is not one yet.
    s.start_skill("b", "skill-builder", json!({}), 100).unwrap(); // ok: test
    for _ in 0..3 {
        s.propose("b", transition("complete"), 101).unwrap(); // ok: test
    }
    let o = s
        .propose(
            "b",
            Proposal::Tool {
                name: "choir.propose.skill".into(),
                arguments: json!({"spec": spec}),
            },
            102,
        )
        .unwrap(); // ok: test
    assert!(!o.accepted && o.proposal_id.is_none());
    let k = propose(
        &mut s,
        "c",
        "skill-builder",
        "choir.propose.skill",
        json!({ "spec": notes() }),
    );
    save(&mut b, &mut s);

    let all = b.scan(Table::Proposals, "").unwrap(); // ok: test
    let pending = approval::list(&all, Some("pending")).unwrap(); // ok: test
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0]["id"], t.as_str());
    assert_eq!(pending[0]["kind"], "tool");
    assert_eq!(pending[0]["name"], "http.get");
    assert_eq!(pending[0]["session"], "s6");
    assert_eq!(pending[0]["lane"], "a");
    assert_eq!(pending[0]["skill"], "tool-builder");
    assert_eq!(pending[1]["name"], "notes");
    assert!(approval::list(&all, Some("done")).is_err());

    let reg = registry();
    let d = decide(&mut b, &t, true, "", &reg, 500).unwrap(); // ok: test
    let reg2 = d.registry.unwrap(); // ok: test
    assert!(reg2.tools().contains("http.get"));
    assert!(
        !reg.tools().contains("http.get"),
        "the old registry is untouched"
    );
    assert_eq!(d.row["status"], "approved");
    assert_eq!(d.row["decided_by"], "ana");
    let again = decide(&mut b, &t, false, "late", &reg2, 0).unwrap_err(); // ok: test
    assert_eq!(again.details()["reason"], "not-pending");
    assert_eq!(
        decide(&mut b, &k, false, " ", &reg2, 0).unwrap_err().kind(),
        ErrorKind::InvalidOptions
    ); // ok: test
    let r = decide(
        &mut b,
        &k,
        false,
        "duplicates an existing skill",
        &reg2,
        600,
    )
    .unwrap(); // ok: test
    assert!(r.registry.is_none());
    assert_eq!(
        decide(&mut b, "s6/999", true, "", &reg2, 0)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    ); // ok: test

    let log = approval::history(&b.scan(Table::ApprovalLog, "").unwrap()).unwrap(); // ok: test
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["decision"], "approved");
    assert_eq!(log[1]["decision"], "rejected");
    assert_eq!(log[1]["reason"], "duplicates an existing skill");
    // A host starting up installs every approval again.
    let all = b.scan(Table::Proposals, "").unwrap(); // ok: test
    let rebuilt = approval::install(&reg, &all).unwrap(); // ok: test
    assert!(rebuilt.tools().contains("http.get"));
    assert!(rebuilt.get("notes").is_none());
}

#[test]
fn an_approval_validates_the_payload_again() {
    let mut b = MemoryBackend::new();
    let mut s = open(&b, "s7", 0);
    let bad = propose(
        &mut s,
        "a",
        "tool-builder",
        "choir.propose.tool",
        json!({"name": "has space"}),
    );
    let k = propose(
        &mut s,
        "c",
        "skill-builder",
        "choir.propose.skill",
        json!({ "spec": notes() }),
    );
    save(&mut b, &mut s);
    let e = decide(&mut b, &bad, true, "", &registry(), 0).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    assert_eq!(e.details()["problems"][0]["code"], "invalid-tool-name");
    // Against a registry that lost `choir.fs.write`, the spec no longer validates.
    let narrow = SkillRegistry::build(
        &common::system_specs(),
        &[],
        &TOOLS[..2].iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    )
    .unwrap(); // ok: test
    let e = decide(&mut b, &k, true, "", &narrow, 0).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    let row: Value = serde_json::from_str(&b.get(Table::Proposals, &k).unwrap().unwrap()).unwrap(); // ok: test
    assert_eq!(row["status"], "pending", "a failed approval writes nothing");
    let d = decide(&mut b, &k, true, "", &registry(), 0).unwrap(); // ok: test
    assert!(d.registry.unwrap().get("notes").is_some()); // ok: test
}

#[test]
fn a_proposal_in_a_lane_waiting_on_a_tool_means_the_results_went_back() {
    let mut b = MemoryBackend::new();
    let mut s = Session::open_in(&mut b, registry(), 2, "s8", 0).unwrap(); // ok: test
    s.start_skill("core", "build_feature", json!({"feature": "x"}), 1)
        .unwrap(); // ok: test
    s.propose("core", tool("choir.memory.query"), 2).unwrap(); // ok: test
    assert_eq!(s.lane("core"), "waiting_tool");
    let o = s.propose("core", transition("complete"), 3).unwrap(); // ok: test
    assert!(o.accepted);
    assert_eq!(s.lane("core"), "reasoning");
    let moves: Vec<&str> = s
        .log()
        .iter()
        .filter(|e| e["type"] == "lane")
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert_eq!(moves, ["request", "tool_call", "tool_result"]);
    s.save_in(&mut b).unwrap(); // ok: test
    let r = Session::open_in(&mut b, registry(), 2, "s8", 4).unwrap(); // ok: test
    assert_eq!(r.lane("core"), "reasoning");
    assert_eq!(rows(&b, "s8").len(), r.log().len());
}
