#!/usr/bin/env bash
# Builds the web wasm into pkg/dist/wasm (cargo → wasm-bindgen → wasm-opt -Oz), the WASI
# component into target/component/, and prints the size report.
# Run scripts/setup.sh first (the README commands do).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

# Two web modules from one crate: `promptloom` (lowering, compositor, skills) without the
# `composer` feature, and `promptloom_composer` (all of it, the Skill Composer included) for
# the `promptloom/composer` entry. An app loads one of them.
rm -rf pkg/dist/wasm
web() { # $1: output name, $2...: cargo feature flags
  local name=$1
  shift
  cargo build --release --lib --target wasm32-unknown-unknown "$@"
  wasm-bindgen --target web --no-typescript --out-dir pkg/dist/wasm --out-name "$name" \
    target/wasm32-unknown-unknown/release/promptloom.wasm
  node scripts/glue.mjs "pkg/dist/wasm/${name}.js"
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "pkg/dist/wasm/${name}_bg.wasm" -o "pkg/dist/wasm/${name}_bg.wasm"
}
web promptloom --no-default-features
web promptloom_composer

# Two components: the full world (imports wasi:keyvalue for the message store) and the
# lowering-only world (no imports).
mkdir -p target/component
cargo build --release --lib --target wasm32-wasip2 --features lowering-only
cp target/wasm32-wasip2/release/promptloom.wasm target/component/promptloom-lowering.wasm
cargo build --release --lib --target wasm32-wasip2
cp target/wasm32-wasip2/release/promptloom.wasm target/component/promptloom.wasm

node scripts/size.mjs
