// Handles are values: null and stale handles are refused by every call, reused slots get a new
// generation, destroyed entities despawn with reason `destroyed`, viewers are protected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "random_run.h"
#include "sightline/world.h"

namespace sightline {
namespace {

using testing::MirroredWorld;
using testing::RandomRunDef;
using testing::TierMode;

World make_world() { return std::move(World::create(default_world_def()).value()); }

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
  World world = make_world();
  const EntityId viewer = *world.create_entity({});
  const ClientId client = *world.create_client(viewer);
  expect_entity_refused(world, EntityId{}, ErrorCode::null_handle, client);
  expect_entity_refused(world, EntityId{0, 0}, ErrorCode::null_handle, client);
  expect_client_refused(world, ClientId{}, ErrorCode::null_handle, viewer);
  expect_client_refused(world, ClientId{0, 0}, ErrorCode::null_handle, viewer);
  EXPECT_TRUE(world.is_valid(viewer));
  EXPECT_EQ(world.entity_count(), 1u);
  EXPECT_EQ(world.client_count(), 1u);
}

TEST(HandlesTest, NeverCreatedHandlesAreStale) {
  World world = make_world();
  const EntityId viewer = *world.create_entity({});
  const ClientId client = *world.create_client(viewer);
  expect_entity_refused(world, EntityId{7, 1}, ErrorCode::stale_handle, client);
  expect_entity_refused(world, EntityId{viewer.index, viewer.generation + 1}, ErrorCode::stale_handle,
                        client);
  expect_client_refused(world, ClientId{7, 1}, ErrorCode::stale_handle, viewer);
  expect_client_refused(world, ClientId{client.index, client.generation + 1}, ErrorCode::stale_handle,
                        viewer);
}

TEST(HandlesTest, DestroyedEntityIsStaleBeforeAndAfterTheTick) {
  World world = make_world();
  const EntityId viewer = *world.create_entity({});
  const ClientId client = *world.create_client(viewer);
  const EntityId doomed = *world.create_entity({1.0f, 0.0f, false});
  ASSERT_TRUE(world.destroy_entity(doomed).ok());
  expect_entity_refused(world, doomed, ErrorCode::stale_handle, client);
  (void)world.tick();
  expect_entity_refused(world, doomed, ErrorCode::stale_handle, client);
  EXPECT_EQ(world.entity_count(), 1u);
}

TEST(HandlesTest, SlotIsReusedOnlyAfterATickWithANewGeneration) {
  World world = make_world();
  const EntityId viewer = *world.create_entity({});
  const ClientId client = *world.create_client(viewer);
  const EntityId first = *world.create_entity({1.0f, 0.0f, false});
  ASSERT_TRUE(world.destroy_entity(first).ok());
  const EntityId same_window = *world.create_entity({1.0f, 0.0f, false});
  EXPECT_NE(same_window.index, first.index) << "slot reused before the tick that despawns it";
  (void)world.tick();
  const EntityId reused = *world.create_entity({1.0f, 0.0f, false});
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
    current = *world.create_entity({});
    ASSERT_EQ(current.index, first.index);
    EXPECT_EQ(std::count(generations.begin(), generations.end(), current.generation), 0);
    generations.push_back(current.generation);
  }
}

TEST(HandlesTest, ReusedSlotIsSpawnedAfreshAndOldRecordsNeverNameIt) {
  World world = make_world();
  const EntityId viewer = *world.create_entity({});
  const ClientId client = *world.create_client(viewer);
  const EntityId first = *world.create_entity({1.0f, 0.0f, false});
  (void)world.tick();
  ASSERT_TRUE(world.destroy_entity(first).ok());
  (void)world.tick();
  ASSERT_EQ(world.stream(client)->despawns.size(), 1u);
  EXPECT_EQ(world.stream(client)->despawns[0].entity, first);
  const EntityId reused = *world.create_entity({1.0f, 0.0f, false});
  ASSERT_EQ(reused.index, first.index);
  (void)world.tick();
  const ClientStream stream = *world.stream(client);
  ASSERT_EQ(stream.spawns.size(), 1u);
  EXPECT_EQ(stream.spawns[0].entity, reused);
  ASSERT_EQ(stream.updates.size(), 1u);
  EXPECT_EQ(stream.updates[0], reused);
  EXPECT_TRUE(stream.despawns.empty());
}

