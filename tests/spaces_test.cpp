// Spaces: rooms that never see each other, each with its own culling setting, radii, broadcast
// threshold and drill.
#include <gtest/gtest.h>

#include "small_world.h"

namespace sightline::testing {
namespace {

using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

TEST(SpacesTest, DifferentSpacesNeverSeeEachOther) {
  SmallWorld w;
  const SpaceId a = *w.world.create_space(culling_space(10, 12));
  const SpaceId b = *w.world.create_space(culling_space(10, 12));
  const EntityId va = w.make(0, 0, a);
  const EntityId vb = w.make(0, 0, b);
  const EntityId ea = w.make(1, 0, a);
  const EntityId eb = w.make(1, 0, b);
  const EntityId boss = w.make(500, 0, b);
  ASSERT_TRUE(w.world.set_always_relevant(boss, true).ok());
  const ClientId ca = w.client(va);
  const ClientId cb = w.client(vb);
  ASSERT_TRUE(w.world.set_owner(eb, ca).ok());
  w.world.tick();
  EXPECT_EQ(w.held(ca), (std::vector<EntityId>{ea}));
  EXPECT_EQ(w.held(cb), (std::vector<EntityId>{eb, boss}));
  EXPECT_EQ(w.world.why(ca, eb)->rule, Rule::other_space);
  EXPECT_EQ(*w.world.client_space(ca), a);
  EXPECT_EQ(w.world.space_state(a)->clients, 1u);
}

TEST(SpacesTest, ASpaceThatNeverAskedSendsEverythingItsKeysAdmit) {
  SmallWorld w;
  const SpaceId plaza = *w.world.create_space({});
  const EntityId viewer = w.make(0, 0, plaza);
  const EntityId far = w.make(1e6f, 1e6f, plaza);
  const EntityId locked = w.make(1, 1, plaza);
  ASSERT_TRUE(w.world.set_area_interest_key(locked, 4).ok());
  const EntityId outside = w.make(1, 0);
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{far, SpawnReason::unculled}}));
  EXPECT_FALSE(w.holds(c, outside));
  EXPECT_FALSE(w.world.space_state(plaza)->culling);
  EXPECT_EQ(w.world.space_state(plaza)->entities, 3u);
}

TEST(SpacesTest, FactorFormGivesEnterAndLeaveAsMultiplesOfTheRadius) {
  SmallWorld w;
  SpaceDef def;
  def.culling = Culling::on;
  def.radius = 50.0f;  // enter at 60, leave past 70
  const SpaceId island = *w.world.create_space(def);
  const EntityId viewer = w.make(0, 0, island);
  const EntityId walker = w.make(61, 0, island);
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_FALSE(w.holds(c, walker));
  EXPECT_EQ(w.world.space_state(island)->enter_radius, 50.0f * 1.2f) << "computed in float";
  EXPECT_EQ(w.world.space_state(island)->leave_radius, 50.0f * 1.4f);
  ASSERT_TRUE(w.world.set_position(walker, 60, 0).ok());
  w.world.tick();
  EXPECT_TRUE(w.holds(c, walker));
  ASSERT_TRUE(w.world.set_position(walker, 70, 0).ok());
  w.world.tick();
  EXPECT_TRUE(w.holds(c, walker));
  EXPECT_EQ(w.world.why(c, walker)->rule, Rule::within_leave);
  ASSERT_TRUE(w.world.set_position(walker, 70.5f, 0).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{walker, DespawnReason::left}}));
}

TEST(SpacesTest, BadSpaceDefsAreRefusedNamingTheField) {
  SmallWorld w;
  auto refused = [&](const SpaceDef& def, const char* needle) {
    const auto s = w.world.create_space(def);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), ErrorCode::invalid_def);
    EXPECT_NE(s.status().message().find(needle), std::string::npos) << s.status().message();
  };
  SpaceDef d;
  d.radius = 7.0f;
  refused(d, "radius is 7");
  d.radius = 1001.0f;
  refused(d, "radius is 1001");
  d.radius = 50.0f;
  d.enter_factor = 0.0f;
  refused(d, "enter_factor is 0");
  d.enter_factor = 1.5f;
  d.leave_factor = 1.4f;
  refused(d, "leave_factor is 1.4");
  d.leave_factor = 17.0f;
  refused(d, "leave_factor is 17");
  d = SpaceDef{};
  d.enter_radius = 5.0f;
  refused(d, "give both or neither");
  d.leave_radius = 4.0f;
  refused(d, "leave_radius is 4");
  d.leave_radius = 6.0f;
  d.radius = 50.0f;
  refused(d, "use one form");
  d = SpaceDef{};
  d.culling = static_cast<Culling>(9);
  refused(d, "culling is 9");

  const SpaceId room = *w.world.create_space({});
  SpaceDef bad;
  bad.radius = -1.0f;
  EXPECT_EQ(w.world.set_space_def(room, bad).code(), ErrorCode::invalid_def);
  EXPECT_EQ(w.world.space_def(room)->radius, 0.0f) << "a refused set_space_def changes nothing";
  EXPECT_EQ(w.world.set_culling_drill(room, 5, 4).code(), ErrorCode::invalid_argument);
  EXPECT_FALSE(w.world.space_state(room)->drill);
  EXPECT_EQ(w.world.destroy_space(w.world.default_space()).code(), ErrorCode::invalid_argument);
  const EntityId e = w.make(0, 0, room);
  EXPECT_EQ(w.world.destroy_space(room).code(), ErrorCode::invalid_argument);
  ASSERT_TRUE(w.world.destroy_entity(e).ok());
  ASSERT_TRUE(w.world.destroy_space(room).ok());
  EXPECT_EQ(w.world.create_entity({.space = room}).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.set_space(w.make(0, 0), room).code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.space_state(SpaceId{}).status().code(), ErrorCode::null_handle);
}

