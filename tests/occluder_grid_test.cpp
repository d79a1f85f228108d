// The occluder grid answers exactly what the brute-force predicate answers; the predicate itself
// is checked on directed cases (touching, collinear, degenerate, huge coordinates).
#include "../src/occluder_grid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "rng.h"

namespace sightline::testing {
namespace {

using scenarios::Rng;

struct Ray {
  float ax, az, bx, bz;
};

// Cell sizes for every directed case: automatic, one that puts lattice points on cell edges, and
// ones much smaller and larger than the walls.
constexpr float kCellSizes[] = {0.0f, 1.0f, 0.37f, 4.0f, 1000.0f};

// blocked() by the brute force and by grids of several cell sizes; fails the test if they differ.
bool blocked_everywhere(const std::vector<WallSegment>& walls, Ray ray) {
  const bool expected = segment_blocked_brute_force(walls, ray.ax, ray.az, ray.bx, ray.bz);
  for (const float cell_size : kCellSizes) {
    OccluderGrid grid;
    grid.build(walls, cell_size);
    OccluderScratch scratch;
    EXPECT_EQ(grid.blocked(ray.ax, ray.az, ray.bx, ray.bz, scratch), expected)
        << "cell size " << cell_size << " ray " << ray.ax << "," << ray.az << " -> " << ray.bx << ","
        << ray.bz;
    // Reversing the ray never changes the answer.
    EXPECT_EQ(grid.blocked(ray.bx, ray.bz, ray.ax, ray.az, scratch), expected);
  }
  return expected;
}

bool blocked_by(WallSegment wall, Ray ray) { return blocked_everywhere({wall}, ray); }

TEST(OccluderPredicate, CrossingWallBlocks) {
  EXPECT_TRUE(blocked_by({0, -1, 0, 1}, {-1, 0, 1, 0}));
  EXPECT_TRUE(blocked_by({-3, -2, 5, 7}, {-4, 6, 6, -3}));
}

TEST(OccluderPredicate, ParallelMissDoesNotBlock) {
  EXPECT_FALSE(blocked_by({0, 1, 10, 1}, {0, 0, 10, 0}));
  EXPECT_FALSE(blocked_by({0, 0.001f, 10, 1.001f}, {0, 0, 10, 1}));
  EXPECT_FALSE(blocked_by({2, -5, 2, 5}, {3, -5, 3, 5}));
}

TEST(OccluderPredicate, TouchingAnEndpointBlocks) {
  EXPECT_TRUE(blocked_by({0, 0, 0, 1}, {-1, 0, 1, 0}));   // wall end on the ray
  EXPECT_TRUE(blocked_by({0, 0, 0, 1}, {-1, -1, 0, 0}));  // endpoint meets endpoint
  EXPECT_TRUE(blocked_by({-1, 1, 1, 1}, {0, 0, 0, 1}));   // ray end on the wall
  EXPECT_FALSE(blocked_by({0, 0, 0, 1}, {-1, -0.001f, 1, -0.001f}));
}

TEST(OccluderPredicate, CollinearOverlapBlocks) {
  EXPECT_TRUE(blocked_by({0, 0, 2, 2}, {1, 1, 3, 3}));
  EXPECT_TRUE(blocked_by({0, 0, 4, 2}, {1, 0.5f, 2, 1}));    // the ray inside the wall
  EXPECT_TRUE(blocked_by({1, 0.5f, 2, 1}, {-2, -1, 6, 3}));  // the wall inside the ray
  EXPECT_TRUE(blocked_by({0, 0, 1, 1}, {1, 1, 3, 3}));       // collinear, sharing one point
  EXPECT_TRUE(blocked_by({0, 5, 0, -5}, {0, 5, 0, 9}));
}

TEST(OccluderPredicate, CollinearDisjointDoesNotBlock) {
  EXPECT_FALSE(blocked_by({0, 0, 1, 1}, {2, 2, 3, 3}));
  EXPECT_FALSE(blocked_by({0, 0, 1, 0}, {1.5f, 0, 3, 0}));
  EXPECT_FALSE(blocked_by({0, 0, 0, 1}, {0, -3, 0, std::nextafter(0.0f, -1.0f)}));
}

TEST(OccluderPredicate, RayEndingExactlyOnAWallBlocks) {
  EXPECT_TRUE(blocked_by({0, -1, 0, 1}, {-1, 0.5f, 0, 0.5f}));
  EXPECT_TRUE(blocked_by({0, 0, 3, 3}, {5, -1, 1, 1}));
  // One float short of the wall is not on it.
  EXPECT_FALSE(blocked_by({0, -1, 0, 1}, {-1, 0.5f, std::nextafter(0.0f, -1.0f), 0.5f}));
}

TEST(OccluderPredicate, ZeroLengthWallIsAPoint) {
  EXPECT_TRUE(blocked_by({1, 1, 1, 1}, {0, 0, 2, 2}));
  EXPECT_TRUE(blocked_by({2, 2, 2, 2}, {0, 0, 2, 2}));
  EXPECT_FALSE(blocked_by({1, 1, 1, 1}, {0, 0, 2, 2.001f}));
  EXPECT_FALSE(blocked_by({1, 1, 1, 1}, {2, 2, 3, 3}));
}

TEST(OccluderPredicate, ZeroLengthRayIsAPoint) {
  EXPECT_TRUE(blocked_by({0, 0, 1, 0}, {0.5f, 0, 0.5f, 0}));
  EXPECT_TRUE(blocked_by({0, 0, 1, 0}, {1, 0, 1, 0}));
  EXPECT_FALSE(blocked_by({0, 0, 1, 0}, {0.5f, 0.001f, 0.5f, 0.001f}));
  EXPECT_FALSE(blocked_by({0, 0, 1, 0}, {1.5f, 0, 1.5f, 0}));
  EXPECT_TRUE(blocked_by({3, 4, 3, 4}, {3, 4, 3, 4}));
  EXPECT_FALSE(blocked_by({3, 4, 3, 4}, {3, std::nextafter(4.0f, 5.0f), 3, std::nextafter(4.0f, 5.0f)}));
}

// Differences such as 1e15 - 1e-20 are not exact in double: the rounded determinant is 0 for a
// point one float off the wall's line. The exact fallback must see that it is off.
TEST(OccluderPredicate, OrientationIsExactWhereRoundingWouldCallItCollinear) {
  const float tiny = 1e-20f;
  const float off = std::nextafter(tiny, 1.0f);
  for (const float far : {1e15f, 1e30f}) {
    EXPECT_TRUE(blocked_by({-far, -far, far, far}, {tiny, tiny, tiny, tiny}));
    EXPECT_FALSE(blocked_by({-far, -far, far, far}, {tiny, off, tiny, off}));
    EXPECT_FALSE(blocked_by({-far, -far, far, far}, {off, tiny, off, tiny}));
    EXPECT_TRUE(blocked_by({-far, -far, far, far}, {tiny, off, off, tiny}));
  }
}

TEST(OccluderGrid, LongWallSpanningManyCells) {
  std::vector<WallSegment> walls = {{-1000, -1000, 1000, 1000}};
  for (int i = 0; i < 50; ++i) {
    const auto x = static_cast<float>(i * 40 - 1000);
    walls.push_back({x, 900, x + 1, 901});
  }
  OccluderGrid grid;
  grid.build(walls, 1.0f, 1u << 16);
  EXPECT_LE(static_cast<std::uint64_t>(grid.cells_x()) * grid.cells_z(), 1u << 16);
  EXPECT_LE(grid.entry_count(), (1u << 16) + 4 * walls.size());
  EXPECT_GT(grid.entry_count(), 1000u);  // the long wall is listed in many cells
  OccluderScratch scratch;
  for (int i = -999; i < 999; i += 7) {
    const auto x = static_cast<float>(i);
    EXPECT_TRUE(grid.blocked(x - 0.5f, x + 0.5f, x + 0.5f, x - 0.5f, scratch)) << x;
    EXPECT_FALSE(grid.blocked(x - 0.5f, x + 0.5f, x + 0.25f, x + 1.25f, scratch)) << x;
    EXPECT_TRUE(grid.blocked(x, x, x, x, scratch)) << x;
  }
}

TEST(OccluderGrid, WallFarOutsideTheOthers) {
  std::vector<WallSegment> walls;
  for (int i = 0; i < 20; ++i) walls.push_back({static_cast<float>(i), 0, static_cast<float>(i), 1});
  walls.push_back({1e6f, 1e6f, 1e6f + 1, 1e6f});
  walls.push_back({-1e15f, 5, -1e15f, 6});
  const std::vector<Ray> rays = {
      {0.5f, 0.5f, 3.5f, 0.5f},       {0.5f, 0.5f, 0.75f, 0.5f},      {1e6f + 0.5f, -1, 1e6f + 0.5f, 1e6f},
      {1e6f + 2, -1, 1e6f + 2, 2e6f}, {-2e15f, 5.5f, 0, 5.5f},        {-1e15f, 6, -1e15f, 7},
      {-1e15f, 7, -1e15f, 8},         {-1e15f, -1e15f, 1e15f, 1e15f}, {-5, 0.5f, 5e6f, 0.5f}};
  std::vector<bool> expected;
  for (const Ray& ray : rays) expected.push_back(blocked_everywhere(walls, ray));
  EXPECT_EQ(expected, (std::vector<bool>{true, false, true, false, true, true, false, true, true}));
}

TEST(OccluderGrid, RaysOutsideTheGridExtent) {
  const std::vector<WallSegment> walls = {{0, 0, 10, 0}, {0, 0, 0, 10}, {10, 10, 10, 0}};
  EXPECT_FALSE(blocked_everywhere(walls, {-100, -100, -50, 200}));
  EXPECT_FALSE(blocked_everywhere(walls, {20, -1e15f, 20, 1e15f}));
  EXPECT_TRUE(blocked_everywhere(walls, {5, -1e15f, 5, 1e15f}));
  EXPECT_TRUE(blocked_everywhere(walls, {-1e15f, 5, 1e15f, 5}));
  EXPECT_FALSE(blocked_everywhere(walls, {-1e15f, -1e15f, -1e15f, -1e15f}));
  EXPECT_TRUE(blocked_everywhere(walls, {-1e15f, 1e15f, 1e15f, -1e15f}));
}

TEST(OccluderGrid, NoWallsNeverBlock) {
  OccluderGrid unbuilt;
  OccluderGrid empty;
  empty.build({}, 0.0f);
  OccluderScratch scratch;
  for (const OccluderGrid* grid : {&unbuilt, &empty}) {
    EXPECT_EQ(grid->wall_count(), 0u);
    EXPECT_FALSE(grid->blocked(0, 0, 1, 1, scratch));
    EXPECT_FALSE(grid->blocked(-1e15f, 0, 1e15f, 0, scratch));
    EXPECT_TRUE(grid->sees(0, 0, 5, 5, 1, scratch));
  }
  EXPECT_FALSE(segment_blocked_brute_force({}, 0, 0, 1, 1));
  EXPECT_TRUE(sees_brute_force({}, 0, 0, 5, 5, 0));
}

TEST(OccluderGrid, DiscPartlyHiddenIsSeen) {
  const std::vector<WallSegment> short_wall = {{5, -0.5f, 5, 0.5f}};
  const std::vector<WallSegment> long_wall = {{5, -10, 5, 10}};
  for (const float cell_size : kCellSizes) {
    OccluderGrid grid;
    grid.build(short_wall, cell_size);
    OccluderScratch scratch;
    EXPECT_TRUE(grid.blocked(0, 0, 10, 0, scratch));  // the centre is hidden
    EXPECT_FALSE(grid.sees(0, 0, 10, 0, 0, scratch));
    EXPECT_TRUE(grid.sees(0, 0, 10, 0, 2, scratch));      // an edge sample is not
    EXPECT_FALSE(grid.sees(0, 0, 10, 0, 0.5f, scratch));  // edge rays cross x = 5 at z = +-0.25
    grid.build(long_wall, cell_size);
    EXPECT_FALSE(grid.sees(0, 0, 10, 0, 2, scratch));
    EXPECT_TRUE(grid.sees(5, 0, 5, 0, 2, scratch));  // origin at the centre, on the wall
    EXPECT_TRUE(grid.sees(0, 0, 4, 0, 2, scratch));
  }
  EXPECT_TRUE(sees_brute_force(short_wall, 0, 0, 10, 0, 2));
  EXPECT_FALSE(sees_brute_force(short_wall, 0, 0, 10, 0, 0.5f));
  EXPECT_FALSE(sees_brute_force(long_wall, 0, 0, 10, 0, 2));
}

// ---- Randomized: the grid against the brute force ---------------------------------------------

// Coordinates that make trouble: an integer lattice (cell edges for cell size 1 and 4, and
// collinear triples), half steps, uniform reals, far away, huge (up to 1e15, when `huge`), and
// reuse of earlier values.
float awkward_coordinate(Rng& rng, const std::vector<float>& seen, bool huge) {
  switch (rng.below(10)) {
    case 0:
    case 1:
    case 2: return static_cast<float>(static_cast<int>(rng.below(41)) - 20);
    case 3: return static_cast<float>(static_cast<int>(rng.below(81)) - 40) * 0.5f;
    case 4:
    case 5: return rng.uniform(-30.0f, 30.0f);
    case 6: return rng.uniform(-3000.0f, 3000.0f);
    case 7: {
      if (!huge) return rng.uniform(-300.0f, 300.0f);
      const float magnitude = std::pow(10.0f, rng.uniform(3.0f, 15.0f));
      return rng.below(2) == 0 ? magnitude : -magnitude;
    }
    default:
      if (seen.empty()) return 0.0f;
      return seen[rng.below(static_cast<std::uint32_t>(seen.size()))];
  }
}

struct Point {
  float x, z;
};

struct PointSource {
  Rng rng;
  bool huge = true;
  std::vector<float> seen;
  std::vector<Point> endpoints;

