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
for how in subdirectory fetchcontent; do
  cmake -S "$src_dir/packaging/consumer" -B "$work/$how" -DCMAKE_BUILD_TYPE= \
    -DSIGHTLINE_CONSUME="$how" -DSIGHTLINE_SOURCE_DIR="$src_dir" > "$work/$how.log" 2>&1 ||
    { cat "$work/$how.log"; exit 1; }
  cmake --build "$work/$how" -j2 > "$work/$how-build.log" 2>&1 || { cat "$work/$how-build.log"; exit 1; }
  "$work/$how/consumer"
  echo "$how consumer: ok"
done
