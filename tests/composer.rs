//! The Skill Composer: golden compositions (`tests/composer/requests` × the skill packages
//! in `tests/composer/skills` and `tests/skills/packages`), reviewed as snapshots and
//! byte-identical on a second run; property tests of capability bounding (top level and
//! nested sub-skills); the authoring tools over a real store; artifact dispatch on every
//! path; assertions; traces; invocation records beside the turn.
#![cfg(all(not(target_arch = "wasm32"), feature = "composer"))]

mod common;
use common::Rng;

use promptloom::composer::{
    authoring, compose, compose_value, nested_request, ComposeRequest, Step, ToolDescriptor,
};
use promptloom::dispatch::{assertion, dispatch_in, route, trace, Executors, Route};
use promptloom::skill::{import_package, ArtifactKind};
use promptloom::store::{MemoryBackend, MessageStore, SkillStore, SkillTables};
use promptloom::ErrorKind;
use serde_json::{json, Map, Value};
use std::path::Path;

fn package(name: &str) -> Value {
    let a = format!("tests/composer/skills/{name}.json");
    let b = format!("tests/skills/packages/{name}.json");
    let text = std::fs::read_to_string(&a)
        .or_else(|_| std::fs::read_to_string(&b))
        .unwrap(); // ok: test
    serde_json::from_str(&text).unwrap() // ok: test
}

fn request_of(path: &Path) -> Value {
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(); // ok: test
    let mut req = case["request"].clone();
    req["skill_package"] = package(case["skill"].as_str().unwrap()); // ok: test
    req
}

fn outcome(req: Value) -> Value {
    match compose_value(req) {
        Ok(step) => step.to_value(),
        Err(e) => json!({ "error": serde_json::from_str::<Value>(&e.to_json()).unwrap() }), // ok: test
    }
}

#[test]
fn golden_compositions() {
    insta::glob!("composer/requests/*.json", |path| {
        let req = request_of(path);
        let first = outcome(req.clone());
        let again = outcome(req.clone());
        // The same request twice: byte-identical.
        assert_eq!(first.to_string(), again.to_string());
        // The split form (package text kept validated by the JS face) gives the same, cold
        // and from its cache.
        let mut rest = req.as_object().cloned().unwrap_or_default(); // ok: test
        let pkg = rest.remove("skill_package").unwrap_or_default().to_string();
        let rest = Value::Object(rest).to_string();
        for _ in 0..2 {
            let split = match promptloom::composer::compose_split(&pkg, &rest) {
                Ok(step) => step.to_value(),
                Err(e) => json!({ "error": serde_json::from_str::<Value>(&e.to_json()).unwrap() }), // ok: test
            };
            assert_eq!(split, first);
        }
        // A prepared package composes the same; one that does not validate fails when it is
        // prepared, with the error compose gives (less the record: there is no invocation).
        match promptloom::composer::PreparedSkill::from_json(&pkg) {
            Ok(p) => {
                for _ in 0..2 {
                    let prepared = match p.compose(&rest) {
                        Ok(step) => step.to_value(),
                        Err(e) => {
                            json!({ "error": serde_json::from_str::<Value>(&e.to_json()).unwrap() })
                        } // ok: test
                    };
                    assert_eq!(prepared.to_string(), first.to_string());
                }
            }
            Err(e) => {
                assert_eq!(first["error"]["code"], e.code());
                assert_eq!(first["error"]["message"], e.to_string());
            }
        }
        insta::assert_json_snapshot!(first);
    });
}

#[test]
fn every_error_variant_is_reachable() {
    let code = |file: &str| {
        let v = outcome(request_of(Path::new(&format!(
            "tests/composer/requests/{file}.json"
        ))));
        v["error"]["code"].as_str().map(str::to_owned)
    };
    assert_eq!(
        code("consistency-checker-no-framing").as_deref(),
        Some("MissingRequiredField")
    );
    assert_eq!(
        code("broken-template").as_deref(),
        Some("MalformedTemplate")
    );
    assert_eq!(
        code("broken-other-template").as_deref(),
        Some("MalformedTemplate")
    );
    assert_eq!(
        code("runaway-template").as_deref(),
        Some("MalformedTemplate")
    );
    assert_eq!(
        code("release-notes-approach-tool-missing").as_deref(),
        Some("UnknownTool")
    );
    assert_eq!(
        code("timeline-stage-tool-missing").as_deref(),
        Some("UnknownTool")
    );
    assert_eq!(
        code("planner-answer-widens").as_deref(),
        Some("UnknownTool")
    );
    assert_eq!(
        code("release-notes-bad-parameters").as_deref(),
        Some("ParameterMismatch")
    );
    assert_eq!(
        code("release-notes-over-budget").as_deref(),
        Some("ArtifactBudgetExceeded")
    );
    assert_eq!(
        code("release-notes-no-capabilities").as_deref(),
        Some("CapabilityNarrowing")
    );
    assert_eq!(
        code("release-notes-no-tools").as_deref(),
        Some("CapabilityNarrowing")
    );
    assert_eq!(code("invalid-request").as_deref(), Some("InvalidRequest"));
    // Structured details.
    let v = outcome(request_of(Path::new(
        "tests/composer/requests/broken-template.json",
    )));
    assert_eq!(v["error"]["details"]["line"], 3);
    assert!(v["error"]["details"]["column"].as_u64().is_some());
    let v = outcome(request_of(Path::new(
        "tests/composer/requests/release-notes-over-budget.json",
    )));
    let trim = &v["error"]["details"]["suggested_trimming"];
    assert_eq!(trim["fits"], true);
    assert!(trim["tokens_after"].as_u64().unwrap() <= 220); // ok: test
    assert_eq!(trim["drop"][0]["kind"], "example");
    // A failure after the request names its thread and skill carries the record.
    let rec = &v["error"]["details"]["invocation_record"];
    assert_eq!(rec["outcome"], "error");
    assert_eq!(rec["error"]["code"], "ArtifactBudgetExceeded");
    assert_eq!(rec["skill_name"], "Release Notes");
}

