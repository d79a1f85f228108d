// The questions a game asks (is_relevant_to, why, holder_count), presenters, always relevant at
// run time, and teleports that do not wait for a slow tier.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "rng.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

using Spawn = std::pair<EntityId, SpawnReason>;

TEST(QuestionsTest, WhyNamesTheRuleThatDecidedAndHolderCountCountsClients) {
  SmallWorld w;
  const EntityId v1 = w.make(0, 0);
  const EntityId v2 = w.make(100, 0);
  const EntityId npc = w.make(5, 0);
  const EntityId lonely = w.make(50, 0);
  const EntityId door = w.make(11, 0);
  const ClientId c1 = w.client(v1);
  const ClientId c2 = w.client(v2);
  w.world.tick();
  EXPECT_EQ(*w.world.holder_count(npc), 1u);
  EXPECT_EQ(*w.world.holder_count(lonely), 0u) << "nobody sees it: the game may slow it down";
  EXPECT_EQ(*w.world.holder_count(v1), 0u);
  const Why near = *w.world.why(c1, npc);
  EXPECT_TRUE(near.held);
  EXPECT_EQ(near.rule, Rule::near);
  EXPECT_EQ(near.root, npc);
  EXPECT_EQ(w.world.why(c1, door)->rule, Rule::out_of_range);
  EXPECT_EQ(w.world.why(c1, v1)->rule, Rule::viewer);
  EXPECT_EQ(w.world.why(c2, v1)->rule, Rule::out_of_range);

  ASSERT_TRUE(w.world.set_position(npc, 11.5f, 0).ok());  // between R and L: hysteresis keeps it
  EXPECT_EQ(w.world.why(c1, npc)->rule, Rule::within_leave);
  ASSERT_TRUE(w.world.set_area_interest_key(npc, 9).ok());
  EXPECT_FALSE(w.world.why(c1, npc)->held);
  EXPECT_EQ(w.world.why(c1, npc)->rule, Rule::key_excluded);
  ASSERT_TRUE(w.world.add_user_subscription(c1, {.key = 1}).ok());
  ASSERT_TRUE(
      w.world.set_area_subscriptions(c1, std::vector<KeySubscription>{{.key = 9, .bypass_distance = true}})
          .ok());
  EXPECT_EQ(w.world.why(c1, npc)->rule, Rule::key_bypass);
  w.world.tick();
  EXPECT_TRUE(w.holds(c1, npc));
  EXPECT_FALSE(w.holds(c2, npc));
  EXPECT_EQ(*w.world.holder_count(npc), 1u);

  ASSERT_TRUE(w.world.set_owner(lonely, c2).ok());
  EXPECT_EQ(w.world.why(c2, lonely)->rule, Rule::owner);
  ASSERT_TRUE(w.world.add_origin(c1, lonely).ok());
  EXPECT_EQ(w.world.why(c1, lonely)->rule, Rule::origin);
  w.world.tick();
  EXPECT_EQ(*w.world.holder_count(lonely), 2u);
  ASSERT_TRUE(w.world.destroy_client(c2).ok());
  EXPECT_EQ(*w.world.holder_count(lonely), 1u) << "a destroyed client holds nothing";
  EXPECT_EQ(w.world.why(c2, npc).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.is_relevant_to(c1, EntityId{}).status().code(), ErrorCode::null_handle);
}

TEST(QuestionsTest, ABossTurnsAlwaysRelevantWhenItsFightStarts) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId boss = w.make(900, 0);
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_FALSE(w.holds(c, boss));
  ASSERT_TRUE(w.world.set_always_relevant(boss, true).ok());
  EXPECT_TRUE(*w.world.always_relevant(boss));
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{boss, SpawnReason::always}}));
  EXPECT_EQ(w.world.why(c, boss)->rule, Rule::always);
  ASSERT_TRUE(w.world.set_always_relevant(boss, false).ok());
  w.world.tick();
  EXPECT_FALSE(w.holds(c, boss));
}

