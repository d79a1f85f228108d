#include "occluder_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sightline {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Sign of the exact sum of six doubles. Shewchuk's grow-expansion with zero elimination: every
// two-sum is exact (no overflow is possible here), the components stay non-overlapping and
// ordered by magnitude, so the last one carries the sign.
int exact_sum_sign(const double (&terms)[6]) noexcept {
  double expansion[6];
  int size = 0;
  for (const double term : terms) {
    double sum = term;
    int kept = 0;
    for (int i = 0; i < size; ++i) {
      const double part = expansion[i];
      const double total = sum + part;
      const double part_virtual = total - sum;
      const double sum_virtual = total - part_virtual;
      const double tail = (sum - sum_virtual) + (part - part_virtual);
      sum = total;
      if (tail != 0.0) expansion[kept++] = tail;
    }
    if (sum != 0.0) expansion[kept++] = sum;
    size = kept;
  }
  if (size == 0) return 0;
  return expansion[size - 1] > 0.0 ? 1 : -1;
}

// Sign of the orientation of c against the directed line a->b: +1 counter-clockwise (left), -1
// clockwise, 0 collinear. Exact for all finite float inputs:
// - a float is a double, and a product of two floats is exact in double (48 significant bits,
//   exponents far inside double's range, subnormals included);
// - a difference of two floats is not exact in double (1e15 - 1e-30), so the fast path
//   (differences, two products, one subtraction) is rounded. Its result is used only when
//   Shewchuk's bound (ccwerrboundA, valid for double inputs, hence float inputs) proves the sign;
// - otherwise the determinant is expanded into six float products, each exact, and their sum's
//   sign is found exactly.
// The result is the exact sign, so it does not depend on compiler, platform or FMA contraction
// (each product is its own statement, which keeps contraction out of the exact path anyway).
int orientation(float ax, float az, float bx, float bz, float cx, float cz) noexcept {
  const double left = (static_cast<double>(ax) - cx) * (static_cast<double>(bz) - cz);
  const double right = (static_cast<double>(az) - cz) * (static_cast<double>(bx) - cx);
  const double det = left - right;
  double magnitude;
  if (left > 0.0) {
    if (right <= 0.0) return det > 0.0 ? 1 : (det < 0.0 ? -1 : 0);
    magnitude = left + right;
  } else if (left < 0.0) {
    if (right >= 0.0) return det > 0.0 ? 1 : (det < 0.0 ? -1 : 0);
    magnitude = -left - right;
  } else {
    return right < 0.0 ? 1 : (right > 0.0 ? -1 : 0);
  }
  constexpr double kEpsilon = 0x1.0p-53;
  constexpr double kBound = (3.0 + 16.0 * kEpsilon) * kEpsilon;
  const double bound = kBound * magnitude;
  if (det >= bound) return 1;
  if (-det >= bound) return -1;

  const double ax_bz = static_cast<double>(ax) * bz;
  const double ax_cz = static_cast<double>(ax) * cz;
  const double cx_bz = static_cast<double>(cx) * bz;
  const double az_bx = static_cast<double>(az) * bx;
  const double az_cx = static_cast<double>(az) * cx;
  const double bx_cz = static_cast<double>(bx) * cz;
  const double terms[6] = {ax_bz, -ax_cz, -cx_bz, -az_bx, az_cx, bx_cz};
  return exact_sum_sign(terms);
}

// The one predicate behind both the grid and the brute force: closed segments a-b and the wall
// share a point. The box test is exact (float compares) and is what decides the collinear case.
bool touches(const WallSegment& wall, float ax, float az, float bx, float bz) noexcept {
  if (std::max(ax, bx) < std::min(wall.x0, wall.x1) || std::max(wall.x0, wall.x1) < std::min(ax, bx) ||
      std::max(az, bz) < std::min(wall.z0, wall.z1) || std::max(wall.z0, wall.z1) < std::min(az, bz)) {
    return false;
  }
  const int wall_start = orientation(ax, az, bx, bz, wall.x0, wall.z0);
  const int wall_end = orientation(ax, az, bx, bz, wall.x1, wall.z1);
  if (wall_start * wall_end > 0) return false;
  const int ray_start = orientation(wall.x0, wall.z0, wall.x1, wall.z1, ax, az);
  const int ray_end = orientation(wall.x0, wall.z0, wall.x1, wall.z1, bx, bz);
  if (ray_start * ray_end > 0) return false;
  // Either the segments cross or touch, or all four orientations are 0: then all points are
  // collinear (a zero-length segment included) and overlapping boxes mean a shared point.
  return true;
}

