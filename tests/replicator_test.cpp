// The Replicator: priorities under a budget, paced entry, the promise, serialize-once, delivery.
#include "sightline/replicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

#include "log_capture.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "small_world.h"

namespace sightline {
namespace {

using testing::SmallWorld;

/// A test game's state: the update part is the position; the full part adds `full_bytes` bytes
/// of made-up state (name, inventory) so a spawn costs what a real one does.
struct Game {
  World* world = nullptr;
  std::uint32_t update_bytes = 8;  // raw bytes besides the position, to size records exactly
  std::uint32_t full_bytes = 40;
  std::uint64_t calls = 0;
};

bool serialize(Stream& s, EntityId e, StatePart part, void* context) {
  auto& game = *static_cast<Game*>(context);
  ++game.calls;
  Position p = *game.world->position(e);
  std::uint32_t index = e.index;
  if (!s.serialize_bits(index, 32)) return false;
  if (!s.serialize_float(p.x) || !s.serialize_float(p.z)) return false;
  std::vector<std::uint8_t> filler(part == StatePart::full ? game.full_bytes : game.update_bytes, 0xab);
  return s.serialize_bytes(filler.data(), filler.size());
}

ReplicatorDef def_for(Game& game) {
  ReplicatorDef def;
  def.serialize = serialize;
  def.serialize_context = &game;
  return def;
}

struct Decoded {
  std::vector<WireRecord> spawns, updates, despawns;
  std::vector<PacketHeader> headers;
  std::size_t bytes = 0;
};

Decoded decode_all(const Replicator& r, ClientId c) {
  Decoded out;
  DecodedPacket p;
  for (std::span<const std::uint8_t> bytes : *r.packets(c)) {
    Status s = decode_packet(bytes, p);
    EXPECT_TRUE(s.ok()) << s.message();
    out.headers.push_back(p.header);
    out.bytes += bytes.size();
    for (const WireRecord& rec : p.records) {
      (rec.type == RecordType::spawn    ? out.spawns
       : rec.type == RecordType::update ? out.updates
                                        : out.despawns)
          .push_back(rec);
    }
  }
  return out;
}

TEST(ReplicatorTest, RefusesABadDefNamingTheField) {
  SmallWorld w;
  Game game{&w.world};
  ReplicatorDef def = def_for(game);
  def.serialize = nullptr;
  auto r = Replicator::create(w.world, def);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::invalid_def);
  EXPECT_NE(r.status().message().find("serialize"), std::string::npos);
  def = def_for(game);
  def.budget_bytes = 10;
  r = Replicator::create(w.world, def);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("budget_bytes is 10"), std::string::npos) << r.status().message();
  def = def_for(game);
  def.tick_seconds = -1.0f;
  EXPECT_NE(Replicator::create(w.world, def).status().message().find("tick_seconds"), std::string::npos);
  def = def_for(game);
  def.promise_fraction = 1.5f;
  EXPECT_NE(Replicator::create(w.world, def).status().message().find("promise_fraction"), std::string::npos);
}

// Seed 001's test: 50 entities in a row, room for 5 updates a tick, 600 ticks at 60 Hz. The
// nearest is sent more often than the farthest, and the farthest is still sent.
TEST(ReplicatorTest, FarEntitiesAreNotStarved) {
  SmallWorld w(100.0f, 110.0f);
  Game game{&w.world};
  game.update_bytes = 100 - 12;  // 100-byte payloads: index, x, z and filler
  const EntityId viewer = w.make(0.0f, 0.0f);
  std::vector<EntityId> row;
  for (int i = 0; i < 50; ++i) row.push_back(w.make(static_cast<float>(i) * 2.0f, 0.0f));
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.tick_seconds = 1.0f / 60.0f;
  const std::size_t record = update_record_bytes(row[0], 100);
  def.budget_bytes = static_cast<std::uint32_t>(kStateHeaderBytes + 5 * record);
  def.entry_budget_bytes = 64 * 1024;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::vector<int> sent(50, 0);
  std::uint32_t longest = 0;
  for (int t = 0; t < 601; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    if (t == 0) {
      EXPECT_EQ(d.spawns.size(), 50u);  // the join: every member enters, within the allowance
      continue;
    }
    EXPECT_EQ(d.updates.size(), 5u) << "tick " << t;
    EXPECT_LE(d.bytes, def.budget_bytes);
    for (const WireRecord& u : d.updates) ++sent[u.entity.index - row[0].index];
    longest = std::max(longest, r.stats().longest_wait);
  }
  EXPECT_GT(sent[0], sent[49]);
  EXPECT_GT(sent[49], 0);
  // Shares follow the priorities: the nearest about 10x the farthest at the default scale R/10.
  EXPECT_GT(sent[0], 5 * sent[49]);
  EXPECT_EQ(std::accumulate(sent.begin(), sent.end(), 0), 600 * 5);
  // Every member waits a bounded time; the farthest longest.
  EXPECT_GT(longest, 10u);
  EXPECT_LT(longest, 200u);
  std::printf("starvation: nearest sent %d times, farthest %d, longest wait %u ticks\n", sent[0], sent[49],
              longest);
}

