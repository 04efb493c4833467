#!/usr/bin/env bash
# Runs every test tier: lint, native Rust (unit, snapshots, README examples), the core in
# headless Chromium (wasm-bindgen-test), the npm package in Node, the edge Worker in workerd,
# the WASI component in jco and in Wasmtime, the demo page end to end, and a short fuzzing
# pass. Installs what it
# needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
step() { printf '\n== [%s] %s\n' "$(date +%T)" "$*"; }

step "setup"
bash scripts/setup.sh

step "lint: cargo fmt --check, cargo clippy -D warnings, cargo doc -D warnings"
cargo fmt --all -- --check
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
cargo clippy --all-targets -- -D warnings
cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings
cargo clippy --lib --target wasm32-unknown-unknown --no-default-features -- -D warnings
cargo clippy --lib --target wasm32-wasip2 -- -D warnings
cargo clippy --lib --target wasm32-wasip2 --features lowering-only -- -D warnings

step "build (web wasm, component) and size report"
bash scripts/build.sh

step "native Rust tests (unit, snapshots, doc tests, README examples)"
cargo test

step "the core in headless Chromium (wasm-bindgen-test)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --test web

step "JS tiers: npm package in Node, Worker in workerd, component in jco, demo in Chromium"
node --test tests/js/

step "the component in Wasmtime"
python3 -m unittest -v tests/component_wasmtime.py

step "a short fuzzing pass over every parser (scripts/fuzz.sh; long runs: FUZZ_SECONDS)"
FUZZ_RUNS=3000 bash scripts/fuzz.sh

step "all test tiers passed"
