// The World's records equal the brute-force oracle's, tick by tick, on seeded random runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "jitter_walk.h"
#include "mirrored_world.h"
#include "random_run.h"
#include "rng.h"

namespace sightline::testing {
namespace {

// An EntityDef at (x, z), in the default space.
EntityDef entity_at(float x, float z, bool always_relevant = false, float bound_radius = 0.0f) {
  EntityDef def;
  def.x = x;
  def.z = z;
  def.always_relevant = always_relevant;
  def.bound_radius = bound_radius;
  return def;
}

// One random run, the World against the oracle at every tick, to its last tick.
void expect_run_matches(const RandomRunDef& def) {
  std::string error;
  std::uint64_t ticks = 0;
  run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
    error = mirror.error();
    ticks = mirror.oracle().tick_count();
  });
  ASSERT_EQ(error, "") << "seed " << def.seed;
  ASSERT_EQ(ticks, def.ticks) << "seed " << def.seed;
}

void expect_random_runs_match(TierMode tiers, bool hysteresis, std::uint64_t first_seed,
                              std::uint64_t seeds) {
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds_for_build(seeds); ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.tiers = tiers;
    def.hysteresis = hysteresis;
    expect_run_matches(def);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(OracleTest, RandomRunsWithWithdrawalsMatch) {
  // Half of the churn's destroys are withdrawals, among owners, origins and attachments.
  for (std::uint64_t seed = 7000; seed < 7000 + seeds_for_build(150); ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.withdraw = true;
    def.relevance = seed % 2 == 0;
    def.structure = seed % 3 == 0;
    expect_run_matches(def);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(OracleTest, RandomRunsWithHysteresisMatch) { expect_random_runs_match(TierMode::none, true, 1, 200); }
TEST(OracleTest, RandomRunsWithOneRadiusMatch) { expect_random_runs_match(TierMode::none, false, 1000, 150); }
TEST(OracleTest, RandomRunsWithPresetTiersMatch) {
  expect_random_runs_match(TierMode::preset, true, 2000, 150);
}
TEST(OracleTest, RandomRunsWithCustomTiersMatch) {
  expect_random_runs_match(TierMode::custom, true, 3000, 150);
}
TEST(OracleTest, RandomRunsWithCustomTiersAndOneRadiusMatch) {
  expect_random_runs_match(TierMode::custom, false, 4000, 40);
}

// Guards the generator: the random runs must reach every kind of record, or matching proves little.
TEST(OracleTest, RandomRunsReachEveryKindOfRecord) {
  std::uint64_t near = 0, always = 0, left = 0, destroyed = 0, clients_seen = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      for (const ClientId client : mirror.world().clients()) {
        const ClientStream stream = *mirror.world().stream(client);
        for (const SpawnRecord& r : stream.spawns) ++(r.reason == SpawnReason::near ? near : always);
        for (const DespawnRecord& r : stream.despawns) ++(r.reason == DespawnReason::left ? left : destroyed);
        ++clients_seen;
      }
    });
  }
  EXPECT_GT(near, 1000u);
  EXPECT_GT(always, 100u);
  EXPECT_GT(left, 1000u);
  EXPECT_GT(destroyed, 100u);
  EXPECT_GT(clients_seen, 1000u);
}

// Random runs in lockstep with the oracle: `keys` adds random entity keys, subscriptions, rates,
// bypass flags and refused key calls; `relevance` adds owners, extra origins and bounds.
void expect_random_runs_match(TierMode tiers, bool hysteresis, bool keys, bool relevance,
                              std::uint64_t first_seed, std::uint64_t seeds, bool structure = false,
                              bool sight = false) {
  std::string revision_error;
  std::string question_error;
  std::string state_error;
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds_for_build(seeds); ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.tiers = tiers;
    def.hysteresis = hysteresis;
    def.keys = keys;
    def.relevance = relevance;
    def.structure = structure;
    def.sight = sight;
    std::string error;
    std::uint64_t ticks = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      error = mirror.error();
      if (revision_error.empty()) revision_error = mirror.revision_error();
      if (question_error.empty() && !mirror.question_error().empty()) {
        question_error = "seed " + std::to_string(seed) + ", " + mirror.question_error();
      }
      if (state_error.empty() && !mirror.state_error().empty()) {
        state_error = "seed " + std::to_string(seed) + ", " + mirror.state_error();
      }
      ticks = mirror.oracle().tick_count();
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(ticks, def.ticks) << "seed " << seed;
  }
  EXPECT_EQ(revision_error, "") << "first revision miscount over the seeds";
  EXPECT_EQ(question_error, "") << "first wrong is_relevant_to, why or holder_count over the seeds";
  EXPECT_EQ(state_error, "") << "first wrong space_state between ticks over the seeds";
}

void expect_keyed_runs_match(TierMode tiers, bool hysteresis, std::uint64_t first_seed, std::uint64_t seeds) {
  expect_random_runs_match(tiers, hysteresis, true, false, first_seed, seeds);
}

TEST(OracleTest, RandomRunsWithKeysMatch) { expect_keyed_runs_match(TierMode::none, true, 5000, 150); }
TEST(OracleTest, RandomRunsWithKeysAndOneRadiusMatch) {
  expect_keyed_runs_match(TierMode::none, false, 6000, 80);
}
TEST(OracleTest, RandomRunsWithKeysAndPresetTiersMatch) {
  expect_keyed_runs_match(TierMode::preset, true, 7000, 100);
}
TEST(OracleTest, RandomRunsWithKeysAndCustomTiersMatch) {
  expect_keyed_runs_match(TierMode::custom, true, 8000, 100);
}

TEST(OracleTest, LongRunWithKeysWithoutChurnMatches) {
  RandomRunDef def;
  def.seed = 78;
  def.ticks = 300;
  def.churn = false;
  def.keys = true;
  def.max_entities = 40;
  def.tiers = TierMode::custom;
  std::string error;
  std::string revision_error;
  run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
    error = mirror.error();
    revision_error = mirror.revision_error();
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(revision_error, "");
}

