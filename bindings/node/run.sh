#!/usr/bin/env bash
# The Node binding's checks against a WebAssembly build of the C API: room.ts type-checked against
# sightline.d.mts (TypeScript from npm, installed by npm ci when missing), then the quickstart
# under node --test. Usage: run.sh PATH/sightline_wasm.cjs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=$(realpath "$1")
cd "$here"
if [ ! -f node_modules/typescript/package.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node_modules/.bin/tsc --noEmit --strict --target es2022 --module nodenext --moduleResolution nodenext room.ts
echo "typescript: room.ts checks against sightline.d.mts"
# --no-wasm-tier-up: with Node 20 and Emscripten 3.1.6's module, node sometimes does not exit
# after the test while V8 optimizes the module in the background (3 runs in 6 hung here without
# it, none in 12 with it).
SIGHTLINE_WASM="$module" node --no-wasm-tier-up --test quickstart.test.mjs < /dev/null
