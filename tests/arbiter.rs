//! Skill state machines and the arbiter: the validation report of every spec in
//! `tests/arbiter/specs` (reviewed snapshots), one test per rule and per arbiter outcome,
//! registries (overrides, fail-fast, built-ins), property tests over generated specs and
//! proposal sequences (allowlists, transitions, `max_steps`, replay), the step context,
//! Mermaid, and a composition run as a state machine.
#![cfg(all(not(target_arch = "wasm32"), feature = "composer"))]

mod common;
use common::{system_specs, Rng};

use promptloom::arbiter::{
    mermaid, spec_of_composition, validate_spec, validate_spec_text, Arbiter, Proposal,
    SkillRegistry, Status,
};
use promptloom::composer::{compose_value, Step};
use promptloom::ErrorKind;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

const TOOLS: [&str; 4] = [
    "choir.memory.query",
    "choir.fs.read",
    "choir.fs.write",
    "search",
];

fn tools() -> BTreeSet<String> {
    TOOLS.iter().map(|s| s.to_string()).collect()
}

fn spec(name: &str) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(format!("tests/arbiter/specs/{name}.json")).unwrap(),
    )
    .unwrap() // ok: test
}

fn codes(v: &Value) -> Vec<String> {
    validate_spec(v, Some(&tools()))
        .problems
        .iter()
        .map(|p| format!("{} {}", p.code, p.path))
        .collect()
}

#[test]
fn validation_reports() {
    insta::glob!("arbiter/specs/*.json", |path| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(); // ok: test
        insta::assert_json_snapshot!(validate_spec(&v, Some(&tools())).to_value());
    });
}

/// A spec's text validates as its JSON tree does, whichever reader takes it: every fixture,
/// every system skill, generated specs, and texts at each edge of the fast reader's shape
/// (each must give the tree reader's problems, or its error for text that is not JSON).
#[test]
fn spec_text_validates_as_the_tree_does() {
    let same = |text: &str| {
        let tree = serde_json::from_str::<Value>(text)
            .map(|v| validate_spec(&v, Some(&tools())).to_value());
        let fast = validate_spec_text(text, Some(&tools())).map(|r| r.to_value());
        match (tree, fast) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(_), Err(e)) => assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{text}"),
            (a, b) => panic!("{text}: tree {a:?}, text {b:?}"),
        }
    };
    let mut n = 0;
    for entry in std::fs::read_dir("tests/arbiter/specs").unwrap() {
        same(&std::fs::read_to_string(entry.unwrap().path()).unwrap()); // ok: test
        n += 1;
    }
    for v in system_specs() {
        same(&v.to_string());
        same(&serde_json::to_string_pretty(&v).unwrap()); // ok: test
        n += 2;
    }
    let mut rng = Rng(0x5bec_7e47);
    for _ in 0..200 {
        same(&random_spec(&mut rng).to_string());
        n += 1;
    }
    let ok = r#""name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"go","to":"b"}]},"b":{"terminal":true}}"#;
    let edges = [
        format!("{{{ok}}}"),
        format!("{{{ok},\"max_steps\":0}}"),
        format!("{{{ok},\"max_steps\":-0}}"),
        format!("{{{ok},\"max_steps\":1.0}}"),
        format!("{{{ok},\"max_steps\":-3}}"),
        format!("{{{ok},\"max_steps\":\"5\"}}"),
        format!("{{{ok},\"max_steps\":18446744073709551616}}"),
        format!("{{{ok},\"max_steps\":null,\"interruptible\":null,\"description\":null}}"),
        format!("{{{ok},\"interruptible\":0}}"),
        format!("{{{ok},\"description\":7}}"),
        format!("{{{ok},\"input_schema\":null,\"output_schema\":{{\"type\":\"nope\"}}}}"),
        format!("{{{ok},\"name\":\"twice\"}}"),
        format!("{{{ok},\"unknown\":[1,{{\"a\":null}}]}}"),
        format!("{{{ok}}} trailing"),
        format!("[{{{ok}}}]"),
        format!("{{{ok}"),
        r#"{"name":"  ","initial_state":"a","states":{"a":{"terminal":true}}}"#.into(),
        r#"{"name":null,"initial_state":"a","states":{"a":{"terminal":true}}}"#.into(),
        r#"{"name":"n","states":{"a":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":null}"#.into(),
        r#"{"name":"n","initial_state":"a","states":[]}"#.into(),
        r#"{"name":"n","initial_state":"a"}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":[]}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true},"a":{"transitions":[{"on":"x","to":"a"}]}}}"#.into(),
        r#"{"name":"n","initial_state":"\u0061","states":{"\u0061":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":true,"transitions":null,"objective":null,"allowed_tools":null}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"terminal":"yes"}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"allowed_tools":"search","terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"allowed_tools":["search",3],"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"allowed_tools":["nope"],"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":{"on":"x","to":"b"}},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[["x","b"]]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"","to":"b"}]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x"}]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x","to":"b","to":"a"}]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x","to":"b","why":1}]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x","to":"b"},{"on":"x","to":"a"}]},"b":{"terminal":true}}}"#.into(),
        r#"{"name":"n","initial_state":"a","states":{"a":{"transitions":[{"on":"x","to":"zz"}]},"b":{"terminal":true}}}"#.into(),
        // Problems in states given out of name order (reported in name order, as the tree
        // reports them).
        r#"{"name":"n","initial_state":"z","states":{"z":{"transitions":[{"on":"x","to":"q"}]},"m":{"allowed_tools":["nope"]},"a":{"terminal":true,"transitions":[{"on":"y","to":"z"}]}}}"#.into(),
        "[]".into(),
        "null".into(),
        "".into(),
        "{".into(),
    ];
    for text in &edges {
        same(text);
    }
    assert!(n > 200);
}

