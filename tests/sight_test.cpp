// Sight: walls block the near rule, a member out of sight is held for the space's hold, look-ahead
// sends what is about to come round a corner, and the game's filter has the last word.
#include <gtest/gtest.h>

#include <array>
#include <limits>

#include "small_world.h"

namespace sightline::testing {
namespace {

using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

// A wall across x = 5, from z = -3 to z = 3.
constexpr std::array<WallSegment, 1> kWall{{{5.0f, -3.0f, 5.0f, 3.0f}}};

TEST(SightTest, AWallHidesWhatStandsBehindItUntilItIsRemoved) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId behind = w.make(8, 0);
  const EntityId beside = w.make(8, 5);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_walls(w.world.default_space(), kWall).ok());
  EXPECT_EQ(w.world.walls(w.world.default_space())->size(), 1u);
  w.world.tick();
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{beside}));
  EXPECT_EQ(w.world.why(c, behind)->rule, Rule::hidden);
  EXPECT_FALSE(w.world.why(c, behind)->held);
  ASSERT_TRUE(w.world.set_walls(w.world.default_space(), {}).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{behind, SpawnReason::near}}));
}

TEST(SightTest, AMemberOutOfSightIsHeldForTheHoldThenLeavesHidden) {
  SmallWorld w;
  SpaceDef def;
  def.culling = Culling::on;
  def.visibility_hold_ticks = 3;
  const SpaceId room = *w.world.create_space(def);
  ASSERT_TRUE(w.world.set_walls(room, kWall).ok());
  const EntityId viewer = w.make(0, 0, room);
  const EntityId walker = w.make(8, 5.5f, room);  // in sight, past the wall's end
  const ClientId c = w.client(viewer);
  w.world.tick();
  ASSERT_TRUE(w.holds(c, walker));
  ASSERT_TRUE(w.world.set_position(walker, 8, 0).ok());  // behind the wall
  for (int t = 1; t <= 3; ++t) {
    w.world.tick();
    EXPECT_TRUE(w.holds(c, walker)) << "hold tick " << t;
    EXPECT_EQ(w.world.why(c, walker)->rule, Rule::near) << "held, by the hold";
  }
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{walker, DespawnReason::hidden}}));
  // Back in sight: it enters again at once.
  ASSERT_TRUE(w.world.set_position(walker, 8, 5.5f).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{walker, SpawnReason::near}}));
}

TEST(SightTest, AnEdgeOfABoundedEntitySeenPastTheWallIsEnough) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId truck = w.make(8, 4.2f);
  ASSERT_TRUE(w.world.set_bound_radius(truck, 1.5f).ok());  // its far edge shows past the wall's end
  const EntityId post = w.make(8, 4.2f);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_walls(w.world.default_space(), kWall).ok());
  w.world.tick();
  EXPECT_TRUE(w.holds(c, truck));
  EXPECT_FALSE(w.holds(c, post));
}

TEST(SightTest, LookAheadSendsWhatIsAboutToComeRoundTheCorner) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId runner = w.make(8, 2);
  ASSERT_TRUE(w.world.set_velocity(runner, 0.0f, 10.0f).ok());  // 10 units a second up, past the wall's end
  EXPECT_EQ(w.world.velocity(runner)->z, 10.0f);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_walls(w.world.default_space(), kWall).ok());
  w.world.tick();
  EXPECT_FALSE(w.holds(c, runner));
  ASSERT_TRUE(w.world.set_look_ahead(c, 0.3f).ok());  // 300 ms ahead: (8, 5) is in sight
  w.world.tick();
  EXPECT_TRUE(w.holds(c, runner));
  EXPECT_EQ(*w.world.look_ahead(c), 0.3f);
}

