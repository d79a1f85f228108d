// Entity references (Stream::serialize_entity) from the server to a client: null where the client
// does not hold the target, the referring state sent again in the send its target arrives, and a
// mirror that resolves what it reads.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"
#include "small_world.h"

namespace sightline {
namespace {

// The game: each entity's x (whole units) and what it refers to, in both parts.
struct Game {
  const World* world = nullptr;
  std::map<std::uint32_t, EntityId> target;  // by entity index
  std::uint32_t references = 1;              // how many times each state writes its target
};

bool serialize(Stream& s, EntityId e, StatePart, void* context) {
  const Game& game = *static_cast<Game*>(context);
  std::int32_t x = static_cast<std::int32_t>(game.world->position(e)->x);
  if (!s.serialize_int(x, -1000, 1000)) return false;
  const auto at = game.target.find(e.index);
  for (std::uint32_t i = 0; i < game.references; ++i) {
    EntityId target = at == game.target.end() ? EntityId{} : at->second;
    if (!s.serialize_entity(target)) return false;
  }
  return true;
}

EntityId target_of(std::span<const std::uint8_t> payload) {
  Stream s = Stream::reader(payload);
  std::int32_t x = 0;
  EntityId target;
  EXPECT_TRUE(s.serialize_int(x, -1000, 1000) && s.serialize_entity(target));
  return target;
}

struct Scene {
  Delivery delivery = Delivery::reliable;  // first: the members below read it
  testing::SmallWorld w{10.0f, 12.0f};
  Game game{&w.world, {}, 1};
  std::optional<Replicator> replicator;
  EntityId viewer = w.make(0, 0);
  EntityId a = w.make(5, 0);   // held
  EntityId b = w.make(50, 0);  // not held
  ClientId client = w.client(viewer);
  ClientMirror mirror = std::move(ClientMirror::create(mirror_def()).value());
  DecodedPacket decoded;
  std::vector<WireRecord> records;  // the last send's, in order
  std::vector<std::vector<std::uint8_t>> payloads;

  explicit Scene(Delivery d = Delivery::reliable, std::uint32_t entry_budget_bytes = 32 * 1024)
      : delivery(d) {
    ReplicatorDef def = default_replicator_def();
    def.serialize = serialize;
    def.serialize_context = &game;
    def.delivery = delivery;
    def.mode = UpdateMode::fixed_rate;
    def.entry_budget_bytes = entry_budget_bytes;
    replicator.emplace(std::move(Replicator::create(w.world, def).value()));
    game.target[a.index] = b;
  }
  MirrorDef mirror_def() const {
    MirrorDef def;
    def.delivery = delivery;
    return def;
  }
  // One tick and send; every packet applied to the mirror unless `deliver` is false.
  void step(bool deliver = true) {
    w.world.tick();
    ASSERT_TRUE(replicator->send().ok());
    records.clear();
    payloads.clear();
    for (const std::span<const std::uint8_t> packet : *replicator->packets(client)) {
      ASSERT_TRUE(decode_packet(packet, decoded).ok());
      for (const WireRecord& r : decoded.records) {
        records.push_back(r);
        payloads.emplace_back(r.payload.begin(), r.payload.end());
      }
      if (deliver) {
        ASSERT_TRUE(mirror.receive(packet).ok());
        EXPECT_TRUE(mirror.anomalies().empty());
      }
    }
  }
  // The record of `type` of entity e in the last send, or -1.
  int find(RecordType type, EntityId e) const {
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i].type == type && records[i].entity == e) return static_cast<int>(i);
    }
    return -1;
  }
  EntityId latest_target(EntityId e) const { return target_of(mirror.history(e)->back().payload); }
  // Unreliable: the mirror's ack, applied by the server.
  void ack() {
    std::array<std::uint8_t, kAckBytes> bytes{};
    encode_ack(mirror.ack(), bytes);
    ASSERT_TRUE(replicator->receive_ack(client, bytes).ok());
  }
};