#[test]
fn one_test_per_rule() {
    assert!(codes(&spec("build-feature")).is_empty());
    assert_eq!(
        codes(&spec("broken-missing-initial")),
        ["missing-initial-state initial_state"]
    );
    assert_eq!(
        codes(&spec("broken-unknown-target")),
        ["unknown-state states.a.transitions[0].to"]
    );
    assert_eq!(codes(&spec("broken-no-terminal")), ["no-terminal states"]);
    assert_eq!(
        codes(&spec("broken-terminal-with-transitions")),
        ["terminal-with-transitions states.done.transitions"]
    );
    assert_eq!(
        codes(&spec("broken-unreachable")),
        ["unreachable-state states.orphan"]
    );
    assert_eq!(
        codes(&spec("broken-trap")),
        ["no-path-to-terminal states.pit"]
    );
    assert_eq!(
        codes(&spec("broken-unknown-tool")),
        ["unknown-tool states.a.allowed_tools[1]"]
    );
    assert_eq!(
        codes(&spec("broken-duplicate-event")),
        ["duplicate-event states.a.transitions[1].on"]
    );
    let schema = codes(&spec("broken-schemas"));
    assert!(
        schema.iter().any(|c| c.contains("input_schema"))
            && schema.iter().any(|c| c.contains("output_schema")),
        "{schema:?}"
    );
    // Every problem at once.
    assert!(codes(&spec("broken-everything")).len() >= 6);
}

fn registry() -> Arc<SkillRegistry> {
    let tools: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    let mut specs = system_specs();
    specs.push(spec("build-feature"));
    Arc::new(SkillRegistry::build(&specs, &[], &tools).unwrap())
    // ok: test
}

#[test]
fn registries_fail_fast_override_by_name_and_hold_the_system_skills() {
    let tools: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    let e = SkillRegistry::build(
        &[
            spec("build-feature"),
            spec("broken-trap"),
            spec("broken-unknown-tool"),
        ],
        &[],
        &tools,
    )
    .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    assert_eq!(e.details()["specs"].as_array().map(Vec::len), Some(2));
    let mut agent = spec("build-feature");
    agent["description"] = "the agent's own".into();
    let r = SkillRegistry::build(&[spec("build-feature")], &[agent], &tools).unwrap(); // ok: test
    assert_eq!(
        r.get("build_feature").unwrap().description,
        "the agent's own"
    ); // ok: test
       // The system skills validate with the same code (their proposal tools are the arbiter's).
    for b in system_specs() {
        let mut t: BTreeSet<String> = tools.iter().cloned().collect();
        t.insert("choir.propose.tool".into());
        t.insert("choir.propose.skill".into());
        assert!(validate_spec(&b, Some(&t)).is_valid(), "{}", b["name"]);
    }
    assert_eq!(
        registry().names(),
        ["build_feature", "skill-builder", "tool-builder"]
    );
    // The summary for the system prompt: a heading, one line per skill, by name.
    let summary = registry().summary();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 4, "{summary}");
    assert_eq!(lines[0], "Skills you can start:");
    for (line, name) in lines[1..].iter().zip(registry().names()) {
        assert!(line.starts_with(&format!("- {name}: ")), "{line}");
        assert!(
            !line.contains('\n') && line.chars().count() <= 204,
            "{line}"
        );
    }
    let long = json!({"name": "long", "description": format!("  First   line {}\nsecond line", "x".repeat(300)),
        "initial_state": "a", "states": {"a": {"terminal": true}}});
    let reg = SkillRegistry::build(&[long], &[], &[]).unwrap(); // ok: test
    let line = reg.summary().lines().nth(1).unwrap().to_owned(); // ok: test
    assert!(
        line.starts_with("- long: First line xxx") && line.ends_with('…'),
        "{line}"
    );
    assert_eq!(line.chars().count(), "- long: ".len() + 200);
    assert_eq!(SkillRegistry::build(&[], &[], &[]).unwrap().summary(), ""); // ok: test
                                                                            // Without the host tools they need, the system skills fail the build.
    assert!(SkillRegistry::build(&system_specs(), &[], &[]).is_err());
}

