// Handles are values: null and stale handles are refused by every call, reused slots get a new
// generation, destroyed entities despawn with reason `destroyed`, viewers are protected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "random_run.h"
#include "sightline/world.h"
#include "small_world.h"

namespace sightline {
namespace {

using testing::MirroredWorld;
using testing::RandomRunDef;
using testing::TierMode;

using testing::SmallWorld;
using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

// Every call that takes an entity handle refuses `entity` with `code`.
void expect_entity_refused(World& world, EntityId entity, ErrorCode code, ClientId some_client) {
  EXPECT_FALSE(world.is_valid(entity));
  EXPECT_EQ(world.destroy_entity(entity).code(), code);
  EXPECT_EQ(world.set_position(entity, 1.0f, 1.0f).code(), code);
  const EntityId batch[] = {entity};
  const float coordinate[] = {1.0f};
  EXPECT_EQ(world.set_positions(batch, coordinate, coordinate).code(), code);
  EXPECT_EQ(world.set_always_relevant(entity, true).code(), code);
  EXPECT_EQ(world.position(entity).status().code(), code);
  EXPECT_EQ(world.create_client(entity).status().code(), code);
  EXPECT_EQ(world.set_viewer(some_client, entity).code(), code);
}

// Every call that takes a client handle refuses `client` with `code`.
void expect_client_refused(World& world, ClientId client, ErrorCode code, EntityId some_entity) {
  EXPECT_FALSE(world.is_valid(client));
  EXPECT_EQ(world.destroy_client(client).code(), code);
  EXPECT_EQ(world.set_viewer(client, some_entity).code(), code);
  EXPECT_EQ(world.viewer(client).status().code(), code);
  EXPECT_EQ(world.stream(client).status().code(), code);
  EXPECT_EQ(world.interest_set(client).status().code(), code);
}

TEST(HandlesTest, NullHandlesAreRefusedEverywhere) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  expect_entity_refused(world, EntityId{}, ErrorCode::null_handle, client);
  expect_entity_refused(world, EntityId{0, 0}, ErrorCode::null_handle, client);
  expect_client_refused(world, ClientId{}, ErrorCode::null_handle, viewer);
  expect_client_refused(world, ClientId{0, 0}, ErrorCode::null_handle, viewer);
  EXPECT_TRUE(world.is_valid(viewer));
  EXPECT_EQ(world.entity_count(), 1u);
  EXPECT_EQ(world.client_count(), 1u);
}

TEST(HandlesTest, NeverCreatedHandlesAreStale) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  expect_entity_refused(world, EntityId{7, 1}, ErrorCode::stale_handle, client);
  expect_entity_refused(world, EntityId{viewer.index, viewer.generation + 1}, ErrorCode::stale_handle,
                        client);
  expect_client_refused(world, ClientId{7, 1}, ErrorCode::stale_handle, viewer);
  expect_client_refused(world, ClientId{client.index, client.generation + 1}, ErrorCode::stale_handle,
                        viewer);
}

TEST(HandlesTest, DestroyedEntityIsStaleBeforeAndAfterTheTick) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  const EntityId doomed = w.make(1.0f, 0.0f);
  ASSERT_TRUE(world.destroy_entity(doomed).ok());
  expect_entity_refused(world, doomed, ErrorCode::stale_handle, client);
  (void)world.tick();
  expect_entity_refused(world, doomed, ErrorCode::stale_handle, client);
  EXPECT_EQ(world.entity_count(), 1u);
}

TEST(HandlesTest, SlotIsReusedOnlyAfterATickWithANewGeneration) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  const EntityId first = w.make(1.0f, 0.0f);
  ASSERT_TRUE(world.destroy_entity(first).ok());
  const EntityId same_window = w.make(1.0f, 0.0f);
  EXPECT_NE(same_window.index, first.index) << "slot reused before the tick that despawns it";
  (void)world.tick();
  const EntityId reused = w.make(1.0f, 0.0f);
  EXPECT_EQ(reused.index, first.index);
  EXPECT_NE(reused.generation, first.generation);
  EXPECT_GE(reused.generation, 1u);
  EXPECT_TRUE(world.is_valid(reused));
  expect_entity_refused(world, first, ErrorCode::stale_handle, client);
  EXPECT_TRUE(world.is_valid(reused)) << "a refused call on the old handle touched the new entity";
  EXPECT_EQ(world.position(reused)->x, 1.0f);

  // Cycling the same slot many times never repeats a generation.
  std::vector<std::uint32_t> generations = {first.generation, reused.generation};
  EntityId current = reused;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(world.destroy_entity(current).ok());
    (void)world.tick();
    current = w.make(0.0f, 0.0f);
    ASSERT_EQ(current.index, first.index);
    EXPECT_EQ(std::count(generations.begin(), generations.end(), current.generation), 0);
    generations.push_back(current.generation);
  }
}

