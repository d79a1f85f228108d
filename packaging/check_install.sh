#!/usr/bin/env bash
# Installs the built library into a scratch prefix, then builds and runs a consumer against it
# twice: with find_package(sightline) and with pkg-config. Usage: check_install.sh BUILD_DIR SRC_DIR
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
# Move the prefix: both the CMake package and the .pc file must be relocatable.
mv "$work/prefix" "$work/moved"

cmake -S "$src_dir/packaging/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/moved" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
"$work/cmake-build/consumer"
echo "find_package consumer: ok"

pc_dir=$(dirname "$(find "$work/moved" -name sightline.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs sightline)
# shellcheck disable=SC2086
c++ "$src_dir/packaging/consumer/main.cpp" $flags -o "$work/pc-consumer"
"$work/pc-consumer"
echo "pkg-config consumer: ok"

# The C API's shared library, from a C program.
lib_dir=$(dirname "$(find "$work/moved" -name 'libsightline_c.so' | head -n 1)")
cc -std=c11 -Wall -Werror "$src_dir/packaging/consumer/main.c" -I"$work/moved/include" -L"$lib_dir" -lsightline_c \
  -Wl,-rpath,"$lib_dir" -o "$work/c-consumer"
"$work/c-consumer"
echo "C API consumer: ok"

# The tools this build made are installed; the installed server serves the installed page, found
# beside its own binary (the prefix was moved after installing: nothing points back into the
# source tree).
cached() { grep -E "^$1:BOOL=" "$build_dir/CMakeCache.txt" | cut -d= -f2; }
if [ "$(cached SIGHTLINE_BUILD_TOOLS)" = ON ]; then
  tools=(sim relay)
  [ "$(cached SIGHTLINE_BUILD_NETWORK)" = ON ] && tools+=(server bots)
  for tool in "${tools[@]}"; do
    [ -x "$work/moved/bin/sightline-$tool" ] || { echo "sightline-$tool is not installed" >&2; exit 1; }
  done
  echo "installed tools: ${tools[*]}"
fi
if [ -x "$work/moved/bin/sightline-server" ]; then
  # Marked, so a page served from the source tree instead would show.
  echo "<!-- the installed copy -->" >> "$work/moved/share/sightline/web/index.html"
  "$work/moved/bin/sightline-server" --port 0 --entities 20 --seconds 20 > "$work/server.out" 2>&1 &
  server=$!
  # "|| true": under set -e a failing command in the trap (the server already gone) would make the
  # script's exit status 1 after every check passed.
  trap 'kill $server 2> /dev/null || true; rm -rf "$work"' EXIT
  url=""
  for _ in $(seq 100); do
    url=$(grep -o 'http://[^ ]*' "$work/server.out" || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$work/server.out"; exit 1; }
  curl -fsS --retry 5 --retry-connrefused --retry-delay 1 "$url" > "$work/index.html" ||
    { cat "$work/server.out"; exit 1; }
  cmp "$work/index.html" "$work/moved/share/sightline/web/index.html" || { cat "$work/server.out"; exit 1; }
  kill $server
  wait $server 2> /dev/null || true
  echo "installed server: serves the installed page"
fi
