// The grid finds exactly what a brute-force distance test finds. There is no public grid API,
// so each case is observed through the interest sets after a tick, against the oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "mirrored_world.h"
#include "rng.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

using scenarios::Rng;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Positions mixed from: uniform with negatives, far outside, a lattice of multiples of R (cell
// edges), exact axis offsets of R from earlier points, and tight clusters.
std::vector<Position> awkward_points(Rng& rng, std::uint32_t count, float r, float width) {
  std::vector<Position> points;
  while (points.size() < count) {
    switch (rng.below(6)) {
      case 0:
      case 1: points.push_back({rng.uniform(-width, width), rng.uniform(-width, width)}); break;
      case 2: {
        const auto kx = static_cast<float>(static_cast<int>(rng.below(21)) - 10);
        const auto kz = static_cast<float>(static_cast<int>(rng.below(21)) - 10);
        points.push_back({kx * r, kz * r});
        break;
      }
      case 3: {
        if (points.empty()) break;
        const Position base = points[rng.below(static_cast<std::uint32_t>(points.size()))];
        const float offset = rng.below(2) == 0 ? r : -r;
        points.push_back(rng.below(2) == 0 ? Position{base.x + offset, base.z}
                                           : Position{base.x, base.z + offset});
        break;
      }
      case 4: {
        const float far = rng.uniform(2.0f, 50.0f) * width;
        points.push_back({rng.below(2) == 0 ? far : -far, rng.uniform(-far, far)});
        break;
      }
      default: {
        if (points.empty()) break;
        const Position base = points[rng.below(static_cast<std::uint32_t>(points.size()))];
        points.push_back({base.x + rng.uniform(-0.1f, 0.1f) * r, base.z + rng.uniform(-0.1f, 0.1f) * r});
        break;
      }
    }
  }
  return points;
}

// One tick over `points` with every `client_every`-th point a viewer; the sets must equal the oracle's.
std::string check_points(const WorldDef& def, const std::vector<Position>& points,
                         std::uint32_t client_every) {
  MirroredWorld mirror(def);
  std::vector<EntityId> ids;
  for (const Position& p : points) ids.push_back(*mirror.create_entity({p.x, p.z, false}));
  for (std::size_t i = 0; i < ids.size(); i += client_every) (void)mirror.create_client(ids[i]);
  (void)mirror.tick();
  // A second tick, after moving everything, exercises the leave radius against members too.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    (void)mirror.set_position(ids[i], points[(i + 1) % points.size()].x, points[(i + 1) % points.size()].z);
  }
  (void)mirror.tick();
  return mirror.error();
}

TEST(GridQueryTest, RandomPointsEqualBruteForce) {
  Rng rng(2024);
  for (int round = 0; round < 60; ++round) {
    WorldDef def = default_world_def();
    const float radii[] = {1.0f, 1.6f, 0.3f, 7.5f, rng.uniform(0.1f, 10.0f)};
    def.enter_radius = radii[round % 5];
    def.leave_radius = def.enter_radius * (round % 2 == 0 ? 1.0f : 1.25f);
    if (round % 3 == 1) def.cell_size = def.enter_radius * 2.5f;
    const std::vector<Position> points = awkward_points(rng, 300, def.enter_radius, rng.uniform(2.0f, 60.0f));
    ASSERT_EQ(check_points(def, points, 3), "") << "round " << round;
  }
}

TEST(GridQueryTest, HugeOutlierWithSmallCellCapEqualsBruteForce) {
  Rng rng(99);
  for (const float outlier : {1.0e12f, -1.0e12f, 1.0e9f, 3.0e5f}) {
    WorldDef def = default_world_def();
    def.max_grid_cells = 16;
    std::vector<Position> points = awkward_points(rng, 200, def.enter_radius, 10.0f);
    points.push_back({outlier, 0.0f});
    points.push_back({0.0f, outlier});
    points.push_back({outlier, outlier});
    points.push_back({outlier + def.enter_radius, outlier});
    ASSERT_EQ(check_points(def, points, 2), "") << "outlier " << outlier;
  }
}