TEST(HandlesTest, ReusedSlotIsSpawnedAfreshAndOldRecordsNeverNameIt) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  const EntityId first = w.make(1.0f, 0.0f);
  (void)world.tick();
  ASSERT_TRUE(world.destroy_entity(first).ok());
  (void)world.tick();
  const auto despawns = w.despawns(client);
  ASSERT_EQ(despawns.size(), 1u);
  EXPECT_EQ(despawns[0].first, first);
  const EntityId reused = w.make(1.0f, 0.0f);
  ASSERT_EQ(reused.index, first.index);
  (void)world.tick();
  const auto spawns = w.spawns(client);
  ASSERT_EQ(spawns.size(), 1u);
  EXPECT_EQ(spawns[0].first, reused);
  EXPECT_EQ(w.updates(client), std::vector<EntityId>{reused});
  EXPECT_TRUE(w.despawns(client).empty());
}

TEST(HandlesTest, DestroyingAnEntityDespawnsItFromEveryHolderInTheNextTick) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  std::vector<ClientId> holders;
  for (int i = 0; i < 5; ++i) {
    holders.push_back(w.client(w.make(0.2f * static_cast<float>(i), 0.0f)));
  }
  const ClientId far_client = w.client(w.make(100.0f, 0.0f));
  const EntityId target = w.make(0.5f, 0.5f);
  const EntityId objective = w.make({.x = -50.0f, .z = 0.0f, .always_relevant = true});
  (void)world.tick();
  for (const ClientId c : holders) ASSERT_EQ(w.held(c).size(), 6u);  // 4 others, target, objective
  ASSERT_EQ(w.held(far_client).size(), 1u);

  ASSERT_TRUE(world.destroy_entity(target).ok());
  ASSERT_TRUE(world.destroy_entity(objective).ok());
  const TickStats stats = world.tick();
  EXPECT_EQ(stats.despawns, 2u * holders.size() + 1u);
  for (const ClientId c : holders) {
    EXPECT_EQ(w.despawns(c), (std::vector<Despawn>{{target, DespawnReason::destroyed},
                                                   {objective, DespawnReason::destroyed}}));
    for (const EntityId u : w.updates(c)) {
      EXPECT_NE(u, target);
      EXPECT_NE(u, objective);
    }
  }
  EXPECT_EQ(w.despawns(far_client), (std::vector<Despawn>{{objective, DespawnReason::destroyed}}));
  (void)world.tick();
  for (const ClientId c : holders) EXPECT_TRUE(w.despawns(c).empty());
}

