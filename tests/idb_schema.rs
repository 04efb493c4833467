//! The IndexedDB schema is written once, in `src/store/idb_schema.rs`; the JS glue's
//! IndexedDB driver states it in `pkg/src/stores.js`. This test fails when they differ.

use promptloom::store::idb_schema::{object_stores, virtual_of, INDEXES, VERSION};
use promptloom::store::Table;

fn glue() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pkg/src/stores.js")).unwrap()
}

#[test]
fn the_glue_opens_the_same_version() {
    assert!(glue().contains(&format!("const DB_VERSION = {VERSION};")));
}

#[test]
fn the_glue_creates_the_same_indexes() {
    // `{ skills: { name: true, source: false }, skill_artifacts: { … } }`
    let mut tables: Vec<(Table, Vec<String>)> = Vec::new();
    for (t, field, unique) in INDEXES {
        let entry = format!("{field}: {unique}");
        match tables.iter_mut().find(|(x, _)| *x == t) {
            Some((_, fields)) => fields.push(entry),
            None => tables.push((t, vec![entry])),
        }
    }
    let literal = tables
        .iter()
        .map(|(t, f)| format!("{}: {{ {} }}", t.name(), f.join(", ")))
        .collect::<Vec<_>>()
        .join(", ");
    let line = format!("const INDEXES = {{ {literal} }};");
    assert!(glue().contains(&line), "stores.js lacks: {line}");
}

#[test]
fn the_glue_has_the_same_virtual_tables_and_stores() {
    let virtuals = Table::ALL
        .into_iter()
        .filter_map(|t| {
            virtual_of(t).map(|(s, f)| format!("{}: ['{}', '{f}']", t.name(), s.name()))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let line = format!("const VIRTUAL = {{ {virtuals} }};");
    assert!(glue().contains(&line), "stores.js lacks: {line}");
    let all = Table::ALL
        .iter()
        .map(|t| format!("'{}'", t.name()))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(glue().contains(&format!("export const TABLES = [{all}];")));
    assert_eq!(object_stores().count(), Table::ALL.len() - 2);
}

#[test]
fn the_readme_shows_the_example_the_browser_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/common/readme_stores.rs"
    ))
    .unwrap();
    assert!(
        readme.contains(&example),
        "README.md lacks tests/common/readme_stores.rs"
    );
}