// The disc's sample points, in the order they are tried; both sees() versions use this, so they
// test the very same float rays.
template <class Blocked>
bool any_sample_visible(float ox, float oz, float cx, float cz, float radius, Blocked&& blocked) {
  if (ox == cx && oz == cz) return true;
  if (!blocked(cx, cz)) return true;
  if (!(radius > 0.0f)) return false;
  const double dx = static_cast<double>(cx) - ox;
  const double dz = static_cast<double>(cz) - oz;
  const double scale = radius / std::sqrt(dx * dx + dz * dz);
  const double side_x = -dz * scale;
  const double side_z = dx * scale;
  if (!blocked(static_cast<float>(cx + side_x), static_cast<float>(cz + side_z))) return true;
  return !blocked(static_cast<float>(cx - side_x), static_cast<float>(cz - side_z));
}

// The largest float <= v, and the smallest float >= v, for v inside float's range.
float float_below(double v) noexcept {
  const auto f = static_cast<float>(v);
  return static_cast<double>(f) > v ? std::nextafter(f, -kInf) : f;
}
float float_above(double v) noexcept {
  const auto f = static_cast<float>(v);
  return static_cast<double>(f) < v ? std::nextafter(f, kInf) : f;
}

}  // namespace

void OccluderScratch::prepare(const OccluderGrid& grid) {
  if (wall_stamp_.size() < grid.wall_count()) wall_stamp_.resize(grid.wall_count(), 0);
}

void OccluderGrid::set_cell_size(double cell, double extent_x, double extent_z) {
  cell_size_ = static_cast<float>(cell);
  inv_cell_size_ = 1.0f / cell_size_;
  cells_x_ = static_cast<std::uint32_t>(std::floor(extent_x / cell) + 1.0);
  cells_z_ = static_cast<std::uint32_t>(std::floor(extent_z / cell) + 1.0);
  last_x_ = static_cast<float>(cells_x_ - 1);
  last_z_ = static_cast<float>(cells_z_ - 1);
}

std::uint64_t OccluderGrid::count_entries() const noexcept {
  std::uint64_t entries = 0;
  for (const WallSegment& wall : walls_) {
    const std::uint64_t columns =
        column_of(std::max(wall.x0, wall.x1)) - column_of(std::min(wall.x0, wall.x1)) + 1;
    const std::uint64_t rows = row_of(std::max(wall.z0, wall.z1)) - row_of(std::min(wall.z0, wall.z1)) + 1;
    entries += columns * rows;
  }
  return entries;
}