TEST(ReplicatorTest, AnUpdateThatDoesNotFitIsSkippedForSmallerOnes) {
  SmallWorld w(100.0f, 110.0f);
  struct Sized {
    World* world;
    EntityId big;
  };
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId big = w.make(1.0f, 0.0f);  // nearest: the highest priority
  std::vector<EntityId> small;
  for (int i = 0; i < 4; ++i) small.push_back(w.make(50.0f + static_cast<float>(i), 0.0f));
  const ClientId c = w.client(viewer);
  Sized sized{&w.world, big};
  ReplicatorDef def;
  def.serialize = [](Stream& s, EntityId e, StatePart, void* context) {
    auto& z = *static_cast<Sized*>(context);
    std::vector<std::uint8_t> bytes(e == z.big ? 200 : 10, 1);
    return s.serialize_bytes(bytes.data(), bytes.size());
  };
  def.serialize_context = &sized;
  def.budget_bytes = static_cast<std::uint32_t>(kStateHeaderBytes + 100);
  Replicator r = std::move(Replicator::create(w.world, def).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded d = decode_all(r, c);
  // The big one never fits this budget; the small ones behind it still go.
  EXPECT_EQ(d.updates.size(), 4u);
  for (const WireRecord& u : d.updates) EXPECT_NE(u.entity, big);
}

TEST(ReplicatorTest, TierAndKeyRatesActAsPriorityNotTimers) {
  SmallWorld w(100.0f, 100.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId slow = w.make(10.5f, 0.0f);
  const EntityId fast = w.make(10.0f, 0.0f);
  ASSERT_TRUE(w.world.set_area_interest_key(slow, 7).ok());
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(
      w.world.set_area_subscriptions(c, std::vector<KeySubscription>{{.key = 7, .send_rate = 4}}).ok());
  ReplicatorDef def = def_for(game);
  // Room for one update a send.
  def.budget_bytes = static_cast<std::uint32_t>(kStateHeaderBytes + update_record_bytes(fast, 20));
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::map<std::uint32_t, int> sent;
  for (int t = 0; t < 401; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    if (t == 0) continue;
    for (const WireRecord& u : decode_all(r, c).updates) ++sent[u.entity.index];
  }
  // Rate 4 is a quarter of the priority: against one rival for one slot, it wins one send in
  // five (its accumulator passes the rival's after five sends), never none.
  EXPECT_NEAR(sent[slow.index], 80, 2);
  EXPECT_NEAR(sent[fast.index], 320, 2);
}

// The World records per-member periods while any priority Replicator over it lives: one
// released does not turn them off for another.
TEST(ReplicatorTest, PeriodsStayRecordedWhileAnyPriorityReplicatorLives) {
  SmallWorld w(100.0f, 100.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId slow = w.make(10.5f, 0.0f);
  const EntityId fast = w.make(10.0f, 0.0f);
  ASSERT_TRUE(w.world.set_area_interest_key(slow, 7).ok());
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(
      w.world.set_area_subscriptions(c, std::vector<KeySubscription>{{.key = 7, .send_rate = 4}}).ok());
  ReplicatorDef def = def_for(game);
  def.budget_bytes = static_cast<std::uint32_t>(kStateHeaderBytes + update_record_bytes(fast, 20));
  std::optional<Replicator> first = std::move(Replicator::create(w.world, def).value());
  Replicator r = std::move(Replicator::create(w.world, def).value());
  first.reset();
  std::map<std::uint32_t, int> sent;
  for (int t = 0; t < 401; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    if (t == 0) continue;
    for (const WireRecord& u : decode_all(r, c).updates) ++sent[u.entity.index];
  }
  // As in TierAndKeyRatesActAsPriorityNotTimers: without periods both would win half the sends.
  EXPECT_NEAR(sent[slow.index], 80, 2);
  EXPECT_NEAR(sent[fast.index], 320, 2);
}

TEST(ReplicatorTest, FixedRateModeSendsTheWorldSchedule) {
  // With tiers, members beyond R / 2 are due every second tick: the schedule is not "everyone".
  WorldDef tiered = testing::small_world_def(10.0f, 12.0f);
  tiered.tiers = default_distance_tiers();
  SmallWorld w(tiered);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  for (int i = 0; i < 20; ++i) w.make(static_cast<float>(i) * 0.4f, 1.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.mode = UpdateMode::fixed_rate;
  def.budget_bytes = kStateHeaderBytes + 16;  // the least allowed, ignored in this mode
  Replicator r = std::move(Replicator::create(w.world, def).value());
  for (int t = 0; t < 5; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    if (t == 0) {
      EXPECT_EQ(d.spawns.size(), 20u);
      EXPECT_TRUE(d.updates.empty());  // spawned this send: the spawn carries the state
      continue;
    }
    std::vector<EntityId> expected = w.updates(c);
    std::vector<EntityId> got;
    for (const WireRecord& u : d.updates) got.push_back(u.entity);
    EXPECT_EQ(got, expected);
    EXPECT_LT(got.size(), 20u) << "the far members wait for their tick";
  }
}

// A join into a crowd enters nearest first under the entry allowance, its own tree at once.
TEST(ReplicatorTest, PacedEntryGoesNearestFirstAndCountsPending) {
  SmallWorld w(100.0f, 120.0f);
  Game game{&w.world};
  game.full_bytes = 200;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId mount = w.make(0.0f, 0.0f);  // the viewer rides it: its tree goes first
  ASSERT_TRUE(w.world.attach(viewer, mount).ok());
  const EntityId hat = w.make(0.0f, 0.0f);
  ASSERT_TRUE(w.world.attach(hat, viewer).ok());
  std::vector<EntityId> crowd;
  for (int i = 0; i < 400; ++i) {
    const float a = static_cast<float>(i) * 2.39996f;
    const float d = 5.0f + static_cast<float>(i % 90);
    crowd.push_back(w.make(d * std::cos(a), d * std::sin(a)));
  }
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.entry_budget_bytes = 4096;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::set<std::uint32_t> held;
  float last_distance = 0.0f;
  std::uint32_t sends = 0;
  for (int t = 0; t < 100; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    if (t == 0) {
      ASSERT_GE(d.spawns.size(), 2u);
      EXPECT_EQ(d.spawns[0].entity, mount);  // the tree of an origin, parent first
      EXPECT_EQ(d.spawns[1].entity, hat);
    }
    std::size_t spawn_bytes = 0;
    for (const WireRecord& s : d.spawns) {
      spawn_bytes += spawn_record_bytes(s.reliable_id, s.entity, s.payload.size());
      held.insert(s.entity.index);
      if (s.entity == mount || s.entity == hat) continue;
      const Position p = *w.world.position(s.entity);
      const float dist = std::hypot(p.x, p.z);
      EXPECT_GE(dist + 1e-4f, last_distance) << "entry is nearest first";
      last_distance = dist;
    }
    EXPECT_LE(spawn_bytes, def.entry_budget_bytes + 300u);  // the origin's tree goes regardless
    for (const WireRecord& u : d.updates)
      EXPECT_TRUE(held.count(u.entity.index)) << "update before its spawn";
    const std::uint32_t pending = *r.pending(c);
    EXPECT_EQ(pending, (*w.world.interest_set(c)).size() - held.size());
    ++sends;
    if (pending == 0) break;
  }
  EXPECT_EQ(held.size(), 402u);
  // 400 spawns of ~213 bytes at 4 KB a send: about 21 sends, not one flood.
  EXPECT_GE(sends, 18u);
  EXPECT_LE(sends, 25u);
  std::printf("paced entry: 402 spawns over %u sends\n", sends);
  EXPECT_GT(r.stats().spawn_delay_sends, 0u);
  EXPECT_FALSE(r.client_stats(c)->catching_up);
}

TEST(ReplicatorTest, AMemberThatLeavesBeforeItsSpawnWentCostsNothing) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  game.full_bytes = 500;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId a = w.make(1.0f, 0.0f);
  const EntityId b = w.make(2.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.entry_budget_bytes = 100;  // one spawn a send
  Replicator r = std::move(Replicator::create(w.world, def).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_EQ(decode_all(r, c).spawns.size(), 1u);
  EXPECT_EQ(*r.pending(c), 1u);
  ASSERT_TRUE(w.world.set_position(b, 50.0f, 0.0f).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded d = decode_all(r, c);
  EXPECT_TRUE(d.spawns.empty());
  EXPECT_TRUE(d.despawns.empty());  // b never reached the client: no despawn either
  EXPECT_EQ(*r.pending(c), 0u);
  ASSERT_TRUE(w.world.destroy_entity(a).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded gone = decode_all(r, c);
  ASSERT_EQ(gone.despawns.size(), 1u);
  EXPECT_EQ(gone.despawns[0].entity, a);
  EXPECT_EQ(gone.despawns[0].reason, static_cast<std::uint8_t>(DespawnReason::destroyed));
}

TEST(ReplicatorTest, ATickWithoutASendLosesNothingTheClientMustKnow) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId walker = w.make(1.0f, 0.0f);
  const EntityId doomed = w.make(2.0f, 0.0f);
  const ClientId c = w.client(viewer);
  Replicator r = std::move(Replicator::create(w.world, def_for(game)).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  ASSERT_EQ(decode_all(r, c).spawns.size(), 2u);
  // Two ticks, one send: the walker leaves and the doomed entity dies in the tick not sent.
  ASSERT_TRUE(w.world.set_position(walker, 50.0f, 0.0f).ok());
  ASSERT_TRUE(w.world.destroy_entity(doomed).ok());
  w.world.tick();
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded d = decode_all(r, c);
  ASSERT_EQ(d.despawns.size(), 2u);
  EXPECT_EQ(d.despawns[0].entity, walker);
  EXPECT_EQ(d.despawns[0].reason, static_cast<std::uint8_t>(DespawnReason::left));
  EXPECT_EQ(d.despawns[1].entity, doomed);
  EXPECT_EQ(d.despawns[1].reason, static_cast<std::uint8_t>(DespawnReason::destroyed));
  EXPECT_EQ(r.client_stats(c)->held, 0u);
}

TEST(ReplicatorTest, AWithdrawnEntityGoesAsLeftWithOrWithoutASendAtItsTick) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId handed = w.make(1.0f, 0.0f);
  const EntityId unsent = w.make(2.0f, 0.0f);
  const EntityId doomed = w.make(3.0f, 0.0f);
  const ClientId c = w.client(viewer);
  Replicator r = std::move(Replicator::create(w.world, def_for(game)).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  ASSERT_EQ(decode_all(r, c).spawns.size(), 3u);
  ASSERT_TRUE(w.world.withdraw_entity(handed).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded first = decode_all(r, c);
  ASSERT_EQ(first.despawns.size(), 1u);
  EXPECT_EQ(first.despawns[0].entity, handed);
  EXPECT_EQ(first.despawns[0].reason, static_cast<std::uint8_t>(DespawnReason::left));
  // Gone in a tick with no send after it: the Replicator finds it missing from the set.
  ASSERT_TRUE(w.world.withdraw_entity(unsent).ok());
  ASSERT_TRUE(w.world.destroy_entity(doomed).ok());
  w.world.tick();
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded second = decode_all(r, c);
  ASSERT_EQ(second.despawns.size(), 2u);
  EXPECT_EQ(second.despawns[0].entity, unsent);
  EXPECT_EQ(second.despawns[0].reason, static_cast<std::uint8_t>(DespawnReason::left));
  EXPECT_EQ(second.despawns[1].entity, doomed);
  EXPECT_EQ(second.despawns[1].reason, static_cast<std::uint8_t>(DespawnReason::destroyed));
}

// A payload source that gives what the game's serializer writes (as another process running the
// same serializer would), or fixed bytes for one entity, or too many for another.
struct Source {
  Game* game = nullptr;
  EntityId fixed;
  EntityId oversized;
  std::uint64_t calls = 0;
};

std::span<const std::uint8_t> sourced(EntityId e, StatePart part, void* context) {
  auto& source = *static_cast<Source*>(context);
  ++source.calls;
  static const std::array<std::uint8_t, 3> kFixed{0xab, 0xcd, 0xef};
  static const std::vector<std::uint8_t> kHuge(kMaxPacketBytes, 0x11);
  if (e == source.fixed) return kFixed;
  if (e == source.oversized) return kHuge;
  thread_local std::array<std::uint8_t, kMaxPacketBytes> bytes;
  std::array<EntityReference, kMaxReferences> references;
  Stream s = Stream::writer(bytes, references);
  if (!serialize(s, e, part, source.game) || !s.ok()) return {};
  return {bytes.data(), s.bytes()};
}

TEST(ReplicatorTest, APayloadSourcesBytesGoOutUnchanged) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  std::vector<ClientId> clients;
  std::vector<EntityId> entities;
  for (int i = 0; i < 6; ++i) {
    entities.push_back(w.make(0.5f * static_cast<float>(i), 0.0f));
    if (i < 3) clients.push_back(w.client(entities.back()));
  }
  Source source;
  source.game = &game;
  ReplicatorDef plain_def = def_for(game);
  ReplicatorDef sourced_def = plain_def;
  sourced_def.payload_source = sourced;
  sourced_def.payload_source_context = &source;
  Replicator plain = std::move(Replicator::create(w.world, plain_def).value());
  Replicator from_source = std::move(Replicator::create(w.world, sourced_def).value());
  // The serializer's own bytes from the source: every packet as without one, and no serializer call.
  for (int t = 0; t < 5; ++t) {
    for (std::size_t i = 0; i < entities.size(); ++i) {
      ASSERT_TRUE(
          w.world.set_position(entities[i], 0.5f * static_cast<float>(i), 0.1f * static_cast<float>(t)).ok());
    }
    w.world.tick();
    ASSERT_TRUE(plain.send().ok());
    const std::uint64_t calls_before = game.calls;
    ASSERT_TRUE(from_source.send().ok());
    EXPECT_EQ(from_source.stats().serialize_calls, 0u);
    EXPECT_GT(from_source.stats().sourced_payloads, 0u);
    EXPECT_EQ(game.calls - calls_before, from_source.stats().sourced_payloads);  // the source's own calls
    for (const ClientId c : clients) {
      const auto a = *plain.packets(c);
      const auto b = *from_source.packets(c);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t p = 0; p < a.size(); ++p) {
        EXPECT_TRUE(std::equal(a[p].begin(), a[p].end(), b[p].begin(), b[p].end())) << "tick " << t;
      }
    }
  }
  // Another process's bytes for one entity, too many for another: the first goes as given, the
  // second fails its records (named by send()), and the rest go on.
  source.fixed = entities[4];
  source.oversized = entities[5];
  const EntityId late = w.make(1.0f, 0.5f);
  w.world.tick();
  const Status status = from_source.send();
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  EXPECT_NE(status.message().find("payload source gave " + std::to_string(kMaxPacketBytes) + " bytes"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find(std::to_string(entities[5].index)), std::string::npos) << status.message();
  const Decoded d = decode_all(from_source, clients[0]);
  bool fixed_seen = false;
  for (const WireRecord& u : d.updates) {
    EXPECT_NE(u.entity, entities[5]);
    if (u.entity == entities[4]) {
      fixed_seen = true;
      EXPECT_EQ(std::vector<std::uint8_t>(u.payload.begin(), u.payload.end()),
                (std::vector<std::uint8_t>{0xab, 0xcd, 0xef}));
    }
  }
  EXPECT_TRUE(fixed_seen);
  bool late_spawned = false;
  for (const WireRecord& s : d.spawns) late_spawned = late_spawned || s.entity == late;
  EXPECT_TRUE(late_spawned);
}

TEST(ReplicatorTest, SerializeOnceSharesPayloadsAcrossClients) {
  auto run = [](bool share, std::uint64_t& calls, std::vector<std::vector<std::uint8_t>>& wire) {
    SmallWorld w(50.0f, 60.0f);
    Game game{&w.world};
    std::vector<ClientId> clients;
    for (int i = 0; i < 10; ++i) clients.push_back(w.client(w.make(static_cast<float>(i), 0.0f)));
    for (int i = 0; i < 100; ++i) w.make(static_cast<float>(i % 10), static_cast<float>(i / 10));
    ReplicatorDef def = def_for(game);
    def.share_payloads = share;
    def.budget_bytes = 60000;
    def.packet_bytes = 60000;
    Replicator r = std::move(Replicator::create(w.world, def).value());
    for (int t = 0; t < 3; ++t) {
      w.world.tick();
      ASSERT_TRUE(r.send().ok());
      for (ClientId c : clients) {
        for (auto p : *r.packets(c)) wire.emplace_back(p.begin(), p.end());
      }
    }
    calls = game.calls;
  };
  std::uint64_t shared_calls = 0;
  std::uint64_t own_calls = 0;
  std::vector<std::vector<std::uint8_t>> shared_wire;
  std::vector<std::vector<std::uint8_t>> own_wire;
  run(true, shared_calls, shared_wire);
  run(false, own_calls, own_wire);
  EXPECT_EQ(shared_wire, own_wire);  // the same bytes either way
  // 110 entities: one write per entity per part per send when shared (the viewers are members
  // of one another's sets too).
  EXPECT_LE(shared_calls, 3u * 110u);
  EXPECT_GT(own_calls, 8 * shared_calls);
}

// Where the last send wrote at least two update records per entity slot, in a world of 16,384
// slots or more, a send serializes the update part of every held entity first, in slot order: the
// same packets as serializing on first need (and as serializing per client), and an update part
// no packet of the send carries (a new member's, spawned this send) serialized all the same.
// Below two a slot, only what is written.
TEST(ReplicatorTest, SerializingAheadChangesNoPacket) {
  struct Counting {
    Game game;
    std::map<std::pair<std::uint32_t, StatePart>, int> calls;  // this send's, by entity and part
    std::mutex mutex;                                          // send()'s workers call at once
  };
  auto run = [](bool share, std::uint32_t budget, std::uint32_t threads, bool& newcomer_update_serialized,
                std::vector<std::vector<std::uint8_t>>& wire) {
    WorldDef wd = testing::small_world_def(4.0f, 5.0f);
    wd.threads = threads;
    wd.entity_capacity = 16500;
    SmallWorld w(wd);
    Counting counting;
    counting.game.world = &w.world;
    // A 128 x 128 lattice, 1 apart; a client on every eighth, about 50 members each.
    std::vector<EntityId> lattice;
    for (int i = 0; i < 128 * 128; ++i)
      lattice.push_back(w.make(static_cast<float>(i % 128), static_cast<float>(i / 128)));
    std::vector<ClientId> clients;
    for (std::size_t i = 0; i < lattice.size(); i += 8) clients.push_back(w.client(lattice[i]));
    ReplicatorDef def = def_for(counting.game);
    def.serialize = [](Stream& s, EntityId e, StatePart part, void* context) {
      auto& c = *static_cast<Counting*>(context);
      const std::lock_guard lock(c.mutex);
      ++c.calls[{e.index, part}];
      return serialize(s, e, part, &c.game);
    };
    def.serialize_context = &counting;
    def.share_payloads = share;
    def.budget_bytes = budget;
    Replicator r = std::move(Replicator::create(w.world, def).value());
    EntityId newcomer;
    for (int t = 0; t < 4; ++t) {
      if (t == 3) newcomer = w.make(64.5f, 64.5f);  // held from this tick on, by the clients near it
      w.world.tick();
      counting.calls.clear();
      EXPECT_TRUE(r.send().ok());
      for (ClientId c : clients) {
        for (auto p : *r.packets(c)) wire.emplace_back(p.begin(), p.end());
      }
      if (share) {
        for (const auto& [key, n] : counting.calls)
          EXPECT_EQ(n, 1) << "entity " << key.first << " at send " << t;
      }
    }
    // The last send spawned the newcomer: its update part went in no packet.
    newcomer_update_serialized = counting.calls.count({newcomer.index, StatePart::update}) != 0;
  };
  std::vector<std::vector<std::uint8_t>> ahead, ahead_threads, per_client, written_only,
      written_only_per_client;
  bool serialized = false;
  run(true, 60000, 1, serialized, ahead);
  EXPECT_TRUE(serialized)
      << "2,048 clients x about 50 members is 6 update records a slot: the send serializes ahead";
  run(true, 60000, 3, serialized, ahead_threads);
  EXPECT_TRUE(serialized);
  run(false, 60000, 1, serialized, per_client);
  EXPECT_EQ(ahead, per_client);
  EXPECT_EQ(ahead_threads, per_client);
  // Room for about four updates a client: 8,000 records for 16,385 slots, under two a slot.
  run(true, 120, 1, serialized, written_only);
  EXPECT_FALSE(serialized);
  run(false, 120, 1, serialized, written_only_per_client);
  EXPECT_EQ(written_only, written_only_per_client);
}

// A send goes to the live clients as they stand, whatever changed since the tick: the tick's
// order of its clients (neighbours together, which a send follows) no longer covers them.
TEST(ReplicatorTest, ClientsMadeOrDestroyedAfterATickAreSentAsTheyStand) {
  SmallWorld w(10.0f, 12.0f);
  Game game{&w.world};
  std::vector<ClientId> clients;
  // More clients than a quarter of the cells, so the tick passes them in its cell order.
  for (int i = 0; i < 12; ++i) {
    clients.push_back(w.client(w.make(static_cast<float>(3 * (i % 4)), static_cast<float>(3 * (i / 4)))));
  }
  Replicator r = std::move(Replicator::create(w.world, def_for(game)).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  w.world.tick();
  ASSERT_TRUE(w.world.destroy_client(clients[5]).ok());
  ASSERT_TRUE(r.send().ok());
  EXPECT_FALSE(r.packets(clients[5]).ok());
  for (const ClientId c : w.world.clients()) EXPECT_FALSE(r.packets(c)->empty()) << "client slot " << c.index;
  w.world.tick();
  const ClientId late = w.client(w.make(1.0f, 1.0f));
  ASSERT_TRUE(r.send().ok());
  // Not in a tick's set yet: its first packet says so (nothing on its way).
  ASSERT_EQ(r.packets(late)->size(), 1u);
  EXPECT_EQ(*r.pending(late), 0u);
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_FALSE(decode_all(r, late).spawns.empty());
}

TEST(ReplicatorTest, ASerializerFailureIsNamedAndSkipsOnlyThatRecord) {
  SmallWorld w(10.0f, 10.0f);
  struct Failing {
    EntityId bad;
  };
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId good = w.make(1.0f, 0.0f);
  const EntityId bad = w.make(2.0f, 0.0f);
  const ClientId c = w.client(viewer);
  Failing failing{bad};
  ReplicatorDef def;
  def.serialize = [](Stream& s, EntityId e, StatePart, void* context) {
    std::uint32_t v = 3;
    if (e == static_cast<Failing*>(context)->bad) return s.serialize_uint(v, 0, 2);  // out of range
    return s.serialize_uint(v, 0, 7);
  };
  def.serialize_context = &failing;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  w.world.tick();
  Status s = r.send();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(std::to_string(bad.index)), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("outside its range"), std::string::npos) << s.message();
  const Decoded d = decode_all(r, c);
  ASSERT_EQ(d.spawns.size(), 1u);
  EXPECT_EQ(d.spawns[0].entity, good);
  EXPECT_EQ(*r.pending(c), 1u);  // the bad one waits
}

TEST(ReplicatorTest, DevelopmentModeReportsAnEntityThatEnteredInsideThePromise) {
  SmallWorld w(12.0f, 14.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId walker = w.make(30.0f, 0.0f);
  const EntityId dart = w.make(-30.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.development = true;
  LogCapture log;
  def.log = log.hook();
  Replicator r = std::move(Replicator::create(w.world, def).value());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  // The walker closes at 1 unit a tick: it enters at R = 12, outside the promise radius 10.
  for (int t = 0; t < 25; ++t) {
    const Position p = *w.world.position(walker);
    ASSERT_TRUE(w.world.set_position(walker, p.x - 1.0f, 0.0f).ok());
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    EXPECT_TRUE(r.promise_violations().empty()) << "tick " << t;
  }
  // The dart jumps from 30 to 5 in one tick: it enters already inside the promise.
  ASSERT_TRUE(w.world.set_position(dart, -5.0f, 0.0f).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  ASSERT_EQ(r.promise_violations().size(), 1u);
  const PromiseViolation v = r.promise_violations()[0];
  EXPECT_EQ(v.client, c);
  EXPECT_EQ(v.entity, dart);
  EXPECT_FLOAT_EQ(v.distance, 5.0f);
  EXPECT_FLOAT_EQ(v.promise_radius, 10.0f);
  // Told to the game's log once, after the send.
  ASSERT_EQ(log.reports.size(), 1u);
  EXPECT_EQ(log.reports[0].first, LogLevel::warning);
  EXPECT_NE(log.reports[0].second.find(
                "1 promise violations; this send's first: client " + std::to_string(c.index) + ":" +
                std::to_string(c.generation) + " got entity " + std::to_string(dart.index) + ":" +
                std::to_string(dart.generation) + " at distance 5.000, inside its promise radius 10.000"),
            std::string::npos)
      << log.reports[0].second;
  // A teleport of the viewer is a catch-up, not a broken promise.
  ASSERT_TRUE(w.world.teleport(viewer, 200.0f, 0.0f).ok());
  w.make(203.0f, 0.0f);
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_TRUE(r.promise_violations().empty());
  EXPECT_EQ(log.reports.size(), 1u);
}

TEST(ReplicatorTest, UnreliableSpawnsAreResentUntilAcknowledged) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId a = w.make(1.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.delivery = Delivery::unreliable;
  def.resend_sends = 3;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::vector<int> spawn_sends;
  for (int t = 0; t < 10; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    for (const PacketHeader& h : d.headers) EXPECT_EQ(h.delivery, Delivery::unreliable);
    for (const WireRecord& s : d.spawns) {
      EXPECT_EQ(s.entity, a);
      EXPECT_EQ(s.reliable_id, 0u);
      spawn_sends.push_back(t);
    }
  }
  EXPECT_EQ(spawn_sends, (std::vector<int>{0, 3, 6, 9}));
  EXPECT_EQ(r.stats().resends, 1u);
  // An ack of what was never sent is refused; a good one stops the resends.
  std::array<std::uint8_t, kAckBytes> ack{};
  encode_ack({.latest_sequence = 0, .reliable_applied = 2}, ack);
  EXPECT_EQ(r.receive_ack(c, ack).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(r.receive_ack(c, std::span<const std::uint8_t>(ack).first(5)).code(),
            ErrorCode::malformed_packet);
  encode_ack({.latest_sequence = 9, .reliable_applied = 1}, ack);
  ASSERT_TRUE(r.receive_ack(c, ack).ok());
  for (int t = 0; t < 6; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    EXPECT_TRUE(decode_all(r, c).spawns.empty());
  }
  EXPECT_EQ(r.client_stats(c)->reliable_acked, 1u);
}

TEST(ReplicatorTest, PacketsCarrySequenceTickAndReliableWatermark) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  for (int i = 0; i < 30; ++i) w.make(static_cast<float>(i % 5), static_cast<float>(i / 5));
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.packet_bytes = 300;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::uint32_t sequence = 0;
  std::uint32_t reliable = 0;
  for (int t = 0; t < 3; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    DecodedPacket p;
    for (auto bytes : *r.packets(c)) {
      EXPECT_LE(bytes.size(), 300u);
      ASSERT_TRUE(decode_packet(bytes, p).ok());
      EXPECT_EQ(p.header.sequence, sequence++);
      EXPECT_EQ(p.header.tick, static_cast<std::uint32_t>(t));
      for (const WireRecord& rec : p.records) {
        if (rec.type != RecordType::update) {
          EXPECT_EQ(rec.reliable_id, reliable++);
        }
      }
    }
    for (auto bytes : *r.packets(c)) {
      ASSERT_TRUE(decode_packet(bytes, p).ok());
      EXPECT_EQ(p.header.reliable_next, reliable);
    }
  }
  EXPECT_EQ(reliable, 30u);
}

// Every packet states the client's interest as of the end of its send; a change of it with no
// record to carry it still goes, in a packet of its own, and the mirror reads what the server
// counts.
TEST(ReplicatorTest, EveryPacketCarriesTheInterestStatusAndAChangeAloneSendsOne) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  game.full_bytes = 500;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId a = w.make(1.0f, 0.0f);
  const EntityId b = w.make(2.0f, 0.0f);
  const EntityId far = w.make(3.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.entry_budget_bytes = 100;  // one spawn a send
  Replicator r = std::move(Replicator::create(w.world, def).value());
  for (const EntityId e : {a, b, far}) ASSERT_TRUE(r.set_priority(e, 0.0f).ok());  // no updates
  ClientMirror mirror = std::move(ClientMirror::create(default_mirror_def()).value());
  const float promise = def.promise_fraction * 10.0f;
  auto send = [&] {
    w.world.tick();
    EXPECT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    for (const PacketHeader& h : d.headers) {
      EXPECT_EQ(h.interest, (InterestStatus{.culling = true, .radius = promise, .pending = *r.pending(c)}));
    }
    for (auto bytes : *r.packets(c)) EXPECT_TRUE(mirror.receive(bytes).ok());
    EXPECT_EQ(mirror.interest().pending, *r.pending(c));
    return d;
  };
  EXPECT_EQ(send().spawns.size(), 1u);
  EXPECT_EQ(*r.pending(c), 2u);
  EXPECT_EQ(send().spawns.size(), 1u);
  EXPECT_EQ(*r.pending(c), 1u);
  // The last pending member walks away before its spawn went: no record, but pending is now 0.
  ASSERT_TRUE(mirror.holds(a) && mirror.holds(b) && !mirror.holds(far));  // nearest first
  ASSERT_TRUE(w.world.set_position(far, 50.0f, 0.0f).ok());
  const Decoded alone = send();
  EXPECT_TRUE(alone.spawns.empty() && alone.updates.empty() && alone.despawns.empty());
  ASSERT_EQ(alone.headers.size(), 1u) << "a packet for the status alone";
  EXPECT_EQ(*r.pending(c), 0u);
  EXPECT_EQ(mirror.interest(), (InterestStatus{.culling = true, .radius = promise, .pending = 0}));
  // Nothing changed: nothing is sent.
  EXPECT_TRUE(send().headers.empty());
  // Culling turned off: the status says so (radius 0), whether or not a record goes with it.
  ASSERT_TRUE(w.world.set_space_def(w.world.default_space(), SpaceDef{}).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  const Decoded off = decode_all(r, c);
  ASSERT_FALSE(off.headers.empty());
  for (const PacketHeader& h : off.headers) {
    EXPECT_EQ(h.interest, (InterestStatus{.culling = false, .radius = 0.0f, .pending = *r.pending(c)}));
  }
  for (auto bytes : *r.packets(c)) ASSERT_TRUE(mirror.receive(bytes).ok());
  EXPECT_FALSE(mirror.interest().culling);
  EXPECT_EQ(mirror.interest().pending, *r.pending(c));
}

// Unreliable: a status change is sent again each send, in a packet of its own where nothing else
// goes, until an ack names a packet that carried it.
TEST(ReplicatorTest, AnUnreliableStatusIsRepeatedUntilAnAckCoversIt) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.delivery = Delivery::unreliable;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::vector<std::uint32_t> sequences;
  for (int t = 0; t < 4; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    const Decoded d = decode_all(r, c);
    ASSERT_EQ(d.headers.size(), 1u) << "send " << t << ": no ack yet";
    EXPECT_TRUE(d.spawns.empty() && d.updates.empty());
    sequences.push_back(d.headers[0].sequence);
  }
  EXPECT_EQ(sequences, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  std::array<std::uint8_t, kAckBytes> ack{};
  // "Latest 0" may mean that nothing arrived: it does not cover the status.
  encode_ack({.latest_sequence = 0, .reliable_applied = 0}, ack);
  ASSERT_TRUE(r.receive_ack(c, ack).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_EQ(decode_all(r, c).headers.size(), 1u);
  encode_ack({.latest_sequence = 2, .reliable_applied = 0}, ack);
  ASSERT_TRUE(r.receive_ack(c, ack).ok());
  for (int t = 0; t < 3; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    EXPECT_TRUE(decode_all(r, c).headers.empty()) << "covered: nothing more to say";
  }
  // A new entity: its spawn goes with the new status (pending back to 0 after it).
  const EntityId a = w.make(1.0f, 0.0f);
  ASSERT_TRUE(r.set_priority(a, 0.0f).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_EQ(decode_all(r, c).spawns.size(), 1u);
  EXPECT_EQ(decode_all(r, c).headers[0].interest.pending, 0u);
}

// A spawn says whether its entity was created at the tick it joined the client's set (play its
// appearance) or stood there already (play nothing), and keeps saying it when resent.
TEST(ReplicatorTest, ASpawnSaysWhetherItsEntityWasCreated) {
  SmallWorld w(10.0f, 10.0f);
  Game game{&w.world};
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId there = w.make(1.0f, 0.0f);
  const EntityId walker = w.make(40.0f, 0.0f);
  w.world.tick();  // they exist before the client joins
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(game);
  def.delivery = Delivery::unreliable;
  def.resend_sends = 2;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::map<std::uint32_t, std::vector<bool>> created;  // by entity index, every spawn record sent
  auto send = [&] {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    for (const WireRecord& s : decode_all(r, c).spawns) created[s.entity.index].push_back(s.created);
  };
  send();  // the client joins: what stands there was not created for it
  const EntityId born = w.make(2.0f, 0.0f);
  ASSERT_TRUE(w.world.set_position(walker, 3.0f, 0.0f).ok());
  send();
  send();
  send();
  EXPECT_EQ(created[there.index], (std::vector<bool>{false, false}));  // sent, then resent
  EXPECT_EQ(created[walker.index], (std::vector<bool>{false, false}));
  EXPECT_EQ(created[born.index], (std::vector<bool>{true, true}));
}

}  // namespace
}  // namespace sightline
