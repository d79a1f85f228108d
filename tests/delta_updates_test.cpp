// Delta updates: the wire record and its refusals, the mirror's kept states and acks, and a
// Replicator with deltas against one without, on the same World.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"

namespace sightline {
namespace {

const EntityId a{3, 1};

std::vector<std::uint8_t> runs_of(const std::vector<std::uint8_t>& base,
                                  const std::vector<std::uint8_t>& state) {
  std::vector<std::uint8_t> runs(delta_runs_bound(state.size()));
  runs.resize(write_delta_runs(base, state, runs));
  return runs;
}

struct Packet {
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(1024);
  std::optional<PacketWriter> writer;
  Packet(std::uint32_t sequence, std::uint32_t tick, std::uint32_t reliable_next, Delivery delivery) {
    writer.emplace(buffer, PacketHeader{delivery, sequence, tick, reliable_next, {}});
  }
  Packet& spawn(std::uint32_t id, EntityId e) {
    EXPECT_TRUE(writer->add_spawn(id, e, SpawnReason::near, false, std::vector<std::uint8_t>{1, 2, 3}));
    return *this;
  }
  Packet& keep(EntityId e, const std::vector<std::uint8_t>& state) {
    EXPECT_TRUE(writer->add_delta_update(e, true, 0, 0, state));
    return *this;
  }
  Packet& delta(EntityId e, bool keep, std::uint32_t age, const std::vector<std::uint8_t>& base,
                const std::vector<std::uint8_t>& state) {
    EXPECT_TRUE(writer->add_delta_update(e, keep, age, static_cast<std::uint32_t>(state.size()),
                                         runs_of(base, state)));
    return *this;
  }
  std::vector<std::uint8_t> bytes() {
    const auto b = writer->finish();
    return {b.begin(), b.end()};
  }
};

struct Heard : MirrorListener {
  std::vector<std::vector<std::uint8_t>> updates;
  void on_update(EntityId, std::span<const std::uint8_t> state, std::uint32_t) override {
    updates.emplace_back(state.begin(), state.end());
  }
};

ClientMirror make(Delivery delivery, PayloadCheck check = nullptr) {
  MirrorDef def;
  def.delivery = delivery;
  def.check = check;
  return std::move(ClientMirror::create(def).value());
}

const std::vector<std::uint8_t> s10{10, 20, 30, 40, 50, 60, 70, 80};
const std::vector<std::uint8_t> s11{10, 20, 31, 40, 50, 60, 70, 80};
const std::vector<std::uint8_t> s12{10, 20, 31, 40, 50, 60, 70, 99, 1};

TEST(DeltaUpdatesTest, TheMirrorRebuildsFromTheStateItKept) {
  ClientMirror m = make(Delivery::reliable);
  Heard heard;
  ASSERT_TRUE(m.receive(Packet(0, 10, 1, Delivery::reliable).spawn(0, a).keep(a, s10).bytes(), &heard).ok());
  // Against tick 10's state, kept again: then against tick 11's.
  ASSERT_TRUE(
      m.receive(Packet(1, 11, 1, Delivery::reliable).delta(a, true, 1, s10, s11).bytes(), &heard).ok());
  ASSERT_TRUE(
      m.receive(Packet(2, 13, 1, Delivery::reliable).delta(a, false, 2, s11, s12).bytes(), &heard).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(heard.updates, (std::vector<std::vector<std::uint8_t>>{s10, s11, s12}));
  EXPECT_EQ(m.stats().deltas, 2u);
  const auto history = m.history(a).value();
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(std::vector<std::uint8_t>(history[3].payload.begin(), history[3].payload.end()), s12);
  // Tick 12 was never kept: an anomaly, not applied.
  ASSERT_TRUE(
      m.receive(Packet(3, 14, 1, Delivery::reliable).delta(a, false, 2, s11, s10).bytes(), &heard).ok());
  ASSERT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.anomalies()[0].kind, AnomalyKind::baseline_missing);
  EXPECT_EQ(m.anomalies()[0].entity, a);
  EXPECT_EQ(heard.updates.size(), 3u);
  // A state longer than the kept one and the runs can reach is not rebuilt (nor allocated).
  Packet huge(4, 15, 1, Delivery::reliable);
  ASSERT_TRUE(huge.writer->add_delta_update(a, false, 4, kMaxDeltaStateBytes, {}));
  ASSERT_TRUE(m.receive(huge.bytes(), &heard).ok());
  ASSERT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.anomalies()[0].kind, AnomalyKind::baseline_missing);
  EXPECT_EQ(heard.updates.size(), 3u);
}

TEST(DeltaUpdatesTest, TheMirrorKeepsTheTwoNewestStates) {
  ClientMirror m = make(Delivery::reliable);
  Heard heard;
  ASSERT_TRUE(m.receive(Packet(0, 10, 1, Delivery::reliable).spawn(0, a).keep(a, s10).bytes(), &heard).ok());
  ASSERT_TRUE(m.receive(Packet(1, 11, 1, Delivery::reliable).keep(a, s11).bytes(), &heard).ok());
  ASSERT_TRUE(m.receive(Packet(2, 12, 1, Delivery::reliable).keep(a, s12).bytes(), &heard).ok());
  // 11 and 12 are kept; 10 is gone.
  ASSERT_TRUE(
      m.receive(Packet(3, 13, 1, Delivery::reliable).delta(a, false, 2, s11, s10).bytes(), &heard).ok());
  EXPECT_TRUE(m.anomalies().empty());
  ASSERT_TRUE(
      m.receive(Packet(4, 14, 1, Delivery::reliable).delta(a, false, 4, s10, s11).bytes(), &heard).ok());
  ASSERT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.anomalies()[0].kind, AnomalyKind::baseline_missing);
}

