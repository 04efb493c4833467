//! The agent loop: one scripted run per file in `tests/agent` (the options, the thread so
//! far, the provider's replies as recorded bodies, the host's tool answers, and for a skill
//! run the SkillSpec the arbiter runs). Each snapshot holds the outcome, every request body
//! sent (byte for byte) and the thread at the end: the npm package's `runAgent` (Node), the
//! component's `run-agent` (jco, Wasmtime) and this driver must agree with it.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::agent::{run_agent, AgentHost, AgentOptions, Reply};
use promptloom::arbiter::offer::WithArbiter;
use promptloom::arbiter::{Arbiter, SkillRegistry};
use promptloom::conversation::{Conversation, Turn};
use promptloom::lower::Provider;
use promptloom::response::parse_response;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

/// The host of a scripted run: replies in order, tools by name, every body kept.
struct Scripted {
    provider: Provider,
    replies: VecDeque<Value>,
    tools: Map<String, Value>,
    requests: Vec<String>,
    persisted: Vec<Value>,
}

impl AgentHost for Scripted {
    fn send(&mut self, body: &str, _step: u32) -> promptloom::Result<Reply> {
        self.requests.push(body.to_owned());
        let reply = self
            .replies
            .pop_front()
            .expect("the case has a reply for every request"); // ok: test
        let parsed = parse_response(self.provider, reply.to_string().as_bytes())?;
        Ok(Reply::Turn(parsed.turn.to_value()))
    }

    fn call_tool(&mut self, name: &str, _call: &Value) -> Option<Result<Value, String>> {
        let t = self.tools.get(name)?;
        Some(match t.get("fail") {
            Some(m) => Err(m.as_str().unwrap_or_default().to_owned()),
            None => Ok(t["output"].clone()),
        })
    }

    fn persist(&mut self, turn: &Value) -> promptloom::Result<()> {
        self.persisted.push(turn.clone());
        Ok(())
    }
}

fn run_case(path: &Path) -> Value {
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(); // ok: test
    let options = &case["options"];
    let provider = Provider::parse(options["lower"]["provider"].as_str().unwrap()).unwrap(); // ok: test
    let mut conversation = Conversation::default();
    for t in case["turns"].as_array().unwrap() {
        conversation.append(Turn::from_value(t.clone()).unwrap(), Default::default());
        // ok: test
    }
    let mut o = options.clone();
    o["arbiter"] = Value::Bool(case.get("arbiter").is_some());
    let opts = AgentOptions::from_json(&o.to_string()).unwrap(); // ok: test
    let mut host = Scripted {
        provider,
        replies: case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .cloned()
            .collect(),
        tools: case["tools"].as_object().cloned().unwrap_or_default(),
        requests: Vec::new(),
        persisted: Vec::new(),
    };
    let outcome = match case.get("arbiter") {
        Some(a) => {
            let tools: Vec<String> = a["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            let registry = SkillRegistry::build(&[a["spec"].clone()], &[], &tools).unwrap(); // ok: test
            let mut arbiter = Arbiter::new(Arc::new(registry));
            let lane = a["lane"].as_str().unwrap().to_owned();
            let skill = a["spec"]["name"].as_str().unwrap();
            arbiter.start(&lane, skill, Value::Null).unwrap(); // ok: test
            let mut h = WithArbiter {
                host: &mut host,
                arbiter: &mut arbiter,
                lane,
            };
            let out = run_agent(&mut conversation, opts, &mut h).unwrap(); // ok: test
            let status = arbiter
                .run("main")
                .map(|r| serde_json::to_value(r.status).unwrap()); // ok: test
            (out, status)
        }
        None => (run_agent(&mut conversation, opts, &mut host).unwrap(), None), // ok: test
    };
    let (out, status) = outcome;
    let turns: Vec<Value> = conversation.turns().map(Turn::to_value).collect();
    // Every turn the loop appended was persisted first, in order.
    let initial = case["turns"].as_array().unwrap().len();
    let persisted: Vec<Value> = host
        .persisted
        .iter()
        .map(|t| Turn::from_value(t.clone()).unwrap().to_value()) // ok: test
        .collect();
    assert_eq!(persisted, turns[initial..], "{}", path.display());
    assert_eq!(host.replies.len(), 0, "every reply was asked for");
    let mut snap = json!({
        "outcome": { "stop": out.stop.name(), "steps": out.steps, "usage": out.usage },
        "requests": host.requests,
        "turns": turns,
    });
    if let Some(s) = status {
        snap["arbiter_status"] = s;
    }
    snap
}

#[test]
fn scripted_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agent");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = e.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let snap = run_case(&path);
        insta::assert_json_snapshot!(format!("runs@{name}"), snap);
        n += 1;
    }
    assert!(n >= 5);
}

/// `AgentRun` answers an event it does not wait for with an error and stays where it was.
#[test]
fn out_of_order_events_change_nothing() {
    use promptloom::agent::{Action, AgentRun, Event};
    let mut run = AgentRun::new(AgentOptions::new(Map::new()));
    assert!(run.next(Event::Appended, Value::Null).is_err());
    let a = run.next(Event::Start, Value::Null).unwrap(); // ok: test
    assert!(matches!(a, Action::Send { step: 1, .. }));
    assert!(run.next(Event::Offer, json!({})).is_err());
    let a = run
        .next(
            Event::Received,
            json!({ "role": "assistant", "parts": [{ "type": "text", "text": "ok" }] }),
        )
        .unwrap(); // ok: test
    assert_eq!(a, Action::Append { turn: None });
}
