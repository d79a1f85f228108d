// What a user reads in include/sightline/ holds: each def's default function gives the documented
// defaults and a def the library accepts.
#include <gtest/gtest.h>

#include <vector>

#include "sightline/sightline.h"

namespace sightline {
namespace {

bool write_nothing(Stream&, EntityId, StatePart, void*) { return true; }

TEST(DefaultDefsTest, ReplicatorDefHasTheDocumentedDefaults) {
  const ReplicatorDef def = default_replicator_def();
  EXPECT_EQ(def.serialize, nullptr);
  EXPECT_EQ(def.delivery, Delivery::reliable);
  EXPECT_EQ(def.mode, UpdateMode::priority);
  EXPECT_EQ(def.tick_seconds, 1.0f / 20.0f);
  EXPECT_EQ(def.packet_bytes, 1200u);
  EXPECT_EQ(def.budget_bytes, 1200u);
  EXPECT_EQ(def.entry_budget_bytes, 32u * 1024u);
  EXPECT_EQ(def.filler_misfits, 16u);
  EXPECT_EQ(def.interaction_boost, 4.0f);
  EXPECT_EQ(def.interaction_sends, 20u);
  EXPECT_TRUE(def.share_payloads);
  EXPECT_EQ(def.resend_sends, 4u);
  EXPECT_FALSE(def.development);
  EXPECT_EQ(def.promise_fraction, 1.0f / 1.2f);
}

TEST(DefaultDefsTest, ReplicatorDefIsAcceptedOnceItHasASerializer) {
  auto world = World::create(default_world_def());
  ASSERT_TRUE(world);
  ReplicatorDef def = default_replicator_def();
  const auto without = Replicator::create(*world, def);
  EXPECT_EQ(without.status().code(), ErrorCode::invalid_def);
  def.serialize = write_nothing;
  EXPECT_TRUE(Replicator::create(*world, def)) << Replicator::create(*world, def).status().message();
}

TEST(DefaultDefsTest, MirrorDefHasTheDocumentedDefaultsAndIsAccepted) {
  const MirrorDef def = default_mirror_def();
  EXPECT_EQ(def.delivery, Delivery::reliable);
  EXPECT_EQ(def.history, 4u);
  EXPECT_EQ(def.max_entities, 1u << 20);
  EXPECT_EQ(def.check, nullptr);
  EXPECT_TRUE(ClientMirror::create(def));
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

TEST(EnumNamesTest, EveryRuleAndReasonHasItsEnumeratorsName) {
  EXPECT_STREQ(rule_name(Rule::viewer), "viewer");
  EXPECT_STREQ(rule_name(Rule::other_space), "other_space");
  EXPECT_STREQ(rule_name(Rule::always), "always");
  EXPECT_STREQ(rule_name(Rule::owner), "owner");
  EXPECT_STREQ(rule_name(Rule::origin), "origin");
  EXPECT_STREQ(rule_name(Rule::key_excluded), "key_excluded");
  EXPECT_STREQ(rule_name(Rule::presenter), "presenter");
  EXPECT_STREQ(rule_name(Rule::key_bypass), "key_bypass");
  EXPECT_STREQ(rule_name(Rule::unculled), "unculled");
  EXPECT_STREQ(rule_name(Rule::near), "near");
  EXPECT_STREQ(rule_name(Rule::within_leave), "within_leave");
  EXPECT_STREQ(rule_name(Rule::out_of_range), "out_of_range");
  EXPECT_STREQ(rule_name(Rule::hidden), "hidden");
  EXPECT_STREQ(rule_name(Rule::crowded), "crowded");

  EXPECT_STREQ(spawn_reason_name(SpawnReason::near), "near");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::always), "always");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::key), "key");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::owner), "owner");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::origin), "origin");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::attached), "attached");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::teleport), "teleport");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::presenter), "presenter");
  EXPECT_STREQ(spawn_reason_name(SpawnReason::unculled), "unculled");

  EXPECT_STREQ(despawn_reason_name(DespawnReason::left), "left");
  EXPECT_STREQ(despawn_reason_name(DespawnReason::destroyed), "destroyed");
  EXPECT_STREQ(despawn_reason_name(DespawnReason::key_removed), "key_removed");
  EXPECT_STREQ(despawn_reason_name(DespawnReason::space_changed), "space_changed");
  EXPECT_STREQ(despawn_reason_name(DespawnReason::culling_switched), "culling_switched");
  EXPECT_STREQ(despawn_reason_name(DespawnReason::hidden), "hidden");
}

