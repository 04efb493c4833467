#![no_main]
// Fuzz target `skill_md`: see promptloom::fuzzing::skill_md_text.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::skill_md_text(data));
