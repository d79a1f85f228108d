#!/usr/bin/env bash
# Load test over loopback: sightline-server on a free port, sightline-bots against it, then the
# server stopped with SIGINT. Passes when the bots exit 0 (no anomaly, no failed or closed
# connection), the server's tick p99 is at most 50 ms, and its memory is flat after warm-up
# (rss_kb_end <= rss_kb_after_warmup * 1.10 + 4096).
#
# Usage: tools/bots/load.sh BOTS SECONDS OUTDIR
#   OUTDIR gets server.log, server.json (--stats-json), bots.txt (the table), bots.json.
# Environment: SIGHTLINE_BIN (default build/bin): where sightline-server and sightline-bots are.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BOTS SECONDS OUTDIR" >&2
  exit 2
fi
bots="$1"
seconds="$2"
out="$3"
[[ "$bots" =~ ^[0-9]+$ ]] && [ "$bots" -ge 1 ] || { echo "$0: BOTS is '$bots': must be a whole number >= 1" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 2 ] || { echo "$0: SECONDS is '$seconds': must be a whole number >= 2" >&2; exit 2; }

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${SIGHTLINE_BIN:-$root/build/bin}"
server="$bin/sightline-server"
botbin="$bin/sightline-bots"
for exe in "$server" "$botbin"; do
  [ -x "$exe" ] || { echo "$0: $exe is missing: cmake --build build --target $(basename "$exe")" >&2; exit 2; }
done
mkdir -p "$out"
rm -f "$out/server.json" "$out/bots.json"

# Connections start over BOTS/200 seconds, at most a quarter of the run.
ramp="$(awk -v b="$bots" -v s="$seconds" 'BEGIN { r = b / 200; if (r > s / 4) r = s / 4; printf "%.2f", r }')"
# The server's own stop is only a backstop: it is stopped with SIGINT once the bots are done.
server_seconds=$((seconds + 60))

server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A free port: random in [20000, 60000), not answering; retried if the server cannot bind it.
port=""
for attempt in 1 2 3 4 5; do
  candidate=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
  listening "$candidate" && continue
  "$server" --host 127.0.0.1 --port "$candidate" --seconds "$server_seconds" --stats-json "$out/server.json" \
    >"$out/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    if listening "$candidate"; then port="$candidate"; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] && break
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  echo "$0: the server did not listen on port $candidate (attempt $attempt):" >&2
  tail -n 5 "$out/server.log" >&2 || true
done
[ -n "$port" ] || { echo "$0: no server after 5 attempts" >&2; exit 1; }
echo "load: sightline-server on 127.0.0.1:$port, $bots bots for $seconds s (ramp $ramp s), output in $out"

bots_rc=0
"$botbin" --host 127.0.0.1 --port "$port" --bots "$bots" --seconds "$seconds" --ramp-seconds "$ramp" \
  --json "$out/bots.json" >"$out/bots.txt" 2>&1 || bots_rc=$?
cat "$out/bots.txt"

kill -INT "$server_pid" 2>/dev/null || true
server_rc=""
for _ in $(seq 1 150); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    server_rc=0
    wait "$server_pid" || server_rc=$?
    break
  fi
  sleep 0.1
done
[ -n "$server_rc" ] || { echo "$0: the server (pid $server_pid) did not stop within 15 s of SIGINT" >&2; exit 1; }
server_pid=""

failed=0
[ "$bots_rc" -eq 0 ] || { echo "load: FAIL: sightline-bots exited $bots_rc"; failed=1; }
[ "$server_rc" -eq 0 ] || { echo "load: FAIL: sightline-server exited $server_rc"; tail -n 20 "$out/server.log"; failed=1; }
[ -s "$out/server.json" ] || { echo "load: FAIL: the server wrote no $out/server.json"; exit 1; }

# The server's figures and the checks, read with node (preinstalled, like the page's tests).
node - "$out/server.json" "$out/bots.json" <<'EOF' || failed=1
const fs = require('fs');
const [serverPath, botsPath] = process.argv.slice(2);
const server = JSON.parse(fs.readFileSync(serverPath, 'utf8'));
const bots = fs.existsSync(botsPath) ? JSON.parse(fs.readFileSync(botsPath, 'utf8')) : null;
const need = (o, key) => {
  if (typeof o[key] !== 'number') throw new Error(`${serverPath}: no number "${key}"`);
  return o[key];
};
const p99 = need(server, 'tick_ms_p99');
const warm = need(server, 'rss_kb_after_warmup');
const end = need(server, 'rss_kb_end');
const memoryLimit = warm * 1.10 + 4096;
console.log(`load: server tick p50 ${server.tick_ms_p50} ms, p99 ${p99} ms, max ${server.tick_ms_max} ms`);
console.log(`load: server RSS after warm-up ${warm} kB, at the end ${end} kB (limit ${memoryLimit.toFixed(0)} kB)`);
if (bots) {
  const b = bots.bytes_per_second_per_client;
  console.log(`load: per client ${b.mean.toFixed(0)} B/s (${b.min.toFixed(0)}..${b.max.toFixed(0)}), ` +
    `${bots.frames_per_second_per_client.mean.toFixed(1)} frames/s, ${bots.packets_per_second_per_client.mean.toFixed(1)} packets/s`);
  console.log(`load: delivery delay p50 ${bots.delay_ms.p50.toFixed(2)} ms, p99 ${bots.delay_ms.p99.toFixed(2)} ms, ` +
    `max ${bots.delay_ms.max.toFixed(2)} ms; anomalies ${bots.anomaly_count}; connections ${JSON.stringify(bots.connections)}`);
}
let ok = true;
if (!(p99 <= 50)) { console.log(`load: FAIL: tick p99 ${p99} ms > 50 ms`); ok = false; }
if (!(end <= memoryLimit)) { console.log(`load: FAIL: RSS grew from ${warm} kB to ${end} kB`); ok = false; }
process.exit(ok ? 0 : 1);
EOF

if [ "$failed" -ne 0 ]; then echo "load: FAIL"; exit 1; fi
echo "load: PASS"
