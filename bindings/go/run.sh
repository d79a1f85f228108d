#!/usr/bin/env bash
# Builds and runs the Go quickstart (cgo over libsightline_c) with Debian's go, offline, its
# build cache in OUT_DIR. Usage: run.sh LIB_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
cd "$here"
GOPROXY=off GOFLAGS=-mod=mod GOCACHE="$out/go-cache" CGO_LDFLAGS="-L$lib -Wl,-rpath,$lib" go run ./quickstart