// Guards the keyed generator: it must reach key spawns, key_removed despawns, members held
// without an update (key send rates), and the older kinds too.
TEST(OracleTest, RandomRunsWithKeysReachEveryKindOfRecord) {
  std::uint64_t near = 0, always = 0, key = 0, left = 0, destroyed = 0, key_removed = 0, skipped = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.keys = true;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      for (const ClientId client : mirror.world().clients()) {
        const ClientStream stream = *mirror.world().stream(client);
        for (const SpawnRecord& r : stream.spawns) {
          if (r.reason == SpawnReason::near) ++near;
          if (r.reason == SpawnReason::always) ++always;
          if (r.reason == SpawnReason::key) ++key;
        }
        for (const DespawnRecord& r : stream.despawns) {
          if (r.reason == DespawnReason::left) ++left;
          if (r.reason == DespawnReason::destroyed) ++destroyed;
          if (r.reason == DespawnReason::key_removed) ++key_removed;
        }
        skipped += mirror.world().interest_set(client)->size() - stream.updates.size();  // no tiers
      }
    });
  }
  EXPECT_GT(near, 500u);
  EXPECT_GT(always, 50u);
  EXPECT_GT(key, 200u);
  EXPECT_GT(left, 300u);
  EXPECT_GT(destroyed, 50u);
  EXPECT_GT(key_removed, 200u);
  EXPECT_GT(skipped, 500u);
}

TEST(OracleTest, LongRunWithoutChurnMatches) {
  RandomRunDef def;
  def.seed = 77;
  def.ticks = 400;
  def.churn = false;
  def.max_entities = 40;
  std::string error;
  run_random(def, [&](MirroredWorld& mirror, const TickStats&) { error = mirror.error(); });
  EXPECT_EQ(error, "");
}

void expect_relevance_runs_match(TierMode tiers, bool hysteresis, bool keys, std::uint64_t first_seed,
                                 std::uint64_t seeds) {
  expect_random_runs_match(tiers, hysteresis, keys, true, first_seed, seeds);
}

TEST(OracleTest, RandomRunsWithOwnersOriginsAndBoundsMatch) {
  expect_relevance_runs_match(TierMode::none, true, false, 9000, 120);
}
TEST(OracleTest, RandomRunsWithOwnersOriginsBoundsAndKeysMatch) {
  expect_relevance_runs_match(TierMode::none, true, true, 10000, 150);
}
TEST(OracleTest, RandomRunsWithOwnersOriginsBoundsKeysAndOneRadiusMatch) {
  expect_relevance_runs_match(TierMode::none, false, true, 11000, 80);
}
TEST(OracleTest, RandomRunsWithOwnersOriginsBoundsKeysAndPresetTiersMatch) {
  expect_relevance_runs_match(TierMode::preset, true, true, 12000, 100);
}
TEST(OracleTest, RandomRunsWithOwnersOriginsBoundsKeysAndCustomTiersMatch) {
  expect_relevance_runs_match(TierMode::custom, true, true, 13000, 100);
}
TEST(OracleTest, RandomRunsWithOwnersOriginsBoundsAndCustomTiersAndOneRadiusMatch) {
  expect_relevance_runs_match(TierMode::custom, false, false, 14000, 60);
}

TEST(OracleTest, LongRunWithOwnersOriginsBoundsAndKeysWithoutChurnMatches) {
  for (const TierMode tiers : {TierMode::none, TierMode::custom}) {
    RandomRunDef def;
    def.seed = 81;
    def.ticks = 300;
    def.churn = false;
    def.keys = true;
    def.relevance = true;
    def.max_entities = 40;
    def.tiers = tiers;
    std::string error;
    std::string revision_error;
    std::uint64_t ticks = 0;
    std::uint64_t members = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      error = mirror.error();
      revision_error = mirror.revision_error();
      ticks = mirror.oracle().tick_count();
      members += stats.members;
    });
    EXPECT_EQ(error, "");
    EXPECT_EQ(revision_error, "");
    EXPECT_EQ(ticks, def.ticks);
    EXPECT_GT(members, 300u * 20u) << "the run must hold something to compare";
  }
}

// Guards the relevance generator: it must reach owner and origin spawns, bounded entities held
// (and entering, leaving, held only through their bound), owned and origin members destroyed,
// members beyond R held because they are owned or origins, origin-held neighbours (near an
// extra origin only), full origin lists, and the keyed kinds too.
TEST(OracleTest, RandomRunsWithOwnersOriginsAndBoundsReachEveryKindOfRecord) {
  std::uint64_t owner = 0, origin = 0, key = 0, near = 0, key_removed = 0, left = 0, destroyed_special = 0;
  std::uint64_t bounded_near = 0, bounded_left = 0, bounded_only_by_bound = 0, near_extra_only = 0;
  std::uint64_t full_origins = 0, owned_far = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.keys = true;
    def.relevance = true;
    def.tiers = TierMode::custom;
    // What the previous tick held as owned or origin, per client slot: destroyed ones count.
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> special;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      const BruteForceOracle& oracle = mirror.oracle();
      const World& world = mirror.world();
      const float r = world.enter_radius();
      for (const ClientId client : world.clients()) {
        const ClientStream stream = *world.stream(client);
        const EntityId viewer = oracle.viewer(client);
        const Position v = *world.position(viewer);
        const std::vector<EntityId> origins = oracle.origins(client);
        if (origins.size() == kMaxOrigins) ++full_origins;
        for (const SpawnRecord& s : stream.spawns) {
          if (s.reason == SpawnReason::owner) ++owner;
          if (s.reason == SpawnReason::origin) ++origin;
          if (s.reason == SpawnReason::key) ++key;
          if (s.reason == SpawnReason::near) {
            ++near;
            const float b = oracle.bound_radius(s.entity);
            const Position p = *world.position(s.entity);
            float nearest = (p.x - v.x) * (p.x - v.x) + (p.z - v.z) * (p.z - v.z);
            const float to_viewer = nearest;
            for (const EntityId o : origins) {
              const Position q = *world.position(o);
              nearest = std::min(nearest, (p.x - q.x) * (p.x - q.x) + (p.z - q.z) * (p.z - q.z));
            }
            if (b > 0.0f) ++bounded_near;
            if (b > 0.0f && nearest > r * r) ++bounded_only_by_bound;
            if (to_viewer > r * r && nearest <= r * r) ++near_extra_only;
          }
        }
        for (const DespawnRecord& d : stream.despawns) {
          if (d.reason == DespawnReason::key_removed) ++key_removed;
          if (d.reason == DespawnReason::left) {
            ++left;
            if (oracle.is_live(d.entity) && oracle.bound_radius(d.entity) > 0.0f) ++bounded_left;
          }
          if (d.reason == DespawnReason::destroyed && special[{client.index, d.entity.index}])
            ++destroyed_special;
        }
        special.erase(special.lower_bound({client.index, 0}), special.lower_bound({client.index + 1, 0}));
        for (const EntityId e : *world.interest_set(client)) {
          const bool is_special = oracle.owner(e) == client || oracle.is_origin(client, e);
          special[{client.index, e.index}] = is_special;
          if (oracle.owner(e) == client) {
            const Position p = *world.position(e);
            if ((p.x - v.x) * (p.x - v.x) + (p.z - v.z) * (p.z - v.z) > 4.0f * r * r) ++owned_far;
          }
        }
      }
    });
  }
  EXPECT_GT(owner, 200u);
  EXPECT_GT(origin, 200u);
  EXPECT_GT(key, 200u);
  EXPECT_GT(near, 500u);
  EXPECT_GT(key_removed, 100u);
  EXPECT_GT(left, 300u);
  EXPECT_GT(destroyed_special, 10u);
  EXPECT_GT(bounded_near, 50u);
  EXPECT_GT(bounded_left, 20u);
  EXPECT_GT(bounded_only_by_bound, 30u);
  EXPECT_GT(near_extra_only, 100u);
  EXPECT_GT(full_origins, 5u);
  EXPECT_GT(owned_far, 100u);
}

