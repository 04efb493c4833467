#!/usr/bin/env bash
# Builds the web wasm into pkg/dist/wasm (cargo → wasm-bindgen → wasm-opt -Oz), the WASI
# component into target/component/, and prints the size report.
# Run scripts/setup.sh first (the README commands do).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

cargo build --release --lib --target wasm32-unknown-unknown
rm -rf pkg/dist/wasm
wasm-bindgen --target web --no-typescript --out-dir pkg/dist/wasm --out-name promptloom \
  target/wasm32-unknown-unknown/release/promptloom.wasm
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  pkg/dist/wasm/promptloom_bg.wasm -o pkg/dist/wasm/promptloom_bg.wasm

# Two components: the full world (imports wasi:keyvalue for the message store) and the
# lowering-only world (no imports).
mkdir -p target/component
cargo build --release --lib --target wasm32-wasip2 --features lowering-only
cp target/wasm32-wasip2/release/promptloom.wasm target/component/promptloom-lowering.wasm
cargo build --release --lib --target wasm32-wasip2
cp target/wasm32-wasip2/release/promptloom.wasm target/component/promptloom.wasm

node scripts/size.mjs
