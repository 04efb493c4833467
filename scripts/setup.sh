#!/usr/bin/env bash
# Installs what building and testing promptloom needs, skipping what is already there:
# rustup targets, wasm-bindgen-cli at the version pinned in Cargo.lock, Debian's chromium and
# chromium-driver, the npm dev packages (package-lock.json), and Python's wasmtime.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
say() { printf '\n== setup: %s\n' "$*"; }

installed=$(rustup target list --installed)
for t in wasm32-unknown-unknown wasm32-wasip2; do
  grep -qx "$t" <<<"$installed" || { say "rustup target $t"; rustup target add "$t"; }
done

want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  say "wasm-bindgen-cli $want (about 3 minutes on 2 cores)"
  # No --locked: one of its locked dependency versions is not in the registry.
  cargo install wasm-bindgen-cli --version "$want"
fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "chromium and chromium-driver"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# `npm install`, not `npm ci`: the lock file omits some other platforms' optional binaries
# (workerd, rolldown, jco), which `npm ci` rejects as out of sync.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm packages"
  npm install --no-audit --no-fund
fi

if ! python3 -c 'import wasmtime.component' 2>/dev/null; then
  say "python wasmtime"
  python3 -m pip install -q --root-user-action=ignore -r requirements-dev.txt
fi
