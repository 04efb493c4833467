//! The contract registry and the invocation gateway: registration reports (snapshots over
//! `tests/contracts/`), and the gateway's rules as properties over many generated calls.

use promptloom::gateway::{self, state, Action, Call, CallContext, Event, Failure, Invocation};
use promptloom::registry::{bucket, Registry};
use promptloom::ErrorKind;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn registry() -> Registry {
    let mut r = Registry::default();
    let mut files: Vec<_> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contracts/valid"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
    files.sort();
    for f in files {
        r.register_text(&std::fs::read_to_string(&f).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e} {}", f.display(), e.details()));
    }
    r
}

#[test]
fn invalid_contracts_list_every_problem() {
    insta::glob!("contracts/invalid/*", |path| {
        let mut r = registry();
        let e = r
            .register_text(&std::fs::read_to_string(path).unwrap())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidContract);
        insta::assert_json_snapshot!(
            json!({ "message": e.to_string(), "problems": e.details()["problems"] })
        );
    });
}

#[test]
fn valid_contracts_read_as_listed() {
    let r = registry();
    insta::assert_json_snapshot!(r.to_value()["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!({ "name": c["name"], "version": c["version"], "input_schema": c["input_schema"], "output_schema": c["output_schema"], "canary": c["canary"], "surfaces": c["surfaces"] }))
        .collect::<Vec<_>>());
}

#[test]
fn the_seed_contract_loads_as_written() {
    let mut r = registry();
    let c = r.get("cross-title-link", "0.9").unwrap();
    assert_eq!(c.version.to_string(), "0.9.0");
    assert_eq!(c.feature_flags, ["cross_title_link_enabled"]);
    assert!(c.tiers.is_empty(), "tier: any");
    assert_eq!(c.policy.rate_limits.len(), 2);
    assert_eq!(
        c.policy.idempotency_key.as_deref(),
        Some("{title_id}:{locale}:{k}")
    );
    assert_eq!(
        c.input["properties"]["locale"]["enum"],
        json!(["en-US", "ja-JP", "ko-KR", "..."])
    );
    assert_eq!(
        c.output["properties"]["recommendations"]["items"]["properties"]["similarity"]["type"],
        "number"
    );
    assert_eq!(
        r.register(&c.source).unwrap_err().kind(),
        ErrorKind::AlreadyExists
    );
}

fn ctx(surface: &str, user: &str) -> CallContext {
    let mut c = CallContext::new(surface, user);
    c.flags = vec!["cross_title_link_enabled".into()];
    c.tier = Some("adult".into());
    c
}

fn recs(n: usize) -> Value {
    json!({ "recommendations": (0..n).map(|i| json!({"title_id": format!("VGLD_00{i}"), "similarity": 0.5, "reason": "same author"})).collect::<Vec<_>>() })
}

type Handler<'a> = Box<dyn FnMut(&Invocation) -> (Result<Value, Failure>, f64) + 'a>;

fn call(
    r: &Arc<Registry>,
    st: &mut state::MemoryState,
    name: &str,
    input: Value,
    c: CallContext,
    now: f64,
    h: Handler,
) -> (Result<Value, promptloom::Error>, gateway::record::Record) {
    let mut call = Call::new(r.clone(), name, input, c, &format!("trace-{now}"));
    let out = gateway::run_sync(&mut call, st, now, h);
    (out, call.record())
}

fn fail(code: &str) -> Failure {
    Failure {
        code: Some(code.into()),
        message: "no".into(),
        ..Failure::default()
    }
}

#[test]
fn a_call_validates_checks_capabilities_and_fills_defaults() {
    let r = Arc::new(registry());
    let mut st = state::MemoryState::default();
    let mut v = CallContext::new("chat", "u1");
    v.version = Some("0.9".into());
    let (e, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        v,
        0.0,
        Box::new(|_| (Ok(recs(1)), 1.0)),
    );
    let e = e.unwrap_err();
    assert_eq!(
        (e.kind(), e.details()["reason"].as_str()),
        (ErrorKind::CapabilityDenied, Some("feature_flag"))
    );
    assert_eq!(
        (rec.outcome.as_str(), rec.attempts),
        ("CapabilityDenied", 0)
    );
    let (e, _) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "berserk", "locale": "xx", "extra": 1}),
        ctx("voice", "u1"),
        0.0,
        Box::new(|_| unreachable!()),
    );
    let e = e.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(
        e.details()["violations"].as_array().unwrap().len() >= 3,
        "{}",
        e.details()
    );
    let mut seen = None;
    let mut c = ctx("voice", "u1");
    c.version = Some("0.9".into());
    let (out, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        c,
        0.0,
        Box::new(|inv| {
            seen = Some(inv.clone());
            (Ok(recs(2)), 3.0)
        }),
    );
    assert_eq!(out.unwrap(), recs(2));
    let inv = seen.unwrap();
    assert_eq!(inv.input["k"], 10, "the default is filled in");
    assert_eq!(
        inv.idempotency_key.as_deref(),
        Some("idem:cross-title-link@0.9.0:u1:d=0:BRSK_001:en-US:10")
    );
    assert_eq!(
        (
            rec.outcome.as_str(),
            rec.attempts,
            rec.latency_ms,
            rec.breaker
        ),
        ("ok", 1, 3.0, "closed")
    );
    // Tier: order-inventory is for adult and pro users.
    let mut kid = ctx("chat", "u2");
    kid.tier = Some("teen".into());
    let (e, _) = call(
        &r,
        &mut st,
        "order-inventory",
        json!({"order_id": "ORD-1"}),
        kid,
        0.0,
        Box::new(|_| unreachable!()),
    );
    assert_eq!(e.unwrap_err().details()["reason"], "tier");
    // Surfaces: the 1.0 contract is offered on chat and voice only; 0.9 on every surface.
    let mut c = ctx("batch", "u1");
    c.version = Some("^1".into());
    let (e, _) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        c,
        0.0,
        Box::new(|_| unreachable!()),
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::CapabilityDenied);
    let (e, _) = call(
        &r,
        &mut st,
        "nope",
        json!({}),
        ctx("chat", "u1"),
        0.0,
        Box::new(|_| unreachable!()),
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::NotFound);
}

