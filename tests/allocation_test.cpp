// No heap allocation in a steady tick: every global operator new and delete is replaced by a
// counting version (this executable only), and allocations are counted across steady ticks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <vector>

#include "jitter_walk.h"
#include "rng.h"
#include "sightline/world.h"

namespace {

std::atomic<std::uint64_t> g_allocations{0};

void* counted_malloc(std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_aligned(std::size_t size, std::align_val_t align) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const auto alignment = static_cast<std::size_t>(align);
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;  // aligned_alloc's rule
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

void* counted_or_throw(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}

void* counted_aligned_or_throw(std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned(size, align)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return counted_or_throw(size); }
void* operator new[](std::size_t size) { return counted_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new(std::size_t size, std::align_val_t align) { return counted_aligned_or_throw(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return counted_aligned_or_throw(size, align); }
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace sightline {
namespace {

std::uint64_t allocations() { return g_allocations.load(std::memory_order_relaxed); }

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

// The reference motion at a larger scale: 2000 entities in a world sized for ~16 per R-disc,
// 200 of them clients, hysteresis L = 1.25 R and the preset tiers.
struct SteadyWorld {
  SteadyWorld() {
    scenarios::JitterWalkDef walk_def;
    walk_def.entities = 2000;
    walk_def.width = 120.0f;
    walk_def.height = 75.0f;
    walk_def.seed = 42;
    walk.emplace(walk_def);
    WorldDef def = default_world_def();
    def.enter_radius = 4.0f;
    def.leave_radius = 5.0f;
    def.tiers = default_distance_tiers();
    world.emplace(std::move(World::create(def).value()));
    for (std::size_t i = 0; i < walk->xs().size(); ++i) {
      ids.push_back(*world->create_entity({walk->xs()[i], walk->zs()[i], i % 500 == 7}));
    }
    for (std::size_t i = 0; i < ids.size(); i += 10) clients.push_back(*world->create_client(ids[i]));
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

TEST(AllocationTest, SteadyTicksAllocateNothing) {
  SteadyWorld steady;
  std::uint64_t records = 0;
  for (int t = 0; t < 50; ++t) records += steady.step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) records += steady.step();
  const std::uint64_t during = allocations() - before;
  EXPECT_EQ(during, 0u) << "heap allocations in 200 steady ticks";
  EXPECT_GT(records, 0u);
}

// Entities are destroyed and created between ticks at a steady rate (20 a tick, the same slots
// coming back from the free list); viewers are left alone.
TEST(AllocationTest, SteadyTicksWithEntityChurnAllocateNothing) {
  SteadyWorld steady;
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

}  // namespace
}  // namespace sightline