fn names(tools: &[ToolDescriptor]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

const POOL: [&str; 10] = [
    "search",
    "read",
    "write",
    "delete",
    "fetch_page",
    "fs_read",
    "fs_write",
    "create_skill",
    "list_skills",
    "add_artifact",
];

fn random_request(rng: &mut Rng) -> Value {
    let pick = |rng: &mut Rng, n: usize| -> Vec<Value> {
        let mut v: Vec<Value> = Vec::new();
        for _ in 0..rng.below(n + 1) {
            let t = Value::from(rng.pick(&POOL));
            if !v.contains(&t) {
                v.push(t);
            }
        }
        v
    };
    let available = pick(rng, 6);
    let mut caps = pick(rng, 6);
    if rng.below(4) == 0 {
        caps.push(rng.pick(&["*", "fs_*", "s*"]).into());
    }
    let surface = pick(rng, 5);
    let approach_tools = pick(rng, 3);
    let mut artifacts = vec![json!({"kind": "description", "name": "About", "content": "x"})];
    if rng.below(2) == 0 {
        let mut m = json!({});
        if rng.below(2) == 0 {
            m["tools"] = approach_tools.clone().into();
        }
        if rng.below(2) == 0 {
            m["stages"] = json!([{"name": "one", "tools": approach_tools}, {"name": "two"}]);
        }
        artifacts
            .push(json!({"kind": "approach", "name": "How", "content": "do it", "metadata": m}));
    }
    let mut metadata = json!({"framing": "Do the thing."});
    if !surface.is_empty() {
        metadata["tool_surface"] = surface.into();
    }
    if rng.below(3) == 0 {
        metadata["requires_tools"] = true.into();
    }
    json!({
        "skill_package": {"name": "Prop", "description": "generated", "metadata": metadata, "artifacts": artifacts},
        "user_request": "go", "thread_id": "t",
        "purpose": if rng.below(3) == 0 { "authoring" } else { "application" },
        "available_tools": available, "caller_capabilities": caps,
    })
}

fn allows(caps: &[Value], name: &str) -> bool {
    caps.iter()
        .filter_map(Value::as_str)
        .any(|c| match c.strip_suffix('*') {
            Some(p) => name.starts_with(p),
            None => c == name,
        })
}

#[test]
fn property_tools_never_exceed_available_and_capabilities() {
    let mut rng = Rng(0x5eed_c0de);
    let mut composed = 0;
    for _ in 0..3000 {
        let raw = random_request(&mut rng);
        let caps = raw["caller_capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let available: Vec<String> = raw["available_tools"]
            .as_array()
            .unwrap() // ok: test
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        let authoring_purpose = raw["purpose"] == "authoring";
        match compose_value(raw.clone()) {
            Ok(Step::Composed(c)) => {
                composed += 1;
                let mut all: Vec<String> = names(&c.subgraph.tool_availability);
                for n in &c.subgraph.nodes {
                    all.extend(n.tools.iter().cloned());
                }
                all.extend(c.expected_tool_calls.iter().cloned());
                for t in all {
                    assert!(allows(&caps, &t), "{t} outside the capabilities: {raw}");
                    // `available_tools` is the ceiling for every tool, authoring ones too.
                    assert!(available.contains(&t), "{t} not available: {raw}");
                    if authoring::is_authoring_tool(&t) {
                        assert!(authoring_purpose, "{t} in an application invocation: {raw}");
                    }
                }
            }
            Ok(Step::NeedsShape(_)) => unreachable!(),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    ErrorKind::UnknownTool
                        | ErrorKind::CapabilityNarrowing
                        | ErrorKind::InvalidSkill
                ),
                "{e}: {raw}"
            ),
        }
    }
    assert!(composed > 1000, "only {composed} compositions succeeded");
}

