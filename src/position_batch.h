// The check of a set_positions batch before anything is written: every handle live and every
// coordinate within kMaxCoordinate. Two implementations give the same answer; the World picks the
// widest the CPU runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sightline/handles.h"

namespace sightline {

/// The first i < count whose entry fails: entities[i] null, its index not below `slots`, or
/// live_generation[index] != its generation (live_generation holds a slot's generation while it
/// is alive and 0 once destroyed), or |xs[i]| or |zs[i]| not <= `max_coordinate` (NaN fails).
/// `count` when all pass; then `*contiguous` says whether entities[i].index ==
/// entities[0].index + i for every i (the caller may copy the coordinates whole).
using PositionBatchCheck = std::size_t (*)(const EntityId* entities, const float* xs, const float* zs,
                                           std::size_t count, const std::uint32_t* live_generation,
                                           std::size_t slots, float max_coordinate,
                                           bool* contiguous) noexcept;

/// One entry at a time. Every build has it.
std::size_t first_bad_position_scalar(const EntityId* entities, const float* xs, const float* zs,
                                      std::size_t count, const std::uint32_t* live_generation,
                                      std::size_t slots, float max_coordinate, bool* contiguous) noexcept;

/// Eight entries at a time (an AVX2 gather of the generations); null where the build has no AVX2
/// code.
extern const PositionBatchCheck first_bad_position_avx2;

/// The AVX2 check when this CPU has AVX2, else the scalar one.
[[nodiscard]] PositionBatchCheck best_position_batch_check() noexcept;

}  // namespace sightline
