// Per-client and per-entity radii: a client's own view radius within its space's range, and an
// entity's radius scale (per-class culling), in one World; exact against the brute-force oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "random_run.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

/// The default space of `w` with this view range.
void set_view_range(SmallWorld& w, float min_view_radius, float max_view_radius) {
  const SpaceId space = w.world.default_space();
  SpaceDef def = *w.world.space_def(space);
  def.min_view_radius = min_view_radius;
  def.max_view_radius = max_view_radius;
  ASSERT_TRUE(w.world.set_space_def(space, def).ok());
}

TEST(RadiiTest, AClientNarrowsItsViewWithoutRestartingItsStream) {
  SmallWorld w;  // R 10, L 12
  const EntityId viewer = w.make(0, 0);
  const EntityId near = w.make(3, 0);
  const EntityId mid = w.make(8, 0);
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{near, mid}));
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 10.0f);
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 12.0f);

  ASSERT_TRUE(w.world.set_view_radius(c, 5.0f).ok());
  EXPECT_EQ(w.world.view_radius(c)->enter_radius, 5.0f);
  EXPECT_EQ(w.world.view_radius(c)->leave_radius, 0.0f);
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 10.0f);  // the last tick's, until the next
  w.world.tick();
  // L follows R in the space's proportion: 5 x (12 / 10) = 6; mid at 8 leaves, near stays.
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 5.0f);
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 5.0f * (12.0f / 10.0f));
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{mid, DespawnReason::left}}));
  EXPECT_TRUE(w.spawns(c).empty());
  EXPECT_EQ(w.held(c), (std::vector<EntityId>{near}));
  EXPECT_EQ(w.world.why(c, mid)->rule, Rule::out_of_range);

  ASSERT_TRUE(w.world.set_view_radius(c, 0.0f).ok());  // back to the space's
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{mid, SpawnReason::near}}));
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 12.0f);
}

TEST(RadiiTest, AClientMayGiveItsOwnLeaveRadius) {
  SmallWorld w;  // R 10, L 12
  set_view_range(w, 0.0f, 20.0f);
  const EntityId viewer = w.make(0, 0);
  const EntityId walker = w.make(7, 0);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_view_radius(c, 8.0f, 8.0f).ok());  // no hysteresis
  w.world.tick();
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 8.0f);
  ASSERT_TRUE(w.world.set_position(walker, 8.5f, 0).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{walker, DespawnReason::left}}));
  // Clamped, the enter radius keeps the client's own proportion: 40 -> 20, 60 -> 30.
  ASSERT_TRUE(w.world.set_view_radius(c, 40.0f, 60.0f).ok());
  w.world.tick();
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 20.0f);
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 30.0f);
}

TEST(RadiiTest, AWiderViewIsHeldToTheSpacesRange) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId far = w.make(25, 0);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_view_radius(c, 40.0f).ok());
  w.world.tick();
  // By default a client may narrow its view, not widen it.
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 10.0f);
  EXPECT_FALSE(w.holds(c, far));

  set_view_range(w, 4.0f, 30.0f);
  w.world.tick();
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 30.0f);
  EXPECT_EQ(w.world.client_radii(c)->leave_radius, 30.0f * (12.0f / 10.0f));
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{far, SpawnReason::near}}));

  ASSERT_TRUE(w.world.set_view_radius(c, 1.0f).ok());
  w.world.tick();
  EXPECT_EQ(w.world.client_radii(c)->enter_radius, 4.0f);  // raised to the minimum
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{far, DespawnReason::left}}));
}

TEST(RadiiTest, ClientsOfOneSpaceEachKeepTheirOwnRadius) {
  SmallWorld w;
  set_view_range(w, 0.0f, 50.0f);
  const EntityId a = w.make(0, 0);
  const EntityId b = w.make(1, 0);
  const EntityId at20 = w.make(20, 0);
  const EntityId at6 = w.make(6, 0);
  const ClientId wide = w.client(a);
  const ClientId narrow = w.client(b);
  const ClientId plain = w.client(w.make(0, 1));
  ASSERT_TRUE(w.world.set_view_radius(wide, 30.0f).ok());
  ASSERT_TRUE(w.world.set_view_radius(narrow, 2.0f).ok());
  w.world.tick();
  EXPECT_TRUE(w.holds(wide, at20));
  EXPECT_TRUE(w.holds(wide, at6));
  EXPECT_FALSE(w.holds(narrow, at6));
  EXPECT_TRUE(w.holds(narrow, a));
  EXPECT_FALSE(w.holds(plain, at20));
  EXPECT_TRUE(w.holds(plain, at6));
}

