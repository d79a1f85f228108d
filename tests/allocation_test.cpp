// No heap allocation in a steady tick: this executable links support/alloc_counter, which replaces
// every global operator new and delete with a counting version, and counts across steady ticks.
#include <gtest/gtest.h>

#include <cstdio>

#include <array>
#include <new>
#include <optional>
#include <vector>

#include "alloc_counter.h"
#include "jitter_walk.h"
#include "rng.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
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
  std::uint32_t crowd_cap = 0;
};

// The brief's arena: 2000 entities in 200 x 200, R = 10, L = 12.5, 200 clients (~16 per R-disc).
constexpr SteadyWorldDef kArena{200.0f, 200.0f, 10.0f, 12.5f};
// Denser and faster-changing: 2000 entities in 120 x 75, R = 4, L = 5; at the walk's speed
// members cross R far more often, so spawns and despawns run at a high steady rate.
constexpr SteadyWorldDef kDense{120.0f, 75.0f, 4.0f, 5.0f};
// The arena with a crowd cap under its ~16 per R-disc, so the cap selects every tick.
constexpr SteadyWorldDef kCappedArena{200.0f, 200.0f, 10.0f, 12.5f, 6};

struct SteadyWorld {
  /// With `keys`, entities carry Area, User and Global keys and every client has area
  /// subscriptions with send rates and a bypass team channel, all set before the first tick.
  /// With `structure` besides: spaces (a broadcast arena whose client count crosses its
  /// threshold, and a room that never asked for culling, under a drill every other 10 ticks),
  /// attachment chains, presenters, owners, extra origins and teleports every tick; walls, look-ahead
  /// and a visibility filter.
  explicit SteadyWorld(const SteadyWorldDef& steady_def, bool keys = false, bool with_structure = false,
                       std::uint32_t threads = 1)
      : structure(with_structure) {
    scenarios::JitterWalkDef walk_def;
    walk_def.entities = 2000;
    walk_def.width = steady_def.width;
    walk_def.height = steady_def.height;
    walk_def.seed = 42;
    walk.emplace(walk_def);
    WorldDef def = default_world_def();
    def.enter_radius = steady_def.enter_radius;
    def.leave_radius = steady_def.leave_radius;
    def.crowd_cap = steady_def.crowd_cap;
    def.tiers = default_distance_tiers();
    def.threads = threads;
    def.thread_min_work = 0;  // the pool's buffers are what a threaded run must not grow
    world.emplace(std::move(World::create(def).value()));
    for (std::size_t i = 0; i < walk->xs().size(); ++i) {
      ids.push_back(*world->create_entity({walk->xs()[i], walk->zs()[i], i % 500 == 7}));
    }
    for (std::size_t i = 0; i < ids.size(); i += 10) clients.push_back(*world->create_client(ids[i]));
    if (keys) set_keys();
    if (structure) set_structure();
  }

  void set_structure() {
    SpaceDef arena_def;
    arena_def.culling = Culling::on;
    // The arena holds 20 viewers: the mover below takes it to 21 and back, across the threshold.
    arena_def.broadcast_threshold = 20;
    arena_def.broadcast_margin = 0;
    arena = *world->create_space(arena_def);
    room = *world->create_space({});
    for (std::size_t i = 0; i < ids.size(); ++i) {
      Status status;
      // Keys belong to roots: a child gives its own up first.
      if (i % 20 == 3 || i % 20 == 4) status = world->set_global_interest_key(ids[i]);
      if (status.ok() && i % 20 == 3) status = world->attach(ids[i], ids[i + 1]);
      if (status.ok() && i % 20 == 4) status = world->attach(ids[i], ids[i + 1]);
      if (status.ok() && i % 250 == 9) status = world->set_presenter(ids[i], true);
      if (status.ok() && i % 100 == 11) status = world->set_owner(ids[i], clients[(i / 100) % clients.size()]);
      // Entities 400..599 live in the arena, 600..699 in the room (their viewers with them).
      if (status.ok() && i >= 400 && i < 600 && world->parent(ids[i])->is_null()) status = world->set_space(ids[i], arena);
      if (status.ok() && i >= 600 && i < 700 && world->parent(ids[i])->is_null()) status = world->set_space(ids[i], room);
      if (!status.ok()) {
        std::fprintf(stderr, "entity %zu: %s\n", i, status.message().c_str());
        std::abort();
      }
    }
    for (std::size_t c = 0; c < clients.size(); c += 7) {
      if (!world->add_origin(clients[c], ids[(c * 37 + 5) % ids.size()]).ok()) std::abort();
    }
    // Sight in the default space: a lattice of short walls, look-ahead, velocities, a filter.
    std::vector<WallSegment> walls;
    for (float x = 0.0f; x < 200.0f; x += 20.0f) {
      for (float z = 0.0f; z < 200.0f; z += 20.0f) walls.push_back({x, z, x + 6.0f, z + 2.0f});
    }
    if (!world->set_walls(world->default_space(), walls).ok()) std::abort();
    for (std::size_t i = 0; i < ids.size(); i += 3) {
      if (!world->set_velocity(ids[i], static_cast<float>(i % 7) - 3.0f, 1.5f).ok()) std::abort();
    }
    for (std::size_t c = 0; c < clients.size(); ++c) {
      if (!world->set_look_ahead(clients[c], 0.1f * static_cast<float>(c % 3)).ok()) std::abort();
    }
    world->set_visibility_filter([](void*, ClientId client, EntityId entity) { return (client.index + entity.index) % 17 != 0; },
                                 nullptr);
  }

