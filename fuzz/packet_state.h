// The state format the packet fuzzer's payload check reads and the corpus generator writes: a
// count in 0..15, then that many coordinates at 1/64 unit in [-4096, 4096].
#pragma once

#include <array>
#include <span>

#include "sightline/handles.h"
#include "sightline/serialize.h"

namespace sightline::fuzz {

inline constexpr std::uint32_t kMaxValues = 15;

inline bool serialize_values(Stream& s, std::uint32_t& count, std::array<float, kMaxValues>& values) {
  if (!s.serialize_uint(count, 0, kMaxValues)) return false;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!s.serialize_quantized(values[i], -4096.0f, 4096.0f, 1.0f / 64.0f)) return false;
  }
  return true;
}

inline bool check_payload(EntityId, StatePart, std::span<const std::uint8_t> payload, void*) {
  Stream s = Stream::reader(payload);
  std::uint32_t count = 0;
  std::array<float, kMaxValues> values{};
  return serialize_values(s, count, values) && s.rest_is_zero();
}

}  // namespace sightline::fuzz
