#![no_main]
// Fuzz target `template`: see promptloom::fuzzing::template_source.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::template_source(data));
