// The hot loop of the enter phase: which entities of one grid run lie within a radius of a point.
// Two implementations give exactly the same answer (the same float operations, in the same order,
// never fused); the World picks the widest the CPU runs at start-up.
#pragma once

#include <cstdint>

namespace sightline {

/// Writes to `hits`, in increasing order, every offset i in [0, count) with
/// (xs[i] - ox)^2 + (zs[i] - oz)^2 <= r2, computed in float as dx * dx + dz * dz (rounded after
/// each operation), and returns how many. `hits` must hold `count + 8` values: a wide scan
/// stores eight offsets at a time, past the last hit (what lies after the returned count is
/// unspecified).
using DistanceScan = std::uint32_t (*)(const float* xs, const float* zs, std::uint32_t count, float ox, float oz,
                                       float r2, std::uint32_t* hits) noexcept;

/// One float at a time. Every build has it.
std::uint32_t scan_within_scalar(const float* xs, const float* zs, std::uint32_t count, float ox, float oz, float r2,
                                 std::uint32_t* hits) noexcept;

/// Eight floats at a time with AVX2; null where the build has no AVX2 code (not x86-64).
extern const DistanceScan scan_within_avx2;

/// The AVX2 scan when this CPU has AVX2, else the scalar one.
[[nodiscard]] DistanceScan best_distance_scan() noexcept;

}  // namespace sightline
