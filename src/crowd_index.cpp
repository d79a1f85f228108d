#include "crowd_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cell_index.h"
#include "sightline_assert.h"

namespace sightline {

bool CrowdIndex::find_dense_cells(const Grid& grid) {
  clear();
  const std::size_t items = grid.items().size();
  dense_.reserve(items / kDenseCell + 1);
  const std::uint32_t cells_x = grid.cells_x();
  for (std::uint32_t z = 0; z < grid.cells_z(); ++z) {
    // A row with no more than kDenseCell entities has no dense cell: one subtraction skips it.
    if (grid.run_count(z, 0, cells_x - 1) <= kDenseCell) continue;
    for (std::uint32_t x = 0; x < cells_x; ++x) {
      // A cell the grid left unfilled (no scan reaches it this tick) holds stale items: never indexed.
      if (grid.run_count(z, x, x) > kDenseCell && grid.cell_filled(z, x))
        dense_.push_back({z * cells_x + x, 0});
    }
  }
  return !dense_.empty();
}

void CrowdIndex::count_scanner(const Grid& grid, float x, float z) noexcept {
  const std::uint32_t cell = grid.cell_of_point(x, z);
  const auto at = std::lower_bound(dense_.begin(), dense_.end(), cell,
                                   [](const Candidate& c, std::uint32_t v) { return c.cell < v; });
  if (at != dense_.end() && at->cell == cell) ++at->scanners;
}

void CrowdIndex::index_busy_cells(const Grid& grid) {
  starts_used_ = 0;
  items_used_ = 0;
  finest_side_ = std::numeric_limits<float>::infinity();
  // Sized for the worst case (every entity in dense cells, 2 n + 1 sub-cell starts for a cell of
  // n) and never shrunk, so that a crowd moving between cells never grows a buffer in a steady
  // tick, and the arrays are written without being cleared first.
  const std::size_t items = grid.items().size();
  cells_.reserve(items / kDenseCell + 1);
  if (starts_.size() < 3 * items + 1) starts_.resize(3 * items + 1);
  if (items_.size() < items) {
    items_.resize(items);
    item_x_.resize(items);
    item_z_.resize(items);
    sub_cell_of_.resize(items);
  }
  const std::uint32_t cells_x = grid.cells_x();
  for (const Candidate& dense : dense_) {
    if (dense.scanners < kMinScanners) continue;
    const std::uint32_t x = dense.cell % cells_x;
    const std::uint32_t z = dense.cell / cells_x;
    index_cell(grid, dense.cell, grid.run_begin(z, x), grid.run_end(z, x));
  }
}

// The cell's entities counting-sorted into sub-cells (stable: the grid's order within one).
void CrowdIndex::index_cell(const Grid& grid, std::uint32_t cell, std::uint32_t begin, std::uint32_t end) {
  const float* const xs = grid.item_x().data();
  const float* const zs = grid.item_z().data();
  const std::uint32_t* const ids = grid.items().data();
  const std::uint32_t n = end - begin;
  float min_x = xs[begin], max_x = xs[begin], min_z = zs[begin], max_z = zs[begin];
  for (std::uint32_t i = begin + 1; i < end; ++i) {
    min_x = std::min(min_x, xs[i]);
    max_x = std::max(max_x, xs[i]);
    min_z = std::min(min_z, zs[i]);
    max_z = std::max(max_z, zs[i]);
  }
  // Square sub-cells of about kPerSubCell entities where they spread evenly over the box (a line
  // of them when the box is flat); one sub-cell when they all stand on one point.
  const double width = static_cast<double>(max_x) - min_x;
  const double height = static_cast<double>(max_z) - min_z;
  const double per = static_cast<double>(kPerSubCell) / n;
  const double side =
      width > 0.0 && height > 0.0 ? std::sqrt(width * height * per) : std::max(width, height) * per;
  const double max_per_axis = std::min<double>(n, 1024.0);
  std::uint32_t sub_x = 1;
  std::uint32_t sub_z = 1;
  float inv_side = 0.0f;
  if (side > 0.0 && std::isfinite(side) && std::isfinite(1.0 / side)) {
    // A flat box rounds up to many more sub-cells than its area asks for: wider ones, until a
    // cell of n has at most 2 n.
    for (double fit = side;; fit *= 2.0) {
      sub_x = static_cast<std::uint32_t>(std::min(width / fit + 1.0, max_per_axis));
      sub_z = static_cast<std::uint32_t>(std::min(height / fit + 1.0, max_per_axis));
      if (std::uint64_t{sub_x} * sub_z <= 2 * std::uint64_t{n}) {
        inv_side = static_cast<float>(1.0 / fit);
        finest_side_ = std::min(finest_side_, static_cast<float>(fit));
        break;
      }
    }
  }
  const auto sub_cells = sub_x * sub_z;
  const std::uint32_t first = starts_used_;
  const std::uint32_t base = items_used_;
  const DenseCell dense{cell,
                        first,
                        sub_x,
                        min_x,
                        min_z,
                        inv_side,
                        static_cast<float>(sub_x - 1),
                        static_cast<float>(sub_z - 1)};
  cells_.push_back(dense);
  starts_used_ = first + sub_cells + 1;
  items_used_ = base + n;
  SIGHTLINE_ASSERT(starts_used_ <= starts_.size() && items_used_ <= items_.size());
  std::fill(starts_.begin() + first, starts_.begin() + starts_used_, 0u);
  std::uint32_t* const count = starts_.data() + first;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t s = clamped_cell(zs[begin + i], min_z, inv_side, dense.last_z) * sub_x +
                            clamped_cell(xs[begin + i], min_x, inv_side, dense.last_x);
    sub_cell_of_[i] = s;
    ++count[s + 1];
  }
  for (std::uint32_t s = 0; s < sub_cells; ++s) count[s + 1] += count[s];
  // count[s] walks from sub-cell s's start to its end, which is s + 1's start: shifted back
  // by one afterwards, and made absolute.
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t at = base + count[sub_cell_of_[i]]++;
    items_[at] = ids[begin + i];
    item_x_[at] = xs[begin + i];
    item_z_[at] = zs[begin + i];
  }
  for (std::uint32_t s = sub_cells; s > 0; --s) count[s] = count[s - 1] + base;
  count[0] = base;
  SIGHTLINE_ASSERT(count[sub_cells] == base + n);
}

