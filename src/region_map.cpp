// The region map: its checks, and the owner, audience, authority and neighbour questions over a
// grid of region cells whose edge cells reach out to infinity.
#include "sightline/region_map.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "format_value.h"

namespace sightline {

RegionMapDef region_blocks(float origin_x, float origin_z, float cell_size, std::uint32_t cols,
                           std::uint32_t rows, std::uint32_t shard_cols, std::uint32_t shard_rows, float band,
                           float hysteresis) {
  RegionMapDef def;
  def.origin_x = origin_x;
  def.origin_z = origin_z;
  def.cell_size = cell_size;
  def.cols = cols;
  def.rows = rows;
  def.band = band;
  def.hysteresis = hysteresis;
  if (shard_cols == 0 || shard_rows == 0 || static_cast<std::uint64_t>(cols) * rows > kMaxRegionCells)
    return def;
  def.owners.resize(static_cast<std::size_t>(cols) * rows);
  for (std::uint32_t row = 0; row < rows; ++row) {
    for (std::uint32_t col = 0; col < cols; ++col) {
      // Block b of n spans cells [b * cells / n, (b + 1) * cells / n).
      const auto block_col = static_cast<std::uint32_t>(std::uint64_t{col} * shard_cols / cols);
      const auto block_row = static_cast<std::uint32_t>(std::uint64_t{row} * shard_rows / rows);
      def.owners[std::size_t{row} * cols + col] = static_cast<ShardId>(block_row * shard_cols + block_col);
    }
  }
  return def;
}

Result<RegionMap> RegionMap::create(RegionMapDef def) {
  const auto bad = [](std::string field, const std::string& value, const char* rule) {
    return Status{ErrorCode::invalid_def, "RegionMapDef::" + field + " is " + value + ": " + rule};
  };
  if (!std::isfinite(def.origin_x)) return bad("origin_x", format_value(def.origin_x), "must be finite");
  if (!std::isfinite(def.origin_z)) return bad("origin_z", format_value(def.origin_z), "must be finite");
  if (!std::isfinite(def.band) || def.band < 0.0f)
    return bad("band", format_value(def.band), "must be finite and >= 0");
  if (!std::isfinite(def.cell_size) || def.cell_size <= 0.0f || def.cell_size < def.band) {
    return bad("cell_size", format_value(def.cell_size), "must be finite, > 0 and >= band");
  }
  if (!(def.hysteresis >= 0.0f && def.hysteresis <= def.band)) {
    return bad("hysteresis", format_value(def.hysteresis), "must be in [0, band]");
  }
  if (def.cols == 0) return bad("cols", "0", "must be >= 1");
  if (def.rows == 0) return bad("rows", "0", "must be >= 1");
  const std::uint64_t cells = std::uint64_t{def.cols} * def.rows;
  if (cells > kMaxRegionCells) {
    return bad("cols", std::to_string(def.cols),
               ("with rows " + std::to_string(def.rows) + " more than kMaxRegionCells cells").c_str());
  }
  if (def.owners.size() != cells) {
    return bad("owners", std::to_string(def.owners.size()) + " entries",
               ("must hold cols * rows = " + std::to_string(cells)).c_str());
  }
  for (std::size_t i = 0; i < def.owners.size(); ++i) {
    if (def.owners[i] >= kMaxShards) {
      return bad("owners[" + std::to_string(i) + "]", std::to_string(def.owners[i]),
                 ("must be < kMaxShards (" + std::to_string(kMaxShards) + ")").c_str());
    }
  }
  return RegionMap(std::move(def));
}

RegionMap::RegionMap(RegionMapDef def) : def_(std::move(def)) {
  shards_ = def_.owners;
  std::sort(shards_.begin(), shards_.end());
  shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
  // Two cells (dc, dr) apart lie max(0, |dc| - 1) and max(0, |dr| - 1) cells apart along each
  // axis (edge cells reach out, but only away from the grid): within band when that gap is.
  // Which pairs are neighbours: a bit per (shard, shard), 2 MiB at most, however many cells.
  std::vector<bool> near(std::size_t{kMaxShards} * kMaxShards);
  const double c = def_.cell_size;
  const double band2 = static_cast<double>(def_.band) * def_.band;
  const auto reach = static_cast<std::int64_t>(std::ceil(static_cast<double>(def_.band) / c)) + 1;
  for (std::uint32_t row = 0; row < def_.rows; ++row) {
    for (std::uint32_t col = 0; col < def_.cols; ++col) {
      const ShardId self = def_.owners[std::size_t{row} * def_.cols + col];
      for (std::int64_t dr = -reach; dr <= reach; ++dr) {
        for (std::int64_t dc = -reach; dc <= reach; ++dc) {
          const std::int64_t r = row + dr;
          const std::int64_t k = col + dc;
          if (r < 0 || k < 0 || r >= def_.rows || k >= def_.cols) continue;
          const ShardId other =
              def_.owners[static_cast<std::size_t>(r) * def_.cols + static_cast<std::size_t>(k)];
          if (other == self) continue;
          const double gx = static_cast<double>(std::max<std::int64_t>(0, std::abs(dc) - 1)) * c;
          const double gz = static_cast<double>(std::max<std::int64_t>(0, std::abs(dr) - 1)) * c;
          if (gx * gx + gz * gz <= band2) near[std::size_t{self} * kMaxShards + other] = true;
        }
      }
    }
  }
  neighbour_begin_.assign(kMaxShards + 1, 0);
  for (const ShardId self : shards_) {
    for (const ShardId other : shards_) {
      if (near[std::size_t{self} * kMaxShards + other]) neighbour_list_.push_back(other);
    }
    neighbour_begin_[self + 1] = static_cast<std::uint32_t>(neighbour_list_.size());
  }
  for (std::uint32_t s = 0; s < kMaxShards; ++s)
    neighbour_begin_[s + 1] = std::max(neighbour_begin_[s + 1], neighbour_begin_[s]);
}

std::uint32_t RegionMap::col_of(float x) const noexcept {
  const float f = std::floor((x - def_.origin_x) / def_.cell_size);
  if (!(f >= 0.0f)) return 0;  // NaN too
  return f >= static_cast<float>(def_.cols - 1) ? def_.cols - 1 : static_cast<std::uint32_t>(f);
}

std::uint32_t RegionMap::row_of(float z) const noexcept {
  const float f = std::floor((z - def_.origin_z) / def_.cell_size);
  if (!(f >= 0.0f)) return 0;
  return f >= static_cast<float>(def_.rows - 1) ? def_.rows - 1 : static_cast<std::uint32_t>(f);
}

ShardId RegionMap::owner_at(float x, float z) const noexcept {
  return def_.owners[std::size_t{row_of(z)} * def_.cols + col_of(x)];
}

// The cells a disc of `reach` around (x, z) may touch, one more each way for the rounding of the
// float cell coordinates.
RegionMap::CellBox RegionMap::cells_near(float x, float z, float reach) const noexcept {
  const float r = std::isfinite(reach) ? reach : std::numeric_limits<float>::max();
  const auto widen_low = [](std::uint32_t v) { return v == 0 ? 0 : v - 1; };
  return {widen_low(col_of(x - r)), widen_low(row_of(z - r)), std::min(col_of(x + r) + 1, def_.cols - 1),
          std::min(row_of(z + r) + 1, def_.rows - 1)};
}

double RegionMap::distance2(float x, float z, std::uint32_t col, std::uint32_t row) const noexcept {
  const double c = def_.cell_size;
  const double inf = std::numeric_limits<double>::infinity();
  const double lo_x = col == 0 ? -inf : def_.origin_x + col * c;
  const double hi_x = col + 1 == def_.cols ? inf : def_.origin_x + (col + 1) * c;
  const double lo_z = row == 0 ? -inf : def_.origin_z + row * c;
  const double hi_z = row + 1 == def_.rows ? inf : def_.origin_z + (row + 1) * c;
  const double dx = x < lo_x ? lo_x - x : (x > hi_x ? x - hi_x : 0.0);
  const double dz = z < lo_z ? lo_z - z : (z > hi_z ? z - hi_z : 0.0);
  return dx * dx + dz * dz;
}

void RegionMap::audience(float x, float z, float bound, ShardId self, std::vector<ShardId>& out) const {
  out.clear();
  const double reach = static_cast<double>(def_.band) + std::max(0.0f, bound);
  const double reach2 = reach * reach;
  const CellBox box = cells_near(x, z, static_cast<float>(reach));
  for (std::uint32_t row = box.row0; row <= box.row1; ++row) {
    for (std::uint32_t col = box.col0; col <= box.col1; ++col) {
      const ShardId owner = def_.owners[std::size_t{row} * def_.cols + col];
      if (owner != self && distance2(x, z, col, row) <= reach2) out.push_back(owner);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

ShardId RegionMap::authority(ShardId current, float x, float z) const noexcept {
  const double h2 = static_cast<double>(def_.hysteresis) * def_.hysteresis;
  const CellBox box = cells_near(x, z, def_.hysteresis);
  for (std::uint32_t row = box.row0; row <= box.row1; ++row) {
    for (std::uint32_t col = box.col0; col <= box.col1; ++col) {
      if (def_.owners[std::size_t{row} * def_.cols + col] == current && distance2(x, z, col, row) <= h2) {
        return current;
      }
    }
  }
  return owner_at(x, z);
}

std::span<const ShardId> RegionMap::neighbours(ShardId shard) const noexcept {
  if (shard >= kMaxShards) return {};
  return std::span<const ShardId>(neighbour_list_)
      .subspan(neighbour_begin_[shard], neighbour_begin_[shard + 1] - neighbour_begin_[shard]);
}

}  // namespace sightline
