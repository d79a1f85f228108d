// The one mapping from a coordinate to a cell index, shared by every uniform grid.
#pragma once

#include <cstdint>

namespace sightline {

/// The cell along one axis holding v, for cells of 1 / inv_cell_size from `origin`, `count` of
/// them (`last` is count - 1 as a float). Clamping in float before the cast keeps huge or
/// negative offsets defined and the result monotonic in v: the property that makes a grid's
/// range queries exact.
[[nodiscard]] inline std::uint32_t clamped_cell(float v, float origin, float inv_cell_size, std::uint32_t count,
                                                float last) noexcept {
  const float t = (v - origin) * inv_cell_size;
  if (!(t > 0.0f)) return 0;
  if (t >= last) return count - 1;
  return static_cast<std::uint32_t>(t);
}

}  // namespace sightline