TEST(RadiiTest, ARadiusScaleCullsAnEntityAtItsOwnDistance) {
  SmallWorld w;  // R 10, L 12
  const EntityId viewer = w.make(0, 0);
  const EntityId loud = w.make({.x = 18, .z = 0, .radius_scale = 2.0f});
  const EntityId clutter = w.make({.x = 6, .z = 0, .radius_scale = 0.5f});
  const EntityId small = w.make({.x = 4, .z = 0, .radius_scale = 0.5f});
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_TRUE(w.holds(c, loud));      // 18 <= 2 x 10
  EXPECT_FALSE(w.holds(c, clutter));  // 6 > 0.5 x 10
  EXPECT_TRUE(w.holds(c, small));
  EXPECT_EQ(*w.world.radius_scale(loud), 2.0f);

  // Leave at s x L: the loud one stays to 24, the small one to 6.
  ASSERT_TRUE(w.world.set_position(loud, 23.5f, 0).ok());
  ASSERT_TRUE(w.world.set_position(small, 5.9f, 0).ok());
  w.world.tick();
  EXPECT_TRUE(w.despawns(c).empty());
  EXPECT_EQ(w.world.why(c, loud)->rule, Rule::within_leave);
  ASSERT_TRUE(w.world.set_position(small, 6.1f, 0).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{small, DespawnReason::left}}));

  // A scale composes with the client's own radius and with a bound.
  ASSERT_TRUE(w.world.set_view_radius(c, 5.0f).ok());
  ASSERT_TRUE(w.world.set_bound_radius(loud, 2.0f).ok());
  ASSERT_TRUE(w.world.set_position(loud, 12.0f, 0).ok());  // within 2 x 5 + 2
  w.world.tick();
  EXPECT_TRUE(w.holds(c, loud));
  ASSERT_TRUE(w.world.set_position(loud, 14.5f, 0).ok());  // beyond 2 x 6 + 2
  w.world.tick();
  EXPECT_FALSE(w.holds(c, loud));
}

TEST(RadiiTest, AnAttachedEntityFollowsItsRootsScale) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const EntityId horn = w.make({.x = 15, .z = 0, .radius_scale = 2.0f});
  const EntityId rider = w.make({.x = 15, .z = 0, .radius_scale = 0.25f});
  ASSERT_TRUE(w.world.attach(rider, horn).ok());
  const ClientId c = w.client(viewer);
  w.world.tick();
  EXPECT_EQ(w.spawns(c), (std::vector<Spawn>{{horn, SpawnReason::near}, {rider, SpawnReason::attached}}));
  ASSERT_TRUE(w.world.detach(rider).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{rider, DespawnReason::left}}));
}

TEST(RadiiTest, TiersScaleWithTheEntity) {
  WorldDef def = small_world_def();
  def.tiers = {{.max_distance_fraction = 0.5f, .period = 1}, {.max_distance_fraction = 1.0f, .period = 4}};
  SmallWorld w(def);
  const EntityId viewer = w.make(0, 0);
  const EntityId loud = w.make({.x = 9, .z = 0, .radius_scale = 2.0f});  // within 0.5 x (2 x 10)
  const EntityId plain = w.make(9, 0.5f);                                // beyond 0.5 x 10
  const ClientId c = w.client(viewer);
  w.world.tick();
  std::map<std::uint32_t, int> updates;
  for (int t = 0; t < 8; ++t) {
    w.world.tick();
    for (const EntityId e : w.updates(c)) ++updates[e.index];
  }
  EXPECT_EQ(updates[loud.index], 8);   // tier 1, period 1
  EXPECT_EQ(updates[plain.index], 2);  // tier 2, period 4
}

TEST(RadiiTest, RefusalsNameTheHandleAndTheValueAndChangeNothing) {
  SmallWorld w;
  const EntityId viewer = w.make(0, 0);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_view_radius(c, 3.0f).ok());
  for (const float bad : {-1.0f, 2.0e9f, std::numeric_limits<float>::quiet_NaN(), 1.0e-7f}) {
    const Status s = w.world.set_view_radius(c, bad);
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
    EXPECT_NE(s.message().find("view radius of client 0:1"), std::string::npos) << s.message();
  }
  EXPECT_EQ(w.world.view_radius(c)->enter_radius, 3.0f);
  for (const float bad_leave : {2.9f, 2.0e9f, std::numeric_limits<float>::quiet_NaN()}) {
    const Status s = w.world.set_view_radius(c, 3.0f, bad_leave);
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
    EXPECT_NE(s.message().find("view leave radius of client 0:1"), std::string::npos) << s.message();
  }
  EXPECT_EQ(w.world.set_view_radius(c, 0.0f, 4.0f).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(w.world.view_radius(c)->leave_radius, 0.0f);
  ASSERT_TRUE(w.world.set_radius_scale(viewer, 2.0f).ok());
  for (const float bad : {0.0f, 17.0f, std::numeric_limits<float>::infinity(), 0.06f}) {
    const Status s = w.world.set_radius_scale(viewer, bad);
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
    EXPECT_NE(s.message().find("radius_scale of entity 0:1"), std::string::npos) << s.message();
  }
  EXPECT_EQ(*w.world.radius_scale(viewer), 2.0f);
  EXPECT_EQ(w.world.create_entity({.radius_scale = 0.0f}).status().code(), ErrorCode::invalid_argument);
  EXPECT_EQ(w.world.entity_count(), 1u);

  SpaceDef def = culling_space(10, 12);
  def.min_view_radius = 5.0f;
  def.max_view_radius = 4.0f;
  const Result<SpaceId> upside_down = w.world.create_space(def);
  ASSERT_FALSE(upside_down.ok());
  EXPECT_NE(upside_down.status().message().find("min_view_radius is 5"), std::string::npos)
      << upside_down.status().message();
  def.min_view_radius = -1.0f;
  EXPECT_FALSE(w.world.create_space(def).ok());
  EXPECT_EQ(w.world.set_view_radius(ClientId{}, 1.0f).code(), ErrorCode::null_handle);
}