TEST(QuestionsTest, PresentersAreHeldByEveryClientOfTheirSpaceThatTheirKeyAdmits) {
  SmallWorld w;
  const EntityId v1 = w.make(0, 0);
  const EntityId v2 = w.make(5000, 0);
  const SpaceId other = *w.world.create_space({.culling = Culling::on});
  const EntityId v3 = w.make(0, 0, other);
  // A match record: no place to be near, so a presenter whose position nobody reads.
  const EntityId record = *w.world.create_entity({.presenter = true});
  const EntityId team_radio = w.make(2500, 0);
  ASSERT_TRUE(w.world.set_presenter(team_radio, true).ok());
  ASSERT_TRUE(w.world.set_user_interest_key(team_radio, 77).ok());
  const ClientId c1 = w.client(v1);
  const ClientId c2 = w.client(v2);
  const ClientId c3 = w.client(v3);
  ASSERT_TRUE(w.world.add_user_subscription(c2, {.key = 77}).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c1), (std::vector<Spawn>{{record, SpawnReason::presenter}}));
  EXPECT_EQ(w.spawns(c2),
            (std::vector<Spawn>{{record, SpawnReason::presenter}, {team_radio, SpawnReason::presenter}}));
  EXPECT_TRUE(w.held(c3).empty());
  EXPECT_EQ(w.world.why(c2, team_radio)->rule, Rule::presenter);
}

TEST(QuestionsTest, ATeleportTakesEffectAtTheNextTickWhateverTheTier) {
  WorldDef def = small_world_def(10.0f, 12.0f);
  def.tiers = {{0.5f, 1}, {std::numeric_limits<float>::infinity(), 8}};
  SmallWorld w(def);
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId slow = w.make(9.0f, 0.0f);
  const EntityId jumper = w.make(500.0f, 0.0f);
  const ClientId c = w.client(viewer);
  world.tick();  // tick 0: spawns and their first updates
  auto due = [&](EntityId e) {
    const std::vector<EntityId> updates = w.updates(c);
    return std::find(updates.begin(), updates.end(), e) != updates.end();
  };
  // The far tier updates `slow` once in 8 ticks; a teleport makes it due at once.
  std::uint64_t tick = world.tick_count();
  while ((tick + slow.index) % 8 == 0) tick = (world.tick(), world.tick_count());
  ASSERT_TRUE(world.teleport(slow, 8.5f, 0.0f).ok());
  world.tick();
  EXPECT_TRUE(due(slow));
  world.tick();
  EXPECT_EQ(due(slow), (world.tick_count() - 1 + slow.index) % 8 == 0);

  ASSERT_TRUE(world.teleport(jumper, 3.0f, 0.0f).ok());
  world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{jumper, SpawnReason::teleport}}));

  // Teleporting the viewer makes every member due at the next tick.
  std::uint64_t t = world.tick_count();
  while ((t + slow.index) % 8 == 0) t = (world.tick(), world.tick_count());
  ASSERT_TRUE(world.teleport(viewer, 0.5f, 0.0f).ok());
  world.tick();
  EXPECT_TRUE(due(slow));
  EXPECT_EQ(world.teleport(viewer, std::numeric_limits<float>::quiet_NaN(), 0.0f).code(),
            ErrorCode::non_finite_position);
  EXPECT_EQ(world.position(viewer)->x, 0.5f) << "a refused teleport changes nothing";
}

// --- grid_scan: the cells a client's enter scan reads ---

/// The cell of a world coordinate on one axis: the plain floor of its offset in cells, held to
/// the grid (a border cell holds what lies beyond it).
std::uint32_t plain_cell(float v, float origin, float cell, std::uint32_t cells) {
  const double t = std::floor((static_cast<double>(v) - origin) / cell);
  return static_cast<std::uint32_t>(std::clamp(t, 0.0, static_cast<double>(cells - 1)));
}