TEST(HandlesTest, AWithdrawnEntityLeavesEveryHolderAsLeftAndItsSlotIsReusedAsADestroyedOnesIs) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId client = w.client(viewer);
  const EntityId handed = w.make(0.5f, 0.0f);
  const EntityId rider = w.make(0.6f, 0.0f);
  ASSERT_TRUE(world.attach(rider, handed).ok());
  const EntityId killed = w.make(0.7f, 0.0f);
  (void)world.tick();
  ASSERT_EQ(w.held(client).size(), 3u);

  // The viewer is refused as destroy_entity refuses it, naming the client, and stays.
  const Status refused = world.withdraw_entity(viewer);
  EXPECT_EQ(refused.code(), ErrorCode::entity_is_viewer);
  EXPECT_NE(refused.message().find("is the viewer of"), std::string::npos) << refused.message();
  EXPECT_TRUE(world.position(viewer).ok());

  ASSERT_TRUE(world.withdraw_entity(handed).ok());
  ASSERT_TRUE(world.destroy_entity(killed).ok());
  EXPECT_EQ(world.withdraw_entity(handed).code(), ErrorCode::stale_handle);  // gone at once
  EXPECT_EQ(world.withdraw_entity(EntityId{}).code(), ErrorCode::null_handle);
  (void)world.tick();
  // Its rider was detached, not withdrawn: it stays, a root at its own position.
  EXPECT_EQ(w.despawns(client),
            (std::vector<Despawn>{{handed, DespawnReason::left}, {killed, DespawnReason::destroyed}}));
  EXPECT_EQ(w.held(client), std::vector<EntityId>{rider});
  const EntityId next = w.make(0.5f, 0.0f);
  EXPECT_EQ(next.index == handed.index || next.index == killed.index, true);
  EXPECT_NE(next.generation, next.index == handed.index ? handed.generation : killed.generation);
  (void)world.tick();
  EXPECT_EQ(w.spawns(client), (std::vector<Spawn>{{next, SpawnReason::near}}));
  EXPECT_TRUE(w.despawns(client).empty());
  // Whichever slot it took, the entity there now dies as any destroyed one does.
  const EntityId reused = w.make(0.4f, 0.0f);
  (void)world.tick();
  ASSERT_TRUE(world.destroy_entity(next).ok());
  ASSERT_TRUE(world.destroy_entity(reused).ok());
  (void)world.tick();
  std::vector<Despawn> dead{{next, DespawnReason::destroyed}, {reused, DespawnReason::destroyed}};
  if (reused.index < next.index) std::swap(dead[0], dead[1]);  // in index order
  EXPECT_EQ(w.despawns(client), dead);
}

TEST(HandlesTest, WalkingAwayDespawnsWithReasonLeft) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const ClientId client = w.client(w.make(0.0f, 0.0f));
  const EntityId walker = w.make(1.0f, 0.0f);
  (void)world.tick();
  ASSERT_TRUE(world.set_position(walker, 10.0f, 0.0f).ok());
  (void)world.tick();
  const auto despawns = w.despawns(client);
  ASSERT_EQ(despawns.size(), 1u);
  EXPECT_EQ(despawns[0].second, DespawnReason::left);
}

// A spawn says whether its entity is new since the last tick (play its appearance) or was there
// already (came into range, or the client is new): the counterpart of destroyed against left.
TEST(HandlesTest, ASpawnSaysWhetherItsEntityWasJustCreated) {
  SmallWorld w(testing::small_world_def());
  World& world = w.world;
  const ClientId first = w.client(w.make(0.0f, 0.0f));
  const EntityId born = w.make(1.0f, 0.0f);
  const EntityId far = w.make(100.0f, 0.0f);
  auto spawned = [&](ClientId c) {
    std::vector<std::pair<EntityId, bool>> out;
    const ClientStream stream = *world.stream(c);
    for (const SpawnRecord& s : stream.spawns) out.emplace_back(s.entity, s.created);
    return out;
  };
  (void)world.tick();
  EXPECT_EQ(spawned(first), (std::vector<std::pair<EntityId, bool>>{{born, true}}));

  // A client made later finds the others already there, the far one walks in: none created;
  // the new client's viewer was created, and the first client sees it so.
  const EntityId second_viewer = w.make(2.0f, 0.0f);
  const ClientId second = w.client(second_viewer);
  ASSERT_TRUE(world.set_position(far, 0.0f, 1.0f).ok());
  (void)world.tick();
  using Spawns = std::vector<std::pair<EntityId, bool>>;
  EXPECT_EQ(spawned(first), (Spawns{{far, false}, {second_viewer, true}}));
  EXPECT_EQ(spawned(second), (Spawns{{*world.viewer(first), false}, {born, false}, {far, false}}));

  // A slot reused by a new entity: created again, though the old one stood there.
  ASSERT_TRUE(world.destroy_entity(born).ok());
  (void)world.tick();
  const EntityId reborn = w.make(1.0f, 0.0f);
  ASSERT_EQ(reborn.index, born.index);
  (void)world.tick();
  EXPECT_EQ(spawned(first), (Spawns{{reborn, true}}));
  (void)world.tick();
  EXPECT_TRUE(spawned(first).empty());
}

