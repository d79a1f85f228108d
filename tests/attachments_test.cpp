// Attachments: a tree arrives and leaves as a whole, parents before children, and every call
// that would break a tree is refused with nothing changed.
#include <gtest/gtest.h>

#include "small_world.h"

namespace sightline::testing {
namespace {

using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

TEST(AttachmentsTest, ChildArrivesAfterItsParentAndLeavesBeforeIt) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  // Created first, so the attachments have lower indices than their parent: the order must come
  // from the depth, not the index.
  const EntityId grandchild = w.make(900, 900);
  const EntityId child = w.make(-900, 900);
  const EntityId horse = w.make(50, 0);
  ASSERT_TRUE(w.world.attach(child, horse).ok());
  ASSERT_TRUE(w.world.attach(grandchild, child).ok());
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_TRUE(w.spawns(c).empty())
      << "the tree's root is out of range; the children's own places do not count";

  ASSERT_TRUE(w.world.set_position(horse, 5, 0).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{horse, SpawnReason::near},
                                             {child, SpawnReason::attached},
                                             {grandchild, SpawnReason::attached}}));
  EXPECT_EQ(w.updates(c), (std::vector<EntityId>{grandchild, child, horse}));

  ASSERT_TRUE(w.world.set_position(horse, 13, 0).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{grandchild, DespawnReason::left},
                                                 {child, DespawnReason::left},
                                                 {horse, DespawnReason::left}}));
  EXPECT_TRUE(w.held(c).empty());
}

TEST(AttachmentsTest, AttachingAndDetachingMovesAnEntityBetweenTrees) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId near_cart = w.make(3, 0);
  const EntityId far_cart = w.make(400, 0);
  const EntityId crate = w.make(3, 1);
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_TRUE(w.holds(c, crate));

  ASSERT_TRUE(w.world.attach(crate, far_cart).ok());
  EXPECT_EQ(*w.world.parent(crate), far_cart);
  EXPECT_EQ(*w.world.root(crate), far_cart);
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{crate, DespawnReason::left}}));

  ASSERT_TRUE(w.world.attach(crate, near_cart).ok());  // re-attaching moves it
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{crate, SpawnReason::attached}}));

  ASSERT_TRUE(w.world.detach(crate).ok());
  ASSERT_TRUE(w.world.detach(crate).ok()) << "detaching a root is not an error";
  EXPECT_TRUE(w.world.parent(crate)->is_null());
  w.world.tick();
  EXPECT_TRUE(w.holds(c, crate)) << "a root again, at its own position (3, 1)";
  EXPECT_TRUE(w.spawns(c).empty());
}

TEST(AttachmentsTest, DestroyingAParentDetachesItsChildren) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId ship = w.make(5, 0);
  const EntityId cargo = w.make(300, 0);
  const EntityId sailor = w.make(6, 0);
  ASSERT_TRUE(w.world.attach(cargo, ship).ok());
  ASSERT_TRUE(w.world.attach(sailor, ship).ok());
  const ClientId c = w.client(viewer);
  w.world.tick();
  ASSERT_EQ(w.held(c).size(), 3u);
  ASSERT_TRUE(w.world.destroy_entity(ship).ok());
  EXPECT_TRUE(w.world.parent(cargo)->is_null());
  w.world.tick();
  EXPECT_EQ(w.despawns(c),
            (std::vector<Despawn>{{ship, DespawnReason::destroyed}, {cargo, DespawnReason::left}}));
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{sailor}));
}

