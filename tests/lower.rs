//! Snapshot tests of the lowering chain: one input case per file in `tests/lower/inputs`
//! (a message, options, and the resolver's answers in the bindings' wire form), one reviewed
//! snapshot per provider. The first line of each snapshot is the exact body; the JS, browser,
//! edge and component tests compare their own output against it byte for byte.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::lower::{lower, LowerOptions, Provider};
use promptloom::wire::resolver_table;
use promptloom::UserMessage;
use serde_json::Value;
use std::path::Path;

mod common;
use common::body_snapshot;

struct Case {
    message: Value,
    options: serde_json::Map<String, Value>,
    /// Options for one provider over `options` (a model id, its provider options).
    by_provider: serde_json::Map<String, Value>,
    resolve: String,
}

fn load(path: &Path) -> Case {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    Case {
        message: v["message"].clone(),
        options: v
            .get("options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        by_provider: v
            .get("byProvider")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        resolve: v.get("resolve").map(Value::to_string).unwrap_or_default(),
    }
}

/// The case's options for `p`: `options`, then `byProvider[p]` over them.
fn options_for(case: &Case, p: Provider) -> serde_json::Map<String, Value> {
    let mut o = case.options.clone();
    if let Some(Value::Object(over)) = case.by_provider.get(p.name()) {
        o.extend(over.clone());
    }
    o.insert("provider".into(), p.name().into());
    o
}

fn run(case: &Case, p: Provider) -> promptloom::Result<promptloom::Lowered> {
    let msg = UserMessage::from_value(case.message.clone())?;
    let opts = LowerOptions::from_value(Value::Object(options_for(case, p)))?;
    let table = resolver_table(&case.resolve)?;
    lower(&msg, &opts, &table)
}

#[test]
fn lowered() {
    insta::glob!("lower/inputs/*.json", |path| {
        let case = load(path);
        for p in Provider::ALL {
            let out = run(&case, p).unwrap_or_else(|e| panic!("{}: {p:?}: {e}", path.display()));
            // Byte stability: the same inputs again, and after a message round trip.
            let again = run(&case, p).unwrap();
            assert_eq!(out.body, again.body);
            let round = UserMessage::from_value(case.message.clone())
                .unwrap()
                .to_value();
            let rt = run(
                &Case {
                    message: round,
                    options: case.options.clone(),
                    by_provider: case.by_provider.clone(),
                    resolve: case.resolve.clone(),
                },
                p,
            )
            .unwrap();
            assert_eq!(out.body, rt.body, "round trip changed the body");
            serde_json::from_str::<Value>(&out.body).expect("body is valid JSON");
            let text = body_snapshot(&out.body, &out.report);
            let mut settings = insta::Settings::clone_current();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
            settings.set_snapshot_suffix(format!("{stem}.{}", p.name()));
            settings.set_prepend_module_to_snapshot(true);
            settings.bind(|| insta::assert_snapshot!(text));
        }
    });
}

/// Records every request the lowering walk makes, answering from the case's table.
struct Recording<'t> {
    table: &'t promptloom::lower::TableResolver,
    asked: std::cell::RefCell<Vec<Value>>,
}

impl promptloom::lower::Resolver for Recording<'_> {
    fn resolve(
        &self,
        request: &promptloom::lower::ResolveRequest<'_>,
    ) -> Result<promptloom::lower::Resolved, String> {
        self.asked.borrow_mut().push(request.to_request().value);
        self.table.resolve(request)
    }
}

