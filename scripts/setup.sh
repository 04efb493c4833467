#!/usr/bin/env bash
# Installs what building and testing promptloom needs, skipping what is already there:
# rustup targets, wasm-bindgen-cli at the version pinned in Cargo.lock, Debian's chromium and
# chromium-driver, the npm dev packages (package-lock.json, Deno and Bun among them), and
# Python's wasmtime. It needs, already there: rustup with a stable toolchain, Node 20 or
# later with npm, Python 3 with pip, and apt for Chromium (it runs apt-get itself as root,
# through sudo otherwise). Without apt it says how to install Chromium by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
say() { printf '\n== setup: %s\n' "$*"; }
need() { # $1: a command, $2: how to get it
  command -v "$1" >/dev/null || { printf 'scripts/setup.sh: `%s` is missing: %s\n' "$1" "$2" >&2; exit 1; }
}
need rustup "install it from the Rust project's site (it brings cargo and a stable toolchain)"
need node "install Node 20 or later (it brings npm)"
need npm "install Node 20 or later (it brings npm)"
need python3 "install Python 3 with pip"

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
  if ! command -v apt-get >/dev/null; then
    cat >&2 <<'MSG'
scripts/setup.sh: no apt-get here. Install Chromium and the matching ChromeDriver by hand, so
that `chromium` and `chromedriver` are on the PATH (the browser tiers run them headless):
  macOS (Homebrew):  brew install --cask chromium && brew install --cask chromedriver
                     then link both binaries into a directory on the PATH as `chromium` and
                     `chromedriver`, or set CHROMIUM=/path/to/chromium for the Playwright tiers
                     and CHROMEDRIVER=/path/to/chromedriver for the wasm tier.
  Fedora:            sudo dnf install chromium chromedriver
  Arch:              sudo pacman -S chromium
Then run the command again.
MSG
    exit 1
  fi
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