#[test]
fn property_nested_sub_skills_take_the_callers_capabilities_not_the_parents_surface() {
    let mut rng = Rng(0xabad_1dea);
    let catalog: Vec<ToolDescriptor> = POOL
        .iter()
        .map(|n| ToolDescriptor::from_value(json!({"name": n}), "t").unwrap()) // ok: test
        .collect();
    for _ in 0..1000 {
        let raw = random_request(&mut rng);
        let Ok(parent) = ComposeRequest::from_value(raw.clone()) else {
            continue;
        };
        let sub_surface: Vec<Value> = (0..rng.below(5)).map(|_| rng.pick(&POOL).into()).collect();
        let sub = import_package(
            &json!({"name": "Sub", "description": "nested", "metadata": {"framing": "Sub.", "tool_surface": sub_surface}}).to_string(),
            "",
        )
        .unwrap() // ok: test
        .0;
        let req = nested_request(&parent, sub, &catalog, "sub task".into(), Map::new());
        assert_eq!(req.thread_id, parent.thread_id);
        assert_eq!(req.caller_capabilities, parent.caller_capabilities);
        let caps = raw["caller_capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for t in names(&req.available_tools) {
            assert!(sub_surface.contains(&Value::from(t.clone())));
            assert!(allows(&caps, &t));
        }
        // Every tool the caller grants within the sub-skill's surface is there, whether or
        // not the parent skill declared it.
        for s in sub_surface.iter().filter_map(Value::as_str) {
            let expected = allows(&caps, s)
                && (parent.purpose == promptloom::composer::Purpose::Authoring
                    || !authoring::is_authoring_tool(s));
            assert_eq!(
                names(&req.available_tools).contains(&s.to_owned()),
                expected
            );
        }
        if let Ok(Step::Composed(c)) = compose(&req) {
            let authoring_purpose = parent.purpose == promptloom::composer::Purpose::Authoring;
            for t in names(&c.subgraph.tool_availability) {
                assert!(allows(&caps, &t));
                assert!(sub_surface.contains(&Value::from(t.clone())));
                assert!(authoring_purpose || !authoring::is_authoring_tool(&t));
            }
        }
    }
}

#[test]
fn authoring_tools_only_in_authoring_invocations() {
    let run = |file: &str| {
        outcome(request_of(Path::new(&format!(
            "tests/composer/requests/{file}.json"
        ))))
    };
    let authoring_c = run("authoring-skill-writer")["composition"].clone();
    let app_c = run("application-skill-writer")["composition"].clone();
    let tools = |c: &Value| -> Vec<String> {
        c["subgraph"]["tool_availability"]
            .as_array()
            .unwrap() // ok: test
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned()) // ok: test
            .collect()
    };
    assert_eq!(
        tools(&authoring_c),
        ["create_skill", "list_skills", "add_artifact"]
    );
    assert_eq!(tools(&app_c), ["search"]);
    // The planner wires them into `available_tools`; the composer never adds one itself,
    // whatever the caller's capabilities grant (the seed's hard ceiling).
    let unwired = run("authoring-not-wired")["composition"].clone();
    assert!(tools(&unwired)
        .iter()
        .all(|t| !authoring::is_authoring_tool(t)));
    // The descriptors are MCP-shaped (the composer's own, even from a name alone).
    let d = &authoring_c["subgraph"]["tool_availability"][0];
    assert!(d["description"].is_string() && d["inputSchema"]["type"] == "object");

    let mut store = SkillTables::new(MemoryBackend::new());
    let now = "2026-11-22T10:00:00Z";
    let create = json!({"name": "Timeline Check", "description": "Checks timelines", "metadata": {"framing": "Check it."}});
    // An application composition cannot call them, even with the arguments right.
    let e = authoring::call(&mut store, "create_skill", &create, &app_c, now).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::UnknownTool);
    assert!(store.list_skills().unwrap().is_empty()); // ok: test
                                                      // update_skill was not granted to the authoring caller.
    let e = authoring::call(
        &mut store,
        "update_skill",
        &json!({"name": "x"}),
        &authoring_c,
        now,
    )
    .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::UnknownTool);
    // Bad arguments are refused by the inputSchema.
    let e = authoring::call(
        &mut store,
        "create_skill",
        &json!({"name": 3}),
        &authoring_c,
        now,
    )
    .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    // The real thing.
    let made = authoring::call(&mut store, "create_skill", &create, &authoring_c, now).unwrap(); // ok: test
    assert_eq!(made["name"], "Timeline Check");
    let added = authoring::call(
        &mut store,
        "add_artifact",
        &json!({"skill": "Timeline Check", "kind": "example", "name": "One", "content": "A then B", "metadata": {"tags": ["dates"]}}),
        &authoring_c,
        now,
    )
    .unwrap(); // ok: test
    assert_eq!(added["kind"], "example");
    let listed = authoring::call(
        &mut store,
        "list_skills",
        &json!({"source": "user"}),
        &authoring_c,
        now,
    )
    .unwrap(); // ok: test
    assert_eq!(listed[0]["name"], "Timeline Check");
    let s = store.get_skill_by_name("Timeline Check").unwrap().unwrap(); // ok: test
    assert_eq!(s.artifacts.len(), 1);
    // A full authoring surface (update granted) edits the metadata.
    let mut full = authoring_c.clone();
    full["subgraph"]["tool_availability"] = json!([{"name": "update_skill"}]);
    authoring::call(
        &mut store,
        "update_skill",
        &json!({"name": "Timeline Check", "framing": "Check it twice.", "tags": ["qa"]}),
        &full,
        now,
    )
    .unwrap(); // ok: test
    let s = store.get_skill_by_name("Timeline Check").unwrap().unwrap(); // ok: test
    assert_eq!(s.metadata["framing"], "Check it twice.");
    assert_eq!(s.tags, ["qa"]);
    assert_eq!(s.artifacts.len(), 1, "artifacts stay on update");
}

fn timeline() -> promptloom::skill::Skill {
    import_package(&package("full-contract").to_string(), "")
        .unwrap()
        .0 // ok: test
}

