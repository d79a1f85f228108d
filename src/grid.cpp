#include "grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "simd.h"
#include "task_runner.h"

namespace sightline {

// Builds to wait after an incremental try that found too many moved: where most entities cross a
// cell edge every tick, a failed try (about half a refresh pass) then comes once in nine builds.
constexpr std::uint32_t kIncrementalWait = 8;
constexpr std::uint32_t kExactAxis = 1u << 24;  // every cell index a float holds exactly
// dense_box()'s sample: its 1st and 99th percentiles are the 10th from each end.
constexpr std::size_t kDenseSample = 1024;

namespace {

double cells_for(double extent, double size) { return std::floor(extent / size) + 1.0; }

}  // namespace

// In double: extents up to 2 * kMaxCoordinate stay exact enough and the product cannot overflow.
double Grid::cells_for_box(const Box& box, double cell) noexcept {
  return cells_for(static_cast<double>(box.max_x) - box.min_x, cell) *
         cells_for(static_cast<double>(box.max_z) - box.min_z, cell);
}

void Grid::build(std::span<const float> xs, std::span<const float> zs, std::span<const std::uint8_t> alive,
                 float min_cell_size, std::uint32_t max_cells, const QueryCover* cover) {
  covered_only_ = false;
  const std::size_t slots = alive.size();
  const std::uint32_t last_cells_x = cells_x_;
  const std::uint32_t last_cells_z = cells_z_;
  const float* const x = xs.data();
  const float* const z = zs.data();
  const std::uint8_t* const binned = alive.data();
  const Survey found = survey_all(x, z, binned, slots);
  const std::uint32_t live = found.live;
  // Usually every slot is binned: then no pass needs to look at `alive`, and the loops stay
  // free of branches.
  const bool all = live == slots;
  Box box = found.box;
  if (live >= kOutlierMinEntities && cells_for_box(box, min_cell_size) > max_cells) {
    box = dense_box(x, z, binned, slots, all, box, min_cell_size);
  }
  fit_cells(box, min_cell_size, max_cells);
  if (slots >= partition_min_slots && cells_x_ <= kExactAxis && cells_z_ <= kExactAxis) {
    build_partitioned(x, z, binned, slots, live, all, cover);
    return;
  }
  if (try_incremental(x, z, slots, live, all, last_cells_x, last_cells_z)) return;
  if (const std::uint32_t parts = parts_for_sort(slots);
      parts > 1 && all && cells_x_ <= kExactAxis && cells_z_ <= kExactAxis) {
    sort_in_parts(x, z, slots, parts);
    return;
  }
  bin_and_count(x, z, binned, slots, all);
  place_items(x, z, slots, live, all);
}

// In four independent lanes so the compares do not wait on one another.
Grid::Box Grid::bounding_box(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                             std::uint32_t live, bool all) noexcept {
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
  Box box{std::min(std::min(lo_x[0], lo_x[1]), std::min(lo_x[2], lo_x[3])),
          std::max(std::max(hi_x[0], hi_x[1]), std::max(hi_x[2], hi_x[3])),
          std::min(std::min(lo_z[0], lo_z[1]), std::min(lo_z[2], lo_z[3])),
          std::max(std::max(hi_z[0], hi_z[1]), std::max(hi_z[2], hi_z[3]))};
  if (live == 0) box = Box{0.0f, 0.0f, 0.0f, 0.0f};
  return box;
}

Grid::Survey Grid::survey(const float* x, const float* z, const std::uint8_t* binned, std::size_t begin,
                          std::size_t end) noexcept {
  Survey s;
  for (std::size_t i = begin; i < end; ++i) s.live += binned[i] != 0;
  s.box = bounding_box(x + begin, z + begin, binned + begin, end - begin, s.live, s.live == end - begin);
  return s;
}

std::uint32_t Grid::parts_for(std::size_t count) const noexcept {
  if (tasks == nullptr || count < parallel_min_slots) return 1;
  return tasks->workers();
}

// Each range of a sort counts into cells of its own: no more ranges than keep those counters
// (ranges x cells) within the items sorted, so a sparse world's many cells cost no more than one
// thread's sort would touch.
std::uint32_t Grid::parts_for_sort(std::size_t slots) const noexcept {
  const std::uint32_t parts = parts_for(slots);
  if (!cap_sort_ranges) return parts;
  const std::size_t cells = std::size_t{cells_x_} * cells_z_;
  return static_cast<std::uint32_t>(std::min<std::size_t>(parts, std::max<std::size_t>(1, slots / cells)));
}

namespace {

// A pass of the grid's over ranges of its items: range p of `parts` is [count * p / parts,
// count * (p + 1) / parts), whichever worker runs it.
template <class Pass>
void run_parts(TaskRunner& tasks, std::uint32_t parts, Pass& pass) {
  tasks.run(
      parts, 1,
      [](std::uint32_t first, std::uint32_t last, std::uint32_t, void* context) {
        for (std::uint32_t p = first; p < last; ++p) (*static_cast<Pass*>(context))(p);
      },
      &pass);
}

std::size_t part_begin(std::size_t count, std::uint32_t part, std::uint32_t parts) noexcept {
  return count * part / parts;
}

}  // namespace

Grid::Survey Grid::survey_all(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots) {
  const std::uint32_t parts = parts_for(slots);
  if (parts == 1) return survey(x, z, binned, 0, slots);
  part_survey_.resize(parts);
  auto pass = [&](std::uint32_t p) {
    part_survey_[p] = survey(x, z, binned, part_begin(slots, p, parts), part_begin(slots, p + 1, parts));
  };
  run_parts(*tasks, parts, pass);
  // Minima and maxima in any order are the same: the whole box, exactly.
  Survey all;
  bool first = true;
  for (const Survey& part : part_survey_) {
    all.live += part.live;
    if (part.live == 0) continue;
    if (first) {
      all.box = part.box;
      first = false;
      continue;
    }
    all.box.min_x = std::min(all.box.min_x, part.box.min_x);
    all.box.max_x = std::max(all.box.max_x, part.box.max_x);
    all.box.min_z = std::min(all.box.min_z, part.box.min_z);
    all.box.max_z = std::max(all.box.max_z, part.box.max_z);
  }
  return all;
}

// A sample at a fixed stride over the slots (no randomness: the grid depends only on the
// positions), then one pass for the box of the entities near the sample's bulk. Where no entity
// lies far out the result is `box` itself, so the grid is the one the full box gives.
Grid::Box Grid::dense_box(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                          bool all, const Box& box, float min_cell_size) {
  const std::size_t stride = std::max<std::size_t>(1, slots / kDenseSample);
  float lo[2], hi[2];
  for (int axis = 0; axis < 2; ++axis) {
    const float* const v = axis == 0 ? x : z;
    sample_.clear();
    for (std::size_t i = 0; i < slots && sample_.size() < kDenseSample; i += stride) {
      if (all || binned[i]) sample_.push_back(v[i]);
    }
    if (sample_.empty()) return box;
    const std::size_t cut = sample_.size() / 100;
    const auto low = sample_.begin() + static_cast<std::ptrdiff_t>(cut);
    const auto high = sample_.end() - 1 - static_cast<std::ptrdiff_t>(cut);
    std::nth_element(sample_.begin(), low, sample_.end());
    const float low_value = *low;
    std::nth_element(sample_.begin(), high, sample_.end());
    const float margin = (*high - low_value) + 16.0f * min_cell_size;
    lo[axis] = low_value - margin;
    hi[axis] = *high + margin;
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Box dense{kInf, -kInf, kInf, -kInf};
  std::size_t i = 0;
#if defined(__SSE2__)
  if (all) {
    // As bounding_box(): the scalar loop below is 26 instructions an entity by callgrind, this
    // one about 5. An entity outside the window contributes +-infinity, which changes nothing.
    const __m128 wlx = _mm_set1_ps(lo[0]), whx = _mm_set1_ps(hi[0]);
    const __m128 wlz = _mm_set1_ps(lo[1]), whz = _mm_set1_ps(hi[1]);
    const __m128 inf = _mm_set1_ps(kInf), minus_inf = _mm_set1_ps(-kInf);
    __m128 lx = inf, hx = minus_inf, lz = inf, hz = minus_inf;
    for (; i + 4 <= slots; i += 4) {
      const __m128 vx = _mm_loadu_ps(x + i);
      const __m128 vz = _mm_loadu_ps(z + i);
      const __m128 in = _mm_and_ps(_mm_and_ps(_mm_cmpge_ps(vx, wlx), _mm_cmple_ps(vx, whx)),
                                   _mm_and_ps(_mm_cmpge_ps(vz, wlz), _mm_cmple_ps(vz, whz)));
      lx = _mm_min_ps(lx, _mm_or_ps(_mm_and_ps(in, vx), _mm_andnot_ps(in, inf)));
      hx = _mm_max_ps(hx, _mm_or_ps(_mm_and_ps(in, vx), _mm_andnot_ps(in, minus_inf)));
      lz = _mm_min_ps(lz, _mm_or_ps(_mm_and_ps(in, vz), _mm_andnot_ps(in, inf)));
      hz = _mm_max_ps(hz, _mm_or_ps(_mm_and_ps(in, vz), _mm_andnot_ps(in, minus_inf)));
    }
    float l[4][4];
    _mm_storeu_ps(l[0], lx);
    _mm_storeu_ps(l[1], hx);
    _mm_storeu_ps(l[2], lz);
    _mm_storeu_ps(l[3], hz);
    for (int lane = 0; lane < 4; ++lane) {
      dense.min_x = std::min(dense.min_x, l[0][lane]);
      dense.max_x = std::max(dense.max_x, l[1][lane]);
      dense.min_z = std::min(dense.min_z, l[2][lane]);
      dense.max_z = std::max(dense.max_z, l[3][lane]);
    }
  }
#endif
  for (; i < slots; ++i) {
    const bool inside =
        (all || binned[i]) && x[i] >= lo[0] && x[i] <= hi[0] && z[i] >= lo[1] && z[i] <= hi[1];
    dense.min_x = inside && x[i] < dense.min_x ? x[i] : dense.min_x;
    dense.max_x = inside && x[i] > dense.max_x ? x[i] : dense.max_x;
    dense.min_z = inside && z[i] < dense.min_z ? z[i] : dense.min_z;
    dense.max_z = inside && z[i] > dense.max_z ? z[i] : dense.max_z;
  }
  return dense.min_x <= dense.max_x ? dense : box;
}

// Sized in double: extents up to 2 * kMaxCoordinate stay exact enough, and the cell count never
// overflows before it is capped.
void Grid::fit_cells(const Box& box, float min_cell_size, std::uint32_t max_cells) {
  double cell = min_cell_size;
  const double extent_x = static_cast<double>(box.max_x) - box.min_x;
  const double extent_z = static_cast<double>(box.max_z) - box.min_z;
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
  origin_x_ = box.min_x;
  origin_z_ = box.min_z;
  cell_size_ = static_cast<float>(cell);
  if (cell_size_ < min_cell_size) cell_size_ = min_cell_size;
  inv_cell_size_ = 1.0f / cell_size_;
  cells_x_ = static_cast<std::uint32_t>(nx);
  cells_z_ = static_cast<std::uint32_t>(nz);
  last_x_ = static_cast<float>(cells_x_ - 1);
  last_z_ = static_cast<float>(cells_z_ - 1);
}

// The same slots in the same cell counts: last build's items, in their cells, are this build's
// but for the few that changed cell (none may have: cells are compared by index, so a shifted
// origin costs only the entities it carries over an edge). Beyond a sixteenth moved the sort
// runs instead: a bound on the moving's cost, not a measured break-even.
bool Grid::try_incremental(const float* x, const float* z, std::size_t slots, std::uint32_t live, bool all,
                           std::uint32_t last_cells_x, std::uint32_t last_cells_z) {
  last_incremental_ = false;
  if (incremental_wait_ != 0) {
    --incremental_wait_;
  } else if (incremental && all && kept_all_ && !last_partitioned_ && live != 0 && items_.size() == slots &&
             cells_x_ == last_cells_x && cells_z_ == last_cells_z && cells_x_ <= kExactAxis &&
             cells_z_ <= kExactAxis) {
    if (refresh(x, z, slots / 16 + 8)) {
      last_incremental_ = true;
      return true;
    }
    incremental_wait_ = kIncrementalWait;
  }
  return false;
}

// Each slot's cell in cell_of_ (kNotBinned if not binned), and in cell_start_ the cells' starts
// as prefix sums of their counts.
void Grid::bin_and_count(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                         bool all) {
  const std::uint32_t cells = cells_x_ * cells_z_;
  cell_of_.resize(slots);
  cell_start_.assign(static_cast<std::size_t>(cells) + 1, 0);
  start_delta_.reserve(static_cast<std::size_t>(cells) + 1);
  block_cursor_.reserve(static_cast<std::size_t>(cells) + 1);
  std::uint32_t* const cell_of = cell_of_.data();
  std::uint32_t* const start = cell_start_.data();
  // Locals, not members: a store into start[] could otherwise alias them and force reloads.
  const float ox = origin_x_, oz = origin_z_, inv = inv_cell_size_, last_x = last_x_, last_z = last_z_;
  const std::uint32_t cx = cells_x_, cz = cells_z_;
  if (all && cx <= kExactAxis && cz <= kExactAxis) {
    // bin_axis() as two clamps then a cast (CellBinning::cell, the same cell), in a loop of its
    // own that vectorises; the counts follow in a second, short loop.
    const CellBinning binning{ox, oz, inv, last_x, last_z, cx};
    for (std::size_t i = 0; i < slots; ++i) cell_of[i] = binning.cell(x[i], z[i]);
    for (std::size_t i = 0; i < slots; ++i) ++start[cell_of[i] + 1];
  } else {
    for (std::size_t i = 0; i < slots; ++i) {
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
}

// A stable counting sort: cell_start_'s starts serve as running cursors, then shift back.
void Grid::place_items(const float* x, const float* z, std::size_t slots, std::uint32_t live, bool all) {
  // Last tick's items, in cell order, are this tick's order but for the few that changed cell,
  // so scattering in that order writes each cell's run nearly front to back.
  const bool keep_order = all && kept_all_ && !last_partitioned_ && items_.size() == slots;
  size_items(slots, live);
  const std::uint32_t cells = cells_x_ * cells_z_;
  const std::uint32_t* const cell_of = cell_of_.data();
  std::uint32_t* const start = cell_start_.data();
  std::uint32_t* const items = items_.data();
  float* const item_x = item_x_.data();
  float* const item_z = item_z_.data();
  std::uint32_t* const item_cell = item_cell_.data();
  auto place = [&](std::uint32_t e) SIGHTLINE_FORCE_INLINE {
    const std::uint32_t c = cell_of[e];
    const std::uint32_t at = start[c]++;
    items[at] = e;
    item_x[at] = x[e];
    item_z[at] = z[e];
    item_cell[at] = c;
  };
  if (keep_order) {
    const std::uint32_t* const order = previous_items_.data();
    for (std::size_t i = 0; i < slots; ++i) place(order[i]);
  } else {
    for (std::size_t i = 0; i < slots; ++i) {
      if (all || cell_of[i] != kNotBinned) place(static_cast<std::uint32_t>(i));
    }
  }
  for (std::uint32_t c = cells; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;
  kept_all_ = all;
  last_partitioned_ = false;
}

// bin_and_count() and place_items() on the workers, every slot binned: each slot's cell by
// ranges of slots; then each range of the scatter order (last build's items where they are this
// build's order, else the slots) counts its cells and scatters at cursors that follow the ranges
// before it in every cell: the items one thread's sort gives.
void Grid::sort_in_parts(const float* x, const float* z, std::size_t slots, std::uint32_t parts) {
  const std::uint32_t cells = cells_x_ * cells_z_;
  const bool keep_order = kept_all_ && !last_partitioned_ && items_.size() == slots;
  cell_of_.resize(slots);
  cell_start_.assign(static_cast<std::size_t>(cells) + 1, 0);
  start_delta_.reserve(static_cast<std::size_t>(cells) + 1);
  block_cursor_.reserve(static_cast<std::size_t>(cells) + 1);
  size_items(slots, static_cast<std::uint32_t>(slots));
  if (part_counts_.size() < parts) part_counts_.resize(parts);
  for (std::uint32_t p = 0; p < parts; ++p) part_counts_[p].resize(cells);
  const CellBinning binning{origin_x_, origin_z_, inv_cell_size_, last_x_, last_z_, cells_x_};
  std::uint32_t* const cell_of = cell_of_.data();
  const std::uint32_t* const order = keep_order ? previous_items_.data() : nullptr;
  auto bin = [&](std::uint32_t p) {
    const std::size_t end = part_begin(slots, p + 1, parts);
    for (std::size_t i = part_begin(slots, p, parts); i < end; ++i) cell_of[i] = binning.cell(x[i], z[i]);
  };
  run_parts(*tasks, parts, bin);
  auto count = [&](std::uint32_t p) {
    std::uint32_t* const counts = part_counts_[p].data();
    std::fill(counts, counts + cells, 0u);
    const std::size_t end = part_begin(slots, p + 1, parts);
    for (std::size_t k = part_begin(slots, p, parts); k < end; ++k) {
      ++counts[cell_of[order != nullptr ? order[k] : k]];
    }
  };
  run_parts(*tasks, parts, count);
  // By ranges of cells: each range's count becomes its cursor within the cell, and the cell's
  // total its count in cell_start_ (summed into starts after).
  std::uint32_t* const start = cell_start_.data();
  auto cursors = [&](std::uint32_t p) {
    const std::size_t end = part_begin(cells, p + 1, parts);
    for (std::size_t c = part_begin(cells, p, parts); c < end; ++c) {
      std::uint32_t at = 0;
      for (std::uint32_t q = 0; q < parts; ++q) at += std::exchange(part_counts_[q][c], at);
      start[c + 1] = at;
    }
  };
  run_parts(*tasks, parts, cursors);
  for (std::uint32_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  std::uint32_t* const items = items_.data();
  float* const item_x = item_x_.data();
  float* const item_z = item_z_.data();
  std::uint32_t* const item_cell = item_cell_.data();
  auto scatter = [&](std::uint32_t p) {
    std::uint32_t* const cursor = part_counts_[p].data();
    const std::size_t end = part_begin(slots, p + 1, parts);
    for (std::size_t k = part_begin(slots, p, parts); k < end; ++k) {
      const auto e = static_cast<std::uint32_t>(order != nullptr ? order[k] : k);
      const std::uint32_t c = cell_of[e];
      const std::uint32_t at = start[c] + cursor[c]++;
      items[at] = e;
      item_x[at] = x[e];
      item_z[at] = z[e];
      item_cell[at] = c;
    }
  };
  run_parts(*tasks, parts, scatter);
  kept_all_ = true;
  last_partitioned_ = false;
}

// Last build's items become previous_items_ (the next scatter's order); every array sized for
// `live` items, within a capacity reserved for every slot.
void Grid::size_items(std::size_t slots, std::uint32_t live) {
  items_.swap(previous_items_);
  if (items_.capacity() < slots) {
    // The incremental build's arrays too: it must not allocate in a steady tick either.
    for (auto* v : {&items_, &previous_items_, &item_cell_, &spare_cell_}) v->reserve(slots);
    for (auto* v : {&item_x_, &item_z_, &spare_x_, &spare_z_}) v->reserve(slots);
    moved_.reserve(slots / 16 + 8);
    segments_.reserve(4 * (slots / 16 + 8) + 2);  // a move splits a run twice and adds one
    if (tasks != nullptr) {
      part_moved_.resize(tasks->workers());
      for (std::vector<CellMove>& moves : part_moved_) moves.reserve(slots / 16 + 8);
      part_moved_count_.reserve(tasks->workers());
      part_survey_.reserve(tasks->workers());
    }
    sample_.reserve(kDenseSample);
    if (slots >= partition_min_slots) partition_.reserve(slots);
    cell_of_.reserve(slots);
    placed_.reserve(slots / 16 + 8);
  }
  items_.resize(live);
  item_x_.resize(live);
  item_z_.resize(live);
  item_cell_.resize(live);
}

// The counting sort in slot order, in stable passes none of which writes at random into arrays
// larger than the caches: the cells' counts; the entities to blocks of consecutive cells (a few
// hundred blocks of about kBlockItems each, every block written front to back); from each block to
// their cells (writes within the block's run of the items, which stays in cache). Cells are
// computed where needed rather than stored: a pass over a stored cell per entity costs more memory
// traffic than the arithmetic. item_cell_ is left unwritten: no incremental build follows.
bool Grid::mark_covered(const QueryCover& cover) {
  const std::uint32_t cells = cells_x_ * cells_z_;
  if (filled_.size() < cells) filled_.resize(cells, 0);
  if (covered_.capacity() < cells / 4 + 1) covered_.reserve(cells / 4 + 1);
  if (++fill_epoch_ == 0) {  // wrapped: no stamp may look current
    std::fill(filled_.begin(), filled_.end(), 0);
    fill_epoch_ = 1;
  }
  covered_.clear();
  std::uint32_t* const filled = filled_.data();
  for (std::size_t p = 0; p < cover.x.size(); ++p) {
    const Range r = cell_range(cover.x[p], cover.z[p], cover.radius);
    for (std::uint32_t row = r.z0; row <= r.z1; ++row) {
      for (std::uint32_t c = row * cells_x_ + r.x0; c <= row * cells_x_ + r.x1; ++c) {
        if (filled[c] == fill_epoch_) continue;
        if (covered_.size() >= cells / 4) return false;
        filled[c] = fill_epoch_;
        covered_.push_back(c);
      }
    }
  }
  return true;
}

void Grid::build_partitioned(const float* x, const float* z, const std::uint8_t* binned, std::size_t slots,
                             std::uint32_t live, bool all, const QueryCover* cover) {
  constexpr std::uint32_t kBlockItems = 8192;
  const std::uint32_t cells = cells_x_ * cells_z_;
  const std::uint32_t parts = parts_for_sort(slots);
  cell_start_.assign(static_cast<std::size_t>(cells) + 1, 0);
  start_delta_.reserve(static_cast<std::size_t>(cells) + 1);
  block_cursor_.reserve(static_cast<std::size_t>(cells) + 1);
  size_items(slots, live);
  std::uint32_t* const start = cell_start_.data();
  const CellBinning binning{origin_x_, origin_z_, inv_cell_size_, last_x_, last_z_, cells_x_};
  // Each pass over a range of slots bins a chunk in a loop that vectorises, then uses its cells.
  auto for_each_binned = [&](std::size_t begin, std::size_t end, auto&& use) SIGHTLINE_FORCE_INLINE {
    constexpr std::size_t kChunk = 256;
    std::uint32_t chunk[kChunk];
    for (std::size_t first = begin; first < end; first += kChunk) {
      const std::size_t n = std::min(kChunk, end - first);
      for (std::size_t j = 0; j < n; ++j) chunk[j] = binning.cell(x[first + j], z[first + j]);
      for (std::size_t j = 0; j < n; ++j) {
        if (all || binned[first + j]) use(first + j, chunk[j]);
      }
    }
  };
  // On several workers each range of slots counts into cells of its own (part_counts_[p]), then
  // the counts are summed: the same starts as one count of every slot.
  if (parts > 1) {
    if (part_counts_.size() < parts) part_counts_.resize(parts);
    for (std::uint32_t p = 0; p < parts; ++p) part_counts_[p].resize(static_cast<std::size_t>(cells) + 1);
  }
  auto sum_counts = [&](std::uint32_t mask) {
    auto pass = [&](std::uint32_t p) {
      const auto first = static_cast<std::uint32_t>(part_begin(cells, p, parts));
      const auto last = static_cast<std::uint32_t>(part_begin(cells, p + 1, parts));
      for (std::uint32_t c = first; c < last; ++c) {
        std::uint32_t sum = 0;
        for (std::uint32_t q = 0; q < parts; ++q) sum += part_counts_[q][c + 1] & mask;
        start[c + 1] = sum;
      }
    };
    run_parts(*tasks, parts, pass);
  };
  if (cover != nullptr && mark_covered(*cover)) {
    // The counts of every cell, and in the same pass, in slot order, the entities of the covered
    // cells; then those placed in their cells by cursors of their own (cell_start_ stays whole).
    // A covered cell's count starts at kCovered, so one read-modify-write per entity both counts
    // it and says whether to keep it (live < 2^31).
    constexpr std::uint32_t kCovered = 0x80000000u;
    SIGHTLINE_ASSERT(live < kCovered);
    std::uint32_t kept_count = 0;
    if (parts == 1) {
      partition_.resize(live);  // within the capacity reserved with the items
      Placed* const kept = partition_.data();
      for (const std::uint32_t c : covered_) start[c + 1] = kCovered;
      for_each_binned(0, slots, [&](std::size_t i, std::uint32_t c) SIGHTLINE_FORCE_INLINE {
        if (++start[c + 1] & kCovered) kept[kept_count++] = {static_cast<std::uint32_t>(i), x[i], z[i]};
      });
      for (std::uint32_t c = 0; c < cells; ++c) start[c + 1] = (start[c + 1] & ~kCovered) + start[c];
    } else {
      // A range keeps its covered entities at the front of its own span of partition_ (its
      // slots), then the spans close up in range order: slot order, as one pass.
      partition_.resize(slots);  // within the capacity reserved with the items
      part_kept_.resize(parts);
      auto pass = [&](std::uint32_t p) {
        std::uint32_t* const counts = part_counts_[p].data();
        std::fill(counts, counts + cells + 1, 0u);
        for (const std::uint32_t c : covered_) counts[c + 1] = kCovered;
        const std::size_t begin = part_begin(slots, p, parts);
        Placed* const mine = partition_.data() + begin;
        std::uint32_t n = 0;
        for_each_binned(begin, part_begin(slots, p + 1, parts),
                        [&](std::size_t i, std::uint32_t c) SIGHTLINE_FORCE_INLINE {
                          if (++counts[c + 1] & kCovered)
                            mine[n++] = {static_cast<std::uint32_t>(i), x[i], z[i]};
                        });
        part_kept_[p] = n;
      };
      run_parts(*tasks, parts, pass);
      sum_counts(~kCovered);
      for (std::uint32_t c = 0; c < cells; ++c) start[c + 1] += start[c];
      for (std::uint32_t p = 0; p < parts; ++p) {
        const Placed* const from = partition_.data() + part_begin(slots, p, parts);
        std::copy(from, from + part_kept_[p], partition_.data() + kept_count);  // never forward
        kept_count += part_kept_[p];
      }
    }
    block_cursor_.resize(cells);  // within the capacity reserved with the cells
    std::uint32_t* const cursor = block_cursor_.data();
    for (const std::uint32_t c : covered_) cursor[c] = start[c];
    place_in_cells(partition_.data(), kept_count, binning, cursor);
    kept_all_ = all;
    last_partitioned_ = true;
    covered_only_ = true;
    return;
  }
  if (parts == 1) {
    for_each_binned(0, slots, [&](std::size_t, std::uint32_t c) SIGHTLINE_FORCE_INLINE { ++start[c + 1]; });
  } else {
    auto pass = [&](std::uint32_t p) {
      std::uint32_t* const counts = part_counts_[p].data();
      std::fill(counts, counts + cells + 1, 0u);
      for_each_binned(part_begin(slots, p, parts), part_begin(slots, p + 1, parts),
                      [&](std::size_t, std::uint32_t c) SIGHTLINE_FORCE_INLINE { ++counts[c + 1]; });
    };
    run_parts(*tasks, parts, pass);
    sum_counts(~0u);
  }
  for (std::uint32_t c = 0; c < cells; ++c) start[c + 1] += start[c];

  std::uint32_t shift = 0;
  while (shift < 31 && (std::uint64_t{live} << (shift + 1)) <= std::uint64_t{cells} * kBlockItems) ++shift;
  const std::uint32_t blocks = ((cells - 1) >> shift) + 1;
  partition_.resize(live);  // within the capacity reserved with the items
  Placed* const partition = partition_.data();
  if (parts == 1) {
    block_cursor_.resize(blocks);  // within the capacity reserved with the cells
    std::uint32_t* const cursor = block_cursor_.data();
    for (std::uint32_t b = 0; b < blocks; ++b) cursor[b] = start[b << shift];
    for_each_binned(0, slots, [&](std::size_t i, std::uint32_t c) SIGHTLINE_FORCE_INLINE {
      partition[cursor[c >> shift]++] = {static_cast<std::uint32_t>(i), x[i], z[i]};
    });
    place_in_cells(partition, live, binning, start);
  } else {
    // Range p's entities of block b go after those of the ranges before it: its cursor there is
    // the block's start plus their counts in the block (each range's counts summed over the
    // block's cells, in part_counts_[p][b] once the cells' counts are spent).
    auto block_counts = [&](std::uint32_t p) {
      std::uint32_t* const counts = part_counts_[p].data();
      for (std::uint32_t b = 0; b < blocks; ++b) {
        const std::uint32_t last = std::min(cells, (b + 1) << shift);
        std::uint32_t sum = 0;
        for (std::uint32_t c = b << shift; c < last; ++c) sum += counts[c + 1];
        counts[b] = sum;  // b <= c: the cells' counts from b on are not yet read
      }
    };
    run_parts(*tasks, parts, block_counts);
    for (std::uint32_t b = 0; b < blocks; ++b) {
      std::uint32_t at = start[b << shift];
      for (std::uint32_t p = 0; p < parts; ++p) {
        const std::uint32_t count = part_counts_[p][b];
        part_counts_[p][b] = at;
        at += count;
      }
    }
    auto scatter = [&](std::uint32_t p) {
      std::uint32_t* const cursor = part_counts_[p].data();
      for_each_binned(part_begin(slots, p, parts), part_begin(slots, p + 1, parts),
                      [&](std::size_t i, std::uint32_t c) SIGHTLINE_FORCE_INLINE {
                        partition[cursor[c >> shift]++] = {static_cast<std::uint32_t>(i), x[i], z[i]};
                      });
    };
    run_parts(*tasks, parts, scatter);
    // Each range of blocks into its own cells: the cells' cursors (start) of a block are its
    // alone. Where each range's entities lie, read before any cursor moves.
    part_kept_.resize(parts + 1);
    for (std::uint32_t p = 0; p <= parts; ++p) {
      part_kept_[p] = start[std::min<std::size_t>(cells, part_begin(blocks, p, parts) << shift)];
    }
    auto place = [&](std::uint32_t p) {
      place_in_cells(partition + part_kept_[p], part_kept_[p + 1] - part_kept_[p], binning, start);
    };
    run_parts(*tasks, parts, place);
  }
  for (std::uint32_t c = cells; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;
  kept_all_ = all;
  last_partitioned_ = true;
}

void Grid::place_in_cells(const Placed* from, std::uint32_t count, const CellBinning& binning,
                          std::uint32_t* cursor) {
  std::uint32_t* const items = items_.data();
  float* const item_x = item_x_.data();
  float* const item_z = item_z_.data();
  for (std::uint32_t k = 0; k < count; ++k) {
    const Placed p = from[k];
    const std::uint32_t at = cursor[binning.cell(p.x, p.z)]++;
    items[at] = p.entity;
    item_x[at] = p.x;
    item_z[at] = p.z;
  }
}

bool Grid::refresh(const float* x, const float* z, std::size_t max_moved) {
  const CellBinning binning{origin_x_, origin_z_, inv_cell_size_, last_x_, last_z_, cells_x_};
  const std::size_t count = items_.size();
  const std::uint32_t parts = parts_for(count);
  moved_.resize(max_moved);  // within the capacity reserved with the items
  if (parts == 1) {
    const std::size_t moved = refresh_items(binning, items_.data(), x, z, item_x_.data(), item_z_.data(),
                                            item_cell_.data(), count, moved_.data(), max_moved);
    if (moved == kTooManyMoved) return false;
    moved_.resize(moved);
  } else {
    // Each range's moves, in item order, then joined in range order: the one range's list.
    if (part_moved_.size() < parts) part_moved_.resize(parts);
    part_moved_count_.resize(parts);
    for (std::vector<CellMove>& moves : part_moved_) moves.resize(max_moved);  // reserved in size_items()
    auto pass = [&](std::uint32_t p) {
      const std::size_t begin = part_begin(count, p, parts);
      const std::size_t end = part_begin(count, p + 1, parts);
      part_moved_count_[p] =
          refresh_items(binning, items_.data() + begin, x, z, item_x_.data() + begin, item_z_.data() + begin,
                        item_cell_.data() + begin, end - begin, part_moved_[p].data(), max_moved);
    };
    run_parts(*tasks, parts, pass);
    std::size_t moved = 0;
    for (std::uint32_t p = 0; p < parts; ++p) {
      const std::size_t n = part_moved_count_[p];
      if (n == kTooManyMoved || n > max_moved - moved) return false;
      const auto begin = static_cast<std::uint32_t>(part_begin(count, p, parts));
      for (std::size_t k = 0; k < n; ++k)
        moved_[moved + k] = {part_moved_[p][k].at + begin, part_moved_[p][k].cell};
      moved += n;
    }
    moved_.resize(moved);
  }
  if (!moved_.empty()) move_changed();
  return true;
}

// The counting sort over last build's order puts an entity that changed cell at the front of its
// new cell's run when it came from a lower cell (it was met before every entity of the run) and
// at the end when from a higher one; several at one place in the order they were met, the lower
// cell's first. The runs between them move whole.
void Grid::move_changed() {
  const auto n = static_cast<std::uint32_t>(items_.size());
  const std::uint32_t cells = cells_x_ * cells_z_;
  std::uint32_t* const start = cell_start_.data();
  auto goes_to = [start](const CellMove& m) {
    return m.at < start[m.cell] ? start[m.cell] : start[m.cell + 1];
  };
  placed_.assign(moved_.begin(), moved_.end());
  std::sort(placed_.begin(), placed_.end(), [&](const CellMove& a, const CellMove& b) {
    const std::uint32_t to_a = goes_to(a);
    const std::uint32_t to_b = goes_to(b);
    if (to_a != to_b) return to_a < to_b;
    return a.cell != b.cell ? a.cell < b.cell : a.at < b.at;
  });

  // The new order as runs of the old one, each item that moved a run of one at its new place
  // (with its new cell): planned here, then copied by ranges of the destination on the workers.
  segments_.clear();
  std::uint32_t read = 0;
  std::uint32_t write = 0;
  std::size_t gap = 0;
  auto copy_run = [&](std::uint32_t end) {
    if (end > read) segments_.push_back({read, write, end - read, kKeepCell});
    write += end - read;
  };
  // The items before `end`, but those that moved.
  auto copy_to = [&](std::uint32_t end) {
    for (; gap < moved_.size() && moved_[gap].at < end; ++gap) {
      copy_run(moved_[gap].at);
      read = moved_[gap].at + 1;
    }
    copy_run(end);
    read = end;
  };
  for (const CellMove& m : placed_) {
    copy_to(goes_to(m));
    segments_.push_back({m.at, write, 1, m.cell});
    ++write;
  }
  copy_to(n);
  SIGHTLINE_ASSERT(write == n);
  previous_items_.resize(n);
  spare_x_.resize(n);
  spare_z_.resize(n);
  spare_cell_.resize(n);
  const std::uint32_t parts = parts_for(n);
  if (parts == 1) {
    copy_segments(0, n);
  } else {
    auto pass = [&](std::uint32_t p) {
      copy_segments(static_cast<std::uint32_t>(part_begin(n, p, parts)),
                    static_cast<std::uint32_t>(part_begin(n, p + 1, parts)));
    };
    run_parts(*tasks, parts, pass);
  }

  // A cell's run starts later by the entities that joined cells below it, earlier by those that
  // left them.
  start_delta_.assign(static_cast<std::size_t>(cells) + 1, 0);
  for (const CellMove& m : moved_) {
    ++start_delta_[m.cell + 1];
    --start_delta_[item_cell_[m.at] + 1];
  }
  std::int32_t shift = 0;
  for (std::uint32_t c = 0; c <= cells; ++c) {
    shift += start_delta_[c];
    start[c] = static_cast<std::uint32_t>(static_cast<std::int32_t>(start[c]) + shift);
  }
  items_.swap(previous_items_);
  item_x_.swap(spare_x_);
  item_z_.swap(spare_z_);
  item_cell_.swap(spare_cell_);
}

void Grid::copy_segments(std::uint32_t begin, std::uint32_t end) {
  // The first segment that reaches past `begin`: segments are in destination order.
  auto at = std::upper_bound(segments_.begin(), segments_.end(), begin,
                             [](std::uint32_t to, const Segment& s) { return to < s.dst + s.count; });
  for (; at != segments_.end() && at->dst < end; ++at) {
    const std::uint32_t from = std::max(begin, at->dst);
    const std::uint32_t to = std::min(end, at->dst + at->count);
    const std::uint32_t src = at->src + (from - at->dst);
    const std::uint32_t count = to - from;
    std::copy_n(items_.begin() + src, count, previous_items_.begin() + from);
    std::copy_n(item_x_.begin() + src, count, spare_x_.begin() + from);
    std::copy_n(item_z_.begin() + src, count, spare_z_.begin() + from);
    if (at->cell == kKeepCell) {
      std::copy_n(item_cell_.begin() + src, count, spare_cell_.begin() + from);
    } else {
      spare_cell_[from] = at->cell;
    }
  }
}

}  // namespace sightline
