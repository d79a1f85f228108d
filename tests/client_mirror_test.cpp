// The ClientMirror on hand-made packets: what it applies, what it reports, what it refuses.
#include "sightline/client_mirror.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sightline/protocol.h"

namespace sightline {
namespace {

struct Packet {
  PacketHeader header;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(2048);
  std::optional<PacketWriter> writer;
  Packet(std::uint32_t sequence, std::uint32_t tick, std::uint32_t reliable_next,
         Delivery delivery = Delivery::reliable, InterestStatus interest = {}) {
    header = {delivery, sequence, tick, reliable_next, interest};
    writer.emplace(buffer, header);
  }
  Packet& spawn(std::uint32_t id, EntityId e, std::vector<std::uint8_t> payload = {1, 2, 3},
                std::uint32_t age = 0, bool created = false) {
    EXPECT_TRUE(writer->add_spawn(id, e, SpawnReason::near, created, payload, age));
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
  void on_enter(EntityId e, SpawnReason, bool created, std::span<const std::uint8_t> s,
                std::uint32_t tick) override {
    lines.push_back("enter " + std::to_string(e.index) + ":" + std::to_string(e.generation) + " @" +
                    std::to_string(tick) + " " + std::to_string(s.size()) + "B" +
                    (created ? " created" : ""));
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
  ASSERT_TRUE(
      m.receive(Packet(2, 12, 4).despawn(2, a, DespawnReason::destroyed).despawn(3, b).bytes(), &log).ok());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @10 3B", "enter 5:2 @10 4B", "update 3 @11",
                                                 "update 5 @11", "destroy 3", "leave 5"}));
  EXPECT_EQ(m.held_count(), 0u);
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.ack(), (AckPacket{.latest_sequence = 2, .reliable_applied = 4, .received = 7}));
  EXPECT_EQ(m.stats().enters, 2u);
  EXPECT_EQ(m.stats().exits, 2u);
}

TEST(ClientMirrorTest, HistoryKeepsShortAndLongStatesExactly) {
  // States of every length around the mirror's in-slot size (24 bytes), in one ring, each read
  // back byte for byte as the ring wraps.
  ClientMirror m = make(Delivery::reliable, 3);
  auto state = [](std::uint32_t t) {
    std::vector<std::uint8_t> bytes((t * 7) % 61);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(t * 31 + i);
    return bytes;
  };
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a, state(1)).bytes()).ok());
  for (std::uint32_t t = 2; t <= 40; ++t) {
    ASSERT_TRUE(m.receive(Packet(t - 1, t, 1).update(a, state(t)).bytes()).ok()) << t;
    const auto h = *m.history(a);
    ASSERT_EQ(h.size(), std::min<std::size_t>(t, 3));
    for (std::size_t k = 0; k < h.size(); ++k) {
      const std::uint32_t tick = t + 1 - static_cast<std::uint32_t>(h.size() - k);
      EXPECT_EQ(h[k].tick, tick);
      const auto want = state(tick);
      EXPECT_TRUE(std::equal(h[k].payload.begin(), h[k].payload.end(), want.begin(), want.end()))
          << t << " " << k;
    }
  }
}

TEST(ClientMirrorTest, HistoryRestartsOnArrivalAndKeepsTheLatest) {
  ClientMirror m = make(Delivery::reliable, 3);
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a, {1}).bytes()).ok());
  for (std::uint32_t t = 2; t <= 5; ++t)
    ASSERT_TRUE(m.receive(Packet(t - 1, t, 1).update(a, {static_cast<std::uint8_t>(t)}).bytes()).ok());
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
  const std::vector<std::uint8_t> good =
      Packet(1, 2, 2, Delivery::unreliable).update(a, {5, 5}).spawn(1, b).bytes();
  auto snapshot = [&] {
    std::vector<std::uint64_t> s;
    for (EntityId e : m.held()) {
      s.push_back((std::uint64_t{e.index} << 32) | *m.state_tick(e));
      for (const Snapshot& snap : *m.history(e)) {
        s.push_back((std::uint64_t{snap.tick} << 8) | static_cast<std::uint64_t>(snap.part));
        s.insert(s.end(), snap.payload.begin(), snap.payload.end());
      }
    }
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
  int refused_corruptions = 0;
  int accepted_corruptions = 0;  // in a payload, or a field any value of which is well formed
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
        const auto h = *probe.history(a);
        ASSERT_EQ(h.size(), 1u);
        EXPECT_EQ(std::vector<std::uint8_t>(h[0].payload.begin(), h[0].payload.end()),
                  (std::vector<std::uint8_t>{1, 2}));
        EXPECT_EQ(probe.stats().rejected, 1u);
        EXPECT_EQ(probe.stats().packets, 1u);
        ++refused_corruptions;
      } else {
        ++accepted_corruptions;
      }
    }
  }
  EXPECT_GT(refused_corruptions, 0);
  EXPECT_GT(accepted_corruptions, 0);
  EXPECT_EQ(m.stats().rejected, rejected);
  ASSERT_TRUE(m.receive(good).ok());
  EXPECT_TRUE(m.holds(b));
}

