// The bot without a network: driven by the demo Game's own frames it sees no problem, and each
// kind of wrong input it is built to catch is caught.
#include "bot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "frames.h"
#include "game.h"
#include "report.h"
#include "sightline/protocol.h"
#include "sightline/serialize.h"

namespace sightline::bots {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::uint64_t count(const Bot& bot, Problem p) { return bot.totals().problems[static_cast<std::size_t>(p)]; }

std::string notes(const Bot& bot) {
  std::string all;
  for (const std::string& n : bot.notes()) all += n + "\n";
  return all;
}

// Feeds one connection's frames of a Game tick to its bot.
struct Feed {
  std::uint32_t connection = 0;
  Bot* bot = nullptr;
  DelayHistogram* delays = nullptr;
  double receive_ms = 0.0;
  static void sink(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame) {
    auto& f = *static_cast<Feed*>(context);
    if (connection == f.connection) f.bot->on_frame(frame, f.receive_ms, *f.delays);
  }
};

TEST(Bot, FollowsTheGameWithoutAProblem) {
  demo::GameDef def;
  def.entities = 120;
  auto game = demo::Game::create(def);
  ASSERT_TRUE(game.ok()) << game.status().message();
  Bot bot(WalkDef{.seed = 7, .speed = 3.0});
  DelayHistogram delays;
  Bytes welcome;
  const auto id = (*game)->connect(welcome);
  ASSERT_TRUE(id.ok()) << id.status().message();
  bot.on_frame(welcome, 0.0, delays);
  ASSERT_TRUE(bot.welcomed());
  Feed feed{.connection = *id, .bot = &bot, .delays = &delays};
  for (int t = 0; t < 400; ++t) {
    feed.receive_ms = 1000.0 + 50.0 * t + 1.5;
    ASSERT_TRUE((*game)->tick(1000.0 + 50.0 * t, &Feed::sink, &feed).ok());
    if (t == 200) {
      // Hysteresis off: L = R from the next tick, in the same stream.
      ASSERT_TRUE((*game)->receive(*id, demo::encode_options(demo::kOptionInterest)).ok());
    }
    if (t == 300) {
      // Interest off: the other World, a new stream announced by a reset.
      ASSERT_TRUE((*game)->receive(*id, demo::encode_options(0)).ok());
    }
    if (const auto move = bot.next_move(0.05)) {
      ASSERT_TRUE((*game)->receive(*id, *move).ok());
    }
  }
  EXPECT_EQ(bot.problem_count(), 0u) << notes(bot);
  EXPECT_EQ(bot.totals().ticks, 400u);
  EXPECT_EQ(bot.totals().resets, 1u);
  EXPECT_GT(bot.totals().spawns, 0u);
  EXPECT_GT(bot.totals().despawns, 0u);  // the walk crossed entities' radii
  EXPECT_GT(bot.totals().checked, 400u);
  EXPECT_EQ(bot.totals().moves, 400u);
  EXPECT_EQ(delays.count(), 400u);
  EXPECT_NEAR(delays.quantile(0.5), 1.5, 0.011);
}

// A connection's frames kept, as a server queues them for a connection whose writes are late.
struct Queue {
  std::uint32_t connection = 0;
  std::vector<Bytes> frames;
  static void sink(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame) {
    auto& q = *static_cast<Queue*>(context);
    if (connection == q.connection) q.frames.emplace_back(frame.begin(), frame.end());
  }
};

// The same stream, frame by frame or in bundles of several ticks' frames (a late connection's
// backlog, and a reset with the tick behind it): the bot sees the same.
TEST(Bot, BundledFramesAreTakenAsTheFramesInThem) {
  demo::GameDef def;
  def.entities = 120;
  auto game = demo::Game::create(def);
  ASSERT_TRUE(game.ok()) << game.status().message();
  Bot single(WalkDef{.seed = 7, .speed = 3.0});
  Bot bundled(WalkDef{.seed = 7, .speed = 3.0});
  DelayHistogram single_delays;
  DelayHistogram bundled_delays;
  Bytes welcome;
  const auto id = (*game)->connect(welcome);
  ASSERT_TRUE(id.ok()) << id.status().message();
  Queue queue;
  queue.connection = *id;
  queue.frames.push_back(welcome);
  std::uint64_t bundles = 0;
  for (int t = 0; t < 120; ++t) {
    ASSERT_TRUE((*game)->tick(1000.0 + 50.0 * t, &Queue::sink, &queue).ok());
    if (t == 60) {
      ASSERT_TRUE((*game)->receive(*id, demo::encode_options(0)).ok());  // a reset
    }
    if (t % 3 != 2) continue;
    Bytes bundle;
    demo::begin_bundle(bundle);
    for (const Bytes& frame : queue.frames) {
      single.on_message(frame, 2000.0, single_delays);
      demo::append_to_bundle(bundle, frame);
    }
    bundled.on_message(bundle, 2000.0, bundled_delays);
    bundles += queue.frames.size() > 1 ? 1 : 0;
    queue.frames.clear();
  }
  EXPECT_EQ(bundles, 40u);
  EXPECT_EQ(single.problem_count(), 0u) << notes(single);
  EXPECT_EQ(bundled.problem_count(), 0u) << notes(bundled);
  const BotTotals& a = single.totals();
  const BotTotals& b = bundled.totals();
  EXPECT_EQ(b.frames, a.frames);
  EXPECT_EQ(b.bytes, a.bytes);
  EXPECT_EQ(b.ticks, 120u);
  EXPECT_EQ(b.ticks, a.ticks);
  EXPECT_EQ(b.resets, 1u);
  EXPECT_EQ(b.spawns, a.spawns);
  EXPECT_EQ(b.updates, a.updates);
  EXPECT_EQ(b.checked, a.checked);
  EXPECT_GT(b.checked, 120u);
  EXPECT_EQ(bundled_delays.count(), single_delays.count());

  // A bundle that does not read is one malformed frame, and none of its frames is taken.
  Bytes broken;
  demo::begin_bundle(broken);
  broken.push_back(200);
  DelayHistogram delays;
  bundled.on_message(broken, 0.0, delays);
  EXPECT_EQ(count(bundled, Problem::malformed_frame), 1u);
  EXPECT_EQ(bundled.totals().frames, b.frames);
}

// One connection's frames of a Game tick over a lossy network: each tick and debug frame is lost
// with probability `loss` (seeded); `members_lie` adds to every debug frame's member count;
// `debug_until` drops debug frames from that tick on.
struct LossyFeed {
  std::uint32_t connection = 0;
  Bot* bot = nullptr;
  DelayHistogram* delays = nullptr;
  std::mt19937_64 rng{5};
  double loss = 0.0;
  std::uint32_t members_lie = 0;
  bool hide_everything = false;  // list every walker as hidden, held ones included
  std::uint32_t debug_until = 0xffffffffu;
  std::uint64_t lost = 0;
  static void sink(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame) {
    auto& f = *static_cast<LossyFeed*>(context);
    if (connection != f.connection) return;
    const std::uint8_t type = demo::frame_type(frame);
    if ((type == demo::kTickFrame || type == demo::kDebugFrame) &&
        std::uniform_real_distribution<double>(0.0, 1.0)(f.rng) < f.loss) {
      ++f.lost;
      return;
    }
    if (type == demo::kDebugFrame) {
      std::uint32_t tick = 0;
      std::uint32_t members = 0;
      const auto hidden = demo::read_debug(frame, &tick, &members);
      ASSERT_TRUE(hidden.ok());
      if (tick >= f.debug_until) return;
      std::vector<demo::DebugEntry> listed = *hidden;
      if (f.hide_everything) {
        for (std::uint32_t i = 0; i < 150; ++i) {
          if (std::none_of(hidden->begin(), hidden->end(),
                           [i](const demo::DebugEntry& e) { return e.index == i; }))
            listed.push_back({i, 1.0f, 1.0f});
        }
      }
      Bytes rewritten;
      demo::write_debug_header(rewritten, tick, members + f.members_lie,
                               static_cast<std::uint32_t>(listed.size()));
      for (const demo::DebugEntry& e : listed) demo::append_debug_entry(rewritten, e);
      f.bot->on_frame(rewritten, 0.0, *f.delays);
      return;
    }
    f.bot->on_frame(frame, 0.0, *f.delays);
  }
};

// Runs a bot checking sets against an unreliable Game for `ticks` ticks through `feed`, its acks,
// options and moves going back (never lost: the server's state is what is checked).
void run_checking_sets(LossyFeed& feed, int ticks) {
  demo::GameDef def;
  def.entities = 150;
  def.delivery = Delivery::unreliable;
  def.debug_view = true;
  auto game = demo::Game::create(def);
  ASSERT_TRUE(game.ok()) << game.status().message();
  Bytes welcome;
  const auto id = (*game)->connect(welcome);
  ASSERT_TRUE(id.ok()) << id.status().message();
  feed.connection = *id;
  feed.bot->on_frame(welcome, 0.0, *feed.delays);
  for (int t = 0; t < ticks; ++t) {
    if (const auto options = feed.bot->take_options()) {
      ASSERT_TRUE((*game)->receive(*id, *options).ok());
    }
    ASSERT_TRUE((*game)->tick(50.0 * t, &LossyFeed::sink, &feed).ok());
    if (const auto ack = feed.bot->take_ack()) {
      ASSERT_TRUE((*game)->receive(*id, *ack).ok());
    }
    if (const auto move = feed.bot->next_move(0.05)) {
      ASSERT_TRUE((*game)->receive(*id, *move).ok());
    }
  }
  feed.bot->finish();
}

TEST(Bot, UnderLossItsCompleteMirrorIsTheServersSet) {
  Bot bot(WalkDef{.seed = 3, .speed = 3.0}, /*check_sets=*/true);
  DelayHistogram delays;
  LossyFeed feed{.bot = &bot, .delays = &delays, .loss = 0.2};
  run_checking_sets(feed, 600);
  EXPECT_EQ(bot.problem_count(), 0u) << notes(bot);
  EXPECT_GT(feed.lost, 150u);
  EXPECT_GT(bot.totals().acks, 400u);
  EXPECT_GT(bot.totals().set_checks, 100u);
  EXPECT_GT(bot.totals().spawns, 20u);
  EXPECT_GT(bot.totals().despawns, 10u);
}

TEST(Bot, ASetThatDiffersIsReported) {
  Bot bot(WalkDef{.seed = 3, .speed = 3.0}, /*check_sets=*/true);
  DelayHistogram delays;
  LossyFeed feed{.bot = &bot, .delays = &delays, .members_lie = 1};
  run_checking_sets(feed, 100);
  EXPECT_GT(count(bot, Problem::set_mismatch), 50u) << notes(bot);
  EXPECT_EQ(bot.notes().front().rfind("set_mismatch: tick ", 0), 0u) << notes(bot);
}

TEST(Bot, AHeldEntityTheServerSaysItHidesIsReported) {
  Bot bot(WalkDef{.seed = 3, .speed = 3.0}, /*check_sets=*/true);
  DelayHistogram delays;
  LossyFeed feed{.bot = &bot, .delays = &delays, .hide_everything = true};
  run_checking_sets(feed, 100);
  EXPECT_GT(count(bot, Problem::set_mismatch), 50u) << notes(bot);
  EXPECT_NE(bot.notes().front().find("outside the server's set"), std::string::npos) << notes(bot);
}

TEST(Bot, AMirrorNeverFoundCompleteAtTheEndHasNotConverged) {
  Bot bot(WalkDef{.seed = 3, .speed = 3.0}, /*check_sets=*/true);
  DelayHistogram delays;
  // The debug view goes dark after tick 100 of 200: the last 100 tick frames check nothing.
  LossyFeed feed{.bot = &bot, .delays = &delays, .debug_until = 100};
  run_checking_sets(feed, 200);
  EXPECT_EQ(count(bot, Problem::not_converged), 1u) << notes(bot);
  EXPECT_EQ(bot.problem_count(), 1u) << notes(bot);
  EXPECT_GT(bot.totals().set_checks, 50u);
}

// A hand-made stream: a welcome for a 12 x 7.5 world, then tick frames of packets.
class HandStream : public ::testing::Test {
 protected:
  void SetUp() override {
    demo::Welcome w{.connection = 1,
                    .width = 12.0f,
                    .height = 7.5f,
                    .enter_radius = 1.6f,
                    .leave_radius = 2.0f,
                    .cell_size = 1.6f,
                    .tick_rate = 20,
                    .server_flags = 0,
                    .max_radius = 6.4f,
                    .entity_count = 2};
    Bytes frame;
    demo::write_welcome(frame, w);
    bot.on_frame(frame, 0.0, delays);
  }

