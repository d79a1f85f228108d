// The demo world without a network: what each connection receives is checked against the rule
// (held within L of the viewer the tick frame states, nothing within R missing, seen through the
// debug view), through a ClientMirror, across option and radius changes and bad frames.
#include "game.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frames.h"
#include "rng.h"
#include "sightline/client_mirror.h"
#include "sightline/serialize.h"

namespace sightline::demo {
namespace {

// Positions travel at 1/256 unit: a distance read back may be off by one step per axis.
constexpr float kSlack = 2.0f / 256.0f + 1e-4f;

struct Held {
  float x = 0.0f;
  float z = 0.0f;
  std::uint32_t kind = 0;
  std::uint32_t generation = 0;
};

// One connection's receiving side: frames decoded, packets through a mirror, positions read back.
struct Receiver : MirrorListener {
  explicit Receiver(const GameDef& game_def)
      : def(game_def), mirror(std::move(ClientMirror::create({})).value()) {}

  void on_enter(EntityId e, SpawnReason, bool, std::span<const std::uint8_t> state, std::uint32_t) override {
    Held h;
    Stream s = Stream::reader(state);
    ASSERT_TRUE(s.serialize_quantized(h.x, 0.0f, def.width, 1.0f / 256.0f));
    ASSERT_TRUE(s.serialize_quantized(h.z, 0.0f, def.height, 1.0f / 256.0f));
    ASSERT_TRUE(s.serialize_uint(h.kind, 0, 3));
    h.generation = e.generation;
    held[e.index] = h;
  }
  void on_update(EntityId e, std::span<const std::uint8_t> state, std::uint32_t) override {
    Held& h = held.at(e.index);
    Stream s = Stream::reader(state);
    ASSERT_TRUE(s.serialize_quantized(h.x, 0.0f, def.width, 1.0f / 256.0f));
    ASSERT_TRUE(s.serialize_quantized(h.z, 0.0f, def.height, 1.0f / 256.0f));
  }
  void on_exit(EntityId e, ExitKind, DespawnReason) override { held.erase(e.index); }
  void on_event(const ReceivedEvent& e) override { heard_now.push_back(e); }
  void on_message(std::span<const std::uint8_t> payload, std::uint32_t) override {
    messages.emplace_back(payload.begin(), payload.end());
  }

  void take(std::span<const std::uint8_t> frame) {
    switch (frame_type(frame)) {
      case kResetFrame: {
        ASSERT_TRUE(read_reset(frame).ok());
        mirror = std::move(ClientMirror::create({})).value();
        held.clear();
        ++resets;
        break;
      }
      case kTickFrame: {
        Result<TickFrame> t = read_tick(frame);
        ASSERT_TRUE(t.ok()) << t.status().message();
        if (ticks > 0) {
          EXPECT_EQ(t->tick, last.tick + 1);
        }
        heard_now.clear();
        for (auto packet : t->packets) {
          // Every World of the server ticks with it: the states are from the server's tick.
          DecodedPacket decoded;
          ASSERT_TRUE(decode_packet(packet, decoded).ok());
          EXPECT_EQ(decoded.header.tick, t->tick);
          ASSERT_TRUE(mirror.receive(packet, this).ok());
        }
        // A shot reaches a connection with interest on only within its hearing radius, 2R of the
        // server (the float test of the rule), from this tick's viewer.
        for (const ReceivedEvent& e : heard_now) {
          ++heard;
          EXPECT_EQ(e.tick, t->tick);
          const float dx = e.x - t->viewer_x;
          const float dz = e.z - t->viewer_z;
          const float hearing = 2.0f * def.enter_radius;
          if ((t->options & kOptionInterest) != 0) {
            EXPECT_LE(dx * dx + dz * dz, hearing * hearing);
          }
          if (dx * dx + dz * dz > t->enter_radius * t->enter_radius) ++heard_beyond_r;
          if (!e.subject.is_null()) {
            EXPECT_TRUE(e.subject_held);
          }
        }
        // The library's grid follows the server's R; its scan is stated where interest is on.
        EXPECT_EQ(t->cell_size, def.enter_radius);
        EXPECT_EQ(t->scanned, (t->options & kOptionInterest) != 0 ? 1 : 0);
        last = *t;
        last.packets.clear();
        ++ticks;
        break;
      }
      case kDebugFrame: {
        std::uint32_t tick = 0;
        Result<std::vector<DebugEntry>> entries = read_debug(frame, &tick, &members);
        ASSERT_TRUE(entries.ok()) << entries.status().message();
        EXPECT_EQ(tick, last.tick);
        unheld = *entries;
        break;
      }
      case kWhyAnswerFrame: {
        Result<WhyAnswer> answer = read_why_answer(frame);
        ASSERT_TRUE(answer.ok()) << answer.status().message();
        EXPECT_EQ(answer->tick, last.tick);
        answers.push_back(*answer);
        break;
      }
      default: FAIL() << "unexpected frame type " << int(frame_type(frame));
    }
  }

