// The hot loop of the enter phase: which candidates of a few grid runs lie within a radius of a
// point. Two implementations give exactly the same answer (the same float operations, in the
// same order, never fused); the World picks the widest the CPU runs at start-up.
#pragma once

#include <cstdint>

namespace sightline {

/// Candidates [begin, end) of the arrays handed to a scan: one row's cells of the grid.
struct ScanRun {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

/// Writes to `found`, run by run and in increasing position within a run, ids[i] for every
/// position i of the runs with (xs[i] - ox)^2 + (zs[i] - oz)^2 <= r2, computed in float as
/// dx * dx + dz * dz (rounded after each operation), and returns how many. `found` must hold
/// the runs' total length + 8 values: a wide scan stores eight at a time, past the last one
/// found (what lies after the returned count is unspecified).
using DistanceScan = std::uint32_t (*)(const float* xs, const float* zs, const std::uint32_t* ids,
                                       const ScanRun* runs, std::uint32_t run_count, float ox, float oz,
                                       float r2, std::uint32_t* found) noexcept;

/// One candidate at a time. Every build has it.
std::uint32_t scan_within_scalar(const float* xs, const float* zs, const std::uint32_t* ids, const ScanRun* runs,
                                 std::uint32_t run_count, float ox, float oz, float r2,
                                 std::uint32_t* found) noexcept;

/// Eight candidates at a time with AVX2; null where the build has no AVX2 code (not x86-64).
extern const DistanceScan scan_within_avx2;

/// The AVX2 scan when this CPU has AVX2, else the scalar one.
[[nodiscard]] DistanceScan best_distance_scan() noexcept;

}  // namespace sightline
