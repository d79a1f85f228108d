// No heap allocation in a steady tick: this executable links support/alloc_counter, which replaces
// every global operator new and delete with a counting version, and counts across steady ticks.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <new>
#include <optional>
#include <vector>

#include "alloc_counter.h"
#include "jitter_walk.h"
#include "lattice_world.h"
#include "rng.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"
#include "steady_world.h"

namespace sightline {
namespace {

using testing::kArena;
using testing::kCappedArena;
using testing::kDense;
using testing::SteadyWorld;
using testing::SteadyWorldDef;

std::uint64_t allocations() { return support::allocation_count(); }

// A client's frame: the mirror applies a packet of updates for the 300 entities it holds (one
// larger than its ring had room for), and the game walks them for their latest states.
TEST(AllocationTest, AMirrorsSteadyPacketsAndItsWalkAllocateNothing) {
  MirrorDef def = default_mirror_def();
  def.history = 4;
  ClientMirror mirror = std::move(ClientMirror::create(def).value());
  std::vector<std::uint8_t> buffer(kMaxPacketBytes);
  std::vector<std::uint8_t> state(12, 1);
  std::vector<std::vector<std::uint8_t>> packets;
  {
    PacketWriter w(buffer, PacketHeader{Delivery::reliable, 0, 1, 0, {}});
    for (std::uint32_t i = 0; i < 300; ++i)
      ASSERT_TRUE(w.add_spawn(i, {i * 7, 1}, SpawnReason::near, false, state));
    const auto bytes = w.finish();
    packets.emplace_back(bytes.begin(), bytes.end());
  }
  for (std::uint32_t sequence = 1; sequence <= 40; ++sequence) {
    PacketWriter w(buffer, PacketHeader{Delivery::reliable, sequence, 1 + sequence, 300, {}});
    for (std::uint32_t i = 0; i < 300; ++i) {
      state.assign(i == 0 && sequence == 30 ? 40 : 12, static_cast<std::uint8_t>(sequence));
      ASSERT_TRUE(w.add_update({i * 7, 1}, state));
    }
    const auto bytes = w.finish();
    packets.emplace_back(bytes.begin(), bytes.end());
  }
  for (std::size_t p = 0; p < 10; ++p) ASSERT_TRUE(mirror.receive(packets[p]).ok());  // warm-up
  std::uint64_t walked = 0;
  const std::uint64_t before = allocations();
  for (std::size_t p = 10; p < packets.size(); ++p) {
    if (!mirror.receive(packets[p]).ok() || !mirror.anomalies().empty()) ADD_FAILURE() << "packet " << p;
    for (std::size_t i = 0; i < mirror.held_count(); ++i) {
      const std::optional<Snapshot> latest = mirror.snapshot(mirror.held_at(i));
      const std::optional<Snapshot> before_it = mirror.snapshot(mirror.held_at(i), 1);
      if (latest && before_it) walked += latest->payload.size() + before_it->payload.size();
    }
  }
  const std::uint64_t allocated = allocations() - before;
  // 31 packets, 12 + 12 bytes an entity, and the 40-byte state walked twice (latest, then before).
  EXPECT_EQ(walked, 31u * 300u * 24u + 2u * 28u);
  EXPECT_EQ(allocated, 1u) << "only the ring that had to grow for its 40-byte state";
}

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
TEST(AllocationTest, SteadyTicksAllocateNothingInTheDenseWorld) {
  expect_steady_ticks_allocate_nothing(kDense);
}
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
// The 2000 entities in 20 x 20 with R = 10: about 500 a grid cell, so the capped scan goes
// through the crowd index's sub-cells, which the walk moves between cells every tick.
TEST(AllocationTest, SteadyTicksInADenseCrowdWithACrowdCapAllocateNothing) {
  constexpr SteadyWorldDef kCrowdSpot{20.0f, 20.0f, 10.0f, 12.5f, 8};
  expect_steady_ticks_allocate_nothing(kCrowdSpot);
  expect_steady_ticks_allocate_nothing(kCrowdSpot, true, true, 2);
}

// Entities are destroyed and created between ticks at a steady rate (20 a tick, the same slots
// coming back from the free list); viewers are left alone.
void expect_churning_ticks_allocate_nothing(const SteadyWorldDef& steady_def, bool history = false) {
  SteadyWorld steady(steady_def);
  // The flight recorder then records destroyed members too.
  if (history) {
    for (const ClientId c : steady.clients) ASSERT_TRUE(steady.world->set_history_capacity(c, 4096).ok());
  }
  scenarios::Rng rng(5);
  std::uint64_t records = 0;
  auto churn = [&] {
    for (int i = 0; i < 20; ++i) {
      const std::size_t at = rng.below(static_cast<std::uint32_t>(steady.ids.size()));
      if (at % 10 == 0) continue;  // a viewer
      if (!steady.world->destroy_entity(steady.ids[at]).ok()) std::abort();
      const Result<EntityId> id =
          steady.world->create_entity({steady.walk->xs()[at], steady.walk->zs()[at], false});
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
TEST(AllocationTest, SteadyTicksWithEntityChurnAndTheFlightRecorderAllocateNothing) {
  expect_churning_ticks_allocate_nothing(kDense, /*history=*/true);
}

// The flight recorder on for every client: recording a tick's transitions allocates nothing
// (the rings are allocated when switched on).
TEST(AllocationTest, SteadyTicksWithTheFlightRecorderOnAllocateNothing) {
  SteadyWorld steady(kArena);
  for (const ClientId c : steady.clients) ASSERT_TRUE(steady.world->set_history_capacity(c, 4096).ok());
  std::uint64_t records = 0;
  for (int t = 0; t < 50; ++t) records += steady.step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) records += steady.step();
  EXPECT_EQ(allocations() - before, 0u) << "heap allocations in 200 steady ticks";
  std::size_t kept = 0;
  for (const ClientId c : steady.clients) kept += steady.world->history(c)->size();
  EXPECT_GT(kept, 1000u);
  EXPECT_GT(records, 0u);
}

// Recording every input of the whole relevance model, positions and ticks included, to a sink
// (here one that counts): the buffer is allocated when the World is made, never in a tick.
void count_bytes(void* context, std::span<const std::uint8_t> bytes) {
  *static_cast<std::uint64_t*>(context) += bytes.size();
}
TEST(AllocationTest, SteadyTicksRecordedAllocateNothing) {
  std::uint64_t recorded = 0;
  SteadyWorldDef def = kArena;
  def.recording = {&count_bytes, &recorded};
  expect_steady_ticks_allocate_nothing(def, true, true, 2);
  // Positions alone are 16 bytes an entity a tick: 2000 entities for 250 ticks.
  EXPECT_GT(recorded, 250u * 2000u * 16u);
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
      for (const EventRecord& r : stream->events)
        records += r.event + steady.world->events()[r.event].user_data;
    }
  };
  for (int t = 0; t < 50; ++t) step();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 200; ++t) step();
  EXPECT_EQ(allocations() - before, 0u) << "heap allocations in 200 steady ticks with events";
  EXPECT_GT(records, 0u);
}

// The Replicator on top of the whole model: priorities under a budget that leaves members waiting,
// paced entry, serialize-once payloads, a steady rate of events reliable and not; under
// unreliable delivery with acks that lag and skip.

// The steady state with 8 bytes that never change, where a delta saves bytes.
bool serialize_named_state(Stream& s, EntityId e, StatePart part, void* context) {
  std::uint32_t name = e.index * 2654435761u;
  std::uint32_t kind = e.index % 5;
  return s.serialize_bits(name, 32) && s.serialize_bits(kind, 32) &&
         testing::serialize_steady_state(s, e, part, context);
}

// The steady state with two entity references, to neighbours by index (some live, some not, some
// held by a client, some not): references made null per client, and refreshes as they arrive.
bool serialize_referring_state(Stream& s, EntityId e, StatePart part, void* context) {
  EntityId next{e.index + 1, e.generation};
  EntityId other{e.index ^ 7u, 1};
  return s.serialize_entity(next) && s.serialize_entity(other) &&
         testing::serialize_steady_state(s, e, part, context);
}

void expect_steady_sends_allocate_nothing(Delivery delivery, UpdateMode mode, bool deltas = false,
                                          bool references = false) {
  SteadyWorld steady(kArena, true, true);
  ReplicatorDef def;
  def.serialize = references ? serialize_referring_state
                  : deltas   ? serialize_named_state
                             : testing::serialize_steady_state;
  def.serialize_context = &*steady.world;
  def.delivery = delivery;
  def.mode = mode;
  def.budget_bytes = 300;
  def.entry_budget_bytes = 200;
  def.development = true;
  def.delta_updates = deltas;
  Replicator replicator = std::move(Replicator::create(*steady.world, def).value());
  for (std::size_t i = 0; i < steady.ids.size(); i += 13) {
    if (!replicator.set_priority(steady.ids[i], 3.0f).ok()) std::abort();
  }
  const EventClassId shot = *steady.world->create_event_class(
      {.radius = 40.0f, .when_absent = AbsentSubject::null_subject, .reliable = true});
  const EventClassId step_sound = *steady.world->create_event_class({.radius = 15.0f});
  scenarios::Rng rng(11);
  std::uint64_t bytes = 0;
  std::uint64_t pending = 0;
  std::uint64_t refreshes = 0;
  std::array<std::uint8_t, kAckBytes> ack{};
  auto step = [&](int t) {
    for (int i = 0; i < 10; ++i) {
      const EntityId subject = steady.ids[rng.below(static_cast<std::uint32_t>(steady.ids.size()))];
      const Position at = *steady.world->position(subject);
      if (!steady.world
               ->emit_event({.event_class = i % 2 == 0 ? shot : step_sound,
                             .x = at.x,
                             .z = at.z,
                             .space = *steady.world->space(subject),
                             .subject = subject})
               .ok()) {
        std::abort();
      }
    }
    // A message to a client a send, and one to everyone every tenth.
    const std::array<std::uint8_t, 6> note{'n', 'o', 't', 'e', static_cast<std::uint8_t>(t), 0};
    const std::span<const ClientId> live = steady.world->clients();
    if (!live.empty() && !replicator.send_message(live[static_cast<std::size_t>(t) % live.size()], note).ok())
      std::abort();
    if (t % 10 == 0 && !replicator.send_message_to_key({InterestKeyType::global, 0}, note).ok()) std::abort();
    steady.step();
    if (!replicator.send().ok()) std::abort();
    refreshes += replicator.stats().refreshes;
    for (const ClientId client : steady.world->clients()) {
      for (const std::span<const std::uint8_t> packet : *replicator.packets(client)) bytes += packet.size();
      const ClientSendStats stats = *replicator.client_stats(client);
      pending += stats.pending;
      // Acks come every third send and cover what was sent two sends ago at most.
      if (delivery == Delivery::unreliable && t % 3 == 0 && stats.reliable_next > 0) {
        encode_ack({static_cast<std::uint32_t>(stats.packets), stats.reliable_next - (t % 2), 0xfffffffbu},
                   ack);
        if (!replicator.receive_ack(client, ack).ok()) std::abort();
      }
      if (t % 5 == 0 &&
          !replicator.note_interaction(client, steady.ids[(client.index * 7 + 1) % steady.ids.size()]).ok()) {
        std::abort();
      }
    }
  };
  for (int t = 0; t < 80; ++t) step(t);
  const std::uint64_t before = allocations();
  for (int t = 80; t < 280; ++t) step(t);
  EXPECT_EQ(allocations() - before, 0u) << "heap allocations in 200 steady sends";
  EXPECT_GT(bytes, 0u);
  EXPECT_GT(replicator.stats().events, 0u);
  EXPECT_GT(replicator.stats().messages, 0u);
  EXPECT_GT(pending, 0u) << "the entry allowance must leave members waiting";
  EXPECT_GT(replicator.stats().updates_skipped + (mode == UpdateMode::fixed_rate ? 1u : 0u), 0u)
      << "the budget must leave members waiting";
  if (deltas) {
    EXPECT_GT(replicator.stats().delta_updates, 0u);
  }
  if (references) {
    EXPECT_GT(refreshes, 0u);
  }
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
TEST(AllocationTest, SteadySendsWithDeltaUpdatesAllocateNothingReliable) {
  expect_steady_sends_allocate_nothing(Delivery::reliable, UpdateMode::priority, true);
}
TEST(AllocationTest, SteadySendsWithDeltaUpdatesAllocateNothingUnreliable) {
  expect_steady_sends_allocate_nothing(Delivery::unreliable, UpdateMode::priority, true);
}
TEST(AllocationTest, SteadySendsWithEntityReferencesAllocateNothingReliable) {
  expect_steady_sends_allocate_nothing(Delivery::reliable, UpdateMode::priority, true, true);
}
TEST(AllocationTest, SteadySendsWithEntityReferencesAllocateNothingUnreliable) {
  expect_steady_sends_allocate_nothing(Delivery::unreliable, UpdateMode::priority, true, true);
}

// A crowded world of 16,384 entities where each is sent to several clients a send: the Replicator
// serializes every held entity's update ahead of the clients (replicator.h), on one thread and on
// three, and that allocates nothing either once warm.
void expect_sends_serialized_ahead_allocate_nothing(std::uint32_t threads) {
  WorldDef def = testing::lattice_world_def();
  def.threads = threads;
  def.thread_min_work = 0;
  testing::LatticeWorld lattice(def, 128, 8);
  World& world = lattice.world;
  // Serialized ahead, a worker writes the updates of its range of slots in slot order: an update
  // for a lower slot than the one before on the same thread comes about once a send per thread.
  // Serialized on first need, it comes in the clients' order, thousands of times a send.
  struct Order {
    const World* world;
    std::atomic<std::uint64_t> descents{0};
  } order{&world};
  ReplicatorDef rdef;
  rdef.serialize = [](Stream& s, EntityId e, StatePart part, void* context) {
    auto& o = *static_cast<Order*>(context);
    thread_local std::uint32_t last = 0;
    if (part == StatePart::update) {
      if (e.index < last) ++o.descents;
      last = e.index;
    }
    return testing::serialize_steady_state(s, e, part, const_cast<World*>(o.world));
  };
  rdef.serialize_context = &order;
  Replicator replicator = std::move(Replicator::create(world, rdef).value());
  scenarios::Rng rng(5);
  auto step = [&] {
    lattice.jitter_and_tick(rng, 0.05f);
    if (!replicator.send().ok()) std::abort();
  };
  // Tables creep past their early highs over the first ticks.
  for (int t = 0; t < 60; ++t) step();
  const std::uint64_t before = allocations();
  order.descents = 0;
  for (int t = 0; t < 30; ++t) step();
  EXPECT_EQ(allocations() - before, 0u)
      << "heap allocations in 30 steady sends on " << threads << " thread(s)";
  EXPECT_LE(order.descents.load(), 30u * (threads + 1)) << "the sends did not serialize ahead, in slot order";
}

// The grid's passes over the entities run on the World's workers from 32,768 slots: a steady
// tick of such a world on three threads allocates nothing, with the incremental build (small
// steps), with the full sort (large ones), and from 131,072 slots with the partitioned sort, of
// the cells its clients reach (a few clients) or of every cell.
void expect_large_world_ticks_allocate_nothing(std::uint32_t side, std::uint32_t every_client, float step) {
  WorldDef def = testing::lattice_world_def();
  def.threads = 3;
  def.thread_min_work = 0;
  testing::LatticeWorld lattice(def, side, every_client);
  scenarios::Rng rng(9);
  auto tick = [&] { lattice.jitter_and_tick(rng, step); };
  for (int t = 0; t < 40; ++t) tick();
  const std::uint64_t before = allocations();
  for (int t = 0; t < 20; ++t) tick();
  EXPECT_EQ(allocations() - before, 0u)
      << "heap allocations in 20 steady ticks of " << lattice.ids.size() << " entities";
}

TEST(AllocationTest, SteadyTicksOfALargeWorldOnThreeThreadsAllocateNothing) {
  expect_large_world_ticks_allocate_nothing(200, 64, 0.02f);    // 40,000: incremental builds
  expect_large_world_ticks_allocate_nothing(200, 64, 2.0f);     // most change cell: full sorts
  expect_large_world_ticks_allocate_nothing(380, 1444, 0.02f);  // 144,400: covered cells only
  expect_large_world_ticks_allocate_nothing(380, 64, 0.02f);    // clients everywhere: every cell
}

TEST(AllocationTest, SteadySendsSerializedAheadAllocateNothing) {
  expect_sends_serialized_ahead_allocate_nothing(1);
}
TEST(AllocationTest, SteadySendsSerializedAheadOnThreeThreadsAllocateNothing) {
  expect_sends_serialized_ahead_allocate_nothing(3);
}

}  // namespace
}  // namespace sightline
