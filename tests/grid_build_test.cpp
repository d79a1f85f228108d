// The grid's incremental build (last build's items refreshed, the few that changed cell moved)
// must give exactly what sorting every entity gives: the same cells, the same items in the same
// order, the same positions. Two grids are built from the same inputs, one of them always sorting
// all, over walks that move nothing, a few, many (the sort takes over), shift the bounding box,
// change the cell counts, unbin slots and add them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "../src/grid.h"
#include "rng.h"

namespace sightline {
namespace {

void expect_same(const Grid& a, const Grid& b, const char* where) {
  ASSERT_EQ(a.cells_x(), b.cells_x()) << where;
  ASSERT_EQ(a.cells_z(), b.cells_z()) << where;
  ASSERT_EQ(a.cell_size(), b.cell_size()) << where;
  for (std::uint32_t z = 0; z < a.cells_z(); ++z) {
    for (std::uint32_t x = 0; x < a.cells_x(); ++x) {
      ASSERT_EQ(a.run_begin(z, x), b.run_begin(z, x)) << where << ": cell " << x << ", " << z;
      ASSERT_EQ(a.run_end(z, x), b.run_end(z, x)) << where << ": cell " << x << ", " << z;
    }
  }
  const auto same = [](auto u, auto v) {
    return std::vector(u.begin(), u.end()) == std::vector(v.begin(), v.end());
  };
  ASSERT_TRUE(same(a.items(), b.items())) << where;
  ASSERT_TRUE(same(a.item_x(), b.item_x())) << where;
  ASSERT_TRUE(same(a.item_z(), b.item_z())) << where;
}

TEST(GridBuildTest, IncrementalBuildsEqualFullSorts) {
  scenarios::Rng rng(0x9e1d);
  std::uint64_t incremental = 0;
  std::uint64_t with_moves = 0;
  std::uint64_t builds = 0;
  for (const std::uint32_t count : {1u, 7u, 8u, 9u, 60u, 500u, 3000u}) {
    for (int trial = 0; trial < 6; ++trial) {
      const float side = rng.uniform(5.0f, 400.0f);
      const float cell = rng.uniform(1.0f, 40.0f);
      const std::uint32_t max_cells = rng.below(3) == 0 ? 1 + rng.below(64) : 1u << 16;
      std::vector<float> xs(count);
      std::vector<float> zs(count);
      std::vector<std::uint8_t> binned(count, 1);
      for (std::uint32_t i = 0; i < count; ++i) {
        xs[i] = rng.uniform(0.0f, side);
        zs[i] = rng.uniform(0.0f, side);
      }
      Grid fast;
      Grid full;
      full.incremental = false;
      for (int step = 0; step < 40; ++step) {
        // A step moves nothing, a few by a fraction of a cell, many, or one far (a new box).
        const std::uint32_t kind = rng.below(10);
        const float reach = kind < 6 ? cell * 0.05f : cell * 2.0f;
        for (std::uint32_t i = 0; i < xs.size(); ++i) {
          if (kind == 0) break;
          if (kind < 6 && rng.below(4) != 0) continue;
          xs[i] += rng.uniform(-reach, reach);
          zs[i] += rng.uniform(-reach, reach);
        }
        if (kind == 9)
          xs[rng.below(static_cast<std::uint32_t>(xs.size()))] = rng.uniform(-3 * side, 3 * side);
        // A slot unbinned for one build (a destroyed entity, its slot reused).
        std::fill(binned.begin(), binned.end(), 1);
        if (rng.below(12) == 0) binned[rng.below(static_cast<std::uint32_t>(binned.size()))] = 0;
        if (rng.below(12) == 0) {
          xs.push_back(rng.uniform(0.0f, side));
          zs.push_back(rng.uniform(0.0f, side));
          binned.push_back(1);
        }
        // Entities on cell edges of the last build, where a shifted origin carries them over.
        if (rng.below(4) == 0 && fast.cells_x() > 1) {
          const std::uint32_t i = rng.below(static_cast<std::uint32_t>(xs.size()));
          xs[i] = fast.item_x().empty() ? xs[i] : xs[i] - std::fmod(xs[i], fast.cell_size());
        }
        fast.build(xs, zs, binned, cell, max_cells);
        full.build(xs, zs, binned, cell, max_cells);
        ASSERT_FALSE(full.last_build_incremental());
        expect_same(fast, full, "after a step");
        if (HasFailure()) return;
        ++builds;
        incremental += fast.last_build_incremental() ? 1 : 0;
        with_moves += fast.last_build_moved() != 0 ? 1 : 0;
      }
    }
  }
  // Every way was taken, often.
  EXPECT_GT(incremental, builds / 4);
  EXPECT_GT(with_moves, builds / 10);
  EXPECT_LT(incremental, builds);
}

}  // namespace
}  // namespace sightline
