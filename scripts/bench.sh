#!/usr/bin/env bash
# The benchmarks: every one side by side with its peers, written to BENCHMARKS.md in one run.
# Not part of the test command. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
( cd bench && { [ -f node_modules/.package-lock.json ] && [ ! package-lock.json -nt node_modules/.package-lock.json ] || npm install --no-audit --no-fund; } )
# Every benchmark, each run ${RUNS:-3} times, into BENCHMARKS.md (tables, the size chart and
# every benchmark's chart from this one run). `--only lower,stream` runs some of them.
node bench/report.mjs --runs "${RUNS:-3}" "$@"
