#![no_main]
// Fuzz target `seed_package`: see promptloom::fuzzing::seed_package.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::seed_package(data));
