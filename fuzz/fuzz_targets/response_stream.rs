#![no_main]
// Fuzz target `response_stream`: see promptloom::fuzzing::response_stream.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::response_stream(data));