bool only_tens(EntityId, StatePart part, std::span<const std::uint8_t> state, void*) {
  return part == StatePart::full || state.empty() || state[0] == 10;
}

TEST(DeltaUpdatesTest, TheCheckSeesTheRebuiltState) {
  ClientMirror m = make(Delivery::reliable, only_tens);
  ASSERT_TRUE(m.receive(Packet(0, 10, 1, Delivery::reliable).spawn(0, a).keep(a, s10).bytes()).ok());
  std::vector<std::uint8_t> bad = s11;
  bad[0] = 11;
  const Status refused = m.receive(Packet(1, 11, 1, Delivery::reliable).delta(a, false, 1, s10, bad).bytes());
  EXPECT_EQ(refused.code(), ErrorCode::malformed_packet);
  EXPECT_NE(refused.message().find("fails the state check"), std::string::npos) << refused.message();
  EXPECT_TRUE(m.receive(Packet(1, 11, 1, Delivery::reliable).delta(a, false, 1, s10, s11).bytes()).ok());
}

TEST(DeltaUpdatesTest, AnAckLeavesOutAPacketWhoseStateWasNotKept) {
  ClientMirror m = make(Delivery::unreliable);
  ASSERT_TRUE(m.receive(Packet(0, 10, 1, Delivery::unreliable).spawn(0, a).keep(a, s10).bytes()).ok());
  EXPECT_EQ(m.ack().received, 1u);
  // Sequence 1 is lost. Sequence 2 asks to keep a delta against a state never kept.
  ASSERT_TRUE(m.receive(Packet(2, 12, 1, Delivery::unreliable).delta(a, true, 1, s11, s12).bytes()).ok());
  EXPECT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.ack(), (AckPacket{.latest_sequence = 2, .reliable_applied = 1, .received = 0b100}));
  ASSERT_TRUE(m.receive(Packet(3, 13, 1, Delivery::unreliable).delta(a, true, 3, s10, s11).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.ack().received, 0b1001u);
  // A late packet's delta is stale, and so is one whose state is gone: neither is an anomaly.
  const std::uint64_t stale = m.stats().stale_updates;
  ASSERT_TRUE(m.receive(Packet(1, 11, 1, Delivery::unreliable).delta(a, false, 1, s12, s10).bytes()).ok());
  ASSERT_TRUE(m.receive(Packet(4, 12, 1, Delivery::unreliable).delta(a, false, 1, s12, s10).bytes()).ok());
  EXPECT_TRUE(m.anomalies().empty());
  EXPECT_EQ(m.stats().stale_updates, stale + 2);
}