TEST(EnumNamesTest, AValueOutsideTheEnumIsUnknown) {
  EXPECT_STREQ(rule_name(static_cast<Rule>(14)), "unknown");
  EXPECT_STREQ(spawn_reason_name(static_cast<SpawnReason>(9)), "unknown");
  EXPECT_STREQ(despawn_reason_name(static_cast<DespawnReason>(6)), "unknown");
  EXPECT_STREQ(rule_name(static_cast<Rule>(255)), "unknown");
}

// The names a game reads in why() and the records agree where the rule and the reason are one idea.
TEST(EnumNamesTest, ARecordsReasonNamesTheRuleThatAdmittedIt) {
  auto world = World::create(default_world_def());
  ASSERT_TRUE(world);
  const auto viewer = world->create_entity({.x = 0.0f, .z = 0.0f});
  const auto walker = world->create_entity({.x = 1.0f, .z = 0.0f});
  ASSERT_TRUE(viewer && walker);
  const auto client = world->create_client(*viewer);
  ASSERT_TRUE(client);
  world->tick();
  ASSERT_EQ(world->stream(*client)->spawns.size(), 1u);
  EXPECT_STREQ(spawn_reason_name(world->stream(*client)->spawns[0].reason), "near");
  EXPECT_STREQ(rule_name(world->why(*client, *walker)->rule), "near");
  ASSERT_TRUE(world->set_position(*walker, 10.0f, 0.0f));
  world->tick();
  ASSERT_EQ(world->stream(*client)->despawns.size(), 1u);
  EXPECT_STREQ(despawn_reason_name(world->stream(*client)->despawns[0].reason), "left");
  EXPECT_STREQ(rule_name(world->why(*client, *walker)->rule), "out_of_range");
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// World's schedule (world.h) gives a member an update when it is due, and has no clause for a
// member spawned this tick: with tiers, a spawn that is not due gets no update that tick (its
// spawn carries its full state), and gets one at its next due tick.
TEST(ScheduleTest, AMemberSpawnedThisTickIsUpdatedOnlyWhenDue) {
  WorldDef def = default_world_def();    // R = L = 1.6
  def.tiers = default_distance_tiers();  // within R/2 every tick, else every second tick
  auto world = World::create(def);
  ASSERT_TRUE(world);
  const auto viewer = world->create_entity({.x = 0.0f, .z = 0.0f});
  const auto far = world->create_entity({.x = 1.2f, .z = 0.0f});    // index 1: period 2
  const auto near = world->create_entity({.x = 0.4f, .z = 0.0f});   // index 2: period 1
  const auto other = world->create_entity({.x = 0.0f, .z = 1.2f});  // index 3: period 2
  ASSERT_TRUE(viewer && far && near && other);
  ASSERT_EQ(far->index, 1u);
  ASSERT_EQ(other->index, 3u);
  const auto client = world->create_client(*viewer);
  ASSERT_TRUE(client);

  world->tick();  // tick 0: (0 + 1) % 2 and (0 + 3) % 2 are 1, so neither far member is due
  const auto first = *world->stream(*client);
  ASSERT_EQ(first.spawns.size(), 3u);
  const std::vector<EntityId> updated(first.updates.begin(), first.updates.end());
  EXPECT_EQ(updated, std::vector<EntityId>{*near}) << "a spawn not due gets no update";

  world->tick();  // tick 1: both are due
  const auto second = *world->stream(*client);
  EXPECT_TRUE(second.spawns.empty());
  const std::vector<EntityId> due(second.updates.begin(), second.updates.end());
  EXPECT_EQ(due, (std::vector<EntityId>{*far, *near, *other}));
}

// Without tiers or key rates every member is due every tick, a spawn of this tick included, so
// the updates of a tick are the sum of the set sizes.
TEST(ScheduleTest, WithoutTiersEverySpawnIsAlsoUpdated) {
  auto world = World::create(default_world_def());
  ASSERT_TRUE(world);
  const auto viewer = world->create_entity({.x = 0.0f, .z = 0.0f});
  const auto walker = world->create_entity({.x = 1.2f, .z = 0.0f});
  ASSERT_TRUE(viewer && walker);
  const auto client = world->create_client(*viewer);
  ASSERT_TRUE(client);
  const TickStats stats = world->tick();
  const auto stream = *world->stream(*client);
  ASSERT_EQ(stream.spawns.size(), 1u);
  ASSERT_EQ(stream.updates.size(), 1u);
  EXPECT_EQ(stream.updates[0], *walker);
  EXPECT_EQ(stats.updates, stats.members);
}

}  // namespace
}  // namespace sightline