  static Bytes payload(float x, float z, bool full) {
    std::array<std::uint8_t, 16> buffer{};
    Stream s = Stream::writer(buffer);
    std::uint32_t kind = demo::kKindWalker;
    EXPECT_TRUE(s.serialize_quantized(x, 0.0f, 12.0f, 1.0f / 256.0f));
    EXPECT_TRUE(s.serialize_quantized(z, 0.0f, 7.5f, 1.0f / 256.0f));
    if (full) {
      EXPECT_TRUE(s.serialize_uint(kind, 0, 3));
    }
    return Bytes(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(s.bytes()));
  }

  // A packet spawning entity 5:1 at (x, z), with `sequence` and reliable id `reliable`, of tick
  // sequence + 1: the tick frame it comes in when each comes in its own, from the first.
  static Bytes spawn_packet(std::uint32_t sequence, std::uint32_t reliable, float x, float z) {
    std::array<std::uint8_t, 256> buffer{};
    PacketWriter w(
        buffer,
        PacketHeader{.sequence = sequence, .tick = sequence + 1, .reliable_next = reliable, .interest = {}});
    EXPECT_TRUE(w.add_spawn(reliable, EntityId{5, 1}, SpawnReason::near, false, payload(x, z, true)));
    const auto bytes = w.finish();
    return Bytes(bytes.begin(), bytes.end());
  }

