// The demo's frames: every writer read back exactly, every refusal of the readers, and close
// reasons that fit a WebSocket close frame.
#include "frames.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

namespace sightline::demo {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
/// RFC 6455: a close frame's reason is at most 123 bytes.
constexpr std::size_t kMaxCloseReason = 123;

Welcome sample_welcome() {
  return {.version = kFrameVersion,
          .connection = 42,
          .width = 12.0f,
          .height = 7.5f,
          .enter_radius = 1.6f,
          .leave_radius = 2.0f,
          .cell_size = 1.6f,
          .tick_rate = 20,
          .server_flags = kServerDebugViewAllowed,
          .max_radius = 6.4f,
          .entity_count = 121};
}

TickFrame sample_tick() {
  TickFrame t;
  t.tick = 300;
  t.viewer_x = 3.25f;
  t.viewer_z = 7.0f;
  t.enter_radius = 1.6f;
  t.leave_radius = 2.0f;
  t.options = kDefaultOptions;
  t.server_time_ms = 1717171717171.625;
  t.grid_origin_x = -0.5f;
  t.grid_origin_z = 0.25f;
  t.cell_size = 1.6f;
  t.scanned = 1;
  t.scan_x0 = 1;
  t.scan_x1 = 3;
  t.scan_z0 = 2;
  t.scan_z1 = 2;
  return t;
}

Bytes tick_bytes(const TickFrame& t, const std::vector<Bytes>& packets) {
  Bytes out;
  EXPECT_TRUE(write_tick_header(out, t, packets.size()).ok());
  for (const Bytes& p : packets) EXPECT_TRUE(append_tick_packet(out, p).ok());
  return out;
}

Bytes welcome_bytes(const Welcome& w) {
  Bytes out;
  write_welcome(out, w);
  return out;
}

Bytes debug_bytes(std::uint32_t tick, const std::vector<DebugEntry>& entries, std::uint32_t members = 0) {
  Bytes out;
  write_debug_header(out, tick, members, static_cast<std::uint32_t>(entries.size()));
  for (const DebugEntry& e : entries) append_debug_entry(out, e);
  return out;
}

WhyAnswer sample_why_answer() {
  return {.tick = 300,
          .entity = {17, 3},
          .outcome = WhyOutcome::answered,
          .held = 1,
          .rule = Rule::within_leave,
          .root = {17, 3}};
}

Bytes why_answer_bytes(const WhyAnswer& a) {
  Bytes out;
  write_why_answer(out, a);
  return out;
}

void put_f32(Bytes& b, std::size_t at, float v) { std::memcpy(b.data() + at, &v, sizeof v); }
void put_f64(Bytes& b, std::size_t at, double v) { std::memcpy(b.data() + at, &v, sizeof v); }

/// A refusal fit for a close frame, naming the frame and the field.
void expect_reason(const Status& s, ErrorCode code, const std::string& frame, const std::string& field) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_LE(s.message().size(), kMaxCloseReason) << s.message();
  EXPECT_NE(s.message().find(frame), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
}

// --- Round trips ----------------------------------------------------------------------------

TEST(DemoFrames, WelcomeRoundTrips) {
  const Welcome w = sample_welcome();
  const Bytes bytes = welcome_bytes(w);
  ASSERT_EQ(bytes.size(), kWelcomeBytes);
  EXPECT_EQ(frame_type(bytes), kWelcomeFrame);
  const auto r = read_welcome(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, w);
  EXPECT_EQ(welcome_bytes(*r), bytes);
}

TEST(DemoFrames, WelcomeLayoutIsLittleEndianAtTheDocumentedOffsets) {
  const Bytes b = welcome_bytes(sample_welcome());
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 4);   // frame version
  EXPECT_EQ(b[2], 42);  // connection id, low byte first
  EXPECT_EQ(b[3], 0);
  EXPECT_EQ(b[26], 20);  // tick rate
  EXPECT_EQ(b[28], kServerDebugViewAllowed);
  EXPECT_EQ(b[33], 121);  // entity count
}

