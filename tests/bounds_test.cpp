// Entity bounds: distance is measured to the surface of the entity's sphere, and bounded
// entities (kept out of the grid) are found exactly as a brute-force surface test finds them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "rng.h"
#include "sightline/sightline.h"
#include "small_world.h"

namespace sightline {
namespace {

using scenarios::Rng;
using testing::small_world_def;
using testing::SmallWorld;

float d2(float ax, float az, float bx, float bz) {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

TEST(BoundsTest, TerrainStaysHeldByAClientAtItsEdge) {
  SmallWorld w(60.0f, 84.0f);
  const EntityId player = w.make(0.0f, 0.0f);
  // A 256 m terrain whose centre is 300 m away: its surface is 44 m away.
  const EntityId terrain = w.make({.x = 300.0f, .z = 0.0f, .bound_radius = 256.0f});
  const EntityId rock = w.make(300.0f, 0.0f);
  const ClientId client = w.client(player);
  w.world.tick();
  EXPECT_TRUE(w.holds(client, terrain));
  EXPECT_FALSE(w.holds(client, rock));
  // Walk away: held until the surface is farther than L.
  ASSERT_TRUE(w.world.set_position(player, -40.0f, 0.0f).ok());  // surface at 84: stays (d == L)
  w.world.tick();
  EXPECT_TRUE(w.despawns(client).empty());
  ASSERT_TRUE(w.world.set_position(player, -41.0f, 0.0f).ok());
  w.world.tick();
  const auto despawns = w.despawns(client);
  ASSERT_EQ(despawns.size(), 1u);
  EXPECT_EQ(despawns[0].first, terrain);
  EXPECT_EQ(*w.world.bound_radius(terrain), 256.0f);
}

TEST(BoundsTest, TiersMeasureToTheSurface) {
  WorldDef def = small_world_def(10.0f, 10.0f);
  def.tiers = default_distance_tiers();
  SmallWorld w(def);
  const EntityId player = w.make(0.0f, 0.0f);
  // Centre at 9, surface at 4 (< R/2): every tick. A point at 9 would be every second tick.
  const EntityId big = w.make({.x = 9.0f, .z = 0.0f, .bound_radius = 5.0f});
  const ClientId client = w.client(player);
  for (int t = 0; t < 4; ++t) {
    w.world.tick();
    ASSERT_EQ(w.updates(client), std::vector<EntityId>{big}) << "tick " << t;
  }
}

TEST(BoundsTest, RefusedRadiiChangeNothing) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId e = w.make(0.0f, 0.0f);
  for (const float bad : {-1.0f, std::nanf(""), INFINITY, 2.0e9f}) {
    const Status s = world.set_bound_radius(e, bad);
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
    EXPECT_NE(s.message().find("bound_radius of entity 0:1"), std::string::npos) << s.message();
    EXPECT_EQ(*world.bound_radius(e), 0.0f);
  }
  const std::uint32_t before = world.entity_count();
  EXPECT_FALSE(world.create_entity({.x = 0.0f, .z = 0.0f, .bound_radius = -2.0f}).ok());
  EXPECT_EQ(world.entity_count(), before);
}

// Random points and spheres, several origins, hysteresis: sets equal a brute-force surface test
// (enter within R + r of the nearest origin, leave beyond L + r) tick by tick.
TEST(BoundsTest, MatchesBruteForceOnRandomSpheres) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed);
    WorldDef def = default_world_def();
    def.enter_radius = rng.uniform(1.0f, 8.0f);
    def.leave_radius = def.enter_radius * rng.uniform(1.0f, 1.5f);
    World world = std::move(World::create(def).value());
    const std::uint32_t n = 60;
    std::vector<EntityId> ids;
    std::vector<float> xs(n), zs(n), bounds(n, 0.0f);
    for (std::uint32_t i = 0; i < n; ++i) {
      xs[i] = rng.uniform(-50.0f, 50.0f);
      zs[i] = rng.uniform(-50.0f, 50.0f);
      if (rng.below(3) == 0)
        bounds[i] = rng.below(4) == 0 ? rng.uniform(20.0f, 60.0f) : rng.uniform(0.1f, 4.0f);
      ids.push_back(*world.create_entity({.x = xs[i], .z = zs[i], .bound_radius = bounds[i]}));
    }
    struct Viewer {
      ClientId client;
      std::vector<std::uint32_t> origins;  // [0] is the viewer
      std::set<std::uint32_t> held;
    };
    std::vector<Viewer> viewers;
    for (std::uint32_t c = 0; c < 6; ++c) {
      Viewer v{*world.create_client(ids[c]), {c}, {}};
      for (std::uint32_t k = 0; k < rng.below(3); ++k) {
        const std::uint32_t o = 6 + rng.below(n - 6);
        if (std::find(v.origins.begin(), v.origins.end(), o) != v.origins.end()) continue;
        ASSERT_TRUE(world.add_origin(v.client, ids[o]).ok());
        v.origins.push_back(o);
      }
      viewers.push_back(std::move(v));
    }
    for (int tick = 0; tick < 30; ++tick) {
      for (std::uint32_t i = 0; i < n; ++i) {
        xs[i] += rng.uniform(-3.0f, 3.0f);
        zs[i] += rng.uniform(-3.0f, 3.0f);
      }
      ASSERT_TRUE(world.set_positions(ids, xs, zs).ok());
      world.tick();
      for (Viewer& v : viewers) {
        auto nearest2 = [&](std::uint32_t e) {
          float best = INFINITY;
          for (const std::uint32_t o : v.origins) best = std::min(best, d2(xs[e], zs[e], xs[o], zs[o]));
          return best;
        };
        std::set<std::uint32_t> next;
        for (const std::uint32_t e : v.held) {
          const float reach = def.leave_radius + bounds[e];
          const bool origin = std::find(v.origins.begin() + 1, v.origins.end(), e) != v.origins.end();
          if (origin || nearest2(e) <= reach * reach) next.insert(e);
        }
        for (std::uint32_t e = 0; e < n; ++e) {
          if (e == v.origins[0] || next.count(e)) continue;
          const float reach = def.enter_radius + bounds[e];
          const bool origin = std::find(v.origins.begin() + 1, v.origins.end(), e) != v.origins.end();
          if (origin || nearest2(e) <= reach * reach) next.insert(e);
        }
        v.held = next;
        std::vector<std::uint32_t> got;
        for (const EntityId id : *world.interest_set(v.client)) got.push_back(id.index);
        const std::vector<std::uint32_t> want(v.held.begin(), v.held.end());
        ASSERT_EQ(got, want) << "seed " << seed << " tick " << tick << " client " << v.client.index;
      }
    }
  }
}

}  // namespace
}  // namespace sightline