TEST(EntityReferencesTest, ANullGoesWhereTheTargetIsNotHeldAndARefreshFollowsItsArrival) {
  Scene s;
  s.step();
  const int spawn = s.find(RecordType::spawn, s.a);
  ASSERT_GE(spawn, 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(spawn)]), EntityId{}) << "b is not the client's";
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), EntityId{});
  // A tick later nothing has changed: no refresh.
  s.step();
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1);
  EXPECT_EQ(s.replicator->stats().refreshes, 0u);
  // b comes near: its spawn, and in the same send, after it, a's full state again naming b.
  ASSERT_TRUE(s.w.world.set_position(s.b, 6, 0).ok());
  s.step();
  const int b_spawn = s.find(RecordType::spawn, s.b);
  const int refresh = s.find(RecordType::refresh, s.a);
  ASSERT_GE(b_spawn, 0);
  ASSERT_GT(refresh, b_spawn);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(refresh)]), s.b);
  EXPECT_EQ(s.replicator->stats().refreshes, 1u);
  EXPECT_EQ(s.mirror.stats().refreshes, 1u);
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), s.b);
  EXPECT_EQ(s.mirror.history(s.a)->back().part, StatePart::full);
  EXPECT_EQ(s.find(RecordType::update, s.a), -1) << "its whole state went: no update in the same send";
  // Resolved: no refresh again.
  s.step();
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1);
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), s.b);
  // b leaves: a's updates name null again, and what the mirror still has of b resolves to null.
  ASSERT_TRUE(s.w.world.set_position(s.b, 80, 0).ok());
  s.step();
  ASSERT_GE(s.find(RecordType::despawn, s.b), 0);
  const int update = s.find(RecordType::update, s.a);
  ASSERT_GE(update, 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(update)]), EntityId{});
  EXPECT_EQ(s.mirror.resolve(s.b), EntityId{});
  // And back: a refresh again.
  ASSERT_TRUE(s.w.world.set_position(s.b, 4, 1).ok());
  s.step();
  EXPECT_GT(s.find(RecordType::refresh, s.a), s.find(RecordType::spawn, s.b));
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), s.b);
}

TEST(EntityReferencesTest, TheViewerAndTheEntityItselfAreNamedAsTheyAre) {
  Scene s;
  s.game.target[s.a.index] = s.viewer;
  s.game.target[s.b.index] = s.b;
  ASSERT_TRUE(s.w.world.set_position(s.b, 3, 3).ok());
  s.step();
  const int a_spawn = s.find(RecordType::spawn, s.a);
  const int b_spawn = s.find(RecordType::spawn, s.b);
  ASSERT_GE(a_spawn, 0);
  ASSERT_GE(b_spawn, 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(a_spawn)]), s.viewer)
      << "the client's own viewer is never sent, but it is the client's";
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(b_spawn)]), s.b);
  EXPECT_EQ(s.replicator->stats().refreshes, 0u);
  // The mirror never holds the viewer: it resolves to null there, as client_mirror.h says.
  EXPECT_EQ(s.mirror.resolve(s.viewer), EntityId{});
}

TEST(EntityReferencesTest, ADestroyedTargetIsNullAndItsSlotsNextEntityIsNotNamed) {
  Scene s;
  ASSERT_TRUE(s.w.world.set_position(s.b, 6, 0).ok());
  s.step();
  EXPECT_EQ(s.latest_target(s.a), s.b);
  ASSERT_TRUE(s.w.world.destroy_entity(s.b).ok());
  s.step();
  const EntityId reborn = s.w.make(7, 0);  // in b's slot, held by the client
  ASSERT_EQ(reborn.index, s.b.index);
  s.step();  // the game still names the old b
  ASSERT_TRUE(s.mirror.holds(reborn));
  const int update = s.find(RecordType::update, s.a);
  ASSERT_GE(update, 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(update)]), EntityId{});
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1) << "the old b never comes back";
}

