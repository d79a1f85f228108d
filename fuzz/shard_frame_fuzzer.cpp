// libFuzzer target for the shard frame codec (SLF1). An input whose first byte is 0 seeds a
// random frame of every record kind (the next 8 bytes are the seed): it must encode, decode to
// the same records, encode to the same bytes, and every cut of it must be refused. Any other
// input is decoded as a frame: refused with a message, or, when it decodes, the one encoding of
// what it decodes to.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <span>
#include <vector>

#include "shard_frame_samples.h"
#include "sightline/shard_frame.h"

namespace {

using namespace sightline;

void require(bool condition) {
  if (!condition) std::abort();
}

void round_trip(std::span<const std::uint8_t> seed_bytes) {
  std::uint64_t seed = 0;
  std::memcpy(&seed, seed_bytes.data(), std::min<std::size_t>(seed_bytes.size(), sizeof seed));
  scenarios::Rng rng(seed);
  std::deque<std::vector<std::uint8_t>> storage;
  const ShardFrame frame = testing::random_shard_frame(rng, storage);
  std::vector<std::uint8_t> bytes;
  require(encode_shard_frame(frame, bytes).ok());
  ShardFrame back;
  require(decode_shard_frame(bytes, back).ok());
  require(back.order == frame.order && back.header == frame.header);
  std::vector<std::uint8_t> again;
  require(encode_shard_frame(back, again).ok() && again == bytes);
  for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 16) {
    require(!decode_shard_frame(std::span(bytes).first(n), back).ok() && back.order.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  if (size >= 1 && data[0] == 0) {
    round_trip(input.subspan(1));
    return 0;
  }
  ShardFrame frame;
  const Status decoded = decode_shard_frame(input, frame);
  if (!decoded.ok()) {
    require(!decoded.message().empty() && frame.order.empty());
    return 0;
  }
  std::vector<std::uint8_t> again;
  require(encode_shard_frame(frame, again).ok());
  require(again.size() == size && std::memcmp(again.data(), data, size) == 0);
  return 0;
}