// The reference scenario's motion with every entity a client, with and without tiers.
void expect_jitter_walk_matches(std::vector<DistanceTier> tiers, float leave_factor) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.enter_radius = 1.6f;
  def.leave_radius = 1.6f * leave_factor;
  def.tiers = std::move(tiers);
  MirroredWorld mirror(def);
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i) {
    ids.push_back(*mirror.create_entity(entity_at(walk.xs()[i], walk.zs()[i])));
  }
  for (const EntityId id : ids) (void)mirror.create_client(id);
  for (int t = 0; t < 200; ++t) {
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "");
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i)
      (void)mirror.set_position(ids[i], walk.xs()[i], walk.zs()[i]);
  }
}

TEST(OracleTest, JitterWalkWithHysteresisMatches) { expect_jitter_walk_matches({}, 1.25f); }
TEST(OracleTest, JitterWalkWithPresetTiersMatches) {
  expect_jitter_walk_matches(default_distance_tiers(), 1.0f);
}
TEST(OracleTest, JitterWalkWithCustomTiersMatches) { expect_jitter_walk_matches(custom_tiers(), 1.5f); }

TEST(OracleTest, ShrinkingRadiiDropMembersBetweenOldAndNewRadius) {
  WorldDef def = default_world_def();
  def.enter_radius = 4.0f;
  def.leave_radius = 4.0f;
  MirroredWorld mirror(def);
  const EntityId viewer = *mirror.create_entity(entity_at(0.0f, 0.0f));
  for (int i = 1; i <= 8; ++i) (void)mirror.create_entity(entity_at(0.5f * static_cast<float>(i), 0.0f));
  (void)mirror.create_client(viewer);
  EXPECT_EQ(mirror.tick().members, 8u);
  (void)mirror.set_radii(1.0f, 2.0f);  // keeps d <= 2: 4 members
  EXPECT_EQ(mirror.tick().members, 4u);
  (void)mirror.set_radii(3.0f, 3.0f);  // enters d <= 3: 6 members
  EXPECT_EQ(mirror.tick().members, 6u);
  EXPECT_EQ(mirror.error(), "");
}

// A huge outlier stretches the grid's bounding box far beyond max_grid_cells at cell size R, so
// the cells must grow; a client views from the outlier, which walks back into the cluster and
// out again, while entities are destroyed and created around it.
TEST(OracleTest, HugeOutlierWithCappedGridMatchesOverManyTicks) {
  for (const std::uint32_t cap : {16u, 1u}) {
    for (const bool tiers : {false, true}) {
      WorldDef def = default_world_def();
      def.enter_radius = 1.6f;
      def.leave_radius = 2.0f;
      def.max_grid_cells = cap;
      if (tiers) def.tiers = custom_tiers();
      MirroredWorld mirror(def);
      scenarios::Rng rng(cap * 10u + (tiers ? 1u : 0u));
      std::vector<EntityId> near;
      for (int i = 0; i < 60; ++i) {
        near.push_back(*mirror.create_entity(
            entity_at(rng.uniform(-6.0f, 6.0f), rng.uniform(-6.0f, 6.0f), i % 17 == 3)));
      }
      const EntityId outlier = *mirror.create_entity(entity_at(1.0e12f, 0.0f));
      const EntityId outlier_neighbour = *mirror.create_entity(entity_at(1.0e12f, 1.5f));
      const EntityId far_negative = *mirror.create_entity(entity_at(-1.0e12f, -1.0e12f));
      (void)mirror.create_client(outlier);
      (void)mirror.create_client(far_negative);
      for (int i = 0; i < 8; ++i) (void)mirror.create_client(near[static_cast<std::size_t>(i)]);
      for (int t = 0; t < 60; ++t) {
        (void)mirror.tick();
        ASSERT_EQ(mirror.error(), "") << "cap " << cap << " tiers " << tiers << " tick " << t;
        for (std::size_t i = 0; i < near.size(); ++i) {
          const Position p = *mirror.world().position(near[i]);
          (void)mirror.set_position(near[i], p.x + rng.uniform(-0.4f, 0.4f), p.z + rng.uniform(-0.4f, 0.4f));
        }
        // The outlier and its neighbour come into the cluster for ticks 20..39, then leave again.
        const bool home = t >= 19 && t < 39;
        (void)mirror.set_position(outlier, home ? rng.uniform(-2.0f, 2.0f) : 1.0e12f, 0.0f);
        (void)mirror.set_position(outlier_neighbour, home ? 0.5f : 1.0e12f, 1.5f);
        // Churn away from the viewers (indices 0..7 view): destroy one, create one.
        if (t % 3 == 0) {
          const std::size_t at = 8 + rng.below(static_cast<std::uint32_t>(near.size() - 8));
          (void)mirror.destroy_entity(near[at]);
          near[at] = *mirror.create_entity(entity_at(rng.uniform(-6.0f, 6.0f), rng.uniform(-6.0f, 6.0f)));
        }
      }
    }
  }
}

