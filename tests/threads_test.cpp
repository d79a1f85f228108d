// Threads change nothing but speed: the whole model's records, sets, events and answers are the
// same for 1, 2, 3 and 4 threads, tick by tick, and the brute-force oracle agrees with each. This
// file also runs under ThreadSanitizer in make test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lattice_world.h"
#include "random_run.h"
#include "rng.h"
#include "sightline/replicator.h"
#include "sightline/world.h"
#include "tick_fingerprint.h"
#include "toy_task_system.h"

namespace sightline {
namespace {

// A random run of 30 ticks with keys, relevance and structure, on `threads` workers or the
// toy task system.
testing::RandomRunDef run_def(std::uint64_t seed, std::uint32_t threads,
                              testing::ToyTaskSystem* task_system) {
  testing::RandomRunDef def;
  def.seed = seed;
  def.ticks = 30;
  def.max_entities = 120;
  def.max_clients = 40;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.threads = threads;
  if (task_system != nullptr) {
    def.enqueue_task = &testing::ToyTaskSystem::enqueue;
    def.finish_task = &testing::ToyTaskSystem::finish;
    def.task_user_context = task_system;
  }
  return def;
}

std::vector<std::uint64_t> run(std::uint64_t seed, std::uint32_t threads,
                               testing::ToyTaskSystem* task_system = nullptr) {
  testing::RandomRunDef def = run_def(seed, threads, task_system);
  def.tiers = seed % 2 == 0 ? testing::TierMode::preset : testing::TierMode::custom;
  def.sight = true;
  std::vector<std::uint64_t> prints;
  testing::run_random(def, [&](testing::MirroredWorld& mirror, const TickStats& stats) {
    prints.push_back(testing::tick_fingerprint(mirror.world(), stats));
  });
  return prints;
}

TEST(ThreadsTest, RecordsAreIdenticalForAnyThreadCount) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::vector<std::uint64_t> one = run(seed, 1);
    ASSERT_FALSE(one.empty());
    for (const std::uint32_t threads : {2u, 3u, 4u}) {
      EXPECT_EQ(run(seed, threads), one) << "seed " << seed << ", " << threads << " threads";
      if (HasFailure()) return;
    }
  }
}

// The game's task system (WorldDef::enqueue_task) in place of the World's pool: its ranges come
// in uneven sizes, last first, on workers of its own, and the records are those of one thread.
TEST(ThreadsTest, AGamesTaskSystemGivesTheRecordsOfOneThread) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const std::vector<std::uint64_t> one = run(seed, 1);
    for (const std::uint32_t workers : {2u, 3u}) {
      testing::ToyTaskSystem task_system(workers);
      EXPECT_EQ(run(seed, workers, &task_system), one) << "seed " << seed << ", " << workers << " workers";
      EXPECT_GT(task_system.tasks(), 0u);
      EXPECT_GT(task_system.ranges(), task_system.tasks());
      if (HasFailure()) return;
    }
  }
}

// The send on the same workers: a serializer of the World's positions and a reference to a
// neighbour by index (live or not, held or not) that fails for some entities, a budget that
// leaves most updates for later, unreliable delivery with a client that acks every other send,
// and development mode's promise check.
bool serialize_position(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  if (e.index % 29 == 7) return false;
  Position p = *world.position(e);
  EntityId next{e.index + 1, e.generation};
  if (!s.serialize_float(p.x) || !s.serialize_float(p.z) || !s.serialize_entity(next)) return false;
  std::uint32_t index = e.index;
  return part == StatePart::update || s.serialize_uint(index, 0, 1u << 20);
}

struct SendPrint {
  std::vector<std::uint64_t> packets;  // a hash of every client's packets, send by send
  std::vector<std::string> errors;
  std::vector<std::uint64_t> totals;  // SendStats fields, send by send
  std::uint64_t events = 0;
  friend bool operator==(const SendPrint&, const SendPrint&) = default;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull + (h >> 29); }

