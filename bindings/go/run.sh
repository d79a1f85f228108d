#!/usr/bin/env bash
# Builds and runs the Go quickstart (cgo over libsightline_c) with Debian's go, offline, its
# build cache in OUT_DIR. Usage: run.sh LIB_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"
cd "$here"
GOPROXY=off GOFLAGS=-mod=mod GOCACHE="$2/go-cache" CGO_LDFLAGS="-L$1 -Wl,-rpath,$1" go run ./quickstart