// The tier test follows the documented float arithmetic (world_def.h): limit = fraction * R in
// float, within when d2 <= limit * limit in float. An entity at exactly (limit, 0) from the
// viewer is within; one float step farther is not. Tier 0 updates every tick, the outer tier
// every 7th, so tick 0's updates tell which tier each entity fell in.
TEST(OracleTest, TierBoundaryUsesFloatArithmeticOfTheDocumentedRule) {
  scenarios::Rng rng(4242);
  int double_rule_would_differ = 0;
  for (const float fraction : {0.3f, 0.45f, 0.7f, 0.9f}) {
    for (int round = 0; round < 150; ++round) {
      const float r = rng.uniform(0.5f, 5.0f);
      const float limit = fraction * r;
      const float limit2 = limit * limit;
      const double exact = static_cast<double>(fraction) * static_cast<double>(r);
      if (limit2 > static_cast<float>(exact * exact)) ++double_rule_would_differ;

      WorldDef def = default_world_def();
      def.enter_radius = r;
      def.leave_radius = r;
      def.tiers = {DistanceTier{fraction, 1}, DistanceTier{std::numeric_limits<float>::infinity(), 7}};
      MirroredWorld mirror(def);
      const EntityId viewer = *mirror.create_entity(entity_at(0.0f, 0.0f));
      const EntityId at_limit = *mirror.create_entity(entity_at(limit, 0.0f));  // index 1
      const float beyond = std::nextafter(limit, std::numeric_limits<float>::infinity());
      const EntityId past_limit = *mirror.create_entity(entity_at(beyond, 0.0f));  // index 2
      ASSERT_EQ(at_limit.index, 1u);
      ASSERT_EQ(past_limit.index, 2u);
      const ClientId client = *mirror.create_client(viewer);
      (void)mirror.tick();
      ASSERT_EQ(mirror.error(), "") << "fraction " << fraction << " R " << r;
      const ClientStream stream = *mirror.world().stream(client);
      const float past2 = beyond * beyond;
      std::vector<EntityId> expected = {at_limit};
      if (past2 <= limit2) expected.push_back(past_limit);
      ASSERT_EQ(stream.updates.size(), expected.size()) << "fraction " << fraction << " R " << r;
      for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(stream.updates[i], expected[i]);
    }
  }
  // The float rule and a double-then-float rule must disagree on some of these cases, or the
  // test could not tell them apart.
  EXPECT_GT(double_rule_would_differ, 0);
}

// Bounds follow the documented float arithmetic (world.h): enter when nearest2 <= (R + b)^2,
// leave when nearest2 > (L + b)^2, tier when nearest2 <= (fraction * R + b)^2, each sum and
// square in float, nearest2 over the viewer and the extra origins. Spheres are put at exactly
// the reach, and one float step beyond, of an extra origin far from the viewer; the mirror checks
// every record, and a rule summing in double must disagree on some cases.
TEST(OracleTest, BoundReachUsesFloatArithmeticOfTheDocumentedRule) {
  scenarios::Rng rng(777);
  int double_rule_would_differ = 0;
  for (int round = 0; round < 300; ++round) {
    const float r = rng.uniform(0.5f, 5.0f);
    const float l = r * rng.uniform(1.0f, 1.5f);
    WorldDef def = default_world_def();
    def.enter_radius = r;
    def.leave_radius = l;
    def.tiers = custom_tiers();
    MirroredWorld mirror(def);
    const EntityId viewer = *mirror.create_entity(entity_at(-1.0e6f, 0.0f));
    const EntityId origin = *mirror.create_entity(entity_at(0.0f, 0.0f));
    const ClientId client = *mirror.create_client(viewer);
    ASSERT_TRUE(mirror.add_origin(client, origin).ok());
    std::vector<EntityId> spheres;
    std::vector<float> bounds;
    for (int i = 0; i < 8; ++i) {
      const float b = rng.below(2) == 0 ? rng.uniform(0.01f, 1.0f) * r : rng.uniform(1.0f, 50.0f) * r;
      const float scale = i < 4 ? r : 0.25f * r;  // the enter reach, or the first tier's limit
      float reach = scale + b;
      if (i % 2 == 1) reach = std::nextafter(reach, std::numeric_limits<float>::infinity());
      const double exact = static_cast<double>(scale) + static_cast<double>(b);
      const float d2 = reach * reach;
      if ((d2 <= (scale + b) * (scale + b)) != (d2 <= static_cast<float>(exact * exact)))
        ++double_rule_would_differ;
      spheres.push_back(
          *mirror.create_entity(entity_at(i % 4 < 2 ? reach : 0.0f, i % 4 < 2 ? 0.0f : -reach, false, b)));
      bounds.push_back(b);
    }
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "") << "round " << round;
    // Then the leave reach: the entered spheres move to exactly L + b, and one step beyond.
    for (std::size_t i = 0; i < spheres.size(); ++i) {
      float reach = l + bounds[i];
      if (i % 2 == 1) reach = std::nextafter(reach, std::numeric_limits<float>::infinity());
      (void)mirror.set_position(spheres[i], 0.0f, reach);
    }
    for (int t = 0; t < 3; ++t) {
      (void)mirror.tick();
      ASSERT_EQ(mirror.error(), "") << "round " << round;
    }
  }
  EXPECT_GT(double_rule_would_differ, 0);
}

}  // namespace
}  // namespace sightline::testing

// --- Spaces, attachments, presenters and teleports -------------------------------------------

namespace sightline::testing {
namespace {

void expect_structure_runs_match(TierMode tiers, bool hysteresis, bool keys, bool relevance,
                                 std::uint64_t first_seed, std::uint64_t seeds) {
  expect_random_runs_match(tiers, hysteresis, keys, relevance, first_seed, seeds, true);
}

TEST(OracleTest, RandomRunsWithSpacesAndAttachmentsMatch) {
  expect_structure_runs_match(TierMode::none, true, false, false, 15000, 150);
}
TEST(OracleTest, RandomRunsWithSpacesAttachmentsAndKeysMatch) {
  expect_structure_runs_match(TierMode::none, true, true, false, 16000, 120);
}
TEST(OracleTest, RandomRunsWithSpacesAttachmentsKeysAndRelevanceMatch) {
  expect_structure_runs_match(TierMode::none, true, true, true, 17000, 150);
}
TEST(OracleTest, RandomRunsWithSpacesAttachmentsKeysRelevanceAndCustomTiersMatch) {
  expect_structure_runs_match(TierMode::custom, true, true, true, 18000, 120);
}
TEST(OracleTest, RandomRunsWithSpacesAttachmentsKeysRelevanceAndPresetTiersMatch) {
  expect_structure_runs_match(TierMode::preset, true, true, true, 19000, 80);
}
TEST(OracleTest, RandomRunsWithSpacesAttachmentsRelevanceCustomTiersAndOneRadiusMatch) {
  expect_structure_runs_match(TierMode::custom, false, false, true, 20000, 80);
}

TEST(OracleTest, LongRunWithSpacesAttachmentsKeysAndRelevanceWithoutChurnMatches) {
  for (const TierMode tiers : {TierMode::none, TierMode::custom}) {
    RandomRunDef def;
    def.seed = 83;
    def.ticks = 300;
    def.churn = false;
    def.keys = true;
    def.relevance = true;
    def.structure = true;
    def.max_entities = 40;
    def.tiers = tiers;
    std::string error;
    std::string other_error;
    std::uint64_t ticks = 0;
    std::uint64_t members = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      error = mirror.error();
      other_error = mirror.revision_error() + mirror.question_error() + mirror.state_error();
      ticks = mirror.oracle().tick_count();
      members += stats.members;
    });
    EXPECT_EQ(error, "");
    EXPECT_EQ(other_error, "");
    EXPECT_EQ(ticks, def.ticks);
    EXPECT_GT(members, 300u * 20u) << "the run must hold something to compare";
  }
}

