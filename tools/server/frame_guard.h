// What sightline-server checks in every WebSocket frame a client sends, before Beast reads it:
// the frame headers of the client's byte stream, parsed as they arrive. Beast reads ping, pong,
// close and empty continuation frames on its own, so these would otherwise go unmetered, and it
// accepts a few things RFC 6455 forbids.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "token_bucket.h"

namespace sightline::demo {

/// Why a client's stream was refused: the close code and reason to answer with, and the kind
/// the server's stats count it under.
struct FrameRefusal {
  std::uint16_t code = 0;  ///< 1002 (protocol error) or 1008 (policy)
  std::string reason;      ///< At most 123 bytes: it goes into the close frame.
  const char* kind = "";   ///< "bad frame", "too many frames" or "message too long"
};

/// Frames a message may span, its first included. The demo's client frames are at most 64 bytes:
/// a browser sends each as one frame.
inline constexpr std::uint32_t kMaxFramesPerMessage = 8;

/// Parses the client-to-server frame headers of one connection (RFC 6455 section 5.2) from the
/// bytes as they arrive, in pieces of any size, and refuses:
/// - a frame beyond the connection's frame rate (every frame counts: data, continuation, ping,
///   pong and close alike; a token bucket of `frames_per_second` tokens, starting full);
/// - a message of more than kMaxFramesPerMessage frames (continuations without end);
/// - a 64-bit payload length with its top bit set, an unmasked frame, reserved bits or opcodes,
///   a control frame over 125 bytes or fragmented, a continuation with no message begun or a new
///   message inside one, a close frame whose payload is 1 byte or whose code is not one RFC 6455
///   lets a peer send (1000-1003, 1007-1011, 3000-4999; 1012 and 1013 as IANA registers them).
/// After a refusal it reads nothing more: the connection is to be closed.
class FrameGuard {
 public:
  using Clock = std::chrono::steady_clock;

  FrameGuard(std::uint32_t frames_per_second, Clock::time_point now) noexcept
      : bucket_(frames_per_second, frames_per_second, now) {}

  /// Reads the next bytes of the stream, received at `now`; the first refusal, if any.
  [[nodiscard]] std::optional<FrameRefusal> read(std::span<const std::uint8_t> bytes, Clock::time_point now);

  /// The refusal that stopped the reading, if any.
  [[nodiscard]] const std::optional<FrameRefusal>& refusal() const noexcept { return refusal_; }
  /// Whole frame headers read so far.
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }

 private:
  std::optional<FrameRefusal> check_header(Clock::time_point now);
  std::optional<FrameRefusal> check_close_code() const;

  TokenBucket bucket_;
  std::optional<FrameRefusal> refusal_;
  std::uint8_t head_[14] = {};  // the header being read: 2 bytes, up to 8 of length, 4 of mask
  std::uint32_t head_bytes_ = 0;
  std::uint64_t payload_left_ = 0;  // of the frame whose header was read
  bool in_close_ = false;           // the payload being skipped is a close frame's
  std::uint8_t close_head_[2] = {};
  std::uint32_t close_head_bytes_ = 0;
  std::uint8_t mask_[4] = {};
  bool in_message_ = false;  // a data frame without FIN began a message
  std::uint32_t message_frames_ = 0;
  std::uint64_t frames_ = 0;
};

/// Whether `key` is a Sec-WebSocket-Key as RFC 6455 (section 4.1) has a client send: 16 bytes
/// in base64, which is 22 characters and "==".
[[nodiscard]] bool is_websocket_key(std::string_view key) noexcept;

}  // namespace sightline::demo