#[test]
fn dispatch_routes_every_kind() {
    let s = timeline();
    let ctx = json!({"entity_name": "Mara", "strict": true, "events": [{"date": "1900", "text": " born "}]});
    let all = Executors {
        model: true,
        code: true,
        dspy: true,
        handlers: 0,
    };
    let none = Executors::default();
    // description → context
    let p = dispatch_in(&s, "Overview", "", &ctx, none).unwrap(); // ok: test
    assert_eq!(p.route, Route::Context);
    assert_eq!(p.input, "Use when an author asks whether events line up.");
    // prompt_template → render → model (variant per model family)
    let p = dispatch_in(&s, "Audit Prompt", "claude-sonnet-4", &ctx, all).unwrap(); // ok: test
    assert_eq!(p.route, Route::Model);
    assert_eq!(
        p.input,
        "Audit the timeline of Mara. Be strict.\n- 1900: born\n"
    );
    let p = dispatch_in(&s, "Audit Prompt", "gpt-4o", &ctx, all).unwrap(); // ok: test
    assert_eq!(p.input, "You audit timelines. Entity: Mara");
    let e = dispatch_in(&s, "Audit Prompt", "", &ctx, none).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::NoModelAdapter);
    // code_template → render → sandbox; none registered is a clear error
    let p = dispatch_in(&s, "Collect Events", "", &ctx, all).unwrap(); // ok: test
    assert_eq!(p.route, Route::Code);
    assert!(p.input.contains("workspace_search('Mara')"));
    let e = dispatch_in(&s, "Collect Events", "", &ctx, none).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::NoExecutor);
    assert_eq!(e.details()["executor"], "code");
    // dspy_module → executor, else the fallback prompt_template, else an error
    let p = dispatch_in(&s, "DSPy Auditor", "", &ctx, all).unwrap(); // ok: test
    assert_eq!(p.route, Route::Dspy);
    assert_eq!(p.dspy.as_ref().unwrap()["template_id"], "chain_of_thought"); // ok: test
    assert_eq!(
        p.dspy.as_ref().unwrap()["state_blob"],
        "eyJkZW1vcyI6IFtdfQ=="
    ); // ok: test
    let p = dispatch_in(
        &s,
        "DSPy Auditor",
        "",
        &ctx,
        Executors {
            model: true,
            ..none
        },
    )
    .unwrap(); // ok: test
    assert_eq!(p.route, Route::Model);
    assert_eq!(p.artifact.name, "Audit Prompt");
    assert_eq!(
        p.replaced.as_ref().map(|r| r.name.as_str()),
        Some("DSPy Auditor")
    );
    // A host handler replaces the built-in one for its kind (templates still rendered).
    let own = Executors {
        handlers: Executors::handler_bits(["code_template", "description"]).unwrap(), // ok: test
        ..none
    };
    let p = dispatch_in(&s, "Collect Events", "", &ctx, own).unwrap(); // ok: test
    assert_eq!(
        (p.route.name(), p.input.contains("workspace_search('Mara')")),
        ("handler", true)
    );
    let p = dispatch_in(&s, "Overview", "", &ctx, own).unwrap(); // ok: test
    assert_eq!(p.route, Route::Handler);
    assert_eq!(
        Executors::handler_bits(["video"]).unwrap_err().kind(), // ok: test
        ErrorKind::InvalidOptions
    );
    // An unknown kind is NoHandler, with the kind.
    let e = promptloom::artifact_run::known_kind(
        &json!({ "artifacts": [{ "kind": "video_template", "name": "V" }] }),
        "V",
    )
    .unwrap_err(); // ok: test
    assert_eq!(
        (e.kind(), e.details()["kind"].clone()),
        (ErrorKind::NoHandler, json!("video_template"))
    );
    let e = route(ArtifactKind::DspyModule, "X", None, none).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::NoExecutor);
    assert_eq!(e.details()["executor"], "dspy");
    // The fallback still needs the model.
    let e = dispatch_in(&s, "DSPy Auditor", "", &ctx, none).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::NoModelAdapter);
}

