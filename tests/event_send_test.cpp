// Events on the wire: the Replicator sends each client the events the World delivered to it,
// after the spawns they may name, reliable ones through the reliable queue; the mirror hears
// each once, with its class, place, subject, payload and tick.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "small_world.h"

namespace sightline {
namespace {

using testing::sent_records;
using testing::SmallWorld;

ReplicatorDef def_for(World& world, Delivery delivery = Delivery::reliable) {
  return testing::position_replicator_def(world, delivery);
}

/// What a client heard, one line an event.
struct Ear : MirrorListener {
  std::vector<std::string> heard;
  std::vector<std::string> order;  // enters and events, as they came
  void on_enter(EntityId e, SpawnReason, bool, std::span<const std::uint8_t>, std::uint32_t) override {
    order.push_back("enter " + std::to_string(e.index));
  }
  void on_event(const ReceivedEvent& e) override {
    std::string line = "class ";
    line += std::to_string(e.event_class);
    line += " at (";
    line += std::to_string(static_cast<int>(e.x));
    line += ", ";
    line += std::to_string(static_cast<int>(e.z));
    line += ") tick ";
    line += std::to_string(e.tick);
    if (e.subject.is_null()) {
      line += " no subject";
    } else {
      line += " subject ";
      line += std::to_string(e.subject.index);
      line += e.subject_held ? " held" : " not held";
    }
    if (e.reliable) line += " reliable";
    line += " payload";
    for (const std::uint8_t b : e.payload) {
      line += ' ';
      line += std::to_string(b);
    }
    heard.push_back(line);
    order.push_back("event " + std::to_string(e.event_class));
  }
};

void deliver(const Replicator& r, ClientId c, ClientMirror& m, Ear& ear) {
  for (auto packet : *r.packets(c)) ASSERT_TRUE(m.receive(packet, &ear).ok());
  ASSERT_TRUE(m.anomalies().empty());
}

TEST(EventSendTest, AClientHearsItsEventsAfterTheSpawnsTheyName) {
  SmallWorld w(10.0f, 12.0f);
  const EntityId viewer = w.make(0.0f, 0.0f);
  const EntityId near = w.make(2.0f, 0.0f);
  const EntityId far = w.make(30.0f, 0.0f);
  const ClientId c = w.client(viewer);
  const EventClassId shot = *w.world.create_event_class(
      {.radius = 50.0f, .when_absent = AbsentSubject::null_subject, .reliable = true});
  const EventClassId step =
      *w.world.create_event_class({.radius = 50.0f, .when_absent = AbsentSubject::drop});
  Replicator r = std::move(Replicator::create(w.world, def_for(w.world)).value());
  ClientMirror m = std::move(ClientMirror::create(default_mirror_def()).value());
  Ear ear;
  // Tick 0: the near entity is spawned in the same send as the event that names it.
  ASSERT_TRUE(
      w.world.emit_event({.event_class = shot, .x = 2.0f, .z = 0.0f, .subject = near, .user_data = 258})
          .ok());
  ASSERT_TRUE(w.world.emit_event({.event_class = step, .x = 30.0f, .z = 0.0f, .subject = far}).ok());
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 30.0f, .z = 0.0f, .subject = far}).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  deliver(r, c, m, ear);
  EXPECT_EQ(r.stats().events, 2u);  // the step about a far entity is dropped, as its class says
  EXPECT_EQ(ear.heard, (std::vector<std::string>{
                           "class 0 at (2, 0) tick 0 subject 1 held reliable payload 2 1 0 0 0 0 0 0",
                           "class 0 at (30, 0) tick 0 no subject reliable payload 0 0 0 0 0 0 0 0",
                       }));
  EXPECT_EQ(ear.order, (std::vector<std::string>{"enter 1", "event 0", "event 0"}));
  EXPECT_EQ(m.stats().events, 2u);
}