void OccluderGrid::build(std::span<const WallSegment> walls, float cell_size, std::uint32_t max_cells) {
  walls_.assign(walls.begin(), walls.end());
  max_cells = std::max(max_cells, 1u);
  float min_x = kInf, max_x = -kInf, min_z = kInf, max_z = -kInf;
  double span_sum = 0.0;
  for (const WallSegment& wall : walls_) {
    min_x = std::min({min_x, wall.x0, wall.x1});
    max_x = std::max({max_x, wall.x0, wall.x1});
    min_z = std::min({min_z, wall.z0, wall.z1});
    max_z = std::max({max_z, wall.z0, wall.z1});
    span_sum += std::max(std::abs(static_cast<double>(wall.x1) - wall.x0),
                         std::abs(static_cast<double>(wall.z1) - wall.z0));
  }
  if (walls_.empty()) min_x = max_x = min_z = max_z = 0.0f;
  origin_x_ = min_x;
  origin_z_ = min_z;

  // Sized in double, as in Grid::build(): the cell counts never overflow before they are capped.
  const double extent_x = static_cast<double>(max_x) - min_x;
  const double extent_z = static_cast<double>(max_z) - min_z;
  double cell = cell_size;
  if (!(cell_size > 0.0f)) {
    const double count = static_cast<double>(std::max<std::size_t>(walls_.size(), 1));
    const double spacing =
        std::max(std::sqrt(extent_x * extent_z / count), std::max(extent_x, extent_z) / count);
    cell = std::max(span_sum / count, spacing);
    if (!(cell > 0.0)) cell = 1.0;
  }
  // Keeps the float cell size and its inverse finite and non-zero.
  cell = std::clamp(cell, 1e-30, static_cast<double>(std::numeric_limits<float>::max()));
  auto cells_for = [](double extent, double size) { return std::floor(extent / size) + 1.0; };
  double cells = cells_for(extent_x, cell) * cells_for(extent_z, cell);
  if (cells > max_cells) {
    cell *= std::sqrt(cells / max_cells);
    while (cells_for(extent_x, cell) * cells_for(extent_z, cell) > max_cells) cell *= 1.0625;
  }
  set_cell_size(cell, extent_x, extent_z);
  const std::uint64_t max_entries =
      std::min<std::uint64_t>(max_cells + 4ull * walls_.size(), std::numeric_limits<std::uint32_t>::max());
  for (std::uint64_t entries = count_entries(); entries > max_entries; entries = count_entries()) {
    cell *= std::max(1.0625, std::sqrt(static_cast<double>(entries) / static_cast<double>(max_entries)));
    set_cell_size(cell, extent_x, extent_z);
  }

  const std::uint32_t cell_count = cells_x_ * cells_z_;
  cell_start_.assign(static_cast<std::size_t>(cell_count) + 1, 0);
  for (const WallSegment& wall : walls_) {
    const std::uint32_t x0 = column_of(std::min(wall.x0, wall.x1)),
                        x1 = column_of(std::max(wall.x0, wall.x1));
    const std::uint32_t z0 = row_of(std::min(wall.z0, wall.z1)), z1 = row_of(std::max(wall.z0, wall.z1));
    for (std::uint32_t z = z0; z <= z1; ++z) {
      for (std::uint32_t x = x0; x <= x1; ++x) ++cell_start_[z * cells_x_ + x + 1];
    }
  }
  for (std::uint32_t c = 0; c < cell_count; ++c) cell_start_[c + 1] += cell_start_[c];
  cell_walls_.resize(cell_start_[cell_count]);
  // Scatter with cell_start_ as running cursors, then shift back, as in Grid::build().
  for (std::uint32_t w = 0; w < walls_.size(); ++w) {
    const WallSegment& wall = walls_[w];
    const std::uint32_t x0 = column_of(std::min(wall.x0, wall.x1)),
                        x1 = column_of(std::max(wall.x0, wall.x1));
    const std::uint32_t z0 = row_of(std::min(wall.z0, wall.z1)), z1 = row_of(std::max(wall.z0, wall.z1));
    for (std::uint32_t z = z0; z <= z1; ++z) {
      for (std::uint32_t x = x0; x <= x1; ++x) cell_walls_[cell_start_[z * cells_x_ + x]++] = w;
    }
  }
  for (std::uint32_t c = cell_count; c > 0; --c) cell_start_[c] = cell_start_[c - 1];
  cell_start_[0] = 0;
}

std::uint32_t OccluderGrid::begin_query(OccluderScratch& scratch) const {
  scratch.prepare(*this);
  if (++scratch.query_stamp_ == 0) {
    std::fill(scratch.wall_stamp_.begin(), scratch.wall_stamp_.end(), 0u);
    scratch.query_stamp_ = 1;
  }
  return scratch.query_stamp_;
}