  Point next() {
    Point p;
    if (!endpoints.empty() && rng.below(5) == 0) {
      p = endpoints[rng.below(static_cast<std::uint32_t>(endpoints.size()))];  // shared endpoint
    } else {
      p = {awkward_coordinate(rng, seen, huge), awkward_coordinate(rng, seen, huge)};
    }
    seen.push_back(p.x);
    seen.push_back(p.z);
    return p;
  }

  // A segment from p: axis-aligned, zero-length, short, a lattice step (collinear with others), or free.
  Ray segment() {
    const Point a = next();
    Point b = next();
    switch (rng.below(8)) {
      case 0: b.x = a.x; break;
      case 1: b.z = a.z; break;
      case 2: b = a; break;
      case 3: b = {a.x + rng.uniform(-2.0f, 2.0f), a.z + rng.uniform(-2.0f, 2.0f)}; break;
      case 4: {
        const auto step = static_cast<float>(static_cast<int>(rng.below(5)) - 2);
        const auto steps = static_cast<float>(rng.below(6));
        b = {a.x + step * steps, a.z + static_cast<float>(static_cast<int>(rng.below(5)) - 2) * steps};
        break;
      }
      default: break;
    }
    endpoints.push_back(a);
    endpoints.push_back(b);
    return {a.x, a.z, b.x, b.z};
  }
};

std::vector<WallSegment> random_walls(PointSource& points, std::uint32_t count) {
  std::vector<WallSegment> walls;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Ray s = points.segment();
    walls.push_back({s.ax, s.az, s.bx, s.bz});
  }
  return walls;
}

// Rays from the same awkward mix, plus rays along walls (through their midpoints, collinear) and
// rays ending on wall endpoints.
Ray random_ray(PointSource& points, const std::vector<WallSegment>& walls) {
  if (walls.empty() || points.rng.below(4) != 0) return points.segment();
  const WallSegment& w = walls[points.rng.below(static_cast<std::uint32_t>(walls.size()))];
  const Point mid = {(w.x0 + w.x1) * 0.5f, (w.z0 + w.z1) * 0.5f};
  switch (points.rng.below(3)) {
    case 0: return {mid.x, mid.z, w.x1 + (w.x1 - w.x0), w.z1 + (w.z1 - w.z0)};
    case 1: {
      const Point a = points.next();
      return {a.x, a.z, w.x0, w.z0};
    }
    default: return {mid.x, mid.z, mid.x, mid.z};
  }
}

struct Config {
  float cell_size;
  std::uint32_t max_cells;
};

struct Tally {
  std::uint64_t queries = 0, blocked = 0, seen = 0;
};

void compare_with_brute_force(std::uint64_t seed, std::uint32_t wall_count, std::uint32_t ray_count,
                              const std::vector<Config>& configs, Tally& tally) {
  // Half the seeds keep to |coordinates| <= 3000, so that cells stay small beside the walls.
  PointSource points{Rng(seed), seed % 2 == 0, {}, {}};
  const std::vector<WallSegment> walls = random_walls(points, wall_count);
  std::vector<Ray> rays;
  std::vector<float> radii;
  std::vector<bool> blocked, sees;
  for (std::uint32_t i = 0; i < ray_count; ++i) {
    const Ray ray = random_ray(points, walls);
    rays.push_back(ray);
    const float r = points.rng.below(3) == 0   ? 0.0f
                    : points.rng.below(2) == 0 ? static_cast<float>(points.rng.below(4))
                                               : points.rng.uniform(0.0f, 20.0f);
    radii.push_back(r);
    blocked.push_back(segment_blocked_brute_force(walls, ray.ax, ray.az, ray.bx, ray.bz));
    sees.push_back(sees_brute_force(walls, ray.ax, ray.az, ray.bx, ray.bz, r));
    tally.blocked += blocked.back();
    tally.seen += sees.back();
  }
  for (const Config& config : configs) {
    OccluderGrid grid;
    grid.build(walls, config.cell_size, config.max_cells);
    ASSERT_LE(static_cast<std::uint64_t>(grid.cells_x()) * grid.cells_z(), config.max_cells);
    ASSERT_LE(grid.entry_count(), config.max_cells + 4ull * walls.size());
    OccluderScratch scratch;
    std::uint32_t mismatches = 0;
    for (std::size_t i = 0; i < rays.size() && mismatches < 10; ++i) {
      const Ray& ray = rays[i];
      const bool got_blocked = grid.blocked(ray.ax, ray.az, ray.bx, ray.bz, scratch);
      const bool got_sees = grid.sees(ray.ax, ray.az, ray.bx, ray.bz, radii[i], scratch);
      if (got_blocked != blocked[i] || got_sees != sees[i]) ++mismatches;
      EXPECT_EQ(got_blocked, blocked[i]) << "seed " << seed << " cell " << config.cell_size << " ray " << i;
      EXPECT_EQ(got_sees, sees[i]) << "seed " << seed << " cell " << config.cell_size << " ray " << i;
      tally.queries += 2;
    }
  }
}

TEST(OccluderGridRandom, MatchesBruteForceForSeveralCellSizes) {
  const std::vector<Config> configs = {{0.0f, 1u << 20},  {1.0f, 1u << 20},  {4.0f, 1u << 20},
                                       {0.37f, 1u << 20}, {25.0f, 1u << 20}, {1.0f, 64},
                                       {0.0f, 1}};
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    compare_with_brute_force(seed, 1000, 6000, configs, tally);
    if (HasFatalFailure()) return;
  }
  // The mix must exercise both answers.
  const std::uint64_t rays = 6 * 6000;
  EXPECT_GT(tally.blocked, rays / 20);
  EXPECT_LT(tally.blocked, rays * 19 / 20);
  EXPECT_GT(tally.seen, rays / 20);
  EXPECT_LT(tally.seen, rays * 19 / 20);
  RecordProperty("grid_queries", std::to_string(tally.queries));
}

