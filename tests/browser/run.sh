#!/usr/bin/env bash
# The demo page's tests. Usage: tests/browser/run.sh [unit|page|all] (default all)
#   unit: the JS decoder, mirror and session against real bytes (node only, no server, no browser)
#   page: sightline-server + the page in Debian's Chromium through playwright-core
# Environment: SIGHTLINE_SERVER (default build/bin/sightline-server), SIGHTLINE_SCREENSHOT
# (default build/artifacts/page.png), CHROMIUM (default /usr/bin/chromium).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
what="${1:-all}"
cd "$here"

unit() { node --test decoder.test.mjs session.test.mjs; }

page() {
  local chromium="${CHROMIUM:-/usr/bin/chromium}"
  if [ ! -x "$chromium" ]; then
    echo "no Chromium at $chromium: apt-get install -y --no-install-recommends chromium" >&2
    exit 1
  fi
  if [ ! -f node_modules/playwright-core/package.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
  export SIGHTLINE_SERVER="${SIGHTLINE_SERVER:-$root/build/bin/sightline-server}"
  export SIGHTLINE_SCREENSHOT="${SIGHTLINE_SCREENSHOT:-$root/build/artifacts/page.png}"
  node --test page.test.mjs
}

case "$what" in
  unit) unit ;;
  page) page ;;
  all) unit; page ;;
  *) echo "usage: $0 [unit|page|all]" >&2; exit 2 ;;
esac
