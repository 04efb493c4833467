//! System skills seeded by a store migration (`store::seed`): the package's
//! `pkg/system-skills.json` written into a fresh store, left alone at the same version,
//! upgraded in place by a newer one (changed replaced, dropped deleted, new added), never
//! downgraded; the user's own skills never written over; an invalid seed refused whole; an
//! interrupted migration finished on the next open; the specs read back for the arbiter,
//! with a workspace fork winning in the catalog.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::SYSTEM_SKILLS;
use promptloom::catalog::SkillCatalog;
use promptloom::store::seed::{self, read_seed, Seed, SEED_ROW};
use promptloom::store::skills::Request;
use promptloom::store::{Backend, MemoryBackend, Op, SkillStore, SkillTables, Table};
use promptloom::{Error, ErrorKind};
use serde_json::{json, Value};

const T0: &str = "2026-11-23T10:00:00Z";
const T1: &str = "2026-12-01T10:00:00Z";

fn system() -> Seed {
    read_seed(SYSTEM_SKILLS, T0).unwrap() // ok: test
}

fn doc() -> Value {
    serde_json::from_str(SYSTEM_SKILLS).unwrap() // ok: test
}

fn names(report: &Value, field: &str) -> Vec<String> {
    report[field]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Creates `skill` (a package) in `store`, as the user's own.
fn create(store: &mut SkillTables<MemoryBackend>, skill: Value) {
    let req = Request::from_value(&json!({"op": "create", "skill": skill}), T0).unwrap(); // ok: test
    store.write(&req, T0).unwrap(); // ok: test
}

fn rows(store: &SkillTables<MemoryBackend>) -> String {
    format!("{:?}", store.backend())
}

#[test]
fn a_fresh_store_gets_the_package_system_skills_once() {
    let mut store = SkillTables::new(MemoryBackend::new());
    let r = store.seed(&system(), T0).unwrap(); // ok: test
    assert_eq!(r["status"], "created");
    assert_eq!(r["version"], 1);
    assert_eq!(r["previous"], 0);
    assert_eq!(names(&r, "upserted"), ["tool-builder", "skill-builder"]);
    let listed = store.list().unwrap(); // ok: test
    assert_eq!(listed.len(), 2);
    for s in &listed {
        assert_eq!(s.get_str("source"), Some("system"));
        assert!(s
            .get_str("sync_etag")
            .is_some_and(|e| e.starts_with("\"sha256-")));
    }
    let state: Value = serde_json::from_str(
        &store
            .backend()
            .get(Table::SkillSync, SEED_ROW)
            .unwrap()
            .unwrap(),
    ) // ok: test
    .unwrap(); // ok: test
    assert_eq!(state["version"], 1);
    assert_eq!(state["ids"].as_array().map(Vec::len), Some(2));
    // The specs come back from the store, by name, and build the arbiter's registry.
    let specs = store.skill_specs().unwrap(); // ok: test
    let spec_names: Vec<&str> = specs.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(spec_names, ["skill-builder", "tool-builder"]);
    assert_eq!(specs, common::system_specs());
    // Opening again at the same version is one read and writes nothing.
    let before = rows(&store);
    let again = store.seed(&system(), T1).unwrap(); // ok: test
    assert_eq!(again["status"], "current");
    assert_eq!(names(&again, "upserted"), Vec::<String>::new());
    assert_eq!(rows(&store), before);
}

#[cfg(feature = "composer")]
#[test]
fn the_seeded_specs_build_the_registry_the_builtins_made() {
    use promptloom::arbiter::SkillRegistry;
    let mut store = SkillTables::new(MemoryBackend::new());
    store.seed(&system(), T0).unwrap(); // ok: test
    let tools = ["choir.memory.query".to_owned(), "choir.fs.read".to_owned()];
    let reg = SkillRegistry::build(&store.skill_specs().unwrap(), &[], &tools).unwrap(); // ok: test
    assert_eq!(reg.names(), ["skill-builder", "tool-builder"]);
    assert!(reg
        .summary()
        .contains("- tool-builder: Guides the agent through proposing a new tool"));
    // The specs need the host's tools: without them the build names what is missing.
    let e = SkillRegistry::build(&store.skill_specs().unwrap(), &[], &[]).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
}

/// Version 2 of the seed: tool-builder changed, skill-builder dropped, a new skill added.
fn version_two() -> Seed {
    let mut d = doc();
    d["version"] = 2.into();
    let skills = d["skills"].as_array_mut().unwrap(); // ok: test
    skills[0]["description"] = "Proposes new tools for human approval (v2).".into();
    skills[0]["metadata"]["skill_spec"]["max_steps"] = 30.into();
    skills.remove(1);
    skills.push(json!({
        "name": "release-notes",
        "description": "Drafts release notes from merged changes.",
        "artifacts": [{ "kind": "prompt_template", "name": "Draft", "content": "Summarise {{ changes }}." }]
    }));
    read_seed(&d.to_string(), T1).unwrap() // ok: test
}

#[test]
fn a_newer_seed_upgrades_in_place_and_an_older_one_changes_nothing() {
    let mut store = SkillTables::new(MemoryBackend::new());
    store.seed(&system(), T0).unwrap(); // ok: test
    let r = store.seed(&version_two(), T1).unwrap(); // ok: test
    assert_eq!(r["status"], "upgraded");
    assert_eq!(r["previous"], 1);
    assert_eq!(names(&r, "upserted"), ["tool-builder", "release-notes"]);
    assert_eq!(names(&r, "removed"), ["skill-builder"]);
    let tb = store.get_by_name("tool-builder").unwrap().unwrap(); // ok: test
    assert_eq!(
        tb.description,
        "Proposes new tools for human approval (v2)."
    );
    assert_eq!(
        tb.created_at, T0,
        "a replaced skill keeps its creation time"
    );
    assert_eq!(tb.metadata["skill_spec"]["max_steps"], 30);
    assert!(store.get_by_name("skill-builder").unwrap().is_none()); // ok: test
    let notes = store.get_by_name("release-notes").unwrap().unwrap(); // ok: test
    assert_eq!(notes.source.name(), "system");
    // Its artifacts went with it.
    assert_eq!(store.backend().len(Table::Artifacts), 2 + 1);
    // Version 1 again (an older package opening this store): nothing is downgraded.
    let before = rows(&store);
    let r = store.seed(&system(), T1).unwrap(); // ok: test
    assert_eq!(r["status"], "newer");
    assert_eq!(rows(&store), before);
}

#[test]
fn the_users_own_skills_are_never_written_over_or_deleted() {
    let mut store = SkillTables::new(MemoryBackend::new());
    // A user skill that takes the name `tool-builder` before the store is seeded.
    let mut mine = doc()["skills"][0].clone();
    mine["id"] = "my-tool-builder".into();
    mine["source"] = "user".into();
    mine["description"] = "My own.".into();
    mine["artifacts"] = json!([]);
    create(&mut store, mine);
    // A marketplace skill marked system that the seed never wrote.
    let other = json!({"name": "from-marketplace", "description": "Synced.", "source": "system", "marketplace_id": "m1"});
    create(&mut store, other);
    let r = store.seed(&system(), T0).unwrap(); // ok: test
    assert_eq!(names(&r, "upserted"), ["skill-builder"]);
    let skipped = r["skipped"].as_array().unwrap(); // ok: test
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["name"], "tool-builder");
    assert_eq!(skipped[0]["problems"][0]["code"], "AlreadyExists");
    let kept = store.get_by_name("tool-builder").unwrap().unwrap(); // ok: test
    assert_eq!(
        (kept.id.as_str(), kept.description.as_str()),
        ("my-tool-builder", "My own.")
    );
    // The user's skill carries a SkillSpec too: it is theirs to run.
    assert_eq!(store.skill_specs().unwrap().len(), 2); // ok: test
                                                       // Version 2 drops skill-builder: only what the seed wrote is deleted.
    let r = store.seed(&version_two(), T1).unwrap(); // ok: test
    assert_eq!(names(&r, "removed"), ["skill-builder"]);
    assert!(store.get_by_name("from-marketplace").unwrap().is_some()); // ok: test
    assert_eq!(
        store.get_by_name("tool-builder").unwrap().unwrap().id,
        "my-tool-builder"
    ); // ok: test
       // A user skill that holds a system skill's id is reported, not replaced.
    let mut store = SkillTables::new(MemoryBackend::new());
    let id = system().skills[1].id.clone();
    let squatter = json!({"id": id, "name": "my-skill", "description": "Mine.", "source": "user"});
    create(&mut store, squatter);
    let r = store.seed(&system(), T0).unwrap(); // ok: test
    assert_eq!(r["skipped"][0]["problems"][0]["code"], "name-conflict");
    assert_eq!(store.get(&id).unwrap().unwrap().name, "my-skill"); // ok: test
}

