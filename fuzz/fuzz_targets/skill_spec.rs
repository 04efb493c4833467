#![no_main]
// Fuzz target `skill_spec`: see promptloom::fuzzing::skill_spec.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::skill_spec(data));