/// The planned requests (what a host is asked before lowering) are exactly the requests
/// the lowering walk makes, for every input and every target.
#[test]
fn planned_requests_are_the_walks() {
    let mut asked_any = 0;
    for dir in ["lower/inputs", "lower/errors"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(dir);
        let mut paths: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let case = load(&path);
            let Ok(msg) = UserMessage::from_value(case.message.clone()) else {
                continue;
            };
            let planned: Vec<Value> = promptloom::lower::resolve_requests(&msg.parts)
                .into_iter()
                .map(|r| r.value)
                .collect();
            for p in Provider::ALL {
                let Ok(opts) = LowerOptions::from_value(Value::Object(options_for(&case, p)))
                else {
                    continue;
                };
                let table = resolver_table(&case.resolve).unwrap();
                let rec = Recording {
                    table: &table,
                    asked: Default::default(),
                };
                let ok = lower(&msg, &opts, &rec).is_ok();
                let asked = rec.asked.into_inner();
                asked_any += asked.len();
                for a in &asked {
                    assert!(
                        planned.contains(a),
                        "{}: {p:?}: the walk asked {a} (not planned)",
                        path.display()
                    );
                }
                if ok {
                    assert_eq!(asked, planned, "{}: {p:?}", path.display());
                }
            }
        }
    }
    assert!(
        asked_any > 40,
        "the inputs ask the resolver ({asked_any} requests)"
    );
}

#[test]
fn errors() {
    insta::glob!("lower/errors/*.json", |path| {
        let case = load(path);
        let mut lines = Vec::new();
        for p in Provider::ALL {
            let line = match run(&case, p) {
                Ok(_) => format!("{}: ok", p.name()),
                Err(e) => format!("{}: {}", p.name(), e.to_json()),
            };
            lines.push(line);
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(true);
        settings.bind(|| insta::assert_snapshot!(lines.join("\n")));
    });
}

#[test]
fn core_has_no_binding_dependencies() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree", "-e", "normal", "--prefix", "none", "--format", "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree failed");
    assert!(
        tree.contains("serde_json"),
        "cargo tree output looks wrong: {tree}"
    );
    for banned in ["wasm-bindgen", "web-sys", "js-sys", "wit-bindgen"] {
        assert!(
            !tree.lines().any(|l| l.starts_with(banned)),
            "the native core depends on {banned}:\n{tree}"
        );
    }
}

#[test]
fn size_limits_count_base64_as_sent() {
    // 3,932,160 bytes encode to exactly 5 MiB of base64: the largest image Anthropic takes.
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let fits = 3_932_160usize;
    for (len, native) in [(fits, true), (fits + 1, false)] {
        let mut data = vec![0u8; len];
        data[..png.len()].copy_from_slice(png);
        let b64 = promptloom::media::encode(&data);
        let msg = UserMessage::from_value(serde_json::json!({
            "parts": [{"type": "file-attachment", "data": b64, "mime": "image/png"}]
        }))
        .unwrap();
        let out = lower(
            &msg,
            &LowerOptions::new(Provider::Anthropic),
            &promptloom::NoResolver,
        )
        .unwrap();
        let rule = &out.report.blocks[0].rule;
        assert_eq!(rule == "attachment-image", native, "{len} bytes: {rule}");
    }
}

#[test]
fn the_inspectors_three_views() {
    use promptloom::compositor::inspect::views;
    use promptloom::lower::{Resolved, TableResolver};
    let msg = UserMessage::from_json(
        r#"{"role":"user","parts":[{"type":"text","text":"look at "},{"type":"file-ref","ref":{"path":"a.txt"}}]}"#,
    )
    .unwrap(); // ok: test
    let opts = LowerOptions::new(Provider::Anthropic);
    let table = || {
        let mut t = TableResolver::default();
        t.insert(1, Ok(Resolved::Text("hello".into())));
        t
    };
    let v = views(&msg, &opts, &table());
    assert_eq!(v["user"][1]["label"], "a.txt");
    assert_eq!(v["persisted"], msg.to_value());
    // The model view is exactly what lower() gives.
    let l = lower(&msg, &opts, &table()).unwrap(); // ok: test
    assert_eq!(
        v["model"]["body"],
        serde_json::from_str::<Value>(&l.body).unwrap()
    ); // ok: test
    let empty = UserMessage::from_json(r#"{"role":"user","parts":[]}"#).unwrap(); // ok: test
    assert_eq!(
        views(&empty, &opts, &table())["model"]["error"]["code"],
        "EmptyMessage"
    );
}