TEST(QuestionsTest, GridScanCoversEveryEntityWithinTheClientsRadiusAndLittleMore) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    scenarios::Rng rng(seed);
    SmallWorld w(rng.uniform(1.0f, 8.0f), 12.0f);
    const float width = rng.uniform(20.0f, 200.0f);
    std::vector<EntityId> entities;
    for (int i = 0; i < 300; ++i)
      entities.push_back(w.make(rng.uniform(0.0f, width), rng.uniform(0.0f, width)));
    std::vector<ClientId> clients;
    for (int i = 0; i < 6; ++i) {
      const ClientId c = w.client(entities[i]);
      if (i % 2 == 1) {
        ASSERT_TRUE(w.world.set_view_radius(c, rng.uniform(0.5f, 10.0f)).ok());
      }
      if (i == 4) {
        ASSERT_TRUE(w.world.add_origin(c, entities[10]).ok());
      }
      clients.push_back(c);
    }
    w.world.tick();
    for (const ClientId c : clients) {
      const GridScan scan = *w.world.grid_scan(c);
      ASSERT_TRUE(scan.culling);
      const float r = w.world.client_radii(c)->enter_radius;
      std::vector<EntityId> origins{*w.world.viewer(c)};
      for (const EntityId o : *w.world.origins(c)) origins.push_back(o);
      ASSERT_EQ(scan.origins, origins.size());
      for (std::size_t o = 0; o < origins.size(); ++o) {
        const GridScan::Cells cells = scan.ranges[o];
        const Position p = *w.world.position(origins[o]);
        // Every entity within r of the origin lies in a scanned cell...
        for (const EntityId e : entities) {
          const Position q = *w.world.position(e);
          if ((q.x - p.x) * (q.x - p.x) + (q.z - p.z) * (q.z - p.z) > r * r) continue;
          const std::uint32_t x = plain_cell(q.x, scan.origin_x, scan.cell_size, scan.cells_x);
          const std::uint32_t z = plain_cell(q.z, scan.origin_z, scan.cell_size, scan.cells_z);
          EXPECT_TRUE(x >= cells.x0 && x <= cells.x1 && z >= cells.z0 && z <= cells.z1)
              << "seed " << seed << ": an entity within R lies outside the scanned cells";
        }
        // ...and the range is the box of r around the origin, give or take a cell.
        EXPECT_LE(cells.x0, plain_cell(p.x - r, scan.origin_x, scan.cell_size, scan.cells_x));
        EXPECT_GE(cells.x1, plain_cell(p.x + r, scan.origin_x, scan.cell_size, scan.cells_x));
        EXPECT_LE(cells.x1 - cells.x0, static_cast<std::uint32_t>(std::ceil(2.0f * r / scan.cell_size)) + 2);
        EXPECT_LE(cells.z1 - cells.z0, static_cast<std::uint32_t>(std::ceil(2.0f * r / scan.cell_size)) + 2);
        EXPECT_LT(cells.x1, scan.cells_x);
        EXPECT_LT(cells.z1, scan.cells_z);
      }
    }
  }
}

TEST(QuestionsTest, GridScanNamesTheGridAndTheCellsOfEachOrigin) {
  SmallWorld w(10.0f, 12.0f);  // cells of 10 from the entities' low corner
  const EntityId viewer = w.make(25, 25);
  w.make(0, 0);
  w.make(95, 95);
  const ClientId c = w.client(viewer);
  w.world.tick();
  GridScan scan = *w.world.grid_scan(c);
  EXPECT_EQ(scan.origin_x, 0.0f);
  EXPECT_EQ(scan.origin_z, 0.0f);
  EXPECT_EQ(scan.cell_size, 10.0f);
  ASSERT_EQ(scan.origins, 1u);
  EXPECT_EQ(scan.ranges[0].x0, 1u);  // 15..35
  EXPECT_EQ(scan.ranges[0].x1, 3u);
  EXPECT_EQ(scan.ranges[0].z0, 1u);
  EXPECT_EQ(scan.ranges[0].z1, 3u);
  // A narrower view reads fewer cells of the same grid.
  ASSERT_TRUE(w.world.set_view_radius(c, 4.0f).ok());
  w.world.tick();
  scan = *w.world.grid_scan(c);
  EXPECT_EQ(scan.cell_size, 10.0f);
  EXPECT_EQ(scan.ranges[0].x0, 2u);  // 21..29
  EXPECT_EQ(scan.ranges[0].x1, 2u);
  // A space that does not cull scans nothing.
  ASSERT_TRUE(w.world.set_space_def(w.world.default_space(), SpaceDef{}).ok());
  w.world.tick();
  scan = *w.world.grid_scan(c);
  EXPECT_FALSE(scan.culling);
  EXPECT_EQ(scan.origins, 0u);
  EXPECT_EQ(w.world.grid_scan(ClientId{}).status().code(), ErrorCode::null_handle);
}

}  // namespace
}  // namespace sightline::testing