fn tool(name: &str) -> Proposal {
    Proposal::Tool {
        name: name.into(),
        arguments: json!({}),
    }
}
fn go(event: &str) -> Proposal {
    Proposal::Transition {
        event: event.into(),
    }
}

#[test]
fn every_arbiter_outcome() {
    let mut a = Arbiter::new(registry());
    // Input is checked; unknown skills are NotFound.
    assert_eq!(
        a.start("core", "build_feature", json!({}))
            .unwrap_err()
            .kind(),
        ErrorKind::ParameterMismatch
    ); // ok: test
    assert_eq!(
        a.start("core", "nope", json!({})).unwrap_err().kind(),
        ErrorKind::NotFound
    ); // ok: test
    a.start("core", "build_feature", json!({"feature": "dark mode"}))
        .unwrap(); // ok: test
                   // One active skill per lane.
    let busy = a.start("core", "tool-builder", json!({})).unwrap_err(); // ok: test
    assert_eq!(busy.details()["reason"], "lane-busy");
    // A tool in the allowlist; one outside it, with what would have been valid.
    assert!(
        a.propose("core", tool("choir.memory.query"))
            .unwrap()
            .accepted
    ); // ok: test
    let o = a.propose("core", tool("choir.fs.write")).unwrap(); // ok: test
    assert!(!o.accepted);
    let e = o.error.unwrap(); // ok: test
    assert_eq!(
        (
            e["code"].as_str(),
            e["allowed_tools"].clone(),
            e["transitions"].clone(),
            e["retries_left"].as_u64()
        ),
        (
            Some("tool-not-allowed"),
            json!(["choir.memory.query"]),
            json!(["complete"]),
            Some(2)
        )
    );
    // A transition the state has; one it does not; finish outside a terminal state; spawning.
    assert_eq!(a.propose("core", go("complete")).unwrap().state, "plan"); // ok: test
    assert_eq!(
        a.propose("core", go("deploy")).unwrap().error.unwrap()["code"],
        "invalid-transition"
    ); // ok: test
    assert_eq!(
        a.propose("core", Proposal::Finish { output: json!({}) })
            .unwrap()
            .error
            .unwrap()["code"],
        "not-terminal"
    ); // ok: test
    let spawn = a
        .propose(
            "core",
            Proposal::Spawn {
                skill: "tool-builder".into(),
            },
        )
        .unwrap(); // ok: test
    assert_eq!(spawn.error.unwrap()["code"], "no-spawn"); // ok: test
                                                          // That was the third refusal in `plan` (budget 2) and `plan` has no `error` transition:
                                                          // the run fails.
    let r = a.run("core").unwrap(); // ok: test
    assert_eq!(
        (r.status, r.reason),
        (Status::Failed, Some("retry-budget-exhausted"))
    );
    assert!(a.propose("core", go("complete")).is_err());
    // The retry budget resets on an accepted proposal; an `error` transition is taken.
    a.start("core", "build_feature", json!({"feature": "x"}))
        .unwrap(); // ok: test
    for e in ["complete", "complete"] {
        a.propose("core", go(e)).unwrap(); // ok: test
    }
    assert_eq!(a.run("core").unwrap().state, "modify"); // ok: test
    for _ in 0..3 {
        a.propose("core", tool("search")).unwrap(); // ok: test
    }
    let r = a.run("core").unwrap(); // ok: test
    assert_eq!(
        (r.state.as_str(), r.status, r.retries),
        ("plan", Status::Running, 0)
    );
    // Finish in the terminal state, output checked against the output_schema.
    for e in ["complete", "complete", "complete"] {
        a.propose("core", go(e)).unwrap(); // ok: test
    }
    assert_eq!(a.run("core").unwrap().state, "done"); // ok: test
    let bad = a
        .propose(
            "core",
            Proposal::Finish {
                output: json!({"nope": 1}),
            },
        )
        .unwrap(); // ok: test
    assert_eq!(bad.error.unwrap()["code"], "output-mismatch"); // ok: test
    let ok = a
        .propose(
            "core",
            Proposal::Finish {
                output: json!({"summary": "done"}),
            },
        )
        .unwrap(); // ok: test
    assert_eq!(ok.status, Status::Finished);
    // max_steps forces termination.
    a.start("core", "build_feature", json!({"feature": "x"}))
        .unwrap(); // ok: test
    let mut last = None;
    for i in 0..20 {
        let p = if i % 2 == 0 {
            go("complete")
        } else {
            go("revise")
        };
        last = Some(a.propose("core", p).unwrap()); // ok: test
        if a.run("core").unwrap().status != Status::Running {
            break;
        } // ok: test
    }
    let r = a.run("core").unwrap(); // ok: test
    assert_eq!(
        (r.status, r.reason, r.step),
        (Status::Terminated, Some("max-steps"), 20)
    );
    assert_eq!(last.unwrap().status, Status::Terminated); // ok: test
                                                          // Cancel: an interruptible skill stops; a non-interruptible one refuses.
    a.start("core", "build_feature", json!({"feature": "x"}))
        .unwrap(); // ok: test
    assert_eq!(a.cancel("core").unwrap().status, Status::Cancelled); // ok: test
    let mut stiff = spec("build-feature");
    stiff["name"] = "stiff".into();
    stiff["interruptible"] = false.into();
    let tools: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    let mut b = Arbiter::new(Arc::new(
        SkillRegistry::build(&[stiff], &[], &tools).unwrap(),
    )); // ok: test
    b.start("edge", "stiff", json!({"feature": "x"})).unwrap(); // ok: test
    assert_eq!(
        b.cancel("edge").unwrap_err().details()["reason"],
        "not-interruptible"
    ); // ok: test
}