TEST(DemoFrames, TickRoundTripsWithItsServerTime) {
  const TickFrame t = sample_tick();
  const std::vector<Bytes> packets = {{1, 2, 3}, {}, Bytes(300, 0xab)};
  const Bytes bytes = tick_bytes(t, packets);
  ASSERT_EQ(bytes.size(), kTickHeaderBytes + 2 * 3 + 3 + 300);
  EXPECT_EQ(frame_type(bytes), kTickFrame);
  double stamped = 0.0;
  std::memcpy(&stamped, bytes.data() + 22, sizeof stamped);  // after the u8 options at byte 21
  EXPECT_EQ(stamped, t.server_time_ms);
  EXPECT_EQ(bytes[30], 3);  // packet count
  const auto r = read_tick(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  TickFrame want = t;
  for (const Bytes& p : packets) want.packets.emplace_back(p);
  EXPECT_EQ(*r, want);
  std::vector<Bytes> again;
  for (const auto p : r->packets) again.emplace_back(p.begin(), p.end());
  EXPECT_EQ(tick_bytes(*r, again), bytes);
}

TEST(DemoFrames, TickWithoutPacketsIsItsHeader) {
  const Bytes bytes = tick_bytes(sample_tick(), {});
  ASSERT_EQ(bytes.size(), kTickHeaderBytes);
  const auto r = read_tick(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->packets.empty());
}

TEST(DemoFrames, TickCarriesTheLargestPacket) {
  const Bytes big(65535, 7);
  const Bytes bytes = tick_bytes(sample_tick(), {big});
  const auto r = read_tick(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->packets.size(), 1u);
  EXPECT_EQ(r->packets[0].size(), big.size());
}

TEST(DemoFrames, TickWritersRefuseWhatTheirU16sCannotHold) {
  Bytes out;
  expect_reason(write_tick_header(out, sample_tick(), 65536), ErrorCode::invalid_argument, "tick",
                "packet count");
  EXPECT_TRUE(out.empty());
  expect_reason(append_tick_packet(out, Bytes(65536, 0)), ErrorCode::invalid_argument, "tick",
                "packet length");
  EXPECT_TRUE(out.empty());
}

TEST(DemoFrames, ResetRoundTrips) {
  Bytes bytes;
  write_reset(bytes, 0xdeadbeef);
  ASSERT_EQ(bytes.size(), kResetBytes);
  EXPECT_EQ(frame_type(bytes), kResetFrame);
  const auto r = read_reset(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, 0xdeadbeefu);
}

TEST(DemoFrames, BundleRoundTripsItsFramesInOrder) {
  Bytes reset;
  write_reset(reset, 7);
  Bytes tick;
  TickFrame t;
  t.tick = 8;
  ASSERT_TRUE(write_tick_header(tick, t, 0).ok());
  Bytes bundle;
  begin_bundle(bundle);
  append_to_bundle(bundle, reset);
  append_to_bundle(bundle, tick);
  ASSERT_EQ(bundle.size(), 1 + 2 * kBundleLengthBytes + kResetBytes + kTickHeaderBytes);
  EXPECT_EQ(frame_type(bundle), kBundleFrame);
  EXPECT_EQ(bundle[1], kResetBytes);  // little-endian u32 lengths before each frame
  EXPECT_EQ(bundle[1 + kBundleLengthBytes + kResetBytes], kTickHeaderBytes);
  std::vector<std::span<const std::uint8_t>> frames;
  ASSERT_TRUE(read_bundle(bundle, frames).ok());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(std::equal(frames[0].begin(), frames[0].end(), reset.begin(), reset.end()));
  EXPECT_TRUE(std::equal(frames[1].begin(), frames[1].end(), tick.begin(), tick.end()));
  EXPECT_EQ(read_reset(frames[0]).value(), 7u);
  EXPECT_EQ(read_tick(frames[1]).value().tick, 8u);
}

TEST(DemoFrames, BundlesAreRefusedWithTheirOffset) {
  Bytes reset;
  write_reset(reset, 7);
  Bytes good;
  begin_bundle(good);
  append_to_bundle(good, reset);
  const auto refusal = [](const Bytes& bytes) {
    std::vector<std::span<const std::uint8_t>> frames{std::span<const std::uint8_t>()};
    const Status s = read_bundle(bytes, frames);
    EXPECT_EQ(frames.empty(), !s.ok());  // a refusal leaves nothing half-read
    return s.ok() ? std::string("accepted") : s.message();
  };
  EXPECT_EQ(refusal({kBundleFrame}), "bundle frame holds no frame");
  EXPECT_EQ(refusal({kResetFrame}), "bundle frame: type at byte 0 is 3, expected 7");
  EXPECT_EQ(refusal({kBundleFrame, 0, 0, 0, 0, kResetFrame}),
            "bundle frame: length at byte 1 is 0: a frame has a type byte");
  Bytes short_one = good;
  short_one.pop_back();
  EXPECT_EQ(refusal(short_one), "bundle frame: length at byte 1 is 5: 4 bytes follow");
  Bytes two = good;
  two.push_back(1);
  EXPECT_EQ(refusal(two), "bundle frame: length at byte 10 ends before it");
  Bytes nested = good;
  nested.insert(nested.end(), {static_cast<std::uint8_t>(good.size()), 0, 0, 0});
  nested.insert(nested.end(), good.begin(), good.end());
  EXPECT_EQ(refusal(nested), "bundle frame: frame at byte 14 is a bundle: bundles do not nest");
  EXPECT_EQ(refusal(good), "accepted");
}

TEST(DemoFrames, DebugRoundTrips) {
  const std::vector<DebugEntry> entries = {{4, 1.5f, 2.5f}, {0xffffffffu, 0.0f, 7.5f}, {9, 11.99f, 0.001f}};
  const Bytes bytes = debug_bytes(77, entries, 41);
  ASSERT_EQ(bytes.size(), kDebugHeaderBytes + entries.size() * kDebugEntryBytes);
  std::uint32_t tick = 0;
  std::uint32_t members = 0;
  const auto r = read_debug(bytes, &tick, &members);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(tick, 77u);
  EXPECT_EQ(members, 41u);
  EXPECT_EQ(*r, entries);
  EXPECT_EQ(debug_bytes(tick, *r, members), bytes);
  const auto empty = read_debug(debug_bytes(3, {}), nullptr);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty->empty());
}

