// A static index of wall segments on the x/z ground plane, for line-of-sight tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cell_index.h"
#include "sightline/occlusion.h"

namespace sightline {

class OccluderGrid;

/// Per-thread buffers of OccluderGrid queries: a stamp per wall, so that a wall listed in several
/// cells is tested once per query. A query sizes them itself when they are smaller than the grid's
/// wall count (that first query allocates); prepare() does it up front. Once sized for a grid, no
/// query against it (or any grid with no more walls) allocates. One scratch per thread.
class OccluderScratch {
 public:
  /// Sizes the buffers for `grid`'s current walls. Allocates at most once per high-water mark.
  void prepare(const OccluderGrid& grid);

  /// The stamp buffer, for tests that check it stays put across queries.
  [[nodiscard]] const std::uint32_t* stamp_data() const noexcept { return wall_stamp_.data(); }
  [[nodiscard]] std::size_t stamp_capacity() const noexcept { return wall_stamp_.capacity(); }

 private:
  friend class OccluderGrid;
  std::vector<std::uint32_t> wall_stamp_;  // per wall: the stamp of the last query that tested it
  std::uint32_t query_stamp_ = 0;
};

/// Walls binned into a uniform row-major grid over their bounding box: each wall is listed in
/// every cell its bounding box overlaps (counting sort into one flat array, as in Grid). A query
/// only selects candidate walls; the exact predicate of segment_blocked_brute_force() decides, so
/// blocked() and sees() equal the brute-force functions for every input.
///
/// Thread safety: build() is exclusive; the const queries only read the grid and may run on many
/// threads at once, each with its own OccluderScratch.
class OccluderGrid {
 public:
  /// Rebuilds the index over a copy of `walls`. `cell_size` in world units; 0 (or anything not
  /// > 0) picks one from the walls: the larger of the mean of their boxes' longer sides and the square root
  /// of the box area per wall. The cell size then grows as needed until the grid has at most `max_cells`
  /// cells (>= 1) and at most max_cells + 4 * walls.size() wall-in-cell entries. Allocates;
  /// reuses its buffers up to their high-water mark.
  void build(std::span<const WallSegment> walls, float cell_size, std::uint32_t max_cells = 1u << 20);

  /// True when the closed segment from (ax, az) to (bx, bz) intersects or touches any wall. A
  /// zero-length segment (a == b) is blocked when the point lies on a wall. Coordinates finite;
  /// they may lie anywhere, inside the grid's extent or not. No allocation once `scratch` is sized.
  [[nodiscard]] bool blocked(float ax, float az, float bx, float bz, OccluderScratch& scratch) const;

  /// Whether a disc (centre (cx, cz), `radius` >= 0, world units) is visible from (ox, oz): true
  /// when any sample ray from the origin is not blocked. Samples: the centre first; when radius >
  /// 0 also the two points at `radius` from the centre, perpendicular to the origin->centre
  /// direction. An origin exactly at the centre sees the disc. No allocation once scratch is sized.
  [[nodiscard]] bool sees(float ox, float oz, float cx, float cz, float radius,
                          OccluderScratch& scratch) const;

  [[nodiscard]] std::size_t wall_count() const noexcept { return walls_.size(); }
  [[nodiscard]] std::span<const WallSegment> walls() const noexcept { return walls_; }
  [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
  [[nodiscard]] std::uint32_t cells_x() const noexcept { return cells_x_; }
  [[nodiscard]] std::uint32_t cells_z() const noexcept { return cells_z_; }
  /// Wall-in-cell entries: the sum over walls of the cells each is listed in.
  [[nodiscard]] std::size_t entry_count() const noexcept { return cell_walls_.size(); }

 private:
  // Walls and queries go through this one mapping; that is what makes the candidate selection
  // conservative.
  [[nodiscard]] std::uint32_t axis_cell(float v, float origin, float last) const noexcept {
    return clamped_cell(v, origin, inv_cell_size_, last);
  }
  [[nodiscard]] std::uint32_t column_of(float x) const noexcept { return axis_cell(x, origin_x_, last_x_); }
  [[nodiscard]] std::uint32_t row_of(float z) const noexcept { return axis_cell(z, origin_z_, last_z_); }
  void set_cell_size(double cell, double extent_x, double extent_z);
  [[nodiscard]] std::uint64_t count_entries() const noexcept;
  [[nodiscard]] std::uint32_t begin_query(OccluderScratch& scratch) const;

  std::vector<WallSegment> walls_;
  float origin_x_ = 0.0f;
  float origin_z_ = 0.0f;
  float cell_size_ = 1.0f;
  float inv_cell_size_ = 1.0f;
  std::uint32_t cells_x_ = 1;
  std::uint32_t cells_z_ = 1;
  float last_x_ = 0.0f;  // cells_x_ - 1 as a float
  float last_z_ = 0.0f;
  std::vector<std::uint32_t> cell_start_;  // cells + 1 prefix sums into cell_walls_
  std::vector<std::uint32_t> cell_walls_;  // wall indices, cell by cell, ascending within a cell
};

/// The reference predicate, O(walls): true when the closed segment a-b intersects or touches any
/// wall. Exact for finite float inputs (see occluder_grid.cpp). The oracle of blocked().
[[nodiscard]] bool segment_blocked_brute_force(std::span<const WallSegment> walls, float ax, float az,
                                               float bx, float bz);

/// The reference for OccluderGrid::sees(), O(walls): same samples, same order, brute-force rays.
[[nodiscard]] bool sees_brute_force(std::span<const WallSegment> walls, float ox, float oz, float cx,
                                    float cz, float radius);

}  // namespace sightline
