// libFuzzer target for the server's FrameGuard: any bytes are a client's stream after the
// upgrade. None crashes; every refusal has a reason that fits a close frame; and the stream read
// in pieces (their sizes drawn from the input's first byte) gives the refusal and the frame count
// that it gives read whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "frame_guard.h"

namespace {

void check(bool holds) {
  if (!holds) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using sightline::demo::FrameGuard;
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 16;
  const std::span<const std::uint8_t> stream(data + 1, size - 1);
  const auto now = FrameGuard::Clock::now();
  FrameGuard whole(60, now);
  const auto refused = whole.read(stream, now);
  if (refused) {
    check(!refused->reason.empty() && refused->reason.size() <= 123);
    check(refused->code == 1002 || refused->code == 1008);
  }
  FrameGuard pieces(60, now);
  std::optional<sightline::demo::FrameRefusal> got;
  for (std::size_t at = 0; at < stream.size() && !got; at += piece) {
    got = pieces.read(stream.subspan(at, std::min(piece, stream.size() - at)), now);
  }
  check(got.has_value() == refused.has_value());
  if (got) check(got->reason == refused->reason && got->code == refused->code);
  check(pieces.frames() == whole.frames());
  return 0;
}