#[test]
fn an_invalid_seed_is_refused_whole_with_every_problem() {
    let mut d = doc();
    d["version"] = 0.into();
    d["skills"][0]["source"] = "community".into();
    d["skills"][1]["metadata"]["skill_spec"]["name"] = "other".into();
    d["skills"][1]["artifacts"][0]["kind"] = "sculpture".into();
    let dup = d["skills"][0].clone();
    d["skills"].as_array_mut().unwrap().push(dup); // ok: test
    let e = read_seed(&d.to_string(), T0).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    let problems = e.details()["problems"].as_array().unwrap().clone(); // ok: test
    let found: Vec<(String, String)> = problems
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap_or("").to_owned(),
                p["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    for (path, code) in [
        ("version", "invalid-version"),
        ("skills[0].source", "not-system"),
        ("skills[1].metadata.skill_spec", "spec-name-mismatch"),
        ("skills[2].name", "duplicate-name"),
    ] {
        assert!(
            found.iter().any(|(p, c)| p == path && c == code),
            "{path} {code} not in {found:?}"
        );
    }
    assert!(
        found
            .iter()
            .any(|(p, _)| p.starts_with("skills[1].artifacts[0]")),
        "{found:?}"
    );
    for bad in [
        "",
        "[]",
        "{\"version\": 1}",
        "{\"version\": 1, \"skills\": [7]}",
    ] {
        assert_eq!(
            read_seed(bad, T0).unwrap_err().kind(),
            ErrorKind::InvalidSkill,
            "{bad}"
        ); // ok: test
    }
}