#[test]
fn canary_splits_per_surface_and_users_never_flip() {
    let r = registry();
    let n = 100_000;
    let mut on_canary = 0;
    for i in 0..n {
        let u = format!("user-{i}");
        let v = r
            .resolve("cross-title-link", "chat", &u, None, 0.0)
            .unwrap()
            .version
            .to_string();
        if v == "1.0.0" {
            on_canary += 1;
        } else {
            assert_eq!(v, "0.9.0");
        }
        if i % 97 == 0 {
            for _ in 0..3 {
                assert_eq!(
                    r.resolve("cross-title-link", "chat", &u, None, 5.0)
                        .unwrap()
                        .version
                        .to_string(),
                    v,
                    "a user never flips"
                );
            }
        }
    }
    let share = f64::from(on_canary) / f64::from(n);
    assert!((share - 0.05).abs() <= 0.01, "canary share {share}");
    // Voice has no canary on 1.0: the newest version without one, for everyone.
    assert!((0..1000).all(|i| r
        .resolve("cross-title-link", "voice", &format!("u{i}"), None, 0.0)
        .unwrap()
        .version
        .major
        == 1));
    // The split changes at run time, and a pin or an explicit range overrides it.
    let mut r2 = r.clone();
    r2.set_canary("cross-title-link", "1.0.0", "chat", 50.0)
        .unwrap();
    let half = (0..10_000)
        .filter(|i| {
            r2.resolve("cross-title-link", "chat", &format!("u{i}"), None, 0.0)
                .unwrap()
                .version
                .major
                == 1
        })
        .count();
    assert!((4_800..=5_200).contains(&half), "{half}");
    r2.pin("chat", "cross-title-link", Some("0.9")).unwrap();
    assert!((0..1000).all(|i| r2
        .resolve("cross-title-link", "chat", &format!("u{i}"), None, 0.0)
        .unwrap()
        .version
        .major
        == 0));
    // A sunset version refuses calls after its date.
    r2.set_sunset("cross-title-link", "0.9", Some("2026-01-01"))
        .unwrap();
    let after = promptloom::registry::contract::epoch_ms("2026-06-01").unwrap();
    assert_eq!(
        r2.resolve("cross-title-link", "chat", "u1", None, after)
            .unwrap_err()
            .kind(),
        ErrorKind::Sunset
    );
    assert!(r2
        .resolve("cross-title-link", "chat", "u1", None, 0.0)
        .is_ok());
    assert_eq!(bucket("a", "b", "c"), bucket("a", "b", "c"));
}

#[test]
fn an_idempotent_duplicate_never_calls_the_handler_twice() {
    let r = Arc::new(registry());
    let mut st = state::MemoryState::default();
    let mut runs = 0;
    let input = json!({"title_id": "BRSK_001", "locale": "en-US"});
    let mut c = ctx("chat", "u1");
    c.session = Some("s1".into());
    c.version = Some("0.9".into());
    for t in 0..5 {
        let (out, rec) = call(
            &r,
            &mut st,
            "cross-title-link",
            input.clone(),
            c.clone(),
            f64::from(t) * 1000.0,
            Box::new(|_| {
                runs += 1;
                (Ok(recs(1)), 2.0)
            }),
        );
        assert_eq!(out.unwrap(), recs(1));
        assert_eq!(rec.outcome, if t == 0 { "ok" } else { "cached" });
    }
    assert_eq!(runs, 1);
    // Another session is another scope.
    let mut other = c.clone();
    other.session = Some("s2".into());
    call(
        &r,
        &mut st,
        "cross-title-link",
        input.clone(),
        other,
        0.0,
        Box::new(|_| {
            runs += 1;
            (Ok(recs(1)), 2.0)
        }),
    )
    .0
    .unwrap();
    assert_eq!(runs, 2);
    // After the window (an hour by default) the key runs again.
    call(
        &r,
        &mut st,
        "cross-title-link",
        input.clone(),
        c.clone(),
        3_700_000.0,
        Box::new(|_| {
            runs += 1;
            (Ok(recs(1)), 2.0)
        }),
    )
    .0
    .unwrap();
    assert_eq!(runs, 3);
    // A duplicate while the first is still running is refused, not run.
    let reg = r.clone();
    let mut first = Call::new(
        reg.clone(),
        "cross-title-link",
        json!({"title_id": "ABCD_123", "locale": "en-US"}),
        c.clone(),
        "t-first",
    );
    let Action::Transact(op) = first.start(10.0) else {
        panic!()
    };
    let applied = st.transact(&op, 10.0);
    assert!(matches!(
        first.on(Event::Applied(applied), 10.0),
        Action::Invoke(_)
    ));
    let (e, _) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "ABCD_123", "locale": "en-US"}),
        c,
        20.0,
        Box::new(|_| unreachable!()),
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::InFlight);
}

