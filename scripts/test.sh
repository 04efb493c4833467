#!/usr/bin/env bash
# Runs the test tiers. With no argument: setup, then every tier in order — lint, build (with
# the size report), native Rust (unit, snapshots, README examples), the core in headless
# Chromium (wasm-bindgen-test), the npm package in Node, the packed package in a Deno app and
# in fresh Node, Bun, TypeScript and Worker apps,
# the edge Worker in workerd, the page
# tests in Chromium, the WASI component in jco and in Wasmtime, the demo pages end to end,
# the README examples, and a short fuzzing pass. This is the command CI runs.
#
# Name tiers to run only those, without the setup step (run `setup` once, or name it):
#   scripts/test.sh rust              the Rust tests alone
#   scripts/test.sh node workerd      the npm package in Node and the Worker in workerd
#   scripts/test.sh --no-build web    reuse the last build (pkg/dist, target/component)
#   scripts/test.sh review            lists the snapshots a change would alter, with diffs
# Tiers: setup lint build rust wasm node deno apps workerd web component wasmtime demo readme fuzz
# (and review, which is never part of the full run). Tiers that load the package or the
# component build it first unless --no-build is given.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
step() { printf '\n== [%s] %s\n' "$(date +%T)" "$*"; }

# The JS test files of each JS tier (tests/js/*.test.mjs; a test file new to the folder and
# missing here is caught by `check_js_tiers`).
NODE_TESTS="agent arbiter chat remote compositor conversation dispose differential differential-response entries faults gateway hardening hardening-lowering lower response skill-composer skills soak types node"
WORKERD_TESTS="worker worker-composer worker-lower"
WEB_TESTS="browser chat-apps idb idb-faults idb-skills gateway-browser hardening-browser lower-browser vite"
COMPONENT_TESTS="component component-faults"
DEMO_TESTS="chat-demo composer library machine-demo registry-demo skill-composer-demo demo-panels"
README_TESTS="readme"
APPS_TESTS="packed"

