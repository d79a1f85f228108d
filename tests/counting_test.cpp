// Counting: U = sum of |S_c| with tiers off, N(N-1) updates when R covers the whole world, and
// on the seeded reference walk a leave radius above the enter radius costs fewer spawns and
// despawns than a single radius (and more updates, because sets are larger).
#include <gtest/gtest.h>

#include "jitter_walk.h"
#include "random_run.h"
#include "sightline/world.h"

namespace sightline::testing {
namespace {

std::uint64_t sum_of_set_sizes(const World& world) {
  std::uint64_t sum = 0;
  for (const ClientId client : world.clients()) sum += world.interest_set(client)->size();
  return sum;
}

std::uint64_t sum_of_update_records(const World& world) {
  std::uint64_t sum = 0;
  for (const ClientId client : world.clients()) sum += world.stream(client)->updates.size();
  return sum;
}

TEST(CountingTest, UpdatesEqualSumOfSetSizesWithTiersOffOnRandomRuns) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    std::uint64_t ticks = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      const std::uint64_t sets = sum_of_set_sizes(mirror.world());
      EXPECT_EQ(stats.updates, sets) << "seed " << seed << " tick " << stats.tick;
      EXPECT_EQ(stats.members, sets) << "seed " << seed << " tick " << stats.tick;
      EXPECT_EQ(sum_of_update_records(mirror.world()), sets) << "seed " << seed << " tick " << stats.tick;
      ++ticks;
    });
    EXPECT_EQ(ticks, def.ticks) << "seed " << seed;
  }
}

TEST(CountingTest, UpdatesEqualSumOfSetSizesOnJitterWalk) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.leave_radius = 1.25f * def.enter_radius;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i)
    ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
  for (const EntityId id : ids) (void)world.create_client(id);
  std::uint64_t total = 0;
  for (int t = 0; t < 300; ++t) {
    const TickStats stats = world.tick();
    const std::uint64_t sets = sum_of_set_sizes(world);
    ASSERT_EQ(stats.updates, sets) << "tick " << t;
    ASSERT_EQ(stats.members, sets) << "tick " << t;
    total += stats.updates;
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i)
      ASSERT_TRUE(world.set_position(ids[i], walk.xs()[i], walk.zs()[i]).ok());
  }
  EXPECT_GT(total, 0u);
}

TEST(CountingTest, WithTiersUpdatesAreAtMostTheMembers) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.tiers = TierMode::preset;
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      EXPECT_LE(stats.updates, stats.members) << "seed " << seed;
      EXPECT_EQ(stats.members, sum_of_set_sizes(mirror.world())) << "seed " << seed;
      EXPECT_EQ(stats.updates, sum_of_update_records(mirror.world())) << "seed " << seed;
    });
  }
}

// Every entity a client, R larger than the world's diagonal: the send-everything count.
TEST(CountingTest, RadiusCoveringTheWorldGivesNTimesNMinusOneUpdates) {
  for (const bool hysteresis : {false, true}) {
    scenarios::JitterWalk walk(scenarios::JitterWalkDef{});  // 120 entities in 12 x 7.5
    WorldDef def = default_world_def();
    def.enter_radius = 15.0f;  // diagonal of 12 x 7.5 is 14.15
    def.leave_radius = hysteresis ? 20.0f : 15.0f;
    World world = std::move(World::create(def).value());
    std::vector<EntityId> ids;
    for (std::size_t i = 0; i < walk.xs().size(); ++i)
      ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
    for (const EntityId id : ids) (void)world.create_client(id);
    const std::uint64_t n = ids.size();
    for (int t = 0; t < 100; ++t) {
      const TickStats stats = world.tick();
      ASSERT_EQ(stats.updates, n * (n - 1)) << "tick " << t;
      ASSERT_EQ(stats.members, n * (n - 1)) << "tick " << t;
      ASSERT_EQ(stats.spawns, t == 0 ? n * (n - 1) : 0u) << "tick " << t;
      ASSERT_EQ(stats.despawns, 0u) << "tick " << t;
      walk.step();
      for (std::size_t i = 0; i < ids.size(); ++i)
        ASSERT_TRUE(world.set_position(ids[i], walk.xs()[i], walk.zs()[i]).ok());
    }
  }
}

// Hysteresis on the seeded reference walk.
struct RunTotals {
  std::uint64_t spawns = 0;
  std::uint64_t despawns = 0;
  std::uint64_t updates = 0;
};

// 120 entities, every one a client, 12 x 7.5, 20 Hz, 60 s = 1200 ticks, R = 1.6.
RunTotals run_reference_walk(float leave_factor) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.enter_radius = 1.6f;
  def.leave_radius = 1.6f * leave_factor;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i)
    ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
  for (const EntityId id : ids) (void)world.create_client(id);
  RunTotals totals;
  const auto ticks = static_cast<int>(walk.def().hz * 60.0f);
  for (int t = 0; t < ticks; ++t) {
    const TickStats stats = world.tick();
    totals.spawns += stats.spawns;
    totals.despawns += stats.despawns;
    totals.updates += stats.updates;
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i) (void)world.set_position(ids[i], walk.xs()[i], walk.zs()[i]);
  }
  return totals;
}

TEST(CountingTest, LeaveRadiusAboveEnterRadiusGivesFewerSpawnsAndDespawns) {
  const RunTotals one_radius = run_reference_walk(1.0f);
  const RunTotals hysteresis = run_reference_walk(1.25f);
  EXPECT_LT(hysteresis.spawns + hysteresis.despawns, one_radius.spawns + one_radius.despawns);
  EXPECT_GT(hysteresis.updates, one_radius.updates);
  EXPECT_GT(one_radius.spawns, 0u);
}

TEST(CountingTest, WiderHysteresisGivesFewerSpawnsAndDespawns) {
  std::uint64_t previous = ~0ull;
  for (const float factor : {1.0f, 1.1f, 1.25f, 1.5f}) {
    const RunTotals totals = run_reference_walk(factor);
    EXPECT_LT(totals.spawns + totals.despawns, previous) << "L = " << factor << " R";
    previous = totals.spawns + totals.despawns;
  }
}

}  // namespace
}  // namespace sightline::testing
