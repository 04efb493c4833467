#![no_main]
// Fuzz target `system_skills`: see promptloom::fuzzing::system_skills.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::system_skills(data));
