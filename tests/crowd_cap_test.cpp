// The crowd cap (WorldDef::crowd_cap, rule l): the nearest by the documented rank are held, the
// rest of a crowd left out; checked by hand on small worlds and against the brute-force oracle on
// random runs with every other feature.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "mirrored_world.h"
#include "random_run.h"
#include "rng.h"
#include "sightline/limits.h"
#include "sightline/world.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

/// One client viewing from the origin, entities along the x axis, under a crowd cap.
struct Crowd : SmallWorld {
  explicit Crowd(std::uint32_t cap, float enter = 10.0f, float leave = 12.5f)
      : SmallWorld(capped_def(cap, enter, leave)),
        viewer(make(0.0f, 0.0f)),
        client(SmallWorld::client(viewer)) {}
  static WorldDef capped_def(std::uint32_t cap, float enter, float leave) {
    WorldDef def = small_world_def(enter, leave);
    def.crowd_cap = cap;
    return def;
  }
  EntityId add(float x) { return make(x, 0.0f); }
  std::vector<EntityId> spawned() const {
    std::vector<EntityId> out;
    for (const auto& [entity, reason] : spawns(client)) out.push_back(entity);
    return out;
  }
  std::vector<std::pair<EntityId, DespawnReason>> despawned() const { return despawns(client); }

  EntityId viewer;
  ClientId client;  ///< The one client (the name hides SmallWorld::client(), which made it).
};

TEST(CrowdCap, HoldsTheNearestAndSaysWhyTheRestAreLeftOut) {
  Crowd c(3);
  std::vector<EntityId> e;
  for (int i = 0; i < 8; ++i) e.push_back(c.add(9.0f - static_cast<float>(i)));  // 9, 8, ..., 2
  const TickStats stats = c.world.tick();
  EXPECT_EQ(stats.members, 3u);
  EXPECT_EQ(c.spawned(), (std::vector<EntityId>{e[5], e[6], e[7]}));  // at 4, 3 and 2
  const Why why = *c.world.why(c.client, e[4]);
  EXPECT_FALSE(why.held);
  EXPECT_EQ(why.rule, Rule::crowded);
  EXPECT_EQ(c.world.why(c.client, e[7])->rule, Rule::near);
  EXPECT_EQ(c.world.crowd_cap(), 3u);
}

TEST(CrowdCap, AMemberKeepsItsPlaceUntilANewcomerIsNearerByTheHysteresisRatio) {
  Crowd c(1);  // R = 10, L = 12.5: a member at d ranks as a newcomer at d * 10 / 12.5
  const EntityId member = c.add(9.0f);
  c.world.tick();
  ASSERT_TRUE(*c.world.is_relevant_to(c.client, member));
  const EntityId newcomer = c.add(7.5f);  // 7.5 / 10 = 0.75 > 9 / 12.5 = 0.72: the member stays
  c.world.tick();
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, member));
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, newcomer));
  EXPECT_EQ(c.world.why(c.client, newcomer)->rule, Rule::crowded);
  ASSERT_TRUE(c.world.set_position(newcomer, 7.0f, 0.0f).ok());  // 0.70 < 0.72: it displaces it
  c.world.tick();
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, member));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, newcomer));
  const auto gone = c.despawned();
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].first, member);
  EXPECT_EQ(gone[0].second, DespawnReason::left);
}

TEST(CrowdCap, WhatOtherRulesHoldNeitherCountsNorIsLimited) {
  Crowd c(1);
  const EntityId owned = c.add(500.0f);
  ASSERT_TRUE(c.world.set_owner(owned, c.client).ok());
  const EntityId boss = c.add(-400.0f);
  ASSERT_TRUE(c.world.set_always_relevant(boss, true).ok());
  const EntityId near = c.add(2.0f);
  const EntityId far = c.add(3.0f);
  const TickStats stats = c.world.tick();
  EXPECT_EQ(stats.members, 3u);
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, owned));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, boss));
  EXPECT_TRUE(*c.world.is_relevant_to(c.client, near));
  EXPECT_FALSE(*c.world.is_relevant_to(c.client, far));
}

