#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those that are missing.
set -euo pipefail

# libboost1.81-dev: the demo server and bots (Beast); Boost 1.74 breaks with g++ 12 coroutines.
# libenet-dev: their UDP transport (--transport enet); libspdlog-dev: the server's log.
# chromium: the page's browser test. node and npm run it (playwright-core, installed by npm ci).
# python3-cffi, python3-numpy, golang-go, mono-mcs and mono-runtime: the bindings' quickstarts
# (Debian's /usr/bin/python3, go, mcs and mono); emscripten: the C API as WebAssembly for Node.
needed=(cmake g++ make pkg-config libgtest-dev libgmock-dev libbenchmark-dev
        libcli11-dev libfmt-dev nlohmann-json3-dev clang-14 libclang-rt-14-dev librapidcheck-dev
        libboost1.81-dev libenet-dev libspdlog-dev chromium gnuplot-nox clang-format-14
        python3-cffi python3-numpy golang-go mono-mcs mono-runtime emscripten)
missing=()
for pkg in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node.js may come from Debian (nodejs, npm) or elsewhere: only its commands matter.
command -v node > /dev/null || missing+=(nodejs)
command -v npm > /dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