TEST(DemoFrames, ClientFramesRoundTrip) {
  const ClientLimits limits{.debug_view_allowed = true};
  const Bytes move = encode_move(3.5f, 7.25f);
  ASSERT_EQ(move.size(), kMoveBytes);
  auto m = read_client_frame(move, limits);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, (ClientFrame{.type = kMoveFrame, .x = 3.5f, .z = 7.25f, .options = 0, .enter_radius = 0.0f}));
  EXPECT_EQ(encode_move(m->x, m->z), move);

  for (std::uint8_t flags = 0; flags <= kOptionBits; ++flags) {
    const Bytes options = encode_options(flags);
    ASSERT_EQ(options.size(), kOptionsBytes);
    const auto o = read_client_frame(options, limits);
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(*o, (ClientFrame{.type = kOptionsFrame, .options = flags, .enter_radius = 0.0f}));
    EXPECT_EQ(encode_options(o->options), options);
  }

  const Bytes radius = encode_radius(2.5f);
  ASSERT_EQ(radius.size(), kRadiusBytes);
  const auto r = read_client_frame(radius, limits);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (ClientFrame{.type = kRadiusFrame, .enter_radius = 2.5f}));
  EXPECT_EQ(encode_radius(r->enter_radius), radius);
}

TEST(DemoFrames, AckFramesCarryTheLibrarysAck) {
  const AckPacket ack{.latest_sequence = 70000, .reliable_applied = 12, .received = 0x80000001u};
  const Bytes frame = encode_ack(0x01020304u, ack);
  ASSERT_EQ(frame.size(), kAckFrameBytes);
  EXPECT_EQ(frame_type(frame), kAckFrame);
  EXPECT_EQ(frame[1], 4);  // the stream, low byte first
  const auto read = read_ack(frame);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->stream, 0x01020304u);
  EXPECT_EQ(read->packet.data(), frame.data() + 5);
  const auto decoded = decode_ack(read->packet);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, ack);

  const ClientLimits limits;
  expect_reason(read_client_frame(frame, limits).status(), ErrorCode::invalid_argument, "ack", "read_ack");
  Bytes longer = frame;
  longer.push_back(0);
  EXPECT_EQ(read_ack(longer).status().message(), "ack frame is 20 bytes, expected 19");
  EXPECT_EQ(read_ack(Bytes(frame.begin(), frame.end() - 1)).status().message(),
            "ack frame is 18 bytes, expected 19");
  EXPECT_EQ(read_ack(encode_move(1.0f, 1.0f)).status().message(), "frame type 1 is not ack (5)");
  EXPECT_EQ(read_ack(Bytes{}).status().message(), "empty frame: no type byte");
}

