#include "grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sightline {

void Grid::build(std::span<const float> xs, std::span<const float> zs,
                 std::span<const std::uint8_t> alive, float min_cell_size,
                 std::uint32_t max_cells) {
  const std::size_t slots = alive.size();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float min_x = kInf, max_x = -kInf, min_z = kInf, max_z = -kInf;
  std::uint32_t live = 0;
  for (std::size_t i = 0; i < slots; ++i) live += alive[i] != 0;
  // Usually every slot is binned: then no pass needs to look at `alive`, and the loops stay
  // free of branches.
  const bool all = live == slots;
  for (std::size_t i = 0; i < slots; ++i) {
    if (!all && !alive[i]) continue;
    min_x = std::min(min_x, xs[i]);
    max_x = std::max(max_x, xs[i]);
    min_z = std::min(min_z, zs[i]);
    max_z = std::max(max_z, zs[i]);
  }
  if (live == 0) min_x = max_x = min_z = max_z = 0.0f;

  // Size the grid in double: extents up to 2 * kMaxCoordinate stay exact enough, and the cell
  // count never overflows before it is capped.
  double cell = min_cell_size;
  const double extent_x = static_cast<double>(max_x) - min_x;
  const double extent_z = static_cast<double>(max_z) - min_z;
  auto cells_for = [](double extent, double size) { return std::floor(extent / size) + 1.0; };
  double nx = cells_for(extent_x, cell);
  double nz = cells_for(extent_z, cell);
  if (nx * nz > max_cells) {
    cell *= std::sqrt(nx * nz / max_cells);
    nx = cells_for(extent_x, cell);
    nz = cells_for(extent_z, cell);
    while (nx * nz > max_cells) {
      cell *= 1.0625;
      nx = cells_for(extent_x, cell);
      nz = cells_for(extent_z, cell);
    }
  }
  origin_x_ = min_x;
  origin_z_ = min_z;
  cell_size_ = static_cast<float>(cell);
  if (cell_size_ < min_cell_size) cell_size_ = min_cell_size;
  inv_cell_size_ = 1.0f / cell_size_;
  cells_x_ = static_cast<std::uint32_t>(nx);
  cells_z_ = static_cast<std::uint32_t>(nz);
  last_x_ = static_cast<float>(cells_x_ - 1);
  last_z_ = static_cast<float>(cells_z_ - 1);
  const std::uint32_t cells = cells_x_ * cells_z_;

  cell_of_.resize(slots);
  cell_start_.assign(static_cast<std::size_t>(cells) + 1, 0);
  for (std::size_t i = 0; i < slots; ++i) {
    if (!all && !alive[i]) {
      cell_of_[i] = kNotBinned;
      continue;
    }
    const std::uint32_t c = bin_axis(zs[i], origin_z_, cells_z_, last_z_) * cells_x_ +
                            bin_axis(xs[i], origin_x_, cells_x_, last_x_);
    cell_of_[i] = c;
    ++cell_start_[c + 1];
  }
  for (std::uint32_t c = 0; c < cells; ++c) cell_start_[c + 1] += cell_start_[c];

  if (items_.capacity() < slots) {
    items_.reserve(slots);
    item_x_.reserve(slots);
    item_z_.reserve(slots);
  }
  items_.resize(live);
  item_x_.resize(live);
  item_z_.resize(live);
  // Scatter using cell_start_ as running cursors, then shift back: keeps one prefix array.
  for (std::size_t i = 0; i < slots; ++i) {
    const std::uint32_t c = cell_of_[i];
    if (!all && c == kNotBinned) continue;
    const std::uint32_t at = cell_start_[c]++;
    items_[at] = static_cast<std::uint32_t>(i);
    item_x_[at] = xs[i];
    item_z_[at] = zs[i];
  }
  for (std::uint32_t c = cells; c > 0; --c) cell_start_[c] = cell_start_[c - 1];
  cell_start_[0] = 0;
}

Grid::Range Grid::cell_range(float x, float z, float radius) const noexcept {
  const float padded = radius * 1.0001f;
  return Range{axis_cell(x - padded, origin_x_, cells_x_, last_x_),
               axis_cell(x + padded, origin_x_, cells_x_, last_x_),
               axis_cell(z - padded, origin_z_, cells_z_, last_z_),
               axis_cell(z + padded, origin_z_, cells_z_, last_z_)};
}

}  // namespace sightline