#[test]
fn assertions_hard_soft_and_semantic() {
    let s = timeline();
    let a = s
        .artifacts
        .iter()
        .find(|a| a.name == "Audit Prompt" && a.model_variant.is_none())
        .unwrap(); // ok: test
    let asserts = a.metadata.get("assertions");
    let none = Map::new();
    // Good JSON, long enough, no fence; the semantic one waits for the model.
    let out = r#"{"issues": [{"date": "1890", "problem": "graduation before birth"}]}"#;
    let r = assertion::evaluate(asserts, out, &none);
    assert_eq!((r.run(), r.passed()), (3, 3));
    assert_eq!(r.pending().len(), 1);
    assert!(r.pending()[0].1.contains("Does it cite dates?"));
    let mut answers = Map::new();
    answers.insert("3".into(), "Yes, it does.".into());
    let r = assertion::evaluate(asserts, out, &answers);
    assert_eq!((r.run(), r.passed()), (4, 4));
    answers.insert("3".into(), "No".into());
    let r = assertion::evaluate(asserts, out, &answers);
    assert_eq!(r.hard_failure().map(|o| o.index), Some(3));
    // Not JSON: the structural (hard) one fails; the fence pattern fails too.
    let r = assertion::evaluate(asserts, "```\nnope\n```", &none);
    assert_eq!(r.hard_failure().map(|o| o.index), Some(0));
    assert_eq!(r.outcomes[2].status, "failed");
    // Too long: the soft length assertion fails, nothing hard does.
    let long = json!({"issues": [], "note": "x".repeat(5000)}).to_string();
    let r = assertion::evaluate(asserts, &long, &none);
    assert_eq!(r.outcomes[1].status, "failed");
    assert_eq!(r.outcomes[1].severity, "soft");
    assert!(r.hard_failure().is_none());
    // A fenced JSON block still parses for the structural check.
    let fenced = json!([{"type": "structural", "schema": {"type": "object", "required": ["a"]}}]);
    assert_eq!(
        assertion::evaluate(Some(&fenced), "```json\n{\"a\": 1}\n```", &none).passed(),
        1
    );
    // The seed's format constraints: a structural assertion checks the common formats.
    let dated = json!([{"type": "structural", "schema": {"type": "object", "properties": {
        "due": {"type": "string", "format": "date"}, "owner": {"type": "string", "format": "email"}}}}]);
    let good = r#"{"due": "2026-12-31", "owner": "ops@example.com"}"#;
    assert_eq!(assertion::evaluate(Some(&dated), good, &none).passed(), 1);
    let bad = r#"{"due": "31/12/2026", "owner": "ops@example.com"}"#;
    let r = assertion::evaluate(Some(&dated), bad, &none);
    assert_eq!(r.outcomes[0].status, "failed");
    assert!(r.hard_failure().is_some());
}

#[test]
fn traces_are_stored_per_scope_and_export_as_json_lines() {
    let mut workspace = SkillTables::new(MemoryBackend::new());
    let account = SkillTables::new(MemoryBackend::new());
    let base = json!({"session_id": "s1", "skill_id": "k", "artifact_id": "a1", "artifact_kind": "prompt_template",
        "rendered_input": "Hi", "raw_output": "Hello", "started_at": "2026-11-22T10:00:00.000Z",
        "completed_at": "2026-11-22T10:00:01.250Z", "duration_ms": 1250, "input_tokens": 1000, "output_tokens": 500,
        "model_id": "claude-sonnet-4", "pricing": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
        "assertions_run": 2, "assertions_passed": 1});
    let row = workspace.record_trace(base.clone()).unwrap(); // ok: test
    assert_eq!(row["estimated_cost"], 0.0105);
    let mut second = base.clone();
    second["artifact_id"] = "a2".into();
    second["started_at"] = "2026-11-22T10:00:02.000Z".into();
    second["error"] = "boom".into();
    workspace.record_trace(second).unwrap(); // ok: test
    let lines = workspace
        .export_traces(Some("s1"), None, None, trace::Export::JsonLines)
        .unwrap(); // ok: test
    let rows: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect(); // ok: test
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["error"], "boom");
    // created_at: when the execution completed (the host may give its own).
    assert_eq!(rows[0]["created_at"], "2026-11-22T10:00:01.250Z");
    let mut third = base.clone();
    third["artifact_id"] = "a3".into();
    third["started_at"] = "2026-11-22T10:00:03.000Z".into();
    third["created_at"] = "2026-11-22T11:00:00Z".into();
    let r3 = workspace.record_trace(third).unwrap(); // ok: test
    assert_eq!(r3["created_at"], "2026-11-22T11:00:00Z");
    // The DSPy dataset: one example per execution that gave output without an error.
    let dspy = workspace
        .export_traces(Some("s1"), None, None, trace::Export::Dspy)
        .unwrap(); // ok: test
    let examples: Vec<Value> = dspy
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect(); // ok: test
    assert_eq!(examples.len(), 2, "{dspy}");
    assert_eq!(
        examples[0],
        json!({"rendered_input": "Hi", "raw_output": "Hello", "passed": false, "score": 0.5,
            "skill_id": "k", "artifact_id": "a1", "trace_id": row["id"], "dspy_inputs": ["rendered_input"]})
    );
    assert_eq!(examples[1]["artifact_id"], "a3");
    // Columns in the seed's order.
    let first_line = lines.lines().next().unwrap(); // ok: test
    let mut last = 0;
    for c in trace::COLUMNS {
        let at = first_line.find(&format!("\"{c}\":")).unwrap(); // ok: test
        assert!(at >= last, "{c} out of order");
        last = at;
    }
    assert_eq!(
        workspace
            .export_traces(Some("s1"), None, Some("a2"), trace::Export::JsonLines)
            .unwrap()
            .lines()
            .count(),
        1
    ); // ok: test
    assert_eq!(
        account
            .export_traces(None, None, None, trace::Export::JsonLines)
            .unwrap(),
        ""
    ); // ok: test
    let e = workspace
        .record_trace(json!({"session_id": "s"}))
        .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
}