TEST(DemoFrames, WhyQuestionAndAnswerRoundTrip) {
  const ClientLimits limits{.debug_view_allowed = true};
  for (const EntityId asked : {EntityId{17, 3}, EntityId{5, 0}, EntityId{0xffffffffu, 0xffffffffu}}) {
    const Bytes frame = encode_why(asked);
    ASSERT_EQ(frame.size(), kWhyBytes);
    EXPECT_EQ(frame_type(frame), kWhyFrame);
    const auto read = read_why(frame, limits);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, asked);
    EXPECT_EQ(encode_why(*read), frame);
  }
  EXPECT_EQ(encode_why({0x04030201u, 0x08070605u}), (Bytes{kWhyFrame, 1, 2, 3, 4, 5, 6, 7, 8}));

  const WhyAnswer stale{
      .tick = 9, .entity = {5, 0}, .outcome = WhyOutcome::stale, .held = 0, .rule = Rule::viewer, .root = {}};
  for (const WhyAnswer& a : {sample_why_answer(), stale}) {
    const Bytes bytes = why_answer_bytes(a);
    ASSERT_EQ(bytes.size(), kWhyAnswerBytes);
    EXPECT_EQ(frame_type(bytes), kWhyAnswerFrame);
    const auto read = read_why_answer(bytes);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, a);
    EXPECT_EQ(why_answer_bytes(*read), bytes);
  }
  // The documented offsets: tick 1, entity 5 and 9, answer 13, held 14, rule 15, root 16 and 20.
  const Bytes b = why_answer_bytes(sample_why_answer());
  EXPECT_EQ(b[1], 44);  // 300, low byte first
  EXPECT_EQ(b[2], 1);
  EXPECT_EQ(b[5], 17);
  EXPECT_EQ(b[9], 3);
  EXPECT_EQ(b[13], 0);
  EXPECT_EQ(b[14], 1);
  EXPECT_EQ(b[15], static_cast<std::uint8_t>(Rule::within_leave));
  EXPECT_EQ(b[16], 17);
  EXPECT_EQ(b[20], 3);
}

