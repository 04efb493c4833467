#!/usr/bin/env bash
# Fuzzes every parser that takes outside input (src/fuzzing.rs names the targets) with
# libFuzzer through cargo-fuzz, on the machine's stable toolchain (RUSTC_BOOTSTRAP lets it
# take the coverage flags; no sanitizer: the crate has no unsafe code outside the wasm
# allocator). New inputs that reach new code are kept in fuzz/corpus/<target>.
#   scripts/fuzz.sh                    every target for FUZZ_SECONDS (default 3600) each
#   scripts/fuzz.sh template yaml      only these targets
#   FUZZ_RUNS=20000 scripts/fuzz.sh    a fixed number of runs per target (the test command's pass)
# The repository keeps, per target, the seeds (from the test inputs) and the 250 smallest
# inputs a long run kept after `cargo fuzz cmin`; trim a grown corpus the same way before
# committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(message_json conversation_json command_text skill_md yaml seed_package skill_spec template kv_journal response_stream partial_json catalog_text contract session_log system_skills json_schema)
fi
export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none -O
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    limit=(-runs="$FUZZ_RUNS" -seed=1)
  else
    limit=(-max_total_time="${FUZZ_SECONDS:-3600}")
  fi
  echo "== fuzz $t ${limit[*]}"
  cargo fuzz run -s none -O "$t" "fuzz/corpus/$t" -- "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 2>&1 |
    grep -E "^(==|INFO: Seed|#[0-9]+ +DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|ERROR|panicked|thread )" || true
  # A crash, timeout or OOM leaves an artifact and a non-zero exit: stop here.
  if ls "fuzz/artifacts/$t"/* >/dev/null 2>&1; then
    echo "fuzz target $t found a failure: fuzz/artifacts/$t" >&2
    exit 1
  fi
done
