// A uniform grid over the live entities, rebuilt each tick by counting sort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cell_index.h"
#include "grid_refresh.h"
#include "sightline_assert.h"

namespace sightline {

class TaskRunner;

/// Cells are row-major (z rows of x cells), so the cells [x0, x1] of one row are one contiguous
/// run of `items`: a query scans one run per row. Within a cell, entities keep the order they had
/// at the last build (a stable counting sort of last build's items by their new cells). The grid
/// covers the bounding box of the binned entities, or, when that box would need more than
/// `max_cells` cells of the minimum size and there are kOutlierMinEntities or more, the box of the
/// bulk of them (dense_box()): then an outlier far away does not stretch every cell, it lands in a
/// border cell. Indices are clamped at both ends, which keeps the binning monotonic in position:
/// that is what makes a query exact wherever the entities stand (see cell_range()).
class Grid {
 public:
  static constexpr std::uint32_t kNotBinned = 0xffffffffu;
  /// Below this many binned entities the grid always covers all of them: a stretched grid costs
  /// a small world little, and the bulk's box costs a sample of the positions each build.
  static constexpr std::uint32_t kOutlierMinEntities = 1024;

  /// Where this build's queries will be made from: every query is of radius <= `radius` around
  /// one of the points (x[i], z[i]).
  struct QueryCover {
    std::span<const float> x;
    std::span<const float> z;
    float radius = 0.0f;
  };

  /// Bins every entity i with `alive[i] != 0`. `min_cell_size` > 0; `max_cells` >= 1.
  /// Reuses its buffers: no allocation once they reached their high-water mark.
  /// When the same slots are binned with the same cell counts as at the last build and few
  /// entities changed cell, the last build's items are refreshed in place and the few moved,
  /// rather than all sorted again: the same result (GridBuildTest), at a fraction of the cost.
  /// With a `cover`, in a world of partition_min_slots slots or more whose queries reach under a
  /// quarter of the cells, only the cells a query of the cover can reach get their items and
  /// positions (run_begin and run_end stay right for every cell): a world of millions with a few
  /// hundred viewers then costs two streaming passes over the positions. A query outside the
  /// cover is then a bug (asserted where assertions are on).
  void build(std::span<const float> xs, std::span<const float> zs, std::span<const std::uint8_t> alive,
             float min_cell_size, std::uint32_t max_cells, const QueryCover* cover = nullptr);

  /// False makes every build sort all entities (tests compare the two ways).
  bool incremental = true;
  /// Where build() runs its passes over the entities that split by range (the count of the
  /// binned and their box, the incremental build's refresh and its moving of those that changed
  /// cell, the full counting sort where every slot is binned, and the partitioned sort of a large
  /// world), one range per worker, from parallel_min_slots slots on (a sort in no more ranges
  /// than have as many slots as there are cells); null: the calling thread. The ranges change
  /// nothing built.
  TaskRunner* tasks = nullptr;
  std::size_t parallel_min_slots = std::size_t{1} << 15;
  /// False lifts the cap on a sort's ranges (tests sort small grids on several workers).
  bool cap_sort_ranges = true;
  /// From this many entity slots on, every build sorts all entities, in slot order and in two
  /// passes that write in cache-sized blocks: there the incremental build's reads of each item's
  /// position, in cell order, miss the caches (entities within a cell are then in slot order).
  std::size_t partition_min_slots = std::size_t{1} << 17;
  /// The incremental build's loop over the items (tests set the scalar one).
  GridRefresh refresh_items = best_grid_refresh();
  /// Whether the last build was incremental, and how many entities it moved between cells.
  [[nodiscard]] bool last_build_incremental() const noexcept { return last_incremental_; }
  [[nodiscard]] std::size_t last_build_moved() const noexcept {
    return last_incremental_ ? moved_.size() : 0;
  }
  /// Whether the last build filled only the cells its cover reaches.
  [[nodiscard]] bool last_build_covered_only() const noexcept { return covered_only_; }
  /// Whether the last build filled cell (x, z): every cell, unless last_build_covered_only().
  [[nodiscard]] bool cell_filled(std::uint32_t z, std::uint32_t x) const noexcept {
    return !covered_only_ || filled_[std::size_t{z} * cells_x_ + x] == fill_epoch_;
  }

  struct Range {
    std::uint32_t x0, x1, z0, z1;  ///< Inclusive cell bounds.
  };

  /// The cells that can hold an entity within `radius` of (x, z) by the float distance test
  /// dx*dx + dz*dz <= radius*radius. The box is padded by a relative 1e-4 so that rounding in
  /// that test can never admit an entity from an unscanned cell.
  [[nodiscard]] Range cell_range(float x, float z, float radius) const noexcept {
    const float padded = radius * 1.0001f;
    return Range{axis_cell(x - padded, origin_x_, last_x_), axis_cell(x + padded, origin_x_, last_x_),
                 axis_cell(z - padded, origin_z_, last_z_), axis_cell(z + padded, origin_z_, last_z_)};
  }

