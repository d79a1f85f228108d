// No heap allocation in a steady tick: this executable links support/alloc_counter, which replaces
// every global operator new and delete with a counting version, and counts across steady ticks.
#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <vector>

#include "alloc_counter.h"
#include "jitter_walk.h"
#include "rng.h"
#include "sightline/world.h"

namespace sightline {
namespace {

std::uint64_t allocations() { return support::allocation_count(); }

TEST(AllocationTest, CounterSeesEveryFormOfNew) {
  struct alignas(64) Wide {
    char bytes[64];
  };
  const std::uint64_t before = allocations();
  // Volatile pointers keep the compiler from eliding the new/delete pairs.
  int* volatile one = new int(1);
  delete one;
  int* volatile many = new int[3];
  delete[] many;
  int* volatile nothrow = new (std::nothrow) int(2);
  delete nothrow;
  Wide* volatile wide = new Wide;
  delete wide;
  Wide* volatile wides = new Wide[2];
  delete[] wides;
  std::vector<int> grown(10);
  EXPECT_EQ(allocations() - before, 6u);
}

// A seeded jittering walk with hysteresis and the preset tiers; every 10th entity is a client's
// viewer and every 500th (from 7) always relevant.
struct SteadyWorldDef {
  float width = 0.0f;
  float height = 0.0f;
  float enter_radius = 0.0f;
  float leave_radius = 0.0f;
};

// The brief's arena: 2000 entities in 200 x 200, R = 10, L = 12.5, 200 clients (~16 per R-disc).
constexpr SteadyWorldDef kArena{200.0f, 200.0f, 10.0f, 12.5f};
// Denser and faster-changing: 2000 entities in 120 x 75, R = 4, L = 5; at the walk's speed
// members cross R far more often, so spawns and despawns run at a high steady rate.
constexpr SteadyWorldDef kDense{120.0f, 75.0f, 4.0f, 5.0f};

struct SteadyWorld {
  /// With `keys`, entities carry Area, User and Global keys and every client has area
  /// subscriptions with send rates and a bypass team channel, all set before the first tick.
  explicit SteadyWorld(const SteadyWorldDef& steady_def, bool keys = false) {
    scenarios::JitterWalkDef walk_def;
    walk_def.entities = 2000;
    walk_def.width = steady_def.width;
    walk_def.height = steady_def.height;
    walk_def.seed = 42;
    walk.emplace(walk_def);
    WorldDef def = default_world_def();
    def.enter_radius = steady_def.enter_radius;
    def.leave_radius = steady_def.leave_radius;
    def.tiers = default_distance_tiers();
    world.emplace(std::move(World::create(def).value()));
    for (std::size_t i = 0; i < walk->xs().size(); ++i) {
      ids.push_back(*world->create_entity({walk->xs()[i], walk->zs()[i], i % 500 == 7}));
    }
    for (std::size_t i = 0; i < ids.size(); i += 10) clients.push_back(*world->create_client(ids[i]));
    if (keys) set_keys();
  }

  void set_keys() {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      Status status;
      if (i % 50 == 1) {
        status = world->set_user_interest_key(ids[i], 1 + i % 4);  // team channels 1..4
      } else if (i % 3 == 0) {
        status = world->set_area_interest_key(ids[i], i % 5);  // zones 0..4
      }
      if (!status.ok()) std::abort();
    }
    for (std::size_t c = 0; c < clients.size(); ++c) {
      const KeySubscription zones[] = {{c % 5, 1, false}, {(c + 1) % 5, 3, false}, {(c + 1) % 5, 2, false}};
      if (!world->set_area_keys(clients[c], zones).ok()) std::abort();
      if (!world->add_user_key(clients[c], {1 + c % 4, 2, true}).ok()) std::abort();
    }
  }