/// A backend whose commits fail after `left` more succeed.
struct Flaky {
    inner: MemoryBackend,
    left: usize,
}

impl Backend for Flaky {
    fn get(&self, t: Table, k: &str) -> promptloom::Result<Option<String>> {
        self.inner.get(t, k)
    }
    fn scan(&self, t: Table, p: &str) -> promptloom::Result<Vec<(String, String)>> {
        self.inner.scan(t, p)
    }
    fn commit(&mut self, ops: &[Op]) -> promptloom::Result<()> {
        if self.left == 0 {
            return Err(Error::new(ErrorKind::StoreFailed, "disk full"));
        }
        self.left -= 1;
        self.inner.commit(ops)
    }
}

#[test]
fn an_interrupted_migration_finishes_on_the_next_open() {
    let mut store = SkillTables::new(Flaky {
        inner: MemoryBackend::new(),
        left: 1,
    });
    let e = store.seed(&system(), T0).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::StoreFailed);
    // One skill landed; the state row did not, so the store is not marked seeded.
    let inner = store.backend().inner.clone();
    assert_eq!(inner.len(Table::Skills), 1);
    assert!(inner.get(Table::SkillSync, SEED_ROW).unwrap().is_none()); // ok: test
    let mut store = SkillTables::new(inner);
    let r = store.seed(&system(), T1).unwrap(); // ok: test
    assert_eq!(r["status"], "created");
    assert_eq!(names(&r, "unchanged"), ["tool-builder"]);
    assert_eq!(names(&r, "upserted"), ["skill-builder"]);
    assert_eq!(store.list().unwrap().len(), 2); // ok: test
                                                // A torn state row is named, not guessed at.
    store
        .backend_mut()
        .commit(&[Op::Put {
            table: Table::SkillSync,
            key: SEED_ROW.into(),
            value: "{".into(),
        }])
        .unwrap(); // ok: test
    let e = store.seed(&system(), T1).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::StoreFailed);
    assert!(e.to_string().contains(SEED_ROW), "{e}");
}