TEST(DemoFrames, WhyIsRefusedWithoutTheDebugViewOrAtAnotherSize) {
  const ClientLimits with{.debug_view_allowed = true};
  const ClientLimits without{.debug_view_allowed = false};
  expect_reason(read_why(encode_why({1, 1}), without).status(), ErrorCode::invalid_argument, "why frame",
                "--debug-view");
  for (std::size_t size = 1; size <= 64; ++size) {
    if (size == kWhyBytes) continue;
    Bytes frame = encode_why({1, 1});
    frame.resize(size, 0);
    expect_reason(read_why(frame, with).status(), ErrorCode::invalid_argument, "why frame",
                  std::to_string(size) + " bytes");
  }
  expect_reason(read_why({}, with).status(), ErrorCode::invalid_argument, "empty frame", "type");
  expect_reason(read_why(encode_move(1.0f, 1.0f), with).status(), ErrorCode::invalid_argument, "frame type 1",
                "why");
  // A question is not an input: read_client_frame sends it to read_why.
  expect_reason(read_client_frame(encode_why({1, 1}), with).status(), ErrorCode::invalid_argument,
                "frame type 4", "read_why");
}

TEST(DemoFrames, WhyAnswerFieldsAreChecked) {
  const auto refused = [](const WhyAnswer& a, const char* field) {
    expect_reason(read_why_answer(why_answer_bytes(a)).status(), ErrorCode::malformed_packet, "why_answer",
                  field);
  };
  WhyAnswer a = sample_why_answer();
  a.outcome = static_cast<WhyOutcome>(2);
  refused(a, "answer at byte 13");
  a = sample_why_answer();
  a.held = 2;
  refused(a, "held at byte 14");
  a = sample_why_answer();
  a.rule = static_cast<Rule>(14);
  refused(a, "rule at byte 15");
  a = sample_why_answer();
  a.entity.generation = 0;
  refused(a, "entity generation at byte 9");
  a = sample_why_answer();
  a.root.generation = 0;
  refused(a, "root generation at byte 20");
  const WhyAnswer stale{
      .tick = 9, .entity = {5, 0}, .outcome = WhyOutcome::stale, .held = 0, .rule = Rule::viewer, .root = {}};
  a = stale;
  a.held = 1;
  refused(a, "held");
  a = stale;
  a.rule = Rule::near;
  refused(a, "rule");
  a = stale;
  a.root = {5, 1};
  refused(a, "root index");
  // Every rule of relevance.h, held or not, reads back.
  for (std::uint8_t rule = 0; rule <= static_cast<std::uint8_t>(Rule::crowded); ++rule) {
    a = sample_why_answer();
    a.rule = static_cast<Rule>(rule);
    EXPECT_TRUE(read_why_answer(why_answer_bytes(a)).ok()) << rule_name(a.rule);
  }
}

TEST(DemoFrames, ClientFramesAtTheirBoundsAreAccepted) {
  const ClientLimits limits;
  for (const auto& [x, z] : {std::pair{0.0f, 0.0f}, {limits.width, limits.height}, {0.0f, limits.height}}) {
    EXPECT_TRUE(read_client_frame(encode_move(x, z), limits).ok()) << x << ", " << z;
  }
  EXPECT_TRUE(read_client_frame(encode_radius(limits.min_radius), limits).ok());
  EXPECT_TRUE(read_client_frame(encode_radius(limits.max_radius), limits).ok());
}

// --- Client frame refusals ----------------------------------------------------------------

TEST(DemoFrames, ClientRefusesEmptyAndUnknownFrames) {
  const ClientLimits limits;
  EXPECT_EQ(frame_type({}), 0);
  expect_reason(read_client_frame({}, limits).status(), ErrorCode::invalid_argument, "frame", "type");
  for (const int type : {0, 4, 9, 255}) {
    const Bytes frame = {static_cast<std::uint8_t>(type), 0, 0, 0, 0};
    const Status s = read_client_frame(frame, limits).status();
    expect_reason(s, ErrorCode::invalid_argument, "frame type", std::to_string(type));
  }
}