// Dense maze-like walls on a lattice, where most rays are short and cross many cell edges.
TEST(OccluderGridRandom, LatticeMazeMatchesBruteForce) {
  Rng rng(42);
  std::vector<WallSegment> walls;
  for (int i = 0; i < 1200; ++i) {
    const auto x = static_cast<float>(static_cast<int>(rng.below(64)) - 32);
    const auto z = static_cast<float>(static_cast<int>(rng.below(64)) - 32);
    const auto length = static_cast<float>(rng.below(4));
    walls.push_back(rng.below(2) == 0 ? WallSegment{x, z, x + length, z} : WallSegment{x, z, x, z + length});
  }
  std::uint32_t blocked_count = 0;
  for (const float cell_size : {0.0f, 0.5f, 1.0f, 2.0f, 3.0f, 8.0f}) {
    OccluderGrid grid;
    grid.build(walls, cell_size);
    OccluderScratch scratch;
    Rng rays(7);
    for (int i = 0; i < 5000; ++i) {
      const float ax = static_cast<float>(static_cast<int>(rays.below(129)) - 64) * 0.5f;
      const float az = static_cast<float>(static_cast<int>(rays.below(129)) - 64) * 0.5f;
      const float bx = ax + static_cast<float>(static_cast<int>(rays.below(17)) - 8) * 0.5f;
      const float bz = az + static_cast<float>(static_cast<int>(rays.below(17)) - 8) * 0.5f;
      const bool expected = segment_blocked_brute_force(walls, ax, az, bx, bz);
      blocked_count += expected;
      ASSERT_EQ(grid.blocked(ax, az, bx, bz, scratch), expected) << cell_size << " " << i;
      const float r = static_cast<float>(rays.below(3)) * 0.5f;
      ASSERT_EQ(grid.sees(ax, az, bx, bz, r, scratch), sees_brute_force(walls, ax, az, bx, bz, r))
          << cell_size << " " << i;
    }
  }
  EXPECT_GT(blocked_count, 6u * 5000 / 10);
  EXPECT_LT(blocked_count, 6u * 5000 * 9 / 10);
}