check_js_tiers() {
  local listed=" $NODE_TESTS $WORKERD_TESTS $WEB_TESTS $COMPONENT_TESTS $DEMO_TESTS $README_TESTS $APPS_TESTS "
  local f name missing=""
  for f in tests/js/*.test.mjs; do
    name=$(basename "$f" .test.mjs)
    [[ "$listed" == *" $name "* ]] || missing="$missing $name"
  done
  if [ -n "$missing" ]; then
    echo "scripts/test.sh: tests/js files in no tier:$missing (add them to a tier list)" >&2
    exit 1
  fi
}

js_tier() { # $1: what, $2...: test names
  local what=$1
  shift
  local files=()
  for n in "$@"; do files+=("tests/js/$n.test.mjs"); done
  step "$what"
  node --test "${files[@]}"
}

run_tier() {
  case "$1" in
    setup)
      step "setup"
      bash scripts/setup.sh ;;
    lint)
      step "lint: cargo fmt --check, cargo doc -D warnings, cargo clippy -D warnings (8 targets)"
      cargo fmt --all -- --check
      RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
      RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet --target wasm32-unknown-unknown --features indexeddb
      cargo clippy --all-targets -- -D warnings
      cargo clippy --features ts --test documents -- -D warnings
      cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings
      cargo clippy --lib --target wasm32-unknown-unknown --no-default-features -- -D warnings
      cargo clippy --lib --target wasm32-unknown-unknown --no-default-features --features lowering-only -- -D warnings
      cargo clippy --lib --test web --target wasm32-unknown-unknown --features indexeddb -- -D warnings
      cargo clippy --lib --target wasm32-wasip2 -- -D warnings
      cargo clippy --lib --target wasm32-wasip2 --features lowering-only -- -D warnings ;;
    build)
      step "build (web wasm, component) and size report"
      bash scripts/build.sh ;;
    rust)
      step "native Rust tests (unit, snapshots, doc tests, README examples, the generated TypeScript documents)"
      cargo test
      cargo test --features ts --test documents ;;
    wasm)
      step "the core in headless Chromium (wasm-bindgen-test; the Rust IndexedDB stores)"
      CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver || echo /usr/bin/chromedriver)}" cargo test --target wasm32-unknown-unknown --features indexeddb --test web ;;
    node) js_tier "the npm package in Node" $NODE_TESTS ;;
    deno)
      # As a Deno app with a package.json uses the package: `npm pack`, installed into the
      # app's node_modules (tests/deno/app), imported by name. types.test.ts is type-checked
      # by Deno first; the .mjs suites are plain JS (no check).
      step "the packed npm package in a Deno app"
      export DENO_NO_UPDATE_CHECK=1
      mkdir -p target/deno
      rm -f target/deno/promptloom*.tgz
      npm pack ./pkg --pack-destination target/deno --silent >/dev/null
      mv target/deno/promptloom-*.tgz target/deno/promptloom.tgz
      (cd tests/deno/app && rm -rf node_modules && npm install --no-audit --no-fund --no-package-lock --silent)
      (cd tests/deno/app && deno test --allow-read types.test.ts && deno test --no-check --allow-read --allow-net=127.0.0.1 lower.test.mjs entries.test.mjs composer-first.test.mjs) ;;
    apps) js_tier "the packed package in fresh apps: Node, Bun, strict TypeScript, a wrangler-bundled Worker" $APPS_TESTS ;;
    workerd) js_tier "the Worker in workerd (wrangler bundle, miniflare)" $WORKERD_TESTS ;;
    web) js_tier "the package in headless Chromium (IndexedDB, Vite app)" $WEB_TESTS ;;
    component) js_tier "the component in jco" $COMPONENT_TESTS ;;
    wasmtime)
      step "the component in Wasmtime"
      python3 -m unittest -v tests/component_wasmtime.py ;;
    demo) js_tier "the demo pages end to end in Chromium" $DEMO_TESTS ;;
    readme) js_tier "every example of the README and docs/" $README_TESTS ;;
    fuzz)
      step "a short fuzzing pass over every parser (scripts/fuzz.sh; long runs: FUZZ_SECONDS)"
      FUZZ_RUNS=3000 bash scripts/fuzz.sh ;;
    review)
      step "snapshot review: the snapshots the current code would change"
      INSTA_UPDATE=new INSTA_FORCE_PASS=1 cargo test --quiet >/dev/null 2>&1 || true
      local pending
      pending=$(find tests -name '*.snap.new' | sort)
      if [ -z "$pending" ]; then
        echo "no snapshot would change"
      else
        local f
        for f in $pending; do
          diff -u "${f%.new}" "$f" || true
        done
        echo
        echo "accept one by renaming it over the old one (mv X.snap.new X.snap); discard with rm"
      fi ;;
    *)
      echo "scripts/test.sh: unknown tier '$1' (setup lint build rust wasm node deno apps workerd web component wasmtime demo readme fuzz review)" >&2
      exit 2 ;;
  esac
}

check_js_tiers
build=1
tiers=()
for a in "$@"; do
  if [ "$a" = "--no-build" ]; then build=0; else tiers+=("$a"); fi
done
if [ ${#tiers[@]} -eq 0 ]; then
  for t in setup lint build rust wasm node deno apps workerd web component wasmtime demo readme fuzz; do
    run_tier "$t"
  done
  step "all test tiers passed"
  exit 0
fi
needs_build=0
for t in "${tiers[@]}"; do
  case "$t" in node|deno|apps|workerd|web|component|wasmtime|demo|readme) needs_build=1 ;; build) needs_build=0; break ;; esac
done
if [ $build = 1 ] && [ $needs_build = 1 ]; then run_tier build; fi
for t in "${tiers[@]}"; do run_tier "$t"; done
step "tiers passed: ${tiers[*]}"
