// The one mapping from a coordinate to a cell index, shared by every uniform grid.
#pragma once

#include <cstdint>

namespace sightline {

/// The cell along one axis holding v, for cells of 1 / inv_cell_size from `origin`, `last` + 1
/// of them (`last` a whole number below 2^24, so it converts exactly). Clamping in float before
/// the cast keeps huge or negative offsets defined and the result monotonic in v: the property
/// that makes a grid's range queries exact.
[[nodiscard]] inline std::uint32_t clamped_cell(float v, float origin, float inv_cell_size,
                                                float last) noexcept {
  // Two selects (minss / maxss) rather than branches: a query's four calls cost no misprediction.
  // NaN compares false and lands in cell 0.
  float t = (v - origin) * inv_cell_size;
  t = t > 0.0f ? t : 0.0f;
  t = t < last ? t : last;
  return static_cast<std::uint32_t>(t);
}

}  // namespace sightline
