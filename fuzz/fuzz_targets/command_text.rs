#![no_main]
// Fuzz target `command_text`: see promptloom::fuzzing::command_text.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::command_text(data));