TEST(DemoFrames, ClientRefusesEverySizeButTheTypes) {
  const ClientLimits limits;
  const std::pair<Bytes, const char*> frames[] = {
      {encode_move(1.0f, 1.0f), "move"}, {encode_options(3), "options"}, {encode_radius(1.0f), "radius"}};
  for (const auto& [good, name] : frames) {
    for (std::size_t size = 1; size <= 64; ++size) {
      if (size == good.size()) continue;
      Bytes frame = good;
      frame.resize(size, 0);
      const Status s = read_client_frame(frame, limits).status();
      expect_reason(s, ErrorCode::invalid_argument, std::string(name) + " frame",
                    std::to_string(size) + " bytes");
    }
  }
}

TEST(DemoFrames, ClientRefusesMovesThatAreNotFiniteOrOutsideTheWorld) {
  const ClientLimits limits;
  for (const float bad : {kNaN, kInf, -kInf, -0.001f, 12.001f, -3.4028235e38f, 3.4028235e38f}) {
    expect_reason(read_client_frame(encode_move(bad, 1.0f), limits).status(), ErrorCode::invalid_argument,
                  "move", "x is");
  }
  for (const float bad : {kNaN, kInf, -kInf, -1e-7f, 7.5001f}) {
    expect_reason(read_client_frame(encode_move(1.0f, bad), limits).status(), ErrorCode::invalid_argument,
                  "move", "z is");
  }
  // z inside the width but beyond the height: each axis has its own bound.
  expect_reason(read_client_frame(encode_move(1.0f, 10.0f), limits).status(), ErrorCode::invalid_argument,
                "move", "z is 10");
}

TEST(DemoFrames, ClientRefusesUnknownOptionBits) {
  const ClientLimits limits{.debug_view_allowed = true};
  for (int flags = 8; flags < 256; ++flags) {
    const Status s = read_client_frame(encode_options(static_cast<std::uint8_t>(flags)), limits).status();
    expect_reason(s, ErrorCode::invalid_argument, "options", "flags");
  }
}

TEST(DemoFrames, ClientRefusesDebugViewOnAServerWithoutIt) {
  const ClientLimits without{.debug_view_allowed = false};
  for (const std::uint8_t flags :
       {kOptionDebug, kOptionBits, static_cast<std::uint8_t>(kOptionDebug | kOptionInterest)}) {
    const Status s = read_client_frame(encode_options(flags), without).status();
    expect_reason(s, ErrorCode::invalid_argument, "options", "debug view");
  }
  EXPECT_TRUE(read_client_frame(encode_options(kDefaultOptions), without).ok());
  EXPECT_TRUE(read_client_frame(encode_options(kOptionDebug), ClientLimits{.debug_view_allowed = true}).ok());
}

TEST(DemoFrames, ClientRefusesRadiiOutOfBounds) {
  const ClientLimits limits;
  for (const float bad : {0.0f, 0.39f, -1.0f, 6.41f, 100.0f, kNaN, kInf, -kInf}) {
    expect_reason(read_client_frame(encode_radius(bad), limits).status(), ErrorCode::invalid_argument,
                  "radius", "enter radius");
  }
}

TEST(DemoFrames, ClientReasonsFitACloseFrameWhateverTheLimits) {
  const float extreme = -3.4028235e38f;
  const ClientLimits limits{.width = 1.17549435e-38f,
                            .height = 1.17549435e-38f,
                            .min_radius = 1.17549435e-38f,
                            .max_radius = 1.17549435e-38f,
                            .debug_view_allowed = false};
  const Bytes frames[] = {encode_move(extreme, extreme), encode_move(0.0f, extreme),   encode_radius(extreme),
                          encode_options(0xff),          encode_options(kOptionDebug), Bytes(64, kMoveFrame),
                          Bytes(64, kOptionsFrame),      Bytes(64, kRadiusFrame),      Bytes{200}};
  for (const Bytes& f : frames) {
    const Status s = read_client_frame(f, limits).status();
    ASSERT_FALSE(s.ok());
    EXPECT_LE(s.message().size(), kMaxCloseReason) << s.message();
  }
}

