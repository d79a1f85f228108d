// The crowd cap (WorldDef::crowd_cap, rule l): the nearest by the documented rank are held, the
// rest of a crowd left out; checked by hand on small worlds and against the brute-force oracle on
// random runs with every other feature.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mirrored_world.h"
#include "random_run.h"
#include "sightline/world.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

/// One client viewing from the origin, entities along the x axis, under a crowd cap.
struct Crowd : SmallWorld {
  explicit Crowd(std::uint32_t cap, float enter = 10.0f, float leave = 12.5f)
      : SmallWorld(capped_def(cap, enter, leave)),
        viewer(make(0.0f, 0.0f)),
        client(SmallWorld::client(viewer)) {}
  static WorldDef capped_def(std::uint32_t cap, float enter, float leave) {
    WorldDef def = small_world_def(enter, leave);
    def.crowd_cap = cap;
    return def;
  }
  EntityId add(float x) { return make(x, 0.0f); }
  std::vector<EntityId> spawned() const {
    std::vector<EntityId> out;
    for (const auto& [entity, reason] : spawns(client)) out.push_back(entity);
    return out;
  }
  std::vector<std::pair<EntityId, DespawnReason>> despawned() const { return despawns(client); }

  EntityId viewer;
  ClientId client;  ///< The one client (the name hides SmallWorld::client(), which made it).
};

TEST(CrowdCap, HoldsTheNearestAndSaysWhyTheRestAreLeftOut) {
  Crowd c(3);
  std::vector<EntityId> e;
  for (int i = 0; i < 8; ++i) e.push_back(c.add(9.0f - static_cast<float>(i)));  // 9, 8, ..., 2
  const TickStats stats = c.world.tick();
  EXPECT_EQ(stats.members, 3u);
  EXPECT_EQ(c.spawned(), (std::vector<EntityId>{e[5], e[6], e[7]}));  // at 4, 3 and 2
  const Why why = *c.world.why(c.client, e[4]);
  EXPECT_FALSE(why.held);
  EXPECT_EQ(why.rule, Rule::crowded);
  EXPECT_EQ(c.world.why(c.client, e[7])->rule, Rule::near);
  EXPECT_EQ(c.world.crowd_cap(), 3u);
}

TEST(CrowdCap, AMemberKeepsItsPlaceUntilANewcomerIsNearerByTheHysteresisRatio) {
  Crowd c(1);  // R = 10, L = 12.5: a member at d ranks as a newcomer at d * 10 / 12.5
  const EntityId member = c.add(9.0f);
  c.world.tick();
  ASSERT_TRUE(*c.world.is_relevant_to(c.client, member));
  const EntityId newcomer = c.add(7.5f);  // 7.5 / 10 = 0.75 > 9 / 12.5 = 0.72: the member stays
  c.world.tick();
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, member));
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, newcomer));
  EXPECT_EQ(c.world.why(c.client, newcomer)->rule, Rule::crowded);
  ASSERT_TRUE(c.world.set_position(newcomer, 7.0f, 0.0f).ok());  // 0.70 < 0.72: it displaces it
  c.world.tick();
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, member));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, newcomer));
  const auto gone = c.despawned();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].first, member);
  EXPECT_EQ(gone[0].second, DespawnReason::left);
}

TEST(CrowdCap, WhatOtherRulesHoldNeitherCountsNorIsLimited) {
  Crowd c(1);
  const EntityId owned = c.add(500.0f);
  ASSERT_TRUE(c.world.set_owner(owned, c.client).ok());
  const EntityId boss = c.add(-400.0f);
  ASSERT_TRUE(c.world.set_always_relevant(boss, true).ok());
  const EntityId near = c.add(2.0f);
  const EntityId far = c.add(3.0f);
  const TickStats stats = c.world.tick();
  EXPECT_EQ(stats.members, 3u);
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, owned));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, boss));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, near));
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, far));
}

TEST(CrowdCap, LoweringTheCapLetsTheFarthestGoAndZeroLiftsIt) {
  Crowd c(0);
  std::vector<EntityId> e;
  for (int i = 1; i <= 6; ++i) e.push_back(c.add(static_cast<float>(i)));
  EXPECT_EQ(c.world.tick().members, 6u);
  c.world.set_crowd_cap(2);
  const TickStats lowered = c.world.tick();
  EXPECT_EQ(lowered.members, 2u);
  EXPECT_EQ(lowered.despawns, 4u);
  for (const auto& [entity, reason] : c.despawned()) EXPECT_EQ(reason, DespawnReason::left);
  const auto gone = c.despawned();
  EXPECT_TRUE(std::is_sorted(gone.begin(), gone.end(),
                             [](const auto& a, const auto& b) { return a.first.index < b.first.index; }));
  c.world.set_crowd_cap(0);
  EXPECT_EQ(c.world.tick().members, 6u);
}

void expect_capped_runs_match(RandomRunDef base, std::uint64_t first_seed, std::uint64_t seeds) {
  std::uint64_t crowded_runs = 0;
  seeds = seeds_for_build(seeds);
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    RandomRunDef def = base;
    def.seed = seed;
    def.crowd_cap = true;
    std::string error;
    std::uint64_t ticks = 0;
    std::uint64_t crowded = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      // The records, then is_relevant_to, why and holder_count after every tick.
      error = mirror.error() + mirror.question_error();
      ticks = mirror.oracle().tick_count();
      crowded = mirror.oracle().crowded_total();
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(ticks, def.ticks) << "seed " << seed;
    crowded_runs += crowded > 0 ? 1 : 0;
  }
  EXPECT_GT(crowded_runs, seeds / 3) << "the cap must bite in many runs";
}

TEST(CrowdCap, RandomRunsMatchTheOracle) { expect_capped_runs_match({}, 31000, 150); }

TEST(CrowdCap, RandomRunsWithOneRadiusAndTiersMatchTheOracle) {
  RandomRunDef def;
  def.hysteresis = false;
  def.tiers = TierMode::preset;
  expect_capped_runs_match(def, 32000, 80);
}

TEST(CrowdCap, RandomRunsWithKeysOwnersOriginsAndBoundsMatchTheOracle) {
  RandomRunDef def;
  def.keys = true;
  def.relevance = true;
  expect_capped_runs_match(def, 33000, 100);
}

TEST(CrowdCap, RandomRunsWithSpacesAttachmentsAndSightMatchTheOracle) {
  RandomRunDef def;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.sight = true;
  expect_capped_runs_match(def, 34000, 100);
}

TEST(CrowdCap, RandomRunsOnThreadsMatchTheOracle) {
  RandomRunDef def;
  def.relevance = true;
  def.threads = 3;
  expect_capped_runs_match(def, 35000, 40);
}

}  // namespace
}  // namespace sightline::testing
