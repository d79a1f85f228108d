// Messages: the game's bytes to one client, to a key's subscribers or to a space's clients,
// reliable and in order with the state stream, sized against the budget and the packet, and
// bounded per client.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "log_capture.h"
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

std::vector<std::uint8_t> text(const std::string& s) { return {s.begin(), s.end()}; }

/// What a client read: its messages as text, and every record as it came.
struct Inbox : MirrorListener {
  std::vector<std::string> messages;
  std::vector<std::string> order;
  void on_enter(EntityId e, SpawnReason, bool, std::span<const std::uint8_t>, std::uint32_t) override {
    order.push_back("enter " + std::to_string(e.index));
  }
  void on_event(const ReceivedEvent&) override { order.emplace_back("event"); }
  void on_message(std::span<const std::uint8_t> payload, std::uint32_t) override {
    messages.emplace_back(payload.begin(), payload.end());
    order.push_back("message " + messages.back());
  }
};

struct Client {
  ClientId id;
  ClientMirror mirror;
  Inbox inbox;
};

void deliver(const Replicator& r, Client& c) {
  for (auto packet : *r.packets(c.id)) ASSERT_TRUE(c.mirror.receive(packet, &c.inbox).ok());
  ASSERT_TRUE(c.mirror.anomalies().empty());
}

Client make_client(SmallWorld& w, EntityId viewer, Delivery delivery = Delivery::reliable) {
  MirrorDef def = default_mirror_def();
  def.delivery = delivery;
  return {w.client(viewer), std::move(ClientMirror::create(def).value()), {}};
}