  // After a tick: what is held lies within L of the stated viewer, and (culling) nothing the
  // server did not send lies within R of it.
  void check_rule() const {
    ASSERT_TRUE(mirror.anomalies().empty()) << anomaly_kind_name(mirror.anomalies()[0].kind);
    ASSERT_EQ(mirror.held_count(), held.size());
    if ((last.options & kOptionInterest) == 0) return;
    for (const auto& [index, h] : held) {
      EXPECT_LE(std::hypot(h.x - last.viewer_x, h.z - last.viewer_z), last.leave_radius + kSlack)
          << "entity " << index << " held beyond L at tick " << last.tick;
    }
    for (const DebugEntry& e : unheld) {
      EXPECT_GT(std::hypot(e.x - last.viewer_x, e.z - last.viewer_z), last.enter_radius)
          << "entity " << e.index << " within R but not sent at tick " << last.tick;
    }
  }

  GameDef def;
  ClientMirror mirror;
  std::map<std::uint32_t, Held> held;
  std::vector<DebugEntry> unheld;
  std::uint32_t members = 0;  // the last debug frame's
  std::vector<WhyAnswer> answers;
  TickFrame last;
  std::uint32_t ticks = 0;
  std::uint32_t resets = 0;
  std::vector<ReceivedEvent> heard_now;  // this frame's events (payload views not kept)
  std::vector<std::string> messages;     // the server's, as text
  std::uint64_t heard = 0;
  std::uint64_t heard_beyond_r = 0;
};

struct Harness {
  explicit Harness(GameDef game_def) : def(std::move(game_def)) {
    Result<std::unique_ptr<Game>> made = Game::create(def);
    EXPECT_TRUE(made.ok()) << made.status().message();
    game = std::move(made).value();
  }

  std::uint32_t connect() {
    std::vector<std::uint8_t> welcome;
    Result<std::uint32_t> id = game->connect(welcome);
    EXPECT_TRUE(id.ok()) << id.status().message();
    Result<Welcome> w = read_welcome(welcome);
    EXPECT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(w->connection, *id);
    receivers.emplace(*id, Receiver(def));
    return *id;
  }

