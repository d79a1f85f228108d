// WebSocket frames as a client puts them on the wire (RFC 6455 section 5.2), built byte by byte so
// that tests can send what no well-behaved client library would: any opcode, length encoding,
// reserved bits or close code.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sightline::demo::test {

struct ClientFrame {
  std::uint8_t opcode = 0x2;  // binary
  bool fin = true;
  std::vector<std::uint8_t> payload;
  bool masked = true;
  std::uint8_t reserved_bits = 0;  // RSV1-3, in the high nibble's low three bits (0x70)
  /// 0: the shortest length encoding; 126 or 127: that one, whatever the length.
  std::uint8_t length_form = 0;
  /// ORed into the first byte of a 64-bit length (0x80: the bit RFC 6455 says must be 0).
  std::uint8_t length_top = 0;
};

inline std::vector<std::uint8_t> client_frame(const ClientFrame& f) {
  std::vector<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>((f.fin ? 0x80 : 0) | f.reserved_bits | (f.opcode & 0x0f)));
  const std::uint64_t n = f.payload.size();
  const std::uint8_t mask_bit = f.masked ? 0x80 : 0;
  const std::uint8_t form = f.length_form != 0 ? f.length_form : n < 126 ? 0 : n < 65536 ? 126 : 127;
  if (form == 0) {
    out.push_back(static_cast<std::uint8_t>(mask_bit | n));
  } else if (form == 126) {
    out.push_back(mask_bit | 126);
    out.push_back(static_cast<std::uint8_t>(n >> 8));
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    out.push_back(mask_bit | 127);
    for (int b = 7; b >= 0; --b) out.push_back(static_cast<std::uint8_t>(n >> (8 * b)));
    out[2] |= f.length_top;
  }
  const std::uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
  if (f.masked) out.insert(out.end(), key, key + 4);
  for (std::size_t i = 0; i < f.payload.size(); ++i)
    out.push_back(static_cast<std::uint8_t>(f.payload[i] ^ (f.masked ? key[i % 4] : 0)));
  return out;
}

/// A frame of `opcode` (0x0 continuation, 0x2 binary, 0x8 close, 0x9 ping, 0xA pong), masked.
inline std::vector<std::uint8_t> client_frame(std::uint8_t opcode, std::vector<std::uint8_t> payload = {},
                                              bool fin = true) {
  ClientFrame f;
  f.opcode = opcode;
  f.fin = fin;
  f.payload = std::move(payload);
  return client_frame(f);
}

/// A frame to make odd by setting its fields.
inline ClientFrame odd_frame(std::uint8_t opcode, std::vector<std::uint8_t> payload = {}) {
  ClientFrame f;
  f.opcode = opcode;
  f.payload = std::move(payload);
  return f;
}

/// A close frame's payload: the code, big-endian, then the reason.
inline std::vector<std::uint8_t> close_payload(std::uint16_t code, const std::string& reason = "") {
  std::vector<std::uint8_t> p = {static_cast<std::uint8_t>(code >> 8), static_cast<std::uint8_t>(code)};
  p.insert(p.end(), reason.begin(), reason.end());
  return p;
}

}  // namespace sightline::demo::test
