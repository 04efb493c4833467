//! The core's modules in dependency order (ARCHITECTURE.md): a module's code may use only
//! modules listed before it, so the dependency graph has no cycle; within a module, its
//! files use each other without a cycle too. Doc comments may link anywhere; the faces
//! (`js`, `component`, `indexeddb`) may use everything.

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
    "models",
    "stream",
    "capabilities",
    "settings",
    "provider",
    "limits",
    "lower",
    "wire",
    "conversation",
    "response",
    "event_stream",
    "transport",
    "agent",
    "compositor",
    "chat",
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

/// The files of a module directory (`src/<module>/`): each `.rs` file but `mod.rs`, and each
/// subdirectory (its files read as one), by name.
fn files_of(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut texts = Vec::new();
            sources(&path, &mut texts);
            out.push((name, texts.join("\n")));
        } else if path.extension().is_some_and(|x| x == "rs") && name != "mod" {
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// The names a module's `mod.rs` re-exports from its files: item → file.
fn reexports(modrs: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for stmt in modrs.split(';') {
        let s = stmt.trim();
        let Some(rest) = s
            .strip_prefix("pub use ")
            .or_else(|| s.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let Some((file, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !item.is_empty() {
                out.push((item.to_owned(), file.to_owned()));
            }
        }
    }
    out
}

/// The sibling files `text` (code, not comments) names through `super::` or
/// `crate::<module>::`, directly or through a name `mod.rs` re-exports.
fn sibling_uses(
    module: &str,
    text: &str,
    files: &[String],
    reexp: &[(String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    let prefix = format!("crate::{module}::");
    for line in text.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for head in ["super::", prefix.as_str()] {
            for piece in line.split(head).skip(1) {
                let names: Vec<&str> = match piece.strip_prefix('{') {
                    Some(list) => list
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .collect(),
                    None => vec![piece
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("")],
                };
                for n in names.into_iter().filter(|n| !n.is_empty()) {
                    let file = if files.iter().any(|f| f == n) {
                        Some(n.to_owned())
                    } else {
                        reexp.iter().find(|(i, _)| i == n).map(|(_, f)| f.clone())
                    };
                    if let Some(f) = file {
                        if files.contains(&f) && !out.contains(&f) {
                            out.push(f);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Within every module, the files do not use each other in a cycle (`a` uses `b` and `b`,
/// through any path, uses `a`): each module's files have an order too.
#[test]
fn no_module_has_a_cycle_of_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut cycles = Vec::new();
    for m in ORDER {
        let dir = root.join(m);
        if !dir.is_dir() {
            continue;
        }
        let files = files_of(&dir);
        let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        let modrs = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
        let reexp = reexports(&modrs);
        let edges: Vec<Vec<String>> = files
            .iter()
            .map(|(n, text)| {
                sibling_uses(m, text, &names, &reexp)
                    .into_iter()
                    .filter(|f| f != n)
                    .collect()
            })
            .collect();
        // A file is on a cycle when it reaches itself.
        for (i, start) in names.iter().enumerate() {
            let mut seen = vec![false; names.len()];
            let mut stack: Vec<usize> = edges[i]
                .iter()
                .filter_map(|f| names.iter().position(|n| n == f))
                .collect();
            while let Some(j) = stack.pop() {
                if j == i {
                    cycles.push(format!(
                        "src/{m}/{start} reaches itself through its siblings"
                    ));
                    break;
                }
                if std::mem::replace(&mut seen[j], true) {
                    continue;
                }
                stack.extend(
                    edges[j]
                        .iter()
                        .filter_map(|f| names.iter().position(|n| n == f)),
                );
            }
        }
    }
    assert!(cycles.is_empty(), "{cycles:#?}");
}