/// A tiny deterministic generator (xorshift) for the properties.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn an_open_breaker_never_lets_a_call_through() {
    let r = Arc::new(registry());
    for seed in 1..40u64 {
        let mut rng = Rng(seed * 7919);
        let mut st = state::MemoryState::default();
        let mut now = 0.0;
        let mut opened = 0;
        for i in 0..300 {
            now += rng.below(400) as f64;
            let before = st.get("cb:cross-title-link@1.0.0");
            let open_until = before.as_deref().and_then(|b| {
                let v: Value = serde_json::from_str(b).ok()?;
                (v["s"] == "open").then(|| v["at"].as_f64().unwrap() + 30_000.0)
            });
            let fails = rng.below(10) < 6;
            let mut ran = false;
            let mut c = ctx("chat", &format!("u{}", rng.below(50)));
            c.version = Some("=1.0.0".into());
            let (out, rec) = call(
                &r,
                &mut st,
                "cross-title-link",
                json!({"title_id": format!("ABCD_{:03}", i), "locale": "en-US"}),
                c,
                now,
                Box::new(|_| {
                    ran = true;
                    if fails {
                        (
                            Err(Failure {
                                message: "boom".into(),
                                status: Some(503),
                                ..Failure::default()
                            }),
                            5.0,
                        )
                    } else {
                        (Ok(json!({"nodes": [], "edges": []})), 5.0)
                    }
                }),
            );
            if let Some(until) = open_until {
                if now < until {
                    assert!(
                        !ran,
                        "seed {seed} call {i}: the handler ran while the breaker was open"
                    );
                    assert_eq!(out.unwrap_err().kind(), ErrorKind::CircuitOpen);
                    opened += 1;
                }
            }
            assert!(
                ["ok", "CircuitOpen", "HandlerFailed", "RateLimited"]
                    .contains(&rec.outcome.as_str()),
                "{}",
                rec.outcome
            );
        }
        assert!(opened > 0, "seed {seed}: the breaker never opened");
    }
}

#[test]
fn the_breaker_probes_once_then_closes() {
    let r = Arc::new(registry());
    let mut st = state::MemoryState::default();
    let v1 = || {
        let mut c = ctx("voice", "u1");
        c.version = Some("=1.0.0".into());
        c
    };
    let failing = |_: &Invocation| {
        (
            Err(Failure {
                message: "down".into(),
                status: Some(500),
                ..Failure::default()
            }),
            1.0,
        )
    };
    let mut attempts = Vec::new();
    for i in 0..10 {
        let (_, rec) = call(
            &r,
            &mut st,
            "cross-title-link",
            json!({"title_id": format!("ABCD_{i:03}"), "locale": "en-US"}),
            v1(),
            f64::from(i) * 10.0,
            Box::new(failing),
        );
        attempts.push(rec.attempts);
    }
    // Three attempts a call (attempts: 2) until the 20th failure opens the breaker mid-call:
    // that call stops retrying, and later calls never reach the handler.
    assert_eq!(attempts, [3, 3, 3, 3, 3, 3, 2, 0, 0, 0]);
    let (e, _) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "ABCD_999", "locale": "en-US"}),
        v1(),
        1_000.0,
        Box::new(|_| unreachable!()),
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::CircuitOpen);
    // After 30 s one probe goes through and closes it.
    let (out, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "ABCD_998", "locale": "en-US"}),
        v1(),
        40_000.0,
        Box::new(|_| (Ok(json!({"nodes": [], "edges": []})), 1.0)),
    );
    assert!(out.is_ok());
    assert_eq!(rec.breaker, "closed");
}