// Walls a few floats either side of row and column edges, and long, nearly level rays through
// them: the float cell mapping and the arithmetic edges origin + k * cell differ there by a few
// ulps, which a shallow ray turns into a large shift in x. The traversal's padding must cover it.
TEST(OccluderGridRandom, NearCellEdgesWithShallowRays) {
  std::uint32_t blocked_count = 0, queries = 0;
  for (const float cell_size : {0.37f, 0.1f, 3.3f, 1.0f / 3.0f}) {
    Rng rng(static_cast<std::uint64_t>(cell_size * 1000.0f));
    auto near_edge = [&](std::uint32_t cells) {
      float v = static_cast<float>((1.0 + rng.below(cells - 2)) * cell_size);
      for (std::uint32_t step = rng.below(9); step > 0; --step) {
        v = std::nextafter(v, rng.below(2) == 0 ? 0.0f : 1e9f);
      }
      return v;
    };
    // The corner walls fix the grid's origin at 0 and its extent.
    std::vector<WallSegment> walls = {{0, 0, 0, 0},
                                      {256 * cell_size, 256 * cell_size, 256 * cell_size, 256 * cell_size}};
    for (int i = 0; i < 400; ++i) {
      const float x = near_edge(250), z = near_edge(250);
      const float width = cell_size * std::pow(10.0f, -rng.uniform(1.0f, 4.0f));
      walls.push_back(rng.below(2) == 0 ? WallSegment{x - width, z, std::nextafter(x, 0.0f), z}
                                        : WallSegment{x, z - width, x, std::nextafter(z, 0.0f)});
    }
    OccluderGrid grid;
    grid.build(walls, cell_size);
    ASSERT_EQ(grid.cell_size(), cell_size);
    OccluderScratch scratch;
    for (int i = 0; i < 20000; ++i) {
      const WallSegment& w = walls[2 + rng.below(400)];
      const float u = rng.uniform();
      const float px = w.x0 + (w.x1 - w.x0) * u, pz = w.z0 + (w.z1 - w.z0) * u;
      // Mostly level in z or in x, spanning one to a few cells across the other axis.
      const float along = rng.uniform(10.0f, 2000.0f) * cell_size;
      const float across = rng.uniform(0.05f, 3.0f) * cell_size;
      const float t = rng.uniform();
      float dx = along, dz = across;
      if (rng.below(2) == 0) std::swap(dx, dz);
      if (rng.below(2) == 0) dx = -dx;
      const float ax = px - dx * t, az = pz - dz * t, bx = px + dx * (1 - t), bz = pz + dz * (1 - t);
      const bool expected = segment_blocked_brute_force(walls, ax, az, bx, bz);
      blocked_count += expected;
      ++queries;
      ASSERT_EQ(grid.blocked(ax, az, bx, bz, scratch), expected) << cell_size << " " << i;
    }
  }
  EXPECT_GT(blocked_count, queries / 10);
  EXPECT_LT(blocked_count, queries * 9 / 10);
}