TEST(ClientMirrorTest, APacketLongerThanAnyReplicatorWritesIsRefused) {
  ClientMirror m = make();
  ASSERT_TRUE(m.receive(Packet(0, 1, 0).spawn(0, a).bytes()).ok());
  // A packet whose one spawn carries a state of 70,000 bytes: well formed but for its length.
  std::vector<std::uint8_t> buffer(80000);
  PacketWriter w(buffer, PacketHeader{Delivery::reliable, 1, 2, 1, {}});
  ASSERT_TRUE(w.add_spawn(1, b, SpawnReason::near, false, std::vector<std::uint8_t>(70000, 7)));
  const auto bytes = w.finish();
  ASSERT_GT(bytes.size(), kMaxPacketBytes);
  const Status s = m.receive(bytes);
  EXPECT_EQ(s.code(), ErrorCode::malformed_packet);
  EXPECT_NE(s.message().find("more than kMaxPacketBytes (65535)"), std::string::npos) << s.message();
  EXPECT_EQ(m.held(), std::vector<EntityId>{a});
  EXPECT_EQ(m.stats().rejected, 1u);
  EXPECT_TRUE(m.receive(Packet(1, 2, 1).update(a).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
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
  ASSERT_TRUE(
      m.receive(Packet(3, 4, 5000, Delivery::unreliable).spawn(2 + kReliableWindow, {9, 1}).bytes()).ok());
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

TEST(ClientMirrorTest, NamesEveryAnomalyKind) {
  std::vector<std::string> names;
  for (int k = 0; k <= static_cast<int>(AnomalyKind::too_many); ++k) {
    names.emplace_back(anomaly_kind_name(static_cast<AnomalyKind>(k)));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"update_unknown", "spawn_held", "despawn_unknown",
                                             "generation_mismatch", "bad_sequence", "bad_reliable_id",
                                             "delivery_mismatch", "too_many"}));
}

TEST(ClientMirrorTest, AcksNothingBeforeTheFirstPacketThenTheHighestSequence) {
  ClientMirror m = make(Delivery::unreliable);
  EXPECT_EQ(m.ack(), AckPacket{});
  ASSERT_TRUE(m.receive(Packet(4, 5, 0, Delivery::unreliable).bytes()).ok());
  ASSERT_TRUE(m.receive(Packet(2, 3, 0, Delivery::unreliable).bytes()).ok());
  EXPECT_EQ(m.ack().latest_sequence, 4u) << "a late packet does not lower the ack";
  // The last sequence of all is an ordinary sequence, not a duplicate of "none yet".
  ClientMirror top = make(Delivery::unreliable);
  ASSERT_TRUE(top.receive(Packet(0xffffffffu, 5, 1, Delivery::unreliable).spawn(0, a).bytes()).ok());
  EXPECT_EQ(top.stats().duplicates, 0u);
  EXPECT_TRUE(top.holds(a));
  EXPECT_EQ(top.ack().latest_sequence, 0xffffffffu);
}

TEST(ClientMirrorTest, OnlyDestroyedIsADeath) {
  const DespawnReason reasons[] = {
      DespawnReason::left,          DespawnReason::destroyed,        DespawnReason::key_removed,
      DespawnReason::space_changed, DespawnReason::culling_switched, DespawnReason::hidden};
  struct Exits : MirrorListener {
    std::vector<std::pair<ExitKind, DespawnReason>> seen;
    void on_exit(EntityId, ExitKind kind, DespawnReason reason) override { seen.emplace_back(kind, reason); }
  } exits;
  ClientMirror m = make();
  std::uint32_t id = 0;
  std::uint32_t sequence = 0;
  for (const DespawnReason reason : reasons) {
    ASSERT_TRUE(
        m.receive(Packet(sequence, sequence + 1, id + 2).spawn(id, a).despawn(id + 1, a, reason).bytes(),
                  &exits)
            .ok());
    id += 2;
    ++sequence;
  }
  ASSERT_EQ(exits.seen.size(), std::size(reasons));
  for (std::size_t i = 0; i < exits.seen.size(); ++i) {
    EXPECT_EQ(exits.seen[i].second, reasons[i]);
    EXPECT_EQ(exits.seen[i].first,
              reasons[i] == DespawnReason::destroyed ? ExitKind::destroy : ExitKind::leave);
  }
  EXPECT_TRUE(m.anomalies().empty());
}

TEST(ClientMirrorTest, AReusedSlotIsNeverItsPredecessor) {
  ClientMirror m = make();
  const EntityId successor{a.index, a.generation + 1};
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a).bytes()).ok());
  // A spawn, an update and a despawn of the same index at another generation: all refused.
  ASSERT_TRUE(
      m.receive(Packet(1, 2, 3).spawn(1, successor).update(successor).despawn(2, successor).bytes()).ok());
  EXPECT_EQ(kinds(m),
            (std::vector<AnomalyKind>{AnomalyKind::generation_mismatch, AnomalyKind::generation_mismatch,
                                      AnomalyKind::generation_mismatch}));
  EXPECT_EQ(m.held(), std::vector<EntityId>{a});
  EXPECT_EQ(*m.state_tick(a), 1u);
  EXPECT_FALSE(m.holds(successor));
  EXPECT_EQ(m.history(successor).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(m.state_tick(successor).status().code(), ErrorCode::stale_handle);
  EXPECT_FALSE(m.holds(EntityId{a.index, 0})) << "the null handle is never held";
  // Once the predecessor has gone, the successor arrives with a fresh history.
  ASSERT_TRUE(
      m.receive(Packet(2, 3, 5).despawn(3, a, DespawnReason::destroyed).spawn(4, successor, {8}).bytes())
          .ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.held(), std::vector<EntityId>{successor});
  ASSERT_EQ(m.history(successor)->size(), 1u);
  EXPECT_EQ(m.history(successor)->front().payload[0], 8u);
}

