// The grid's incremental build (last build's items refreshed, the few that changed cell moved)
// must give exactly what sorting every entity gives: the same cells, the same items in the same
// order, the same positions. Two grids are built from the same inputs, one of them always sorting
// all, over walks that move nothing, a few, many (the sort takes over), shift the bounding box,
// change the cell counts, unbin slots and add them. Its loop over the items, in AVX2 and scalar,
// must give the same too, and so must a grid that splits its passes over three workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "../src/grid.h"
#include "../src/simd.h"
#include "../src/task_runner.h"
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

// Puts the grid's passes in ranges on `workers`, whatever the size.
void on_workers(Grid& grid, TaskRunner& workers) {
  grid.tasks = &workers;
  grid.parallel_min_slots = 0;
  grid.cap_sort_ranges = false;
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
      TaskRunner workers(3);
      Grid split;  // its passes in ranges on three workers, whatever the size
      on_workers(split, workers);
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
        if (kind == 9) {
          // Near, or (for half of them) far enough that a grid of 1024 or more keeps to the bulk.
          const float far = rng.below(2) == 0 || count < Grid::kOutlierMinEntities ? 3 * side : 1.0e15f;
          xs[rng.below(static_cast<std::uint32_t>(xs.size()))] = rng.uniform(-far, far);
        }
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
        split.build(xs, zs, binned, cell, max_cells);
        ASSERT_FALSE(full.last_build_incremental());
        ASSERT_EQ(split.last_build_incremental(), fast.last_build_incremental());
        ASSERT_EQ(split.last_build_moved(), fast.last_build_moved());
        ASSERT_EQ(scalar.last_build_incremental(), fast.last_build_incremental());
        ASSERT_EQ(scalar.last_build_moved(), fast.last_build_moved());
        expect_same(fast, full, "after a step");
        expect_same(scalar, full, "after a step, scalar");
        expect_same(split, full, "after a step, on three workers");
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

// The entities of the cells a query of radius r around (x, z) scans that pass the distance test,
// sorted; and the same by testing every entity.
std::vector<std::uint32_t> grid_query(const Grid& grid, float x, float z, float r) {
  std::vector<std::uint32_t> found;
  const Grid::Range range = grid.cell_range(x, z, r);
  for (std::uint32_t row = range.z0; row <= range.z1; ++row) {
    for (std::uint32_t k = grid.run_begin(row, range.x0); k < grid.run_end(row, range.x1); ++k) {
      const float dx = grid.item_x()[k] - x;
      const float dz = grid.item_z()[k] - z;
      if (dx * dx + dz * dz <= r * r) found.push_back(grid.items()[k]);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}
std::vector<std::uint32_t> brute_query(const std::vector<float>& xs, const std::vector<float>& zs, float x,
                                       float z, float r) {
  std::vector<std::uint32_t> found;
  for (std::uint32_t i = 0; i < xs.size(); ++i) {
    const float dx = xs[i] - x;
    const float dz = zs[i] - z;
    if (dx * dx + dz * dz <= r * r) found.push_back(i);
  }
  return found;
}

// A few entities at huge coordinates leave the cells at their size and the grid over the bulk:
// the same grid as without them, the outliers in its border cells, every query still exact.
TEST(GridBuildTest, FewOutliersKeepTheBulksGrid) {
  scenarios::Rng rng(0x0f1e);
  for (const std::uint32_t count : {Grid::kOutlierMinEntities, 5000u}) {
    const float cell = 10.0f;
    std::vector<float> xs(count), zs(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      xs[i] = rng.uniform(-300.0f, 500.0f);
      zs[i] = rng.uniform(100.0f, 700.0f);
    }
    std::vector<std::uint8_t> binned(count, 1);
    Grid bulk;
    bulk.build(xs, zs, binned, cell, 1u << 20);
    const std::vector<std::pair<float, float>> far = {{1.0e15f, -1.0e15f},
                                                      {-1.0e15f, 1.0e15f},
                                                      {2.0e9f, 300.0f},
                                                      {2.0e9f + 3.0f, 300.0f},
                                                      {0.0f, -7.0e11f}};
    for (std::size_t f = 0; f < far.size(); ++f) {
      // Replacing walkers, so the bulk's box stays the same but for where they stood.
      xs[f * 97] = far[f].first;
      zs[f * 97] = far[f].second;
    }
    Grid grid;
    for (int build = 0; build < 3; ++build) {
      grid.build(xs, zs, binned, cell, 1u << 20);
      ASSERT_EQ(grid.cell_size(), cell);
      ASSERT_LE(grid.cells_x(), bulk.cells_x() + 1);  // the walkers moved by half a unit
      ASSERT_LE(grid.cells_z(), bulk.cells_z());
      ASSERT_GE(grid.cells_x() + 1, bulk.cells_x());
      ASSERT_EQ(grid.items().size(), count);
      for (int q = 0; q < 300; ++q) {
        const float r = rng.uniform(0.5f, 40.0f);
        float x = rng.uniform(-400.0f, 600.0f);
        float z = rng.uniform(0.0f, 800.0f);
        if (q % 5 == 0) {
          const auto& at = far[static_cast<std::size_t>(q / 5) % far.size()];
          x = at.first + rng.uniform(-r, r);
          z = at.second + rng.uniform(-r, r);
        }
        ASSERT_EQ(grid_query(grid, x, z, r), brute_query(xs, zs, x, z, r))
            << "count " << count << " build " << build << " query " << q;
      }
      for (std::size_t i = 0; i < count; ++i) xs[i] += i % 3 == 0 ? 0.5f : 0.0f;  // keep the far ones far
    }
  }
}

// The build of large worlds (partition_min_slots set low here): every cell holds exactly the
// entities binned into it, in slot order, with their positions; the cells are the other builds'.
TEST(GridBuildTest, PartitionedBuildsSortBySlotWithinCells) {
  scenarios::Rng rng(0x7a11);
  for (const std::uint32_t count : {1u, 9u, 500u, 3000u, 40000u}) {
    for (int trial = 0; trial < 4; ++trial) {
      const float side = rng.uniform(5.0f, 900.0f);
      const float cell = rng.uniform(1.0f, 40.0f);
      const std::uint32_t max_cells = trial == 3 ? 1 + rng.below(64) : 1u << 16;
      std::vector<float> xs(count), zs(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        xs[i] = rng.uniform(0.0f, side);
        zs[i] = rng.uniform(0.0f, side);
      }
      if (count >= Grid::kOutlierMinEntities) xs[count / 2] = -1.0e15f;
      std::vector<std::uint8_t> binned(count, 1);
      Grid partitioned;
      partitioned.partition_min_slots = 0;
      TaskRunner workers(3);
      Grid split;  // the same on three workers
      split.partition_min_slots = 0;
      on_workers(split, workers);
      Grid sorted;
      for (int step = 0; step < 3; ++step) {
        if (step == 2 && count > 1) binned[rng.below(count)] = 0;  // a slot left out
        partitioned.build(xs, zs, binned, cell, max_cells);
        split.build(xs, zs, binned, cell, max_cells);
        sorted.build(xs, zs, binned, cell, max_cells);
        expect_same(split, partitioned, "partitioned, on three workers");
        ASSERT_EQ(partitioned.cells_x(), sorted.cells_x());
        ASSERT_EQ(partitioned.cells_z(), sorted.cells_z());
        ASSERT_EQ(partitioned.cell_size(), sorted.cell_size());
        ASSERT_FALSE(partitioned.last_build_incremental());
        std::vector<std::vector<std::uint32_t>> want(std::size_t{sorted.cells_x()} * sorted.cells_z());
        for (std::uint32_t i = 0; i < count; ++i) {
          if (binned[i]) want[sorted.cell_of_point(xs[i], zs[i])].push_back(i);
        }
        for (std::uint32_t z = 0; z < partitioned.cells_z(); ++z) {
          for (std::uint32_t x = 0; x < partitioned.cells_x(); ++x) {
            ASSERT_EQ(partitioned.run_begin(z, x), sorted.run_begin(z, x));
            ASSERT_EQ(partitioned.run_end(z, x), sorted.run_end(z, x));
            const std::vector<std::uint32_t>& cell_items = want[std::size_t{z} * partitioned.cells_x() + x];
            const std::uint32_t begin = partitioned.run_begin(z, x);
            ASSERT_EQ(partitioned.run_end(z, x) - begin, cell_items.size());
            for (std::size_t k = 0; k < cell_items.size(); ++k) {
              const std::uint32_t e = partitioned.items()[begin + k];
              ASSERT_EQ(e, cell_items[k]) << "count " << count << " trial " << trial << " step " << step;
              ASSERT_EQ(partitioned.item_x()[begin + k], xs[e]);
              ASSERT_EQ(partitioned.item_z()[begin + k], zs[e]);
            }
          }
        }
        for (std::uint32_t i = 0; i < count; ++i) {
          xs[i] += rng.uniform(-0.3f, 0.3f) * cell;
          zs[i] += rng.uniform(-0.3f, 0.3f) * cell;
        }
      }
    }
  }
}

// With a cover, a large world's build fills only the cells the cover's queries reach: every cell
// keeps the full build's run bounds, and every query the cover allows finds what testing every
// entity finds. A cover over a quarter of the cells or more fills every cell.
TEST(GridBuildTest, CoveredCellsAnswerTheCoversQueries) {
  scenarios::Rng rng(0xc0e4);
  for (int trial = 0; trial < 6; ++trial) {
    const std::uint32_t count = 20000;
    const float side = rng.uniform(1000.0f, 2000.0f);
    const float cell = rng.uniform(4.0f, 10.0f);  // over 10,000 cells: 40 points cover under 2,000
    std::vector<float> xs(count), zs(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      xs[i] = rng.uniform(0.0f, side);
      zs[i] = rng.uniform(0.0f, side);
    }
    if (trial % 2 == 1) xs[5] = 1.0e15f;  // an outlier in a border cell
    std::vector<std::uint8_t> binned(count, 1);
    const std::uint32_t points = trial == 5 ? 4000 : 1 + rng.below(40);
    std::vector<float> qx(points), qz(points);
    for (std::uint32_t p = 0; p < points; ++p) {
      const std::uint32_t at = rng.below(count);
      qx[p] = xs[at];
      qz[p] = zs[at];
    }
    qx[0] = 1.0e15f;  // a query from the outlier (or from far outside the grid)
    const float radius = cell * rng.uniform(0.3f, 2.5f);
    const Grid::QueryCover cover{qx, qz, radius};
    Grid covered;
    covered.partition_min_slots = 0;
    TaskRunner workers(3);
    Grid split;  // the same on three workers
    split.partition_min_slots = 0;
    on_workers(split, workers);
    Grid full;
    for (int step = 0; step < 3; ++step) {
      if (step == 2) binned[rng.below(count)] = 0;
      covered.build(xs, zs, binned, cell, 1u << 20, &cover);
      split.build(xs, zs, binned, cell, 1u << 20, &cover);
      full.build(xs, zs, binned, cell, 1u << 20);
      ASSERT_EQ(covered.last_build_covered_only(), trial != 5) << "trial " << trial;
      ASSERT_EQ(split.last_build_covered_only(), covered.last_build_covered_only());
      for (std::uint32_t z = 0; z < covered.cells_z(); ++z) {
        for (std::uint32_t x = 0; x < covered.cells_x(); ++x) {
          ASSERT_EQ(split.cell_filled(z, x), covered.cell_filled(z, x));
          if (!covered.cell_filled(z, x)) continue;
          ASSERT_EQ(split.run_begin(z, x), covered.run_begin(z, x));
          ASSERT_EQ(split.run_end(z, x), covered.run_end(z, x));
          for (std::uint32_t k = covered.run_begin(z, x); k < covered.run_end(z, x); ++k) {
            ASSERT_EQ(split.items()[k], covered.items()[k]) << "trial " << trial << " step " << step;
            ASSERT_EQ(split.item_x()[k], covered.item_x()[k]);
            ASSERT_EQ(split.item_z()[k], covered.item_z()[k]);
          }
        }
      }
      ASSERT_EQ(covered.cells_x(), full.cells_x());
      ASSERT_EQ(covered.cells_z(), full.cells_z());
      for (std::uint32_t z = 0; z < full.cells_z(); ++z) {
        for (std::uint32_t x = 0; x < full.cells_x(); ++x) {
          // Read the bounds the way an unchecked caller would: the cell need not be filled.
          const bool filled = covered.cell_filled(z, x);
          if (!filled) continue;
          ASSERT_EQ(covered.run_begin(z, x), full.run_begin(z, x));
          ASSERT_EQ(covered.run_end(z, x), full.run_end(z, x));
        }
      }
      std::vector<float> live_x, live_z;
      for (std::uint32_t i = 0; i < count; ++i) {
        live_x.push_back(binned[i] ? xs[i] : 1.0e30f);
        live_z.push_back(binned[i] ? zs[i] : 1.0e30f);
      }
      for (std::uint32_t p = 0; p < points; p += 1 + points / 50) {
        const float r = radius * rng.uniform(0.0f, 1.0f);
        ASSERT_EQ(grid_query(covered, qx[p], qz[p], r), brute_query(live_x, live_z, qx[p], qz[p], r))
            << "trial " << trial << " step " << step << " point " << p;
      }
      for (std::uint32_t i = 0; i < count; ++i) xs[i] += i % 2 == 0 ? 0.25f * cell : -0.25f * cell;
    }
  }
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
        // Some below the origin: outliers the grid's box left out, clamped into the first cell.
        x[e] = rng.uniform(rng.below(8) == 0 ? -1.0e15f : b.origin_x, 60.0f);
        z[e] = rng.uniform(rng.below(8) == 0 ? -1.0e15f : b.origin_z, 60.0f);
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