SendPrint send_run(std::uint64_t seed, std::uint32_t threads, Delivery delivery,
                   testing::ToyTaskSystem* task_system = nullptr) {
  testing::RandomRunDef def = run_def(seed, threads, task_system);
  def.tiers = testing::TierMode::preset;
  SendPrint print;
  std::optional<Replicator> replicator;
  EventClassId shot;
  EventClassId step;
  testing::run_random(def, [&](testing::MirroredWorld& mirror, const TickStats&) {
    World& world = mirror.world();
    if (!replicator) {
      shot = *world.create_event_class(
          {.radius = 20.0f, .when_absent = AbsentSubject::null_subject, .reliable = true});
      step = *world.create_event_class({.radius = 6.0f, .when_absent = AbsentSubject::send_as_is});
      ReplicatorDef rdef = default_replicator_def();
      rdef.serialize = serialize_position;
      rdef.serialize_context = &world;
      rdef.budget_bytes = 160;
      rdef.entry_budget_bytes = 200;
      rdef.delivery = delivery;
      rdef.development = true;
      rdef.delta_updates = seed % 2 == 0;
      replicator.emplace(*Replicator::create(world, rdef));
    }
    const Status sent = replicator->send();
    print.errors.push_back(sent.message());
    std::uint64_t h = 0;
    for (const ClientId client : world.clients()) {
      h = mix(h, client.index);
      for (const std::span<const std::uint8_t> packet : *replicator->packets(client)) {
        for (const std::uint8_t byte : packet) h = mix(h, byte);
        AckPacket ack;
        ack.latest_sequence = static_cast<std::uint32_t>(replicator->client_stats(client)->packets - 1);
        ack.reliable_applied = replicator->client_stats(client)->reliable_next;
        ack.received = 0xfffffff5u;  // a few packets not confirmed
        std::array<std::uint8_t, kAckBytes> bytes{};
        encode_ack(ack, bytes);
        if ((replicator->send_count() + client.index) % 2 == 0) {
          EXPECT_TRUE(replicator->receive_ack(client, bytes).ok());
        }
      }
    }
    print.packets.push_back(h);
    // Events for the next tick: about each client's viewer, and about a member of its set.
    for (const ClientId client : world.clients()) {
      const EntityId viewer = *world.viewer(client);
      const Position p = *world.position(viewer);
      const std::span<const EntityId> set = *world.interest_set(client);
      const EntityId other = set.empty() ? viewer : set[set.size() / 2];
      EXPECT_TRUE(world
                      .emit_event({.event_class = shot,
                                   .x = p.x,
                                   .z = p.z,
                                   .space = *world.space(viewer),
                                   .subject = other,
                                   .user_data = client.index})
                      .ok());
      EXPECT_TRUE(
          world
              .emit_event(
                  {.event_class = step, .x = p.x, .z = p.z, .space = *world.space(viewer), .subject = viewer})
              .ok());
    }
    const SendStats& t = replicator->stats();
    print.events += t.events;
    for (const std::uint64_t v : {t.packets,
                                  t.bytes,
                                  t.spawns,
                                  t.updates,
                                  t.delta_updates,
                                  t.refreshes,
                                  t.despawns,
                                  t.resends,
                                  t.updates_skipped,
                                  t.pending,
                                  std::uint64_t{t.max_pending},
                                  t.spawns_delayed,
                                  t.spawn_delay_sends,
                                  std::uint64_t{t.longest_wait},
                                  t.serialize_calls,
                                  t.serialized_bytes,
                                  t.serialize_errors,
                                  t.promise_violations,
                                  t.events,
                                  t.event_bytes,
                                  t.events_dropped}) {
      print.totals.push_back(v);
    }
    print.totals.push_back(replicator->promise_violations().size());
    // The World goes when the run ends, and the Replicator must go before it.
    if (print.packets.size() == def.ticks) replicator.reset();
  });
  return print;
}

TEST(ThreadsTest, PacketsAreIdenticalForAnyThreadCount) {
  for (const Delivery delivery : {Delivery::reliable, Delivery::unreliable}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const SendPrint one = send_run(seed, 1, delivery);
      ASSERT_EQ(one.packets.size(), 30u);
      EXPECT_GT(one.events, 100u);
      for (const std::uint32_t threads : {2u, 4u, 8u}) {
        EXPECT_TRUE(send_run(seed, threads, delivery) == one)
            << "seed " << seed << ", " << threads << " threads, delivery " << static_cast<int>(delivery);
        if (HasFailure()) return;
      }
      testing::ToyTaskSystem task_system(3);
      EXPECT_TRUE(send_run(seed, 3, delivery, &task_system) == one) << "seed " << seed << ", a task system";
      if (HasFailure()) return;
    }
  }
}

// A world large enough for the grid's passes over the entities to run on the workers (36,864
// entities, each within a little over a tenth of a cell of its place, so some change cell every
// tick) and crowded enough for the send to serialize ahead (2,304 clients of about 50 members):
// the same packets, totals and errors on 1 and 4 threads and on a game's task system (17 s under
// ThreadSanitizer with eight sends on 1, 2 and 4 threads: five sends, and two thread counts).
SendPrint large_send_run(std::uint32_t threads, testing::ToyTaskSystem* task_system, std::uint64_t& updates) {
  WorldDef def = testing::lattice_world_def();
  def.threads = threads;
  if (task_system != nullptr) {
    def.enqueue_task = testing::ToyTaskSystem::enqueue;
    def.finish_task = testing::ToyTaskSystem::finish;
    def.task_user_context = task_system;
  }
  testing::LatticeWorld lattice(def, 192, 16);
  World& world = lattice.world;
  ReplicatorDef rdef = default_replicator_def();
  rdef.serialize = serialize_position;
  rdef.serialize_context = &world;
  Replicator replicator = std::move(Replicator::create(world, rdef).value());
  scenarios::Rng rng(77);
  SendPrint print;
  updates = ~std::uint64_t{0};  // the fewest of any send after the first
  for (int t = 0; t < 5; ++t) {
    lattice.jitter_and_tick(rng, 0.6f);
    print.errors.push_back(replicator.send().message());
    std::uint64_t h = 0;
    for (const ClientId client : world.clients()) {
      for (const std::span<const std::uint8_t> packet : *replicator.packets(client)) {
        for (const std::uint8_t byte : packet) h = mix(h, byte);
      }
    }
    print.packets.push_back(h);
    const SendStats& st = replicator.stats();
    for (const std::uint64_t v : {st.packets, st.bytes, st.spawns, st.updates, st.updates_skipped,
                                  st.serialize_calls, st.serialized_bytes, st.serialize_errors}) {
      print.totals.push_back(v);
    }
    if (t > 0) updates = std::min(updates, st.updates);
  }
  return print;
}

