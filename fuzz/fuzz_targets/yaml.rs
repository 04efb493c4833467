#![no_main]
// Fuzz target `yaml`: see promptloom::fuzzing::yaml.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::yaml(data));
