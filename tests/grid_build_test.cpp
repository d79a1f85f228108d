// The grid's incremental build (last build's items refreshed, the few that changed cell moved)
// must give exactly what sorting every entity gives: the same cells, the same items in the same
// order, the same positions. Two grids are built from the same inputs, one of them always sorting
// all, over walks that move nothing, a few, many (the sort takes over), shift the bounding box,
// change the cell counts, unbin slots and add them. Its loop over the items, in AVX2 and scalar,
// must give the same too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "../src/grid.h"
#include "../src/simd.h"
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
      Grid scalar;  // incremental too, with the scalar loop over the items
      scalar.refresh_items = &grid_refresh_scalar;
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
        scalar.build(xs, zs, binned, cell, max_cells);
        full.build(xs, zs, binned, cell, max_cells);
        ASSERT_FALSE(full.last_build_incremental());
        ASSERT_EQ(scalar.last_build_incremental(), fast.last_build_incremental());
        ASSERT_EQ(scalar.last_build_moved(), fast.last_build_moved());
        expect_same(fast, full, "after a step");
        expect_same(scalar, full, "after a step, scalar");
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

// The loop over the items alone, on every length around the eight-wide steps: the same moves in
// the same order, the same positions, and the same point where too many moved.
TEST(GridRefresh, Avx2EqualsScalarExactly) {
  if (grid_refresh_avx2 == nullptr) GTEST_SKIP() << "this build has no AVX2 refresh (not x86-64)";
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  scenarios::Rng rng(0x4e7f);
  std::uint64_t too_many = 0;
  for (std::uint32_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 100; ++trial) {
      const float last_x = static_cast<float>(rng.below(12));
      const CellBinning b{rng.uniform(-50.0f, 0.0f),         rng.uniform(-50.0f, 0.0f),
                          1.0f / rng.uniform(1.0f, 9.0f),    last_x,
                          static_cast<float>(rng.below(12)), static_cast<std::uint32_t>(last_x) + 1};
      std::vector<float> x(count + 3);
      std::vector<float> z(count + 3);
      for (std::size_t e = 0; e < x.size(); ++e) {
        x[e] = rng.uniform(b.origin_x, 60.0f);
        z[e] = rng.uniform(b.origin_z, 60.0f);
      }
      std::vector<std::uint32_t> items(count);
      std::vector<std::uint32_t> item_cell(count);
      for (std::uint32_t k = 0; k < count; ++k) {
        items[k] = rng.below(static_cast<std::uint32_t>(x.size()));
        const std::uint32_t cell = b.cell(x[items[k]], z[items[k]]);
        item_cell[k] = rng.below(4) == 0 ? cell + 1 : cell;  // a quarter changed cell
      }
      const std::size_t max_moved = rng.below(count / 3 + 2);
      std::vector<float> scalar_x(count), scalar_z(count), avx2_x(count), avx2_z(count);
      std::vector<CellMove> scalar_moved(max_moved), avx2_moved(max_moved);
      const std::size_t want =
          grid_refresh_scalar(b, items.data(), x.data(), z.data(), scalar_x.data(), scalar_z.data(),
                              item_cell.data(), count, scalar_moved.data(), max_moved);
      const std::size_t got =
          grid_refresh_avx2(b, items.data(), x.data(), z.data(), avx2_x.data(), avx2_z.data(),
                            item_cell.data(), count, avx2_moved.data(), max_moved);
      ASSERT_EQ(got, want) << "count " << count << " trial " << trial;
      if (want == kTooManyMoved) {
        ++too_many;
        continue;
      }
      ASSERT_EQ(avx2_x, scalar_x) << "count " << count << " trial " << trial;
      ASSERT_EQ(avx2_z, scalar_z) << "count " << count << " trial " << trial;
      for (std::size_t m = 0; m < want; ++m) {
        ASSERT_EQ(avx2_moved[m].at, scalar_moved[m].at) << "count " << count << " trial " << trial;
        ASSERT_EQ(avx2_moved[m].cell, scalar_moved[m].cell) << "count " << count << " trial " << trial;
      }
    }
  }
  EXPECT_GT(too_many, 100u);
}

}  // namespace
}  // namespace sightline
