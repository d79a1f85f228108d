#!/usr/bin/env bash
# The amplification check of issue 19 (B1): clients each asking for an enter radius of their own
# and flipping it with every move must not make the server's memory or tick time grow with the
# number of distinct settings. Runs tools/bots/load.sh twice on the same world, BOTS bots for
# SECONDS each: first with the radii left alone (the baseline), then with every bot churning its
# own (RADIUS_CHURN=1). Passes when both runs pass load.sh's checks (tick p99 <= 50 ms, memory flat
# after warm-up, every bot's frames on time and checked) and the churning server's memory at the
# end is at most twice the baseline's.
#
# Usage: tools/bots/radius_churn.sh BOTS SECONDS OUTDIR   (OUTDIR/baseline and OUTDIR/churn)
# Environment: SIGHTLINE_BIN as for load.sh; SERVER_ARGS (default: 20,000 walkers in 100 x 100).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BOTS SECONDS OUTDIR" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
export SERVER_ARGS="${SERVER_ARGS:---entities 20000 --width 100 --height 100}"
# Both runs' bots move 20 times a second: the churning ones send a radius frame with each move.
export MOVE_HZ=20
RADIUS_CHURN=0 "$here/load.sh" "$1" "$2" "$3/baseline" | sed 's/^/baseline: /'
RADIUS_CHURN=1 "$here/load.sh" "$1" "$2" "$3/churn" | sed 's/^/churn: /'
node - "$3/baseline/server.json" "$3/churn/server.json" <<'JS'
const fs = require('fs');
const [base, churn] = process.argv.slice(2).map((p) => JSON.parse(fs.readFileSync(p, 'utf8')));
console.log(`radius churn: RSS at the end ${churn.rss_kb_end} kB against ${base.rss_kb_end} kB without it ` +
  `(limit ${2 * base.rss_kb_end} kB); tick p99 ${churn.tick_ms_p99.toFixed(2)} ms against ${base.tick_ms_p99.toFixed(2)} ms`);
if (!(churn.rss_kb_end <= 2 * base.rss_kb_end)) {
  console.log('radius churn: FAIL: memory grew with the settings clients asked for');
  process.exit(1);
}
console.log('radius churn: PASS');
JS