#[test]
fn rate_limits_hold_under_interleaved_calls() {
    let r = Arc::new(registry());
    for seed in 1..20u64 {
        let mut rng = Rng(seed * 104_729);
        let mut st: BTreeMap<String, String> = BTreeMap::new();
        // 150 calls of one user start at once; their steps run in a random interleaving.
        let mut calls: Vec<(Call, Action)> = (0..150)
            .map(|i| {
                let mut c = ctx("voice", "same-user");
                c.version = Some("0.9".into());
                let mut call = Call::new(
                    r.clone(),
                    "cross-title-link",
                    json!({"title_id": format!("ABCD_{i:04}"), "locale": "en-US"}),
                    c,
                    &format!("t{i}"),
                );
                let a = call.start(0.0);
                (call, a)
            })
            .collect();
        let mut invoked = 0;
        let mut limited = 0;
        while !calls.is_empty() {
            let i = rng.below(calls.len() as u64) as usize;
            let (call, action) = &mut calls[i];
            let next = match std::mem::replace(action, Action::Sleep(0.0)) {
                Action::Transact(op) => {
                    let vals: Vec<_> = op.keys().iter().map(|k| st.get(k).cloned()).collect();
                    let (writes, applied) = state::apply(&op, &vals, 0.0);
                    for (k, v) in writes {
                        match v {
                            Some(v) => st.insert(k, v),
                            None => st.remove(&k),
                        };
                    }
                    Some(call.on(Event::Applied(applied), 0.0))
                }
                Action::Invoke(_) => {
                    invoked += 1;
                    Some(call.on(Event::Output(recs(0)), 0.0))
                }
                Action::Done(_) => None,
                Action::Fail(e) => {
                    assert_eq!(e.kind(), ErrorKind::RateLimited);
                    assert_eq!(e.details()["scope"], "user");
                    assert!(e.details()["retry_after_ms"].as_f64().unwrap() > 0.0);
                    limited += 1;
                    None
                }
                Action::Sleep(_) => unreachable!(),
            };
            match next {
                Some(a) => calls[i].1 = a,
                None => {
                    calls.swap_remove(i);
                }
            }
        }
        assert_eq!((invoked, limited), (60, 90), "seed {seed}");
    }
}

#[test]
fn retries_follow_the_error_class() {
    let r = Arc::new(registry());
    let v09 = || {
        let mut c = ctx("voice", "u1");
        c.version = Some("0.9".into());
        c
    };
    let input = |i: u32| json!({"title_id": format!("ABCD_{i:03}"), "locale": "en-US"});
    let cases: [(&str, Failure, u32); 5] = [
        ("declared do-not-retry", fail("TITLE_NOT_FOUND"), 1),
        // The seed declares GRAPH_TIMEOUT with no class (its comment is not data): do-not-retry.
        ("declared without a class", fail("GRAPH_TIMEOUT"), 1),
        (
            "undeclared 4xx",
            Failure {
                status: Some(404),
                message: "nf".into(),
                ..Failure::default()
            },
            1,
        ),
        (
            "undeclared 5xx (attempts: 1)",
            Failure {
                status: Some(502),
                message: "bad".into(),
                ..Failure::default()
            },
            2,
        ),
        (
            "said not retryable",
            Failure {
                retryable: Some(false),
                message: "x".into(),
                ..Failure::default()
            },
            1,
        ),
    ];
    for (i, (what, f, attempts)) in cases.into_iter().enumerate() {
        let mut st = state::MemoryState::default();
        let mut runs = 0;
        let (e, rec) = call(
            &r,
            &mut st,
            "cross-title-link",
            input(i as u32),
            v09(),
            0.0,
            Box::new(|_| {
                runs += 1;
                (Err(f.clone()), 1.0)
            }),
        );
        let e = e.unwrap_err();
        assert_eq!(
            (e.kind(), runs, rec.attempts),
            (ErrorKind::HandlerFailed, attempts, attempts),
            "{what}"
        );
    }
    // The 1.0 contract declares GRAPH_TIMEOUT retry-once; timeouts retry as the policy allows.
    let mut c = ctx("voice", "u1");
    c.version = Some("^1".into());
    let mut st = state::MemoryState::default();
    let (e, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        input(50),
        c.clone(),
        0.0,
        Box::new(|_| (Err(fail("GRAPH_TIMEOUT")), 1.0)),
    );
    assert_eq!(
        (e.unwrap_err().details()["retry"].as_str(), rec.attempts),
        (Some("retry-once"), 2)
    );
    let (e, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        input(51),
        c,
        0.0,
        Box::new(|_| (Ok(json!({})), 5_000.0)),
    );
    assert_eq!(
        (e.unwrap_err().kind(), rec.attempts, rec.retries),
        (ErrorKind::Timeout, 3, 2)
    );
    assert!(rec.budget_overrun);
    // The key is pending between retries and freed after the failure: the next call runs.
    let key = "idem:cross-title-link@1.0.0:u1:d=0:ABCD_051:en-US:10";
    assert_eq!(st.get(key), None, "{st:?}");
}

