//! The IndexedDB schema is written once, in `src/store/idb_schema.rs`: the JS glue's driver
//! reads it from `pkg/src/constants.js`, which `tests/constants.rs` writes from the core.

#[test]
fn the_rust_guide_shows_the_example_the_browser_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rust.md")).unwrap();
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/common/readme_stores.rs"
    ))
    .unwrap();
    assert!(
        readme.contains(&example),
        "docs/rust.md lacks tests/common/readme_stores.rs"
    );
}