TEST(SightTest, TheGamesFilterDecidesAfterTheWallsAndAnyOriginMaySee) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId scout = w.make(12, 0);
  const EntityId spy = w.make(8, 0);
  const EntityId ghost = w.make(-3, 0);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_walls(w.world.default_space(), kWall).ok());
  w.world.tick();
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{ghost}));
  ASSERT_TRUE(w.world.add_origin(c, scout).ok());  // the scout, past the wall, sees the spy
  w.world.tick();
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{scout, spy, ghost}));

  struct Fog {
    EntityId hidden;
    int calls = 0;
  } fog{ghost};
  w.world.set_visibility_filter(
      [](void* context, ClientId, EntityId entity) {
        auto* f = static_cast<Fog*>(context);
        ++f->calls;
        return entity != f->hidden;
      },
      &fog);
  for (int t = 0; t <= 10; ++t) w.world.tick();  // beyond the default hold of 10 ticks
  EXPECT_FALSE(w.holds(c, ghost));
  EXPECT_GT(fog.calls, 0);
  w.world.set_visibility_filter(nullptr, nullptr);
  w.world.tick();
  EXPECT_TRUE(w.holds(c, ghost));
}

TEST(SightTest, ASpaceThatDoesNotCullNeedsNoSightAndATreeIsHiddenAsAWhole) {
  SmallWorld w;
  const SpaceId plaza = *w.world.create_space({});
  ASSERT_TRUE(w.world.set_walls(plaza, kWall).ok());
  const EntityId v = w.make(0, 0, plaza);
  const EntityId behind = w.make(8, 0, plaza);
  const ClientId c = w.client(v);
  w.world.tick();
  EXPECT_TRUE(w.holds(c, behind)) << "sight is part of the near rule; a space that does not cull has none";

  SmallWorld s;
  SpaceDef def;
  def.culling = Culling::on;
  def.visibility_hold_ticks = 0;
  const SpaceId room = *s.world.create_space(def);
  ASSERT_TRUE(s.world.set_walls(room, kWall).ok());
  const EntityId viewer = s.make(0, 0, room);
  const EntityId horse = s.make(8, 5.5f, room);
  const EntityId rider = s.make(8, 5.5f, room);
  ASSERT_TRUE(s.world.attach(rider, horse).ok());
  const ClientId d = s.client(viewer);
  s.world.tick();
  ASSERT_EQ(s.held(d).size(), 2u);
  ASSERT_TRUE(s.world.set_position(horse, 8, 0).ok());
  s.world.tick();
  EXPECT_EQ(s.despawns(d),
            (std::vector<Despawn>{{rider, DespawnReason::hidden}, {horse, DespawnReason::hidden}}));
}

TEST(SightTest, BadSightInputsAreRefusedAndChangeNothing) {
  SmallWorld w;
  const EntityId e = w.make(0, 0);
  const ClientId c = w.client(e);
  const SpaceId space = w.world.default_space();
  ASSERT_TRUE(w.world.set_walls(space, kWall).ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::array<WallSegment, 2> bad{{{0, 0, 1, 1}, {0, nan, 1, 1}}};
  const Status walls = w.world.set_walls(space, bad);
  EXPECT_EQ(walls.code(), ErrorCode::non_finite_position);
  EXPECT_NE(walls.message().find("wall 1"), std::string::npos) << walls.message();
  EXPECT_EQ(w.world.walls(space)->size(), 1u);
  EXPECT_EQ(w.world.set_velocity(e, std::numeric_limits<float>::infinity(), 0).code(),
            ErrorCode::invalid_argument);
  EXPECT_EQ(w.world.velocity(e)->x, 0.0f);
  EXPECT_EQ(w.world.set_look_ahead(c, -0.1f).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(w.world.set_look_ahead(c, kMaxLookAhead * 2).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(*w.world.look_ahead(c), 0.0f);
  SpaceDef def;
  def.visibility_hold_ticks = kMaxVisibilityHoldTicks + 1;
  EXPECT_EQ(w.world.create_space(def).status().code(), ErrorCode::invalid_def);
  EXPECT_EQ(w.world.set_walls(SpaceId{}, kWall).code(), ErrorCode::null_handle);
}

}  // namespace
}  // namespace sightline::testing