  void tick(const std::vector<Bytes>& packets, float viewer_x = 6.0f, float viewer_z = 4.0f) {
    demo::TickFrame t;
    t.tick = ++ticks;
    t.viewer_x = viewer_x;
    t.viewer_z = viewer_z;
    t.enter_radius = 1.6f;
    t.leave_radius = 2.0f;
    t.options = demo::kDefaultOptions;
    t.server_time_ms = 100.0;
    Bytes frame;
    ASSERT_TRUE(demo::write_tick_header(frame, t, packets.size()).ok());
    for (const Bytes& p : packets) ASSERT_TRUE(demo::append_tick_packet(frame, p).ok());
    bot.on_frame(frame, 103.0, delays);
  }

  Bot bot{WalkDef{}};
  DelayHistogram delays;
  std::uint32_t ticks = 0;
};

TEST_F(HandStream, AnEntityWithinLPasses) {
  tick({spawn_packet(0, 0, 7.99f, 4.0f)});  // 1.99 from the viewer
  EXPECT_EQ(bot.problem_count(), 0u) << notes(bot);
  EXPECT_EQ(bot.totals().checked, 1u);
  EXPECT_EQ(bot.held_count(), 1u);
  tick({}, 5.9f, 4.0f);  // no state this tick: its position is not re-checked
  EXPECT_EQ(bot.totals().checked, 1u);
  HandStream::SetUp();  // a second welcome
  EXPECT_EQ(count(bot, Problem::out_of_order), 1u);
}

TEST_F(HandStream, AnEntityBeyondLIsReported) {
  tick({spawn_packet(0, 0, 8.02f, 4.0f)});  // 2.02 > 2 + 2/256 + 1e-4
  EXPECT_EQ(count(bot, Problem::out_of_radius), 1u) << notes(bot);
  ASSERT_EQ(bot.notes().size(), 1u);
  EXPECT_NE(bot.notes()[0].find("beyond L 2"), std::string::npos) << bot.notes()[0];
}

TEST_F(HandStream, AStateOfAnEarlierTickIsNotHeldToTheFramesViewer) {
  // A spawn sent with the state it first went with, a tick older than the frame, stood where the
  // viewer was then: not compared with where the viewer is now.
  std::array<std::uint8_t, 256> buffer{};
  PacketWriter w(buffer, PacketHeader{.sequence = 0, .tick = 1, .reliable_next = 0, .interest = {}});
  ASSERT_TRUE(w.add_spawn(0, EntityId{5, 1}, SpawnReason::near, false, payload(11.0f, 4.0f, true), 1));
  const auto bytes = w.finish();
  tick({Bytes(bytes.begin(), bytes.end())});
  EXPECT_EQ(bot.problem_count(), 0u) << notes(bot);
  EXPECT_EQ(bot.totals().checked, 0u);
  EXPECT_EQ(bot.held_count(), 1u);
}

TEST_F(HandStream, ASequenceGapAndASecondSpawnAreMirrorAnomalies) {
  tick({spawn_packet(0, 0, 6.5f, 4.0f)});
  tick({spawn_packet(2, 1, 6.5f, 4.0f)});  // sequence 1 is missing; 5:1 is held already
  EXPECT_EQ(count(bot, Problem::bad_sequence), 1u) << notes(bot);
  EXPECT_EQ(count(bot, Problem::spawn_held), 1u) << notes(bot);
}

TEST_F(HandStream, BadBytesAreMalformed) {
  Bytes truncated = spawn_packet(0, 0, 6.5f, 4.0f);
  truncated.pop_back();
  tick({truncated});
  EXPECT_EQ(count(bot, Problem::malformed_packet), 1u) << notes(bot);
  bot.on_frame(Bytes{9, 1, 2}, 0.0, delays);
  bot.on_frame(Bytes{demo::kTickFrame, 1, 2}, 0.0, delays);
  EXPECT_EQ(count(bot, Problem::malformed_frame), 2u) << notes(bot);
  bot.on_frame(Bytes{demo::kDebugFrame, 0, 0, 0, 0, 0, 0, 0, 0}, 0.0, delays);
  EXPECT_EQ(count(bot, Problem::out_of_order), 1u) << notes(bot);
  EXPECT_LE(bot.notes().size(), Bot::kMaxNotes);
}

TEST_F(HandStream, APayloadOutsideTheDemoLayoutIsMalformed) {
  std::array<std::uint8_t, 64> buffer{};
  PacketWriter w(buffer, PacketHeader{});
  const Bytes too_long = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  ASSERT_TRUE(w.add_spawn(0, EntityId{5, 1}, SpawnReason::near, false, too_long));
  const auto bytes = w.finish();
  tick({Bytes(bytes.begin(), bytes.end())});
  EXPECT_EQ(count(bot, Problem::malformed_packet), 1u) << notes(bot);
  EXPECT_EQ(bot.held_count(), 0u);
}

TEST_F(HandStream, AResetStartsAFreshMirror) {
  tick({spawn_packet(0, 0, 6.5f, 4.0f)});
  Bytes reset;
  demo::write_reset(reset, 9);
  bot.on_frame(reset, 0.0, delays);
  EXPECT_EQ(bot.held_count(), 0u);
  tick({spawn_packet(0, 0, 6.5f, 4.0f)});  // sequence 0 again, 5:1 spawned again
  EXPECT_EQ(bot.problem_count(), 0u) << notes(bot);
  EXPECT_EQ(bot.totals().resets, 1u);
}

TEST(Bot, FramesBeforeWelcomeAreOutOfOrder) {
  Bot bot{WalkDef{}};
  DelayHistogram delays;
  Bytes reset;
  demo::write_reset(reset, 1);
  bot.on_frame(reset, 0.0, delays);
  EXPECT_EQ(count(bot, Problem::out_of_order), 1u);
  EXPECT_FALSE(bot.next_move(0.1).has_value());
}

TEST_F(HandStream, TheWalkStaysStrictlyInsideTheWorld) {
  tick({}, 11.99f, 0.01f);
  for (int i = 0; i < 5000; ++i) {
    const auto move = bot.next_move(0.5);
    ASSERT_TRUE(move.has_value());
    const auto frame = demo::read_client_frame(*move, demo::ClientLimits{});
    ASSERT_TRUE(frame.ok()) << frame.status().message();
    ASSERT_TRUE(frame->x >= 0.0f && frame->x < 12.0f) << frame->x;
    ASSERT_TRUE(frame->z >= 0.0f && frame->z < 7.5f) << frame->z;
  }
}

TEST(DelayHistogram, QuantilesWithinABucket) {
  DelayHistogram h;
  EXPECT_EQ(h.quantile(0.5), 0.0);
  for (int i = 1; i <= 100; ++i) h.add(i * 0.1);  // 0.1 .. 10 ms
  h.add(2500.0);
  EXPECT_EQ(h.count(), 101u);
  EXPECT_NEAR(h.quantile(0.5), 5.1, 0.011);
  EXPECT_NEAR(h.quantile(0.99), 10.0, 0.011);
  EXPECT_EQ(h.max(), 2500.0);
  EXPECT_NEAR(h.min(), 0.1, 1e-12);
  h.add(-3.0);  // another machine's clock
  EXPECT_EQ(h.min(), -3.0);
}

TEST(EntityPayload, ReadsTheDemoLayoutExactly) {
  float x = 0.0f;
  float z = 0.0f;
  std::uint32_t kind = 9;
  std::array<std::uint8_t, 8> buffer{};
  Stream s = Stream::writer(buffer);
  float wx = 3.0f;
  float wz = 7.5f;
  std::uint32_t wkind = demo::kKindViewer;
  ASSERT_TRUE(s.serialize_quantized(wx, 0.0f, 12.0f, 1.0f / 256.0f) &&
              s.serialize_quantized(wz, 0.0f, 7.5f, 1.0f / 256.0f) && s.serialize_uint(wkind, 0, 3));
  const std::span<const std::uint8_t> full(buffer.data(), s.bytes());
  const PayloadRanges ranges = payload_ranges(12.0f, 7.5f).value();
  ASSERT_TRUE(read_entity_payload(full, StatePart::full, ranges, x, z, kind));
  EXPECT_EQ(x, 3.0f);
  EXPECT_EQ(z, 7.5f);
  EXPECT_EQ(kind, demo::kKindViewer);
  // As an update the kind's bits are left over: refused.
  EXPECT_FALSE(read_entity_payload(full, StatePart::update, ranges, x, z, kind));
  EXPECT_FALSE(read_entity_payload(full.first(full.size() - 1), StatePart::full, ranges, x, z, kind));
}

}  // namespace
}  // namespace sightline::bots

