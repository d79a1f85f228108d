// Steps both client passes take (the general one in client_pass.cpp, the plain one in
// plain_pass.cpp): scratch sizing, the pass's epoch, the grid scan of one origin, the merge of
// the new set.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sightline_assert.h"
#include "world_impl.h"

namespace sightline {

/// A size that fits 32 bits (entity slots, set sizes and record counts all do).
template <class Array>
[[nodiscard]] std::uint32_t size32(const Array& v) noexcept {
  return static_cast<std::uint32_t>(v.size());
}

/// The squared distance of two points, as every rule measures it (no fused multiply-add).
[[nodiscard]] inline float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

/// Sizes the scratch to the entity slots and the grid's rows, so no pass ever grows it (the rows
/// grow only with the grid, which then allocates anyway). Once per run of passes: neither count
/// changes within a tick.
void size_scratch(PassScratch& scratch, std::size_t entity_slots, std::uint32_t grid_rows);

/// Starts a pass: a fresh epoch, so no stamp of an earlier pass matches. On wrap-around the
/// stamps are cleared so old ones cannot match.
inline std::uint32_t begin_pass(PassScratch& scratch) {
  if (++scratch.epoch == 0) [[unlikely]] {
    std::fill(scratch.stamp.begin(), scratch.stamp.end(), 0);
    std::fill(scratch.forced.begin(), scratch.forced.end(), 0);
    std::fill(scratch.unseen.begin(), scratch.unseen.end(), 0);
    std::fill(scratch.crowded.begin(), scratch.crowded.end(), 0);
    scratch.epoch = 1;
  }
  SIGHTLINE_ASSERT(scratch.stamp.size() == scratch.forced.size() &&
                   scratch.stamp.size() == scratch.unseen.size());
  return scratch.epoch;
}

/// The runs of the grid's rows (in scratch.runs) that a scan of `radius` around (ox, oz) reads.
/// Counts their candidates in `stats` as distance tests.
/// Reuses the runs of the last call where the cells are the same and the passes run in cell order
/// (clients of one cell then follow each other); forget_runs() before the first call of a tick.
inline NearRuns near_runs(const Grid& grid, PassScratch& scratch, float ox, float oz, float radius,
                          TickStats& stats) {
  const Grid::Range range = grid.cell_range(ox, oz, radius);
  SIGHTLINE_ASSERT(range.z0 <= range.z1 && range.x0 <= range.x1 && range.z1 - range.z0 < scratch.runs.size());
  const Grid::Range& last = scratch.near_range;
  NearRuns near;
  if (scratch.reuse_runs && range.x0 == last.x0 && range.x1 == last.x1 && range.z0 == last.z0 &&
      range.z1 == last.z1) {
    near = scratch.near;
  } else {
    near = {range.z1 - range.z0 + 1, 0};
    ScanRun* const runs = scratch.runs.data();
    for (std::uint32_t row = 0; row < near.rows; ++row) {
      runs[row] = {grid.run_begin(range.z0 + row, range.x0), grid.run_end(range.z0 + row, range.x1)};
      near.candidates += runs[row].end - runs[row].begin;
    }
    if (scratch.reuse_runs) {
      scratch.near_range = range;
      scratch.near = near;
    }
  }
  stats.cell_candidates += near.candidates;
  stats.distance_tests += near.candidates;
  return near;
}

/// Makes the next near_runs read the grid, and the later ones reuse its runs where `in_cell_order`
/// (the passes run in the grid's cell order): once a tick, before the first pass.
inline void forget_runs(PassScratch& scratch, bool in_cell_order) noexcept {
  scratch.near_range = {1, 0, 1, 0};
  scratch.reuse_runs = in_cell_order;
}

/// The grid's entities within sqrt(r2) of (ox, oz) not stamped this pass, in scratch.hits;
/// `radius` (>= sqrt(r2)) picks the cells. Distance first, over the contiguous runs of the cells'
/// rows (vectorised), then the stamp of those in reach. Counts the candidates in `stats`.
inline std::uint32_t scan_near(const Grid& grid, DistanceScan scan, PassScratch& scratch, float ox, float oz,
                               float radius, float r2, TickStats& stats) {
  const std::uint32_t rows = near_runs(grid, scratch, ox, oz, radius, stats).rows;
  return scan(grid.item_x().data(), grid.item_z().data(), grid.items().data(), scratch.runs.data(), rows, ox,
              oz, r2, scratch.stamp.data(), scratch.epoch, scratch.hits.data());
}

/// The entering entities ((index << 8) | SpawnReason, in scratch.entering) sorted by index and
/// appended to `spawns` as records; returns where they start.
inline std::uint32_t write_spawns(PassScratch& scratch, RecordBuffer<SpawnRecord>& spawns,
                                  const std::uint32_t* generation) {
  std::sort(scratch.entering.begin(), scratch.entering.end());
  const auto begin = static_cast<std::uint32_t>(spawns.size());
  const auto count = static_cast<std::uint32_t>(scratch.entering.size());
  spawns.resize_unwritten(begin + count);
  SpawnRecord* const spawned = spawns.data() + begin;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t entering = scratch.entering[i];
    const auto e = static_cast<std::uint32_t>(entering >> 8);
    spawned[i] = {EntityId{e, generation[e]}, static_cast<SpawnReason>(entering & 0xff)};
  }
  return begin;
}

/// Writes the new set at `to`: the old members but those at the sorted positions `gaps`, and the
/// spawned entities (sorted by index, none of them kept) placed by index. Spawns are few: each is
/// placed by a binary search, the kept runs around it copied whole.
inline void merge_set(const EntityId* old_members, std::uint32_t old_count, const std::uint32_t* gaps,
                      std::uint32_t gap_count, const SpawnRecord* spawned, std::uint32_t spawn_count,
                      EntityId* to) {
#if SIGHTLINE_ASSERTS_ON
  EntityId* const first = to;
  for (std::uint32_t g = 1; g < gap_count; ++g) SIGHTLINE_ASSERT(gaps[g - 1] < gaps[g]);
  SIGHTLINE_ASSERT(gap_count == 0 || gaps[gap_count - 1] < old_count);
#endif
  std::uint32_t a = 0;
  std::uint32_t g = 0;
  auto copy_kept = [&](std::uint32_t end) {
    for (; g < gap_count && gaps[g] < end; ++g) {
      to = std::copy(old_members + a, old_members + gaps[g], to);
      a = gaps[g] + 1;
    }
    to = std::copy(old_members + a, old_members + end, to);
    a = end;
  };
  for (std::uint32_t b = 0; b < spawn_count; ++b) {
    const std::uint32_t e = spawned[b].entity.index;
    const EntityId* const at = std::lower_bound(old_members + a, old_members + old_count, e,
                                                [](EntityId m, std::uint32_t x) { return m.index < x; });
    copy_kept(static_cast<std::uint32_t>(at - old_members));
    *to++ = spawned[b].entity;
  }
  copy_kept(old_count);
#if SIGHTLINE_ASSERTS_ON
  // The kept members and the spawns were disjoint and each sorted: the set is strictly sorted.
  SIGHTLINE_ASSERT(to - first == std::ptrdiff_t{old_count} - gap_count + spawn_count);
  for (EntityId* at = first + 1; at < to; ++at)
    SIGHTLINE_ASSERT_MSG(at[-1].index < at->index, "merged set sorted and disjoint");
#endif
}

}  // namespace sightline