  void send(std::uint32_t id, const std::vector<std::uint8_t>& frame) {
    Status s = game->receive(id, frame);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void tick() {
    frames.clear();
    ASSERT_TRUE(game->tick(1.0e12, &Harness::collect, this).ok());
    for (auto& [id, bytes] : frames) receivers.at(id).take(bytes);
    for (auto& [id, r] : receivers) r.check_rule();
  }

  static void collect(void* context, std::uint32_t id, std::span<const std::uint8_t> frame) {
    static_cast<Harness*>(context)->frames.emplace_back(
        id, std::vector<std::uint8_t>(frame.begin(), frame.end()));
  }

  GameDef def;
  std::unique_ptr<Game> game;
  std::map<std::uint32_t, Receiver> receivers;
  std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>> frames;
};

GameDef debug_def() {
  GameDef def;
  def.debug_view = true;
  return def;
}

TEST(Game, WelcomeStatesTheServersSettings) {
  Harness h{GameDef{}};
  std::vector<std::uint8_t> bytes;
  Result<std::uint32_t> id = h.game->connect(bytes);
  ASSERT_TRUE(id.ok());
  Result<Welcome> w = read_welcome(bytes);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->width, 12.0f);
  EXPECT_EQ(w->height, 7.5f);
  EXPECT_EQ(w->enter_radius, 1.6f);
  EXPECT_EQ(w->leave_radius, 2.0f);
  EXPECT_EQ(w->tick_rate, 20);
  EXPECT_EQ(w->server_flags, 0);
  EXPECT_EQ(w->max_radius, 6.4f);
  EXPECT_EQ(w->entity_count, 121u);
}

TEST(Game, EveryConnectionGetsWhatTheRuleHolds) {
  Harness h{debug_def()};
  const std::uint32_t a = h.connect();
  const std::uint32_t b = h.connect();
  const std::uint32_t c = h.connect();
  for (std::uint32_t id : {a, b, c}) h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  scenarios::Rng rng(7);
  std::uint64_t held_total = 0;
  for (int t = 0; t < 300; ++t) {
    if (t % 3 == 0) h.send(b, encode_move(rng.uniform(0.0f, 11.99f), rng.uniform(0.0f, 7.49f)));
    h.tick();
    for (auto& [id, r] : h.receivers) held_total += r.held.size();
  }
  for (auto& [id, r] : h.receivers) {
    EXPECT_EQ(r.ticks, 300u);
    EXPECT_EQ(r.resets, 0u);
    EXPECT_GT(r.mirror.stats().updates, 0u);
  }
  // Shots: 2 a second for 15 s; each connection hears those within 2R, some beyond its R.
  std::uint64_t heard = 0;
  std::uint64_t heard_beyond_r = 0;
  for (auto& [id, r] : h.receivers) {
    heard += r.heard;
    heard_beyond_r += r.heard_beyond_r;
    EXPECT_EQ(r.mirror.stats().events, r.heard);
  }
  EXPECT_GT(h.game->stats().shots, 15u);
  EXPECT_GT(heard, 5u);
  EXPECT_GT(heard_beyond_r, 0u);
  // About pi * 1.8^2 / 90 of 122 others each: some, not all.
  EXPECT_GT(held_total, 300u * 3u * 5u);
  EXPECT_LT(held_total, 300u * 3u * 60u);
  EXPECT_EQ(h.game->stats().groups, 2u);
}

TEST(Game, OthersSeeAViewerComeAndGo) {
  Harness h{debug_def()};
  const std::uint32_t watcher = h.connect();
  h.send(watcher, encode_options(kOptionHysteresis));  // interest off: holds everything
  h.tick();
  const std::uint32_t visitor = h.connect();
  h.tick();
  Receiver& r = h.receivers.at(watcher);
  ASSERT_EQ(r.held.size(), 121u);  // 120 walkers and the visitor
  int viewers = 0;
  for (const auto& [index, held] : r.held) viewers += held.kind == kKindViewer ? 1 : 0;
  EXPECT_EQ(viewers, 1);
  h.game->disconnect(visitor);
  h.receivers.erase(visitor);
  h.tick();
  EXPECT_EQ(r.held.size(), 120u);
  // The server's messages, in order, to whoever is connected when they are sent.
  EXPECT_EQ(r.messages,
            (std::vector<std::string>{"connection 1 joined (1 online)", "connection 2 joined (2 online)",
                                      "connection 2 left (1 online)"}));
  EXPECT_EQ(h.game->stats().messages, 3u);
  for (const auto& [index, held] : r.held) EXPECT_EQ(held.kind, kKindWalker);
}

TEST(Game, JoinsAndLeavesOfOneTickAreOneMessage) {
  Harness h{GameDef{}};
  const std::uint32_t first = h.connect();
  for (int i = 0; i < 4; ++i) (void)h.connect();
  h.tick();
  h.game->disconnect(first + 1);
  h.receivers.erase(first + 1);
  h.game->disconnect(first + 2);
  h.receivers.erase(first + 2);
  (void)h.connect();
  h.tick();
  h.game->disconnect(first + 3);
  h.receivers.erase(first + 3);
  h.tick();
  h.tick();  // nothing new: no message
  EXPECT_EQ(
      h.receivers.at(first).messages,
      (std::vector<std::string>{"5 connections joined (5 online)", "1 connection joined, 2 left (4 online)",
                                "connection 4 left (3 online)"}));
  EXPECT_EQ(h.game->stats().messages, 3u);
}

TEST(Game, OptionsRestartTheStreamAndChangeWhatIsSent) {
  Harness h{GameDef{}};
  const std::uint32_t id = h.connect();
  for (int t = 0; t < 20; ++t) h.tick();
  Receiver& r = h.receivers.at(id);
  const std::size_t culled = r.held.size();
  EXPECT_EQ(r.last.leave_radius, 2.0f);

  h.send(id, encode_options(kOptionHysteresis));  // interest off
  h.tick();
  EXPECT_EQ(r.resets, 1u);
  EXPECT_EQ(r.held.size(), 120u);
  EXPECT_GT(r.held.size(), culled);
  EXPECT_EQ(r.last.options, kOptionHysteresis);

  h.send(id, encode_options(kOptionInterest));  // interest on again, hysteresis off: L = R
  h.tick();
  EXPECT_EQ(r.resets, 2u);
  EXPECT_EQ(r.last.leave_radius, r.last.enter_radius);
  EXPECT_LT(r.held.size(), 120u);
  EXPECT_EQ(h.game->stats().groups, 2u);  // culling, and the send-everything baseline

  h.send(id, encode_options(kOptionInterest));  // the same again: no restart
  h.tick();
  EXPECT_EQ(r.resets, 2u);
}

TEST(Game, RadiusAndHysteresisChangeTheRadiiInTheSameStream) {
  Harness h{GameDef{}};
  const std::uint32_t a = h.connect();
  const std::uint32_t b = h.connect();
  for (int t = 0; t < 5; ++t) h.tick();
  Receiver& r = h.receivers.at(a);
  const std::size_t before = r.held.size();
  h.send(a, encode_radius(3.01f));
  for (int t = 0; t < 5; ++t) h.tick();
  // One World for every radius: no restart, the radius as asked, L at the server's L/R.
  EXPECT_EQ(r.resets, 0u);
  EXPECT_EQ(r.last.enter_radius, 3.01f);
  EXPECT_EQ(r.last.leave_radius, 3.01f * (2.0f / 1.6f));
  EXPECT_GT(r.held.size(), before);
  EXPECT_EQ(h.receivers.at(b).last.enter_radius, 1.6f);
  EXPECT_EQ(h.game->stats().groups, 2u);

  h.send(a, encode_options(kOptionInterest));  // hysteresis off: L = R, same stream
  h.tick();
  EXPECT_EQ(r.resets, 0u);
  EXPECT_EQ(r.last.leave_radius, 3.01f);

  EXPECT_FALSE(h.game->receive(a, encode_radius(0.39f)).ok());
  EXPECT_FALSE(h.game->receive(a, encode_radius(6.41f)).ok());
  EXPECT_FALSE(h.game->receive(a, encode_radius(std::nanf(""))).ok());
}

TEST(Game, FramesAreTheSameOnAnyThreadCount) {
  // The library's tick and send on 1 and 3 threads, fed the same frames: the same bytes out.
  GameDef def;
  def.entities = 3000;
  GameDef threaded = def;
  threaded.threads = 3;
  Harness one{def};
  Harness three{threaded};
  std::vector<std::uint32_t> ids;
  for (int c = 0; c < 200; ++c) {
    ids.push_back(one.connect());
    EXPECT_EQ(three.connect(), ids.back());
  }
  scenarios::Rng rng(5);
  for (int t = 0; t < 12; ++t) {
    for (const std::uint32_t id : ids) {
      const float draw = rng.uniform(0.0f, 1.0f);
      // Now and then interest off or on again: the send-everything World on threads too.
      const auto frame = draw < 0.1f    ? encode_radius(rng.uniform(0.4f, 3.0f))
                         : draw < 0.13f ? encode_options(draw < 0.115f ? kOptionHysteresis : kDefaultOptions)
                                        : encode_move(rng.uniform(0.0f, 11.9f), rng.uniform(0.0f, 7.4f));
      one.send(id, frame);
      three.send(id, frame);
    }
    one.tick();
    three.tick();
    ASSERT_EQ(one.frames.size(), three.frames.size());
    for (std::size_t i = 0; i < one.frames.size(); ++i) {
      ASSERT_EQ(one.frames[i].first, three.frames[i].first);
      ASSERT_EQ(one.frames[i].second, three.frames[i].second) << "tick " << t << ", frame " << i;
    }
  }
  EXPECT_GT(three.game->stats().updates, 200u * 12u * 100u);
}

TEST(Game, RefusedFramesChangeNothing) {
  // Two games fed the same good frames; one also gets every kind of bad frame. Their frames match.
  Harness plain{GameDef{}};
  Harness hostile{GameDef{}};
  const std::uint32_t p = plain.connect();
  const std::uint32_t q = hostile.connect();
  const std::vector<std::vector<std::uint8_t>> bad = {
      {},
      {9},
      {kMoveFrame, 0, 0},
      encode_move(12.5f, 1.0f),
      encode_move(std::nanf(""), 1.0f),
      encode_move(1.0f, -0.1f),
      encode_options(8),
      encode_options(kOptionDebug),  // this server has no debug view
      encode_radius(100.0f),
      {kRadiusFrame, 0, 0, 0, 0, 0},
      encode_why({.index = 3, .generation = 1}),  // no debug view here either
      {kWhyFrame, 3, 0, 0, 0},
  };
  scenarios::Rng rng(3);
  for (int t = 0; t < 60; ++t) {
    const auto move = encode_move(rng.uniform(0.0f, 11.9f), rng.uniform(0.0f, 7.4f));
    plain.send(p, move);
    hostile.send(q, move);
    Status s = hostile.game->receive(q, bad[static_cast<std::size_t>(t) % bad.size()]);
    EXPECT_FALSE(s.ok());
    EXPECT_LE(s.message().size(), 123u);
    EXPECT_FALSE(s.message().empty());
    plain.tick();
    hostile.tick();
    ASSERT_EQ(plain.frames.size(), hostile.frames.size());
    for (std::size_t i = 0; i < plain.frames.size(); ++i)
      EXPECT_EQ(plain.frames[i].second, hostile.frames[i].second);
  }
  EXPECT_FALSE(hostile.game->receive(999, encode_move(1.0f, 1.0f)).ok());
}

TEST(Game, DebugViewListsExactlyWhatIsNotHeld) {
  Harness h{debug_def()};
  const std::uint32_t id = h.connect();
  h.connect();
  h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  for (int t = 0; t < 30; ++t) h.tick();
  const Receiver& r = h.receivers.at(id);
  EXPECT_EQ(r.held.size() + r.unheld.size(), 121u);  // 120 walkers, the other viewer; not its own
  EXPECT_EQ(r.members, r.held.size());               // reliable, and paced entry long done
  for (const DebugEntry& e : r.unheld) EXPECT_EQ(r.held.count(e.index), 0u);
}

TEST(Game, UnreliableDeliveryIsAnnouncedAndTakesAcks) {
  GameDef def;
  def.delivery = Delivery::unreliable;
  Result<std::unique_ptr<Game>> game = Game::create(def);
  ASSERT_TRUE(game.ok()) << game.status().message();
  std::vector<std::uint8_t> welcome;
  Result<std::uint32_t> id = (*game)->connect(welcome);
  ASSERT_TRUE(id.ok());
  Result<Welcome> w = read_welcome(welcome);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->server_flags, kServerUnreliable);

