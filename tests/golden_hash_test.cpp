// The golden determinism hash: seeded runs whose every record, set, event and packet byte is
// hashed and compared with a value pinned here. A change to the library that keeps its behaviour
// keeps these values; a change of behaviour must change them on purpose, in its own commit, and
// say why. Any thread count gives the same values.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "jitter_walk.h"
#include "random_run.h"
#include "rng.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"
#include "steady_world.h"
#include "tick_fingerprint.h"

namespace sightline::testing {
namespace {

// The reference run: 120 walkers in 12 x 7.5, each its own client's viewer, R = L = 1.6.
std::uint64_t reference_run_hash(std::uint32_t threads) {
  scenarios::JitterWalk walk({});
  WorldDef def = default_world_def();
  def.enter_radius = 1.6f;
  def.leave_radius = 1.6f;
  def.threads = threads;
  def.thread_min_work = 0;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i) {
    ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i]}));
    EXPECT_TRUE(world.create_client(ids.back()).ok());
  }
  Fingerprint hash;
  for (int t = 0; t < 400; ++t) {
    walk.step();
    EXPECT_TRUE(world.set_positions(ids, walk.xs(), walk.zs()).ok());
    hash.add(tick_fingerprint(world, world.tick()));
  }
  return hash.h;
}

// The arena with every relevance feature on (keys, spaces switching broadcast, drills,
// attachments, presenters, owners, origins, teleports, walls, look-ahead, a filter, the preset
// tiers, a crowd cap) and 30 events a tick of three classes, one per absent-subject policy.
std::uint64_t arena_hash(const SteadyWorldDef& steady_def, std::uint32_t threads) {
  SteadyWorld steady(steady_def, true, true, threads);
  const EventClassId classes[] = {*steady.world->create_event_class({15.0f, AbsentSubject::drop}),
                                  *steady.world->create_event_class({40.0f, AbsentSubject::null_subject}),
                                  *steady.world->create_event_class({100.0f, AbsentSubject::send_as_is})};
  scenarios::Rng rng(11);
  Fingerprint hash;
  for (int t = 0; t < 100; ++t) {
    for (std::uint64_t i = 0; i < 30; ++i) {
      const EntityId subject = steady.ids[rng.below(static_cast<std::uint32_t>(steady.ids.size()))];
      const Position at = *steady.world->position(subject);
      EXPECT_TRUE(
          steady.world
              ->emit_event({classes[rng.below(3)], at.x, at.z, *steady.world->space(subject), subject, i})
              .ok());
    }
    if (t % 7 == 3) {  // churn: an entity destroyed and one created in its place
      const std::size_t at = 1 + 10 * rng.below(199) + rng.below(9);
      if (steady.world->destroy_entity(steady.ids[at]).ok()) {
        steady.ids[at] = *steady.world->create_entity({steady.walk->xs()[at], steady.walk->zs()[at]});
      }
    }
    const std::uint64_t before = steady.structure_ticks;
    steady.step();
    EXPECT_EQ(steady.structure_ticks, before + 1);
    // step() read the streams; hash them again, with the stats of the tick just run.
    hash.add(tick_fingerprint(*steady.world, steady.last_stats));
  }
  return hash.h;
}

// The random runs with every input kind at once, as the oracle tests drive them.
std::uint64_t random_runs_hash() {
  Fingerprint hash;
  std::uint32_t ticks = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    RandomRunDef def;
    def.seed = 7000 + seed;
    def.tiers = TierMode::custom;
    def.keys = true;
    def.relevance = true;
    def.structure = true;
    def.sight = true;
    def.crowd_cap = true;
    def.ticks = 40;
    run_random(def, [&](MirroredWorld& mirror, const TickStats& stats) {
      EXPECT_EQ(mirror.error(), "");
      hash.add(tick_fingerprint(mirror.world(), stats));
      ++ticks;
    });
  }
  EXPECT_EQ(ticks, 8u * 40u) << "a run stopped early";
  return hash.h;
}

