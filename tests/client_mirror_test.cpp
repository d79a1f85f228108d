// The ClientMirror on hand-made packets: what it applies, what it reports, what it refuses.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/protocol.h"

namespace sightline {
namespace {

struct Packet {
  PacketHeader header;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(2048);
  std::optional<PacketWriter> writer;
  Packet(std::uint32_t sequence, std::uint32_t tick, std::uint32_t reliable_next,
         Delivery delivery = Delivery::reliable) {
    header = {delivery, sequence, tick, reliable_next};
    writer.emplace(buffer, header);
  }
  Packet& spawn(std::uint32_t id, EntityId e, std::vector<std::uint8_t> payload = {1, 2, 3}, std::uint32_t age = 0) {
    EXPECT_TRUE(writer->add_spawn(id, e, SpawnReason::near, payload, age));
    return *this;
  }
  Packet& update(EntityId e, std::vector<std::uint8_t> payload = {9}) {
    EXPECT_TRUE(writer->add_update(e, payload));
    return *this;
  }
  Packet& despawn(std::uint32_t id, EntityId e, DespawnReason reason = DespawnReason::left) {
    EXPECT_TRUE(writer->add_despawn(id, e, reason));
    return *this;
  }
  std::vector<std::uint8_t> bytes() {
    const auto b = writer->finish();
    return {b.begin(), b.end()};
  }
};

ClientMirror make(Delivery delivery = Delivery::reliable, std::uint32_t history = 4) {
  MirrorDef def;
  def.delivery = delivery;
  def.history = history;
  return std::move(ClientMirror::create(def).value());
}

struct Log : MirrorListener {
  std::vector<std::string> lines;
  void on_enter(EntityId e, SpawnReason, std::span<const std::uint8_t> s, std::uint32_t tick) override {
    lines.push_back("enter " + std::to_string(e.index) + ":" + std::to_string(e.generation) + " @" +
                    std::to_string(tick) + " " + std::to_string(s.size()) + "B");
  }
  void on_update(EntityId e, std::span<const std::uint8_t>, std::uint32_t tick) override {
    lines.push_back("update " + std::to_string(e.index) + " @" + std::to_string(tick));
  }
  void on_exit(EntityId e, ExitKind kind, DespawnReason) override {
    lines.push_back(std::string(kind == ExitKind::destroy ? "destroy " : "leave ") + std::to_string(e.index));
  }
};

std::vector<AnomalyKind> kinds(const ClientMirror& m) {
  std::vector<AnomalyKind> out;
  for (const Anomaly& a : m.anomalies()) out.push_back(a.kind);
  return out;
}

const EntityId a{3, 1};
const EntityId b{5, 2};

TEST(ClientMirrorTest, RefusesABadDef) {
  MirrorDef def;
  def.history = 0;
  auto m = ClientMirror::create(def);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::invalid_def);
  EXPECT_NE(m.status().message().find("history is 0"), std::string::npos);
  def.history = kMaxHistory + 1;
  EXPECT_FALSE(ClientMirror::create(def).ok());
  def.history = 4;
  def.max_entities = 0;
  EXPECT_NE(ClientMirror::create(def).status().message().find("max_entities"), std::string::npos);
}

TEST(ClientMirrorTest, AppliesSpawnsUpdatesAndDespawnsInOrder) {
  ClientMirror m = make();
  Log log;
  ASSERT_TRUE(m.receive(Packet(0, 10, 2).spawn(0, a).spawn(1, b, {7, 7, 7, 7}).bytes(), &log).ok());
  ASSERT_TRUE(m.receive(Packet(1, 11, 2).update(a).update(b).bytes(), &log).ok());
  ASSERT_TRUE(m.receive(Packet(2, 12, 4).despawn(2, a, DespawnReason::destroyed).despawn(3, b).bytes(), &log).ok());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @10 3B", "enter 5:2 @10 4B", "update 3 @11", "update 5 @11",
                                                 "destroy 3", "leave 5"}));
  EXPECT_EQ(m.held_count(), 0u);
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.ack().reliable_applied, 4u);
  EXPECT_EQ(m.ack().latest_sequence, 2u);
  EXPECT_EQ(m.stats().enters, 2u);
  EXPECT_EQ(m.stats().exits, 2u);
}