// A few entities at huge coordinates among over Grid::kOutlierMinEntities walkers: the grid covers
// the walkers' box and the outliers lie in its border cells. Viewers stand among the walkers and at
// the outliers (two of which see each other); outliers jump into the crowd and out again.
TEST(GridQueryTest, FewOutliersAmongManyEntitiesEqualBruteForce) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    Rng rng(seed * 7919);
    WorldDef def = default_world_def();
    def.enter_radius = rng.uniform(2.0f, 8.0f);
    def.leave_radius = def.enter_radius * 1.25f;
    const float width = rng.uniform(60.0f, 200.0f);
    MirroredWorld mirror(def);
    const std::vector<Position> far = {{kMaxCoordinate, -kMaxCoordinate},
                                       {-kMaxCoordinate, 0.0f},
                                       {1.0e12f, 1.0e12f},
                                       {1.0e12f + 0.5f * def.enter_radius, 1.0e12f},
                                       {0.0f, -3.0e9f}};
    std::vector<EntityId> outliers;
    for (const Position& p : far) outliers.push_back(*mirror.create_entity({p.x, p.z, false}));
    std::vector<EntityId> walkers;
    for (int i = 0; i < 1500; ++i) {
      walkers.push_back(
          *mirror.create_entity({rng.uniform(-width, width), rng.uniform(-width, width), false}));
    }
    for (const EntityId e : outliers) (void)mirror.create_client(e);
    for (std::size_t i = 0; i < walkers.size(); i += 9) (void)mirror.create_client(walkers[i]);
    for (int t = 0; t < 12; ++t) {
      (void)mirror.tick();
      ASSERT_EQ(mirror.error(), "") << "seed " << seed << " tick " << t;
      for (const EntityId e : walkers) {
        const Position p = *mirror.world().position(e);
        (void)mirror.set_position(e, p.x + rng.uniform(-1.0f, 1.0f), p.z + rng.uniform(-1.0f, 1.0f));
      }
      // One outlier visits the crowd for a few ticks; another stands on the crowd's edge.
      const std::size_t visitor = seed % far.size();
      const bool home = t >= 4 && t < 8;
      (void)mirror.set_position(outliers[visitor], home ? rng.uniform(-width, width) : far[visitor].x,
                                home ? rng.uniform(-width, width) : far[visitor].z);
      (void)mirror.set_position(outliers[(visitor + 1) % far.size()], t % 2 == 0 ? width : far[0].x,
                                t % 2 == 0 ? width : far[0].z);
    }
  }
}

// A world of more slots than Grid::partition_min_slots with a few viewers: the grid fills only the
// cells the viewers' scans reach. With L = R a set is every entity within R of an origin but the
// viewer, which the test computes by testing every entity. Viewers with extra origins, radii that
// grow and shrink, viewers and origins that jump, entities destroyed and created. (The oracle's
// bookkeeping is too slow for this many entities.)
TEST(GridQueryTest, LargeWorldWithFewViewersEqualsBruteForce) {
  Rng rng(0x1a46e);
  WorldDef def = default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 10.0f;
  World world = std::move(World::create(def).value());
  const std::uint32_t count = (1u << 17) + 3000;
  const float side = 1000.0f * std::sqrt(static_cast<float>(count) / 1.0e4f);  // ~1 entity per 100 m^2
  std::vector<float> xs(count), zs(count);
  std::vector<EntityId> ids(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    xs[i] = rng.uniform(0.0f, side);
    zs[i] = rng.uniform(0.0f, side);
    ids[i] = *world.create_entity({xs[i], zs[i], false});
  }
  std::vector<ClientId> clients;
  std::vector<std::vector<std::uint32_t>> origins;  // viewer first
  for (std::uint32_t c = 0; c < 12; ++c) {
    clients.push_back(*world.create_client(ids[c * 1000]));
    origins.push_back({c * 1000});
    if (c < 3) {
      ASSERT_TRUE(world.add_origin(clients[c], ids[c * 1000 + 7]).ok());
      origins.back().push_back(c * 1000 + 7);
    }
  }
  float radius = 10.0f;
  for (int t = 0; t < 8; ++t) {
    (void)world.tick();
    for (std::size_t c = 0; c < clients.size(); ++c) {
      std::vector<std::uint32_t> want;
      for (std::uint32_t i = 0; i < count; ++i) {
        if (i == origins[c][0]) continue;
        for (const std::uint32_t o : origins[c]) {
          const float dx = xs[i] - xs[o];
          const float dz = zs[i] - zs[o];
          if (dx * dx + dz * dz <= radius * radius) {
            want.push_back(ids[i].index);
            break;
          }
        }
      }
      std::vector<std::uint32_t> got;
      for (const EntityId e : *world.interest_set(clients[c])) got.push_back(e.index);
      std::sort(want.begin(), want.end());
      ASSERT_EQ(got, want) << "tick " << t << " client " << c;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      xs[i] += rng.uniform(-2.0f, 2.0f);
      zs[i] += rng.uniform(-2.0f, 2.0f);
    }
    // A viewer and an origin jump across the world; the radii change; churn far from anyone.
    for (const std::uint32_t jumper : {(static_cast<std::uint32_t>(t) % 12) * 1000, 7u}) {
      xs[jumper] = rng.uniform(0.0f, side);
      zs[jumper] = rng.uniform(0.0f, side);
    }
    const std::uint32_t churn = 20000 + rng.below(1000);
    ASSERT_TRUE(world.destroy_entity(ids[churn]).ok());
    ids[churn] = *world.create_entity({xs[churn], zs[churn], false});
    ASSERT_TRUE(world.set_positions(ids, xs, zs).ok());
    if (t == 3) radius = 25.0f;
    if (t == 5) radius = 4.0f;
    if (t == 3 || t == 5) {
      ASSERT_TRUE(world.set_radii(radius, radius).ok());
    }
  }
}