  // Between ticks: a few teleports, one viewer in and out of the arena (its count crosses the
  // threshold), the room's drill on and off.
  void move_structure() {
    ++structure_ticks;
    for (std::size_t k = 0; k < 5; ++k) {
      const std::size_t i = (structure_ticks * 131 + k * 977) % ids.size();
      if (!world->teleport(ids[i], walk->xs()[(i + 1) % ids.size()], walk->zs()[(i + 1) % ids.size()]).ok()) {
        std::abort();
      }
    }
    const EntityId mover = ids[10];
    if (!world->set_space(mover, structure_ticks % 3 == 0 ? arena : world->default_space()).ok()) std::abort();
    const Status drill = structure_ticks % 20 < 10 ? world->set_culling_drill(room, 10.0f, 12.0f)
                                                   : world->clear_culling_drill(room);
    if (!drill.ok()) std::abort();
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
    if (structure) move_structure();
    const TickStats stats = world->tick();
    std::uint64_t records = stats.spawns + stats.updates + stats.despawns;
    if (structure) broadcast_switches += world->space_state(arena)->broadcasting != was_broadcasting;
    if (structure) was_broadcasting = world->space_state(arena)->broadcasting;
    for (const ClientId client : world->clients()) {
      const Result<ClientStream> stream = world->stream(client);
      const Result<std::span<const EntityId>> set = world->interest_set(client);
      if (!stream.ok() || !set.ok()) std::abort();
      for (const SpawnRecord& s : stream->spawns) records += s.entity.index;
      for (const EntityId u : stream->updates) records += u.index;
      for (const DespawnRecord& d : stream->despawns) records += d.entity.index;
      records += set->size();
    }
    return records;
  }

  std::optional<scenarios::JitterWalk> walk;
  std::optional<World> world;
  std::vector<EntityId> ids;
  std::vector<ClientId> clients;
  bool structure = false;
  std::uint64_t structure_ticks = 0;
  std::uint64_t broadcast_switches = 0;
  bool was_broadcasting = false;
  SpaceId arena;
  SpaceId room;
};

void expect_steady_ticks_allocate_nothing(const SteadyWorldDef& steady_def, bool keys = false,
                                          bool structure = false, std::uint32_t threads = 1) {
  const std::uint64_t at_start = allocations();
  SteadyWorld steady(steady_def, keys, structure, threads);
  // The World's own allocations go through the counted operator new, or a zero below proves nothing.
  ASSERT_GT(allocations() - at_start, 0u);
  std::uint64_t records = 0;
  for (int t = 0; t < 50; ++t) records += steady.step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) records += steady.step();
  const std::uint64_t during = allocations() - before;
  EXPECT_EQ(during, 0u) << "heap allocations in 200 steady ticks";
  EXPECT_GT(records, 0u);
  if (structure) {
    EXPECT_GT(steady.broadcast_switches, 100u) << "the arena's mode must switch back and forth";
  }
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

// Everything of the relevance model at once: keys, spaces with broadcast and drill switching,
// attachments, presenters, owners, origins and teleports.
TEST(AllocationTest, SteadyTicksWithTheWholeRelevanceModelAllocateNothingInTheArena) {
  expect_steady_ticks_allocate_nothing(kArena, true, true);
}
TEST(AllocationTest, SteadyTicksWithTheWholeRelevanceModelAllocateNothingInTheDenseWorld) {
  expect_steady_ticks_allocate_nothing(kDense, true, true);
}

