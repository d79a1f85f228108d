#!/usr/bin/env bash
# Load test over loopback: sightline-server on a free port, sightline-bots against it (through a
# lossy sightline-relay when LOSS is set), then the server stopped with SIGINT. Passes when the
# bots exit 0 (no anomaly, no failed or closed connection, every bot receiving tick frames at 95%
# of the tick rate or more (not asked under LOSS), the delivery delay p99 under 250 ms, and with
# CHECK_SETS every mirror found equal to the server's set whenever complete, within the run's
# last 2 s), the server's
# tick p99 is at most 50 ms, and its memory is flat after warm-up
# (rss_kb_end <= rss_kb_after_warmup * 1.10 + 4096).
#
# Usage: tools/bots/load.sh BOTS SECONDS OUTDIR
#   OUTDIR gets server.log, server.json (--stats-json), bots.txt (the table), bots.json, and with
#   LOSS relay.log and relay.json.
# Environment:
#   SIGHTLINE_BIN (default build/bin): where sightline-server, sightline-bots and sightline-relay are.
#   TRANSPORT: websocket (default) or enet (UDP, unreliable delivery with acks).
#   LOSS: a fraction in [0, 1): the bots reach the server through sightline-relay dropping that
#     share of datagrams each way, duplicating 1%, reordering 2%, delaying 2 ms + up to 2 ms
#     (seeded with SEED, default 1). ENet only (WebSocket runs over TCP).
#   CHECK_SETS=1: the server runs with --debug-view and the bots with --check-sets.
#   RADIUS_CHURN=1: every bot asks for an enter radius of its own, flipping between two values
#     with each move (sightline-bots --radius-churn; tools/bots/radius_churn.sh).
#   MOVE_HZ: the bots' moves a second (sightline-bots --move-hz; 10 by default).
#   SCALE_WORLD=1: the world grows with the bots, so that each sees about as many entities as
#     1,000 bots see in the server's default world (12 x 7.5 with 120 walkers): both sides scaled
#     by sqrt((BOTS + 120) / 1120), unless SERVER_ARGS gives --width or --height.
#   SERVER_ARGS: more sightline-server options, e.g. "--entities 20000 --width 100 --height 100".
# The server's memory after warm-up is read halfway between the end of the ramp and the end of
# the run (--warmup-seconds), once every bot's tables have grown to the sets it meets. The server
# runs its WebSockets on half the cores (--io-threads, unless SERVER_ARGS says): the bots share
# the machine.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BOTS SECONDS OUTDIR" >&2
  exit 2
fi
bots="$1"
seconds="$2"
out="$3"
transport="${TRANSPORT:-websocket}"
loss="${LOSS:-}"
seed="${SEED:-1}"
[[ "$bots" =~ ^[0-9]+$ ]] && [ "$bots" -ge 1 ] || { echo "$0: BOTS is '$bots': must be a whole number >= 1" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 2 ] || { echo "$0: SECONDS is '$seconds': must be a whole number >= 2" >&2; exit 2; }
[ "$transport" = websocket ] || [ "$transport" = enet ] || { echo "$0: TRANSPORT is '$transport': must be websocket or enet" >&2; exit 2; }
if [ -n "$loss" ]; then
  [ "$transport" = enet ] || { echo "$0: LOSS needs TRANSPORT=enet (the relay carries UDP)" >&2; exit 2; }
  [[ "$loss" =~ ^0(\.[0-9]+)?$ ]] || { echo "$0: LOSS is '$loss': must be a fraction in [0, 1)" >&2; exit 2; }
fi

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${SIGHTLINE_BIN:-$root/build/bin}"
server="$bin/sightline-server"
botbin="$bin/sightline-bots"
relay="$bin/sightline-relay"
for exe in "$server" "$botbin" "$relay"; do
  [ -x "$exe" ] || { echo "$0: $exe is missing: cmake --build build --target $(basename "$exe")" >&2; exit 2; }
done
mkdir -p "$out"
rm -f "$out/server.json" "$out/bots.json" "$out/relay.json" "$out/relay.log"

# Connections start over BOTS/200 seconds, at most a quarter of the run.
ramp="$(awk -v b="$bots" -v s="$seconds" 'BEGIN { r = b / 200; if (r > s / 4) r = s / 4; printf "%.2f", r }')"
# The server's and relay's own stops are only backstops: each is stopped with SIGINT once the
# bots are done.
backstop=$((seconds + 60))

server_pid=""
relay_pid=""
cleanup() {
  for pid in "$server_pid" "$relay_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
}
trap cleanup EXIT

