#![no_main]
// Fuzz target `catalog_text`: see promptloom::fuzzing::catalog_text.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::catalog_text(data));
