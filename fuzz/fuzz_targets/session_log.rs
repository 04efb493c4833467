#![no_main]
// Fuzz target `session_log`: see promptloom::fuzzing::session_log.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::session_log(data));