  // Moves every entity, ticks, and reads every client's stream and set.
  std::uint64_t step() {
    walk->step();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!world->set_position(ids[i], walk->xs()[i], walk->zs()[i]).ok()) std::abort();
    }
    const TickStats stats = world->tick();
    std::uint64_t records = stats.spawns + stats.updates + stats.despawns;
    for (const ClientId client : world->clients()) {
      const Result<ClientStream> stream = world->stream(client);
      const Result<std::span<const EntityId>> set = world->interest_set(client);
      if (!stream.ok() || !set.ok()) std::abort();
      for (const SpawnRecord& s : stream->spawns) records += s.entity.index;
      for (const UpdateRecord& u : stream->updates) records += u.entity.index;
      for (const DespawnRecord& d : stream->despawns) records += d.entity.index;
      records += set->size();
    }
    return records;
  }

  std::optional<scenarios::JitterWalk> walk;
  std::optional<World> world;
  std::vector<EntityId> ids;
  std::vector<ClientId> clients;
};

void expect_steady_ticks_allocate_nothing(const SteadyWorldDef& steady_def, bool keys = false) {
  const std::uint64_t at_start = allocations();
  SteadyWorld steady(steady_def, keys);
  // The World's own allocations go through the counted operator new, or a zero below proves nothing.
  ASSERT_GT(allocations() - at_start, 0u);
  std::uint64_t records = 0;
  for (int t = 0; t < 50; ++t) records += steady.step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) records += steady.step();
  const std::uint64_t during = allocations() - before;
  EXPECT_EQ(during, 0u) << "heap allocations in 200 steady ticks";
  EXPECT_GT(records, 0u);
}

TEST(AllocationTest, SteadyTicksAllocateNothingInTheArena) { expect_steady_ticks_allocate_nothing(kArena); }
TEST(AllocationTest, SteadyTicksAllocateNothingInTheDenseWorld) { expect_steady_ticks_allocate_nothing(kDense); }
// Keys, subscriptions with send rates and bypass team channels, all set before warm-up.
TEST(AllocationTest, SteadyTicksWithInterestKeysAllocateNothingInTheArena) {
  expect_steady_ticks_allocate_nothing(kArena, true);
}
TEST(AllocationTest, SteadyTicksWithInterestKeysAllocateNothingInTheDenseWorld) {
  expect_steady_ticks_allocate_nothing(kDense, true);
}

// Entities are destroyed and created between ticks at a steady rate (20 a tick, the same slots
// coming back from the free list); viewers are left alone.
void expect_churning_ticks_allocate_nothing(const SteadyWorldDef& steady_def) {
  SteadyWorld steady(steady_def);
  scenarios::Rng rng(5);
  std::uint64_t records = 0;
  auto churn = [&] {
    for (int i = 0; i < 20; ++i) {
      const std::size_t at = rng.below(static_cast<std::uint32_t>(steady.ids.size()));
      if (at % 10 == 0) continue;  // a viewer
      if (!steady.world->destroy_entity(steady.ids[at]).ok()) std::abort();
      const Result<EntityId> id = steady.world->create_entity({steady.walk->xs()[at], steady.walk->zs()[at], false});
      if (!id.ok()) std::abort();
      steady.ids[at] = *id;
    }
  };
  for (int t = 0; t < 50; ++t) {
    churn();
    records += steady.step();
  }
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) {
    churn();
    records += steady.step();
  }
  const std::uint64_t during = allocations() - before;
  EXPECT_EQ(during, 0u) << "heap allocations in 200 steady ticks with entity churn";
  EXPECT_GT(records, 0u);
}

TEST(AllocationTest, SteadyTicksWithEntityChurnAllocateNothingInTheArena) {
  expect_churning_ticks_allocate_nothing(kArena);
}
TEST(AllocationTest, SteadyTicksWithEntityChurnAllocateNothingInTheDenseWorld) {
  expect_churning_ticks_allocate_nothing(kDense);
}

}  // namespace
}  // namespace sightline