// Paced entry: a member whose spawn has not gone is absent for the client, whatever the World's
// set says, so no event names an entity the client does not hold (unless its class asks).
TEST(EventSendTest, AMemberStillPendingIsAbsentAsTheClassSays) {
  SmallWorld w(10.0f, 12.0f);
  const EntityId viewer = w.make(0.0f, 0.0f);
  std::vector<EntityId> crowd;
  for (int i = 0; i < 6; ++i) crowd.push_back(w.make(1.0f + static_cast<float>(i), 0.0f));
  const ClientId c = w.client(viewer);
  const EventClassId nulled =
      *w.world.create_event_class({.radius = 50.0f, .when_absent = AbsentSubject::null_subject});
  const EventClassId dropped =
      *w.world.create_event_class({.radius = 50.0f, .when_absent = AbsentSubject::drop});
  const EventClassId as_is =
      *w.world.create_event_class({.radius = 50.0f, .when_absent = AbsentSubject::send_as_is});
  ReplicatorDef def = def_for(w.world);
  def.entry_budget_bytes = 1;  // one spawn a send: the nearest
  Replicator r = std::move(Replicator::create(w.world, def).value());
  ClientMirror m = std::move(ClientMirror::create(default_mirror_def()).value());
  Ear ear;
  const EntityId last = crowd.back();  // the farthest: pending for five more sends
  for (const EventClassId k : {nulled, dropped, as_is}) {
    ASSERT_TRUE(w.world.emit_event({.event_class = k, .x = 6.0f, .z = 0.0f, .subject = last}).ok());
  }
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  deliver(r, c, m, ear);
  ASSERT_GT(*r.pending(c), 0u);
  EXPECT_EQ(ear.heard, (std::vector<std::string>{
                           "class 0 at (6, 0) tick 0 no subject payload 0 0 0 0 0 0 0 0",
                           "class 2 at (6, 0) tick 0 subject 6 not held payload 0 0 0 0 0 0 0 0",
                       }));
}

// Unreliable delivery: a reliable event is resent until acknowledged, with its age, and heard
// once at the tick it happened; an unreliable one is sent once.
TEST(EventSendTest, AReliableEventIsResentUntilAckedAndHeardOnce) {
  SmallWorld w(10.0f, 12.0f);
  const EntityId viewer = w.make(0.0f, 0.0f);
  w.world.tick();
  const ClientId c = w.client(viewer);
  const EventClassId shot = *w.world.create_event_class({.radius = 50.0f, .reliable = true});
  const EventClassId step = *w.world.create_event_class({.radius = 50.0f});
  ReplicatorDef def = def_for(w.world, Delivery::unreliable);
  def.resend_sends = 2;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  MirrorDef mdef = default_mirror_def();
  mdef.delivery = Delivery::unreliable;
  ClientMirror m = std::move(ClientMirror::create(mdef).value());
  Ear ear;
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 1.0f, .z = 1.0f, .user_data = 9}).ok());
  ASSERT_TRUE(w.world.emit_event({.event_class = step, .x = 2.0f, .z = 2.0f, .user_data = 8}).ok());
  std::vector<std::pair<int, std::uint32_t>> reliable_sends;  // (send, age)
  int unreliable_sends = 0;
  for (int t = 0; t < 6; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    for (const WireRecord& rec : sent_records(r, c)) {
      if (rec.type != RecordType::event) continue;
      if (rec.reliable) {
        reliable_sends.emplace_back(t, rec.state_age);
      } else {
        ++unreliable_sends;
      }
    }
    // Every copy but the first send's reaches the mirror: the reliable event's first copy is lost.
    for (auto packet : *r.packets(c)) {
      if (t > 0) {
        ASSERT_TRUE(m.receive(packet, &ear).ok());
      }
    }
  }
  // Sent at send 0 (lost), resent at 2 and 4 (acks never came): ages 2 and 4.
  EXPECT_EQ(reliable_sends, (std::vector<std::pair<int, std::uint32_t>>{{0, 0}, {2, 2}, {4, 4}}));
  EXPECT_EQ(unreliable_sends, 1);
  EXPECT_EQ(
      ear.heard,
      (std::vector<std::string>{"class 0 at (1, 1) tick 1 no subject reliable payload 9 0 0 0 0 0 0 0"}));
  std::array<std::uint8_t, kAckBytes> ack{};
  encode_ack(m.ack(), ack);
  ASSERT_TRUE(r.receive_ack(c, ack).ok());
  for (int t = 0; t < 4; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    for (const WireRecord& rec : sent_records(r, c)) EXPECT_NE(rec.type, RecordType::event) << "acknowledged";
  }
}