#[test]
fn system_skills_make_proposal_records_and_never_install() {
    let mut a = Arbiter::new(registry());
    a.start(
        "core",
        "skill-builder",
        json!({"request": "a timeline checker"}),
    )
    .unwrap(); // ok: test
    for e in ["complete", "complete", "complete"] {
        a.propose("core", go(e)).unwrap(); // ok: test
    }
    assert_eq!(a.run("core").unwrap().state, "propose"); // ok: test
                                                         // An invalid SkillSpec is refused with the validator's problems.
    let bad = a
        .propose(
            "core",
            Proposal::Tool {
                name: "choir.propose.skill".into(),
                arguments: json!({"spec": spec("broken-trap")}),
            },
        )
        .unwrap(); // ok: test
    assert_eq!(bad.error.as_ref().unwrap()["code"], "invalid-skill-spec"); // ok: test
    assert_eq!(
        bad.error.unwrap()["problems"][0]["code"],
        "no-path-to-terminal"
    ); // ok: test
    let good = a
        .propose(
            "core",
            Proposal::Tool {
                name: "choir.propose.skill".into(),
                arguments: json!({"spec": spec("build-feature")}),
            },
        )
        .unwrap(); // ok: test
    let rec = good.proposal_record.unwrap(); // ok: test
    assert_eq!((rec.kind, rec.status), ("skill", "pending"));
    assert_eq!(a.run("core").unwrap().proposals.len(), 1); // ok: test
                                                           // tool-builder's propose state records a tool manifest.
    a.propose("core", go("complete")).unwrap(); // ok: test
    a.propose(
        "core",
        Proposal::Finish {
            output: json!(null),
        },
    )
    .unwrap(); // ok: test
    a.start("core", "tool-builder", json!({})).unwrap(); // ok: test
    for e in ["complete", "complete", "complete"] {
        a.propose("core", go(e)).unwrap(); // ok: test
    }
    let t = a
        .propose(
            "core",
            Proposal::Tool {
                name: "choir.propose.tool".into(),
                arguments: json!({"name": "grep"}),
            },
        )
        .unwrap(); // ok: test
    assert_eq!(t.proposal_record.unwrap().kind, "tool"); // ok: test
}