TEST(EntityReferencesTest, UnreliableNamesATargetOnlyOnceTheClientAcknowledgedItsSpawn) {
  Scene s(Delivery::unreliable);
  s.step();
  s.ack();
  ASSERT_TRUE(s.w.world.set_position(s.b, 6, 0).ok());
  // b's spawn goes, but is lost: a's state goes on naming null, and nothing is refreshed.
  s.step(false);
  ASSERT_GE(s.find(RecordType::spawn, s.b), 0);
  const int update = s.find(RecordType::update, s.a);
  ASSERT_GE(update, 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(update)]), EntityId{});
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1);
  // Until the resend arrives and is acknowledged.
  for (int t = 0; t < 10 && !s.mirror.holds(s.b); ++t) {
    s.step();
    s.ack();
  }
  ASSERT_TRUE(s.mirror.holds(s.b));
  s.step();
  ASSERT_GE(s.find(RecordType::refresh, s.a), 0);
  EXPECT_EQ(target_of(s.payloads[static_cast<std::size_t>(s.find(RecordType::refresh, s.a))]), s.b);
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), s.b);
  // Once acknowledged, nothing is sent again.
  s.ack();
  s.step();
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1);
}

// A refresh that the reliable window holds back (unreliable delivery, the client has 1024 records
// unacknowledged) goes at a later send, once the window opens.
TEST(EntityReferencesTest, ARefreshHeldBackByAFullWindowGoesOnceItOpens) {
  Scene s(Delivery::unreliable, 1u << 20);  // room for a window's worth of spawns in one send
  s.step();
  s.ack();
  ASSERT_TRUE(s.w.world.set_position(s.b, 6, 0).ok());
  s.step();  // b's spawn
  s.ack();   // acknowledged: a's refresh is due at the next send
  // ... but that send's spawns fill the window first.
  for (int i = 0; i < 1100; ++i) s.w.make(static_cast<float>(i % 7) - 3.0f, static_cast<float>(i % 5) - 2.0f);
  s.step(false);
  EXPECT_EQ(s.find(RecordType::refresh, s.a), -1);
  EXPECT_EQ(s.replicator->client_stats(s.client)->reliable_next, 1024u + 2u);
  // The client gets nothing of it, then catches up; the refresh follows.
  bool refreshed = false;
  for (int t = 0; t < 30 && !refreshed; ++t) {
    s.step();
    s.ack();
    refreshed = s.find(RecordType::refresh, s.a) >= 0;
  }
  EXPECT_TRUE(refreshed);
  for (int t = 0; t < 10; ++t) {
    s.step();
    s.ack();
  }
  EXPECT_EQ(s.mirror.resolve(s.latest_target(s.a)), s.b);
}

TEST(EntityReferencesTest, MoreReferencesThanAPayloadCarriesFailsTheSerializerNamingTheEntity) {
  Scene s;
  s.game.references = kMaxReferences + 1;
  s.w.world.tick();
  const Status sent = s.replicator->send();
  ASSERT_FALSE(sent.ok());
  EXPECT_NE(sent.message().find("more entity references than the stream notes"), std::string::npos)
      << sent.message();
  EXPECT_NE(sent.message().find("16 entity references"), std::string::npos) << sent.message();
  // Exactly kMaxReferences is fine.
  s.game.references = kMaxReferences;
  s.w.world.tick();
  EXPECT_TRUE(s.replicator->send().ok());
}