  /// Items of cells [x0, x1] in row z, as a half-open range of positions into items().
  [[nodiscard]] std::uint32_t run_begin(std::uint32_t z, std::uint32_t x0) const noexcept {
    SIGHTLINE_ASSERT(cell_filled(z, x0));
    return cell_start_[z * cells_x_ + x0];
  }
  [[nodiscard]] std::uint32_t run_end(std::uint32_t z, std::uint32_t x1) const noexcept {
    SIGHTLINE_ASSERT(cell_filled(z, x1));
    return cell_start_[z * cells_x_ + x1 + 1];
  }

  /// How many entities cells [x0, x1] of row z hold, whether filled or not (every cell is counted).
  [[nodiscard]] std::uint32_t run_count(std::uint32_t z, std::uint32_t x0, std::uint32_t x1) const noexcept {
    return cell_start_[z * cells_x_ + x1 + 1] - cell_start_[z * cells_x_ + x0];
  }

  /// Entity indices in cell order; item_x/item_z are their positions in the same order.
  [[nodiscard]] std::span<const std::uint32_t> items() const noexcept { return items_; }
  [[nodiscard]] std::span<const float> item_x() const noexcept { return item_x_; }
  [[nodiscard]] std::span<const float> item_z() const noexcept { return item_z_; }

