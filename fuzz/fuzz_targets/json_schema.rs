#![no_main]
// Fuzz target `json_schema`: see promptloom::fuzzing::json_schema.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::json_schema(data));