#[test]
fn non_idempotent_calls_carry_the_key_and_fall_back() {
    let r = Arc::new(registry());
    let mut st = state::MemoryState::default();
    let mut seen = Vec::new();
    let (out, rec) = call(
        &r,
        &mut st,
        "order-inventory",
        json!({"order_id": "ORD-7"}),
        ctx("chat", "u1"),
        0.0,
        Box::new(|inv| {
            seen.push((
                inv.contract.clone(),
                inv.attempt,
                inv.idempotency_key.clone(),
            ));
            if inv.contract == "order-inventory" {
                (Err(fail("REGION_DOWN")), 2.0)
            } else {
                (Ok(json!({"hold_id": "H1"})), 3.0)
            }
        }),
    );
    assert_eq!(out.unwrap(), json!({"hold_id": "H1"}));
    assert_eq!(rec.fallback_from, ["order-inventory@4.0.0"]);
    assert_eq!(
        seen[0].2.as_deref(),
        Some("idem:order-inventory@4.0.0:u1:d=0:ORD-7")
    );
    assert_eq!(seen[1].0, "order-inventory-backup");
    // INVENTORY_BUSY is retried (attempts: 2, fixed 20 ms backoff with jitter).
    let mut waits = 0;
    let (_, rec) = call(
        &r,
        &mut st,
        "order-inventory",
        json!({"order_id": "ORD-8"}),
        ctx("chat", "u1"),
        0.0,
        Box::new(|_| {
            waits += 1;
            (Err(fail("INVENTORY_BUSY")), 1.0)
        }),
    );
    assert_eq!((rec.attempts, waits), (3, 3));
    assert!(
        rec.latency_ms >= 3.0 + 20.0,
        "two waits of 10–20 ms: {}",
        rec.latency_ms
    );
    // A wrong output shape is InvalidOutput, never passed on.
    let (e, _) = call(
        &r,
        &mut st,
        "order-inventory",
        json!({"order_id": "ORD-9"}),
        ctx("chat", "u1"),
        0.0,
        Box::new(|_| (Ok(json!({"hold": 1})), 1.0)),
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidOutput);
}

#[test]
fn a_non_idempotent_contract_is_never_retried_and_its_key_is_the_backends() {
    let mut r = Registry::default();
    r.register_text(
        r#"{"name":"charge","version":"1","description":"Charges a card.","owner":"pay",
        "input":{"amount":{"type":"number","required":true}},"output":{"ok":"boolean"},
        "policy":{"idempotent":false,"timeout_ms":100,"budget":{"p95_ms":50,"cost_usd":0.01}}}"#,
    )
    .unwrap();
    let r = Arc::new(r);
    let mut st = state::MemoryState::default();
    for f in [
        Failure {
            status: Some(503),
            ..Failure::default()
        },
        Failure {
            retryable: Some(true),
            ..Failure::default()
        },
    ] {
        let mut runs = 0;
        let (e, rec) = call(
            &r,
            &mut st,
            "charge",
            json!({"amount": 5}),
            CallContext::new("chat", "u"),
            0.0,
            Box::new(|_| {
                runs += 1;
                (Err(f.clone()), 1.0)
            }),
        );
        // Never retried; the gateway still composes its key, for the backing service.
        assert_eq!((e.unwrap_err().kind(), runs), (ErrorKind::HandlerFailed, 1));
        assert!(rec
            .idempotency_key
            .is_some_and(|k| k.starts_with("idem:charge@1.0.0:u:d=0:#")));
    }
    assert!(
        st.is_empty(),
        "no state for a contract without limits, breaker or template: the key is the backend's"
    );
    // The seed's fix for a retry storm: a caller's retry of the same input in the same scope
    // carries the same key (the backend de-duplicates it); the gateway does not serve it
    // from a record, and another session has another key.
    let mut keys = Vec::new();
    for session in ["s1", "s1", "s2"] {
        let mut c = CallContext::new("chat", "u");
        c.session = Some(session.into());
        let (out, _) = call(
            &r,
            &mut st,
            "charge",
            json!({"amount": 5}),
            c,
            0.0,
            Box::new(|inv| {
                keys.push(inv.idempotency_key.clone());
                (Ok(json!({"ok": true})), 1.0)
            }),
        );
        assert!(out.is_ok());
    }
    assert_eq!(keys.len(), 3, "the handler ran for every call");
    assert_eq!(keys[0], keys[1]);
    assert_ne!(keys[0], keys[2]);
    assert!(keys[0]
        .as_deref()
        .is_some_and(|k| k.starts_with("idem:charge@1.0.0:u:s=s1:#")));
}

#[test]
fn state_transitions_survive_any_stored_value() {
    let ops = [
        state::Op::Admit {
            idem: Some(("k".into(), 100.0, "t".into())),
            breaker: Some(state::BreakerOp {
                key: "b".into(),
                threshold: 0.5,
                window_ms: 1000.0,
                min_calls: 1,
                open_ms: 10.0,
                probe_ms: 10.0,
            }),
            buckets: vec![state::BucketOp {
                key: "r".into(),
                capacity: 2.0,
                window_ms: 1000.0,
                scope: "user",
            }],
        },
        state::Op::Settle {
            breaker: Some((
                state::BreakerOp {
                    key: "b".into(),
                    threshold: 0.5,
                    window_ms: 1000.0,
                    min_calls: 1,
                    open_ms: 10.0,
                    probe_ms: 10.0,
                },
                false,
            )),
            idem: Some((
                "k".into(),
                state::IdemEnd::Done {
                    out: json!(1),
                    ttl_ms: 5.0,
                },
            )),
        },
    ];
    let junk = [
        "",
        "null",
        "[]",
        "{\"s\":\"open\",\"at\":\"x\"}",
        "{\"w\":[[1],[\"a\",2,3],5]}",
        "{\"t\":-1e308,\"at\":1e308}",
        "{\"s\":\"done\"}",
        "\u{0}",
    ];
    for op in &ops {
        assert_eq!(state::Op::from_value(&op.to_value()).as_ref(), Some(op));
        for a in junk {
            for b in junk {
                let (writes, applied) =
                    state::apply(op, &[Some(a.into()), Some(b.into()), None], 5.0);
                assert_eq!(
                    state::Applied::from_value(&applied.to_value()),
                    Some(applied)
                );
                for (_, v) in writes.into_iter().filter_map(|(k, v)| Some((k, v?))) {
                    serde_json::from_str::<Value>(&v).unwrap();
                }
            }
        }
    }
}