TEST(HandlesTest, DestroyingAnEntityDespawnsItFromEveryHolderInTheNextTick) {
  World world = make_world();
  std::vector<ClientId> holders;
  for (int i = 0; i < 5; ++i) {
    holders.push_back(
        *world.create_client(*world.create_entity({0.2f * static_cast<float>(i), 0.0f, false})));
  }
  const ClientId far_client = *world.create_client(*world.create_entity({100.0f, 0.0f, false}));
  const EntityId target = *world.create_entity({0.5f, 0.5f, false});
  const EntityId objective = *world.create_entity({-50.0f, 0.0f, true});
  (void)world.tick();
  for (const ClientId c : holders)
    ASSERT_EQ(world.interest_set(c)->size(), 6u);  // 4 others, target, objective
  ASSERT_EQ(world.interest_set(far_client)->size(), 1u);

  ASSERT_TRUE(world.destroy_entity(target).ok());
  ASSERT_TRUE(world.destroy_entity(objective).ok());
  const TickStats stats = world.tick();
  EXPECT_EQ(stats.despawns, 2u * holders.size() + 1u);
  for (const ClientId c : holders) {
    const ClientStream stream = *world.stream(c);
    ASSERT_EQ(stream.despawns.size(), 2u);
    EXPECT_EQ(stream.despawns[0].entity, target);
    EXPECT_EQ(stream.despawns[0].reason, DespawnReason::destroyed);
    EXPECT_EQ(stream.despawns[1].entity, objective);
    EXPECT_EQ(stream.despawns[1].reason, DespawnReason::destroyed);
    for (const EntityId u : stream.updates) {
      EXPECT_NE(u, target);
      EXPECT_NE(u, objective);
    }
  }
  ASSERT_EQ(world.stream(far_client)->despawns.size(), 1u);
  EXPECT_EQ(world.stream(far_client)->despawns[0].entity, objective);
  EXPECT_EQ(world.stream(far_client)->despawns[0].reason, DespawnReason::destroyed);
  (void)world.tick();
  for (const ClientId c : holders) EXPECT_TRUE(world.stream(c)->despawns.empty());
}

TEST(HandlesTest, WalkingAwayDespawnsWithReasonLeft) {
  World world = make_world();
  const ClientId client = *world.create_client(*world.create_entity({}));
  const EntityId walker = *world.create_entity({1.0f, 0.0f, false});
  (void)world.tick();
  ASSERT_TRUE(world.set_position(walker, 10.0f, 0.0f).ok());
  (void)world.tick();
  ASSERT_EQ(world.stream(client)->despawns.size(), 1u);
  EXPECT_EQ(world.stream(client)->despawns[0].reason, DespawnReason::left);
}

TEST(HandlesTest, OwnViewerIsNeverInItsSetOrStream) {
  World world = make_world();
  const EntityId a = *world.create_entity({0.0f, 0.0f, true});  // always relevant, and a viewer
  const EntityId b = *world.create_entity({0.5f, 0.0f, false});
  (void)*world.create_entity({0.0f, 0.5f, false});
  const ClientId client = *world.create_client(a);
  auto expect_absent = [&](EntityId viewer) {
    const auto set = *world.interest_set(client);
    const ClientStream stream = *world.stream(client);
    EXPECT_EQ(std::count(set.begin(), set.end(), viewer), 0);
    for (const SpawnRecord& s : stream.spawns) EXPECT_NE(s.entity, viewer);
    for (const EntityId u : stream.updates) EXPECT_NE(u, viewer);
  };
  (void)world.tick();
  expect_absent(a);
  EXPECT_EQ(world.interest_set(client)->size(), 2u);
  // Switch to a viewer that is a member: it leaves the set (reason left), the old viewer enters.
  ASSERT_TRUE(world.set_viewer(client, b).ok());
  EXPECT_EQ(*world.viewer(client), b);
  (void)world.tick();
  expect_absent(b);
  ASSERT_EQ(world.stream(client)->despawns.size(), 1u);
  EXPECT_EQ(world.stream(client)->despawns[0].entity, b);
  EXPECT_EQ(world.stream(client)->despawns[0].reason, DespawnReason::left);
  ASSERT_EQ(world.stream(client)->spawns.size(), 1u);
  EXPECT_EQ(world.stream(client)->spawns[0].entity, a);
  EXPECT_EQ(world.stream(client)->spawns[0].reason, SpawnReason::always);
  // Making the viewer itself always relevant does not put it in its own set.
  ASSERT_TRUE(world.set_always_relevant(b, true).ok());
  (void)world.tick();
  expect_absent(b);
  EXPECT_EQ(world.interest_set(client)->size(), 2u);
}

