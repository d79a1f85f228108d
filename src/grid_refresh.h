// The incremental grid build's hot loop: every item of the last build gets its entity's position
// again, and its cell is recomputed and compared with the one it was in. Two implementations give
// exactly the same answer; the grid picks the widest the CPU runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sightline {

/// The cell of a position as the grid's fast binning computes it: clamped to the grid at both
/// ends (an outlier beyond the grid's box lands in a border cell), then a cast, the row times
/// cells_x plus the column. clamped_cell()'s result, in the order SIMD computes it.
struct CellBinning {
  float origin_x, origin_z, inv_cell_size, last_x, last_z;  // last_*: the last cell's index as a float
  std::uint32_t cells_x;
  [[nodiscard]] std::uint32_t cell(float x, float z) const noexcept {
    const float tz = std::min(std::max((z - origin_z) * inv_cell_size, 0.0f), last_z);
    const float tx = std::min(std::max((x - origin_x) * inv_cell_size, 0.0f), last_x);
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(tz)) * cells_x +
           static_cast<std::uint32_t>(static_cast<std::int32_t>(tx));
  }
};

/// An item that changed cell: its position among the items and its new cell.
struct CellMove {
  std::uint32_t at;
  std::uint32_t cell;
};

/// For every k < count with e = items[k]: writes item_x[k] = x[e] and item_z[k] = z[e], and, in
/// increasing k, {k, cell} to `moved` when binning.cell(x[e], z[e]) != item_cell[k]. Returns how
/// many moved, or kTooManyMoved (having written item_x and item_z up to where it stopped) once
/// more than max_moved would. `moved` must hold max_moved values.
using GridRefresh = std::size_t (*)(const CellBinning& binning, const std::uint32_t* items, const float* x,
                                    const float* z, float* item_x, float* item_z,
                                    const std::uint32_t* item_cell, std::size_t count, CellMove* moved,
                                    std::size_t max_moved) noexcept;

inline constexpr std::size_t kTooManyMoved = SIZE_MAX;

/// One item at a time. Every build has it.
std::size_t grid_refresh_scalar(const CellBinning& binning, const std::uint32_t* items, const float* x,
                                const float* z, float* item_x, float* item_z, const std::uint32_t* item_cell,
                                std::size_t count, CellMove* moved, std::size_t max_moved) noexcept;

/// Eight items at a time (AVX2 gathers of the positions); null where the build has no AVX2 code.
extern const GridRefresh grid_refresh_avx2;

/// The AVX2 refresh when this CPU has AVX2, else the scalar one.
[[nodiscard]] GridRefresh best_grid_refresh() noexcept;

}  // namespace sightline