  std::vector<std::uint8_t> last_tick;
  const auto keep_tick = [](void* context, std::uint32_t, std::span<const std::uint8_t> frame) {
    if (frame_type(frame) == kTickFrame)
      static_cast<std::vector<std::uint8_t>*>(context)->assign(frame.begin(), frame.end());
  };
  ASSERT_TRUE((*game)->tick(0.0, keep_tick, &last_tick).ok());
  Result<TickFrame> t = read_tick(last_tick);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_FALSE(t->packets.empty());
  MirrorDef mdef;
  mdef.delivery = Delivery::unreliable;
  Result<ClientMirror> mirror = ClientMirror::create(mdef);
  ASSERT_TRUE(mirror.ok());
  for (const auto packet : t->packets) ASSERT_TRUE(mirror->receive(packet, nullptr).ok());
  EXPECT_TRUE((*game)->receive(*id, encode_ack(0, mirror->ack())).ok());

  // An ack of reliable ids never sent, and bytes that are no ack, are refused naming the frame.
  AckPacket ahead = mirror->ack();
  ahead.reliable_applied += 1000;
  std::vector<std::uint8_t> garbage = encode_ack(0, {});
  std::fill(garbage.begin() + 5, garbage.end(), std::uint8_t{0x55});
  for (const std::vector<std::uint8_t>& bad :
       {encode_ack(0, ahead), garbage, std::vector<std::uint8_t>{kAckFrame, 1, 2}}) {
    const Status s = (*game)->receive(*id, bad);
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument) << s.message();
    EXPECT_EQ(s.message().rfind("ack frame", 0), 0u) << s.message();
    EXPECT_LE(s.message().size(), 123u);
  }
  EXPECT_EQ((*game)->stats().frames_in, 1u);
  // An ack of another stream (from before a reset, still on its way) is not applied: even one
  // that would be refused on this stream is taken and dropped.
  EXPECT_TRUE((*game)->receive(*id, encode_ack(77, ahead)).ok());
  EXPECT_EQ((*game)->stats().frames_in, 2u);
}