TEST(HandlesTest, DestroyingAViewerIsRefusedAndChangesNothing) {
  World world = make_world();
  const EntityId viewer = *world.create_entity({2.0f, 3.0f, false});
  const EntityId other = *world.create_entity({2.5f, 3.0f, false});
  const ClientId first = *world.create_client(viewer);
  const ClientId second = *world.create_client(viewer);  // two clients share the viewer
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
  EXPECT_TRUE(world.interest_set(second)->empty());
}

TEST(HandlesTest, ClientsAreListedInSlotOrderAndSlotsAreReusedWithNewGenerations) {
  World world = make_world();
  const EntityId e0 = *world.create_entity({0.0f, 0.0f, false});
  const EntityId e1 = *world.create_entity({1.0f, 0.0f, false});
  const ClientId c0 = *world.create_client(e0);
  const ClientId c1 = *world.create_client(e1);
  const ClientId c2 = *world.create_client(e0);
  ASSERT_EQ(world.clients().size(), 3u);
  EXPECT_EQ(world.clients()[0], c0);
  EXPECT_EQ(world.clients()[1], c1);
  EXPECT_EQ(world.clients()[2], c2);
  EXPECT_LT(c0.index, c1.index);
  EXPECT_LT(c1.index, c2.index);
  (void)world.tick();
  EXPECT_EQ(world.interest_set(c1)->size(), 1u);

  ASSERT_TRUE(world.destroy_client(c1).ok());
  EXPECT_EQ(world.client_count(), 2u);
  ASSERT_EQ(world.clients().size(), 2u);
  EXPECT_EQ(world.clients()[0], c0);
  EXPECT_EQ(world.clients()[1], c2);
  expect_client_refused(world, c1, ErrorCode::stale_handle, e0);

  const ClientId reused = *world.create_client(e1);
  EXPECT_EQ(reused.index, c1.index);
  EXPECT_NE(reused.generation, c1.generation);
  expect_client_refused(world, c1, ErrorCode::stale_handle, e0);
  ASSERT_EQ(world.clients().size(), 3u);
  EXPECT_EQ(world.clients()[1], reused);
  // A new client holds nothing and has no records until the next tick.
  EXPECT_TRUE(world.interest_set(reused)->empty());
  EXPECT_TRUE(world.stream(reused)->spawns.empty());
  EXPECT_TRUE(world.stream(reused)->updates.empty());
  (void)world.tick();
  ASSERT_EQ(world.stream(reused)->spawns.size(), 1u);
  EXPECT_EQ(world.stream(reused)->spawns[0].entity, e0);
}

TEST(HandlesTest, StreamsAndSetsAreEmptyBeforeTheFirstTick) {
  World world = make_world();
  const EntityId a = *world.create_entity({});
  (void)*world.create_entity({0.5f, 0.0f, false});
  const ClientId client = *world.create_client(a);
  EXPECT_EQ(world.tick_count(), 0u);
  EXPECT_TRUE(world.interest_set(client)->empty());
  EXPECT_TRUE(world.stream(client)->spawns.empty());
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
