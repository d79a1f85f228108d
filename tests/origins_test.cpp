// Several origins: near any origin is near, extra origins are always held, and destroying one
// removes it everywhere.
#include <gtest/gtest.h>

#include "small_world.h"

namespace sightline {
namespace {

using testing::SmallWorld;

class OriginsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    viewer = make(0.0f, 0.0f);
    target = make(1000.0f, 0.0f);
    near_viewer = make(5.0f, 0.0f);
    near_target = make(1005.0f, 0.0f);
    client = w.client(viewer);
  }

  EntityId make(float x, float z) { return w.make(x, z); }
  bool holds(EntityId e) const { return w.holds(client, e); }

  SpawnReason spawn_reason(EntityId e) const {
    for (const auto& [entity, reason] : w.spawns(client)) {
      if (entity == e) return reason;
    }
    ADD_FAILURE() << "no spawn for entity " << e.index;
    return SpawnReason::near;
  }

  SmallWorld w{10.0f, 12.0f};
  World& world = w.world;
  EntityId viewer, target, near_viewer, near_target;
  ClientId client;
};

TEST_F(OriginsTest, NearAnyOriginIsNearAndTheOriginItselfIsHeld) {
  world.tick();
  EXPECT_TRUE(holds(near_viewer));
  EXPECT_FALSE(holds(near_target));
  ASSERT_TRUE(world.add_origin(client, target).ok());
  world.tick();
  EXPECT_TRUE(holds(near_viewer));
  EXPECT_TRUE(holds(near_target));
  EXPECT_TRUE(holds(target));
  EXPECT_EQ(spawn_reason(target), SpawnReason::origin);
  EXPECT_EQ(spawn_reason(near_target), SpawnReason::near);
  EXPECT_FALSE(holds(viewer));
}

TEST_F(OriginsTest, LeaveUsesTheNearestOrigin) {
  ASSERT_TRUE(world.add_origin(client, target).ok());
  world.tick();
  // 11 from the target: between R and L of it, far from the viewer: stays.
  ASSERT_TRUE(world.set_position(near_target, 1011.0f, 0.0f).ok());
  world.tick();
  EXPECT_TRUE(holds(near_target));
  ASSERT_TRUE(world.set_position(near_target, 1013.0f, 0.0f).ok());
  world.tick();
  EXPECT_FALSE(holds(near_target));
}

TEST_F(OriginsTest, RemovingAnOriginReleasesWhatOnlyItSaw) {
  ASSERT_TRUE(world.add_origin(client, target).ok());
  world.tick();
  ASSERT_TRUE(world.remove_origin(client, target).ok());
  world.tick();
  EXPECT_FALSE(holds(target));
  EXPECT_FALSE(holds(near_target));
  EXPECT_TRUE(holds(near_viewer));
  EXPECT_TRUE(world.origins(client)->empty());
}

TEST_F(OriginsTest, DestroyingAnOriginRemovesItFromEveryClient) {
  ASSERT_TRUE(world.add_origin(client, target).ok());
  world.tick();
  ASSERT_TRUE(world.destroy_entity(target).ok());
  EXPECT_TRUE(world.origins(client)->empty());
  world.tick();
  bool destroyed = false;
  for (const auto& [entity, reason] : w.despawns(client)) {
    if (entity == target) destroyed = reason == DespawnReason::destroyed;
  }
  EXPECT_TRUE(destroyed);
  EXPECT_FALSE(holds(near_target));
}

TEST_F(OriginsTest, BecomingTheViewerStopsBeingAnOrigin) {
  ASSERT_TRUE(world.add_origin(client, target).ok());
  world.tick();
  ASSERT_TRUE(world.set_viewer(client, target).ok());
  EXPECT_TRUE(world.origins(client)->empty());
  world.tick();
  EXPECT_FALSE(holds(target));
  EXPECT_TRUE(holds(near_target));
  EXPECT_FALSE(holds(near_viewer));
}

TEST_F(OriginsTest, RefusedCallsChangeNothing) {
  EXPECT_EQ(world.add_origin(client, viewer).code(), ErrorCode::invalid_argument);
  ASSERT_TRUE(world.add_origin(client, target).ok());
  EXPECT_EQ(world.add_origin(client, target).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(world.remove_origin(client, near_viewer).code(), ErrorCode::invalid_argument);
  for (std::uint32_t i = 1; i < kMaxOrigins; ++i) {
    ASSERT_TRUE(world.add_origin(client, make(static_cast<float>(i) * 100.0f, 500.0f)).ok());
  }
  const Status full = world.add_origin(client, near_viewer);
  EXPECT_EQ(full.code(), ErrorCode::invalid_argument);
  EXPECT_NE(full.message().find("kMaxOrigins"), std::string::npos) << full.message();
  EXPECT_EQ(world.origins(client)->size(), kMaxOrigins);
  EXPECT_EQ(world.add_origin(ClientId{}, target).code(), ErrorCode::null_handle);
}

}  // namespace
}  // namespace sightline