#[test]
fn the_step_context_holds_only_the_current_objective() {
    let mut a = Arbiter::new(registry());
    a.start("core", "build_feature", json!({"feature": "x"}))
        .unwrap(); // ok: test
    a.propose("core", tool("choir.memory.query")).unwrap(); // ok: test
    let ctx = a
        .step_context("core", &json!({"global": "repo acme", "memory": ["m1"]}))
        .unwrap(); // ok: test
    let text = ctx.to_string();
    assert!(text.contains("Clarify and restate the requirement."));
    for other in [
        "Produce an implementation plan.",
        "Apply changes to files.",
        "Verify correctness.",
    ] {
        assert!(!text.contains(other), "{other} leaked");
    }
    assert_eq!(
        ctx["step_context"]["calls"][0]["tool"],
        "choir.memory.query"
    );
    assert_eq!(ctx["context"]["global"], "repo acme");
    let h = a.hierarchy("s1");
    assert_eq!(h["lanes"][0]["skill"]["step"]["n"], 1);
}

fn random_spec(rng: &mut Rng) -> Value {
    let n = 2 + rng.below(6);
    let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    let mut states = serde_json::Map::new();
    for (i, name) in names.iter().enumerate() {
        if i == n - 1 {
            states.insert(name.clone(), json!({"terminal": true}));
            continue;
        }
        let mut ts = vec![json!({"on": "next", "to": names[i + 1]})];
        if rng.below(2) == 0 {
            ts.push(json!({"on": "back", "to": names[rng.below(i + 1)]}));
        }
        let allowed: Vec<&str> = TOOLS
            .iter()
            .copied()
            .filter(|_| rng.below(2) == 0)
            .collect();
        states.insert(
            name.clone(),
            json!({"objective": format!("do {name}"), "allowed_tools": allowed, "transitions": ts}),
        );
    }
    json!({"name": "gen", "description": "generated", "initial_state": "s0", "states": states, "max_steps": 5 + rng.below(20)})
}

#[test]
fn property_the_arbiter_never_exceeds_the_spec_and_replays_exactly() {
    let mut rng = Rng(0x0a11_ce55);
    let tools: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    for _ in 0..500 {
        let s = random_spec(&mut rng);
        let reg = Arc::new(SkillRegistry::build(std::slice::from_ref(&s), &[], &tools).unwrap()); // ok: test
        let sp = reg.get("gen").unwrap().clone(); // ok: test
        let mut a = Arbiter::new(reg.clone());
        a.start("l", "gen", json!(null)).unwrap(); // ok: test
        for _ in 0..40 {
            let before = a.run("l").unwrap().state.clone(); // ok: test
            let p = match rng.below(4) {
                0 => tool(TOOLS[rng.below(TOOLS.len())]),
                1 => go(["next", "back", "jump"][rng.below(3)]),
                2 => Proposal::Finish {
                    output: json!(null),
                },
                _ => go("next"),
            };
            let Ok(o) = a.propose("l", p.clone()) else {
                break;
            };
            let st = sp.state(&before).unwrap(); // ok: test
            if o.accepted {
                match &p {
                    Proposal::Tool { name, .. } => assert!(st.allowed_tools.contains(name)),
                    Proposal::Transition { event } => assert_eq!(
                        st.transition(event).map(|t| t.to.clone()),
                        Some(o.state.clone())
                    ),
                    Proposal::Finish { .. } => assert!(st.terminal),
                    Proposal::Spawn { .. } => unreachable!(),
                }
            } else if o.status == Status::Running {
                assert!(o.state == before || st.transition("error").is_some());
            }
            assert!(o.step <= sp.max_steps);
        }
        let run = a.run("l").unwrap().clone(); // ok: test
        let replayed = Arbiter::replay(reg, &run.log(), 2).unwrap(); // ok: test
        assert_eq!(replayed, run);
    }
}

#[test]
fn mermaid_diagram_with_the_current_state() {
    let reg = registry();
    let s = reg.get("tool-builder").unwrap(); // ok: test
    insta::assert_snapshot!(mermaid::to_mermaid(s, Some("design")));
}

