#include "grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sightline {

void Grid::build(std::span<const float> xs, std::span<const float> zs,
                 std::span<const std::uint8_t> alive, float min_cell_size,
                 std::uint32_t max_cells) {
  const std::size_t slots = alive.size();
  const float* const x = xs.data();
  const float* const z = zs.data();
  const std::uint8_t* const binned = alive.data();
  std::uint32_t live = 0;
  for (std::size_t i = 0; i < slots; ++i) live += binned[i] != 0;
  // Usually every slot is binned: then no pass needs to look at `alive`, and the loops stay
  // free of branches.
  const bool all = live == slots;

  // The bounding box, in four independent lanes so the compares do not wait on one another.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lo_x[4] = {kInf, kInf, kInf, kInf}, hi_x[4] = {-kInf, -kInf, -kInf, -kInf};
  float lo_z[4] = {kInf, kInf, kInf, kInf}, hi_z[4] = {-kInf, -kInf, -kInf, -kInf};
  std::size_t i = 0;
  if (all) {
#if defined(__SSE2__)
    // GCC keeps the lane loop below scalar (13 instructions an entity by callgrind); minps/maxps
    // take 2. Positions are finite (checked on input), so min and max need no NaN rule.
    __m128 lx = _mm_loadu_ps(lo_x), hx = _mm_loadu_ps(hi_x), lz = _mm_loadu_ps(lo_z), hz = _mm_loadu_ps(hi_z);
    for (; i + 4 <= slots; i += 4) {
      const __m128 vx = _mm_loadu_ps(x + i);
      const __m128 vz = _mm_loadu_ps(z + i);
      lx = _mm_min_ps(lx, vx);
      hx = _mm_max_ps(hx, vx);
      lz = _mm_min_ps(lz, vz);
      hz = _mm_max_ps(hz, vz);
    }
    _mm_storeu_ps(lo_x, lx);
    _mm_storeu_ps(hi_x, hx);
    _mm_storeu_ps(lo_z, lz);
    _mm_storeu_ps(hi_z, hz);
#else
    for (; i + 4 <= slots; i += 4) {
      for (std::size_t l = 0; l < 4; ++l) {
        lo_x[l] = x[i + l] < lo_x[l] ? x[i + l] : lo_x[l];
        hi_x[l] = x[i + l] > hi_x[l] ? x[i + l] : hi_x[l];
        lo_z[l] = z[i + l] < lo_z[l] ? z[i + l] : lo_z[l];
        hi_z[l] = z[i + l] > hi_z[l] ? z[i + l] : hi_z[l];
      }
    }
#endif
  }
  for (; i < slots; ++i) {
    if (!binned[i]) continue;
    lo_x[0] = std::min(lo_x[0], x[i]);
    hi_x[0] = std::max(hi_x[0], x[i]);
    lo_z[0] = std::min(lo_z[0], z[i]);
    hi_z[0] = std::max(hi_z[0], z[i]);
  }
  float min_x = std::min(std::min(lo_x[0], lo_x[1]), std::min(lo_x[2], lo_x[3]));
  float max_x = std::max(std::max(hi_x[0], hi_x[1]), std::max(hi_x[2], hi_x[3]));
  float min_z = std::min(std::min(lo_z[0], lo_z[1]), std::min(lo_z[2], lo_z[3]));
  float max_z = std::max(std::max(hi_z[0], hi_z[1]), std::max(hi_z[2], hi_z[3]));
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
  std::uint32_t* const cell_of = cell_of_.data();
  std::uint32_t* const start = cell_start_.data();
  // Locals, not members: a store into start[] could otherwise alias them and force reloads.
  const float ox = origin_x_, oz = origin_z_, inv = inv_cell_size_, last_x = last_x_, last_z = last_z_;
  const std::uint32_t cx = cells_x_, cz = cells_z_;
  constexpr std::uint32_t kExactAxis = 1u << 24;  // every cell index a float holds exactly
  if (all && cx <= kExactAxis && cz <= kExactAxis) {
    // bin_axis() as a clamp then a cast (equal for t >= 0), in a loop of its own that vectorises;
    // the counts follow in a second, short loop.
    for (i = 0; i < slots; ++i) {
      const float tz = std::min((z[i] - oz) * inv, last_z);
      const float tx = std::min((x[i] - ox) * inv, last_x);
      cell_of[i] = static_cast<std::uint32_t>(static_cast<std::int32_t>(tz)) * cx +
                   static_cast<std::uint32_t>(static_cast<std::int32_t>(tx));
    }
    for (i = 0; i < slots; ++i) ++start[cell_of[i] + 1];
  } else {
    for (i = 0; i < slots; ++i) {
      if (!all && !binned[i]) {
        cell_of[i] = kNotBinned;
        continue;
      }
      const std::uint32_t c = bin_axis(z[i], oz, inv, cz, last_z) * cx + bin_axis(x[i], ox, inv, cx, last_x);
      cell_of[i] = c;
      ++start[c + 1];
    }
  }
  for (std::uint32_t c = 0; c < cells; ++c) start[c + 1] += start[c];

  // Last tick's items, in cell order, are this tick's order but for the few that changed cell,
  // so scattering in that order writes each cell's run nearly front to back.
  const bool keep_order = all && kept_all_ && items_.size() == slots;
  items_.swap(previous_items_);
  if (items_.capacity() < slots) {
    items_.reserve(slots);
    item_x_.reserve(slots);
    item_z_.reserve(slots);
  }
  items_.resize(live);
  item_x_.resize(live);
  item_z_.resize(live);
  std::uint32_t* const items = items_.data();
  float* const item_x = item_x_.data();
  float* const item_z = item_z_.data();
  // Scatter using cell_start_ as running cursors, then shift back: keeps one prefix array.
  auto place = [&](std::uint32_t e) __attribute__((always_inline)) {
    const std::uint32_t at = start[cell_of[e]]++;
    items[at] = e;
    item_x[at] = x[e];
    item_z[at] = z[e];
  };
  if (keep_order) {
    const std::uint32_t* const order = previous_items_.data();
    for (i = 0; i < slots; ++i) place(order[i]);
  } else {
    for (i = 0; i < slots; ++i) {
      if (all || cell_of[i] != kNotBinned) place(static_cast<std::uint32_t>(i));
    }
  }
  for (std::uint32_t c = cells; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;
  kept_all_ = all;
}

}  // namespace sightline
