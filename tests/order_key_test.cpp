// External ids and the order key (EntityDef::external_id, WorldDef::order_key): refusals and
// lookups by hand, the brute-force oracle on random runs, and the property the key exists for:
// two Worlds holding the same entities in other slots give the same sets and records, up to the
// handles.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mirrored_world.h"
#include "named_world.h"
#include "random_run.h"
#include "rng.h"
#include "sightline/world.h"

namespace sightline::testing {
namespace {

WorldDef external_def() {
  WorldDef def = default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 12.0f;
  def.order_key = OrderKey::external;
  return def;
}

EntityDef named(std::uint64_t external_id, float x = 0.0f, float z = 0.0f) {
  EntityDef def;
  def.x = x;
  def.z = z;
  def.external_id = external_id;
  return def;
}

TEST(OrderKey, ExternalIdsAreReadBackFoundAndFreedWithTheirEntity) {
  World world = std::move(World::create(default_world_def()).value());
  const EntityId plain = *world.create_entity(EntityDef{});
  const EntityId a = *world.create_entity(named(0xfeedface00000001ull));
  EXPECT_EQ(*world.external_id(plain), 0u);
  EXPECT_EQ(*world.external_id(a), 0xfeedface00000001ull);
  EXPECT_EQ(world.find_external(0xfeedface00000001ull), a);
  EXPECT_TRUE(world.find_external(0).is_null());
  EXPECT_TRUE(world.find_external(2).is_null());

  const Result<EntityId> twice = world.create_entity(named(0xfeedface00000001ull, 5.0f));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), ErrorCode::invalid_argument);
  EXPECT_NE(twice.status().message().find("external_id " + std::to_string(0xfeedface00000001ull) +
                                          " is held by entity " + std::to_string(a.index) + ":" +
                                          std::to_string(a.generation)),
            std::string::npos)
      << twice.status().message();
  EXPECT_EQ(world.entity_count(), 2u);

  // Withdrawn, its id is free at once: the entity comes back under another handle.
  ASSERT_TRUE(world.withdraw_entity(a).ok());
  EXPECT_TRUE(world.find_external(0xfeedface00000001ull).is_null());
  EXPECT_EQ(*world.external_id(a), 0xfeedface00000001ull);  // named until its slot comes back
  (void)world.tick();
  (void)world.tick();
  (void)*world.create_entity(EntityDef{});  // takes a's slot
  EXPECT_EQ(world.external_id(a).status().code(), ErrorCode::stale_handle);
  const EntityId back = *world.create_entity(named(0xfeedface00000001ull));
  EXPECT_NE(back, a);
  EXPECT_EQ(world.find_external(0xfeedface00000001ull), back);
}