// --- Server frame refusals ----------------------------------------------------------------

/// Every prefix of `good` and `good` with one byte more are refused as malformed, naming `frame`.
void expect_exact_extent(const Bytes& good, const std::string& frame) {
  for (std::size_t size = 0; size < good.size(); ++size) {
    const Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size));
    Status s;
    if (frame == "welcome") s = read_welcome(cut).status();
    if (frame == "tick") s = read_tick(cut).status();
    if (frame == "reset") s = read_reset(cut).status();
    if (frame == "debug") s = read_debug(cut, nullptr).status();
    if (frame == "why_answer") s = read_why_answer(cut).status();
    expect_reason(s, ErrorCode::malformed_packet, frame, "");
  }
  Bytes longer = good;
  longer.push_back(0);
  Status s;
  if (frame == "welcome") s = read_welcome(longer).status();
  if (frame == "tick") s = read_tick(longer).status();
  if (frame == "reset") s = read_reset(longer).status();
  if (frame == "debug") s = read_debug(longer, nullptr).status();
  if (frame == "why_answer") s = read_why_answer(longer).status();
  expect_reason(s, ErrorCode::malformed_packet, frame, "bytes");
}

TEST(DemoFrames, TruncatedAndOversizedServerFramesAreRefused) {
  expect_exact_extent(welcome_bytes(sample_welcome()), "welcome");
  expect_exact_extent(tick_bytes(sample_tick(), {{1, 2, 3}, {4}}), "tick");
  expect_exact_extent(tick_bytes(sample_tick(), {}), "tick");
  Bytes reset;
  write_reset(reset, 5);
  expect_exact_extent(reset, "reset");
  expect_exact_extent(debug_bytes(5, {{4, 1.5f, 2.5f}, {5, 2.0f, 3.0f}}), "debug");
  expect_exact_extent(why_answer_bytes(sample_why_answer()), "why_answer");
}

TEST(DemoFrames, ServerFramesOfAnotherTypeAreRefused) {
  Bytes reset;
  write_reset(reset, 5);
  expect_reason(read_welcome(reset).status(), ErrorCode::malformed_packet, "welcome", "type");
  expect_reason(read_tick(reset).status(), ErrorCode::malformed_packet, "tick", "type");
  expect_reason(read_debug(reset, nullptr).status(), ErrorCode::malformed_packet, "debug", "type");
  expect_reason(read_why_answer(reset).status(), ErrorCode::malformed_packet, "why_answer", "type");
  Bytes tick = tick_bytes(sample_tick(), {});
  tick.resize(kResetBytes);
  expect_reason(read_reset(tick).status(), ErrorCode::malformed_packet, "reset", "type");
}

TEST(DemoFrames, WelcomeFieldsAreChecked) {
  const auto refused = [](const Bytes& b, const char* field) {
    expect_reason(read_welcome(b).status(), ErrorCode::malformed_packet, "welcome", field);
  };
  Bytes b = welcome_bytes(sample_welcome());
  b[1] = 1;
  refused(b, "frame version");
  const std::pair<std::size_t, const char*> floats[] = {{6, "world width"},   {10, "world height"},
                                                        {14, "enter radius"}, {18, "leave radius"},
                                                        {22, "cell size"},    {29, "largest radius"}};
  for (const auto& [at, field] : floats) {
    for (const float bad : {kNaN, kInf, -kInf}) {
      b = welcome_bytes(sample_welcome());
      put_f32(b, at, bad);
      refused(b, field);
    }
  }
  Welcome w = sample_welcome();
  w.width = 0.0f;
  refused(welcome_bytes(w), "world width");
  w = sample_welcome();
  w.enter_radius = -1.0f;
  refused(welcome_bytes(w), "enter radius");
  w = sample_welcome();
  w.leave_radius = 1.0f;
  refused(welcome_bytes(w), "leave radius");
  w = sample_welcome();
  w.cell_size = 0.0f;
  refused(welcome_bytes(w), "cell size");
  w = sample_welcome();
  w.tick_rate = 0;
  refused(welcome_bytes(w), "tick rate");
  w = sample_welcome();
  w.server_flags = 4;
  refused(welcome_bytes(w), "server flags");
  w = sample_welcome();
  w.server_flags = kServerDebugViewAllowed | kServerUnreliable;
  EXPECT_TRUE(read_welcome(welcome_bytes(w)).ok());
  w = sample_welcome();
  w.max_radius = 1.0f;
  refused(welcome_bytes(w), "largest radius");
}

