#![no_main]
// Fuzz target `kv_journal`: see promptloom::fuzzing::kv_journal.
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptloom::fuzzing::kv_journal(data));