TEST(CrowdCap, LoweringTheCapLetsTheFarthestGoAndZeroLiftsIt) {
  Crowd c(0);
  std::vector<EntityId> e;
  for (int i = 1; i <= 6; ++i) e.push_back(c.add(static_cast<float>(i)));
  EXPECT_EQ(c.world.tick().members, 6u);
  c.world.set_crowd_cap(2);
  const TickStats lowered = c.world.tick();
  EXPECT_EQ(lowered.members, 2u);
  EXPECT_EQ(lowered.despawns, 4u);
  for (const auto& [entity, reason] : c.despawned()) EXPECT_EQ(reason, DespawnReason::left);
  const auto gone = c.despawned();
  EXPECT_TRUE(std::is_sorted(gone.begin(), gone.end(),
                             [](const auto& a, const auto& b) { return a.first.index < b.first.index; }));
  c.world.set_crowd_cap(0);
  EXPECT_EQ(c.world.tick().members, 6u);
}

void expect_capped_runs_match(RandomRunDef base, std::uint64_t first_seed, std::uint64_t seeds) {
  std::uint64_t crowded_runs = 0;
  seeds = seeds_for_build(seeds);
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    RandomRunDef def = base;
    def.seed = seed;
    def.crowd_cap = true;
    std::string error;
    std::uint64_t ticks = 0;
    std::uint64_t crowded = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      // The records, then is_relevant_to, why and holder_count after every tick.
      error = mirror.error() + mirror.question_error();
      ticks = mirror.oracle().tick_count();
      crowded = mirror.oracle().crowded_total();
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(ticks, def.ticks) << "seed " << seed;
    crowded_runs += crowded > 0 ? 1 : 0;
  }
  EXPECT_GT(crowded_runs, seeds / 3) << "the cap must bite in many runs";
}

// An attached entity whose new root the cap leaves out goes as its root would: `left`, as the
// docs say and why() answers `crowded`, also where sight applies (a filter set), which once made
// it `hidden`.
TEST(CrowdCap, AChildOfARootTheCapLeavesOutGoesLeftAlsoWhereSightApplies) {
  Crowd c(2, 5.0f, 6.25f);
  c.world.set_visibility_filter([](void*, ClientId, EntityId) { return true; }, nullptr);
  c.make(1.0f, 0.0f);
  c.make(0.0f, 1.0f);
  const EntityId horse = c.make(3.0f, 0.0f);
  const EntityId sword = c.make(50.0f, 50.0f);
  ASSERT_TRUE(c.world.attach(sword, c.viewer).ok());
  c.world.tick();
  ASSERT_TRUE(*c.world.is_relevant_to(c.client, sword));
  ASSERT_FALSE(*c.world.is_relevant_to(c.client, horse));
  ASSERT_TRUE(c.world.attach(sword, horse).ok());
  c.world.tick();
  EXPECT_EQ(c.despawned(), (std::vector<std::pair<EntityId, DespawnReason>>{{sword, DespawnReason::left}}));
  EXPECT_EQ(c.world.why(c.client, sword)->rule, Rule::crowded);
}

TEST(CrowdCap, RandomRunsMatchTheOracle) { expect_capped_runs_match({}, 31000, 150); }

TEST(CrowdCap, RandomRunsWithOneRadiusAndTiersMatchTheOracle) {
  RandomRunDef def;
  def.hysteresis = false;
  def.tiers = TierMode::preset;
  expect_capped_runs_match(def, 32000, 80);
}

TEST(CrowdCap, RandomRunsWithKeysOwnersOriginsAndBoundsMatchTheOracle) {
  RandomRunDef def;
  def.keys = true;
  def.relevance = true;
  expect_capped_runs_match(def, 33000, 100);
}