// Each refusal names the first byte of its field. The packet: header 25 bytes, then a delta
// update at 25: type, flags 26, index 27, generation 28, base age 29, state length 30, delta
// length 31, runs from 32.
TEST(DeltaUpdatesTest, TheDecoderRefusesABadDeltaUpdate) {
  const std::vector<std::uint8_t> good =
      Packet(0, 10, 0, Delivery::reliable).delta(a, true, 1, s10, s11).bytes();
  ASSERT_EQ(good.size(), 25u + 7 + 3);
  EXPECT_EQ(std::vector<std::uint8_t>(good.begin() + 25, good.end()),
            (std::vector<std::uint8_t>{6, 3, 3, 1, 1, 8, 3, 2, 1, 31}));
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(good, decoded).ok());
  auto refusal = [&](std::initializer_list<std::pair<std::size_t, std::uint8_t>> changes) {
    std::vector<std::uint8_t> bytes = good;
    for (const auto& [at, value] : changes) bytes[at] = value;
    const Status status = decode_packet(bytes, decoded);
    EXPECT_EQ(status.code(), ErrorCode::malformed_packet);
    return status.message();
  };
  EXPECT_EQ(refusal({{26, 7}}), "update flags at byte 26 are 7: unknown bits set");
  EXPECT_EQ(refusal({{29, 0}}), "base age at byte 29 is 0: must be in [1, the packet's tick 10]");
  EXPECT_EQ(refusal({{29, 11}}), "base age at byte 29 is 11: must be in [1, the packet's tick 10]");
  EXPECT_EQ(refusal({{33, 0}}), "delta at byte 32 has a run of 0 changed bytes");
  EXPECT_EQ(refusal({{30, 2}}), "delta at byte 32 has runs past the state's length");
  EXPECT_EQ(refusal({{33, 2}}), "delta at byte 32 has a run whose changed bytes run past its end");
  EXPECT_EQ(refusal({{33, 0x80}, {34, 0x80}}),
            "delta at byte 32 has a run count that is not a varint (overlong, above 32 bits, or cut off)");
  // A state length no packet could carry: the state length is the varint at byte 30.
  {
    std::vector<std::uint8_t> big = good;
    big[30] = 0xe7;  // 65511 = 0xffe7: e7 ff 03
    big.insert(big.begin() + 31, {0xff, 0x03});
    const Status status = decode_packet(big, decoded);
    EXPECT_EQ(status.message(),
              "state length at byte 30 is 65511: must be at most 65510 (a packet's largest state)");
  }
  // The writer refuses what the decoder would.
  std::vector<std::uint8_t> buffer(256);
  PacketWriter writer(buffer, {Delivery::reliable, 0, 10, 0, {}});
  EXPECT_FALSE(writer.add_delta_update(a, true, 11, 8, runs_of(s10, s11)));
  EXPECT_FALSE(writer.add_delta_update(a, true, 1, 1, runs_of(s10, s11)));
  EXPECT_FALSE(writer.add_delta_update({}, true, 0, 0, s10));
  EXPECT_FALSE(writer.add_delta_update(a, false, 1, kMaxDeltaStateBytes + 1, {}));
  EXPECT_TRUE(writer.add_delta_update(a, false, 1, kMaxDeltaStateBytes, {}));
}

// --- The Replicator -------------------------------------------------------------------------

// A 40-byte state of which one field changes a tick: a mostly-static state.
struct Game {
  const World* world = nullptr;
  std::uint32_t tick = 0;
};

bool forty_bytes(Stream& s, EntityId e, StatePart, void* context) {
  const Game& g = *static_cast<Game*>(context);
  Position p = *g.world->position(e);
  std::uint32_t still = e.index * 2654435761u;
  for (int i = 0; i < 8; ++i) {
    if (!s.serialize_bits(still, 32)) return false;
  }
  std::uint32_t moving = g.tick / (1 + e.index % 3);
  std::uint32_t flags = e.index % 7;
  return s.serialize_quantized(p.x, -1000.0f, 1000.0f, 1.0f / 16.0f) &&
         s.serialize_quantized(p.z, -1000.0f, 1000.0f, 1.0f / 16.0f) && s.serialize_bits(moving, 16) &&
         s.serialize_bits(flags, 16);
}