#[test]
fn invocation_records_are_stored_beside_the_turn() {
    let mut store = MessageStore::new(MemoryBackend::new());
    let ok = outcome(request_of(Path::new(
        "tests/composer/requests/release-notes-developers.json",
    )));
    let bad = outcome(request_of(Path::new(
        "tests/composer/requests/release-notes-over-budget.json",
    )));
    let rec_ok = ok["composition"]["invocation_record"].clone();
    let rec_bad = bad["error"]["details"]["invocation_record"].clone();
    assert_eq!(rec_ok["outcome"], "success");
    assert_eq!(rec_ok["skill_version"], "1.4.0");
    assert_eq!(
        rec_ok["used_artifacts"],
        ok["composition"]["used_artifacts"]
    );
    assert_eq!(
        rec_ok["expected_tool_calls"],
        json!(["search_prs", "get_pr"])
    );
    store.record_invocation(&rec_ok).unwrap(); // ok: test
    store.record_invocation(&rec_bad).unwrap(); // ok: test
    assert_eq!(store.invocations("thread-1").unwrap(), vec![rec_ok]); // ok: test
    assert_eq!(store.invocations("thread-3").unwrap(), vec![rec_bad]); // ok: test
    assert!(store.record_invocation(&json!({"x": 1})).is_err());
}

/// How a composition is lowered, in one place for every face: the caller's system text
/// first and a blank line, the composition's framing after it; the composition's tools
/// before the caller's; an empty caller system is none; tools that are not an array are a
/// coded error.
#[test]
fn composition_lowering_merges_the_callers_system_and_tools() {
    use promptloom::composer::wire::composition_lowering;
    let comp = json!({
        "prompt": { "sections": [
            { "kind": "framing", "text": "F" },
            { "kind": "context", "text": "C" },
            { "kind": "request", "text": "R" }
        ] },
        "subgraph": { "tool_availability": [{ "name": "own", "parameters": { "type": "object" } }] }
    })
    .to_string();
    let mine = r#"[{"name":"mine","parameters":{"type":"object"}}]"#;
    let l = composition_lowering(&comp, Some("S"), Some(mine)).unwrap(); // ok: test
    assert_eq!(l.system, "S\n\nF\n\nC");
    assert_eq!(l.message["parts"][0]["text"], "R");
    let names: Vec<&str> = l.tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["own", "mine"]);
    for none in [None, Some("")] {
        let l = composition_lowering(&comp, none, None).unwrap(); // ok: test
        assert_eq!(l.system, "F\n\nC");
        assert_eq!(l.tools.len(), 1);
    }
    let e = composition_lowering(&comp, None, Some(r#"{"name":"x"}"#)).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidOptions);
    let e = composition_lowering("{}", None, None).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
}

#[test]
fn replay_proves_the_prompt_or_names_what_changed() {
    use promptloom::composer::replay::{verify, verify_json};
    use promptloom::composer::request::read_package;
    // Every successful golden composition replays byte-identically from its record.
    let mut replayed = 0;
    for entry in std::fs::read_dir("tests/composer/requests")
        .unwrap()
        .flatten()
    {
        let req = request_of(&entry.path());
        let Ok(Step::Composed(c)) = compose_value(req.clone()) else {
            continue;
        };
        let skill = read_package(&req["skill_package"]).unwrap(); // ok: test
        let memory: Vec<Value> = req["memory_context"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let out: Value = serde_json::from_str(
            &verify_json(
                &c.invocation_record.to_value().to_string(),
                &skill.to_value().to_string(),
                &Value::from(memory).to_string(),
            )
            .unwrap(), // ok: test
        )
        .unwrap(); // ok: test
        assert_eq!(out["identical"], true, "{}: {out}", entry.path().display());
        assert_eq!(out["changes"], json!([]));
        replayed += 1;
    }
    assert!(replayed >= 7, "{replayed}");
    // Now change things, one at a time.
    let req = request_of(Path::new(
        "tests/composer/requests/release-notes-memory-marks.json",
    ));
    let Ok(Step::Composed(c)) = compose_value(req.clone()) else {
        panic!("composes")
    };
    let record = c.invocation_record.to_value();
    let skill = read_package(&req["skill_package"]).unwrap(); // ok: test
    let items = |v: &Value| -> Vec<promptloom::composer::request::MemoryItem> {
        v.as_array()
            .unwrap() // ok: test
            .iter()
            .map(|m| promptloom::composer::request::MemoryItem {
                id: m["id"].as_str().unwrap_or("").to_owned(),
                tier: m["tier"].as_str().map(str::to_owned),
                content: m["content"].as_str().unwrap_or("").to_owned(),
            })
            .collect()
    };
    let memory = items(&req["memory_context"]);
    let kinds = |out: &Value| -> Vec<String> {
        out["changes"]
            .as_array()
            .unwrap() // ok: test
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c["kind"].as_str().unwrap_or(""),
                    c["change"].as_str().or(c["name"].as_str()).unwrap_or("")
                )
            })
            .collect()
    };
    // The framing template edited.
    let mut edited = skill.clone();
    if let Some(a) = edited
        .artifacts
        .iter_mut()
        .find(|a| a.name == "Notes Framing")
    {
        a.content.push_str("\nBe brief.");
    }
    let out = verify(&record, &edited, &memory).unwrap(); // ok: test
    assert_eq!(
        (out["identical"].clone(), kinds(&out)),
        (json!(false), vec!["template modified".to_owned()])
    );
    // A memory item changed, one gone.
    let mut mem = memory.clone();
    mem.retain(|m| m.id != "mem-3");
    if let Some(m) = mem.iter_mut().find(|m| m.id == "mem-1") {
        m.content = "Acme ships on Wednesdays.".into();
    }
    let out = verify(&record, &skill, &mem).unwrap(); // ok: test
    assert_eq!(kinds(&out), ["memory modified", "memory missing"]);
    // A parameter default changed in the skill's contract.
    let mut defaults = skill.clone();
    defaults.metadata["parameters"]["properties"]["tone"]["default"] = json!("upbeat");
    let out = verify(&record, &defaults, &memory).unwrap(); // ok: test
    assert!(kinds(&out).contains(&"parameter tone".to_owned()), "{out}");
    // An artifact removed.
    let mut fewer = skill.clone();
    fewer.artifacts.retain(|a| a.name != "Style guide");
    let out = verify(&record, &fewer, &memory).unwrap(); // ok: test
    assert_eq!(kinds(&out), ["artifact removed"]);
    // A failed composition's record cannot be replayed.
    let failed = json!({ "outcome": "error", "thread_id": "t" });
    assert_eq!(
        verify(&failed, &skill, &memory).unwrap_err().kind(),
        ErrorKind::InvalidRequest
    ); // ok: test
}