// Row by row over the rows of the segment's box; in each row, the run of columns that the part
// of the segment inside the row's z-slab can reach. Conservative: take a shared point p of the
// segment and a wall. The wall is listed in every cell of its box, and row_of()/column_of() are
// monotonic, so it is listed in cell (column_of(p.x), row_of(p.z)) (p rounded down to a float).
// That row is among those scanned, and the run scanned in it covers p.x because
// - the slab is the row's arithmetic edges origin + k * cell, widened by a relative 1e-6: the
//   float mapping puts its edges within about 4e-7 of those (three float roundings, plus the
//   float spacing when the grid lies far from 0). The first and last rows use the segment's own
//   z bounds, which also covers the clamped edge rows;
// - x at the slab's z bounds is computed in double with error below 1e-14 * (|ax| + |bx|), and
//   the run is widened by 1e-13 of that, then rounded outwards to floats and clipped to the
//   segment's x bounds.
bool OccluderGrid::blocked(float ax, float az, float bx, float bz, OccluderScratch& scratch) const {
  if (walls_.empty()) return false;
  const std::uint32_t stamp = begin_query(scratch);
  std::uint32_t* const wall_stamp = scratch.wall_stamp_.data();
  const float min_x = std::min(ax, bx), max_x = std::max(ax, bx);
  const float min_z = std::min(az, bz), max_z = std::max(az, bz);
  const std::uint32_t first_row = row_of(min_z), last_row = row_of(max_z);
  const std::uint32_t whole_first = column_of(min_x), whole_last = column_of(max_x);
  const double dx = static_cast<double>(bx) - ax;
  const double dz = static_cast<double>(bz) - az;
  const double x_pad = 1e-13 * (std::abs(static_cast<double>(ax)) + std::abs(static_cast<double>(bx)));
  auto row_edge = [this](std::uint32_t row) {
    const double edge = origin_z_ + static_cast<double>(row) * cell_size_;
    return std::pair{edge, 1e-6 * (std::abs(edge) + (row + 1.0) * cell_size_)};
  };
  auto x_at = [&](double z) { return ax + std::clamp((z - az) / dz, 0.0, 1.0) * dx; };

  for (std::uint32_t row = first_row; row <= last_row; ++row) {
    std::uint32_t first = whole_first, last = whole_last;
    if (first_row != last_row) {  // then dz != 0
      double z_low = min_z, z_high = max_z;
      if (row != first_row) {
        const auto [edge, pad] = row_edge(row);
        z_low = std::max(z_low, edge - pad);
      }
      if (row != last_row) {
        const auto [edge, pad] = row_edge(row + 1);
        z_high = std::min(z_high, edge + pad);
      }
      const double x_low = x_at(z_low), x_high = x_at(z_high);
      const double run_min = std::max(std::min(x_low, x_high) - x_pad, static_cast<double>(min_x));
      const double run_max = std::min(std::max(x_low, x_high) + x_pad, static_cast<double>(max_x));
      first = column_of(float_below(run_min));
      last = column_of(float_above(run_max));
    }
    const std::uint32_t end = cell_start_[row * cells_x_ + last + 1];
    for (std::uint32_t at = cell_start_[row * cells_x_ + first]; at < end; ++at) {
      const std::uint32_t w = cell_walls_[at];
      if (wall_stamp[w] == stamp) continue;
      wall_stamp[w] = stamp;
      if (touches(walls_[w], ax, az, bx, bz)) return true;
    }
  }
  return false;
}

bool OccluderGrid::sees(float ox, float oz, float cx, float cz, float radius,
                        OccluderScratch& scratch) const {
  return any_sample_visible(ox, oz, cx, cz, radius,
                            [&](float x, float z) { return blocked(ox, oz, x, z, scratch); });
}

bool segment_blocked_brute_force(std::span<const WallSegment> walls, float ax, float az, float bx, float bz) {
  return std::any_of(walls.begin(), walls.end(),
                     [&](const WallSegment& wall) { return touches(wall, ax, az, bx, bz); });
}

bool sees_brute_force(std::span<const WallSegment> walls, float ox, float oz, float cx, float cz,
                      float radius) {
  return any_sample_visible(ox, oz, cx, cz, radius, [&](float x, float z) {
    return segment_blocked_brute_force(walls, ox, oz, x, z);
  });
}

}  // namespace sightline