TEST(OrderKey, TheExternalKeyNeedsAnIdOnEveryEntityAndAValidKey) {
  World world = std::move(World::create(external_def()).value());
  const Result<EntityId> none = world.create_entity(EntityDef{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::invalid_argument);
  EXPECT_NE(none.status().message().find("external_id is 0"), std::string::npos) << none.status().message();
  EXPECT_EQ(world.entity_count(), 0u);

  WorldDef bad = default_world_def();
  bad.order_key = static_cast<OrderKey>(7);
  const Result<World> refused = World::create(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::invalid_def);
  EXPECT_NE(refused.status().message().find("order_key is 7"), std::string::npos)
      << refused.status().message();
}

TEST(OrderKey, AnEntityThatExistedElsewhereSpawnsAsNotCreated) {
  World world = std::move(World::create(external_def()).value());
  const ClientId client = *world.create_client(*world.create_entity(named(1)));
  EntityDef copy = named(2, 3.0f);
  copy.created = false;
  const EntityId arrived = *world.create_entity(copy);
  const EntityId born = *world.create_entity(named(3, 4.0f));
  (void)world.tick();
  std::map<std::uint32_t, bool> created;  // by slot
  const ClientStream stream = *world.stream(client);
  for (const SpawnRecord& s : stream.spawns) created[s.entity.index] = s.created;
  EXPECT_FALSE(created.at(arrived.index));
  EXPECT_TRUE(created.at(born.index));
}

// The crowd cap's ties: two entities at the same distance, one place left. The external ids
// decide, whichever slot each landed in; by slot, the lower slot wins.
TEST(OrderKey, TheCrowdCapBreaksATieByExternalId) {
  for (const bool reversed : {false, true}) {
    WorldDef def = external_def();
    def.crowd_cap = 1;
    World world = std::move(World::create(def).value());
    const ClientId client = *world.create_client(*world.create_entity(named(100)));
    const EntityDef first = named(reversed ? 7 : 5, 3.0f);
    const EntityDef second = named(reversed ? 5 : 7, -3.0f);
    (void)*world.create_entity(first);
    (void)*world.create_entity(second);
    (void)world.tick();
    std::vector<std::uint64_t> held;
    for (const EntityId e : *world.interest_set(client)) held.push_back(*world.external_id(e));
    EXPECT_EQ(held, (std::vector<std::uint64_t>{5})) << "reversed " << reversed;
  }
}

// The oracle on random runs with external ids, tiers and key rates (the stagger), the crowd cap
// (its ties), withdrawals and handed-back entities.
TEST(OrderKey, RandomRunsWithExternalIdsMatch) {
  std::map<std::string, std::uint64_t> refusals;
  for (std::uint64_t seed = 30000; seed < 30000 + seeds_for_build(120); ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.external_ids = true;
    def.withdraw = true;
    def.tiers = seed % 2 == 0 ? TierMode::custom : TierMode::preset;
    def.crowd_cap = seed % 3 != 0;
    def.keys = seed % 4 == 0;
    def.relevance = seed % 5 == 0;
    def.structure = seed % 7 == 0;
    std::string error;
    std::uint64_t ticks = 0;
    run_random(def, [&](MirroredWorld& mirror, const TickStats&) {
      error = mirror.error() + mirror.question_error();
      ticks = mirror.oracle().tick_count();
      for (const auto& [kind, count] : mirror.refusals()) refusals[kind] = std::max(refusals[kind], count);
    });
    ASSERT_EQ(error, "") << "seed " << seed;
    ASSERT_EQ(ticks, def.ticks) << "seed " << seed;
  }
  EXPECT_GT(refusals["create_entity: external id held"], 0u);
  EXPECT_GT(refusals["create_entity: no external id"], 0u);
}

// --- Slot independence --------------------------------------------------------------------

// How many ticks of one seeded scene differ between a World that creates entities in order and
// one that creates them in another order, on other slots (0 when none does).
std::uint32_t differing_ticks(OrderKey key, std::uint64_t seed) {
  scenarios::Rng rng(seed);
  WorldDef def = external_def();
  def.order_key = key;
  def.crowd_cap = 1 + rng.below(4);
  def.tiers = {{0.3f, 1}, {0.6f, 2}, {1.0f, 3}};
  NamedWorld a(def);
  NamedWorld b(def);
  // Entities on a lattice of step 1 within +-6: many at the same distance from a viewer.
  struct Spot {
    std::uint64_t id;
    float x, z;
  };
  std::vector<Spot> spots;
  for (std::uint64_t i = 1; i <= 60; ++i) {
    spots.push_back({i * 0x9e3779b97f4a7c15ull | 1, static_cast<float>(static_cast<int>(rng.below(13)) - 6),
                     static_cast<float>(static_cast<int>(rng.below(13)) - 6)});
  }
  for (std::size_t i = 0; i < 7; ++i) b.decoy();
  // The decoys' slots are free again: b's entities land in other slots. (Both tick: the
  // schedule's stagger counts ticks, which a cluster numbers alike.)
  (void)a.tick();
  (void)b.tick();
  for (const Spot& s : spots) a.create(s.id, s.x, s.z);
  std::vector<Spot> shuffled = spots;
  for (std::size_t i = shuffled.size(); i > 1; --i)
    std::swap(shuffled[i - 1], shuffled[rng.below(static_cast<std::uint32_t>(i))]);
  for (const Spot& s : shuffled) b.create(s.id, s.x, s.z);
  for (std::size_t v = 0; v < 6; ++v) {
    const std::uint64_t viewer = spots[v * 7].id;
    EXPECT_TRUE(a.world().create_client(a.of(viewer)).ok());
    EXPECT_TRUE(b.world().create_client(b.of(viewer)).ok());
  }
  std::uint32_t differing = 0;
  std::uint64_t next_id = 1000;
  for (std::uint32_t t = 0; t < 30; ++t) {
    // Moves to lattice points, some removals (kept off the viewers) and arrivals.
    for (std::uint32_t m = 0; m < 8; ++m) {
      const Spot& s = spots[rng.below(static_cast<std::uint32_t>(spots.size()))];
      const float x = static_cast<float>(static_cast<int>(rng.below(13)) - 6);
      const float z = static_cast<float>(static_cast<int>(rng.below(13)) - 6);
      if (a.of(s.id).is_null()) continue;
      EXPECT_TRUE(a.world().set_position(a.of(s.id), x, z).ok());
      EXPECT_TRUE(b.world().set_position(b.of(s.id), x, z).ok());
    }
    if (rng.below(3) == 0) {
      const Spot& s = spots[50 + rng.below(10)];
      if (!a.of(s.id).is_null()) {
        const bool withdraw = rng.below(2) == 0;
        a.remove(s.id, withdraw);
        b.remove(s.id, withdraw);
      }
    }
    if (rng.below(3) == 0) {
      // In b, a decoy first: the newcomer takes another slot than in a.
      const float x = static_cast<float>(static_cast<int>(rng.below(13)) - 6);
      b.decoy();
      a.create(++next_id, x, 0.0f, false);
      b.create(next_id, x, 0.0f, false);
    }
    if (a.tick() != b.tick()) ++differing;
  }
  return differing;
}

TEST(OrderKey, WorldsWithTheSameEntitiesInOtherSlotsGiveTheSameSetsAndRecords) {
  std::uint32_t slot_differs = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_EQ(differing_ticks(OrderKey::external, seed), 0u) << "seed " << seed;
    slot_differs += differing_ticks(OrderKey::slot, seed) != 0 ? 1 : 0;
  }
  // The control: by slot, the same scenes do differ, so the comparison can see a difference.
  EXPECT_GT(slot_differs, 10u);
}

}  // namespace
}  // namespace sightline::testing
