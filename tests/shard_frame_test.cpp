// The shard frame codec (SLF1): random frames of every record kind encode and decode back to the
// same records and the same bytes; every cut and every changed byte of a frame is refused, with
// nothing kept; bad fields are refused by the encoder and, forged, by the decoder, each naming
// its offset or record and field.
#include "sightline/shard_frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "rng.h"
#include "shard_frame_samples.h"

namespace sightline::testing {
namespace {

bool same_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

bool same(const EntityImage& a, const EntityImage& b) {
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  return a.id == b.id && a.owner == b.owner && a.owner_epoch == b.owner_epoch &&
         a.always_relevant == b.always_relevant && a.presenter == b.presenter &&
         a.teleported == b.teleported && bits(a.x) == bits(b.x) && bits(a.z) == bits(b.z) &&
         bits(a.vx) == bits(b.vx) && bits(a.vz) == bits(b.vz) &&
         bits(a.bound_radius) == bits(b.bound_radius) && bits(a.radius_scale) == bits(b.radius_scale) &&
         a.key == b.key && a.space == b.space && a.parent == b.parent && a.owner_client == b.owner_client &&
         a.full_revision == b.full_revision && a.has_full == b.has_full && same_bytes(a.full, b.full) &&
         same_bytes(a.update, b.update) && same_bytes(a.blob, b.blob);
}

bool same(const ShardFrame& a, const ShardFrame& b) {
  if (!(a.header == b.header && a.order == b.order && a.ghost_outs == b.ghost_outs &&
        a.entity_handovers == b.entity_handovers && a.events == b.events &&
        a.holder_counts == b.holder_counts && a.images.size() == b.images.size() &&
        a.client_handovers.size() == b.client_handovers.size()))
    return false;
  for (std::size_t i = 0; i < a.images.size(); ++i) {
    if (!same(a.images[i], b.images[i])) return false;
  }
  for (std::size_t i = 0; i < a.client_handovers.size(); ++i) {
    const ClientHandover& x = a.client_handovers[i];
    const ClientHandover& y = b.client_handovers[i];
    if (!(x.client == y.client && x.to == y.to && x.last_input_seq == y.last_input_seq &&
          x.world == y.world && same_bytes(x.replicator, y.replicator)))
      return false;
  }
  return true;
}

bool mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(ShardFrame, RandomFramesComeBackAsTheyWentAndInTheOneEncoding) {
  std::uint64_t records = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    scenarios::Rng rng(seed);
    std::deque<std::vector<std::uint8_t>> storage;
    const ShardFrame frame = random_shard_frame(rng, storage);
    std::vector<std::uint8_t> bytes;
    ASSERT_TRUE(encode_shard_frame(frame, bytes).ok()) << "seed " << seed;
    ShardFrame back;
    const Status decoded = decode_shard_frame(bytes, back);
    ASSERT_TRUE(decoded.ok()) << "seed " << seed << ": " << decoded.message();
    ASSERT_TRUE(same(frame, back)) << "seed " << seed;
    std::vector<std::uint8_t> again;
    ASSERT_TRUE(encode_shard_frame(back, again).ok());
    ASSERT_EQ(again, bytes) << "seed " << seed;
    records += frame.order.size();
  }
  EXPECT_GT(records, 1500u);
}

TEST(ShardFrame, EveryCutAndEveryChangedByteIsRefusedKeepingNothing) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    scenarios::Rng rng(seed);
    std::deque<std::vector<std::uint8_t>> storage;
    std::vector<std::uint8_t> bytes;
    ASSERT_TRUE(encode_shard_frame(random_shard_frame(rng, storage), bytes).ok());
    ShardFrame out;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const Status s = decode_shard_frame(std::span(bytes).first(n), out);
      ASSERT_FALSE(s.ok()) << "a cut at " << n;
      ASSERT_EQ(s.code(), ErrorCode::malformed_packet);
      ASSERT_TRUE(mentions(s, "shard frame byte ")) << s.message();
      ASSERT_TRUE(out.order.empty() && out.images.empty() && out.client_handovers.empty());
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::vector<std::uint8_t> changed = bytes;
      changed[i] ^= static_cast<std::uint8_t>(1u << rng.below(8));
      ASSERT_FALSE(decode_shard_frame(changed, out).ok()) << "byte " << i << " changed";
      ASSERT_TRUE(out.order.empty());
    }
    std::vector<std::uint8_t> longer = bytes;
    longer.push_back(0);
    const Status s = decode_shard_frame(longer, out);
    ASSERT_TRUE(mentions(s, "1 bytes after the end record")) << s.message();
  }
}

