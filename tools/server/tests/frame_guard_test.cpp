// FrameGuard: the server's check of every client frame header. Each refusal by its own case; a
// stream read in any split gives what it gives read whole.
#include "frame_guard.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "client_frames.h"

namespace sightline::demo {
namespace {

using test::client_frame;
using test::ClientFrame;
using test::close_payload;
using Bytes = std::vector<std::uint8_t>;
using namespace std::chrono_literals;

constexpr std::uint32_t kRate = 60;

Bytes long_form(Bytes payload) {
  ClientFrame f = test::odd_frame(0x2, std::move(payload));
  f.length_form = 127;
  return client_frame(f);
}

Bytes top_bit_length() {
  ClientFrame f = test::odd_frame(0x2, {1});
  f.length_form = 127;
  f.length_top = 0x80;
  return client_frame(f);
}

Bytes unmasked() {
  ClientFrame f = test::odd_frame(0x2, {1});
  f.masked = false;
  return client_frame(f);
}

Bytes reserved_bit() {
  ClientFrame f = test::odd_frame(0x2, {1});
  f.reserved_bits = 0x40;
  return client_frame(f);
}

Bytes concat(const std::vector<Bytes>& frames) {
  Bytes all;
  for (const Bytes& f : frames) all.insert(all.end(), f.begin(), f.end());
  return all;
}

// Every byte of the stream, one call each, at one instant.
std::optional<FrameRefusal> read_bytewise(FrameGuard& guard, const Bytes& stream,
                                          FrameGuard::Clock::time_point t) {
  for (const std::uint8_t b : stream) {
    if (auto r = guard.read(std::span<const std::uint8_t>(&b, 1), t)) return r;
  }
  return std::nullopt;
}

std::optional<FrameRefusal> refusal_of(const Bytes& stream) {
  FrameGuard guard(kRate, FrameGuard::Clock::now());
  return guard.read(stream, FrameGuard::Clock::now());
}

TEST(FrameGuard, ReadsLegalFramesOfEveryKindInAnySplit) {
  const Bytes stream = concat({
      client_frame(0x2, {1, 2, 3}), client_frame(0x9, {7}),  // ping
      client_frame(0xA),                                     // pong
      client_frame(0x2, {1}, false),                         // a message in three frames
      client_frame(0x0, {}, false),                          // an empty continuation
      client_frame(0x9),                                     // a ping between them
      client_frame(0x0, {2}),                                // its end
      client_frame(0x2, Bytes(300, 5)),                      // 16-bit length
      long_form(Bytes(20, 6)),                               // 64-bit length
      client_frame(0x8, close_payload(1000, "bye")),         // close
  });
  const auto t = FrameGuard::Clock::now();
  FrameGuard whole(kRate, t);
  EXPECT_FALSE(whole.read(stream, t));
  EXPECT_EQ(whole.frames(), 10u);
  FrameGuard bytewise(kRate, t);
  EXPECT_FALSE(read_bytewise(bytewise, stream, t));
  EXPECT_EQ(bytewise.frames(), 10u);
}

TEST(FrameGuard, RefusesWhatRfc6455Forbids) {
  struct Case {
    const char* name;
    Bytes stream;
    std::uint16_t code;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"top bit of a 64-bit length", top_bit_length(), 1002, "64-bit payload length has its top bit set"},
      {"unmasked", unmasked(), 1002, "client frame not masked"},
      {"reserved bit", reserved_bit(), 1002, "reserved bits set"},
      {"opcode 3", client_frame(0x3), 1002, "opcode 3 is reserved"},
      {"opcode 11", client_frame(0xB), 1002, "opcode 11 is reserved"},
      {"fragmented ping", client_frame(0x9, {}, false), 1002, "control frame fragmented"},
      {"126-byte ping", client_frame(0x9, Bytes(126, 0)), 1002, "control frame of 126 bytes (at most 125)"},
      {"close of 1 byte", client_frame(0x8, {3}), 1002, "close frame of 1 byte"},
      {"close code 5000", client_frame(0x8, close_payload(5000)), 1002, "close code 5000 may not be sent"},
      {"close code 1005", client_frame(0x8, close_payload(1005)), 1002, "close code 1005 may not be sent"},
      {"close code 999", client_frame(0x8, close_payload(999)), 1002, "close code 999 may not be sent"},
      {"continuation first", client_frame(0x0, {1}), 1002, "continuation frame with no message begun"},
      {"message inside a message", concat({client_frame(0x2, {1}, false), client_frame(0x2, {2})}), 1002,
       "new message inside a fragmented one"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = refusal_of(c.stream);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->code, c.code);
    EXPECT_NE(r->reason.find(c.reason), std::string::npos) << r->reason;
    EXPECT_LE(r->reason.size(), 123u);
    EXPECT_STREQ(r->kind, "bad frame");
  }
  // Every code a peer may send passes.
  for (const int code : {1000, 1001, 1002, 1003, 1007, 1008, 1011, 1013, 3000, 4999}) {
    EXPECT_FALSE(refusal_of(client_frame(0x8, close_payload(static_cast<std::uint16_t>(code))))) << code;
  }
}

TEST(FrameGuard, MetersEveryFrameWithOneBucket) {
  const auto t = FrameGuard::Clock::now();
  // Pings, pongs and empty continuations cost a token each, as data frames do.
  for (const int op : {0x9, 0xA, 0x2}) {
    const auto opcode = static_cast<std::uint8_t>(op);
    FrameGuard guard(kRate, t);
    Bytes one = client_frame(opcode);
    for (std::uint32_t i = 0; i < kRate; ++i) ASSERT_FALSE(guard.read(one, t)) << i;
    const auto r = guard.read(one, t);
    ASSERT_TRUE(r) << int{opcode};
    EXPECT_EQ(r->code, 1008);
    EXPECT_EQ(r->reason, "too many frames");
    EXPECT_STREQ(r->kind, "too many frames");
    // Refused once, the guard reads nothing more.
    EXPECT_TRUE(guard.read(client_frame(0x2), t + 1h));
  }
  // Refilled over time: one frame every 1/60 s goes on for ever.
  FrameGuard steady(kRate, t);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(steady.read(client_frame(0x9), t + i * 17ms)) << i;
}

TEST(FrameGuard, EndsAMessageOfEndlessContinuations) {
  const auto t = FrameGuard::Clock::now();
  FrameGuard guard(10000, t);
  ASSERT_FALSE(guard.read(client_frame(0x2, {1}, false), t));
  for (std::uint32_t i = 1; i < kMaxFramesPerMessage; ++i)
    ASSERT_FALSE(guard.read(client_frame(0x0, {}, false), t)) << i;
  const auto r = guard.read(client_frame(0x0, {}, false), t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 1008);
  EXPECT_EQ(r->reason, "message in more than 8 frames");
  // A message of exactly that many frames is fine, and the count starts again after it.
  FrameGuard fine(10000, t);
  for (int m = 0; m < 3; ++m) {
    ASSERT_FALSE(fine.read(client_frame(0x2, {}, false), t));
    for (std::uint32_t i = 2; i < kMaxFramesPerMessage; ++i)
      ASSERT_FALSE(fine.read(client_frame(0x0, {}, false), t));
    ASSERT_FALSE(fine.read(client_frame(0x0), t));
  }
}

// Seeded random streams of legal and illegal frames: any split into pieces gives the same
// refusal (or none) and the same frame count as the stream read whole.
TEST(FrameGuard, AnySplitReadsAsTheWhole) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    Bytes stream;
    const int frames = 1 + static_cast<int>(rng() % 12);
    for (int f = 0; f < frames; ++f) {
      ClientFrame frame;
      const std::uint8_t opcodes[] = {0x0, 0x1, 0x2, 0x8, 0x9, 0xA, 0x3};
      frame.opcode = opcodes[rng() % 7];
      frame.fin = rng() % 4 != 0;
      frame.payload.assign(rng() % 3 == 0 ? rng() % 200 : rng() % 4, static_cast<std::uint8_t>(rng()));
      if (frame.opcode == 0x8 && frame.payload.size() >= 2 && rng() % 2 == 0) {
        frame.payload[0] = static_cast<std::uint8_t>(0x03 + rng() % 0x18);
      }
      frame.length_form = rng() % 5 == 0 ? 127 : 0;
      frame.length_top = rng() % 20 == 0 ? 0x80 : 0;
      frame.masked = rng() % 30 != 0;
      const Bytes bytes = client_frame(frame);
      stream.insert(stream.end(), bytes.begin(), bytes.end());
    }
    const auto t = FrameGuard::Clock::now();
    FrameGuard whole(kRate, t);
    const auto expected = whole.read(stream, t);
    FrameGuard pieces(kRate, t);
    std::optional<FrameRefusal> got;
    for (std::size_t at = 0; at < stream.size() && !got;) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 9, stream.size() - at);
      got = pieces.read(std::span<const std::uint8_t>(stream.data() + at, n), t);
      at += n;
    }
    ASSERT_EQ(got.has_value(), expected.has_value()) << round;
    if (got) {
      EXPECT_EQ(got->reason, expected->reason) << round;
    }
    EXPECT_EQ(pieces.frames(), whole.frames()) << round;
  }
}

}  // namespace
}  // namespace sightline::demo