TEST(DemoFrames, TickFieldsAreChecked) {
  const auto refused = [](const Bytes& b, const char* field) {
    expect_reason(read_tick(b).status(), ErrorCode::malformed_packet, "tick", field);
  };
  const std::pair<std::size_t, const char*> floats[] = {
      {5, "viewer x"}, {9, "viewer z"}, {13, "enter radius"}, {17, "leave radius"}};
  for (const auto& [at, field] : floats) {
    for (const float bad : {kNaN, kInf, -kInf}) {
      Bytes b = tick_bytes(sample_tick(), {});
      put_f32(b, at, bad);
      refused(b, field);
    }
  }
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Bytes b = tick_bytes(sample_tick(), {});
    put_f64(b, 22, bad);
    refused(b, "server time");
  }
  TickFrame t = sample_tick();
  t.options = 8;
  refused(tick_bytes(t, {}), "options");
  // A packet count beyond the bytes that follow, and a packet length beyond them.
  Bytes b = tick_bytes(sample_tick(), {{1, 2}});
  b[30] = 2;
  refused(b, "packet length");
  b = tick_bytes(sample_tick(), {{1, 2}});
  b[61] = 3;
  refused(b, "packet");
  // The grid and the scanned cells: finite, a positive cell, a flag of 0 or 1, a non-empty range,
  // no cells without the flag.
  for (const auto& [at, field] :
       {std::pair<std::size_t, const char*>{32, "grid origin x"}, {36, "grid origin z"}}) {
    b = tick_bytes(sample_tick(), {});
    put_f32(b, at, kNaN);
    refused(b, field);
  }
  t = sample_tick();
  t.cell_size = 0.0f;
  refused(tick_bytes(t, {}), "cell size");
  t = sample_tick();
  t.scanned = 2;
  refused(tick_bytes(t, {}), "scanned");
  t = sample_tick();
  t.scan_x0 = 4;
  refused(tick_bytes(t, {}), "scan z1");
  t = sample_tick();
  t.scanned = 0;
  refused(tick_bytes(t, {}), "scan z1");
  t.scan_x0 = t.scan_x1 = t.scan_z0 = t.scan_z1 = 0;
  EXPECT_TRUE(read_tick(tick_bytes(t, {})).ok());
}

TEST(DemoFrames, DebugFieldsAreChecked) {
  Bytes b = debug_bytes(5, {{4, 1.5f, 2.5f}});
  b[9] = 0xff;
  b[10] = 0xff;
  b[11] = 0xff;
  b[12] = 0xff;  // count 2^32 - 1 with one entry's bytes
  expect_reason(read_debug(b, nullptr).status(), ErrorCode::malformed_packet, "debug", "count");
  for (const auto& [at, field] : {std::pair<std::size_t, const char*>{17, "x"}, {21, "z"}}) {
    b = debug_bytes(5, {{4, 1.5f, 2.5f}});
    put_f32(b, at, kNaN);
    std::uint32_t tick = 99;
    expect_reason(read_debug(b, &tick).status(), ErrorCode::malformed_packet, "debug", field);
    EXPECT_EQ(tick, 99u);  // untouched on refusal
  }
}

}  // namespace
}  // namespace sightline::demo
