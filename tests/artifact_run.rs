//! Artifact and skill runs: the scripted runs of each file in `tests/artifact_run` (a skill
//! package, then runs with the executors the host has and their answers in order). The
//! snapshot holds, per run, every call the run made, every trace it stored and its result
//! or error: the npm package's `runArtifact` / `runSkill` (Node) and the component's
//! `run-artifact` (jco, Wasmtime) must agree with it.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::artifact_run::{run, RunHost, RunOptions};
use promptloom::skill::import_package;
use serde_json::{json, Map, Value};
use std::path::Path;

/// The host of a scripted run: the skill's artifacts, answers by executor in order, a
/// clock that ticks a second per reading.
struct Scripted {
    skill: Value,
    answers: Map<String, Value>,
    calls: Vec<Value>,
    traces: Vec<Value>,
    tick: u32,
}

impl RunHost for Scripted {
    fn load(&mut self, id: &str) -> promptloom::Result<Option<Value>> {
        Ok(self.skill["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .cloned())
    }

    fn call(
        &mut self,
        executor: &str,
        kind: Option<&str>,
        request: &Value,
    ) -> Result<Value, String> {
        let mut c = json!({ "executor": executor, "request": request });
        if let Some(k) = kind {
            c["kind"] = k.into();
        }
        self.calls.push(c);
        let list = self
            .answers
            .get_mut(executor)
            .and_then(Value::as_array_mut)
            .expect("the case answers every call"); // ok: test
        let a = list.remove(0);
        match a.get("fail") {
            Some(m) => Err(m.as_str().unwrap().to_owned()),
            None => Ok(a),
        }
    }

    fn time(&mut self) -> (String, f64) {
        self.tick += 1;
        (
            format!("2026-11-22T10:00:{:02}.000Z", self.tick),
            f64::from(self.tick) * 1000.0,
        )
    }

    fn trace(&mut self, key: &str, row: &Value) -> promptloom::Result<()> {
        self.traces.push(json!({ "key": key, "row": row }));
        Ok(())
    }
}

/// The run's options from a case's run.
pub fn options(skill: &Value, r: &Value) -> Value {
    let mut o = json!({ "skill": skill });
    for k in [
        "artifact",
        "model_id",
        "executors",
        "parameters",
        "context",
        "session_id",
        "pricing",
        "render_limits",
    ] {
        if let Some(v) = r.get(k) {
            o[k] = v.clone();
        }
    }
    o
}

#[test]
fn scripted_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/artifact_run");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = e.path();
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let pkg = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "tests/skills/packages/{}.json",
            case["package"].as_str().unwrap()
        )))
        .unwrap();
        let (skill, _) = import_package(&pkg, case["now"].as_str().unwrap()).unwrap(); // ok: test
        let skill = skill.to_value();
        let mut out = Vec::new();
        for r in case["runs"].as_array().unwrap() {
            let mut host = Scripted {
                skill: skill.clone(),
                answers: r
                    .get("answers")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
                calls: Vec::new(),
                traces: Vec::new(),
                tick: 0,
            };
            let names = r
                .get("skill_run")
                .map(|n| serde_json::from_value::<Option<Vec<String>>>(n.clone()).unwrap());
            let result =
                RunOptions::from_value(options(&skill, r)).and_then(|o| run(o, names, &mut host));
            let answered = host
                .answers
                .values()
                .all(|a| a.as_array().is_some_and(Vec::is_empty));
            assert!(
                answered,
                "{}: every scripted answer was asked for",
                r["name"]
            );
            let mut entry =
                json!({ "name": r["name"], "calls": host.calls, "traces": host.traces });
            match result {
                Ok(v) => entry["result"] = v,
                Err(e) => entry["error"] = serde_json::from_str(&e.to_json()).unwrap(),
            }
            out.push(entry);
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        insta::assert_json_snapshot!(format!("runs@{name}"), out);
    }
}
