// Which process owns which part of a space, when one world is served by several (shards): a
// uniform grid of region cells, each owned by one shard, and the questions a shard asks of it
// every tick: who owns a point, which other shards must hold a copy of an entity (its audience),
// when an entity's authority moves, and which shards are neighbours.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sightline/export.h"
#include "sightline/status.h"

namespace sightline {

/// A shard's number, 0..kMaxShards - 1.
using ShardId = std::uint16_t;

/// Most shards a region map names.
inline constexpr std::uint32_t kMaxShards = 4096;
/// Most region cells a region map holds (cols * rows).
inline constexpr std::uint32_t kMaxRegionCells = 1u << 20;

/// A region map as plain values: the grid, its owners and the widths that decide ghosts and
/// handovers. RegionMap::create checks it.
struct RegionMapDef {
  /// Rises with every change of the map; a shard ignores a map older than the one it holds.
  std::uint64_t epoch = 0;
  /// The first tick at which the map is in force.
  std::uint64_t effective_tick = 0;
  float origin_x = 0.0f;  ///< World units: the low corner of cell (0, 0), finite.
  float origin_z = 0.0f;
  /// Side of a region cell, world units, finite, > 0 and >= band, so that a disc of radius
  /// band touches at most 3 x 3 cells.
  float cell_size = 0.0f;
  std::uint32_t cols = 0;  ///< Cells along x, >= 1.
  std::uint32_t rows = 0;  ///< Cells along z, >= 1; cols * rows <= kMaxRegionCells.
  /// The owner of each cell, row by row (cell (col, row) at row * cols + col), each < kMaxShards.
  std::vector<ShardId> owners;
  /// The ghost band w, world units, finite, >= 0: an entity is copied to every other shard
  /// owning a cell within w (plus its bound radius) of it. At least L + b_max + h + one tick of
  /// motion for a client near a border to see what one process would show it
  /// (docs/scale-out.md).
  float band = 0.0f;
  /// Authority hysteresis h, world units, finite, in [0, band]: an entity stays with its owner
  /// while within h of the owner's cells.
  float hysteresis = 0.0f;
  friend bool operator==(const RegionMapDef&, const RegionMapDef&) = default;
};

/// A RegionMapDef of blocks: a cols x rows grid of cells of `cell_size` from the origin, cut into
/// shard_cols x shard_rows blocks of about equal size, shard s owning block (s % shard_cols,
/// s / shard_cols); with more blocks than cells along an axis, some shards get none. Check it
/// with RegionMap::create, which refuses it (naming `owners`) when shard_cols or shard_rows is 0,
/// cols * rows exceeds kMaxRegionCells or a shard id reaches kMaxShards. Keep
/// shard_cols * shard_rows <= kMaxShards: beyond 65,536 blocks the 16-bit ids wrap.
[[nodiscard]] SIGHTLINE_API RegionMapDef region_blocks(float origin_x, float origin_z, float cell_size,
                                                       std::uint32_t cols, std::uint32_t rows,
                                                       std::uint32_t shard_cols, std::uint32_t shard_rows,
                                                       float band, float hysteresis);

/// A checked region map and its answers. Positions outside the grid belong to the nearest edge
/// cell: the map covers the whole plane. Cell coordinates come from floor((x - origin_x) /
/// cell_size) in float, as the World's grid computes them, so every process finds the same cell.
class SIGHTLINE_API RegionMap {
 public:
  /// Refuses (invalid_def, naming the field and value) a def that breaks a rule of
  /// RegionMapDef.
  [[nodiscard]] static Result<RegionMap> create(RegionMapDef def);

  [[nodiscard]] const RegionMapDef& def() const noexcept { return def_; }
  /// The shard owning the cell of (x, z).
  [[nodiscard]] ShardId owner_at(float x, float z) const noexcept;
  /// The shards other than `self` owning a cell whose rectangle lies within band + bound of
  /// (x, z), ascending, into `out` (cleared first): where an entity of bound radius `bound` owned
  /// by `self` must be copied. Costs the cells the disc covers.
  void audience(float x, float z, float bound, ShardId self, std::vector<ShardId>& out) const;
  /// The shard that owns an entity at (x, z) whose owner was `current`: `current` while some cell
  /// of it lies within the hysteresis of (x, z), else owner_at(x, z).
  [[nodiscard]] ShardId authority(ShardId current, float x, float z) const noexcept;
  /// The shards other than `shard` owning a cell within band of one of its cells, ascending:
  /// those it exchanges frames with.
  [[nodiscard]] std::span<const ShardId> neighbours(ShardId shard) const noexcept;
  /// The shards the map names, ascending.
  [[nodiscard]] std::span<const ShardId> shards() const noexcept { return shards_; }

 private:
  explicit RegionMap(RegionMapDef def);
  struct CellBox {
    std::uint32_t col0, row0, col1, row1;  // inclusive
  };
  [[nodiscard]] std::uint32_t col_of(float x) const noexcept;
  [[nodiscard]] std::uint32_t row_of(float z) const noexcept;
  [[nodiscard]] CellBox cells_near(float x, float z, float reach) const noexcept;
  // Squared distance from (x, z) to the rectangle of cell (col, row); 0 inside.
  [[nodiscard]] double distance2(float x, float z, std::uint32_t col, std::uint32_t row) const noexcept;

  RegionMapDef def_;
  std::vector<ShardId> shards_;
  std::vector<std::uint32_t> neighbour_begin_;  // per shard id, into neighbour_list_ (kMaxShards + 1)
  std::vector<ShardId> neighbour_list_;
};

}  // namespace sightline