// Guards the structure generator: it must reach every spawn and despawn reason, every rule of
// why(), deep trees, broadcasting spaces switching both ways, drills, and every kind of refusal.
TEST(OracleTest, RandomRunsWithSpacesAndAttachmentsReachEveryKindOfRecord) {
  std::map<SpawnReason, std::uint64_t> spawns;
  std::map<DespawnReason, std::uint64_t> despawns;
  std::map<Rule, std::uint64_t> rules;
  std::map<std::string, std::uint64_t> refusals;
  std::uint64_t deep_members = 0, viewer_tree_members = 0, broadcasting = 0, to_culling = 0, to_broadcast = 0;
  std::uint64_t drills = 0, off_spaces = 0, attached_origins = 0;
  // culling_switched despawns by what turned culling on: a drill, the end of broadcasting, the setting.
  std::uint64_t switched_by_drill = 0, switched_by_count = 0, switched_by_setting = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.keys = true;
    def.relevance = true;
    def.structure = true;
    def.tiers = TierMode::custom;
    std::map<std::uint32_t, bool> was_broadcasting;  // by space slot
    std::map<std::uint32_t, SpaceState> was;         // by space slot
    std::map<std::string, std::uint64_t> run_refusals;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      const BruteForceOracle& oracle = mirror.oracle();
      const World& world = mirror.world();
      for (const ClientId client : world.clients()) {
        const ClientStream stream = *world.stream(client);
        for (const SpawnRecord& r : stream.spawns) ++spawns[r.reason];
        for (const DespawnRecord& r : stream.despawns) {
          ++despawns[r.reason];
          if (r.reason != DespawnReason::culling_switched) continue;
          const SpaceState before = was[oracle.client_space(client).index];
          if (oracle.space_state(oracle.client_space(client)).drill && !before.drill) {
            ++switched_by_drill;
          } else if (before.broadcasting) {
            ++switched_by_count;
          } else {
            ++switched_by_setting;
          }
        }
        for (const EntityId e : oracle.entities()) ++rules[oracle.why(client, e).rule];
        const EntityId viewer = oracle.viewer(client);
        for (const EntityId e : *world.interest_set(client)) {
          if (oracle.depth(e) >= 3) ++deep_members;
          if (oracle.root(e) == oracle.root(viewer)) ++viewer_tree_members;
        }
        if (oracle.is_attached(viewer)) ++attached_origins;
        for (const EntityId o : oracle.origins(client)) {
          if (oracle.is_attached(o)) ++attached_origins;
        }
      }
      for (const SpaceId s : oracle.spaces()) {
        const SpaceState state = oracle.space_state(s);
        if (state.broadcasting) ++broadcasting;
        if (state.drill) ++drills;
        if (!state.culling && !state.broadcasting) ++off_spaces;
        const auto it = was_broadcasting.find(s.index);
        if (it != was_broadcasting.end() && it->second && !state.broadcasting && state.culling) ++to_culling;
        if (it != was_broadcasting.end() && !it->second && state.broadcasting) ++to_broadcast;
        was_broadcasting[s.index] = state.broadcasting;
      }
      for (const SpaceId s : oracle.spaces()) was[s.index] = oracle.space_state(s);
      run_refusals = mirror.refusals();
    });
    for (const auto& [kind, count] : run_refusals) refusals[kind] += count;
  }
  for (const SpawnReason reason :
       {SpawnReason::near, SpawnReason::always, SpawnReason::key, SpawnReason::owner, SpawnReason::origin,
        SpawnReason::attached, SpawnReason::teleport, SpawnReason::presenter, SpawnReason::unculled}) {
    EXPECT_GT(spawns[reason], 20u) << "spawn reason " << to_string(reason);
  }
  for (const DespawnReason reason :
       {DespawnReason::left, DespawnReason::destroyed, DespawnReason::key_removed,
        DespawnReason::space_changed, DespawnReason::culling_switched}) {
    EXPECT_GT(despawns[reason], 10u) << "despawn reason " << to_string(reason);
  }
  for (int rule = 0; rule <= static_cast<int>(Rule::out_of_range); ++rule) {
    EXPECT_GT(rules[static_cast<Rule>(rule)], 20u) << "rule " << to_string(static_cast<Rule>(rule));
  }
  EXPECT_GT(deep_members, 50u);
  EXPECT_GT(viewer_tree_members, 50u);
  EXPECT_GT(attached_origins, 20u);
  EXPECT_GT(broadcasting, 50u);
  EXPECT_GT(to_culling, 5u);
  EXPECT_GT(to_broadcast, 5u);
  EXPECT_GT(drills, 50u);
  EXPECT_GT(off_spaces, 50u);
  EXPECT_GT(switched_by_drill, 20u);
  EXPECT_GT(switched_by_count, 20u);
  EXPECT_GT(switched_by_setting, 20u);
  for (const char* kind : {"attach: child == parent",
                           "attach: cycle",
                           "attach: keyed child",
                           "attach: presenter child",
                           "attach: different spaces",
                           "attach: too deep",
                           "attach: handle",
                           "set_space: attached",
                           "set_space: handle",
                           "set_presenter: attached",
                           "key setter: attached",
                           "destroy_space: default space",
                           "destroy_space: not empty",
                           "destroy_space: handle",
                           "set_culling_drill: radii",
                           "teleport: position",
                           "create_entity: dead space",
                           "create_space: factors",
                           "create_space: radius",
                           "create_space: one radius",
                           "create_space: leave_radius",
                           "create_space: both forms",
                           "create_space: enter_radius"}) {
    EXPECT_GT(refusals[kind], 0u) << "refusal " << kind;
  }
}

