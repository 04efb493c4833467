//! The IndexedDB schema is written once, in `src/store/idb_schema.rs`: the JS glue's driver
//! reads it from `pkg/src/constants.js`, which `tests/constants.rs` writes from the core.

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
