// Owners: a client holds what it owns at any distance and whatever the key, and ownership ends
// with the client or the entity.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sightline/sightline.h"

namespace sightline {
namespace {

class OwnersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WorldDef def = default_world_def();
    def.enter_radius = 10.0f;
    def.leave_radius = 12.0f;
    auto created = World::create(def);
    ASSERT_TRUE(created.ok());
    world = std::move(created.value());
    viewer = make(0.0f, 0.0f);
    far = make(500.0f, 500.0f);
    auto c = world.create_client(viewer);
    ASSERT_TRUE(c.ok());
    client = *c;
  }

  EntityId make(float x, float z) {
    auto e = world.create_entity({.x = x, .z = z});
    EXPECT_TRUE(e.ok());
    return e.ok() ? *e : EntityId{};
  }

  std::vector<EntityId> held() {
    auto set = world.interest_set(client);
    EXPECT_TRUE(set.ok());
    return set.ok() ? std::vector<EntityId>(set->begin(), set->end()) : std::vector<EntityId>{};
  }

  bool holds(EntityId e) {
    const auto set = held();
    return std::find(set.begin(), set.end(), e) != set.end();
  }

  World world = std::move(World::create(default_world_def()).value());
  EntityId viewer;
  EntityId far;
  ClientId client;
};

TEST_F(OwnersTest, OwnedEntityIsHeldAtAnyDistanceWithReasonOwner) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  auto stream = world.stream(client);
  ASSERT_TRUE(stream.ok());
  ASSERT_EQ(stream->spawns.size(), 1u);
  EXPECT_EQ(stream->spawns[0].entity, far);
  EXPECT_EQ(stream->spawns[0].reason, SpawnReason::owner);
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
  EXPECT_EQ(world.stream(client)->updates.size(), 1u);
}

TEST_F(OwnersTest, ClearingOwnershipHandsTheEntityBackToTheUsualRules) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(holds(far));
  ASSERT_TRUE(world.clear_owner(far).ok());
  world.tick();
  EXPECT_FALSE(holds(far));
  auto stream = world.stream(client);
  ASSERT_EQ(stream->despawns.size(), 1u);
  EXPECT_EQ(stream->despawns[0].reason, DespawnReason::left);
  EXPECT_TRUE(world.owner(far)->is_null());
}

TEST_F(OwnersTest, AnotherOwnerReplacesTheFirst) {
  const EntityId second_viewer = make(1000.0f, 1000.0f);
  auto second = world.create_client(second_viewer);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(world.set_owner(far, *second).ok());
  world.tick();
  EXPECT_FALSE(holds(far));
  auto set = world.interest_set(*second);
  ASSERT_TRUE(set.ok());
  EXPECT_NE(std::find(set->begin(), set->end(), far), set->end());
}

TEST_F(OwnersTest, DestroyingTheOwnerEndsOwnership) {
  const EntityId other_viewer = make(2.0f, 0.0f);
  auto other = world.create_client(other_viewer);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(world.set_owner(far, *other).ok());
  ASSERT_TRUE(world.destroy_client(*other).ok());
  EXPECT_TRUE(world.owner(far)->is_null());
  // The reused client slot does not inherit the ownership.
  auto reused = world.create_client(other_viewer);
  ASSERT_TRUE(reused.ok());
  world.tick();
  auto set = world.interest_set(*reused);
  EXPECT_EQ(std::find(set->begin(), set->end(), far), set->end());
}

TEST_F(OwnersTest, DestroyingTheOwnedEntityDespawnsItAsDestroyed) {
  ASSERT_TRUE(world.set_owner(far, client).ok());
  world.tick();
  ASSERT_TRUE(world.destroy_entity(far).ok());
  world.tick();
  auto stream = world.stream(client);
  ASSERT_EQ(stream->despawns.size(), 1u);
  EXPECT_EQ(stream->despawns[0].reason, DespawnReason::destroyed);
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