# Starts a program that prints its port on its first stdout line (--port 0: any free port):
# sets started_pid and started_port; $2 is the sed expression that reads the port.
started_pid=""
started_port=""
start_on_free_port() {
  local log="$1" pattern="$2"
  shift 2
  "$@" >"$log" 2>&1 &
  started_pid=$!
  for _ in $(seq 1 100); do
    started_port="$(sed -n "$pattern" "$log" | head -n 1)"
    if [ -n "$started_port" ]; then return 0; fi
    kill -0 "$started_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$0: $(basename "$1") did not start:" >&2
  tail -n 5 "$log" >&2 || true
  return 1
}

warmup="$(awk -v r="$ramp" -v s="$seconds" 'BEGIN { printf "%.2f", r + (s - r) / 2 }')"
server_flags=(--transport "$transport" --host 127.0.0.1 --port 0 --seconds "$backstop" --warmup-seconds "$warmup"
              --stats-json "$out/server.json")
# SERVER_ARGS comes last, and the server takes each option once: what it names is left to it.
server_args=" ${SERVER_ARGS:-} "
if [ "${SCALE_WORLD:-0}" = 1 ] && [[ "$server_args" != *" --width"[\ =]* ]] && [[ "$server_args" != *" --height"[\ =]* ]]; then
  scale="$(awk -v b="$bots" 'BEGIN { printf "%.4f", sqrt((b + 120) / 1120) }')"
  server_flags+=(--width "$(awk -v k="$scale" 'BEGIN { printf "%.2f", 12 * k }')"
                 --height "$(awk -v k="$scale" 'BEGIN { printf "%.2f", 7.5 * k }')")
fi
if [[ "$server_args" != *" --io-threads"[\ =]* ]] && [ "$transport" = websocket ]; then
  cores="$(nproc 2>/dev/null || echo 2)"
  server_flags+=(--io-threads "$(( cores / 2 > 1 ? cores / 2 : 1 ))")
fi
bot_flags=(--transport "$transport")
# Under loss a handshake or a reliable frame may take seconds of ENet's resends, and tick frames
# travel unreliably: lost ones are not sent again, so the tick frame rate is not asked for.
[ -n "$loss" ] && bot_flags+=(--idle-timeout 30 --connect-timeout 30 --min-tick-share 0)
if [ "${CHECK_SETS:-0}" = 1 ]; then
  server_flags+=(--debug-view)
  bot_flags+=(--check-sets)
fi
churn="${RADIUS_CHURN:-0}"
[ "$churn" = 1 ] && bot_flags+=(--radius-churn)
[ -n "${MOVE_HZ:-}" ] && bot_flags+=(--move-hz "$MOVE_HZ")
# SERVER_ARGS is a list of words, split on blanks and never expanded as file names.
set -f
# shellcheck disable=SC2206
[ -n "${SERVER_ARGS:-}" ] && server_flags+=(${SERVER_ARGS})
set +f
start_on_free_port "$out/server.log" 's|^sightline-server: [a-z]*://[0-9.]*:\([0-9]*\).*|\1|p' \
  "$server" "${server_flags[@]}" || exit 1
server_pid=$started_pid
port=$started_port
target="$port"
what="sightline-server ($transport) on 127.0.0.1:$port"
if [ -n "$loss" ]; then
  start_on_free_port "$out/relay.log" 's|^sightline-relay: udp [0-9.]*:\([0-9]*\) .*|\1|p' \
    "$relay" --listen-port 0 --target-port "$port" --drop "$loss" --duplicate 0.01 --reorder 0.02 \
    --delay-ms 2 --jitter-ms 2 --seed "$seed" --seconds "$backstop" --stats-json "$out/relay.json" || exit 1
  relay_pid=$started_pid
  target=$started_port
  what="$what behind sightline-relay on port $target ($loss loss each way)"
fi
echo "load: $what, $bots bots for $seconds s (ramp $ramp s), output in $out"

# Stops a program with SIGINT and sets stopped_rc to its exit status, or fails after 15 s.
stopped_rc=""
stop_with_sigint() {
  local pid="$1"
  stopped_rc=""
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    if ! kill -0 "$pid" 2>/dev/null; then
      stopped_rc=0
      wait "$pid" || stopped_rc=$?
      break
    fi
    sleep 0.1
  done
  [ -n "$stopped_rc" ] || { echo "$0: pid $pid did not stop within 15 s of SIGINT" >&2; return 1; }
}