// A culling space with broadcast threshold 3 and margin 1: it broadcasts while at most 3
// clients are in it, culls from the tick a 4th arrives, and broadcasts again only at 2.
TEST(OracleTest, BroadcastThresholdSwitchesWithItsMargin) {
  WorldDef def = default_world_def();
  def.enter_radius = 1.0f;
  def.leave_radius = 1.0f;
  MirroredWorld mirror(def);
  SpaceDef room;
  room.culling = Culling::on;
  room.broadcast_threshold = 3;
  room.broadcast_margin = 1;
  const SpaceId space = *mirror.create_space(room);
  std::vector<EntityId> viewers;
  for (int i = 0; i < 5; ++i) {
    viewers.push_back(*mirror.create_entity(entity_at(10.0f * static_cast<float>(i), 0.0f)));
    (void)mirror.create_client(viewers.back());
  }
  const int counts[] = {0, 1, 3, 4, 5, 3, 2, 3, 4, 1, 0};
  const bool expected[] = {true, true, true, false, false, false, true, true, false, true, true};
  int inside = 0;
  for (std::size_t t = 0; t < std::size(counts); ++t) {
    for (; inside < counts[t]; ++inside)
      (void)mirror.set_space(viewers[static_cast<std::size_t>(inside)], space);
    for (; inside > counts[t]; --inside) {
      (void)mirror.set_space(viewers[static_cast<std::size_t>(inside - 1)], mirror.world().default_space());
    }
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "") << "tick " << t;
    const SpaceState state = *mirror.world().space_state(space);
    EXPECT_EQ(state.broadcasting, expected[t]) << "tick " << t << " with " << counts[t] << " clients";
    EXPECT_EQ(state.culling, !expected[t]) << "tick " << t;
    EXPECT_EQ(state.clients, static_cast<std::uint32_t>(counts[t])) << "tick " << t;
  }
}

// A drill turns culling on in a space that culls nothing: members beyond the drill's leave
// radius go with reason culling_switched at that tick, those between its radii stay, and later
// ticks despawn with `left`.
TEST(OracleTest, DrillDespawnsOutOfRangeMembersAsCullingSwitched) {
  MirroredWorld mirror(default_world_def());
  const SpaceId space = *mirror.create_space(SpaceDef{});
  EntityDef def = entity_at(0.0f, 0.0f);
  def.space = space;
  const EntityId viewer = *mirror.create_entity(def);
  def.x = 2.5f;  // between the drill's radii: kept, by hysteresis
  const EntityId near = *mirror.create_entity(def);
  def.x = 50.0f;
  const EntityId far = *mirror.create_entity(def);
  const ClientId client = *mirror.create_client(viewer);
  (void)mirror.tick();
  ASSERT_EQ(mirror.world().stream(client)->spawns.size(), 2u);
  EXPECT_EQ(mirror.world().stream(client)->spawns[0].reason, SpawnReason::unculled);
  ASSERT_TRUE(mirror.set_culling_drill(space, 2.0f, 3.0f).ok());
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  const ClientStream stream = *mirror.world().stream(client);
  ASSERT_EQ(stream.despawns.size(), 1u);
  EXPECT_EQ(stream.despawns[0].entity, far);
  EXPECT_EQ(stream.despawns[0].reason, DespawnReason::culling_switched);
  EXPECT_EQ(mirror.world().why(client, near)->rule, Rule::within_leave);
  EXPECT_EQ(mirror.world().why(client, far)->rule, Rule::out_of_range);
  (void)mirror.set_position(near, 10.0f, 0.0f);
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  ASSERT_EQ(mirror.world().stream(client)->despawns.size(), 1u);
  EXPECT_EQ(mirror.world().stream(client)->despawns[0].reason, DespawnReason::left);
}

// A chain root <- a <- b spawns root, a, b (depth order, whatever the indices) and, once out of
// range, despawns b, a, root; the children spawn `attached`.
TEST(OracleTest, AttachedChainSpawnsByDepthAndDespawnsDeepestFirst) {
  MirroredWorld mirror(default_world_def());
  const EntityId viewer = *mirror.create_entity(entity_at(0.0f, 0.0f));
  const EntityId b = *mirror.create_entity(entity_at(90.0f, 0.0f));
  const EntityId a = *mirror.create_entity(entity_at(-90.0f, 0.0f));
  const EntityId root = *mirror.create_entity(entity_at(1.0f, 0.0f));
  ASSERT_TRUE(mirror.attach(a, root).ok());
  ASSERT_TRUE(mirror.attach(b, a).ok());
  const ClientId client = *mirror.create_client(viewer);
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  ClientStream stream = *mirror.world().stream(client);
  ASSERT_EQ(stream.spawns.size(), 3u);
  EXPECT_EQ(stream.spawns[0].entity, root);
  EXPECT_EQ(stream.spawns[0].reason, SpawnReason::near);
  EXPECT_EQ(stream.spawns[1].entity, a);
  EXPECT_EQ(stream.spawns[1].reason, SpawnReason::attached);
  EXPECT_EQ(stream.spawns[2].entity, b);
  (void)mirror.set_position(root, 40.0f, 0.0f);
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  stream = *mirror.world().stream(client);
  ASSERT_EQ(stream.despawns.size(), 3u);
  EXPECT_EQ(stream.despawns[0].entity, b);
  EXPECT_EQ(stream.despawns[1].entity, a);
  EXPECT_EQ(stream.despawns[2].entity, root);
  EXPECT_EQ(*mirror.world().holder_count(a), 0u);
}