TEST(ClientMirrorTest, HistoryRestartsOnArrivalAndKeepsTheLatest) {
  ClientMirror m = make(Delivery::reliable, 3);
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a, {1}).bytes()).ok());
  for (std::uint32_t t = 2; t <= 5; ++t) ASSERT_TRUE(m.receive(Packet(t - 1, t, 1).update(a, {static_cast<std::uint8_t>(t)}).bytes()).ok());
  auto h = *m.history(a);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].tick, 3u);
  EXPECT_EQ(h[2].tick, 5u);
  EXPECT_EQ(h[2].payload[0], 5u);
  EXPECT_EQ(h[0].part, StatePart::update);
  EXPECT_EQ(*m.state_tick(a), 5u);
  // Leaves, comes back: the history starts again with the full state.
  ASSERT_TRUE(m.receive(Packet(5, 6, 3).despawn(1, a).spawn(2, a, {42}).bytes()).ok());
  h = *m.history(a);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].part, StatePart::full);
  EXPECT_EQ(h[0].payload[0], 42u);
  EXPECT_EQ(m.history(b).status().code(), ErrorCode::stale_handle);
}

TEST(ClientMirrorTest, ASpawnCarriesTheAgeOfItsState) {
  ClientMirror m = make(Delivery::unreliable);
  Log log;
  ASSERT_TRUE(m.receive(Packet(0, 20, 1, Delivery::unreliable).spawn(0, a, {1}, 6).bytes(), &log).ok());
  EXPECT_EQ(*m.state_tick(a), 14u);
  EXPECT_EQ(log.lines[0], "enter 3:1 @14 1B");
  // An update newer than the state applies even if older than the packet that brought it.
  ASSERT_TRUE(m.receive(Packet(1, 15, 1, Delivery::unreliable).update(a).bytes()).ok());
  EXPECT_EQ(*m.state_tick(a), 15u);
}

TEST(ClientMirrorTest, ReportsEveryAnomalyAndSkipsOnlyThatRecord) {
  ClientMirror m = make();
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a).bytes()).ok());
  // Spawn of a held id; an update for an unknown id; a despawn of an unknown id; a held index
  // with another generation; a gap in reliable ids; a gap in sequence.
  ASSERT_TRUE(m.receive(Packet(1, 2, 2).spawn(1, a).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::spawn_held});
  ASSERT_TRUE(m.receive(Packet(2, 3, 2).update(b).update(a).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::update_unknown});
  EXPECT_EQ(*m.state_tick(a), 3u) << "the good record of the packet still applies";
  ASSERT_TRUE(m.receive(Packet(3, 4, 3).despawn(2, b).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::despawn_unknown});
  ASSERT_TRUE(m.receive(Packet(4, 5, 3).update({a.index, 9}).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::generation_mismatch});
  ASSERT_TRUE(m.receive(Packet(5, 6, 6).spawn(5, b).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_reliable_id});
  EXPECT_TRUE(m.holds(b)) << "resynced and applied";
  ASSERT_TRUE(m.receive(Packet(9, 7, 6).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_sequence});
  ASSERT_TRUE(m.receive(Packet(10, 8, 6, Delivery::unreliable).despawn(6, b).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::delivery_mismatch});
  EXPECT_TRUE(m.holds(b)) << "a packet of the other delivery is skipped whole";
  EXPECT_EQ(m.anomalies()[0].sequence, 10u);
  EXPECT_EQ(m.stats().anomalies, 7u);
}

TEST(ClientMirrorTest, MaxEntitiesBoundsTheTable) {
  MirrorDef def;
  def.max_entities = 2;
  ClientMirror m = std::move(ClientMirror::create(def).value());
  ASSERT_TRUE(m.receive(Packet(0, 1, 3).spawn(0, {1, 1}).spawn(1, {2, 1}).spawn(2, {3, 1}).bytes()).ok());
  EXPECT_EQ(m.held_count(), 2u);
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::too_many});
}

TEST(ClientMirrorTest, MalformedBytesChangeNothing) {
  ClientMirror m = make(Delivery::unreliable);
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a, {1, 2}).bytes()).ok());
  const std::vector<std::uint8_t> good = Packet(1, 2, 2, Delivery::unreliable).update(a, {5, 5}).spawn(1, b).bytes();
  auto snapshot = [&] {
    std::vector<std::uint64_t> s;
    for (EntityId e : m.held()) s.push_back((std::uint64_t{e.index} << 32) | *m.state_tick(e));
    s.push_back(m.ack().reliable_applied);
    s.push_back(m.ack().latest_sequence);
    s.push_back(m.stats().packets);
    s.push_back(m.stats().updates);
    return s;
  };
  const auto before = snapshot();
  std::uint64_t rejected = 0;
  // Every truncation, and every byte set to a handful of values: refused whole, or well formed.
  for (std::size_t n = 0; n < good.size(); ++n) {
    const Status s = m.receive(std::span<const std::uint8_t>(good).first(n));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), ErrorCode::malformed_packet);
    EXPECT_NE(s.message().find("byte"), std::string::npos) << s.message();
    EXPECT_EQ(snapshot(), before);
    ++rejected;
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const int v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::vector<std::uint8_t> bad = good;
      if (bad[i] == v) continue;
      bad[i] = static_cast<std::uint8_t>(v);
      ClientMirror probe = make(Delivery::unreliable);
      ASSERT_TRUE(probe.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a, {1, 2}).bytes()).ok());
      const Status s = probe.receive(bad);
      if (!s.ok()) {
        EXPECT_EQ(probe.held(), std::vector<EntityId>{a});
        EXPECT_EQ(probe.ack().reliable_applied, 1u);
        EXPECT_EQ(*probe.state_tick(a), 1u);
        EXPECT_TRUE(probe.anomalies().empty());
      }
    }
  }
  EXPECT_EQ(m.stats().rejected, rejected);
  ASSERT_TRUE(m.receive(good).ok());
  EXPECT_TRUE(m.holds(b));
}