// An exact predicate is symmetric: swapping which segment is the wall, or the order of either's
// endpoints, cannot change the answer.
TEST(OccluderPredicateRandom, SymmetricUnderSwaps) {
  PointSource points{Rng(99), true, {}, {}};
  for (int i = 0; i < 200000; ++i) {
    const Ray s = points.segment();
    const Ray t = points.segment();
    const WallSegment ws[] = {{s.ax, s.az, s.bx, s.bz}};
    const WallSegment wt[] = {{t.ax, t.az, t.bx, t.bz}};
    const WallSegment wt_reversed[] = {{t.bx, t.bz, t.ax, t.az}};
    const bool hit = segment_blocked_brute_force(wt, s.ax, s.az, s.bx, s.bz);
    ASSERT_EQ(segment_blocked_brute_force(wt, s.bx, s.bz, s.ax, s.az), hit) << i;
    ASSERT_EQ(segment_blocked_brute_force(wt_reversed, s.ax, s.az, s.bx, s.bz), hit) << i;
    ASSERT_EQ(segment_blocked_brute_force(ws, t.ax, t.az, t.bx, t.bz), hit) << i;
    ASSERT_EQ(segment_blocked_brute_force(ws, t.bx, t.bz, t.ax, t.az), hit) << i;
  }
}