TEST(ClientMirrorTest, HugeIndicesAndGenerationsAreHeldWithoutSizingAnythingByThem) {
  ClientMirror m = make();
  const EntityId far{0xffffffffu, 0xffffffffu};
  const EntityId near_zero{0, 1};
  ASSERT_TRUE(m.receive(Packet(0, 1, 2).spawn(0, far).spawn(1, near_zero).bytes()).ok());
  EXPECT_EQ(m.held(), (std::vector<EntityId>{near_zero, far})) << "sorted by index";
  ASSERT_TRUE(m.receive(Packet(1, 2, 2).update(far).bytes()).ok());
  EXPECT_EQ(*m.state_tick(far), 2u);
}

TEST(ClientMirrorTest, ReliableDeliveryResynchronisesAfterAGap) {
  ClientMirror m = make();
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a).bytes()).ok());
  ASSERT_TRUE(m.receive(Packet(3, 4, 1).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_sequence});
  ASSERT_TRUE(m.receive(Packet(4, 5, 1).update(a).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty()) << "the packet after the gap is expected";
  // A reliable id from the past: reported, and the next one is expected after it.
  ASSERT_TRUE(m.receive(Packet(5, 6, 1).despawn(0, a).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_reliable_id});
  EXPECT_FALSE(m.holds(a)) << "consistent otherwise, so applied";
  EXPECT_EQ(m.ack().reliable_applied, 1u);
  ASSERT_TRUE(m.receive(Packet(6, 7, 2).spawn(1, b).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().anomalies, 2u);
}

TEST(ClientMirrorTest, UnreliableCallsBackReliableRecordsInIdOrderThenUpdates) {
  ClientMirror m = make(Delivery::unreliable);
  Log log;
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a).bytes(), &log).ok());
  // In the packet: an update first, then reliable ids 3, 1, 2. Applied: 1, 2, 3, then the update.
  ASSERT_TRUE(m.receive(Packet(1, 2, 4, Delivery::unreliable)
                            .update(a)
                            .despawn(3, b, DespawnReason::destroyed)
                            .spawn(1, b, {4, 4})
                            .update(b)
                            .bytes(),
                        &log)
                  .ok());
  EXPECT_EQ(m.stats().reliable_buffered, 1u) << "only id 3 had to wait";
  EXPECT_EQ(m.stats().stale_updates, 1u) << "b's update is no newer than the full state it arrived with";
  // Id 2 arrives later; 3 follows it at once.
  ASSERT_TRUE(m.receive(Packet(2, 3, 4, Delivery::unreliable).spawn(2, {7, 1}).bytes(), &log).ok());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @1 3B", "enter 5:2 @2 2B", "update 3 @2",
                                                 "enter 7:1 @3 3B", "destroy 5"}));
  EXPECT_EQ(m.held(), (std::vector<EntityId>{a, {7, 1}}));
  EXPECT_EQ(m.ack().reliable_applied, 4u);
  EXPECT_TRUE(m.anomalies().empty());
}