TEST(CrowdCap, RandomRunsWithSpacesAttachmentsAndSightMatchTheOracle) {
  RandomRunDef def;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.sight = true;
  expect_capped_runs_match(def, 34000, 100);
}

TEST(CrowdCap, RandomRunsOnThreadsMatchTheOracle) {
  RandomRunDef def;
  def.relevance = true;
  def.threads = 3;
  expect_capped_runs_match(def, 35000, 40);
}

// A dense crowd: `entities` walking nowhere in a 2 x 2 square (all within R = 50 of each other,
// one grid cell), the first `clients` of them viewers, under `cap`.
struct Spot {
  Spot(std::uint32_t entities, std::uint32_t clients, std::uint32_t cap) : rng(5) {
    WorldDef def = default_world_def();
    def.enter_radius = 50.0f;
    def.leave_radius = 62.5f;
    def.crowd_cap = cap;
    world.emplace(std::move(World::create(def).value()));
    for (std::uint32_t i = 0; i < entities; ++i) {
      ids.push_back(*world->create_entity({rng.uniform(0.0f, 2.0f), rng.uniform(0.0f, 2.0f)}));
      if (i < clients) {
        EXPECT_TRUE(world->create_client(ids.back()).ok());
      }
    }
  }
  // Every entity sways by up to 0.02 on each axis, then a tick.
  TickStats step() {
    for (const EntityId e : ids) {
      const Position at = *world->position(e);
      EXPECT_TRUE(
          world->set_position(e, at.x + rng.uniform(-0.02f, 0.02f), at.z + rng.uniform(-0.02f, 0.02f)).ok());
    }
    return world->tick();
  }
  scenarios::Rng rng;
  std::optional<World> world;
  std::vector<EntityId> ids;
};

TEST(CrowdCap, ADenseCrowdCostsAboutTheCapNotTheCrowd) {
  // Uncapped, each client reads the whole crowd: the crowd stands in one grid cell.
  Spot uncapped(4000, 100, 0);
  EXPECT_EQ(uncapped.world->tick().cell_candidates, 100u * 4000u);
  Spot capped(4000, 100, 16);
  // From empty sets the scan widens from the finest sub-cell until the cap is full.
  const TickStats first = capped.world->tick();
  EXPECT_EQ(first.members, 100u * 16u);
  EXPECT_LT(first.cell_candidates, 100u * 4000u / 8);
  // Holding its cap, a client scans only as far as a newcomer could still rank ahead.
  for (int t = 0; t < 5; ++t) {
    const TickStats steady = capped.step();
    EXPECT_EQ(steady.members, 100u * 16u);
    EXPECT_LT(steady.cell_candidates, 100u * 16u * 16u) << "tick " << t;
  }
}

