// Owners: a client holds what it owns at any distance and whatever the key, and ownership ends
// with the client or the entity.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "small_world.h"

namespace sightline {
namespace {

using testing::SmallWorld;
using Spawn = std::pair<EntityId, SpawnReason>;

class OwnersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    viewer = make(0.0f, 0.0f);
    far = make(500.0f, 500.0f);
    client = w.client(viewer);
    ASSERT_FALSE(client.is_null());
  }

  EntityId make(float x, float z) { return w.make(x, z); }
  bool holds(EntityId e) const { return w.holds(client, e); }

  SmallWorld w{10.0f, 12.0f};
  World& world = w.world;
  EntityId viewer;
  EntityId far;
  ClientId client;
};

TEST_F(OwnersTest, OwnedEntityIsHeldAtAnyDistanceWithReasonOwner) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  EXPECT_EQ(w.spawns(client), (std::vector<Spawn>{{far, SpawnReason::owner}}));
  for (int i = 0; i < 5; ++i) world.tick();
  EXPECT_TRUE(holds(far));
  auto o = world.owner(far);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o, client);
}

TEST_F(OwnersTest, OwnedEntityIsHeldWhateverItsKey) {
  ASSERT_TRUE(world.set_user_interest_key(far, 5).ok());
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  EXPECT_TRUE(holds(far));
  // Every tick: an owned entity takes no key send rate.
  EXPECT_EQ(w.updates(client).size(), 1u);
}

TEST_F(OwnersTest, ClearingOwnershipHandsTheEntityBackToTheUsualRules) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(holds(far));
  ASSERT_TRUE(world.clear_owner(far).ok());
  world.tick();
  EXPECT_FALSE(holds(far));
  const auto despawns = w.despawns(client);
  ASSERT_EQ(despawns.size(), 1u);
  EXPECT_EQ(despawns[0].second, DespawnReason::left);
  EXPECT_TRUE(world.owner(far)->is_null());
}

TEST_F(OwnersTest, AnotherOwnerReplacesTheFirst) {
  const EntityId second_viewer = make(1000.0f, 1000.0f);
  const ClientId second = w.client(second_viewer);
  ASSERT_FALSE(second.is_null());
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(world.set_owner(far, second).ok());
  world.tick();
  EXPECT_FALSE(holds(far));
  EXPECT_TRUE(w.holds(second, far));
}

TEST_F(OwnersTest, DestroyingTheOwnerEndsOwnership) {
  const EntityId other_viewer = make(2.0f, 0.0f);
  const ClientId other = w.client(other_viewer);
  ASSERT_FALSE(other.is_null());
  ASSERT_TRUE(world.set_owner(far, other).ok());
  ASSERT_TRUE(world.destroy_client(other).ok());
  EXPECT_TRUE(world.owner(far)->is_null());
  // The reused client slot does not inherit the ownership.
  const ClientId reused = w.client(other_viewer);
  ASSERT_FALSE(reused.is_null());
  world.tick();
  EXPECT_FALSE(w.holds(reused, far));
}

TEST_F(OwnersTest, DestroyingTheOwnedEntityDespawnsItAsDestroyed) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(world.destroy_entity(far).ok());
  world.tick();
  const auto despawns = w.despawns(client);
  ASSERT_EQ(despawns.size(), 1u);
  EXPECT_EQ(despawns[0].second, DespawnReason::destroyed);
  // The slot, reused, is not owned.
  const EntityId again = make(500.0f, 500.0f);
  world.tick();
  EXPECT_TRUE(world.owner(again)->is_null());
  EXPECT_FALSE(holds(again));
}

TEST_F(OwnersTest, TheViewerIsNeverSentEvenWhenOwned) {
  ASSERT_TRUE(world.set_owner(viewer, client).ok());
  world.tick();
  EXPECT_FALSE(holds(viewer));
}

TEST_F(OwnersTest, StaleHandlesAreRefusedAndChangeNothing) {
  const EntityId doomed = make(1.0f, 1.0f);
  ASSERT_TRUE(world.destroy_entity(doomed).ok());
  EXPECT_EQ(world.set_owner(doomed, client).code(), ErrorCode::stale_handle);
  EXPECT_EQ(world.clear_owner(doomed).code(), ErrorCode::stale_handle);
  EXPECT_EQ(world.set_owner(far, ClientId{}).code(), ErrorCode::null_handle);
  EXPECT_EQ(world.set_owner(far, ClientId{client.index, client.generation + 1}).code(),
            ErrorCode::stale_handle);
  EXPECT_TRUE(world.owner(far)->is_null());
}

}  // namespace
}  // namespace sightline
