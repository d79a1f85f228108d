#!/usr/bin/env bash
# Builds and runs the consumer of packaging/consumer with Sightline as a part of its build, through
# add_subdirectory and through FetchContent from the checkout, each with nothing but a compiler
# and CMake: the configure must not look for GoogleTest, Boost or anything else, nor build more
# than the library. No build type (no optimisation, no debug information) and a unity build
# (SIGHTLINE_UNITY_BUILD: 26 s here against 57 s file by file, which make test's release build
# already does), so that the library builds quickly. Usage: check_subproject.sh SRC_DIR
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
    -DSIGHTLINE_CONSUME="$how" -DSIGHTLINE_SOURCE_DIR="$src_dir" -DSIGHTLINE_UNITY_BUILD=ON > "$work/$how.log" 2>&1 ||
    { cat "$work/$how.log"; exit 1; }
  cmake --build "$work/$how" -j2 > "$work/$how-build.log" 2>&1 || { cat "$work/$how-build.log"; exit 1; }
  "$work/$how/consumer"
  echo "$how consumer (BUILD_SHARED_LIBS=$shared): ok"
done
# What the shared library exports: Sightline's public names (and the C++ runtime's inline
# template statics), none of its internals.
library=$(find "$work/fetchcontent" -name 'libsightline.so.*' -type f | head -n 1)
[ -f "$library" ] || { echo "no libsightline.so in the shared build" >&2; exit 1; }
symbols=$(nm -DC --defined-only "$library")
public=$(echo "$symbols" | grep -c ' sightline::' || true)
[ "$public" -gt 0 ] || { echo "the shared library exports no sightline:: symbol" >&2; exit 1; }
# Every exported sightline:: name belongs to a public class or function (include/sightline/).
internal=$(echo "$symbols" | grep ' sightline::' |
  grep -vE ' sightline::(World|Replay|Replicator|RegionMap|region_blocks|ShardFrame|ShardNode|encode_shard_frame|decode_shard_frame|ClientMirror|MirrorListener|PacketWriter|Stream|QuantizedRange|detail::fail_on_empty_result|default_[a-z_]*|validate|anomaly_kind_name|rule_name|error_code_name|spawn_reason_name|despawn_reason_name|decode_packet|decode_ack|encode_ack|encode_update_record|encode_delta_update_record|write_delta_runs|apply_delta_runs|[a-z_]*_record_bytes|operator==)([^A-Za-z0-9_]|$)' || true)
if [ -n "$internal" ]; then
  echo "the shared library exports internals:" >&2
  echo "$internal" | head -n 20 >&2
  exit 1
fi
echo "shared library: exports $public sightline:: symbols, all public"