#[test]
fn records_export_as_otel_spans() {
    let r = Arc::new(registry());
    let mut st = state::MemoryState::default();
    let mut c = ctx("voice", "u1");
    c.version = Some("0.9".into());
    let (_, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        c,
        1_700_000_000_000.0,
        Box::new(|_| (Ok(recs(1)), 12.0)),
    );
    let otel = gateway::record::to_otel(&[rec.to_value()]);
    let span = &otel["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(span["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(span["spanId"].as_str().unwrap().len(), 16);
    assert_eq!(span["startTimeUnixNano"], "1700000000000000000");
    assert_eq!(span["endTimeUnixNano"], "1700000000012000000");
    assert_eq!(span["status"]["code"], 1);
    assert!(span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["key"] == "promptloom.cost_usd" && a["value"]["doubleValue"] == 0.0014));
}

/// `n` generated contracts over a few domains, plus one whose purpose the queries name.
fn big_registry(n: usize) -> Registry {
    let domains = [
        "catalog",
        "orders",
        "reviews",
        "shipping",
        "billing",
        "accounts",
        "search",
        "inventory",
        "support",
        "pricing",
    ];
    let verbs = [
        "lists",
        "finds",
        "updates",
        "summarizes",
        "exports",
        "counts",
        "validates",
    ];
    let mut r = Registry::default();
    for i in 0..n {
        let d = domains[i % domains.len()];
        let v = verbs[(i / domains.len()) % verbs.len()];
        let doc = json!({
            "name": format!("{d}-{v}-{i}"), "version": "1.0.0", "owner": "team",
            "description": format!("{} {d} records by id, region and date range (variant {i}).", v[..1].to_uppercase() + &v[1..]),
            "input": { "id": { "type": "string", "required": true }, "region": { "type": "string", "enum": ["eu", "us", "apac"] }, "from": "string", "to": "string", "limit": { "type": "integer", "default": 20, "min": 1, "max": 100 } },
            "output": { "items": { "type": "array", "items": { "id": "string", "score": "float" } } },
            "policy": { "idempotent": true, "timeout_ms": 500, "budget": { "p95_ms": 200, "cost_usd": 0.0001 } },
        });
        r.register(&doc).unwrap();
    }
    r.register(&json!({
        "name": "refund-order", "version": "2.1", "owner": "payments",
        "description": "Refunds a paid order to the original payment method, fully or in part.",
        "input": { "order_id": { "type": "string", "required": true }, "amount": "number", "reason": "string" },
        "output": { "refund_id": "string" },
        "policy": { "idempotent": false, "idempotency_key": "{order_id}", "timeout_ms": 800, "budget": { "p95_ms": 400, "cost_usd": 0.001 } },
    }))
    .unwrap();
    r
}

#[test]
fn the_planner_section_is_generated_per_provider_and_byte_stable() {
    use promptloom::registry::planner::PlannerOptions;
    use promptloom::Provider;
    let r = registry();
    let mut out = BTreeMap::new();
    for p in [
        Provider::Anthropic,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Gemini,
    ] {
        let mut o = PlannerOptions::new(p);
        o.surface = Some("chat".into());
        o.user = Some("u1".into());
        o.flags = Some(vec!["cross_title_link_enabled".into()]);
        o.tier = Some("adult".into());
        let a = r.planner_section("related titles for Berserk", &o).unwrap();
        let b = r
            .clone()
            .planner_section("related titles for Berserk", &o)
            .unwrap();
        assert_eq!(a, b, "byte-stable");
        out.insert(p.name(), a.to_value());
    }
    insta::assert_json_snapshot!(out);
}