TEST(SpacesTest, BroadcastBelowTheThresholdSwitchesWithoutFlapping) {
  SmallWorld w;
  SpaceDef def = culling_space(10, 12);
  def.broadcast_threshold = 3;
  def.broadcast_margin = 1;
  const SpaceId arena = *w.world.create_space(def);
  const EntityId far = w.make(400, 0, arena);
  std::vector<EntityId> viewers;
  std::vector<ClientId> clients;
  auto join = [&] {
    viewers.push_back(w.make(0, static_cast<float>(viewers.size()) * 0.1f, arena));
    clients.push_back(w.client(viewers.back()));
  };
  for (int i = 0; i < 3; ++i) join();
  w.world.tick();
  EXPECT_TRUE(w.world.space_state(arena)->broadcasting);
  EXPECT_EQ(w.spawns(clients[0]), (std::vector<Spawn>{{far, SpawnReason::unculled},
                                                      {viewers[1], SpawnReason::unculled},
                                                      {viewers[2], SpawnReason::unculled}}));

  join();  // 4 > 3: culling on, and the far entity goes with the reason that says why
  w.world.tick();
  EXPECT_TRUE(w.world.space_state(arena)->culling);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.despawns(clients[i]), (std::vector<Despawn>{{far, DespawnReason::culling_switched}})) << i;
  }
  EXPECT_FALSE(w.holds(clients[3], far));

  // 3 clients: not yet at threshold - margin = 2, so still culling.
  ASSERT_TRUE(w.world.destroy_client(clients[3]).ok());
  w.world.tick();
  EXPECT_TRUE(w.world.space_state(arena)->culling);
  EXPECT_TRUE(w.despawns(clients[0]).empty());
  ASSERT_TRUE(w.world.destroy_client(clients[2]).ok());
  w.world.tick();
  EXPECT_TRUE(w.world.space_state(arena)->broadcasting);
  EXPECT_EQ(w.spawns(clients[0]), (std::vector<Spawn>{{far, SpawnReason::unculled}}));
}

TEST(SpacesTest, ACullingDrillShowsWhatACullingSpaceWouldSend) {
  SmallWorld w;
  const SpaceId plaza = *w.world.create_space({});
  const EntityId viewer = w.make(0, 0, plaza);
  const EntityId near = w.make(20, 0, plaza);
  const EntityId far = w.make(40, 0, plaza);
  const ClientId c = w.client(viewer);
  w.world.tick();
  ASSERT_EQ(w.held(c).size(), 2u);
  ASSERT_TRUE(w.world.set_culling_drill(plaza, 30, 36).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{far, DespawnReason::culling_switched}}));
  EXPECT_TRUE(w.world.space_state(plaza)->drill);
  EXPECT_EQ(w.world.space_state(plaza)->enter_radius, 30.0f);
  EXPECT_EQ(w.world.space_def(plaza)->culling, Culling::off) << "the drill leaves the setting alone";
  ASSERT_TRUE(w.world.clear_culling_drill(plaza).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{far, SpawnReason::unculled}}));
  EXPECT_TRUE(w.holds(c, near));
}

TEST(SpacesTest, MovingAnEntityOrAViewerBetweenSpaces) {
  SmallWorld w;
  const SpaceId other = *w.world.create_space(culling_space(10, 12));
  const EntityId viewer = w.make(0, 0);
  const EntityId watcher = w.make(0, 0, other);
  const EntityId runner = w.make(1, 0);
  const EntityId rider = w.make(1, 0);
  ASSERT_TRUE(w.world.attach(rider, runner).ok());
  const ClientId c = w.client(viewer);
  const ClientId d = w.client(watcher);
  w.world.tick();
  ASSERT_EQ(w.held(c), (std::vector<EntityId>{runner, rider}));

  ASSERT_TRUE(w.world.set_space(runner, other).ok());  // the rider goes with it
  EXPECT_EQ(*w.world.space(rider), other);
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{rider, DespawnReason::space_changed},
                                                 {runner, DespawnReason::space_changed}}));
  EXPECT_EQ(w.held(d), (std::vector<EntityId>{runner, rider}));

  ASSERT_TRUE(w.world.set_space(viewer, other).ok());
  w.world.tick();
  EXPECT_EQ(*w.world.client_space(c), other);
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{watcher, runner, rider}));
  EXPECT_EQ(w.world.space_state(other)->clients, 2u);
  EXPECT_EQ(w.world.space_state(w.world.default_space())->clients, 0u);
}

}  // namespace
}  // namespace sightline::testing