// A frame with the given record bytes after a plain header, and a correct end record: for
// forging fields the encoder refuses to write.
std::vector<std::uint8_t> forged(std::vector<std::uint8_t> records, std::uint64_t count) {
  std::vector<std::uint8_t> b = {kShardFrameVersion, 0, 3, 4, 10, 1, 0};
  b.insert(b.end(), records.begin(), records.end());
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint8_t v : b) h = (h ^ v) * 0x100000001b3ull;
  b.push_back(0xff);
  b.push_back(static_cast<std::uint8_t>(count));
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(h >> (8 * i)));
  return b;
}

TEST(ShardFrame, ForgedFieldsAreRefusedNamingTheOffsetAndField) {
  ShardFrame out;
  EXPECT_TRUE(decode_shard_frame(forged({}, 0), out).ok());
  EXPECT_EQ(out.header.from, 3);
  const auto refused = [&](const std::vector<std::uint8_t>& bytes, const std::string& names) {
    const Status s = decode_shard_frame(bytes, out);
    EXPECT_FALSE(s.ok()) << names;
    EXPECT_TRUE(mentions(s, names)) << s.message();
  };
  std::vector<std::uint8_t> b = forged({}, 0);
  b[0] = 2;
  refused(b, "shard frame byte 0: version is 2");
  refused(forged({}, 1), "the end record counts 1 records, the frame holds 0");
  refused(forged({2, 0x85, 0x00, 0}, 1),
          "shard frame byte 8: id: a varint in a longer form");  // 5 as two bytes
  refused(forged({2, 5, 3}, 1), "shard frame byte 7: ghost_out reason is 3");
  refused(forged({2, 0, 0}, 1), "ghost_out id is 0");
  refused(forged({9}, 1), "shard frame byte 7: record type is 9: unknown");
  refused(forged({6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1}, 1),
          "shard frame byte 8: id: a varint beyond 64 bits");
  refused(forged({6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1}, 1),
          "id: a varint beyond 64 bits");
  EXPECT_TRUE(
      decode_shard_frame(forged({6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1}, 1), out)
          .ok());
  EXPECT_EQ(out.holder_counts.at(0).id, ~0ull);
  refused(forged({6, 5, 0x80, 0x80, 0x80, 0x80, 0x10}, 1), "count is 4294967296: at most 32 bits");
  refused(forged({3, 5, 0x80, 0x40, 1}, 1), "to is 8192: must be < kMaxShards");
  // A list whose count the bytes cannot hold.
  refused(forged({4, 5, 1, 0, 6, 0xff, 0xff, 0x03}, 1), "members is 65535, more than the");
  b = forged({}, 0);
  b[1] = 7;
  refused(b, "shard frame byte 1: kind is 7");
}

TEST(ShardFrame, TheEncoderRefusesWhatTheDecoderWouldNamingTheRecord) {
  const auto refused = [](const ShardFrame& f, const std::string& names) {
    std::vector<std::uint8_t> out = {1, 2, 3};
    const Status s = encode_shard_frame(f, out);
    EXPECT_FALSE(s.ok()) << names;
    EXPECT_EQ(s.code(), ErrorCode::invalid_argument);
    EXPECT_TRUE(mentions(s, names)) << s.message();
    EXPECT_TRUE(out.empty());
  };
  ShardFrame f;
  EntityImage e;
  e.id = 9;
  e.x = std::numeric_limits<float>::quiet_NaN();
  f.add(GhostOut{4, DespawnReason::left});
  f.add(e);
  refused(f, "record 1 (entity_image): x is nan: must be finite");
  f.images[0].x = 0.0f;
  f.images[0].key = {InterestKeyType::user, 0};
  refused(f, "key value is 0 for a user key");
  f.images[0].key = {};
  f.images[0].radius_scale = 100.0f;
  refused(f, "radius_scale is 100");
  f.images[0].radius_scale = 1.0f;
  f.ghost_outs[0].reason = DespawnReason::hidden;
  refused(f, "record 0 (ghost_out): reason is 5");
  f.ghost_outs[0].reason = DespawnReason::destroyed;
  f.header.to = kMaxShards;
  refused(f, "header to is 4096");
  f.header.to = 1;
  std::vector<std::uint8_t> big(kMaxShardRecordBytes + 1);
  f.images[0].update = big;
  refused(f, "update is 65536 bytes");
  f.images[0].update = {};
  std::vector<std::uint8_t> out;
  EXPECT_TRUE(encode_shard_frame(f, out).ok());
}

}  // namespace
}  // namespace sightline::testing