// ---- Scratch ---------------------------------------------------------------------------------

TEST(OccluderScratch, QueriesDoNotReallocateOnceSized) {
  PointSource points{Rng(5), false, {}, {}};
  const std::vector<WallSegment> walls = random_walls(points, 500);
  OccluderGrid grid;
  grid.build(walls, 0.0f);

  OccluderScratch prepared;
  prepared.prepare(grid);
  OccluderScratch lazy;
  static_cast<void>(grid.blocked(1e9f, 1e9f, 1e9f, 1e9f, lazy));  // sizes `lazy` on first use
  for (OccluderScratch* scratch : {&prepared, &lazy}) {
    ASSERT_GE(scratch->stamp_capacity(), walls.size());
    const std::uint32_t* const data = scratch->stamp_data();
    const std::size_t capacity = scratch->stamp_capacity();
    for (int i = 0; i < 5000; ++i) {
      const Ray ray = random_ray(points, walls);
      static_cast<void>(grid.blocked(ray.ax, ray.az, ray.bx, ray.bz, *scratch));
      static_cast<void>(grid.sees(ray.ax, ray.az, ray.bx, ray.bz, 2.0f, *scratch));
    }
    EXPECT_EQ(scratch->stamp_data(), data);
    EXPECT_EQ(scratch->stamp_capacity(), capacity);
  }

  // A grid with fewer walls reuses the same buffers too.
  OccluderGrid smaller;
  smaller.build(std::span(walls).first(100), 2.0f);
  const std::uint32_t* const data = prepared.stamp_data();
  static_cast<void>(smaller.blocked(0, 0, 10, 10, prepared));
  EXPECT_EQ(prepared.stamp_data(), data);
}

TEST(OccluderScratch, OneScratchServesGridsInTurn) {
  // Stamps left by one grid's queries must not hide walls from another grid's queries.
  const std::vector<WallSegment> a = {{0, -1, 0, 1}, {1, -1, 1, 1}};
  const std::vector<WallSegment> b = {{1, -1, 1, 1}, {0, -1, 0, 1}, {2, -1, 2, 1}};
  OccluderGrid grid_a, grid_b;
  grid_a.build(a, 0.5f);
  grid_b.build(b, 0.5f);
  OccluderScratch scratch;
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(grid_a.blocked(-1, 0, 0.5f, 0, scratch));
    EXPECT_TRUE(grid_b.blocked(1.5f, 0, 3, 0, scratch));
    EXPECT_FALSE(grid_a.blocked(1.5f, 0, 3, 0, scratch));
  }
}

}  // namespace
}  // namespace sightline::testing