TEST(ClientMirrorTest, UnreliableBuffersACopyOfWhatWaits) {
  ClientMirror m = make(Delivery::unreliable);
  {
    std::vector<std::uint8_t> early = Packet(1, 2, 2, Delivery::unreliable).spawn(1, b, {10, 20, 30}).bytes();
    ASSERT_TRUE(m.receive(early).ok());
    std::fill(early.begin(), early.end(), std::uint8_t{0xee});  // the caller's bytes are gone
  }
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a).bytes()).ok());
  const auto h = *m.history(b);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(std::vector<std::uint8_t>(h[0].payload.begin(), h[0].payload.end()),
            (std::vector<std::uint8_t>{10, 20, 30}));
  EXPECT_EQ(h[0].tick, 2u) << "the tick of the packet that brought it";
  // The same early record again while it waits is a duplicate, not a second entry.
  ClientMirror w = make(Delivery::unreliable);
  ASSERT_TRUE(w.receive(Packet(1, 2, 2, Delivery::unreliable).spawn(1, b).bytes()).ok());
  ASSERT_TRUE(w.receive(Packet(2, 3, 2, Delivery::unreliable).spawn(1, b).bytes()).ok());
  EXPECT_EQ(w.stats().reliable_buffered, 1u);
  EXPECT_EQ(w.stats().reliable_duplicates, 1u);
}