// Threads: each worker's outputs and scratch keep their high-water marks too.
TEST(AllocationTest, SteadyTicksOnThreeThreadsAllocateNothingInTheArena) {
  expect_steady_ticks_allocate_nothing(kArena, true, true, 3);
}
TEST(AllocationTest, SteadyTicksOnTwoThreadsAllocateNothingInTheDenseWorld) {
  expect_steady_ticks_allocate_nothing(kDense, true, true, 2);
}
TEST(AllocationTest, SteadyTicksWithACrowdCapAllocateNothing) {
  expect_steady_ticks_allocate_nothing(kCappedArena);
  expect_steady_ticks_allocate_nothing(kCappedArena, true, true, 2);
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

// A steady event rate: 40 events a tick of three classes (15, 40 and 100 m, one per policy), at
// entities' positions and naming them, in the default space and the arena, emitted between ticks.
TEST(AllocationTest, SteadyEventRateAllocatesNothing) {
  SteadyWorld steady(kArena, true, true);
  const EventClassId classes[] = {*steady.world->create_event_class({15.0f, AbsentSubject::drop}),
                                  *steady.world->create_event_class({40.0f, AbsentSubject::null_subject}),
                                  *steady.world->create_event_class({100.0f, AbsentSubject::send_as_is})};
  scenarios::Rng rng(9);
  std::uint64_t records = 0;
  auto step = [&] {
    for (int i = 0; i < 40; ++i) {
      const EntityId subject = steady.ids[rng.below(static_cast<std::uint32_t>(steady.ids.size()))];
      const Position at = *steady.world->position(subject);
      const Result<SpaceId> space = steady.world->space(subject);
      const Result<std::uint32_t> index = steady.world->emit_event(
          {classes[rng.below(3)], at.x, at.z, *space, subject, static_cast<std::uint64_t>(i)});
      if (!index.ok()) std::abort();
    }
    records += steady.step();
    for (const ClientId client : steady.world->clients()) {
      const Result<ClientStream> stream = steady.world->stream(client);
      for (const EventRecord& r : stream->events) records += r.event + steady.world->events()[r.event].user_data;
    }
  };
  for (int t = 0; t < 50; ++t) step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) step();
  EXPECT_EQ(allocations() - before, 0u) << "heap allocations in 200 steady ticks with events";
  EXPECT_GT(records, 0u);
}

// The Replicator on top of the whole model: priorities under a budget that leaves members waiting,
// paced entry, serialize-once payloads; under unreliable delivery with acks that lag and skip.
bool serialize_position(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  Position p = *world.position(e);
  if (!s.serialize_quantized(p.x, -1000.0f, 1000.0f, 0.01f)) return false;
  if (!s.serialize_quantized(p.z, -1000.0f, 1000.0f, 0.01f)) return false;
  std::uint32_t health = e.index % 101;
  return part == StatePart::update || s.serialize_uint(health, 0, 100);
}

void expect_steady_sends_allocate_nothing(Delivery delivery, UpdateMode mode) {
  SteadyWorld steady(kArena, true, true);
  ReplicatorDef def;
  def.serialize = serialize_position;
  def.serialize_context = &*steady.world;
  def.delivery = delivery;
  def.mode = mode;
  def.budget_bytes = 300;
  def.entry_budget_bytes = 200;
  def.development = true;
  Replicator replicator = std::move(Replicator::create(*steady.world, def).value());
  for (std::size_t i = 0; i < steady.ids.size(); i += 13) {
    if (!replicator.set_priority(steady.ids[i], 3.0f).ok()) std::abort();
  }
  std::uint64_t bytes = 0;
  std::uint64_t pending = 0;
  std::array<std::uint8_t, kAckBytes> ack{};
  auto step = [&](int t) {
    steady.step();
    if (!replicator.send().ok()) std::abort();
    for (const ClientId client : steady.world->clients()) {
      for (const std::span<const std::uint8_t> packet : *replicator.packets(client)) bytes += packet.size();
      const ClientSendStats stats = *replicator.client_stats(client);
      pending += stats.pending;
      // Acks come every third send and cover what was sent two sends ago at most.
      if (delivery == Delivery::unreliable && t % 3 == 0 && stats.reliable_next > 0) {
        encode_ack({static_cast<std::uint32_t>(stats.packets), stats.reliable_next - (t % 2)}, ack);
        if (!replicator.receive_ack(client, ack).ok()) std::abort();
      }
      if (t % 5 == 0 && !replicator.note_interaction(client, steady.ids[(client.index * 7 + 1) % steady.ids.size()]).ok()) {
        std::abort();
      }
    }
  };
  for (int t = 0; t < 80; ++t) step(t);
  const std::uint64_t before = allocations();
  for (int t = 80; t < 280; ++t) step(t);
  EXPECT_EQ(allocations() - before, 0u) << "heap allocations in 200 steady sends";
  EXPECT_GT(bytes, 0u);
  EXPECT_GT(pending, 0u) << "the entry allowance must leave members waiting";
  EXPECT_GT(replicator.stats().updates_skipped + (mode == UpdateMode::fixed_rate ? 1u : 0u), 0u)
      << "the budget must leave members waiting";
}

TEST(AllocationTest, SteadySendsAllocateNothingReliable) {
  expect_steady_sends_allocate_nothing(Delivery::reliable, UpdateMode::priority);
}
TEST(AllocationTest, SteadySendsAllocateNothingUnreliable) {
  expect_steady_sends_allocate_nothing(Delivery::unreliable, UpdateMode::priority);
}
TEST(AllocationTest, SteadySendsAllocateNothingAtFixedRate) {
  expect_steady_sends_allocate_nothing(Delivery::unreliable, UpdateMode::fixed_rate);
}

}  // namespace
}  // namespace sightline
