//! The core's modules in dependency order (ARCHITECTURE.md): a module's code may use only
//! modules listed before it, so the dependency graph has no cycle. Doc comments may link
//! anywhere; the faces (`js`, `component`, `indexeddb`) may use everything.

use std::path::Path;

/// Lowest first.
const ORDER: &[&str] = &[
    "json_text",
    "json_scan",
    "error",
    "budget",
    "heap",
    "fx",
    "sort",
    "words",
    "json_schema",
    "frame",
    "versions",
    "problems",
    "fields",
    "body",
    "media",
    "message",
    "turn",
    "stream",
    "capabilities",
    "provider",
    "limits",
    "lower",
    "wire",
    "conversation",
    "response",
    "transport",
    "agent",
    "compositor",
    "skill",
    "dispatch",
    "store",
    "artifact_run",
    "catalog",
    "composer",
    "arbiter",
    "registry",
    "gateway",
];

fn sources(path: &Path, out: &mut Vec<String>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap().flatten() {
            sources(&e.path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|x| x == "rs") {
        out.push(std::fs::read_to_string(path).unwrap());
    }
}

/// The core modules `module`'s code (not its comments) names as `crate::<name>`.
fn uses(module: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut texts = Vec::new();
    sources(&root.join(module), &mut texts);
    sources(&root.join(format!("{module}.rs")), &mut texts);
    assert!(!texts.is_empty(), "no source for module {module}");
    let mut out = Vec::new();
    for line in texts.iter().flat_map(|t| t.lines()) {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for piece in line.split("crate::").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if name != module && ORDER.contains(&name.as_str()) && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn every_module_uses_only_the_modules_below_it() {
    let mut wrong = Vec::new();
    for (i, m) in ORDER.iter().enumerate() {
        for dep in uses(m) {
            let j = ORDER.iter().position(|x| *x == dep).unwrap();
            if j > i {
                wrong.push(format!("{m} uses {dep}, which is above it"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_core_module_is_placed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        let face = ["lib", "js", "component", "indexeddb", "fuzzing"].contains(&name.as_str());
        assert!(
            face || ORDER.contains(&name.as_str()),
            "src/{name} is not in ORDER"
        );
    }
}