bool CrowdIndex::touches(const Grid& grid, float x, float z, float radius) const noexcept {
  const Grid::Range range = grid.cell_range(x, z, radius);
  for (std::uint32_t row = range.z0; row <= range.z1; ++row) {
    const std::uint32_t from = row * grid.cells_x() + range.x0;
    const auto dense = std::lower_bound(cells_.begin(), cells_.end(), from,
                                        [](const DenseCell& c, std::uint32_t cell) { return c.cell < cell; });
    if (dense != cells_.end() && dense->cell <= from + (range.x1 - range.x0)) return true;
  }
  return false;
}

namespace {

// Runs of one set of arrays, gathered a batch at a time and scanned when the batch is full.
struct RunBatch {
  static constexpr std::uint32_t kRuns = 32;
  ScanRun runs[kRuns];
  std::uint32_t count = 0;
};

}  // namespace

std::uint32_t CrowdIndex::scan(const Grid& grid, DistanceScan distance_scan, float ox, float oz, float radius,
                               float r2, const std::uint32_t* stamp, std::uint32_t epoch,
                               std::uint32_t* found, TickStats& stats) const noexcept {
  // Padded as Grid::cell_range pads: rounding in the distance test never admits an entity from a
  // sub-cell the range leaves out.
  const float padded = radius * 1.0001f;
  const Grid::Range range = grid.cell_range(ox, oz, radius);
  const std::uint32_t cells_x = grid.cells_x();
  RunBatch in_grid;
  RunBatch in_cells;
  std::uint32_t n = 0;
  std::uint64_t candidates = 0;
  auto flush_grid = [&] {
    n += distance_scan(grid.item_x().data(), grid.item_z().data(), grid.items().data(), in_grid.runs,
                       in_grid.count, ox, oz, r2, stamp, epoch, found + n);
    in_grid.count = 0;
  };
  auto flush_cells = [&] {
    n += distance_scan(item_x_.data(), item_z_.data(), items_.data(), in_cells.runs, in_cells.count, ox, oz,
                       r2, stamp, epoch, found + n);
    in_cells.count = 0;
  };
  auto add_grid = [&](std::uint32_t begin, std::uint32_t end) {
    if (begin == end) return;
    candidates += end - begin;
    in_grid.runs[in_grid.count++] = {begin, end};
    if (in_grid.count == RunBatch::kRuns) flush_grid();
  };
  auto add_cells = [&](std::uint32_t begin, std::uint32_t end) {
    if (begin == end) return;
    candidates += end - begin;
    in_cells.runs[in_cells.count++] = {begin, end};
    if (in_cells.count == RunBatch::kRuns) flush_cells();
  };
  for (std::uint32_t z = range.z0; z <= range.z1; ++z) {
    const std::uint32_t row = z * cells_x;
    auto dense = std::lower_bound(cells_.begin(), cells_.end(), row + range.x0,
                                  [](const DenseCell& c, std::uint32_t cell) { return c.cell < cell; });
    std::uint32_t x = range.x0;
    for (; dense != cells_.end() && dense->cell <= row + range.x1; ++dense) {
      const std::uint32_t dense_x = dense->cell - row;
      add_grid(grid.run_begin(z, x), grid.run_begin(z, dense_x));
      const std::uint32_t sx0 = clamped_cell(ox - padded, dense->min_x, dense->inv_side, dense->last_x);
      const std::uint32_t sx1 = clamped_cell(ox + padded, dense->min_x, dense->inv_side, dense->last_x);
      const std::uint32_t sz0 = clamped_cell(oz - padded, dense->min_z, dense->inv_side, dense->last_z);
      const std::uint32_t sz1 = clamped_cell(oz + padded, dense->min_z, dense->inv_side, dense->last_z);
      for (std::uint32_t sz = sz0; sz <= sz1; ++sz) {
        const std::uint32_t at = dense->first + sz * dense->sub_cells_x;
        add_cells(starts_[at + sx0], starts_[at + sx1 + 1]);
      }
      x = dense_x + 1;
    }
    if (x <= range.x1) add_grid(grid.run_begin(z, x), grid.run_end(z, range.x1));
  }
  if (in_grid.count != 0) flush_grid();
  if (in_cells.count != 0) flush_cells();
  stats.cell_candidates += candidates;
  stats.distance_tests += candidates;
  return n;
}

}  // namespace sightline