// A destroyed child keeps its place below its parent in the despawn order: the client knew it
// attached, so it goes before the parent when both leave at one tick (stream.h: "an attachment
// always goes before its parent"), even though the parent has the smaller index.
TEST(OracleTest, DestroyedChildDespawnsBeforeItsParent) {
  MirroredWorld mirror(default_world_def());
  const EntityId viewer = *mirror.create_entity(entity_at(0.0f, 0.0f));
  const EntityId parent = *mirror.create_entity(entity_at(1.0f, 0.0f));  // index 1
  const EntityId child = *mirror.create_entity(entity_at(1.0f, 0.0f));   // index 2
  ASSERT_TRUE(mirror.attach(child, parent).ok());
  const ClientId client = *mirror.create_client(viewer);
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  ASSERT_TRUE(mirror.destroy_entity(child).ok());
  (void)mirror.set_position(parent, 50.0f, 0.0f);
  (void)mirror.tick();
  const ClientStream stream = *mirror.world().stream(client);
  ASSERT_EQ(stream.despawns.size(), 2u);
  EXPECT_EQ(stream.despawns[0].entity, child) << "the destroyed child must go first";
  EXPECT_EQ(stream.despawns[0].reason, DespawnReason::destroyed);
  EXPECT_EQ(stream.despawns[1].entity, parent);
  EXPECT_EQ(mirror.error(), "");
}

// space_state() reads what the last tick did (world.h: "What the space did at the last tick, and
// its entity count now"): a drill set, or a setting changed, since then does not show before the
// next tick.
TEST(OracleTest, SpaceStateBetweenTicksReadsTheLastTick) {
  MirroredWorld mirror(default_world_def());
  SpaceDef room;  // culling off, threshold 3: in broadcast mode, which reads only while culling is on
  room.broadcast_threshold = 3;
  const SpaceId space = *mirror.create_space(room);
  EntityDef def = entity_at(0.0f, 0.0f);
  def.space = space;
  (void)mirror.create_client(*mirror.create_entity(def));
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  const SpaceState before = *mirror.world().space_state(space);
  ASSERT_FALSE(before.culling);
  ASSERT_FALSE(before.broadcasting);
  ASSERT_FALSE(before.drill);
  ASSERT_TRUE(mirror.set_culling_drill(space, 1.0f, 1.0f).ok());
  EXPECT_FALSE(mirror.world().space_state(space)->drill) << "the drill takes effect at the next tick";
  ASSERT_TRUE(mirror.clear_culling_drill(space).ok());
  room.culling = Culling::on;
  ASSERT_TRUE(mirror.set_space_def(space, room).ok());
  EXPECT_FALSE(mirror.world().space_state(space)->broadcasting)
      << "the setting takes effect at the next tick";
  (void)mirror.tick();
  EXPECT_EQ(mirror.error(), "");
  EXPECT_TRUE(mirror.world().space_state(space)->broadcasting);
  EXPECT_EQ(mirror.state_error(), "");
}

// --- Sight: walls, look-ahead, holds and the visibility filter ---

void expect_sight_runs_match(TierMode tiers, bool hysteresis, bool keys, bool relevance, bool structure,
                             std::uint64_t first_seed, std::uint64_t seeds) {
  expect_random_runs_match(tiers, hysteresis, keys, relevance, first_seed, seeds, structure, true);
}

TEST(OracleTest, RandomRunsWithSightMatch) {
  expect_sight_runs_match(TierMode::none, true, false, false, false, 9000, 150);
}
TEST(OracleTest, RandomRunsWithSightAndOneRadiusMatch) {
  expect_sight_runs_match(TierMode::none, false, false, false, false, 9200, 60);
}
TEST(OracleTest, RandomRunsWithSightAndKeysMatch) {
  expect_sight_runs_match(TierMode::none, true, true, false, false, 9300, 80);
}
TEST(OracleTest, RandomRunsWithSightAndRelevanceMatch) {
  expect_sight_runs_match(TierMode::none, true, false, true, false, 9400, 100);
}
TEST(OracleTest, RandomRunsWithSightSpacesAndAttachmentsMatch) {
  expect_sight_runs_match(TierMode::none, true, false, false, true, 9500, 100);
}
TEST(OracleTest, RandomRunsWithSightKeysRelevanceSpacesAndCustomTiersMatch) {
  expect_sight_runs_match(TierMode::custom, true, true, true, true, 9600, 100);
}
TEST(OracleTest, RandomRunsWithSightKeysRelevanceSpacesAndPresetTiersMatch) {
  expect_sight_runs_match(TierMode::preset, true, true, true, true, 9700, 80);
}
TEST(OracleTest, RandomRunsWithSightRelevanceSpacesCustomTiersAndOneRadiusMatch) {
  expect_sight_runs_match(TierMode::custom, false, false, true, true, 9800, 60);
}

TEST(OracleTest, LongRunWithSightKeysRelevanceAndSpacesWithoutChurnMatches) {
  RandomRunDef def;
  def.seed = 9900;
  def.ticks = 400;
  def.churn = false;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.sight = true;
  std::string error;
  std::string question_error;
  std::uint64_t ticks = 0;
  run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
    error = mirror.error();
    if (question_error.empty()) question_error = mirror.question_error();
    ticks = mirror.oracle().tick_count();
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(question_error, "");
  EXPECT_EQ(ticks, def.ticks);
}

// Guards the generator: sight must hide entities (walls and the filter), hold members while they
// are not visible, admit entities through look-ahead only, despawn attached members with their
// hidden root, and make the World refuse every bad sight input.
TEST(OracleTest, RandomRunsWithSightReachEveryKindOfRecord) {
  BruteForceOracle::SightCounts total;
  std::uint64_t attached_hidden = 0;
  std::map<std::string, std::uint64_t> refusals;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.relevance = true;
    def.structure = true;
    def.sight = true;
    BruteForceOracle::SightCounts counts;
    std::map<std::string, std::uint64_t> run_refusals;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      counts = mirror.oracle().sight_counts();
      for (const ClientId client : mirror.world().clients()) {
        const ClientStream stream = *mirror.world().stream(client);
        for (const DespawnRecord& r : stream.despawns) {
          if (r.reason == DespawnReason::hidden && mirror.oracle().is_live(r.entity) &&
              mirror.oracle().is_attached(r.entity)) {
            ++attached_hidden;
          }
        }
      }
      run_refusals = mirror.refusals();
      ASSERT_EQ(mirror.error(), "") << "seed " << seed;
    });
    for (const auto& [kind, count] : run_refusals) refusals[kind] += count;
    total.hidden_despawns += counts.hidden_despawns;
    total.hidden_answers += counts.hidden_answers;
    total.held_unseen += counts.held_unseen;
    total.look_ahead_spawns += counts.look_ahead_spawns;
    total.look_ahead_keeps += counts.look_ahead_keeps;
    total.filter_refusals += counts.filter_refusals;
  }
  EXPECT_GT(total.hidden_despawns, 50u);
  EXPECT_GT(total.hidden_answers, 500u);
  EXPECT_GT(total.held_unseen, 200u);
  EXPECT_GT(total.look_ahead_spawns, 15u);
  EXPECT_GT(total.look_ahead_keeps, 20u);
  EXPECT_GT(total.filter_refusals, 400u);
  EXPECT_GT(attached_hidden, 3u);
  for (const char* kind : {"set_walls: coordinate", "set_walls: handle", "set_velocity: value",
                           "set_velocity: handle", "set_look_ahead: value", "set_look_ahead: handle"}) {
    EXPECT_GT(refusals[kind], 0u) << kind;
  }
  std::uint64_t hold_refusals = 0;
  for (const auto& [kind, count] : refusals) {
    if (kind.find("visibility_hold_ticks") != std::string::npos) hold_refusals += count;
  }
  EXPECT_GT(hold_refusals, 0u);
  std::printf(
      "sight over 40 seeds: %llu hidden despawns (%llu attached), %llu hidden answers, %llu held unseen, "
      "%llu look-ahead spawns, %llu look-ahead keeps, %llu filter refusals\n",
      static_cast<unsigned long long>(total.hidden_despawns),
      static_cast<unsigned long long>(attached_hidden), static_cast<unsigned long long>(total.hidden_answers),
      static_cast<unsigned long long>(total.held_unseen),
      static_cast<unsigned long long>(total.look_ahead_spawns),
      static_cast<unsigned long long>(total.look_ahead_keeps),
      static_cast<unsigned long long>(total.filter_refusals));
}