// The position a connection knows of an entity after a tick: held (its mirror), or listed by the
// debug view; nothing if neither.
std::optional<std::pair<float, float>> known_position(const Receiver& r, std::uint32_t index) {
  if (const auto it = r.held.find(index); it != r.held.end()) return std::pair{it->second.x, it->second.z};
  for (const DebugEntry& e : r.unheld) {
    if (e.index == index) return std::pair{e.x, e.z};
  }
  return std::nullopt;
}

TEST(Game, WhyAnswersWhatTheRuleDecidedForHeldAndUnheldEntities) {
  Harness h{debug_def()};
  const std::uint32_t id = h.connect();
  h.connect();
  h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  for (int t = 0; t < 30; ++t) h.tick();
  Receiver& r = h.receivers.at(id);
  std::map<Rule, int> rules;
  for (int t = 0; t < 120; ++t) {
    // Alternately a held entity (its handle, as the page knows it from the spawn) and one the
    // debug view lists (its index alone: generation 0), spread over the entities.
    EntityId asked;
    if (t % 2 == 0) {
      ASSERT_FALSE(r.held.empty());
      auto it = r.held.begin();
      std::advance(it, (t / 2) % r.held.size());
      asked = {it->first, it->second.generation};
    } else {
      ASSERT_FALSE(r.unheld.empty());
      asked = {r.unheld[static_cast<std::size_t>(t / 2) % r.unheld.size()].index, 0};
    }
    h.send(id, encode_why(asked));
    h.tick();
    ASSERT_EQ(r.answers.size(), static_cast<std::size_t>(t) + 1);
    const WhyAnswer& a = r.answers.back();
    ASSERT_EQ(a.outcome, WhyOutcome::answered);
    EXPECT_EQ(a.entity.index, asked.index);
    if (asked.generation != 0) {
      EXPECT_EQ(a.entity.generation, asked.generation);
    }
    EXPECT_EQ(a.root, a.entity) << "the demo attaches nothing: each entity is its own root";
    // The answer is the tick's: held exactly when the stream holds it after that tick.
    const bool in_stream = r.held.count(a.entity.index) == 1;
    EXPECT_EQ(a.held == 1, in_stream) << rule_name(a.rule) << " for entity " << a.entity.index;
    if (in_stream) {
      EXPECT_EQ(r.held.at(a.entity.index).generation, a.entity.generation);
    }
    const auto at = known_position(r, a.entity.index);
    ASSERT_TRUE(at.has_value());
    const float d = std::hypot(at->first - r.last.viewer_x, at->second - r.last.viewer_z);
    switch (a.rule) {
      case Rule::near: EXPECT_LE(d, r.last.enter_radius + kSlack); break;
      case Rule::within_leave:
        EXPECT_GE(d, r.last.enter_radius - kSlack);
        EXPECT_LE(d, r.last.leave_radius + kSlack);
        break;
      case Rule::out_of_range: EXPECT_GE(d, r.last.enter_radius - kSlack); break;
      default: ADD_FAILURE() << "rule " << rule_name(a.rule) << " in a world of walkers and viewers";
    }
    ++rules[a.rule];
  }
  EXPECT_GT(rules[Rule::near], 20);
  EXPECT_GT(rules[Rule::out_of_range], 20);
  EXPECT_EQ(h.game->stats().why_answers, 120u);
}

