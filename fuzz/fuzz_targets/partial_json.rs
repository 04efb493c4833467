#![no_main]
// Fuzz target `partial_json`: see promptloom::fuzzing::partial_json.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::partial_json(data));