namespace sightline::bots {
namespace {

// A run of `bots` that each connected for 10 s and got `ticks` tick frames of a 20 Hz server, and
// a delay sample of `delay_ms` per tick frame.
RunResult run_of(std::uint32_t bots, std::uint64_t ticks, double delay_ms) {
  RunResult result;
  result.bots.resize(bots);
  for (BotRun& run : result.bots) {
    run.outcome = Outcome::finished;
    run.connected_seconds = 10.0;
    run.tick_rate = 20;
    run.totals.ticks = ticks;
    run.totals.frames = ticks;
  }
  for (std::uint64_t i = 0; i < bots * ticks; ++i) result.delays.add(delay_ms);
  return result;
}

TEST(Verdict, PassesOnlyOnTimeAndAtTheTickRate) {
  const RunDef def;  // 95% of the tick rate, p99 under 250 ms
  EXPECT_TRUE(summarize(run_of(4, 199, 20.0), def).passed());

  RunResult slow = run_of(4, 199, 20.0);
  slow.bots[2].totals.ticks = 150;  // 15 a second of 20
  const Summary s = summarize(slow, def);
  ASSERT_FALSE(s.passed());
  ASSERT_EQ(s.verdict.size(), 1u);
  EXPECT_NE(
      s.verdict[0].find("the slowest bot received 15.00 tick frames/s, under 95% of the 20 Hz tick rate"),
      std::string::npos)
      << s.verdict[0];
  RunDef lenient;
  lenient.min_tick_share = 0.0;
  EXPECT_TRUE(summarize(slow, lenient).passed());

  const Summary late = summarize(run_of(4, 199, 300.0), def);
  ASSERT_EQ(late.verdict.size(), 1u);
  EXPECT_NE(late.verdict[0].find("delivery delay p99"), std::string::npos) << late.verdict[0];

  // None connected: the first line says why, with the first bot's error.
  RunResult refused = run_of(3, 0, 0.0);
  refused.delays = DelayHistogram{};
  for (BotRun& run : refused.bots) {
    run = BotRun{};
    run.outcome = Outcome::failed;
    run.error = "connect: Connection refused";
  }
  const Summary none = summarize(refused, def);
  ASSERT_FALSE(none.verdict.empty());
  EXPECT_EQ(none.verdict[0], "no bot ran to the end; the first: bot 0: failed: connect: Connection refused");
  EXPECT_EQ(format_table(none).find("sightline-bots: 3 bots"), 0u);
  EXPECT_NE(format_table(none).find("\n  FAIL: no bot ran to the end"), std::string::npos);
}

TEST(Verdict, DelayHistogramsMergeAsOne) {
  DelayHistogram a;
  DelayHistogram b;
  DelayHistogram both;
  for (int i = 0; i < 1000; ++i) {
    const double ms = 0.37 * i;
    (i % 3 == 0 ? a : b).add(ms);
    both.add(ms);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), both.count());
  EXPECT_EQ(a.max(), both.max());
  EXPECT_EQ(a.min(), both.min());
  for (const double q : {0.0, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a.quantile(q), both.quantile(q)) << q;
}

}  // namespace
}  // namespace sightline::bots
