// What a user reads in include/sightline/ holds: each def's default function gives the documented
// defaults and a def the library accepts.
#include <gtest/gtest.h>

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
