//! Every input in the fuzz corpus (`fuzz/corpus/<target>`, seeds and what the fuzzers kept)
//! replayed through its target natively: none may panic. The fuzzers themselves run with
//! `scripts/fuzz.sh`.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::fuzzing::TARGETS;
use std::fs;
use std::path::Path;

#[test]
fn every_corpus_input_runs_through_its_target() {
    let mut total = 0;
    for (name, target) in TARGETS {
        let dir = Path::new("fuzz/corpus").join(name);
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())); // ok: test
        let mut n = 0;
        for entry in entries {
            let path = entry.expect("a corpus entry").path(); // ok: test
                                                              // A fuzzer running beside the tests may replace files as it goes.
            let Ok(data) = fs::read(&path) else { continue };
            target(&data);
            n += 1;
        }
        assert!(n > 0, "the corpus of {name} is empty");
        total += n;
    }
    assert!(total >= 100, "{total} corpus inputs");
}
