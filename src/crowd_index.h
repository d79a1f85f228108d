// A finer index inside the grid's dense cells, for the crowd cap's scan. The grid's cells are
// about R wide, so a crowd standing in one spot falls into one or a few of them, and a scan
// around a client in it reads the whole crowd however small the disc it needs. A cell holding
// more than kDenseCell entities, in which at least kMinScanners client origins stand,
// gets a uniform grid of its own over its entities' bounding box, sized for about kPerSubCell
// entities a sub-cell; a scan reads the sub-cells its disc reaches instead of the cell. Built
// each tick after the grid, only while a crowd cap is set. Which cells it indexes changes only
// the work, never a result.
#pragma once

#include <cstdint>
#include <vector>

#include "distance_scan.h"
#include "grid.h"
#include "sightline/stream.h"

namespace sightline {

class CrowdIndex {
 public:
  /// A grid cell with more entities than this is dense. Sparser cells are scanned whole, as
  /// without the index: a scan of a few hundred candidates costs well under a microsecond.
  static constexpr std::uint32_t kDenseCell = 256;
  /// A dense cell gets sub-cells only when at least this many client origins stand in it:
  /// indexing costs tens of instructions an entity, a whole-cell scan about 3.5 a candidate
  /// (callgrind), so a cell few clients scan is cheaper scanned whole (in clustered_capped, 100
  /// clients over 8 hotspots of 5,000, indexing every dense cell made the tick 1.8 times the
  /// instructions).
  static constexpr std::uint32_t kMinScanners = 16;
  /// The entities a sub-cell holds on average, where they spread evenly over the cell's box.
  static constexpr std::uint32_t kPerSubCell = 8;

  /// Forgets the last index and finds the dense cells of `grid` as it stands, among the cells it
  /// filled (Grid::cell_filled: an unfilled cell's items are stale, and no scan reaches it); false
  /// when there is none (the index stays empty). Then count_scanner for each client origin and
  /// index_busy_cells. Reuses its buffers: no allocation once they reached their high-water mark.
  bool find_dense_cells(const Grid& grid);
  /// Counts an origin at (x, z) for the dense cell it stands in, if any.
  void count_scanner(const Grid& grid, float x, float z) noexcept;
  /// Splits each dense cell with kMinScanners counted into sub-cells.
  void index_busy_cells(const Grid& grid);
  /// No dense cell: scans read the grid alone.
  void clear() noexcept {
    dense_.clear();
    cells_.clear();
  }
  [[nodiscard]] bool empty() const noexcept { return cells_.empty(); }

  /// The side of the smallest sub-cell, world units: where a widening scan starts.
  [[nodiscard]] float finest_side() const noexcept { return finest_side_; }

  /// Whether the cells grid.cell_range(x, z, radius) names include a dense one.
  [[nodiscard]] bool touches(const Grid& grid, float x, float z, float radius) const noexcept;

  /// What scan_near in pass_steps.h does over the grid alone, with the dense cells read through
  /// their sub-cells: writes to `found` the grid's entities i with (x_i - ox)^2 + (z_i - oz)^2
  /// <= r2 (as DistanceScan computes it) and stamp[i] != epoch, in an order that depends only on
  /// the grid and the query, and returns how many. `radius` >= sqrt(r2) picks the cells and
  /// sub-cells. Counts the candidates read in `stats` (cell_candidates and distance_tests).
  /// `found` must hold the grid's item count + 8 values.
  std::uint32_t scan(const Grid& grid, DistanceScan distance_scan, float ox, float oz, float radius, float r2,
                     const std::uint32_t* stamp, std::uint32_t epoch, std::uint32_t* found,
                     TickStats& stats) const noexcept;

 private:
  struct DenseCell {
    std::uint32_t cell;   // the grid's cell index, z * cells_x + x
    std::uint32_t first;  // its first sub-cell's entry in starts_
    std::uint32_t sub_cells_x;
    float min_x, min_z;    // the corner of its entities' bounding box
    float inv_side;        // 1 / the sub-cells' side
    float last_x, last_z;  // sub-cells per row and rows, less one, as floats (clamped_cell)
  };

  struct Candidate {
    std::uint32_t cell;  // the grid's cell index
    std::uint32_t scanners;
  };

  void index_cell(const Grid& grid, std::uint32_t cell, std::uint32_t begin, std::uint32_t end);

  std::vector<Candidate> dense_;       // every dense cell, sorted by cell
  std::vector<DenseCell> cells_;       // those indexed, sorted by cell
  std::vector<std::uint32_t> starts_;  // per dense cell, its sub-cells' first positions and one end
  std::vector<std::uint32_t> items_;   // entity indices of the dense cells, in sub-cell order
  std::vector<float> item_x_;
  std::vector<float> item_z_;
  std::vector<std::uint32_t> sub_cell_of_;  // build scratch: the sub-cell of each of a cell's items
  std::uint32_t starts_used_ = 0;           // entries of starts_ and items_ this tick's index uses
  std::uint32_t items_used_ = 0;
  float finest_side_ = 0.0f;
};

}  // namespace sightline