TEST(ClientMirrorTest, UnreliableWindowEdge) {
  ClientMirror m = make(Delivery::unreliable);
  ASSERT_TRUE(m.receive(Packet(0, 1, 0, Delivery::unreliable).spawn(kReliableWindow - 1, b).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().reliable_buffered, 1u);
  ASSERT_TRUE(m.receive(Packet(1, 2, 0, Delivery::unreliable).spawn(kReliableWindow, {9, 1}).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::bad_reliable_id});
  EXPECT_EQ(m.anomalies()[0].entity, (EntityId{9, 1}));
  EXPECT_EQ(m.stats().reliable_buffered, 1u);
}

TEST(ClientMirrorTest, UnreliableUpdatesMatchTheExactIdOrAreAnomaliesWhenTheMirrorIsCaughtUp) {
  ClientMirror m = make(Delivery::unreliable);
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a).bytes()).ok());
  const EntityId other{a.index, a.generation + 1};
  // Behind: the server had assigned id 1 (say, a's despawn and other's spawn) when it wrote this.
  ASSERT_TRUE(m.receive(Packet(1, 2, 3, Delivery::unreliable).update(other).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().stale_updates, 1u);
  // Caught up: the same disagreement is an anomaly.
  ASSERT_TRUE(m.receive(Packet(2, 3, 1, Delivery::unreliable).update(other).update(b).bytes()).ok());
  EXPECT_EQ(kinds(m),
            (std::vector<AnomalyKind>{AnomalyKind::generation_mismatch, AnomalyKind::update_unknown}));
  // Caught up but not newer: dropped quietly (an update from an earlier packet, arriving late).
  ASSERT_TRUE(m.receive(Packet(3, 1, 1, Delivery::unreliable).update(a).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().stale_updates, 2u);
  EXPECT_EQ(m.history(a)->size(), 1u);
}

TEST(ClientMirrorTest, UnreliableDuplicatesAreIdempotentWhateverTheWindow) {
  ClientMirror m = make(Delivery::unreliable, 8);
  const std::vector<std::uint8_t> join =
      Packet(0, 1, 2, Delivery::unreliable).spawn(0, a).spawn(1, b).bytes();
  const std::vector<std::uint8_t> step =
      Packet(1, 2, 2, Delivery::unreliable).update(a, {1}).update(b, {2}).bytes();
  ASSERT_TRUE(m.receive(join).ok());
  ASSERT_TRUE(m.receive(step).ok());
  const auto before = m.held();
  const auto history_a = m.history(a)->size();
  // Far more packets than the duplicate window, then the old ones again: nothing changes.
  for (std::uint32_t s = 2; s < 3000; ++s)
    ASSERT_TRUE(m.receive(Packet(s, 2, 2, Delivery::unreliable).bytes()).ok());
  ASSERT_TRUE(m.receive(join).ok());
  ASSERT_TRUE(m.receive(step).ok());
  ASSERT_TRUE(m.receive(step).ok());
  EXPECT_EQ(m.held(), before);
  EXPECT_EQ(m.history(a)->size(), history_a);
  EXPECT_EQ(m.stats().enters, 2u);
  EXPECT_EQ(m.stats().updates, 2u);
  EXPECT_GE(m.stats().duplicates, 1u) << "the last copy of step is inside the window";
  EXPECT_TRUE(m.anomalies().empty());
}

TEST(ClientMirrorTest, UnreliableMaxEntitiesAndDeliveryMismatch) {
  MirrorDef def;
  def.delivery = Delivery::unreliable;
  def.max_entities = 1;
  ClientMirror m = std::move(ClientMirror::create(def).value());
  ASSERT_TRUE(m.receive(Packet(0, 1, 2, Delivery::unreliable).spawn(0, a).spawn(1, b).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::too_many});
  EXPECT_EQ(m.held(), std::vector<EntityId>{a});
  EXPECT_EQ(m.ack().reliable_applied, 2u) << "the refused spawn still took its place in the order";
  const AckPacket ack = m.ack();
  ASSERT_TRUE(m.receive(Packet(9, 2, 3, Delivery::reliable).despawn(2, a).bytes()).ok());
  EXPECT_EQ(kinds(m), std::vector<AnomalyKind>{AnomalyKind::delivery_mismatch});
  EXPECT_TRUE(m.anomalies()[0].entity.is_null());
  EXPECT_EQ(m.ack().latest_sequence, ack.latest_sequence);
  EXPECT_EQ(m.ack().reliable_applied, ack.reliable_applied);
  EXPECT_TRUE(m.holds(a));
}

TEST(ClientMirrorTest, TheCheckSeesEveryPayloadWithItsPartAndContextBeforeAnythingApplies) {
  struct Seen {
    std::vector<std::string> calls;
    bool refuse = false;
  } seen;
  MirrorDef def;
  def.check_context = &seen;
  def.check = [](EntityId e, StatePart part, std::span<const std::uint8_t> payload, void* context) {
    auto& s = *static_cast<Seen*>(context);
    s.calls.push_back(std::to_string(e.index) + (part == StatePart::full ? " full " : " update ") +
                      std::to_string(payload.size()));
    return !s.refuse;
  };
  ClientMirror m = std::move(ClientMirror::create(def).value());
  Log log;
  const std::vector<std::uint8_t> packet =
      Packet(0, 1, 2).spawn(0, a, {1, 2}).update(a, {3}).despawn(1, a).bytes();
  seen.refuse = true;
  const Status refused = m.receive(packet, &log);
  EXPECT_EQ(refused.code(), ErrorCode::malformed_packet);
  EXPECT_NE(refused.message().find("record 0"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("3:1"), std::string::npos) << refused.message();
  EXPECT_TRUE(log.lines.empty()) << "no callback for a refused packet";
  EXPECT_EQ(m.stats().rejected, 1u);
  EXPECT_EQ(m.stats().packets, 0u);
  EXPECT_EQ(m.ack().latest_sequence, 0u);
  seen.calls.clear();
  seen.refuse = false;
  ASSERT_TRUE(m.receive(packet, &log).ok());
  EXPECT_EQ(seen.calls, (std::vector<std::string>{"3 full 2", "3 update 1"})) << "despawns carry no payload";
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @1 2B", "update 3 @1", "leave 3"}));
}

TEST(ClientMirrorTest, ARefusedPacketClearsTheLastAnomalies) {
  ClientMirror m = make();
  ASSERT_TRUE(m.receive(Packet(0, 1, 0).update(a).bytes()).ok());
  ASSERT_EQ(m.anomalies().size(), 1u);
  const std::vector<std::uint8_t> garbage{kProtocolVersion, 9};
  const Status s = m.receive(garbage);
  EXPECT_EQ(s.code(), ErrorCode::malformed_packet);
  EXPECT_NE(s.message().find("byte 1"), std::string::npos) << s.message();
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().anomalies, 1u);
}

TEST(ClientMirrorTest, AMovedMirrorKeepsItsTable) {
  ClientMirror m = make();
  ASSERT_TRUE(m.receive(Packet(0, 1, 1).spawn(0, a).bytes()).ok());
  ClientMirror moved = std::move(m);
  EXPECT_TRUE(moved.holds(a));
  ClientMirror other = make();
  other = std::move(moved);
  ASSERT_TRUE(other.receive(Packet(1, 2, 1).update(a).bytes()).ok());
  EXPECT_EQ(*other.state_tick(a), 2u);
}

// interest(): the newest packet's status, with what the server assigned and the mirror has not
// applied yet counted as on its way.
TEST(ClientMirrorTest, InterestIsTheNewestStatusWithUnappliedRecordsStillOnTheirWay) {
  ClientMirror m = make(Delivery::unreliable);
  EXPECT_EQ(m.interest(), InterestStatus{});  // nothing known yet
  const InterestStatus five{.culling = true, .radius = 8.0f, .pending = 5};
  const InterestStatus two{.culling = true, .radius = 8.0f, .pending = 2};
  // Packet 1 (reliable ids 1, 2 assigned; pending 2) arrives before packet 0 (id 0; pending 5).
  ASSERT_TRUE(m.receive(Packet(1, 2, 3, Delivery::unreliable, two).spawn(1, a).spawn(2, b).bytes()).ok());
  EXPECT_EQ(m.interest(), (InterestStatus{.culling = true, .radius = 8.0f, .pending = 2 + 3}));
  // The older packet fills the gap but does not take the status back.
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable, five).spawn(0, {9, 1}).bytes()).ok());
  EXPECT_EQ(m.held_count(), 3u);
  EXPECT_EQ(m.interest(), two);
  // Culling switched off: the radius is 0 and the promise is void.
  ASSERT_TRUE(
      m.receive(
           Packet(2, 3, 3, Delivery::unreliable, {.culling = false, .radius = 0.0f, .pending = 0}).bytes())
          .ok());
  EXPECT_EQ(m.interest(), InterestStatus{});
  // A hostile count cannot wrap: it saturates.
  ASSERT_TRUE(m.receive(Packet(3, 4, 900, Delivery::unreliable,
                               {.culling = true, .radius = 1.0f, .pending = 0xfffffff0u})
                            .bytes())
                  .ok());
  EXPECT_EQ(m.interest().pending, 0xffffffffu);
}

