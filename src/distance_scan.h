// The hot loops of a client pass: which candidates of a few grid runs lie within a radius of a
// point (enter), how many do (the count that tells a pass whether anything can enter at all),
// and which members of a set lie beyond one (leave). Two implementations of each give exactly
// the same answer (the same float operations, in the same order, never fused); the World picks
// the widest the CPU runs at start-up.
#pragma once

#include <cstdint>

#include "sightline/handles.h"

namespace sightline {

/// Candidates [begin, end) of the arrays handed to a scan: one row's cells of the grid.
struct ScanRun {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

/// Writes to `found`, run by run and in increasing position within a run, ids[i] for every
/// position i of the runs with (xs[i] - ox)^2 + (zs[i] - oz)^2 <= r2, computed in float as
/// dx * dx + dz * dz (rounded after each operation), and stamp[ids[i]] != epoch (not already
/// handled this pass), and returns how many. `found` must hold the runs' total length + 8
/// values: a wide scan stores eight at a time, past the last one found (what lies after the
/// returned count is unspecified).
using DistanceScan = std::uint32_t (*)(const float* xs, const float* zs, const std::uint32_t* ids,
                                       const ScanRun* runs, std::uint32_t run_count, float ox, float oz,
                                       float r2, const std::uint32_t* stamp, std::uint32_t epoch,
                                       std::uint32_t* found) noexcept;

/// One candidate at a time. Every build has it.
std::uint32_t scan_within_scalar(const float* xs, const float* zs, const std::uint32_t* ids,
                                 const ScanRun* runs, std::uint32_t run_count, float ox, float oz, float r2,
                                 const std::uint32_t* stamp, std::uint32_t epoch,
                                 std::uint32_t* found) noexcept;

/// Eight candidates at a time with AVX2; null where the build has no AVX2 code (not x86-64).
extern const DistanceScan scan_within_avx2;

/// The AVX2 scan when this CPU has AVX2, else the scalar one.
[[nodiscard]] DistanceScan best_distance_scan() noexcept;

/// How many positions i of the runs have (xs[i] - ox)^2 + (zs[i] - oz)^2 <= r2, computed as
/// DistanceScan computes it: the hits a scan with no stamps would return, without reading ids or
/// writing anything.
using DistanceCount = std::uint32_t (*)(const float* xs, const float* zs, const ScanRun* runs,
                                        std::uint32_t run_count, float ox, float oz, float r2) noexcept;

/// One candidate at a time. Every build has it.
std::uint32_t count_within_scalar(const float* xs, const float* zs, const ScanRun* runs,
                                  std::uint32_t run_count, float ox, float oz, float r2) noexcept;

/// Eight candidates at a time with AVX2; null where the build has no AVX2 code.
extern const DistanceCount count_within_avx2;

/// The AVX2 count when this CPU has AVX2, else the scalar one.
[[nodiscard]] DistanceCount best_distance_count() noexcept;

/// The leave phase's hot loop, over a client's sorted set: for every i < count with
/// e = members[i].index and d2 = (xs[e] - ox)^2 + (zs[e] - oz)^2 (float, rounded as
/// DistanceScan), writes i to `gone` (in increasing order) when d2 > leave_r2 or e == viewer, and
/// returns how many went; `inside` gets how many of the others have d2 <= enter_r2 (with
/// enter_r2 <= leave_r2, the members an enter scan around the same point finds again). Writes
/// nothing else. `gone` must hold `count` values.
using LeaveTest = std::uint32_t (*)(const EntityId* members, std::uint32_t count, const float* xs,
                                    const float* zs, float ox, float oz, float leave_r2, float enter_r2,
                                    std::uint32_t viewer, std::uint32_t* gone,
                                    std::uint32_t& inside) noexcept;

/// One member at a time. Every build has it.
std::uint32_t leave_test_scalar(const EntityId* members, std::uint32_t count, const float* xs,
                                const float* zs, float ox, float oz, float leave_r2, float enter_r2,
                                std::uint32_t viewer, std::uint32_t* gone, std::uint32_t& inside) noexcept;

/// Eight members at a time (AVX2 gathers); null where the build has no AVX2 code.
extern const LeaveTest leave_test_avx2;

/// The AVX2 leave test when this CPU has AVX2, else the scalar one.
[[nodiscard]] LeaveTest best_leave_test() noexcept;

}  // namespace sightline