// A space made in the slot of a destroyed one starts without walls (world.h: "No walls (the
// default)"). Disabled: the World keeps the destroyed space's walls in the slot.
TEST(OracleTest, SpaceInAReusedSlotStartsWithoutWalls) {
  MirroredWorld mirror(default_world_def());
  SpaceDef room;
  room.culling = Culling::on;
  const SpaceId first = *mirror.create_space(room);
  const WallSegment wall{1.0f, -1.0f, 1.0f, 1.0f};
  ASSERT_TRUE(mirror.set_walls(first, std::span<const WallSegment>(&wall, 1)).ok());
  ASSERT_TRUE(mirror.destroy_space(first).ok());
  const SpaceId second = *mirror.create_space(room);
  ASSERT_EQ(second.index, first.index);
  EXPECT_EQ(mirror.world().walls(second)->size(), 0u);
  EXPECT_EQ(mirror.error(), "");
  // Nothing blocks the line from the viewer to the entity in the new space.
  EntityDef def = entity_at(0.0f, 0.0f);
  def.space = second;
  const EntityId viewer = *mirror.world().create_entity(def);
  def.x = 1.5f;
  const EntityId near = *mirror.world().create_entity(def);
  const ClientId client = *mirror.world().create_client(viewer);
  (void)mirror.world().tick();
  EXPECT_TRUE(*mirror.world().is_relevant_to(client, near)) << "the destroyed space's wall hides it";
}

// A wall between the viewer and an entity: the entity does not enter (why: hidden) until it
// looks ahead round the wall's end; once in, it is held for the space's hold while out of sight,
// then leaves `hidden`, with its attachment; the filter hides it too.
TEST(OracleTest, SightHidesHoldsAndLooksAhead) {
  MirroredWorld mirror(default_world_def());  // R 1.6
  SpaceDef def = *mirror.world().space_def(mirror.world().default_space());
  def.visibility_hold_ticks = 2;
  ASSERT_TRUE(mirror.set_space_def(mirror.world().default_space(), def).ok());
  const EntityId viewer = *mirror.create_entity(entity_at(0.0f, 0.0f));
  const EntityId target = *mirror.create_entity(entity_at(1.0f, 0.0f));
  const EntityId child = *mirror.create_entity(entity_at(1.0f, 0.0f));
  ASSERT_TRUE(mirror.attach(child, target).ok());
  const ClientId client = *mirror.create_client(viewer);
  const WallSegment wall{0.5f, -0.5f, 0.5f, 0.5f};
  ASSERT_TRUE(mirror.set_walls(mirror.world().default_space(), std::span<const WallSegment>(&wall, 1)).ok());
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  EXPECT_TRUE(mirror.world().stream(client)->spawns.empty());
  EXPECT_EQ(mirror.world().why(client, target)->rule, Rule::hidden);
  // Looking 1 s ahead at 2 units/s along z: (1, 2) is seen past the wall's end, though beyond R
  // (p + v * T serves sight only; p decides the range).
  ASSERT_TRUE(mirror.set_velocity(target, 0.0f, 2.0f).ok());
  ASSERT_TRUE(mirror.set_look_ahead(client, 1.0f).ok());
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  ASSERT_EQ(mirror.world().stream(client)->spawns.size(), 2u);
  EXPECT_EQ(mirror.world().stream(client)->spawns[0].entity, target);
  EXPECT_EQ(mirror.world().stream(client)->spawns[1].reason, SpawnReason::attached);
  ASSERT_TRUE(mirror.set_look_ahead(client, 0.0f).ok());
  for (int held = 0; held < 2; ++held) {  // out of sight, held for 2 ticks
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "");
    EXPECT_TRUE(mirror.world().stream(client)->despawns.empty());
    EXPECT_EQ(mirror.world().why(client, target)->rule, Rule::near);
  }
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  ClientStream stream = *mirror.world().stream(client);
  ASSERT_EQ(stream.despawns.size(), 2u);
  EXPECT_EQ(stream.despawns[0].entity, child);
  EXPECT_EQ(stream.despawns[0].reason, DespawnReason::hidden);
  EXPECT_EQ(stream.despawns[1].reason, DespawnReason::hidden);
  // No walls, a filter that hides everything: hidden again.
  ASSERT_TRUE(mirror.set_walls(mirror.world().default_space(), std::span<const WallSegment>()).ok());
  (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  EXPECT_EQ(mirror.world().stream(client)->spawns.size(), 2u);
  mirror.set_visibility_filter([](void*, ClientId, EntityId) { return false; }, nullptr);
  for (int tick = 0; tick < 3; ++tick) (void)mirror.tick();
  ASSERT_EQ(mirror.error(), "");
  EXPECT_EQ(mirror.world().stream(client)->despawns.size(), 2u);
  EXPECT_EQ(mirror.world().why(client, target)->rule, Rule::hidden);
  EXPECT_EQ(mirror.question_error(), "");
}

}  // namespace
}  // namespace sightline::testing
