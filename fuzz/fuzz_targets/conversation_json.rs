#![no_main]
// Fuzz target `conversation_json`: see promptloom::fuzzing::conversation_json.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::conversation_json(data));