// Dense crowds against the oracle: blobs of a few hundred to eight hundred entities, more than a
// grid cell's CrowdIndex::kDenseCell, with enough clients in the first that the capped scan reads
// sub-cells and widens from the finest. Some blobs stand on a lattice of a few points or half of them on one
// point, so ranks tie and the index decides; sparse entities and clients stand around them; between ticks
// entities sway, some jump into or out of a blob, and the cap changes now and then.
void expect_dense_run_matches(std::uint64_t seed) {
  scenarios::Rng rng(seed * 0x9e3779b97f4a7c15ull + 3);
  WorldDef def = default_world_def();
  const float radii[] = {1.0f, 6.0f, 50.0f};
  const float factors[] = {1.0f, 1.25f, 1.5f};
  const std::uint32_t caps[] = {1, 2, 5, 8, 64};
  def.enter_radius = radii[rng.below(3)];
  def.leave_radius = def.enter_radius * factors[rng.below(3)];
  def.crowd_cap = caps[rng.below(5)];
  def.threads = 1 + rng.below(2);
  def.thread_min_work = 0;
  const float r = def.enter_radius;
  MirroredWorld mirror(def);
  struct Blob {
    float x, z, side;
    std::uint32_t shape;  // 0: uniform, 1: a 5 x 5 lattice, 2: half on one point
  };
  std::vector<Blob> blobs;
  const float sides[] = {0.001f, 0.05f, 0.5f, 2.0f};
  for (std::uint32_t b = 0, n = 1 + rng.below(3); b < n; ++b) {
    blobs.push_back({rng.uniform(-3.0f * r, 3.0f * r), rng.uniform(-3.0f * r, 3.0f * r),
                     r * sides[rng.below(4)], rng.below(3)});
  }
  auto place = [&](const Blob& b) -> Position {
    if (b.shape == 1) {
      return {b.x + b.side * static_cast<float>(rng.below(5)) / 4.0f,
              b.z + b.side * static_cast<float>(rng.below(5)) / 4.0f};
    }
    if (b.shape == 2 && rng.below(2) == 0) return {b.x, b.z};
    return {b.x + rng.uniform(0.0f, b.side), b.z + rng.uniform(0.0f, b.side)};
  };
  std::vector<EntityId> ids;
  std::uint32_t first_blob = 0;  // entities of blobs[0]
  for (const Blob& b : blobs) {
    if (first_blob == 0 && !ids.empty()) first_blob = static_cast<std::uint32_t>(ids.size());
    for (std::uint32_t i = 0, n = 300 + rng.below(500); i < n; ++i) {
      const Position at = place(b);
      ids.push_back(*mirror.create_entity({at.x, at.z}));
    }
  }
  for (std::uint32_t i = 0; i < 40; ++i) {
    ids.push_back(
        *mirror.create_entity({rng.uniform(-6.0f * r, 6.0f * r), rng.uniform(-6.0f * r, 6.0f * r)}));
  }
  const auto in_blobs = static_cast<std::uint32_t>(ids.size()) - 40;
  std::vector<ClientId> clients;
  if (first_blob == 0) first_blob = in_blobs;
  for (std::uint32_t c = 0, n = 19 + rng.below(12); c < n; ++c) {
    // The first 16 in the first blob (CrowdIndex::kMinScanners: its cells get sub-cells), then
    // anywhere in a blob, the last three among the sparse ones.
    const std::uint32_t at = c < 16      ? rng.below(first_blob)
                             : c + 3 < n ? rng.below(in_blobs)
                                         : static_cast<std::uint32_t>(ids.size()) - 1 - (n - 1 - c);
    clients.push_back(*mirror.create_client(ids[at]));
  }
  // Half the runs: area keys on a third of the crowd, which only some clients subscribe to (the
  // others' scans find entities they may not hold, and widen past them), and a second origin in
  // a blob for some clients.
  if (rng.below(2) == 0) {
    for (std::uint32_t i = 0; i < in_blobs; ++i) {
      if (rng.below(3) == 0) {
        EXPECT_TRUE(mirror.set_area_interest_key(ids[i], 1 + rng.below(2)).ok());
      }
    }
    for (const ClientId c : clients) {
      if (rng.below(2) == 0) {
        const KeySubscription keys[] = {{1}};
        EXPECT_TRUE(mirror.set_area_subscriptions(c, keys).ok());
      }
      if (rng.below(3) == 0) (void)mirror.add_origin(c, ids[rng.below(in_blobs)]);
    }
  }
  std::uint64_t crowded = 0;
  for (std::uint32_t t = 0; t < 8; ++t) {
    if (t > 0) {
      for (const EntityId e : ids) {
        const std::uint32_t roll = rng.below(100);
        const Position at = *mirror.world().position(e);
        if (roll < 30) {
          const float sway = 0.01f * r;
          (void)mirror.set_position(e, at.x + rng.uniform(-sway, sway), at.z + rng.uniform(-sway, sway));
        } else if (roll < 32) {
          const Position to = place(blobs[rng.below(static_cast<std::uint32_t>(blobs.size()))]);
          (void)mirror.set_position(e, to.x, to.z);
        } else if (roll < 33) {
          (void)mirror.set_position(e, rng.uniform(-6.0f * r, 6.0f * r), rng.uniform(-6.0f * r, 6.0f * r));
        }
      }
      if (rng.below(4) == 0) mirror.set_crowd_cap(caps[rng.below(5)]);
    }
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "") << "seed " << seed << ", tick " << t;
    ASSERT_EQ(mirror.question_error(), "") << "seed " << seed << ", tick " << t;
    crowded = mirror.oracle().crowded_total();
  }
  EXPECT_GT(crowded, 0u) << "seed " << seed << ": the cap must bite";
}