TEST(MessageSendTest, AMessageReachesItsClientInOrderAfterTheStateItFollows) {
  SmallWorld w(10.0f, 12.0f);
  Client a = make_client(w, w.make(0.0f, 0.0f));
  Client b = make_client(w, w.make(50.0f, 0.0f));
  w.make(1.0f, 0.0f);
  const EventClassId bang = *w.world.create_event_class({.radius = 5.0f});
  Replicator r = std::move(Replicator::create(w.world, def_for(w.world)).value());
  ASSERT_TRUE(r.send_message(a.id, text("welcome")).ok());
  ASSERT_TRUE(r.send_message(a.id, text("round 1")).ok());
  ASSERT_TRUE(w.world.emit_event({.event_class = bang, .x = 0.0f, .z = 0.0f}).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  deliver(r, a);
  deliver(r, b);
  EXPECT_EQ(a.inbox.order,
            (std::vector<std::string>{"enter 2", "event", "message welcome", "message round 1"}));
  EXPECT_TRUE(b.inbox.messages.empty());
  EXPECT_EQ(r.stats().messages, 2u);
  EXPECT_EQ(a.mirror.stats().messages, 2u);
  // Sent once: the next send has none.
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  deliver(r, a);
  EXPECT_EQ(a.inbox.messages.size(), 2u);
}

TEST(MessageSendTest, AMessageThatCannotBeSentIsRefusedWhenQueued) {
  SmallWorld w;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ReplicatorDef def = def_for(w.world);
  def.packet_bytes = 200;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  const std::vector<std::uint8_t> largest(200 - 36, 7);
  EXPECT_TRUE(r.send_message(c, largest).ok());
  std::vector<std::uint8_t> too_large(200 - 35, 7);
  const Status refused = r.send_message(c, too_large);
  EXPECT_EQ(refused.code(), ErrorCode::invalid_argument);
  EXPECT_EQ(refused.message(),
            "message of 165 bytes: a packet of 200 bytes carries 164 at most (ReplicatorDef::packet_bytes)");
  EXPECT_EQ(r.send_message(ClientId{c.index, c.generation + 1}, largest).code(), ErrorCode::stale_handle);
  EXPECT_EQ(r.send_message_to_key({InterestKeyType::user, 0}, largest).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(r.send_message_to_space(SpaceId{7, 1}, largest).code(), ErrorCode::stale_handle);
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  EXPECT_EQ(r.stats().messages, 1u);  // only the one accepted
  for (auto packet : *r.packets(c)) EXPECT_LE(packet.size(), 200u);
}

TEST(MessageSendTest, AKeyReachesItsSubscribersAndASpaceItsClients) {
  SmallWorld w(10.0f, 12.0f);
  const SpaceId arena = *w.world.create_space(testing::culling_space(10.0f, 12.0f));
  Client red = make_client(w, w.make(0.0f, 0.0f));
  Client blue = make_client(w, w.make(0.0f, 30.0f));
  Client away = make_client(w, w.make(0.0f, 0.0f, arena));
  ASSERT_TRUE(w.world.add_user_subscription(red.id, {.key = 5}).ok());
  ASSERT_TRUE(w.world.add_user_subscription(away.id, {.key = 5}).ok());
  Replicator r = std::move(Replicator::create(w.world, def_for(w.world)).value());
  ASSERT_TRUE(r.send_message_to_key({InterestKeyType::user, 5}, text("team red")).ok());
  ASSERT_TRUE(r.send_message_to_space(arena, text("arena")).ok());
  ASSERT_TRUE(r.send_message_to_space(w.world.default_space(), text("lobby")).ok());
  ASSERT_TRUE(r.send_message_to_key({InterestKeyType::global, 0}, text("everyone")).ok());
  w.world.tick();
  ASSERT_TRUE(r.send().ok());
  for (Client* c : {&red, &blue, &away}) deliver(r, *c);
  EXPECT_EQ(red.inbox.messages, (std::vector<std::string>{"team red", "lobby", "everyone"}));
  EXPECT_EQ(blue.inbox.messages, (std::vector<std::string>{"lobby", "everyone"}));
  EXPECT_EQ(away.inbox.messages, (std::vector<std::string>{"team red", "arena", "everyone"}));
}

// Messages count against the budget: the first of a send always goes, the rest wait their turn in
// order. A client's queue is bounded: what would pass it is dropped for that client, counted.
TEST(MessageSendTest, MessagesWaitForTheBudgetInOrderAndTheQueueIsBounded) {
  SmallWorld w;
  Client c = make_client(w, w.make(0.0f, 0.0f));
  ReplicatorDef def = def_for(w.world);
  def.budget_bytes = 120;
  def.message_queue_bytes = 300;
  LogCapture log;
  def.log = log.hook();
  Replicator r = std::move(Replicator::create(w.world, def).value());
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(r.send_message(c.id, std::vector<std::uint8_t>(40, static_cast<std::uint8_t>('a' + i))).ok());
  }
  std::vector<std::uint64_t> per_send;
  for (int t = 0; t < 6; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    if (t == 0) {
      EXPECT_EQ(r.stats().messages_dropped, 1u);  // 8 x 40 bytes: the eighth passes 300
      ASSERT_EQ(log.reports.size(), 1u);
      EXPECT_EQ(log.reports[0].first, LogLevel::warning);
      EXPECT_EQ(log.reports[0].second,
                "Replicator send 0: 1 messages dropped, a client's queue being full "
                "(ReplicatorDef::message_queue_bytes is 300)");
    }
    per_send.push_back(r.stats().messages);
    deliver(r, c);
  }
  // 120 bytes a send: a 25-byte header and two 43-byte records fit, not three.
  EXPECT_EQ(per_send, (std::vector<std::uint64_t>{2, 2, 2, 1, 0, 0}));
  ASSERT_EQ(c.inbox.messages.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(c.inbox.messages[i], std::string(40, static_cast<char>('a' + i)));
  EXPECT_EQ(r.stats().messages_waiting, 0u);
}

// A client whose queue overflows at every send is told to the log at the first send and then once
// every 64 sends, with the count since.
TEST(MessageSendTest, DropsAreToldAtMostOnceEvery64Sends) {
  SmallWorld w;
  Client c = make_client(w, w.make(0.0f, 0.0f));
  ReplicatorDef def = def_for(w.world);
  def.budget_bytes = 120;
  def.message_queue_bytes = 100;
  LogCapture log;
  def.log = log.hook();
  Replicator r = std::move(Replicator::create(w.world, def).value());
  std::uint64_t dropped = 0;
  for (int t = 0; t < 130; ++t) {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(r.send_message(c.id, std::vector<std::uint8_t>(40, 'm')).ok());
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    dropped += r.stats().messages_dropped;
    deliver(r, c);
  }
  ASSERT_EQ(log.reports.size(), 3u);
  EXPECT_EQ(log.reports[0].second.rfind("Replicator send 0: ", 0), 0u) << log.reports[0].second;
  EXPECT_EQ(log.reports[1].second.rfind("Replicator send 64: ", 0), 0u) << log.reports[1].second;
  EXPECT_EQ(log.reports[2].second.rfind("Replicator send 128: ", 0), 0u) << log.reports[2].second;
  // The counts told add up to the drops of sends 0 to 128.
  std::uint64_t told = 0;
  for (const auto& [level, text] : log.reports) told += std::stoull(text.substr(text.find(": ") + 2));
  EXPECT_GT(told, 128u);
  EXPECT_LE(told, dropped);
}

// Unreliable delivery: a message is resent until acknowledged and read once.
TEST(MessageSendTest, AnUnreliableClientReadsEachMessageOnce) {
  SmallWorld w;
  Client c = make_client(w, w.make(0.0f, 0.0f), Delivery::unreliable);
  ReplicatorDef def = def_for(w.world, Delivery::unreliable);
  def.resend_sends = 2;
  Replicator r = std::move(Replicator::create(w.world, def).value());
  ASSERT_TRUE(r.send_message(c.id, text("hello")).ok());
  int copies = 0;
  for (int t = 0; t < 5; ++t) {
    w.world.tick();
    ASSERT_TRUE(r.send().ok());
    for (const WireRecord& rec : sent_records(r, c.id)) copies += rec.type == RecordType::message ? 1 : 0;
    for (auto packet : *r.packets(c.id)) {
      if (t > 0) {
        ASSERT_TRUE(c.mirror.receive(packet, &c.inbox).ok());  // the first copy is lost
      }
    }
  }
  EXPECT_EQ(copies, 3);  // sends 0, 2 and 4
  EXPECT_EQ(c.inbox.messages, (std::vector<std::string>{"hello"}));
}

}  // namespace
}  // namespace sightline