TEST(GridQueryTest, TinyCellCapsEqualBruteForce) {
  Rng rng(7);
  for (const std::uint32_t cap : {1u, 2u, 3u, 5u}) {
    WorldDef def = default_world_def();
    def.max_grid_cells = cap;
    const std::vector<Position> points = awkward_points(rng, 150, def.enter_radius, 20.0f);
    ASSERT_EQ(check_points(def, points, 1), "") << "max_grid_cells " << cap;
  }
}

TEST(GridQueryTest, ExtremeCoordinatesEqualBruteForce) {
  for (const float r : {1.6f, 1.0e6f, kMaxRadius}) {
    WorldDef def = default_world_def();
    def.enter_radius = r;
    def.leave_radius = r;
    const std::vector<Position> points = {{kMaxCoordinate, kMaxCoordinate},
                                          {-kMaxCoordinate, -kMaxCoordinate},
                                          {kMaxCoordinate, -kMaxCoordinate},
                                          {kMaxCoordinate - r, kMaxCoordinate},
                                          {std::nextafter(kMaxCoordinate, 0.0f), kMaxCoordinate},
                                          {0.0f, 0.0f},
                                          {r, 0.0f},
                                          {-kMaxCoordinate, 0.0f},
                                          {-kMaxCoordinate + r, 0.0f}};
    ASSERT_EQ(check_points(def, points, 1), "") << "R " << r;
  }
}

// Viewers and entities on the lattice of cell edges (cell size R, origin on the lattice):
// along each axis the neighbour is at exactly d == R and is inside; diagonals are outside.
TEST(GridQueryTest, LatticeOnCellEdgesFindsExactlyTheAxisNeighbours) {
  for (const float r : {1.0f, 0.5f, 2.0f}) {
    SmallWorld w(r, r);
    std::vector<ClientId> clients;
    for (int z = -4; z <= 4; ++z) {
      for (int x = -4; x <= 4; ++x)
        clients.push_back(w.client(w.make(static_cast<float>(x) * r, static_cast<float>(z) * r)));
    }
    (void)w.world.tick();
    for (int z = -4; z <= 4; ++z) {
      for (int x = -4; x <= 4; ++x) {
        const std::size_t expected = 4u - (std::abs(x) == 4) - (std::abs(z) == 4);
        const ClientId client = clients[static_cast<std::size_t>((z + 4) * 9 + x + 4)];
        EXPECT_EQ(w.held(client).size(), expected) << "R " << r << " at (" << x << ", " << z << ")";
      }
    }
  }
}

TEST(GridQueryTest, LatticeOfNonDyadicRadiusEqualsBruteForce) {
  for (const float r : {1.6f, 0.1f, 3.3f}) {
    WorldDef def = default_world_def();
    def.enter_radius = r;
    def.leave_radius = r;
    std::vector<Position> points;
    for (int z = -6; z <= 6; ++z) {
      for (int x = -6; x <= 6; ++x) points.push_back({static_cast<float>(x) * r, static_cast<float>(z) * r});
    }
    ASSERT_EQ(check_points(def, points, 1), "") << "R " << r;
  }
}

// The farthest float position along one axis that the float test dx*dx <= R*R admits: it can
// lie beyond v + R (rounded), which is why the query box needs its padding.
float farthest_admitted(float v, float r, float direction) {
  const float r2 = r * r;
  auto inside = [&](float e) {
    const float d = e - v;
    return d * d <= r2;
  };
  const float outward = direction * kInf;
  float e = v + direction * r;
  while (inside(std::nextafter(e, outward))) e = std::nextafter(e, outward);
  while (!inside(e)) e = std::nextafter(e, -outward);
  return e;
}