TEST(Game, WhyIsTheDebugViewsOnlyAndRefusesBadFramesNamingThem) {
  Harness plain{GameDef{}};
  const std::uint32_t p = plain.connect();
  const Status without = plain.game->receive(p, encode_why({.index = 1, .generation = 1}));
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.message().find("why frame"), std::string::npos) << without.message();
  EXPECT_NE(without.message().find("--debug-view"), std::string::npos) << without.message();

  Harness h{debug_def()};
  const std::uint32_t id = h.connect();
  h.tick();
  // The server offers the debug view, but this connection has not turned it on.
  const std::uint64_t accepted = h.game->stats().frames_in;
  const Status off = h.game->receive(id, encode_why({.index = 1, .generation = 0}));
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.message().find("debug view is off"), std::string::npos) << off.message();
  EXPECT_LE(off.message().size(), 123u);
  for (std::size_t size = 1; size <= 64; ++size) {
    if (size == kWhyBytes) continue;
    std::vector<std::uint8_t> frame(size, 0);
    frame[0] = kWhyFrame;
    const Status s = h.game->receive(id, frame);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("why frame is " + std::to_string(size) + " bytes, expected 9"),
              std::string::npos)
        << s.message();
  }
  EXPECT_EQ(h.game->stats().frames_in, accepted);
  h.tick();
  EXPECT_TRUE(h.receivers.at(id).answers.empty());
  EXPECT_EQ(h.game->stats().why_answers, 0u);

  // On: answered after the next tick. Off again before the tick: the question goes unanswered.
  h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  h.send(id, encode_why({.index = 1, .generation = 0}));
  h.tick();
  EXPECT_EQ(h.receivers.at(id).answers.size(), 1u);
  h.send(id, encode_why({.index = 1, .generation = 0}));
  h.send(id, encode_options(kDefaultOptions));
  h.tick();
  EXPECT_EQ(h.receivers.at(id).answers.size(), 1u);
}