#[test]
fn an_empty_tool_surface_means_no_tools_and_an_absent_one_no_narrowing_everywhere() {
    let caps = json!(["search", "fetch"]);
    let catalog: Vec<ToolDescriptor> = ["search", "fetch", "write"]
        .iter()
        .map(|n| ToolDescriptor::from_value(json!({"name": n}), "t").unwrap()) // ok: test
        .collect();
    let skill = |surface: Option<Value>| {
        let mut metadata = json!({"framing": "Do it."});
        if let Some(s) = surface {
            metadata["tool_surface"] = s;
        }
        json!({"name": "S", "description": "d", "metadata": metadata})
    };
    for (surface, want) in [
        (None, vec!["search", "fetch"]),
        (Some(json!([])), vec![]),
        (Some(json!(["fetch", "write"])), vec!["fetch"]),
    ] {
        // At the top level.
        let req = json!({"skill_package": skill(surface.clone()), "user_request": "x", "thread_id": "t",
            "available_tools": ["search", "fetch", "write"], "caller_capabilities": caps});
        let Ok(Step::Composed(c)) = compose_value(req.clone()) else {
            panic!("composes: {req}");
        };
        assert_eq!(
            names(&c.subgraph.tool_availability),
            want,
            "top level, surface {surface:?}"
        );
        // For a nested sub-skill, under a parent that declares a surface of its own.
        let parent =
            ComposeRequest::from_value(json!({"skill_package": skill(Some(json!(["search"]))),
            "user_request": "x", "thread_id": "t", "caller_capabilities": caps}))
            .unwrap(); // ok: test
        let sub = import_package(&skill(surface.clone()).to_string(), "")
            .unwrap() // ok: test
            .0;
        let nested = nested_request(&parent, sub, &catalog, "sub".into(), Map::new());
        assert_eq!(
            names(&nested.available_tools),
            want,
            "nested, surface {surface:?}"
        );
    }
}

#[test]
fn the_shape_question_comes_after_the_checks_and_only_for_skills_that_delegate() {
    let delegating = |framing: &str| {
        json!({"name": "P", "description": "d",
            "metadata": {"framing": {"artifact": "F"}, "planner_delegates_shape": true},
            "artifacts": [{"kind": "prompt_template", "name": "F", "content": framing}]})
    };
    // A framing that does not render fails before the model is asked for a shape.
    let bad = json!({"skill_package": delegating("Hi {{ 1 // 0 }}"), "user_request": "x", "thread_id": "t"});
    assert_eq!(
        compose_value(bad).err().unwrap().kind(),
        ErrorKind::MalformedTemplate
    ); // ok: test
       // Over the budget: refused before the question, too.
    let long = json!({"skill_package": delegating(&"word ".repeat(400)), "user_request": "x", "thread_id": "t", "context_budget": 10});
    let e = compose_value(long).err().unwrap(); // ok: test
    assert_eq!(e.kind(), ErrorKind::ArtifactBudgetExceeded);
    // A skill that checks out asks.
    let ok =
        json!({"skill_package": delegating("Plan it."), "user_request": "x", "thread_id": "t"});
    assert!(matches!(compose_value(ok), Ok(Step::NeedsShape(_))));
    // A caller's shape for a skill that did not opt in is refused, not honoured.
    let authored = json!({"skill_package": {"name": "A", "description": "d", "metadata": {"framing": "Do it."}},
        "user_request": "x", "thread_id": "t", "delegated_shape": {"kind": "loop"}});
    let e = compose_value(authored).err().unwrap(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(e.path(), Some("delegated_shape"));
    // An empty name is the composer's MissingRequiredField, as a missing one is.
    let unnamed = json!({"skill_package": {"name": "", "description": "d", "metadata": {"framing": "Do it."}},
        "user_request": "x", "thread_id": "t"});
    assert_eq!(
        compose_value(unnamed).err().unwrap().kind(),
        ErrorKind::MissingRequiredField
    ); // ok: test
}

/// A raw key-value store in a map (what a host KV or `wasi:keyvalue` is to the core),
/// counting the values it is asked for.
#[derive(Default)]
struct CountingKv {
    map: std::collections::BTreeMap<String, String>,
    gets: std::cell::Cell<usize>,
}

impl promptloom::store::kv::RawKv for CountingKv {
    fn get(&self, key: &str) -> promptloom::Result<Option<String>> {
        self.gets.set(self.gets.get() + 1);
        Ok(self.map.get(key).cloned())
    }
    fn set(&mut self, key: &str, value: &str) -> promptloom::Result<()> {
        self.map.insert(key.to_owned(), value.to_owned());
        Ok(())
    }
    fn delete(&mut self, key: &str) -> promptloom::Result<()> {
        self.map.remove(key);
        Ok(())
    }
    fn keys(&self, prefix: &str) -> promptloom::Result<Vec<String>> {
        Ok(self
            .map
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect())
    }
}

/// Every page of `session`'s traces (filtered), following the cursors: the items of each.
fn all_pages<B: promptloom::store::Backend>(
    store: &SkillTables<B>,
    session: Option<&str>,
    skill: Option<&str>,
    size: usize,
) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page: Value = serde_json::from_str(
            &store
                .trace_page_json(session, skill, None, after.as_deref(), size)
                .unwrap(), // ok: test
        )
        .unwrap(); // ok: test
        pages.push(page["items"].as_array().cloned().unwrap_or_default());
        match page["next"].as_str() {
            Some(c) => after = Some(c.to_owned()),
            None => return pages,
        }
    }
}

