// The World's records equal the brute-force oracle's, tick by tick, on seeded random runs.
#include <gtest/gtest.h>

#include "jitter_walk.h"
#include "mirrored_world.h"
#include "random_run.h"

namespace sightline::testing {
namespace {

void expect_random_runs_match(TierMode tiers, bool hysteresis, std::uint64_t first_seed,
                              std::uint64_t seeds) {
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.tiers = tiers;
    def.hysteresis = hysteresis;
    std::string error;
    std::uint64_t ticks = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      error = mirror.error();
      ticks = mirror.oracle().tick_count();
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(ticks, def.ticks) << "seed " << seed;
  }
}

TEST(OracleTest, RandomRunsWithHysteresisMatch) { expect_random_runs_match(TierMode::none, true, 1, 200); }
TEST(OracleTest, RandomRunsWithOneRadiusMatch) { expect_random_runs_match(TierMode::none, false, 1000, 150); }
TEST(OracleTest, RandomRunsWithPresetTiersMatch) { expect_random_runs_match(TierMode::preset, true, 2000, 150); }
TEST(OracleTest, RandomRunsWithCustomTiersMatch) { expect_random_runs_match(TierMode::custom, true, 3000, 150); }
TEST(OracleTest, RandomRunsWithCustomTiersAndOneRadiusMatch) {
  expect_random_runs_match(TierMode::custom, false, 4000, 40);
}

// Guards the generator: the random runs must reach every kind of record, or matching proves little.
TEST(OracleTest, RandomRunsReachEveryKindOfRecord) {
  std::uint64_t near = 0, always = 0, left = 0, destroyed = 0, clients_seen = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      for (const ClientId client : mirror.world().clients()) {
        const ClientStream stream = *mirror.world().stream(client);
        for (const SpawnRecord& r : stream.spawns) ++(r.reason == SpawnReason::near ? near : always);
        for (const DespawnRecord& r : stream.despawns) ++(r.reason == DespawnReason::left ? left : destroyed);
        ++clients_seen;
      }
    });
  }
  EXPECT_GT(near, 1000u);
  EXPECT_GT(always, 100u);
  EXPECT_GT(left, 1000u);
  EXPECT_GT(destroyed, 100u);
  EXPECT_GT(clients_seen, 1000u);
}

TEST(OracleTest, LongRunWithoutChurnMatches) {
  RandomRunDef def;
  def.seed = 77;
  def.ticks = 400;
  def.churn = false;
  def.max_entities = 40;
  std::string error;
  run_random(def, [&](MirroredWorld& mirror, const TickStats&) { error = mirror.error(); });
  EXPECT_EQ(error, "");
}

// The reference scenario's motion with every entity a client, with and without tiers.
void expect_jitter_walk_matches(std::vector<DistanceTier> tiers, float leave_factor) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.enter_radius = 1.6f;
  def.leave_radius = 1.6f * leave_factor;
  def.tiers = std::move(tiers);
  MirroredWorld mirror(def);
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i) {
    ids.push_back(*mirror.create_entity(EntityDef{walk.xs()[i], walk.zs()[i], false}));
  }
  for (const EntityId id : ids) (void)mirror.create_client(id);
  for (int t = 0; t < 200; ++t) {
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "");
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i) (void)mirror.set_position(ids[i], walk.xs()[i], walk.zs()[i]);
  }
}

TEST(OracleTest, JitterWalkWithHysteresisMatches) { expect_jitter_walk_matches({}, 1.25f); }
TEST(OracleTest, JitterWalkWithPresetTiersMatches) { expect_jitter_walk_matches(default_distance_tiers(), 1.0f); }
TEST(OracleTest, JitterWalkWithCustomTiersMatches) { expect_jitter_walk_matches(custom_tiers(), 1.5f); }

TEST(OracleTest, ShrinkingRadiiDropMembersBetweenOldAndNewRadius) {
  WorldDef def = default_world_def();
  def.enter_radius = 4.0f;
  def.leave_radius = 4.0f;
  MirroredWorld mirror(def);
  const EntityId viewer = *mirror.create_entity({0.0f, 0.0f, false});
  for (int i = 1; i <= 8; ++i) (void)mirror.create_entity({0.5f * static_cast<float>(i), 0.0f, false});
  (void)mirror.create_client(viewer);
  EXPECT_EQ(mirror.tick().members, 8u);
  (void)mirror.set_radii(1.0f, 2.0f);  // keeps d <= 2: 4 members
  EXPECT_EQ(mirror.tick().members, 4u);
  (void)mirror.set_radii(3.0f, 3.0f);  // enters d <= 3: 6 members
  EXPECT_EQ(mirror.tick().members, 6u);
  EXPECT_EQ(mirror.error(), "");
}

}  // namespace
}  // namespace sightline::testing