TEST(ClientMirrorTest, APayloadTheGameRefusesRejectsThePacketWhole) {
  MirrorDef def;
  def.check = [](EntityId e, StatePart, std::span<const std::uint8_t> payload, void*) {
    return e.index != 5 || payload.size() == 4;
  };
  ClientMirror m = std::move(ClientMirror::create(def).value());
  const Status s = m.receive(Packet(0, 1, 2).spawn(0, a).spawn(1, b, {1}).bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::malformed_packet);
  EXPECT_NE(s.message().find("record 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("5:2"), std::string::npos) << s.message();
  EXPECT_EQ(m.held_count(), 0u) << "the good spawn before it was not applied either";
  EXPECT_EQ(m.ack().reliable_applied, 0u);
}

TEST(ClientMirrorTest, UnreliableAppliesReliableRecordsInIdOrderOnce) {
  ClientMirror m = make(Delivery::unreliable);
  Log log;
  // Spawn 1 arrives before spawn 0; then spawn 0; then both again.
  ASSERT_TRUE(m.receive(Packet(1, 2, 2, Delivery::unreliable).spawn(1, b).bytes(), &log).ok());
  EXPECT_EQ(m.held_count(), 0u);
  EXPECT_EQ(m.stats().reliable_buffered, 1u);
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a).bytes(), &log).ok());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @1 3B", "enter 5:2 @2 3B"}));
  ASSERT_TRUE(m.receive(Packet(2, 3, 2, Delivery::unreliable).spawn(0, a).spawn(1, b).bytes(), &log).ok());
  EXPECT_EQ(m.stats().reliable_duplicates, 2u);
  EXPECT_EQ(m.ack().reliable_applied, 2u);
  EXPECT_TRUE(m.anomalies().empty());
  // A duplicate datagram is counted and skipped.
  ASSERT_TRUE(m.receive(Packet(2, 3, 2, Delivery::unreliable).bytes()).ok());
  EXPECT_EQ(m.stats().duplicates, 1u);
  // Beyond the window is an anomaly.
  ASSERT_TRUE(m.receive(Packet(3, 4, 5000, Delivery::unreliable).spawn(2 + kReliableWindow, {9, 1}).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_reliable_id});
}

TEST(ClientMirrorTest, UnreliableDropsUpdatesItCannotPlace) {
  ClientMirror m = make(Delivery::unreliable);
  // The update came before the spawn it depends on (reliable_next 1, none applied): dropped.
  ASSERT_TRUE(m.receive(Packet(1, 2, 1, Delivery::unreliable).update(a).bytes()).ok());
  EXPECT_EQ(m.stats().stale_updates, 1u);
  EXPECT_TRUE(m.anomalies().empty());
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a).bytes()).ok());
  ASSERT_TRUE(m.receive(Packet(3, 5, 1, Delivery::unreliable).update(a).bytes()).ok());
  // Older than what is held: dropped. After its despawn: dropped.
  ASSERT_TRUE(m.receive(Packet(2, 4, 1, Delivery::unreliable).update(a).bytes()).ok());
  EXPECT_EQ(*m.state_tick(a), 5u);
  ASSERT_TRUE(m.receive(Packet(4, 6, 2, Delivery::unreliable).despawn(1, a).bytes()).ok());
  ASSERT_TRUE(m.receive(Packet(5, 7, 1, Delivery::unreliable).update(a).bytes()).ok());
  EXPECT_EQ(m.stats().stale_updates, 3u);
  EXPECT_TRUE(m.anomalies().empty());
  // With exactly the reliable records the packet names applied, an update for an id not held is
  // a real anomaly.
  ASSERT_TRUE(m.receive(Packet(6, 8, 2, Delivery::unreliable).update(b).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::update_unknown});
}

}  // namespace
}  // namespace sightline