TEST(AttachmentsTest, OwningOrFollowingAnythingInATreeHoldsTheWholeTree) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId tank = w.make(800, 0);
  const EntityId turret = w.make(800, 0);
  const EntityId gunner = w.make(800, 0);
  ASSERT_TRUE(w.world.attach(turret, tank).ok());
  ASSERT_TRUE(w.world.attach(gunner, turret).ok());
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_owner(gunner, c).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{tank, SpawnReason::owner},
                                             {turret, SpawnReason::attached},
                                             {gunner, SpawnReason::attached}}));
  EXPECT_EQ(w.world.why(c, gunner)->rule, Rule::owner);
  EXPECT_EQ(w.world.why(c, gunner)->root, tank);

  // The viewer boards the tank: the tank and its crew are held through the viewer's own tree,
  // the viewer itself is never sent.
  ASSERT_TRUE(w.world.clear_owner(gunner).ok());
  ASSERT_TRUE(w.world.attach(viewer, tank).ok());
  w.world.tick();
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{tank, turret, gunner}));
  EXPECT_EQ(w.world.why(c, tank)->rule, Rule::origin);
  EXPECT_EQ(w.world.why(c, viewer)->rule, Rule::viewer);
}

TEST(AttachmentsTest, AlwaysRelevantChildMakesItsTreeAlwaysRelevant) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId carrier = w.make(700, 0);
  const EntityId flag = w.make(700, 0);
  ASSERT_TRUE(w.world.attach(flag, carrier).ok());
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_always_relevant(flag, true).ok());
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{carrier, SpawnReason::always}, {flag, SpawnReason::attached}}));
  EXPECT_EQ(*w.world.holder_count(flag), 1u);
}

TEST(AttachmentsTest, CallsThatWouldBreakATreeAreRefusedAndChangeNothing) {
  SmallWorld w;
  const EntityId a = w.make(0, 0);
  const EntityId b = w.make(1, 0);
  const EntityId keyed = w.make(2, 0);
  const EntityId shown = w.make(3, 0);
  ASSERT_TRUE(w.world.attach(b, a).ok());
  ASSERT_TRUE(w.world.set_area_interest_key(keyed, 7).ok());
  ASSERT_TRUE(w.world.set_presenter(shown, true).ok());
  const SpaceId room = *w.world.create_space({});
  const EntityId elsewhere = w.make(0, 0, room);

  auto refused = [&](const Status& s, const char* needle) {
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument) << s.message();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  refused(w.world.attach(a, a), "itself");
  refused(w.world.attach(a, b), "the parent is attached to the child");
  refused(w.world.attach(keyed, a), "interest key");
  refused(w.world.attach(shown, a), "presenter");
  refused(w.world.attach(elsewhere, a), "different spaces");
  refused(w.world.set_area_interest_key(b, 3), "belongs to the root");
  refused(w.world.set_user_interest_key(b, 3), "belongs to the root");
  refused(w.world.set_global_interest_key(b), "belongs to the root");
  refused(w.world.set_presenter(b, true), "belongs to the root");
  refused(w.world.set_space(b, room), "belongs to the root");
  EXPECT_EQ(*w.world.parent(b), a);
  EXPECT_TRUE(w.world.parent(a)->is_null());
  EXPECT_TRUE(w.world.parent(keyed)->is_null());
  EXPECT_EQ(w.world.interest_key(b)->type, InterestKeyType::global);
  EXPECT_FALSE(*w.world.presenter(b));
  EXPECT_EQ(*w.world.space(b), w.world.default_space());

  // A chain of kMaxAttachmentDepth below a root is the deepest tree.
  std::vector<EntityId> chain{w.make(10, 10)};
  for (std::uint32_t d = 1; d <= kMaxAttachmentDepth; ++d) {
    chain.push_back(w.make(10, 10));
    ASSERT_TRUE(w.world.attach(chain.back(), chain[chain.size() - 2]).ok()) << d;
  }
  const EntityId extra = w.make(10, 10);
  refused(w.world.attach(extra, chain.back()), "kMaxAttachmentDepth");
  refused(w.world.attach(chain.front(), b), "kMaxAttachmentDepth");
  EXPECT_TRUE(w.world.parent(extra)->is_null());
  EXPECT_TRUE(w.world.parent(chain.front())->is_null());

  EXPECT_EQ(w.world.attach(EntityId{}, a).code(), ErrorCode::null_handle);
  ASSERT_TRUE(w.world.destroy_entity(keyed).ok());
  EXPECT_EQ(w.world.attach(keyed, a).code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.detach(keyed).code(), ErrorCode::stale_handle);
}

}  // namespace
}  // namespace sightline::testing
