// Update counts: U = sum of |S_c| with tiers off, and N(N-1) when R covers the whole world.
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

TEST(UpdateCountTest, UpdatesEqualSumOfSetSizesWithTiersOffOnRandomRuns) {
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

TEST(UpdateCountTest, UpdatesEqualSumOfSetSizesOnJitterWalk) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.leave_radius = 1.25f * def.enter_radius;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i) ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
  for (const EntityId id : ids) (void)world.create_client(id);
  std::uint64_t total = 0;
  for (int t = 0; t < 300; ++t) {
    const TickStats stats = world.tick();
    const std::uint64_t sets = sum_of_set_sizes(world);
    ASSERT_EQ(stats.updates, sets) << "tick " << t;
    ASSERT_EQ(stats.members, sets) << "tick " << t;
    total += stats.updates;
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_TRUE(world.set_position(ids[i], walk.xs()[i], walk.zs()[i]).ok());
  }
  EXPECT_GT(total, 0u);
}

TEST(UpdateCountTest, WithTiersUpdatesAreAtMostTheMembers) {
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
TEST(UpdateCountTest, RadiusCoveringTheWorldGivesNTimesNMinusOneUpdates) {
  for (const bool hysteresis : {false, true}) {
    scenarios::JitterWalk walk(scenarios::JitterWalkDef{});  // 120 entities in 12 x 7.5
    WorldDef def = default_world_def();
    def.enter_radius = 15.0f;  // diagonal of 12 x 7.5 is 14.15
    def.leave_radius = hysteresis ? 20.0f : 15.0f;
    World world = std::move(World::create(def).value());
    std::vector<EntityId> ids;
    for (std::size_t i = 0; i < walk.xs().size(); ++i) ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
    for (const EntityId id : ids) (void)world.create_client(id);
    const std::uint64_t n = ids.size();
    for (int t = 0; t < 100; ++t) {
      const TickStats stats = world.tick();
      ASSERT_EQ(stats.updates, n * (n - 1)) << "tick " << t;
      ASSERT_EQ(stats.members, n * (n - 1)) << "tick " << t;
      ASSERT_EQ(stats.spawns, t == 0 ? n * (n - 1) : 0u) << "tick " << t;
      ASSERT_EQ(stats.despawns, 0u) << "tick " << t;
      walk.step();
      for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_TRUE(world.set_position(ids[i], walk.xs()[i], walk.zs()[i]).ok());
    }
  }
}

}  // namespace
}  // namespace sightline::testing