#[test]
fn trace_pages_follow_their_cursors_over_every_backend() {
    let trace = |session: &str, i: usize| {
        json!({"session_id": session, "skill_id": if i.is_multiple_of(3) { "k3" } else { "k" }, "artifact_id": "a",
            "artifact_kind": "prompt_template", "rendered_input": format!("in {i}"), "raw_output": "out",
            "started_at": format!("2026-11-22T10:00:{:02}.000Z", i), "completed_at": format!("2026-11-22T10:00:{:02}.500Z", i)})
    };
    let mut memory = SkillTables::new(MemoryBackend::new());
    let mut kv = SkillTables::new(promptloom::store::kv::Journaled::new(
        CountingKv::default(),
        "p/",
    ));
    for i in 0..25 {
        for session in ["s1", "s2"] {
            memory.record_trace(trace(session, i)).unwrap(); // ok: test
            kv.record_trace(trace(session, i)).unwrap(); // ok: test
        }
    }
    let lines = |store: &SkillTables<MemoryBackend>, session, skill| -> Vec<Value> {
        store
            .export_traces(session, skill, None, trace::Export::JsonLines)
            .unwrap() // ok: test
            .lines()
            .map(|l| serde_json::from_str(l).unwrap()) // ok: test
            .collect()
    };
    // Pages of 10: 10, 10, 5, in start order, and together the export.
    let pages = all_pages(&memory, Some("s1"), None, 10);
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [10, 10, 5]);
    assert_eq!(pages.concat(), lines(&memory, Some("s1"), None));
    // A page that ends the range exactly says so (no empty page after it).
    assert_eq!(all_pages(&memory, Some("s1"), None, 25).len(), 1);
    assert_eq!(all_pages(&memory, Some("s1"), None, 5).len(), 5);
    // Every session; a filter leaves pages short but the cursors still cover the range.
    assert_eq!(
        all_pages(&memory, None, None, 7).concat(),
        lines(&memory, None, None)
    );
    let k3 = all_pages(&memory, None, Some("k3"), 7);
    assert_eq!(k3.len(), 8);
    assert_eq!(k3.concat(), lines(&memory, None, Some("k3")));
    // The KV backend answers the same pages, and reads only the values of a page's rows.
    assert_eq!(
        all_pages(&kv, Some("s2"), None, 10),
        all_pages(&memory, Some("s2"), None, 10)
    );
    let before = kv.backend().raw().gets.get();
    kv.trace_page_json(Some("s2"), None, None, None, 4).unwrap(); // ok: test
    let read = kv.backend().raw().gets.get() - before;
    assert!(read <= 4 + 1 + 2, "a page of 4 read {read} values");
    // The read plan a host runs (JS, the async stores) answers what the store answers.
    let q = promptloom::store::reads::Query::TracePage {
        session: "s1".into(),
        skill: "k".into(),
        artifact: String::new(),
        after: String::new(),
        limit: 6,
    };
    assert_eq!(
        promptloom::store::reads::run(memory.backend(), q.clone()).unwrap(), // ok: test
        memory
            .trace_page_json(Some("s1"), Some("k"), None, None, 6)
            .unwrap()  // ok: test
    );
    assert_eq!(
        promptloom::store::reads::Query::from_text(&q.to_text()).unwrap(),
        q
    ); // ok: test
       // Page sizes are 1 ..= 10,000.
    for bad in [0, 10_001] {
        let e = memory
            .trace_page_json(None, None, None, None, bad)
            .unwrap_err(); // ok: test
        assert_eq!(
            (e.kind(), e.path()),
            (ErrorKind::InvalidOptions, Some("pageSize"))
        );
    }
    // An empty store has one empty page.
    let empty = SkillTables::new(MemoryBackend::new());
    assert_eq!(
        empty.trace_page_json(None, None, None, None, 10).unwrap(), // ok: test
        r#"{"items":[],"next":null}"#
    );
}