TEST(ThreadsTest, ALargeWorldsPacketsAreIdenticalForAnyThreadCount) {
  std::uint64_t fewest_updates = 0;
  const SendPrint one = large_send_run(1, nullptr, fewest_updates);
  // From the second send on, at least two update records a slot: every later send serialized ahead.
  EXPECT_GE(fewest_updates, 2u * 192u * 192u);
  EXPECT_NE(one.errors.back(), "") << "the serializer fails for some entities; a send reports the lowest";
  std::uint64_t ignored = 0;
  EXPECT_TRUE(large_send_run(4, nullptr, ignored) == one) << "4 threads";
  testing::ToyTaskSystem task_system(3);
  const SendPrint toy = large_send_run(3, &task_system, ignored);
  EXPECT_TRUE(toy == one) << "a task system";
}

TEST(ThreadsTest, HalfATaskSystemIsRefused) {
  WorldDef def = default_world_def();
  def.enqueue_task = &testing::ToyTaskSystem::enqueue;
  const Result<World> world = World::create(def);
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.status().code(), ErrorCode::invalid_def);
  EXPECT_NE(world.status().message().find("finish_task is null"), std::string::npos)
      << world.status().message();
  def.enqueue_task = nullptr;
  def.finish_task = &testing::ToyTaskSystem::finish;
  const Result<World> other = World::create(def);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("enqueue_task is null"), std::string::npos)
      << other.status().message();
}

// WorldDef::thread_min_work: a world whose work crosses the threshold back and forth (the radius
// grows and shrinks) switches between the pool and the calling thread, with the same records as
// one thread throughout.
std::vector<std::uint64_t> crossing_run(std::uint32_t threads) {
  WorldDef def = default_world_def();
  def.enter_radius = 3.0f;
  def.leave_radius = 4.0f;
  def.threads = threads;
  World world = *World::create(def);
  std::vector<EntityId> entities;
  for (int i = 0; i < 400; ++i) {
    const float x = static_cast<float>(i % 20) * 2.5f + 0.3f * static_cast<float>(i % 7);
    const float z = static_cast<float>(i / 20) * 2.5f + 0.2f * static_cast<float>(i % 5);
    entities.push_back(*world.create_entity(EntityDef{x, z, false}));
  }
  for (int i = 0; i < 80; ++i) (void)*world.create_client(entities[static_cast<std::size_t>(i) * 5]);
  std::vector<std::uint64_t> prints;
  for (int t = 0; t < 60; ++t) {
    // About 5 members a client (work 1,646 at tick 9), then about 135 (12,095 at tick 19).
    if (t % 20 == 0) {
      EXPECT_TRUE(world.set_radii(3.0f, 4.0f).ok());
    }
    if (t % 20 == 10) {
      EXPECT_TRUE(world.set_radii(20.0f, 22.0f).ok());
    }
    for (std::size_t i = 0; i < entities.size(); ++i) {
      const Position p = *world.position(entities[i]);
      const float step = 0.1f * static_cast<float>((i * 7 + static_cast<std::size_t>(t)) % 5) - 0.2f;
      EXPECT_TRUE(world.set_position(entities[i], p.x + step, p.z - step).ok());
    }
    const TickStats stats = world.tick();
    prints.push_back(testing::tick_fingerprint(world, stats));
    if (t == 9) {
      EXPECT_LT(stats.members + 16 * 80, def.thread_min_work);
    }
    if (t == 19) {
      EXPECT_GT(stats.members + 16 * 80, def.thread_min_work);
    }
  }
  return prints;
}

TEST(ThreadsTest, RecordsAreIdenticalAcrossThePoolThreshold) {
  const std::vector<std::uint64_t> one = crossing_run(1);
  EXPECT_EQ(crossing_run(2), one);
  EXPECT_EQ(crossing_run(3), one);
}

TEST(ThreadsTest, AThreadCountOutsideItsRangeIsRefused) {
  WorldDef def = default_world_def();
  def.threads = 0;
  auto w = World::create(def);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("threads is 0"), std::string::npos);
  def.threads = kMaxThreads + 1;
  EXPECT_FALSE(World::create(def).ok());
  def.threads = 4;
  EXPECT_TRUE(World::create(def).ok());
}

}  // namespace
}  // namespace sightline
