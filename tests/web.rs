//! The core compiled to `wasm32-unknown-unknown`, run by wasm-bindgen-test in headless
//! Chromium: every shared case must give, inside the browser's wasm engine, the body the
//! native snapshot tests recorded.
#![cfg(target_arch = "wasm32")]

use promptloom::lower::{lower, LowerOptions, Provider};
use promptloom::wire::resolver_table;
use promptloom::UserMessage;
use serde_json::Value;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

macro_rules! cases {
    ($($name:literal),* $(,)?) => {
        &[$(
            (
                $name,
                include_str!(concat!("lower/inputs/", $name, ".json")),
                [
                    include_str!(concat!("snapshots/lower__lowered@", $name, ".anthropic.snap")),
                    include_str!(concat!("snapshots/lower__lowered@", $name, ".openai-chat.snap")),
                    include_str!(concat!("snapshots/lower__lowered@", $name, ".openai-responses.snap")),
                    include_str!(concat!("snapshots/lower__lowered@", $name, ".gemini.snap")),
                ],
            ),
        )*]
    };
}

type Case = (&'static str, &'static str, [&'static str; 4]);

const CASES: &[Case] = cases![
    "code_containing_fences",
    "code_selection",
    "content_id_attachment",
    "crlf_and_empty_file",
    "data_urls",
    "declared_vs_sniffed_image",
    "editor_context_injection",
    "empty_text_and_media",
    "image_bytes_not_an_image",
    "image_file_ref_bytes",
    "line_wrapped_base64",
    "media_only",
    "mentions",
    "mixed_ten_parts",
    "path_with_spaces_and_hash",
    "pdf_attachment",
    "range_single_line_and_bytes",
    "range_zero_based_and_past_end",
    "size_limits",
    "system_tools_params",
    "text_attachment_over_limit",
    "text_attachments",
    "text_only",
    "unknown_parts",
    "unresolved_and_failed_refs",
    "unsupported_media",
    "url_refs",
];

fn recorded_body(snap: &str) -> &str {
    let start = snap[4..].find("\n---\n").map(|i| i + 4 + 5).unwrap_or(0);
    snap[start..].lines().next().unwrap_or("")
}

#[wasm_bindgen_test]
fn every_shared_case_in_the_browser() {
    assert!(CASES.len() >= 25);
    for (name, input, snaps) in CASES {
        let case: Value = serde_json::from_str(input).unwrap();
        for (i, p) in Provider::ALL.into_iter().enumerate() {
            let msg = UserMessage::from_value(case["message"].clone()).unwrap();
            let mut o = case
                .get("options")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            o.insert("provider".into(), p.name().into());
            let opts = LowerOptions::from_value(Value::Object(o)).unwrap();
            let table = resolver_table(
                &case
                    .get("resolve")
                    .map(Value::to_string)
                    .unwrap_or_default(),
            )
            .unwrap();
            let out = lower(&msg, &opts, &table).unwrap();
            assert_eq!(out.body, recorded_body(snaps[i]), "{name} / {}", p.name());
        }
    }
}

#[wasm_bindgen_test]
fn bad_input_is_an_error_not_a_trap() {
    for text in [
        "",
        "[]",
        "{\"parts\":[{\"type\":\"command\",\"id\":\"/x\"}]}",
        "{\"parts\":[{\"type\":\"file-attachment\",\"data\":\"$$$$\"}]}",
    ] {
        let r = UserMessage::from_json(text).and_then(|m| {
            lower(
                &m,
                &LowerOptions::new(Provider::Gemini),
                &promptloom::NoResolver,
            )
        });
        assert!(r.is_err(), "{text}");
    }
}

/// The async store conformance cases over real IndexedDB (the `indexeddb` feature): the
/// same cases `tests/async_stores.rs` runs over memory.
#[cfg(feature = "indexeddb")]
#[path = "common/async_cases.rs"]
mod cases;

/// The Rust guide's IndexedDB example (checked to be docs/rust.md's text by
/// `tests/idb_schema.rs`).
#[cfg(feature = "indexeddb")]
mod readme {
    include!("common/readme_stores.rs");

    #[wasm_bindgen_test::wasm_bindgen_test]
    async fn the_readme_example_over_indexeddb() {
        promptloom::indexeddb::IndexedDb::delete("my-app")
            .await
            .unwrap();
        let db = promptloom::indexeddb::IndexedDb::open("my-app")
            .await
            .unwrap();
        assert_eq!(remember(&AsyncMessageStore::new(db)).await.unwrap(), 1);
    }
}

#[cfg(feature = "indexeddb")]
mod indexeddb {
    use super::cases;
    use promptloom::indexeddb::IndexedDb;
    use std::cell::Cell;
    use wasm_bindgen_test::*;

    thread_local! {
        static NEXT: Cell<u32> = const { Cell::new(0) };
    }

    /// A fresh, empty database.
    async fn fresh() -> IndexedDb {
        let n = NEXT.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        let name = format!("promptloom-rust-{n}");
        IndexedDb::delete(&name).await.unwrap();
        IndexedDb::open(&name).await.unwrap()
    }

    #[wasm_bindgen_test]
    async fn message_store_conformance_over_indexeddb() {
        cases::message_store(fresh).await;
    }

    #[wasm_bindgen_test]
    async fn skill_store_conformance_over_indexeddb() {
        cases::skill_store(fresh).await;
    }

    #[wasm_bindgen_test]
    async fn system_skills_seed_over_indexeddb() {
        cases::seed(fresh).await;
    }

    #[wasm_bindgen_test]
    async fn racing_tabs_conflict_in_indexeddb_and_are_laid_out_again() {
        cases::racing_writers_conflict(|conflicts| async move {
            cases::Counting {
                inner: fresh().await,
                conflicts,
                interleave: false,
            }
        })
        .await;
    }
}