  [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
  /// World position of the low corner of cell (0, 0).
  [[nodiscard]] float origin_x() const noexcept { return origin_x_; }
  [[nodiscard]] float origin_z() const noexcept { return origin_z_; }
  [[nodiscard]] std::uint32_t cells_x() const noexcept { return cells_x_; }
  [[nodiscard]] std::uint32_t cells_z() const noexcept { return cells_z_; }
  [[nodiscard]] std::uint32_t cell_of_point(float x, float z) const noexcept {
    return axis_cell(z, origin_z_, last_z_) * cells_x_ + axis_cell(x, origin_x_, last_x_);
  }

 private:
  [[nodiscard]] std::uint32_t axis_cell(float v, float origin, float last) const noexcept {
    return clamped_cell(v, origin, inv_cell_size_, last);
  }

  // axis_cell() as branches: most entities lie inside the box, where only the top end needs the
  // clamp (float rounding may carry t to the last cell's far edge). Same result.
  [[nodiscard]] static std::uint32_t bin_axis(float v, float origin, float inv_cell_size, std::uint32_t count,
                                              float last) noexcept {
    const float t = (v - origin) * inv_cell_size;
    if (t >= last) return count - 1;
    if (!(t > 0.0f)) return 0;  // an outlier below the bulk's box
    return static_cast<std::uint32_t>(t);
  }

  float origin_x_ = 0.0f;
  float origin_z_ = 0.0f;
  float cell_size_ = 1.0f;
  float inv_cell_size_ = 1.0f;
  std::uint32_t cells_x_ = 1;
  std::uint32_t cells_z_ = 1;
  float last_x_ = 0.0f;  // cells_x_ - 1 as a float
  float last_z_ = 0.0f;
  /// The steps of build(), in order: the box around the binned entities, the cells over it, the
  /// incremental build where it applies, else each entity's cell and the cells' counts, then the
  /// items placed in cell order.
  struct Box {
    float min_x, max_x, min_z, max_z;
  };
  [[nodiscard]] static Box bounding_box(const float* x, const float* z, const std::uint8_t* binned,
                                        std::size_t slots, std::uint32_t live, bool all) noexcept;
  /// How many of slots [begin, end) are binned, and their box.
  struct Survey {
    std::uint32_t live = 0;
    Box box{};
  };
  [[nodiscard]] static Survey survey(const float* x, const float* z, const std::uint8_t* binned,
                                     std::size_t begin, std::size_t end) noexcept;
  /// survey() of every slot, by range on the workers where there are enough.
  [[nodiscard]] Survey survey_all(const float* x, const float* z, const std::uint8_t* binned,
                                  std::size_t slots);
  /// How many ranges a pass over `count` items runs in.
  [[nodiscard]] std::uint32_t parts_for(std::size_t count) const noexcept;
  /// The same for a counting sort of `slots` over this build's cells.
  [[nodiscard]] std::uint32_t parts_for_sort(std::size_t slots) const noexcept;
  /// How many cells of side `cell` cover `box`.
  [[nodiscard]] static double cells_for_box(const Box& box, double cell) noexcept;
  /// The box of the binned entities within a margin of the bulk of a sample of them (the sample's
  /// 1st to 99th percentile on each axis, widened by its own width and 16 cells each way):
  /// `box` for a world without outliers, the bulk's box for one with a few far away.
  [[nodiscard]] Box dense_box(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                              bool all, const Box& box, float min_cell_size);
  void fit_cells(const Box& box, float min_cell_size, std::uint32_t max_cells);
  [[nodiscard]] bool try_incremental(const float* x, const float* z, std::size_t slots, std::uint32_t live,
                                     bool all, std::uint32_t last_cells_x, std::uint32_t last_cells_z);
  void bin_and_count(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots, bool all);
  void place_items(const float* x, const float* z, std::size_t slots, std::uint32_t live, bool all);
  /// The two above on the workers, in `parts` ranges, every slot binned.
  void sort_in_parts(const float* x, const float* z, std::size_t slots, std::uint32_t parts);
  void size_items(std::size_t slots, std::uint32_t live);
  void build_partitioned(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                         std::uint32_t live, bool all, const QueryCover* cover);
  struct Placed;
  /// The items `from` into their cells' runs, each at its cell's cursor (advanced past it).
  void place_in_cells(const Placed* from, std::uint32_t count, const CellBinning& binning,
                      std::uint32_t* cursor);
  /// Stamps the cells `cover` reaches (listing them in covered_); false, having stopped, once
  /// they are a quarter of all.
  bool mark_covered(const QueryCover& cover);
  /// The incremental build: true when done, false (having written only item_x_ and item_z_)
  /// when more than `max_moved` entities changed cell.
  bool refresh(const float* x, const float* z, std::size_t max_moved);
  /// Moves the entities of moved_ to their new cells' runs, in the counting sort's order.
  void move_changed();
  /// A run of last build's items [src, src + count) that goes to [dst, dst + count) of this
  /// build's, in its old cell (kKeepCell) or, for an item that changed cell, in `cell`.
  static constexpr std::uint32_t kKeepCell = 0xffffffffu;
  struct Segment {
    std::uint32_t src, dst, count, cell;
  };
  /// Copies the part of segments_ that lands in [begin, end) of this build's items.
  void copy_segments(std::uint32_t begin, std::uint32_t end);

  std::vector<std::uint32_t> cell_of_;     // per entity slot, kNotBinned if not binned
  std::vector<std::uint32_t> cell_start_;  // cells + 1 prefix sums
  std::vector<std::uint32_t> items_;
  std::vector<std::uint32_t> previous_items_;  // last build's items: this build's scatter order
  bool kept_all_ = false;                      // every slot was binned at the last build
  bool last_incremental_ = false;
  bool last_partitioned_ = false;  // then item_cell_ was not written
  // Builds to wait before trying the incremental one again, after one found too many moved: in a
  // world where most entities cross a cell edge each tick, the try would cost half a pass a tick.
  std::uint32_t incremental_wait_ = 0;
  std::vector<float> item_x_;
  std::vector<float> item_z_;
  std::vector<std::uint32_t> item_cell_;  // the cell of items_[k]
  // The incremental build's scratch: the entities that changed cell, in position order; the same
  // sorted by where they go; the arrays moved into; per cell the change of its start.
  std::vector<CellMove> moved_;
  std::vector<CellMove> placed_;
  std::vector<Segment> segments_;  // move_changed()'s plan, in destination order
  // The parallel passes' scratch, per range: its survey, and the refresh's moves and their count
  // (kTooManyMoved when over the bound).
  std::vector<Survey> part_survey_;
  std::vector<std::vector<CellMove>> part_moved_;
  std::vector<std::size_t> part_moved_count_;
  // build_partitioned()'s and sort_in_parts()': each range's counts by cell (then by block, or
  // its cursors), and how many covered entities it kept (or where each range of blocks' entities
  // start).
  std::vector<std::vector<std::uint32_t>> part_counts_;
  std::vector<std::uint32_t> part_kept_;
  std::vector<float> spare_x_;
  std::vector<float> spare_z_;
  std::vector<std::uint32_t> spare_cell_;
  std::vector<std::int32_t> start_delta_;
  std::vector<float> sample_;  // dense_box()'s sample of one axis
  // place_partitioned()'s scratch: the entities by block of cells, and each block's cursor.
  struct Placed {
    std::uint32_t entity;
    float x, z;
  };
  std::vector<Placed> partition_;
  std::vector<std::uint32_t> block_cursor_;
  // The cells a cover reaches: filled_[cell] == fill_epoch_, listed in covered_.
  bool covered_only_ = false;
  std::uint32_t fill_epoch_ = 0;
  std::vector<std::uint32_t> filled_;
  std::vector<std::uint32_t> covered_;
};

}  // namespace sightline
