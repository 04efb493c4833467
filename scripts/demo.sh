#!/usr/bin/env bash
# Builds promptloom and serves the demo page (www/) at http://127.0.0.1:${PORT:-8080}/www/.
# Installs what it needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/serve.mjs
