// The stream's guarantees: sorted spans, no entity both despawned and spawned in one tick, every
// update names a member, per (client, entity) pair the records read spawn, update*, despawn, and
// replaying the stream on a client's copy reproduces the interest set.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "random_run.h"
#include "sightline/world.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

EntityId id_of(EntityId e) { return e; }
template <class Record>
EntityId id_of(const Record& r) {
  return r.entity;
}

template <class Record>
bool sorted_by_index(std::span<const Record> records) {
  return std::adjacent_find(records.begin(), records.end(), [](const Record& a, const Record& b) {
           return id_of(a).index >= id_of(b).index;
         }) == records.end();
}

// Checks one tick of one client's stream on its own; returns the first problem or empty.
std::string check_one_tick(const ClientStream& stream, std::span<const EntityId> set) {
  if (!sorted_by_index(stream.spawns)) return "spawns not strictly sorted by entity index";
  if (!sorted_by_index(stream.updates)) return "updates not strictly sorted by entity index";
  if (!sorted_by_index(stream.despawns)) return "despawns not strictly sorted by entity index";
  if (std::adjacent_find(set.begin(), set.end(), [](EntityId a, EntityId b) { return a.index >= b.index; }) !=
      set.end()) {
    return "interest_set not strictly sorted by entity index";
  }
  auto member = [&](EntityId e) { return std::find(set.begin(), set.end(), e) != set.end(); };
  for (const DespawnRecord& d : stream.despawns) {
    for (const SpawnRecord& s : stream.spawns) {
      if (s.entity.index == d.entity.index) return "entity " + to_string(s.entity) + " despawned and spawned";
    }
    if (member(d.entity)) return to_string(d.entity) + " despawned but still a member";
  }
  for (const EntityId u : stream.updates) {
    if (!member(u)) return to_string(u) + " updated but not a member after the tick";
  }
  for (const SpawnRecord& s : stream.spawns) {
    if (!member(s.entity)) return to_string(s.entity) + " spawned but not a member after the tick";
  }
  return {};
}

// A client's view of the world, built only from the stream, as a real client would.
struct Replica {
  std::set<std::pair<std::uint32_t, std::uint32_t>> held;  // (index, generation)
};

TEST(StreamOrderTest, StreamsObeyTheOrderGuaranteesOnRandomRuns) {
  for (std::uint64_t seed = 1; seed <= sightline::testing::seeds_for_build(60); ++seed) {
    RandomRunDef def;
    def.seed = seed;
    def.ticks = 120;
    def.tiers = seed % 3 == 0 ? TierMode::none : (seed % 3 == 1 ? TierMode::preset : TierMode::custom);
    // Per (client, entity): whether the pair is spawned, judged from the records alone.
    std::map<std::pair<std::uint64_t, std::uint64_t>, bool> spawned;
    std::map<std::uint32_t, Replica> replicas;  // by client index; reset when the slot's client changes
    std::map<std::uint32_t, ClientId> replica_owner;
    std::string problem;
    auto key = [](ClientId c, EntityId e) {
      return std::pair{(std::uint64_t{c.index} << 32) | c.generation,
                       (std::uint64_t{e.index} << 32) | e.generation};
    };
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      const World& world = mirror.world();
      for (const ClientId client : world.clients()) {
        if (!problem.empty()) return;
        const ClientStream stream = *world.stream(client);
        const std::span<const EntityId> set = *world.interest_set(client);
        problem = check_one_tick(stream, set);
        const EntityId viewer = *world.viewer(client);
        for (const EntityId e : set) {
          if (e == viewer) problem = "viewer " + to_string(e) + " in its own set";
        }
        for (const EntityId u : stream.updates) {
          if (u == viewer) problem = "viewer " + to_string(u) + " updated to itself";
        }
        // Apply despawns, then spawns, then updates, pair by pair.
        for (const DespawnRecord& d : stream.despawns) {
          bool& on = spawned[key(client, d.entity)];
          if (!on) problem = "despawn of " + to_string(d.entity) + " without a spawn";
          if (d.reason == DespawnReason::destroyed && world.is_valid(d.entity)) {
            problem = "despawn destroyed of live " + to_string(d.entity);
          }
          on = false;
        }
        for (const SpawnRecord& s : stream.spawns) {
          bool& on = spawned[key(client, s.entity)];
          if (on) problem = "second spawn of " + to_string(s.entity) + " without a despawn";
          if (!world.is_valid(s.entity)) problem = "spawn of dead " + to_string(s.entity);
          on = true;
        }
        for (const EntityId u : stream.updates) {
          if (!spawned[key(client, u)]) problem = "update of " + to_string(u) + " outside spawn..despawn";
          if (!world.is_valid(u)) problem = "update of dead " + to_string(u);
        }
        // The replica, fed only by the stream, equals the interest set.
        if (replica_owner[client.index] != client) {
          replica_owner[client.index] = client;
          replicas[client.index] = {};
        }
        Replica& replica = replicas[client.index];
        for (const DespawnRecord& d : stream.despawns)
          replica.held.erase({d.entity.index, d.entity.generation});
        for (const SpawnRecord& s : stream.spawns) replica.held.insert({s.entity.index, s.entity.generation});
        std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
        for (const EntityId e : set) expected.insert({e.index, e.generation});
        if (replica.held != expected) problem = "replaying the stream does not give the interest set";
        if (!problem.empty()) {
          problem = "seed " + std::to_string(seed) + " tick " + std::to_string(stats.tick) + " " +
                    to_string(client) + ": " + problem;
        }
      }
    });
    ASSERT_EQ(problem, "");
  }
}