#[test]
fn a_composed_staged_subgraph_runs_on_the_arbiter() {
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/composer/requests/timeline-openai-staged.json").unwrap(),
    )
    .unwrap(); // ok: test
    let mut req = case["request"].clone();
    req["skill_package"] = serde_json::from_str(
        &std::fs::read_to_string("tests/skills/packages/full-contract.json").unwrap(),
    )
    .unwrap(); // ok: test
    let Ok(Step::Composed(c)) = compose_value(req) else {
        panic!("composes")
    };
    let spec = spec_of_composition(&c.to_value());
    let tools: Vec<String> = c
        .subgraph
        .tool_availability
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let reg = Arc::new(SkillRegistry::build(std::slice::from_ref(&spec), &[], &tools).unwrap()); // ok: test
    let mut a = Arbiter::new(reg);
    a.start("core", "Timeline Auditor", json!(null)).unwrap(); // ok: test
                                                               // stage-1 (collect) allows workspace_search and get_page, not submit.
    assert!(
        a.propose("core", tool("workspace_search"))
            .unwrap()
            .accepted
    ); // ok: test
    assert!(!a.propose("core", tool("submit")).unwrap().accepted); // ok: test
    assert!(!a.propose("core", tool("send_email")).unwrap().accepted); // ok: test
    for _ in 0..3 {
        a.propose("core", go("complete")).unwrap(); // ok: test
    }
    assert_eq!(a.run("core").unwrap().state, "done"); // ok: test
    let all: BTreeSet<String> = tools.into_iter().collect();
    for st in spec["states"].as_object().unwrap().values() {
        // ok: test
        for t in st["allowed_tools"].as_array().into_iter().flatten() {
            assert!(all.contains(t.as_str().unwrap())); // ok: test
        }
    }
}

#[test]
fn spec_files_load_in_bulk_or_list_every_problem() {
    use promptloom::arbiter::load::{load_files, load_files_json};
    let file = |p: &str, name: &str| (p.to_owned(), serde_json::to_string(&spec(name)).unwrap()); // ok: test
                                                                                                  // In the files' order; an array file gives each spec.
    let pair = Value::Array(vec![spec("build-feature"), {
        let mut s = spec("build-feature");
        s["name"] = json!("build_feature_2");
        s
    }]);
    let files = vec![
        ("skills/b.json".to_owned(), pair.to_string()),
        file("skills/a.json", "build-feature"),
    ];
    let dup = load_files(&files, Some(&tools())).unwrap_err(); // ok: test
    assert_eq!(dup.kind(), ErrorKind::InvalidSkill);
    let problems = &dup.details()["problems"];
    assert_eq!(problems[0]["code"], "duplicate-name");
    assert_eq!(problems[0]["file"], "skills/a.json");
    assert_eq!(problems[0]["path"], "name");
    let ok = load_files(&files[..1], Some(&tools())).unwrap(); // ok: test
    assert_eq!(ok.specs.len(), 2);
    let reg = SkillRegistry::build(&ok.specs, &[], &TOOLS.map(String::from)).unwrap(); // ok: test
    assert_eq!(reg.names(), ["build_feature", "build_feature_2"]);
    // Every problem of every file, nothing loaded.
    let bad = vec![
        file("skills/trap.json", "broken-trap"),
        ("skills/x.json".to_owned(), "{ nope".to_owned()),
        ("skills/n.json".to_owned(), "5".to_owned()),
        file("skills/tool.json", "broken-unknown-tool"),
        file("skills/ok.json", "build-feature"),
    ];
    let e = load_files(&bad, Some(&tools())).unwrap_err(); // ok: test
    let got: Vec<(String, String)> = e.details()["problems"]
        .as_array()
        .unwrap() // ok: test
        .iter()
        .map(|p| {
            (
                p["file"].as_str().unwrap_or("").to_owned(),
                p["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "skills/trap.json".to_owned(),
                "no-path-to-terminal".to_owned()
            ),
            ("skills/x.json".to_owned(), "invalid-json".to_owned()),
            ("skills/n.json".to_owned(), "not-a-spec".to_owned()),
            ("skills/tool.json".to_owned(), "unknown-tool".to_owned()),
        ]
    );
    assert!(
        e.message().starts_with("4 problem(s) in the spec files"),
        "{}",
        e.message()
    );
    // Without a tool registry the tools are not checked.
    assert!(load_files(&bad[3..], None).is_ok());
    // The JSON entry the faces call.
    let out: Value = serde_json::from_str(
        &load_files_json(
            &json!([{ "path": "a.json", "text": spec("build-feature").to_string() }]).to_string(),
            "null",
        )
        .unwrap(), // ok: test
    )
    .unwrap(); // ok: test
    assert_eq!(out["specs"][0]["name"], "build_feature");
    for (files, tools) in [
        ("{}", ""),
        ("[{\"path\": 1}]", ""),
        ("[]", "[1]"),
        ("[", ""),
    ] {
        assert_eq!(
            load_files_json(files, tools).unwrap_err().kind(),
            ErrorKind::InvalidRequest
        ); // ok: test
    }
}