// The game's event serializer writes the payload once for every recipient; a failure drops that
// event for everyone and is reported, and the other events still go.
TEST(EventSendTest, TheGamesSerializerWritesEachEventOnceAndAFailureIsReported) {
  SmallWorld w(10.0f, 12.0f);
  const EntityId a = w.make(0.0f, 0.0f);
  const EntityId b = w.make(1.0f, 0.0f);
  const ClientId ca = w.client(a);
  const ClientId cb = w.client(b);
  const EventClassId shot = *w.world.create_event_class({.radius = 50.0f});
  struct Calls {
    int count = 0;
  } calls;
  ReplicatorDef def = def_for(w.world);
  def.serialize_event = [](Stream& s, const EventDef& e, void* context) {
    ++static_cast<Calls*>(context)->count;
    if (e.user_data == 13) return false;
    std::uint32_t sound = static_cast<std::uint32_t>(e.user_data);
    return s.serialize_uint(sound, 0, 255);
  };
  def.event_context = &calls;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 0.0f, .z = 0.0f, .user_data = 13}).ok());
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 0.0f, .z = 0.0f, .user_data = 200}).ok());
  w.world.tick();
  const Status s = r.send();
  EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
  EXPECT_EQ(s.message(), "serializing event 0 failed: the serializer returned false");
  EXPECT_EQ(calls.count, 2);  // once an event, not once a recipient
  EXPECT_EQ(r.stats().serialize_errors, 1u);
  EXPECT_EQ(r.stats().events, 2u);  // the second event, to each client
  for (const ClientId c : {ca, cb}) {
    ClientMirror m = std::move(ClientMirror::create(default_mirror_def()).value());
    Ear ear;
    deliver(r, c, m, ear);
    EXPECT_EQ(ear.heard, (std::vector<std::string>{"class 0 at (0, 0) tick 0 no subject payload 200"}));
  }
}

TEST(EventSendTest, APacketTooSmallForTheLargestFramingIsRefused) {
  SmallWorld w;
  ReplicatorDef def = def_for(w.world);
  def.packet_bytes = kMinPacketBytes - 1;
  const auto r = Replicator::create(w.world, def);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "ReplicatorDef::packet_bytes is 79: must be in [80, 65535]");
  // The least packet still sends a state and an event (with a payload of 15 bytes at most).
  const EntityId viewer = w.make(0.0f, 0.0f);
  w.make(1.0f, 0.0f);
  const ClientId c = w.client(viewer);
  def.packet_bytes = kMinPacketBytes;
  Replicator least = std::move(Replicator::create(w.world, def).value());
  const EventClassId shot = *w.world.create_event_class({.radius = 50.0f});
  ASSERT_TRUE(w.world.emit_event({.event_class = shot, .x = 0.0f, .z = 0.0f}).ok());
  w.world.tick();
  ASSERT_TRUE(least.send().ok());
  EXPECT_EQ(least.stats().spawns, 1u);
  EXPECT_EQ(least.stats().events, 1u);
  for (auto packet : *least.packets(c)) EXPECT_LE(packet.size(), kMinPacketBytes);
}

}  // namespace
}  // namespace sightline
