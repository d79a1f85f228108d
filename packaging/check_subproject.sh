#!/usr/bin/env bash
# Builds and runs the consumer of packaging/consumer with Sightline as a part of its build, through
# add_subdirectory and through FetchContent from the checkout, each with nothing but a compiler
# and CMake: the configure must not look for GoogleTest, Boost or anything else, nor build more
# than the library. No build type (no optimisation, no debug information), so that the library
# builds quickly. Usage: check_subproject.sh SRC_DIR
set -euo pipefail
src_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The FetchContent build makes the library shared (BUILD_SHARED_LIBS): the consumer then links
# against the public API as the shared library exports it, nothing else visible.
for how in subdirectory fetchcontent; do
  shared=OFF
  [ "$how" = fetchcontent ] && shared=ON
  cmake -S "$src_dir/packaging/consumer" -B "$work/$how" -DCMAKE_BUILD_TYPE= -DBUILD_SHARED_LIBS=$shared \
    -DSIGHTLINE_CONSUME="$how" -DSIGHTLINE_SOURCE_DIR="$src_dir" > "$work/$how.log" 2>&1 ||
    { cat "$work/$how.log"; exit 1; }
  cmake --build "$work/$how" -j2 > "$work/$how-build.log" 2>&1 || { cat "$work/$how-build.log"; exit 1; }
  "$work/$how/consumer"
  echo "$how consumer (BUILD_SHARED_LIBS=$shared): ok"
done
# What the shared library exports: Sightline's public names (and the C++ runtime's inline
# template statics), none of its internals.
library=$(find "$work/fetchcontent" -name 'libsightline.so.*' -type f | head -n 1)
internal=$(nm -DC --defined-only "$library" | grep -E ' (sightline::(WorldImpl|ReplicatorImpl|MirrorImpl|Grid|WorkerPool|TaskRunner|ClientPass)|sightline::simd)' || true)
if [ -n "$internal" ]; then
  echo "the shared library exports internals:" >&2
  echo "$internal" | head -n 20 >&2
  exit 1
fi
echo "shared library: exports $(nm -DC --defined-only "$library" | grep -c ' sightline::') sightline:: symbols, no internals"