TEST(CrowdCap, DenseCrowdsMatchTheOracle) {
  for (std::uint64_t seed = 1; seed <= seeds_for_build(12); ++seed) expect_dense_run_matches(seed);
}

// A dense crowd in the grid's corner cell, with an outlier clamped into the same cell: the grid
// keeps to the bulk's box (1,024 entities or more), so the outlier at (1e15, 1e15) lands in the
// cell of the blob that stands at the bulk's top corner, and that cell's sub-cells span the
// outlier too. 16 clients stand in the blob (the cell gets sub-cells), one views from the outlier
// (with two more entities on its point, and a cap that bites there too), one from a second outlier
// at (-1e15, -1e15), a few among the sparse ones. With `large`, sparse entities fill the world to
// 131,072 slots (Grid::partition_min_slots): the grid then fills only the cells the clients'
// scans reach, and a second dense blob stands where no client's scan reaches (a dense cell left
// unfilled, which the crowd index must not read).
void expect_outlier_crowd_matches(std::uint64_t seed, bool large) {
  scenarios::Rng rng(seed * 0x9e3779b97f4a7c15ull + 11);
  WorldDef def = default_world_def();
  const float factors[] = {1.0f, 1.25f, 1.5f};
  const std::uint32_t caps[] = {1, 2, 5, 64};
  def.enter_radius = 6.0f;
  def.leave_radius = def.enter_radius * factors[rng.below(3)];
  def.crowd_cap = caps[rng.below(4)];
  def.threads = 1 + rng.below(2);
  def.thread_min_work = 0;
  const float r = def.enter_radius;
  MirroredWorld mirror(def);
  const float reach = large ? 200.0f * r : 6.0f * r;  // the sparse entities stand in [-reach, reach]^2
  const float sides[] = {0.0f, 0.001f, 0.05f, 0.5f};
  const float side = r * sides[rng.below(4)];
  // The blob's corner is the bulk's: it lies in the grid's last cell on both axes.
  auto in_blob = [&] {
    return Position{reach + side * rng.uniform(0.0f, 1.0f), reach + side * rng.uniform(0.0f, 1.0f)};
  };
  std::vector<EntityId> ids;
  const std::uint32_t blob = 300 + rng.below(400);
  for (std::uint32_t i = 0; i < blob; ++i) {
    const Position at = in_blob();
    ids.push_back(*mirror.create_entity({at.x, at.z}));
  }
  const EntityId outlier = *mirror.create_entity({kMaxCoordinate, kMaxCoordinate});
  for (int i = 0; i < 2; ++i) ids.push_back(*mirror.create_entity({kMaxCoordinate, kMaxCoordinate}));
  const EntityId far_negative = *mirror.create_entity({-kMaxCoordinate, -kMaxCoordinate});
  if (large) {
    // Away from every client: a dense cell that no scan reaches.
    for (std::uint32_t i = 0; i < 400; ++i) {
      ids.push_back(*mirror.create_entity(
          {-0.5f * reach + rng.uniform(0.0f, 0.001f * r), -0.5f * reach + rng.uniform(0.0f, 0.001f * r)}));
    }
  }
  const std::uint32_t sparse_first = static_cast<std::uint32_t>(ids.size());
  const std::uint32_t total = large ? (1u << 17) : 1100;
  std::vector<EntityDef> sparse(total - 2 - ids.size() - 20);
  for (EntityDef& e : sparse) {
    e.x = rng.uniform(-reach, reach);
    e.z = rng.uniform(-reach, reach);
  }
  for (const EntityId e : mirror.create_entities(sparse)) ids.push_back(e);
  // Sparse entities near the blob, which its clients' scans reach.
  for (std::uint32_t i = 0; i < 20; ++i) {
    ids.push_back(
        *mirror.create_entity({reach - rng.uniform(0.0f, 2.0f * r), reach - rng.uniform(0.0f, 2.0f * r)}));
  }
  std::vector<ClientId> clients;
  for (std::uint32_t c = 0; c < 16; ++c) clients.push_back(*mirror.create_client(ids[rng.below(blob)]));
  clients.push_back(*mirror.create_client(outlier));
  clients.push_back(*mirror.create_client(far_negative));
  for (std::uint32_t c = 0; c < 3; ++c) {
    clients.push_back(*mirror.create_client(ids[ids.size() - 1 - c]));
  }
  std::uint64_t crowded = 0;
  // Each tick of the large world costs a second in the oracle and the questions: four there.
  for (std::uint32_t t = 0, ticks = large ? 4 : 6; t < ticks; ++t) {
    if (t > 0) {
      // The blob sways, some of it jumps to the sparse ones' corner and back, some sparse
      // entities move; the outlier comes to the blob for ticks 2 and 3.
      for (std::uint32_t i = 0; i < blob; ++i) {
        const std::uint32_t roll = rng.below(100);
        const Position at = *mirror.world().position(ids[i]);
        if (roll < 40) {
          const float sway = 0.01f * r;
          (void)mirror.set_position(ids[i], at.x + rng.uniform(-sway, sway), at.z + rng.uniform(-sway, sway));
        } else if (roll < 43) {
          const Position to = roll == 40 ? Position{reach - rng.uniform(0.0f, 2.0f * r), reach} : in_blob();
          (void)mirror.set_position(ids[i], to.x, to.z);
        }
      }
      for (std::uint32_t i = 0; i < 50; ++i) {
        const EntityId e =
            ids[sparse_first + rng.below(static_cast<std::uint32_t>(ids.size()) - sparse_first)];
        (void)mirror.set_position(e, rng.uniform(-reach, reach), rng.uniform(-reach, reach));
      }
      const Position home = t == 2 || t == 3 ? in_blob() : Position{kMaxCoordinate, kMaxCoordinate};
      (void)mirror.set_position(outlier, home.x, home.z);
      if (rng.below(3) == 0) mirror.set_crowd_cap(caps[rng.below(4)]);
    }
    (void)mirror.tick();
    ASSERT_EQ(mirror.error(), "") << "seed " << seed << ", large " << large << ", tick " << t;
    ASSERT_EQ(mirror.question_error(), "") << "seed " << seed << ", large " << large << ", tick " << t;
    crowded = mirror.oracle().crowded_total();
  }
  EXPECT_GT(crowded, 0u) << "seed " << seed << ": the cap must bite";
}

TEST(CrowdCap, ADenseCrowdWithAnOutlierInItsCellMatchesTheOracle) {
  for (std::uint64_t seed = 1; seed <= seeds_for_build(6); ++seed) expect_outlier_crowd_matches(seed, false);
}

TEST(CrowdCap, ADenseCrowdInALargeWorldFilledOnlyWhereScannedMatchesTheOracle) {
  for (std::uint64_t seed = 1; seed <= seeds_for_build(1); ++seed) expect_outlier_crowd_matches(seed, true);
}

}  // namespace
}  // namespace sightline::testing