struct States : MirrorListener {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint8_t>> by_entity_tick;
  void on_update(EntityId e, std::span<const std::uint8_t> state, std::uint32_t tick) override {
    by_entity_tick[{e.index, tick}] = {state.begin(), state.end()};
  }
};

// One World with a client at its first entity, and two Replicators over it sending the 40-byte
// state at a fixed rate: one whole, one with delta updates, each into its own reliable mirror.
struct PlainAndDelta {
  World world;
  Game game{&world};
  std::vector<EntityId> ids;
  ClientId client;
  std::optional<Replicator> plain;
  std::optional<Replicator> delta;
  ClientMirror plain_mirror = make(Delivery::reliable);
  ClientMirror delta_mirror = make(Delivery::reliable);

  explicit PlainAndDelta(const std::vector<std::pair<float, float>>& at) : world(make_world()) {
    for (const auto& [x, z] : at) ids.push_back(*world.create_entity({x, z}));
    client = *world.create_client(ids[0]);
    ReplicatorDef def;
    def.serialize = forty_bytes;
    def.serialize_context = &game;
    def.mode = UpdateMode::fixed_rate;
    plain.emplace(std::move(Replicator::create(world, def).value()));
    def.delta_updates = true;
    delta.emplace(std::move(Replicator::create(world, def).value()));
  }
  PlainAndDelta(const PlainAndDelta&) = delete;  // game points at world
  PlainAndDelta& operator=(const PlainAndDelta&) = delete;

  static World make_world() {
    WorldDef wdef = default_world_def();
    wdef.enter_radius = 30.0f;
    wdef.leave_radius = 36.0f;
    return std::move(World::create(wdef).value());
  }
};

TEST(DeltaUpdatesTest, AReplicatorWithDeltasDeliversTheSameStatesInFewerBytes) {
  std::vector<std::pair<float, float>> at;
  for (int i = 0; i < 40; ++i)
    at.emplace_back(static_cast<float>(i % 8) * 5.0f, static_cast<float>(i / 8) * 5.0f);
  PlainAndDelta run(at);
  World& world = run.world;
  const std::vector<EntityId>& ids = run.ids;
  Replicator& plain = *run.plain;
  Replicator& delta = *run.delta;
  ClientMirror& plain_mirror = run.plain_mirror;
  ClientMirror& delta_mirror = run.delta_mirror;
  States plain_states;
  States delta_states;
  std::uint64_t plain_bytes = 0;
  std::uint64_t delta_bytes = 0;
  std::uint64_t deltas = 0;
  for (int t = 0; t < 60; ++t) {
    for (std::size_t i = 1; i < ids.size(); i += 4) {
      const Position p = *world.position(ids[i]);
      ASSERT_TRUE(world.set_position(ids[i], p.x + 0.25f, p.z).ok());
    }
    run.game.tick = static_cast<std::uint32_t>(world.tick().tick);
    ASSERT_TRUE(plain.send().ok());
    ASSERT_TRUE(delta.send().ok());
    plain_bytes += plain.stats().bytes;
    delta_bytes += delta.stats().bytes;
    deltas += delta.stats().delta_updates;
    for (const auto packet : *plain.packets(run.client))
      ASSERT_TRUE(plain_mirror.receive(packet, &plain_states).ok());
    for (const auto packet : *delta.packets(run.client)) {
      ASSERT_TRUE(delta_mirror.receive(packet, &delta_states).ok());
      // Reliable, an update every tick: each is kept and the next is a delta against it.
      DecodedPacket decoded;
      ASSERT_TRUE(decode_packet(packet, decoded).ok());
      for (const WireRecord& rec : decoded.records) {
        if (rec.type != RecordType::delta_update) continue;
        EXPECT_TRUE(rec.keep);
        if (rec.base_age != 0) {
          EXPECT_EQ(rec.base_age, 1u) << "tick " << t;
        }
      }
    }
    ASSERT_TRUE(delta_mirror.anomalies().empty());
  }
  EXPECT_EQ(delta_states.by_entity_tick, plain_states.by_entity_tick);
  EXPECT_GT(plain_states.by_entity_tick.size(), 1000u);
  EXPECT_GT(deltas, 1000u);
  EXPECT_EQ(delta_mirror.stats().deltas, deltas);
  EXPECT_LT(delta_bytes * 3, plain_bytes) << delta_bytes << " against " << plain_bytes;
}

