#![no_main]
// Fuzz target `message_json`: see promptloom::fuzzing::message_json.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::message_json(data));