// The Replicator over the arena with every feature: priorities, paced entry and a budget that
// leave members waiting, interactions; under unreliable delivery, acks that lag and skip.
std::uint64_t send_hash(Delivery delivery, UpdateMode mode, std::uint32_t threads) {
  SteadyWorld steady(kArena, true, true, threads);
  ReplicatorDef def;
  def.serialize = serialize_steady_state;
  def.serialize_context = &*steady.world;
  def.delivery = delivery;
  def.mode = mode;
  def.budget_bytes = 400;
  def.entry_budget_bytes = 300;
  def.development = true;
  Replicator replicator = std::move(Replicator::create(*steady.world, def).value());
  for (std::size_t i = 0; i < steady.ids.size(); i += 13)
    EXPECT_TRUE(replicator.set_priority(steady.ids[i], 3.0f).ok());
  Fingerprint hash;
  std::array<std::uint8_t, kAckBytes> ack{};
  for (int t = 0; t < 100; ++t) {
    steady.step();
    EXPECT_TRUE(replicator.send().ok());
    const SendStats totals = replicator.stats();
    for (const std::uint64_t v :
         {totals.packets, totals.bytes, totals.spawns, totals.updates, totals.despawns, totals.resends,
          totals.updates_skipped, totals.pending, totals.spawns_delayed, totals.spawn_delay_sends,
          totals.serialize_calls, totals.serialized_bytes, totals.promise_violations}) {
      hash.add(v);
    }
    for (const ClientId client : steady.world->clients()) {
      for (const std::span<const std::uint8_t> packet : *replicator.packets(client)) {
        hash.add(packet.size());
        for (const std::uint8_t byte : packet) hash.add(byte);
      }
      const ClientSendStats stats = *replicator.client_stats(client);
      hash.add(stats.pending);
      hash.add(stats.held);
      hash.add(stats.longest_wait);
      hash.add(stats.reliable_next);
      hash.add(stats.reliable_acked);
      if (delivery == Delivery::unreliable && t % 3 == 0 && stats.reliable_next > 0) {
        encode_ack({static_cast<std::uint32_t>(stats.packets), stats.reliable_next - (t % 2)}, ack);
        EXPECT_TRUE(replicator.receive_ack(client, ack).ok());
      }
      if (t % 5 == 0) {
        EXPECT_TRUE(
            replicator.note_interaction(client, steady.ids[(client.index * 7 + 1) % steady.ids.size()]).ok());
      }
    }
  }
  return hash.h;
}

// The pinned values. Change one only with a change of behaviour, and say which in the commit.
constexpr std::uint64_t kReferenceRun = 0x4d809405f8795e92;
constexpr std::uint64_t kArenaRun = 0xba919ac608d37fda;
constexpr std::uint64_t kCappedArenaRun = 0xed9c4951936a31d5;
constexpr std::uint64_t kRandomRuns = 0xb75f440edf8a7dad;
constexpr std::uint64_t kReliableSend = 0xadea74c702c15d30;
constexpr std::uint64_t kUnreliableSend = 0xc9947fd3ca7ae089;
constexpr std::uint64_t kFixedRateSend = 0x50362891c26bea02;

TEST(GoldenHashTest, ReferenceRun) {
  EXPECT_EQ(reference_run_hash(1), kReferenceRun) << std::hex << reference_run_hash(1);
  EXPECT_EQ(reference_run_hash(3), kReferenceRun);
}

TEST(GoldenHashTest, ArenaWithEveryRelevanceFeature) {
  const std::uint64_t arena = arena_hash(kArena, 1);
  EXPECT_EQ(arena, kArenaRun) << std::hex << arena;
  EXPECT_EQ(arena_hash(kArena, 2), kArenaRun);
  const std::uint64_t capped = arena_hash(kCappedArena, 1);
  EXPECT_EQ(capped, kCappedArenaRun) << std::hex << capped;
}

TEST(GoldenHashTest, RandomRunsWithEveryInputKind) {
  const std::uint64_t runs = random_runs_hash();
  EXPECT_EQ(runs, kRandomRuns) << std::hex << runs;
}

TEST(GoldenHashTest, ReplicatorSendInBothDeliveryModes) {
  const std::uint64_t reliable = send_hash(Delivery::reliable, UpdateMode::priority, 1);
  EXPECT_EQ(reliable, kReliableSend) << std::hex << reliable;
  const std::uint64_t unreliable = send_hash(Delivery::unreliable, UpdateMode::priority, 1);
  EXPECT_EQ(unreliable, kUnreliableSend) << std::hex << unreliable;
  const std::uint64_t fixed_rate = send_hash(Delivery::unreliable, UpdateMode::fixed_rate, 2);
  EXPECT_EQ(fixed_rate, kFixedRateSend) << std::hex << fixed_rate;
}

}  // namespace
}  // namespace sightline::testing