// --- Against the oracle ---

void expect_radii_runs_match(RandomRunDef base, std::uint64_t first_seed, std::uint64_t seeds) {
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds_for_build(seeds); ++seed) {
    RandomRunDef def = base;
    def.seed = seed;
    def.radii = true;
    std::string error;
    std::string question_error;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      error = mirror.error();
      if (question_error.empty()) question_error = mirror.question_error();
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(question_error, "") << "seed " << seed;
  }
}

TEST(RadiiTest, RandomRunsWithRadiiMatch) { expect_radii_runs_match({}, 20000, 120); }

TEST(RadiiTest, RandomRunsWithRadiiRelevanceAndTiersMatch) {
  RandomRunDef def;
  def.relevance = true;
  def.tiers = TierMode::custom;
  expect_radii_runs_match(def, 20200, 80);
}

TEST(RadiiTest, RandomRunsWithRadiiSpacesKeysAndTheCrowdCapMatch) {
  RandomRunDef def;
  def.keys = true;
  def.structure = true;
  def.crowd_cap = true;
  expect_radii_runs_match(def, 20400, 80);
}

TEST(RadiiTest, RandomRunsWithRadiiSightAndEveryRuleMatch) {
  RandomRunDef def;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.sight = true;
  def.crowd_cap = true;
  def.tiers = TierMode::preset;
  expect_radii_runs_match(def, 20600, 60);
}

TEST(RadiiTest, RandomRunsWithRadiiOnTheGeneralPassMatch) {
  RandomRunDef def;
  def.relevance = true;
  def.general_pass = true;
  expect_radii_runs_match(def, 20800, 40);
}

// Guards the generator: clients must hold entities beyond their space's R through a wider view
// or a scale above 1, miss entities within it through a narrower view or a scale below 1, and
// the World must refuse every bad input.
TEST(RadiiTest, RandomRunsWithRadiiReachEveryCase) {
  std::uint64_t held_beyond_space_r = 0;
  std::uint64_t missed_within_space_r = 0;
  std::uint64_t own_radius_ticks = 0;
  std::map<std::string, std::uint64_t> refusals;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.radii = true;
    def.structure = seed % 2 == 0;
    std::map<std::string, std::uint64_t> run_refusals;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      const World& world = mirror.world();
      for (const ClientId c : world.clients()) {
        const SpaceState space = *world.space_state(*world.client_space(c));
        const ClientRadii radii = *world.client_radii(c);
        if (!space.culling) continue;
        if (radii.enter_radius != space.enter_radius) ++own_radius_ticks;
        const Position v = *world.position(*world.viewer(c));
        for (const EntityId e : mirror.oracle().entities()) {
          if (*world.root(e) != e || *world.space(e) != *world.client_space(c) || e == *world.viewer(c))
            continue;
          const Position p = *world.position(e);
          const float d = std::hypot(p.x - v.x, p.z - v.z);
          const bool held = *world.is_relevant_to(c, e);
          const Why why = *world.why(c, e);
          if (why.rule != Rule::near && why.rule != Rule::out_of_range) continue;
          if (held && d > space.leave_radius * 1.01f && *world.bound_radius(e) == 0.0f) ++held_beyond_space_r;
          if (!held && d < space.enter_radius * 0.99f) ++missed_within_space_r;
        }
      }
      run_refusals = mirror.refusals();
      ASSERT_EQ(mirror.error(), "") << "seed " << seed;
    });
    for (const auto& [kind, count] : run_refusals) refusals[kind] += count;
  }
  EXPECT_GT(held_beyond_space_r, 50u);
  EXPECT_GT(missed_within_space_r, 50u);
  EXPECT_GT(own_radius_ticks, 200u);
  EXPECT_GT(refusals["set_radius_scale: value"], 5u);
  EXPECT_GT(refusals["set_view_radius: value"], 5u);
  EXPECT_GT(refusals["set_radius_scale: handle"], 1u);
  EXPECT_GT(refusals["set_view_radius: handle"], 1u);
}

}  // namespace
}  // namespace sightline::testing