#[test]
fn the_router_keeps_the_section_under_budget_at_70_and_700_contracts() {
    use promptloom::registry::planner::{PlannerOptions, REQUEST_MORE};
    use promptloom::Provider;
    for n in [70, 700] {
        let r = big_registry(n);
        for p in [Provider::Anthropic, Provider::OpenAiChat, Provider::Gemini] {
            let o = PlannerOptions::new(p);
            let s = r
                .planner_section("I want a refund for my order", &o)
                .unwrap();
            assert!(s.tokens <= 6_000, "{n} {p:?}: {} tokens", s.tokens);
            assert_eq!(s.names.len(), 8, "top-K");
            assert!(
                s.names.values().any(|v| v == "refund-order@2.1.0"),
                "{n}: {:?}",
                s.names
            );
            assert_eq!(s.more, n + 1 - 8);
            assert!(s.tools.contains(REQUEST_MORE));
            // `request_more_tools` pages past what was offered.
            let mut next = o.clone();
            next.exclude = s
                .names
                .values()
                .map(|v| v.split('@').next().unwrap().to_owned())
                .collect();
            let s2 = r
                .planner_section("shipping records by region", &next)
                .unwrap();
            assert!(s2.names.values().all(|v| !s.names.values().any(|w| w == v)));
            let shipping = s2
                .names
                .keys()
                .filter(|k| k.starts_with("shipping"))
                .count();
            assert!(shipping >= 7, "{:?}", s2.names);
        }
        // A small budget inlines fewer, never none.
        let mut tight = PlannerOptions::new(Provider::Anthropic);
        tight.token_budget = 400;
        let s = r.planner_section("refund my order", &tight).unwrap();
        assert!(
            !s.names.is_empty() && s.names.len() < 8 && s.tokens <= 400 + 200,
            "{} {}",
            s.names.len(),
            s.tokens
        );
    }
}

#[test]
fn the_overlap_audit_and_the_review() {
    let mut r = registry();
    for (n, d) in [("title-neighbours", "Given a manga title, return semantically and behaviorally related titles using graph and hybrid retrieval."), ("order-status", "Tells where an order is.")] {
        r.register(&json!({"name": n, "version": "1", "owner": "x", "description": d, "input": {"q": "string"}, "output": {"r": "string"},
            "policy": {"idempotent": true, "timeout_ms": 10, "budget": {"p95_ms": 5, "cost_usd": 0}}}))
            .unwrap();
    }
    let pairs = r.overlap_audit(None, 0.6);
    assert_eq!(pairs[0]["a"], "cross-title-link", "{pairs}");
    assert_eq!(pairs[0]["b"], "title-neighbours");
    assert_eq!(pairs[0]["by"], "lexical");
    assert!(pairs
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["a"] != "order-status" && p["b"] != "order-status"));
    let v = promptloom::registry::planner::vectors_of(
        &json!({ "order-status": [1.0, 0.0], "order-inventory": [0.9, 0.1] }),
    )
    .unwrap(); // ok: test
    let pairs = r.overlap_audit(Some(&v), 0.85);
    assert!(pairs
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["by"] == "embedding" && p["a"] == "order-inventory"));
    r.set_sunset("order-inventory-backup", "1.0.0", Some("2027-01-01"))
        .unwrap();
    let records: Vec<Value> = (0..500)
        .map(|i| json!({"contract": "cross-title-link", "start_ms": f64::from(i) * 1000.0}))
        .collect();
    let review = r.review(&records, 100.0);
    assert_eq!(
        review["deprecated"][0]["contract"],
        "order-inventory-backup@1.0.0"
    );
    let rare: Vec<&str> = review["rarely_called"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["contract"].as_str().unwrap())
        .collect();
    assert!(
        !rare.contains(&"cross-title-link") && rare.contains(&"order-status"),
        "{rare:?}"
    );
}