// The same packets whether payloads are shared among clients or serialized for each.
TEST(EntityReferencesTest, SharedAndPerClientPayloadsWriteTheSamePackets) {
  std::vector<std::vector<std::uint8_t>> packets[2];
  for (const bool share : {true, false}) {
    testing::SmallWorld w(10.0f, 12.0f);
    Game game{&w.world, {}, 1};
    std::vector<EntityId> ids;
    for (int i = 0; i < 40; ++i)
      ids.push_back(w.make(static_cast<float>(i * 3 % 60), static_cast<float>(i % 7)));
    for (int i = 0; i < 40; ++i) game.target[ids[static_cast<std::size_t>(i)].index] = ids[(i * 11 + 5) % 40];
    const ClientId c1 = w.client(ids[0]);
    const ClientId c2 = w.client(ids[20]);
    ReplicatorDef def = default_replicator_def();
    def.serialize = serialize;
    def.serialize_context = &game;
    def.share_payloads = share;
    def.budget_bytes = 200;
    Replicator r = std::move(Replicator::create(w.world, def).value());
    std::uint64_t refreshes = 0;
    for (int t = 0; t < 40; ++t) {
      for (int i = 0; i < 40; i += 3) {
        ASSERT_TRUE(w.world
                        .set_position(ids[static_cast<std::size_t>(i)], static_cast<float>((i * 3 + t) % 60),
                                      static_cast<float>(i % 7))
                        .ok());
      }
      w.world.tick();
      ASSERT_TRUE(r.send().ok());
      refreshes += r.stats().refreshes;
      for (const ClientId c : {c1, c2}) {
        for (const std::span<const std::uint8_t> p : *r.packets(c))
          packets[share ? 0 : 1].emplace_back(p.begin(), p.end());
      }
    }
    EXPECT_GT(refreshes, 0u);
  }
  EXPECT_EQ(packets[0], packets[1]);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

struct HeardRefreshes : MirrorListener {
  std::vector<std::pair<EntityId, std::uint32_t>> refreshes;
  void on_refresh(EntityId e, std::span<const std::uint8_t>, std::uint32_t tick) override {
    refreshes.emplace_back(e, tick);
  }
};

// A late copy of a refresh (unreliable delivery) is heard for its references, and leaves the
// history and the state tick in order; a refresh of an entity not held is an anomaly.
TEST(EntityReferencesTest, TheMirrorHearsALateRefreshWithoutTurningItsHistoryBack) {
  MirrorDef def;
  def.delivery = Delivery::unreliable;
  ClientMirror m = std::move(ClientMirror::create(def).value());
  const EntityId a{4, 1};
  const std::vector<std::uint8_t> state{1, 2, 3};
  auto packet = [&](std::uint32_t sequence, std::uint32_t tick, std::uint32_t reliable_next, auto add) {
    std::vector<std::uint8_t> buffer(256);
    PacketWriter w(buffer, {Delivery::unreliable, sequence, tick, reliable_next, {}});
    add(w);
    const auto bytes = w.finish();
    return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
  };
  HeardRefreshes heard;
  ASSERT_TRUE(m.receive(packet(0, 10, 0,
                               [&](PacketWriter& w) {
                                 EXPECT_TRUE(w.add_spawn(0, a, SpawnReason::near, false, state));
                               }),
                        &heard)
                  .ok());
  ASSERT_TRUE(
      m.receive(packet(2, 12, 2, [&](PacketWriter& w) { EXPECT_TRUE(w.add_update(a, state)); }), &heard)
          .ok());
  EXPECT_EQ(*m.state_tick(a), 12u);
  ASSERT_TRUE(
      m.receive(packet(1, 11, 1, [&](PacketWriter& w) { EXPECT_TRUE(w.add_refresh(1, a, state)); }), &heard)
          .ok());
  EXPECT_EQ(heard.refreshes, (std::vector<std::pair<EntityId, std::uint32_t>>{{a, 11}}));
  EXPECT_EQ(*m.state_tick(a), 12u);
  const auto history = *m.history(a);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history.back().tick, 12u);
  EXPECT_EQ(m.stats().refreshes, 1u);
  // In order, a refresh adds a full snapshot.
  ASSERT_TRUE(
      m.receive(packet(3, 13, 2, [&](PacketWriter& w) { EXPECT_TRUE(w.add_refresh(2, a, state)); }), &heard)
          .ok());
  EXPECT_EQ(m.history(a)->back().part, StatePart::full);
  EXPECT_EQ(*m.state_tick(a), 13u);
  // Not held: an anomaly, and nothing heard.
  ASSERT_TRUE(m.receive(packet(4, 14, 3,
                               [&](PacketWriter& w) {
                                 EXPECT_TRUE(w.add_refresh(3, {9, 1}, state));
                               }),
                        &heard)
                  .ok());
  ASSERT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.anomalies()[0].kind, AnomalyKind::refresh_unknown);
  EXPECT_EQ(heard.refreshes.size(), 2u);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

