#!/bin/sh
# Runs the ENet example pair: the server on a free port, then the client against it. Passes when
# both exit 0.
#   enet_pair.sh SERVER CLIENT
set -u
server=$1
client=$2
out=$(mktemp)
server_pid=
trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; fi; rm -f "$out"' EXIT
trap 'exit 1' INT TERM

"$server" --port 0 >"$out" &
server_pid=$!
port=
tries=0
while [ -z "$port" ]; do
  if [ "$tries" -ge 100 ] || ! kill -0 "$server_pid" 2>/dev/null; then
    echo "enet_pair.sh: the server gave no port within 10 s" >&2
    cat "$out"
    exit 1
  fi
  sleep 0.1
  tries=$((tries + 1))
  port=$(sed -n '1s/^enet-server-example: port \([0-9][0-9]*\)$/\1/p' "$out")
done

"$client" --port "$port"
client_status=$?
wait "$server_pid"
server_status=$?
server_pid=
cat "$out"
echo "enet_pair.sh: server exited $server_status, client $client_status"
[ "$server_status" -eq 0 ] && [ "$client_status" -eq 0 ]