bots_rc=0
"$botbin" "${bot_flags[@]}" --host 127.0.0.1 --port "$target" --bots "$bots" --seconds "$seconds" \
  --ramp-seconds "$ramp" --json "$out/bots.json" >"$out/bots.txt" 2>&1 || bots_rc=$?
cat "$out/bots.txt"

stop_with_sigint "$server_pid" || exit 1
server_rc="$stopped_rc"
server_pid=""
relay_rc=0
if [ -n "$relay_pid" ]; then
  stop_with_sigint "$relay_pid" || exit 1
  relay_rc="$stopped_rc"
  relay_pid=""
fi

failed=0
[ "$relay_rc" -eq 0 ] || { echo "load: FAIL: sightline-relay exited $relay_rc"; tail -n 20 "$out/relay.log"; failed=1; }
[ "$bots_rc" -eq 0 ] || { echo "load: FAIL: sightline-bots exited $bots_rc"; failed=1; }
[ "$server_rc" -eq 0 ] || { echo "load: FAIL: sightline-server exited $server_rc"; tail -n 20 "$out/server.log"; failed=1; }
[ -s "$out/server.json" ] || { echo "load: FAIL: the server wrote no $out/server.json"; exit 1; }

# The server's figures and the checks, read with node (preinstalled, like the page's tests).
node - "$out/server.json" "$out/bots.json" "$out/relay.json" "$churn" <<'EOF' || failed=1
const fs = require('fs');
const [serverPath, botsPath, relayPath, churn] = process.argv.slice(2);
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
if (server.io_threads > 0) {
  console.log(`load: of which the Worlds' ticks p50 ${server.world_ms_p50.toFixed(2)} ms, p99 ${server.world_ms_p99.toFixed(2)} ms; ` +
              `the sends p50 ${server.send_ms_p50.toFixed(2)} ms, p99 ${server.send_ms_p99.toFixed(2)} ms; ` +
              `${server.io_threads} I/O threads used ${server.io_cpu_seconds.toFixed(1)} s of CPU`);
}
console.log(`load: server RSS after warm-up ${warm} kB, at the end ${end} kB (limit ${memoryLimit.toFixed(0)} kB)`);
if (typeof server.heap_kb_after_warmup === 'number' && typeof server.heap_kb_end === 'number') {
  console.log(`load: server heap in use after warm-up ${server.heap_kb_after_warmup} kB, at the end ${server.heap_kb_end} kB ` +
              `(the connections closed; RSS keeps what the allocator holds)`);
}
if (bots) {
  const b = bots.bytes_per_second_per_client;
  console.log(`load: per client ${b.mean.toFixed(0)} B/s (${b.min.toFixed(0)}..${b.max.toFixed(0)}), ` +
    `${bots.frames_per_second_per_client.mean.toFixed(1)} frames/s, ${bots.packets_per_second_per_client.mean.toFixed(1)} packets/s`);
  console.log(`load: delivery delay p50 ${bots.delay_ms.p50.toFixed(2)} ms, p99 ${bots.delay_ms.p99.toFixed(2)} ms, ` +
    `max ${bots.delay_ms.max.toFixed(2)} ms; anomalies ${bots.anomaly_count}; connections ${JSON.stringify(bots.connections)}`);
}
if (fs.existsSync(relayPath)) {
  const relay = JSON.parse(fs.readFileSync(relayPath, 'utf8'));
  for (const way of ['client_to_server', 'server_to_client']) {
    const d = relay[way];
    console.log(`load: relay ${way.replaceAll('_', ' ')}: ${d.received} datagrams, ${d.dropped} dropped ` +
      `(${(100 * d.dropped / Math.max(1, d.received)).toFixed(1)}%), ${d.duplicated} duplicated, ${d.reordered} reordered`);
  }
}
if (bots && bots.totals.set_checks > 0) {
  console.log(`load: ${bots.totals.set_checks} complete mirrors compared with the server's set, ` +
    `${bots.anomalies.set_mismatch} differed; ${bots.anomalies.not_converged} bots not converged`);
}
let ok = true;
if (!(p99 <= 50)) { console.log(`load: FAIL: tick p99 ${p99} ms > 50 ms`); ok = false; }
if (!(end <= memoryLimit)) { console.log(`load: FAIL: RSS grew from ${warm} kB to ${end} kB`); ok = false; }
if (churn === '1') console.log(`load: ${bots ? bots.totals.radius_changes : 0} radius changes sent`);
process.exit(ok ? 0 : 1);
EOF

if [ "$failed" -ne 0 ]; then echo "load: FAIL"; exit 1; fi
echo "load: PASS"