#[test]
fn a_disabled_skill_or_a_workspace_fork_changes_the_specs() {
    let mut account = SkillTables::new(MemoryBackend::new());
    account.seed(&system(), T0).unwrap(); // ok: test
                                          // A workspace fork of tool-builder with its own spec wins in the catalog.
    let mut fork = doc()["skills"][0].clone();
    fork["source"] = "user".into();
    fork["metadata"]["skill_spec"]["max_steps"] = 12.into();
    let mut workspace = SkillTables::new(MemoryBackend::new());
    create(&mut workspace, fork);
    let catalog = SkillCatalog::new(workspace, account);
    let specs = catalog.skill_specs().unwrap(); // ok: test
    assert_eq!(specs.len(), 2);
    let tb = specs.iter().find(|s| s["name"] == "tool-builder").unwrap(); // ok: test
    assert_eq!(tb["max_steps"], 12);
    // Disabling the account's skill-builder takes it out of the specs.
    let mut account = SkillTables::new(MemoryBackend::new());
    account.seed(&system(), T0).unwrap(); // ok: test
    let mut sb = account.get_by_name("skill-builder").unwrap().unwrap(); // ok: test
    sb.metadata.insert("enabled".into(), false.into());
    account.update_skill(&sb, T1).unwrap(); // ok: test
    let left: Vec<Value> = account.skill_specs().unwrap(); // ok: test
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["name"], "tool-builder");
    // The seed's own specs, without a store.
    let text = seed::specs_json(SYSTEM_SKILLS).unwrap(); // ok: test
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(&text).unwrap(),
        common::system_specs()
    ); // ok: test
}

#[test]
fn the_migration_machine_reads_the_state_then_the_skills_then_writes() {
    use seed::{Input, Migrate, Step};
    let (mut m, step) = Migrate::seed(system(), T0);
    assert_eq!(
        step.to_json(),
        json!({"do": "read", "table": "skill_sync", "key": SEED_ROW}).to_string()
    );
    assert_eq!(m.next(Input::Row(None)).unwrap(), Step::Scan); // ok: test
    let Step::Put(first) = m.next(Input::Rows(Vec::new())).unwrap() else {
        panic!("a put") // ok: test
    };
    // A put refused for its name is reported, not fatal; a failing store stops it.
    let taken = promptloom::Error::new(ErrorKind::AlreadyExists, "taken");
    assert!(matches!(
        m.next(Input::Put(Some(taken))).unwrap(),
        Step::Put(_)
    )); // ok: test
    let Step::Commit(op) = m.next(Input::Put(None)).unwrap() else {
        panic!("the state row last") // ok: test
    };
    assert_eq!(op.to_value()["table"], "skill_sync");
    let Step::Done(report) = m.next(Input::Done).unwrap() else {
        panic!("done") // ok: test
    };
    assert_eq!(report["skipped"][0]["name"], json!(first.name));
    assert_eq!(report["upserted"].as_array().map(Vec::len), Some(1));
    let (mut m, _) = Migrate::seed(system(), T0);
    m.next(Input::Row(None)).unwrap(); // ok: test
    m.next(Input::Rows(Vec::new())).unwrap(); // ok: test
    let down = promptloom::Error::new(ErrorKind::StoreFailed, "down");
    assert_eq!(
        m.next(Input::Put(Some(down))).unwrap_err().kind(), // ok: test
        ErrorKind::StoreFailed
    );
    // A current store needs no skill rows.
    let mut store = SkillTables::new(MemoryBackend::new());
    store.seed(&system(), T0).unwrap(); // ok: test
    let row = store.backend().get(Table::SkillSync, SEED_ROW).unwrap(); // ok: test
    let (mut m, _) = Migrate::seed(system(), T1);
    let Step::Done(report) = m.next(Input::Row(row)).unwrap() else {
        panic!("current: done after one read") // ok: test
    };
    assert_eq!(report["status"], "current");
}