// Two sends in one World tick, the state changing between them: the client names kept states by
// tick, so the second keeps nothing and later deltas rebuild the states sent, as without deltas.
TEST(DeltaUpdatesTest, TwoSendsInOneTickRebuildTheStatesSent) {
  std::vector<std::pair<float, float>> at;
  for (int i = 0; i < 12; ++i) at.emplace_back(static_cast<float>(i) * 2.0f, 0.0f);
  PlainAndDelta run(at);
  Replicator& plain = *run.plain;
  Replicator& delta = *run.delta;
  std::vector<std::vector<std::uint8_t>> plain_updates;
  std::vector<std::vector<std::uint8_t>> delta_updates;
  struct Log : MirrorListener {
    std::vector<std::vector<std::uint8_t>>* to = nullptr;
    void on_update(EntityId, std::span<const std::uint8_t> state, std::uint32_t) override {
      to->emplace_back(state.begin(), state.end());
    }
  };
  Log plain_log;
  plain_log.to = &plain_updates;
  Log delta_log;
  delta_log.to = &delta_updates;
  std::uint64_t deltas = 0;
  for (std::uint32_t t = 0; t < 20; ++t) {
    run.world.tick();
    for (std::uint32_t k = 0; k < 2; ++k) {
      run.game.tick = 6 * t + 3 * k;  // every entity's moving field changes between the two sends
      ASSERT_TRUE(plain.send().ok());
      ASSERT_TRUE(delta.send().ok());
      deltas += delta.stats().delta_updates;
      for (const auto packet : *plain.packets(run.client))
        ASSERT_TRUE(run.plain_mirror.receive(packet, &plain_log).ok());
      for (const auto packet : *delta.packets(run.client))
        ASSERT_TRUE(run.delta_mirror.receive(packet, &delta_log).ok());
      ASSERT_TRUE(run.delta_mirror.anomalies().empty()) << "tick " << t;
    }
  }
  EXPECT_GT(deltas, 100u);
  EXPECT_EQ(delta_updates, plain_updates);
}

TEST(DeltaUpdatesTest, AStateLargerThanTheKeptSizeGoesWhole) {
  World world = std::move(World::create(default_world_def()).value());
  const EntityId viewer = *world.create_entity({0.0f, 0.0f});
  (void)*world.create_entity({1.0f, 0.0f});
  const ClientId client = *world.create_client(viewer);
  Game game{&world};
  ReplicatorDef def;
  def.serialize = forty_bytes;
  def.serialize_context = &game;
  def.mode = UpdateMode::fixed_rate;
  def.delta_updates = true;
  def.delta_state_bytes = 39;
  Replicator r = std::move(Replicator::create(world, def).value());
  std::uint64_t updates = 0;
  for (int t = 0; t < 10; ++t) {
    world.tick();
    ASSERT_TRUE(r.send().ok());
    updates += r.stats().updates;
    EXPECT_EQ(r.stats().delta_updates, 0u);
    DecodedPacket decoded;
    for (const auto packet : *r.packets(client)) {
      ASSERT_TRUE(decode_packet(packet, decoded).ok());
      for (const WireRecord& rec : decoded.records) EXPECT_NE(rec.type, RecordType::delta_update);
    }
  }
  EXPECT_GT(updates, 5u);
  def.delta_state_bytes = 0;
  const auto refused = Replicator::create(world, def);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "ReplicatorDef::delta_state_bytes is 0: must be in [1, 1148] (packet_bytes - 52)");
}

}  // namespace
}  // namespace sightline