TEST(StreamOrderTest, DestroyedClientProducesNoRecordsAndItsReplacementStartsEmpty) {
  SmallWorld w(default_world_def());
  const EntityId a = w.make(0.0f, 0.0f);
  const EntityId b = w.make(1.0f, 0.0f);
  const ClientId first = w.client(a);
  (void)w.world.tick();
  ASSERT_EQ(w.held(first).size(), 1u);
  ASSERT_TRUE(w.world.destroy_client(first).ok());
  const ClientId second = w.client(a);
  ASSERT_EQ(second.index, first.index);
  EXPECT_TRUE(w.held(second).empty());
  const TickStats stats = w.world.tick();
  EXPECT_EQ(stats.spawns, 1u) << "the replacement must be spawned everything afresh";
  const auto spawns = w.spawns(second);
  ASSERT_EQ(spawns.size(), 1u);
  EXPECT_EQ(spawns[0].first, b);
}

// Every member due (no tiers, or a refresh): the updates are the set's own memory. With tiers,
// a tick where some member rests gets its own list, still a sorted part of the set.
TEST(StreamOrderTest, UpdatesAreTheInterestSetItselfWhenEveryMemberIsDue) {
  for (const bool tiers : {false, true}) {
    WorldDef def = small_world_def(10.0f, 12.0f);
    if (tiers) def.tiers = {{0.3f, 1}, {std::numeric_limits<float>::infinity(), 4}};
    SmallWorld w(def);
    World& world = w.world;
    const EntityId viewer = w.make(0.0f, 0.0f);
    for (int i = 1; i <= 9; ++i) w.make(static_cast<float>(i), 0.0f);
    const ClientId client = w.client(viewer);
    int own_lists = 0;
    for (int t = 0; t < 8; ++t) {
      (void)world.tick();
      const std::span<const EntityId> set = *world.interest_set(client);
      const std::span<const EntityId> updates = world.stream(client)->updates;
      ASSERT_EQ(set.size(), 9u);
      if (updates.size() == set.size()) {
        EXPECT_EQ(updates.data(), set.data()) << "tick " << t << (tiers ? " with tiers" : "");
      } else {
        ++own_lists;
        EXPECT_TRUE(tiers) << "tick " << t << ": without tiers every member is due";
        EXPECT_TRUE(std::includes(set.begin(), set.end(), updates.begin(), updates.end(),
                                  [](EntityId a, EntityId b) { return a.index < b.index; }));
      }
    }
    EXPECT_EQ(own_lists > 0, tiers) << "the far tier rests three ticks in four";
  }
}

}  // namespace
}  // namespace sightline::testing