#[test]
fn callers_of_a_sunset_version_get_the_newer_output_through_its_adapter() {
    let mut r = registry();
    r.set_sunset("cross-title-link", "0.9", Some("2026-01-01"))
        .unwrap();
    let after = promptloom::registry::contract::epoch_ms("2026-06-01").unwrap();
    let r = Arc::new(r);
    let mut st = state::MemoryState::default();
    let mut c = ctx("chat", "u1");
    c.version = Some("0.9".into());
    let mut served = None;
    let (out, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        c.clone(),
        after,
        Box::new(|inv| {
            served = Some(inv.version.clone());
            (
                Ok(
                    json!({"nodes": ["BRSK_001", "VGLD_002"], "edges": [{"from": "BRSK_001", "to": "VGLD_002", "weight": 0.8}]}),
                ),
                3.0,
            )
        }),
    );
    assert_eq!(
        served.as_deref(),
        Some("1.0.0"),
        "the live version runs: {out:?}"
    );
    assert_eq!(
        out.unwrap(),
        json!({"recommendations": [{"title_id": "VGLD_002", "similarity": 0.8, "reason": "related in the graph"}]})
    );
    assert_eq!(
        (rec.version.as_deref(), rec.adapted_to.as_deref()),
        (Some("1.0.0"), Some("0.9.0"))
    );
    assert!(rec
        .idempotency_key
        .unwrap()
        .starts_with("idem:cross-title-link@1.0.0>0.9.0:"));
    // Callers of 1.0 get the graph as it is.
    c.version = Some("^1".into());
    let (out, rec) = call(
        &r,
        &mut st,
        "cross-title-link",
        json!({"title_id": "BRSK_001", "locale": "en-US"}),
        c,
        after,
        Box::new(|_| (Ok(json!({"nodes": [], "edges": []})), 3.0)),
    );
    assert_eq!(
        (out.unwrap(), rec.adapted_to),
        (json!({"nodes": [], "edges": []}), None)
    );
    // An adapter that targets a newer version, or writes a bad pointer, is refused.
    let mut bad = registry();
    let e = bad
        .register(&json!({"name": "x", "version": "1", "description": "d", "owner": "o", "input": {"q": "string"}, "output": {"r": "string"},
            "policy": {"idempotent": true, "timeout_ms": 5, "budget": {"p95_ms": 1, "cost_usd": 0}},
            "output_adapters": {"2.0": {"r": "$/r"}, "0.5": {"r": "$r"}}}))
        .unwrap_err();
    let codes: Vec<_> = e.details()["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(codes, ["output_adapters.0.5.r", "output_adapters.2.0"]);
}

#[test]
fn the_memory_port_stays_bounded() {
    let mut r = Registry::default();
    r.register(&json!({"name": "k", "version": "1", "description": "d", "owner": "o", "input": {"q": "string"}, "output": {"r": "string"},
        "policy": {"idempotent": true, "idempotency_ttl_sec": 1, "rate_limit": {"per_user_per_sec": 1000}, "timeout_ms": 50, "circuit_breaker": {"window_sec": 1}, "budget": {"p95_ms": 5, "cost_usd": 0}}}))
        .unwrap();
    let r = Arc::new(r);
    let mut st = state::MemoryState::default();
    let mut most = 0;
    for i in 0..20_000u32 {
        // A new key and a new user every call, a second apart: every entry goes stale soon.
        let (out, _) = call(
            &r,
            &mut st,
            "k",
            json!({"q": format!("{i}")}),
            CallContext::new("batch", &format!("u{i}")),
            f64::from(i) * 1000.0,
            Box::new(|_| (Ok(json!({"r": "x"})), 1.0)),
        );
        out.unwrap();
        most = most.max(st.len());
    }
    assert!(most < 200, "the state held {most} entries");
}

#[test]
fn actions_as_json_text_are_their_values_written() {
    let inv = |key: Option<&str>, input: Value, timeout_ms: f64| {
        Action::Invoke(Invocation {
            contract: "look\"up".into(),
            version: "1.2.0".into(),
            input,
            attempt: 3,
            timeout_ms,
            idempotency_key: key.map(str::to_owned),
            trace_id: "0123456789abcdef".into(),
        })
    };
    let cases = [
        inv(
            Some("idem:a:b"),
            json!({ "z": [1, 2.5, null], "a": "é\n" }),
            1000.0,
        ),
        inv(None, Value::Null, 12.5),
        inv(Some(""), json!("text"), f64::NAN),
        Action::Sleep(250.0),
        Action::Done(json!({ "ok": true })),
    ];
    for a in cases {
        assert_eq!(a.to_json(), a.to_value().to_string(), "{a:?}");
    }
}

#[test]
fn a_declared_errors_http_class_decides_its_retry_when_nothing_else_does() {
    // The seed's envelope: `# 5xx, retry once`, `# 4xx, do not retry` — as data (`http`).
    let doc = |idempotent: bool| {
        json!({"name": "lookup", "version": "1.0.0", "description": "Looks a key up.", "owner": "tests",
            "input": {"key": {"type": "string", "required": true}}, "output": {"value": {"type": "string"}},
            "errors": [{"code": "UPSTREAM_DOWN", "http": 503}, {"code": "NO_SUCH_KEY", "status": 404},
                       {"code": "FLAKY", "http": 502, "retry": "do-not-retry"}],
            "policy": {"idempotent": idempotent, "timeout_ms": 100, "retry": {"attempts": if idempotent { 2 } else { 0 }},
                       "budget": {"p95_ms": 50, "cost_usd": 0.001}}})
    };
    for (idempotent, code, runs_wanted) in [
        (true, "UPSTREAM_DOWN", 2),
        (true, "NO_SUCH_KEY", 1),
        (true, "FLAKY", 1),
        // A contract that may not be retried keeps its 5xx errors unretried.
        (false, "UPSTREAM_DOWN", 1),
    ] {
        let mut r = Registry::default();
        let c = r.register(&doc(idempotent)).unwrap(); // ok: test
        assert_eq!(c.declared("UPSTREAM_DOWN").unwrap().status, Some(503)); // ok: test
        let r = Arc::new(r);
        let mut st = state::MemoryState::default();
        let mut runs = 0;
        let (e, _) = call(
            &r,
            &mut st,
            "lookup",
            json!({"key": "a"}),
            CallContext::new("chat", "u1"),
            0.0,
            Box::new(|_| {
                runs += 1;
                (Err(fail(code)), 1.0)
            }),
        );
        assert_eq!(e.unwrap_err().kind(), ErrorKind::HandlerFailed); // ok: test
        assert_eq!(runs, runs_wanted, "{code}, idempotent {idempotent}");
    }
    // A status that is not one is a problem of the contract.
    let mut bad = doc(true);
    bad["errors"][0]["http"] = json!(999);
    let e = Registry::default().register(&bad).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidContract);
}
