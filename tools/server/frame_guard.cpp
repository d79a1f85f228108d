#include "frame_guard.h"

#include <algorithm>
#include <string>

namespace sightline::demo {

namespace {

constexpr std::uint8_t kContinuation = 0x0;
constexpr std::uint8_t kBinary = 0x2;
constexpr std::uint8_t kClose = 0x8;
constexpr std::uint8_t kPong = 0xA;
constexpr std::uint64_t kMaxControlPayload = 125;

FrameRefusal protocol_error(std::string reason) { return {1002, std::move(reason), "bad frame"}; }

// Bytes of the header after its first two: the extended length, then the mask key.
std::uint32_t header_bytes(std::uint8_t second) {
  const std::uint8_t length = second & 0x7f;
  const std::uint32_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
  return 2 + extended + ((second & 0x80) != 0 ? 4 : 0);
}

// The codes RFC 6455 (section 7.4) lets an endpoint put in a close frame: 1004-1006 and 1015
// are reserved for reports, 1016-2999 for future versions, and nothing is defined from 5000.
bool sendable_close_code(std::uint32_t code) {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1013) || (code >= 3000 && code <= 4999);
}

}  // namespace

std::optional<FrameRefusal> FrameGuard::read(std::span<const std::uint8_t> bytes, Clock::time_point now) {
  std::size_t at = 0;
  while (!refusal_ && at < bytes.size()) {
    if (payload_left_ > 0) {
      const std::uint64_t skip = std::min<std::uint64_t>(payload_left_, bytes.size() - at);
      // A close frame's first two payload bytes are its code (masked like the rest).
      for (std::uint64_t k = 0; in_close_ && k < skip && close_head_bytes_ < 2; ++k) {
        close_head_[close_head_bytes_] =
            static_cast<std::uint8_t>(bytes[at + k] ^ mask_[close_head_bytes_ % 4]);
        if (++close_head_bytes_ == 2) refusal_ = check_close_code();
      }
      payload_left_ -= skip;
      at += static_cast<std::size_t>(skip);
      continue;
    }
    head_[head_bytes_++] = bytes[at++];
    if (head_bytes_ == 2 && (head_[1] & 0x80) == 0) {
      refusal_ = protocol_error("client frame not masked");
      break;
    }
    if (head_bytes_ < 2 || head_bytes_ < header_bytes(head_[1])) continue;
    refusal_ = check_header(now);
    head_bytes_ = 0;
  }
  return refusal_;
}

std::optional<FrameRefusal> FrameGuard::check_header(Clock::time_point now) {
  ++frames_;
  const bool fin = (head_[0] & 0x80) != 0;
  const std::uint8_t opcode = head_[0] & 0x0f;
  if ((head_[0] & 0x70) != 0) return protocol_error("reserved bits set (no extension was agreed)");
  if ((opcode > kBinary && opcode < kClose) || opcode > kPong)
    return protocol_error("opcode " + std::to_string(opcode) + " is reserved");
  const std::uint8_t short_length = head_[1] & 0x7f;
  std::uint64_t length = short_length;
  std::uint32_t mask_at = 2;
  if (short_length == 126) {
    length = std::uint64_t{head_[2]} << 8 | head_[3];
    mask_at = 4;
  } else if (short_length == 127) {
    if ((head_[2] & 0x80) != 0) return protocol_error("64-bit payload length has its top bit set");
    length = 0;
    for (int b = 2; b < 10; ++b) length = length << 8 | head_[b];
    mask_at = 10;
  }
  std::copy(head_ + mask_at, head_ + mask_at + 4, mask_);

  if (opcode >= kClose) {
    if (!fin) return protocol_error("control frame fragmented");
    if (length > kMaxControlPayload)
      return protocol_error("control frame of " + std::to_string(length) + " bytes (at most 125)");
    if (opcode == kClose && length == 1) return protocol_error("close frame of 1 byte");
  } else if (opcode == kContinuation) {
    if (!in_message_) return protocol_error("continuation frame with no message begun");
    if (++message_frames_ > kMaxFramesPerMessage) {
      return FrameRefusal{1008, "message in more than " + std::to_string(kMaxFramesPerMessage) + " frames",
                          "message too long"};
    }
    in_message_ = !fin;
  } else {
    if (in_message_) return protocol_error("new message inside a fragmented one");
    message_frames_ = 1;
    in_message_ = !fin;
  }
  if (!bucket_.take(now)) return FrameRefusal{1008, "too many frames", "too many frames"};

  payload_left_ = length;
  in_close_ = opcode == kClose;
  close_head_bytes_ = 0;
  return std::nullopt;
}

std::optional<FrameRefusal> FrameGuard::check_close_code() const {
  const std::uint32_t code = std::uint32_t{close_head_[0]} << 8 | close_head_[1];
  if (sendable_close_code(code)) return std::nullopt;
  return protocol_error("close code " + std::to_string(code) + " may not be sent (RFC 6455 7.4)");
}

bool is_websocket_key(std::string_view key) noexcept {
  auto digit = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
  };
  if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
  for (std::size_t i = 0; i < 22; ++i) {
    if (!digit(key[i])) return false;
  }
  // The last digit carries 2 bits of the 16th byte and 4 bits that must be zero: A, Q, g or w.
  return key[21] == 'A' || key[21] == 'Q' || key[21] == 'g' || key[21] == 'w';
}

}  // namespace sightline::demo