TEST(HandlesTest, OwnViewerIsNeverInItsSetOrStream) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  // At the origin, always relevant, and a viewer.
  const EntityId a = w.make({.x = 0.0f, .z = 0.0f, .always_relevant = true});
  const EntityId b = w.make(0.5f, 0.0f);
  w.make(0.0f, 0.5f);
  const ClientId client = w.client(a);
  auto expect_absent = [&](EntityId viewer) {
    const std::vector<EntityId> set = w.held(client);
    EXPECT_EQ(std::count(set.begin(), set.end(), viewer), 0);
    for (const Spawn& s : w.spawns(client)) EXPECT_NE(s.first, viewer);
    for (const EntityId u : w.updates(client)) EXPECT_NE(u, viewer);
  };
  (void)world.tick();
  expect_absent(a);
  EXPECT_EQ(w.held(client).size(), 2u);
  // Switch to a viewer that is a member: it leaves the set (reason left), the old viewer enters.
  ASSERT_TRUE(world.set_viewer(client, b).ok());
  EXPECT_EQ(*world.viewer(client), b);
  (void)world.tick();
  expect_absent(b);
  EXPECT_EQ(w.despawns(client), (std::vector<Despawn>{{b, DespawnReason::left}}));
  EXPECT_EQ(w.spawns(client), (std::vector<Spawn>{{a, SpawnReason::always}}));
  // Making the viewer itself always relevant does not put it in its own set.
  ASSERT_TRUE(world.set_always_relevant(b, true).ok());
  (void)world.tick();
  expect_absent(b);
  EXPECT_EQ(w.held(client).size(), 2u);
}

TEST(HandlesTest, DestroyingAViewerIsRefusedAndChangesNothing) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId viewer = w.make(2.0f, 3.0f);
  const EntityId other = w.make(2.5f, 3.0f);
  const ClientId first = w.client(viewer);
  const ClientId second = w.client(viewer);  // two clients share the viewer
  (void)world.tick();
  const Status refused = world.destroy_entity(viewer);
  EXPECT_EQ(refused.code(), ErrorCode::entity_is_viewer);
  EXPECT_NE(refused.message().find("entity 0:1"), std::string::npos) << refused.message();
  EXPECT_TRUE(world.is_valid(viewer));
  EXPECT_EQ(world.entity_count(), 2u);
  EXPECT_EQ(world.position(viewer)->x, 2.0f);
  EXPECT_EQ(world.position(viewer)->z, 3.0f);
  const TickStats stats = world.tick();
  EXPECT_EQ(stats.despawns, 0u);
  EXPECT_EQ(stats.members, 2u);
  ASSERT_TRUE(world.destroy_client(first).ok());
  EXPECT_EQ(world.destroy_entity(viewer).code(), ErrorCode::entity_is_viewer) << "second still views from it";
  ASSERT_TRUE(world.set_viewer(second, other).ok());
  EXPECT_TRUE(world.destroy_entity(viewer).ok());
  (void)world.tick();
  EXPECT_TRUE(w.held(second).empty());
}

TEST(HandlesTest, ClientsAreListedInSlotOrderAndSlotsAreReusedWithNewGenerations) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId e0 = w.make(0.0f, 0.0f);
  const EntityId e1 = w.make(1.0f, 0.0f);
  const ClientId c0 = w.client(e0);
  const ClientId c1 = w.client(e1);
  const ClientId c2 = w.client(e0);
  ASSERT_EQ(world.clients().size(), 3u);
  EXPECT_EQ(world.clients()[0], c0);
  EXPECT_EQ(world.clients()[1], c1);
  EXPECT_EQ(world.clients()[2], c2);
  EXPECT_LT(c0.index, c1.index);
  EXPECT_LT(c1.index, c2.index);
  (void)world.tick();
  EXPECT_EQ(w.held(c1).size(), 1u);

  ASSERT_TRUE(world.destroy_client(c1).ok());
  EXPECT_EQ(world.client_count(), 2u);
  ASSERT_EQ(world.clients().size(), 2u);
  EXPECT_EQ(world.clients()[0], c0);
  EXPECT_EQ(world.clients()[1], c2);
  expect_client_refused(world, c1, ErrorCode::stale_handle, e0);

  const ClientId reused = w.client(e1);
  EXPECT_EQ(reused.index, c1.index);
  EXPECT_NE(reused.generation, c1.generation);
  expect_client_refused(world, c1, ErrorCode::stale_handle, e0);
  ASSERT_EQ(world.clients().size(), 3u);
  EXPECT_EQ(world.clients()[1], reused);
  // A new client holds nothing and has no records until the next tick.
  EXPECT_TRUE(w.held(reused).empty());
  EXPECT_TRUE(w.spawns(reused).empty());
  EXPECT_TRUE(w.updates(reused).empty());
  (void)world.tick();
  const auto spawns = w.spawns(reused);
  ASSERT_EQ(spawns.size(), 1u);
  EXPECT_EQ(spawns[0].first, e0);
}