// Reliable: each packet's status as it comes; a send split over packets counts the records of
// its later packets as on their way until they are applied.
TEST(ClientMirrorTest, ReliableInterestCountsTheSendsLaterPackets) {
  ClientMirror m = make();
  const InterestStatus one{.culling = true, .radius = 4.0f, .pending = 1};
  ASSERT_TRUE(m.receive(Packet(0, 1, 2, Delivery::reliable, one).spawn(0, a).bytes()).ok());
  EXPECT_EQ(m.interest().pending, 2u);  // b's spawn (id 1) is in the next packet
  ASSERT_TRUE(m.receive(Packet(1, 1, 2, Delivery::reliable, one).spawn(1, b).bytes()).ok());
  EXPECT_EQ(m.interest(), one);
}

// The spawn's created bit reaches the listener, also for a record that waited for a missing one.
TEST(ClientMirrorTest, OnEnterSaysWhetherTheEntityWasCreated) {
  ClientMirror m = make(Delivery::unreliable);
  Log log;
  ASSERT_TRUE(m.receive(Packet(1, 2, 2, Delivery::unreliable).spawn(1, b, {5}, 0, true).bytes(), &log).ok());
  ASSERT_TRUE(m.receive(Packet(0, 1, 1, Delivery::unreliable).spawn(0, a, {6}, 0, false).bytes(), &log).ok());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"enter 3:1 @1 1B", "enter 5:2 @2 1B created"}));
}

}  // namespace
}  // namespace sightline
