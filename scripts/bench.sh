#!/usr/bin/env bash
# Benchmark: promptloom vs the Vercel AI SDK lowering a fixed corpus, printed as a table.
# Not part of the test command. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
( cd bench && { [ -f node_modules/.package-lock.json ] && [ ! package-lock.json -nt node_modules/.package-lock.json ] || npm install --no-audit --no-fund; } )
node bench/lower.mjs 2> >(grep -v '^AI SDK Warning' >&2)
# The compositor on IndexedDB in headless Chromium, beside the raw IndexedDB floor.
node bench/compose.mjs
# Skills: phase-1 matching beside MiniSearch (Node), the skill store beside idb (Chromium).
( cd bench && node skills.mjs )
# The Skill Composer: a whole composition beside nunjucks and minijinja-js rendering the framing (Node).
( cd bench && node skill-composer.mjs )
# Skill state machines: validation and proposals beside XState v5 (Node).
( cd bench && node arbiter.mjs )
# Conversations: a chat's cost per new turn beside the AI SDK's getArgs of the whole prompt (Node).
node bench/conversation.mjs 2> >(grep -v '^AI SDK Warning' >&2)
# Streams: an Anthropic SSE stream of ~1,800 events read by the response parser and the adapter, beside the AI SDK's streamText (Node).
( cd bench && node --expose-gc stream.mjs 2> >(grep -v '^AI SDK Warning' >&2) )
# A JSON answer as it streams: object edits beside the AI SDK's parsePartialJson per delta (Node).
( cd bench && node partial-object.mjs )
( cd bench && node token-estimate.mjs )
# The invocation gateway: what a validated, rate-limited, idempotent call adds beside calling the handler, and beside ajv + cockatiel (Node).
( cd bench && node gateway.mjs )
# Cold start: a fresh Node process, a fresh workerd and a fresh Chromium context importing each entry and making its first body, beside the AI SDK's.
( cd bench && node cold-start.mjs )
# JS values crossing as JSON text (what the faces do) beside serde-wasm-bindgen (Node; builds target/swb-bench).
PATH="$PWD/node_modules/.bin:$PATH" node bench/serde-wasm-bindgen.mjs