TEST(HandlesTest, StreamsAndSetsAreEmptyBeforeTheFirstTick) {
  SmallWorld w(default_world_def());
  World& world = w.world;
  const EntityId a = w.make(0.0f, 0.0f);
  w.make(0.5f, 0.0f);
  const ClientId client = w.client(a);
  EXPECT_EQ(world.tick_count(), 0u);
  EXPECT_TRUE(w.held(client).empty());
  EXPECT_TRUE(w.spawns(client).empty());
  const TickStats stats = world.tick();
  EXPECT_EQ(stats.tick, 0u);
  EXPECT_EQ(world.tick_count(), 1u);
  EXPECT_EQ(stats.spawns, 1u);
  EXPECT_EQ(stats.updates, 1u);
}

// Over long seeded runs with churn (entities and clients created and destroyed, slots reused,
// viewers changed, radii changed), the records of every (client, entity) pair, tracked by full
// handle, read spawn, update*, despawn, repeated: no update before a spawn or after a despawn,
// no second spawn, no despawn of what was never spawned; a destroyed despawn names a dead entity.
TEST(HandlesTest, NoUpdateOutsideSpawnAndDespawnOverLongRandomRuns) {
  for (const std::uint64_t seed : {11u, 12u, 13u}) {
    RandomRunDef def;
    def.seed = seed;
    def.ticks = 800;
    def.max_entities = 40;
    def.max_clients = 12;
    def.tiers = seed == 12 ? TierMode::preset : TierMode::none;
    using Key = std::pair<std::uint64_t, std::uint64_t>;
    std::map<Key, bool> held;
    std::uint64_t updates = 0;
    std::uint64_t destroyed_despawns = 0;
    std::string problem;
    std::string mirror_error;
    std::uint64_t ticks = 0;
    auto key = [](ClientId c, EntityId e) {
      return Key{(std::uint64_t{c.index} << 32) | c.generation,
                 (std::uint64_t{e.index} << 32) | e.generation};
    };
    testing::run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      const World& world = mirror.world();
      mirror_error = mirror.error();
      ++ticks;
      for (const ClientId client : world.clients()) {
        if (!problem.empty()) return;
        const ClientStream stream = *world.stream(client);
        const std::string where = "seed " + std::to_string(seed) + " tick " + std::to_string(stats.tick) +
                                  " " + testing::to_string(client) + ": ";
        for (const DespawnRecord& d : stream.despawns) {
          bool& on = held[key(client, d.entity)];
          if (!on) problem = where + "despawn of never-spawned " + testing::to_string(d.entity);
          if (d.reason == DespawnReason::destroyed) {
            ++destroyed_despawns;
            if (world.is_valid(d.entity))
              problem = where + "destroyed despawn of live " + testing::to_string(d.entity);
          }
          on = false;
        }
        for (const SpawnRecord& s : stream.spawns) {
          bool& on = held[key(client, s.entity)];
          if (on) problem = where + "second spawn of " + testing::to_string(s.entity);
          on = true;
        }
        for (const EntityId u : stream.updates) {
          ++updates;
          if (!held[key(client, u)])
            problem = where + "update outside spawn..despawn of " + testing::to_string(u);
        }
      }
    });
    ASSERT_EQ(problem, "");
    ASSERT_EQ(mirror_error, "") << "seed " << seed;
    EXPECT_EQ(ticks, def.ticks) << "seed " << seed;
    EXPECT_GT(updates, 1000u) << "seed " << seed;
    EXPECT_GT(destroyed_despawns, 0u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace sightline