bool event_naming(Stream& s, const EventDef& event, void*) {
  EntityId named = event.subject;
  return s.serialize_entity(named);
}

// An event's payload goes to every recipient alike: a reference in it is refused, naming the
// entity, and the event goes to no one. A null one is fine.
TEST(EntityReferencesTest, AnEventPayloadThatNamesAnEntityIsRefused) {
  testing::SmallWorld w(10.0f, 12.0f);
  const EntityId viewer = w.make(0, 0);
  const EntityId far = w.make(60, 0);
  const ClientId client = w.client(viewer);
  const EventClassId shot =
      *w.world.create_event_class({.radius = 100.0f, .when_absent = AbsentSubject::send_as_is});
  ReplicatorDef def = default_replicator_def();
  def.serialize = [](Stream&, EntityId, StatePart, void*) { return true; };
  def.serialize_event = event_naming;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 1, .z = 0, .subject = far}).ok());
  w.world.tick();
  const Status sent = r.send();
  ASSERT_FALSE(sent.ok());
  EXPECT_NE(sent.message().find("names an entity"), std::string::npos) << sent.message();
  EXPECT_NE(sent.message().find(std::to_string(far.index)), std::string::npos) << sent.message();
  EXPECT_EQ(r.stats().events, 0u);
  ASSERT_TRUE(r.packets(client).ok());
  // Without a subject the reference is null: the event goes.
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 1, .z = 0}).ok());
  w.world.tick();
  EXPECT_TRUE(r.send().ok());
  EXPECT_EQ(r.stats().events, 1u);
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// Each state names the newest of a far entity that is destroyed and made again every tick.
bool serialize_naming_newest(Stream& s, EntityId e, StatePart, void* context) {
  EntityId named = *static_cast<const EntityId*>(context);
  std::uint32_t tag = e.index;
  return s.serialize_bits(tag, 32) && s.serialize_entity(named);
}

// A client that never acknowledges: its spawns are resent with the state of the moment, each copy
// naming another entity the client does not hold. What waits for them stays bounded, and the
// member's state goes again (a refresh) to supersede the copies.
TEST(EntityReferencesTest, AClientThatNeverAcknowledgesCostsABoundedAmount) {
  testing::SmallWorld w(10.0f, 12.0f);
  const EntityId viewer = w.make(0, 0);
  w.make(5, 0);
  w.make(3, 3);
  EntityId newest = w.make(60, 0);
  const ClientId client = w.client(viewer);
  ReplicatorDef def = default_replicator_def();
  def.serialize = serialize_naming_newest;
  def.serialize_context = &newest;
  def.delivery = Delivery::unreliable;
  def.resend_sends = 1;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::uint32_t most = 0;
  std::uint64_t refreshes = 0;
  for (int t = 0; t < 3000; ++t) {
    ASSERT_TRUE(w.world.destroy_entity(newest).ok());
    newest = w.make(60, 0);
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    refreshes += r.stats().refreshes;
    most = std::max(most, r.client_stats(client)->references_waiting);
  }
  EXPECT_LE(most, 2 * (2 * kMaxReferences + 1)) << "two members, each at most 2 x 16 + 1 before the cut";
  EXPECT_GT(refreshes, 0u);
}

}  // namespace
}  // namespace sightline
