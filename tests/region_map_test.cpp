// The region map against a brute force over every cell, on seeded random maps and points (on
// cell edges, at the band's distance, far outside the grid, with bounds), and its refusals.
#include "sightline/region_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "rng.h"

namespace sightline {
namespace {

// The rectangle of cell (col, row), edge cells reaching out to infinity.
struct Rect {
  double lo_x, hi_x, lo_z, hi_z;
};
Rect rect(const RegionMapDef& d, std::uint32_t col, std::uint32_t row) {
  const double inf = std::numeric_limits<double>::infinity();
  const double c = d.cell_size;
  return {col == 0 ? -inf : d.origin_x + col * c, col + 1 == d.cols ? inf : d.origin_x + (col + 1) * c,
          row == 0 ? -inf : d.origin_z + row * c, row + 1 == d.rows ? inf : d.origin_z + (row + 1) * c};
}
double gap(double lo1, double hi1, double lo2, double hi2) { return std::max({0.0, lo2 - hi1, lo1 - hi2}); }
double point_distance2(const Rect& r, float x, float z) {
  const double dx = gap(r.lo_x, r.hi_x, x, x);
  const double dz = gap(r.lo_z, r.hi_z, z, z);
  return dx * dx + dz * dz;
}
ShardId owner(const RegionMapDef& d, std::uint32_t col, std::uint32_t row) {
  return d.owners[row * d.cols + col];
}

std::vector<ShardId> brute_audience(const RegionMapDef& d, float x, float z, float bound, ShardId self) {
  std::set<ShardId> out;
  const double reach = static_cast<double>(d.band) + std::max(0.0f, bound);
  for (std::uint32_t row = 0; row < d.rows; ++row) {
    for (std::uint32_t col = 0; col < d.cols; ++col) {
      if (owner(d, col, row) != self && point_distance2(rect(d, col, row), x, z) <= reach * reach)
        out.insert(owner(d, col, row));
    }
  }
  return {out.begin(), out.end()};
}

ShardId brute_owner(const RegionMapDef& d, float x, float z) {
  const auto cell = [](float v, float origin, float c, std::uint32_t n) -> std::uint32_t {
    const float f = std::floor((v - origin) / c);
    if (!(f >= 0.0f)) return 0;
    return f >= static_cast<float>(n - 1) ? n - 1 : static_cast<std::uint32_t>(f);
  };
  return owner(d, cell(x, d.origin_x, d.cell_size, d.cols), cell(z, d.origin_z, d.cell_size, d.rows));
}

ShardId brute_authority(const RegionMapDef& d, ShardId current, float x, float z) {
  const double h2 = static_cast<double>(d.hysteresis) * d.hysteresis;
  for (std::uint32_t row = 0; row < d.rows; ++row) {
    for (std::uint32_t col = 0; col < d.cols; ++col) {
      if (owner(d, col, row) == current && point_distance2(rect(d, col, row), x, z) <= h2) return current;
    }
  }
  return brute_owner(d, x, z);
}

std::vector<ShardId> brute_neighbours(const RegionMapDef& d, ShardId shard) {
  std::set<ShardId> out;
  const double band2 = static_cast<double>(d.band) * d.band;
  for (std::uint32_t a = 0; a < d.cols * d.rows; ++a) {
    if (d.owners[a] != shard) continue;
    const Rect ra = rect(d, a % d.cols, a / d.cols);
    for (std::uint32_t b = 0; b < d.cols * d.rows; ++b) {
      if (d.owners[b] == shard) continue;
      const Rect rb = rect(d, b % d.cols, b / d.cols);
      const double gx = gap(ra.lo_x, ra.hi_x, rb.lo_x, rb.hi_x);
      const double gz = gap(ra.lo_z, ra.hi_z, rb.lo_z, rb.hi_z);
      if (gx * gx + gz * gz <= band2) out.insert(d.owners[b]);
    }
  }
  return {out.begin(), out.end()};
}

// A random map with dyadic origins and cell sizes (the cell edges are exact in double).
RegionMapDef random_map(scenarios::Rng& rng) {
  const float sizes[] = {1.0f, 2.5f, 4.0f, 10.0f, 25.0f};
  const float c = sizes[rng.below(5)];
  const std::uint32_t cols = 1 + rng.below(9);
  const std::uint32_t rows = 1 + rng.below(9);
  const float band = c * static_cast<float>(rng.below(5)) * 0.25f;  // 0, c/4 .. c
  const float h = band * static_cast<float>(rng.below(3)) * 0.5f;
  const float origin_x = static_cast<float>(static_cast<int>(rng.below(41)) - 20) * 0.25f * c;
  const float origin_z = static_cast<float>(static_cast<int>(rng.below(41)) - 20) * 0.25f * c;
  if (rng.below(2) == 0) {
    return region_blocks(origin_x, origin_z, c, cols, rows, 1 + rng.below(3), 1 + rng.below(3), band, h);
  }
  RegionMapDef d;
  d.origin_x = origin_x;
  d.origin_z = origin_z;
  d.cell_size = c;
  d.cols = cols;
  d.rows = rows;
  d.band = band;
  d.hysteresis = h;
  const std::uint32_t shards = 1 + rng.below(6);
  for (std::uint32_t i = 0; i < cols * rows; ++i)
    d.owners.push_back(static_cast<ShardId>(rng.below(shards) * 7));
  return d;
}

// Points inside, on cell edges and corners, at band and hysteresis distances from edges, far out.
float coordinate(scenarios::Rng& rng, float origin, float c, std::uint32_t n, float band) {
  const float edge = origin + static_cast<float>(rng.below(n + 1)) * c;
  switch (rng.below(6)) {
    case 0: return edge;
    case 1: return edge + (rng.below(2) == 0 ? band : -band);
    case 2: return std::nextafter(edge + band, rng.below(2) == 0 ? 1e30f : -1e30f);
    case 3: return rng.below(2) == 0 ? 1.0e12f : -1.0e12f;
    default: return origin + rng.uniform(-2.0f, static_cast<float>(n) + 2.0f) * c;
  }
}

TEST(RegionMap, MatchesABruteForceOverEveryCell) {
  std::uint64_t audiences = 0, moves = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    scenarios::Rng rng(seed);
    const RegionMapDef d = random_map(rng);
    const Result<RegionMap> map = RegionMap::create(d);
    ASSERT_TRUE(map.ok()) << map.status().message();
    for (const ShardId s : map->shards()) {
      const std::span<const ShardId> n = map->neighbours(s);
      ASSERT_EQ(std::vector<ShardId>(n.begin(), n.end()), brute_neighbours(d, s))
          << "seed " << seed << " shard " << s;
    }
    std::vector<ShardId> out;
    for (int p = 0; p < 200; ++p) {
      const float x = coordinate(rng, d.origin_x, d.cell_size, d.cols, d.band);
      const float z = coordinate(rng, d.origin_z, d.cell_size, d.rows, d.band);
      const float bounds[] = {0.0f, 0.5f * d.cell_size, 3.0f * d.cell_size, 1.0e9f};
      const float bound = bounds[rng.below(4)];
      const ShardId self = map->owner_at(x, z);
      ASSERT_EQ(self, brute_owner(d, x, z));
      map->audience(x, z, bound, self, out);
      ASSERT_EQ(out, brute_audience(d, x, z, bound, self)) << "seed " << seed << " at " << x << ", " << z;
      audiences += out.empty() ? 0 : 1;
      const ShardId current = d.owners[rng.below(d.cols * d.rows)];
      const ShardId now = map->authority(current, x, z);
      ASSERT_EQ(now, brute_authority(d, current, x, z)) << "seed " << seed << " at " << x << ", " << z;
      moves += now != current ? 1 : 0;
    }
  }
  // The generator reaches both answers.
  EXPECT_GT(audiences, 1000u);
  EXPECT_GT(moves, 1000u);
}

TEST(RegionMap, BlocksSplitTheGridEvenly) {
  const RegionMap map = *RegionMap::create(region_blocks(0.0f, 0.0f, 25.0f, 8, 8, 2, 2, 22.5f, 2.0f));
  EXPECT_EQ(map.shards().size(), 4u);
  EXPECT_EQ(map.owner_at(10.0f, 10.0f), 0);
  EXPECT_EQ(map.owner_at(110.0f, 10.0f), 1);
  EXPECT_EQ(map.owner_at(10.0f, 110.0f), 2);
  EXPECT_EQ(map.owner_at(190.0f, 190.0f), 3);
  EXPECT_EQ(map.owner_at(-1.0e9f, 1.0e9f), 2);  // beyond the grid: the nearest edge cell's
  // The border at x = 100: a point 20 units left of it is copied to shard 1, not 30 units.
  std::vector<ShardId> out;
  map.audience(80.0f, 10.0f, 0.0f, 0, out);
  EXPECT_EQ(out, std::vector<ShardId>{1});
  map.audience(70.0f, 10.0f, 0.0f, 0, out);
  EXPECT_TRUE(out.empty());
  map.audience(70.0f, 10.0f, 12.0f, 0, out);  // its bound reaches
  EXPECT_EQ(out, std::vector<ShardId>{1});
  // Near the corner every other block is a neighbour's.
  map.audience(95.0f, 95.0f, 0.0f, 0, out);
  EXPECT_EQ(out, (std::vector<ShardId>{1, 2, 3}));
  // Authority stays within h of the owner's cells, then moves.
  EXPECT_EQ(map.authority(0, 101.5f, 10.0f), 0);
  EXPECT_EQ(map.authority(0, 102.5f, 10.0f), 1);
  EXPECT_EQ(std::vector<ShardId>(map.neighbours(0).begin(), map.neighbours(0).end()),
            (std::vector<ShardId>{1, 2, 3}));
}

TEST(RegionMap, ABadDefIsRefusedNamingTheField) {
  const RegionMapDef good = region_blocks(0.0f, 0.0f, 10.0f, 4, 4, 2, 2, 8.0f, 2.0f);
  ASSERT_TRUE(RegionMap::create(good).ok());
  const auto refused = [](const RegionMapDef& d, const std::string& names) {
    const Result<RegionMap> r = RegionMap::create(d);
    ASSERT_FALSE(r.ok()) << names;
    EXPECT_EQ(r.status().code(), ErrorCode::invalid_def);
    EXPECT_NE(r.status().message().find(names), std::string::npos) << r.status().message();
  };
  RegionMapDef d = good;
  d.cell_size = 5.0f;
  refused(d, "RegionMapDef::cell_size is 5: must be finite, > 0 and >= band");
  d = good;
  d.hysteresis = 9.0f;
  refused(d, "RegionMapDef::hysteresis is 9");
  d = good;
  d.origin_x = std::numeric_limits<float>::quiet_NaN();
  refused(d, "RegionMapDef::origin_x is nan");
  d = good;
  d.owners.pop_back();
  refused(d, "RegionMapDef::owners is 15 entries: must hold cols * rows = 16");
  d = good;
  d.owners[5] = kMaxShards;
  refused(d, "RegionMapDef::owners[5] is 4096");
  d = good;
  d.cols = 0;
  refused(d, "RegionMapDef::cols is 0");
  d = good;
  d.cols = 2000;
  d.rows = 1000;
  refused(d, "more than kMaxRegionCells");
}

}  // namespace
}  // namespace sightline