TEST(Game, WhyAnswersStaleHandlesTheLatestQuestionAndNothingAcrossARestart) {
  Harness h{debug_def()};
  const std::uint32_t id = h.connect();
  const std::uint32_t visitor = h.connect();
  // Interest off: every entity is held, by the rule of a space that does not cull.
  h.send(id, encode_options(kOptionHysteresis | kOptionDebug));
  h.tick();
  Receiver& r = h.receivers.at(id);
  ASSERT_EQ(r.resets, 1u);
  EntityId visitor_viewer;
  EntityId walker;
  for (const auto& [index, held] : r.held) {
    if (held.kind == kKindViewer) visitor_viewer = {index, held.generation};
    if (held.kind == kKindWalker && walker.is_null()) walker = {index, held.generation};
  }
  ASSERT_FALSE(visitor_viewer.is_null());
  ASSERT_FALSE(walker.is_null());

  // Two questions before a tick: the later is answered, once.
  h.send(id, encode_why(visitor_viewer));
  h.send(id, encode_why(walker));
  h.tick();
  ASSERT_EQ(r.answers.size(), 1u);
  EXPECT_EQ(r.answers[0].entity, walker);
  EXPECT_EQ(r.answers[0].held, 1);
  EXPECT_EQ(r.answers[0].rule, Rule::unculled);

  // The visitor leaves: its viewer's handle is stale, and so is an index that never held one.
  h.game->disconnect(visitor);
  h.receivers.erase(visitor);
  h.tick();
  h.send(id, encode_why(visitor_viewer));
  h.tick();
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_EQ(r.answers[1], (WhyAnswer{.tick = r.last.tick,
                                     .entity = visitor_viewer,
                                     .outcome = WhyOutcome::stale,
                                     .held = 0,
                                     .rule = Rule::viewer,
                                     .root = {}}));
  h.send(id, encode_why({.index = 4000000000u, .generation = 0}));
  h.tick();
  ASSERT_EQ(r.answers.size(), 3u);
  EXPECT_EQ(r.answers[2].outcome, WhyOutcome::stale);
  EXPECT_EQ(r.answers[2].entity, (EntityId{4000000000u, 0}));
  h.send(id, encode_why({.index = walker.index, .generation = walker.generation + 1}));
  h.tick();
  ASSERT_EQ(r.answers.size(), 4u);
  EXPECT_EQ(r.answers[3].outcome, WhyOutcome::stale);

  // A question waiting when the stream restarts names the other World's entity: dropped.
  h.send(id, encode_why(walker));
  h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  h.tick();
  EXPECT_EQ(r.resets, 2u);
  EXPECT_EQ(r.answers.size(), 4u);
  EXPECT_EQ(h.game->stats().why_answers, 4u);
}

TEST(Game, CrowdScenarioAndBadDefs) {
  GameDef crowd;
  crowd.scenario = "crowd";
  crowd.entities = 400;
  crowd.debug_view = true;
  Harness h{crowd};
  const std::uint32_t id = h.connect();
  h.send(id, encode_options(kDefaultOptions | kOptionDebug));
  for (int t = 0; t < 40; ++t) h.tick();

  GameDef bad;
  bad.scenario = "mmo";
  EXPECT_NE(validate(bad).message().find("scenario"), std::string::npos);
  bad = GameDef{};
  bad.leave_radius = 1.0f;
  EXPECT_NE(validate(bad).message().find("leave_radius is 1"), std::string::npos);
  bad = GameDef{};
  bad.tick_rate = 0;
  EXPECT_NE(validate(bad).message().find("tick_rate is 0"), std::string::npos);
  bad = GameDef{};
  bad.shots_per_second = -1.0f;
  EXPECT_NE(validate(bad).message().find("shots_per_second is -1"), std::string::npos);
  bad = GameDef{};
  bad.width = std::nanf("");
  EXPECT_FALSE(Game::create(bad).ok());
}

}  // namespace
}  // namespace sightline::demo
