#![no_main]
// Fuzz target `contract`: see promptloom::fuzzing::contract.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::contract(data));