// Large coordinates and small radii make float steps comparable to the cell size, so the
// admitted boundary often falls in the next cell: the grid must still find it.
TEST(GridQueryTest, FarthestAdmittedPositionsAtLargeCoordinatesEqualBruteForce) {
  Rng rng(31337);
  for (int round = 0; round < 80; ++round) {
    WorldDef def = default_world_def();
    def.enter_radius = rng.uniform(0.01f, 2.0f);
    def.leave_radius = def.enter_radius;
    const float magnitudes[] = {1.0e2f, 1.0e4f, 1.0e5f, 1.0e6f, 3.0e6f};
    const float base = magnitudes[round % 5] * (rng.below(2) == 0 ? 1.0f : -1.0f);
    std::vector<Position> points;
    for (int v = 0; v < 12; ++v) {
      const Position viewer{base + rng.uniform(-20.0f, 20.0f) * def.enter_radius,
                            -base + rng.uniform(-20.0f, 20.0f) * def.enter_radius};
      points.push_back(viewer);
      for (const float direction : {1.0f, -1.0f}) {
        const float x = farthest_admitted(viewer.x, def.enter_radius, direction);
        const float z = farthest_admitted(viewer.z, def.enter_radius, direction);
        points.push_back({x, viewer.z});
        points.push_back({std::nextafter(x, direction * kInf), viewer.z});
        points.push_back({viewer.x, z});
        points.push_back({viewer.x, std::nextafter(z, direction * kInf)});
      }
    }
    ASSERT_EQ(check_points(def, points, 5), "") << "round " << round;
  }
}

// Found by search: the float test admits an entity at e although e > v + R rounded, and an
// entity at `origin` puts a cell edge between the two. A query box of exactly v +- R, unpadded,
// would miss the entity.
TEST(GridQueryTest, AdmittedEntityBeyondTheRoundedQueryEdgeIsFound) {
  struct Case {
    float r, v, e, origin;
  };
  const Case cases[] = {
      {0x1.a6455cp+0f, -0x1.d08fd4p+0f, -0x1.5253b8p-3f, -0x1.0d34a8p+3f},
      {0x1.1014bp+1f, -0x1.0280ccp-3f, 0x1.ffd948p+0f, -0x1.a0330cp+2f},
      {0x1.1014bp+1f, -0x1.0280ccp-3f, 0x1.ffd948p+0f, -0x1.141eb2p+3f},
      {0x1.054c12p+1f, -0x1.14818cp+1f, -0x1.e6af38p-4f, -0x1.8f8cd6p+2f},
      {0x1.78e60ap+1f, -0x1.7709bep+1f, 0x1.dc4c08p-7f, -0x1.1a3572p+3f},
  };
  for (const Case& c : cases) {
    const float dx = c.e - c.v;
    ASSERT_LE(dx * dx, c.r * c.r) << "the case must be admitted by the float test";
    ASSERT_GT(c.e, c.v + c.r) << "the case must lie beyond the rounded query edge";
    SmallWorld w(c.r, c.r);
    w.make(c.origin, c.origin);
    const ClientId client = w.client(w.make(c.v, 0.0f));
    const EntityId admitted = w.make(c.e, 0.0f);
    (void)w.world.tick();
    const std::vector<EntityId> set = w.held(client);
    EXPECT_EQ(std::count(set.begin(), set.end(), admitted), 1) << "R " << c.r << " v " << c.v << " e " << c.e;
    ASSERT_EQ(check_points(small_world_def(c.r, c.r), {{c.origin, c.origin}, {c.v, 0.0f}, {c.e, 0.0f}}, 1),
              "");
  }
}

TEST(GridQueryTest, DistanceExactlyEnterRadiusIsInsideAndOneStepBeyondIsOutside) {
  SmallWorld w(0.5f, 0.5f);
  const EntityId viewer = w.make(-3.0f, 5.0f);
  const EntityId right = w.make(-2.5f, 5.0f);
  const EntityId left = w.make(-3.5f, 5.0f);
  const EntityId up = w.make(-3.0f, 5.5f);
  const EntityId down = w.make(-3.0f, 4.5f);
  w.make(std::nextafter(-2.5f, kInf), 5.0f);
  w.make(-3.0f, std::nextafter(4.5f, -kInf));
  const ClientId client = w.client(viewer);
  (void)w.world.tick();
  EXPECT_EQ(w.held(client), (std::vector<EntityId>{right, left, up, down}));
}

TEST(GridQueryTest, DistanceExactlyLeaveRadiusStaysAndOneStepBeyondLeaves) {
  SmallWorld w(1.0f, 1.5f);
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId stays = w.make(0.0f, 0.5f);
  const EntityId leaves = w.make(0.5f, 0.0f);
  const ClientId client = w.client(viewer);
  (void)w.world.tick();
  ASSERT_EQ(w.held(client).size(), 2u);
  ASSERT_TRUE(w.world.set_position(stays, 0.0f, -1.5f).ok());
  ASSERT_TRUE(w.world.set_position(leaves, std::nextafter(1.5f, kInf), 0.0f).ok());
  (void)w.world.tick();
  EXPECT_EQ(w.held(client), std::vector<EntityId>{stays});
  EXPECT_EQ(w.despawns(client),
            (std::vector<std::pair<EntityId, DespawnReason>>{{leaves, DespawnReason::left}}));
}

}  // namespace
}  // namespace sightline::testing
