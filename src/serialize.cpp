#include "sightline/serialize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sightline {

Stream Stream::writer(std::span<std::uint8_t> buffer) noexcept {
  return Stream(Mode::write, buffer.data(), nullptr, buffer.size());
}

Stream Stream::reader(std::span<const std::uint8_t> bytes) noexcept {
  return Stream(Mode::read, nullptr, bytes.data(), bytes.size());
}

Stream Stream::measurer() noexcept { return Stream(Mode::measure, nullptr, nullptr, 0); }

bool Stream::serialize_bits(std::uint32_t& value, int bits) noexcept {
  if (!ok()) return false;
  if (bits < 1 || bits > 32) return fail("bit count outside 1..32");
  if (mode_ == Mode::measure) {
    bit_ += static_cast<std::size_t>(bits);
    return true;
  }
  if (size_bits_ - bit_ < static_cast<std::size_t>(bits)) {
    return fail(mode_ == Mode::write ? "buffer full" : "read past the end");
  }
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  if (mode_ == Mode::write) {
    if ((value & ~mask) != 0) return fail("value wider than its bit count");
    std::uint64_t v = value;
    int left = bits;
    while (left > 0) {
      const std::size_t byte = bit_ / 8;
      const int offset = static_cast<int>(bit_ % 8);
      const int take = std::min(8 - offset, left);
      const auto keep = static_cast<std::uint8_t>((1u << offset) - 1u);  // bits already written
      const auto part = static_cast<std::uint8_t>((v & ((1u << take) - 1u)) << offset);
      out_[byte] = static_cast<std::uint8_t>((out_[byte] & keep) | part);
      v >>= take;
      left -= take;
      bit_ += static_cast<std::size_t>(take);
    }
    return true;
  }
  std::uint64_t v = 0;
  int got = 0;
  while (got < bits) {
    const std::size_t byte = bit_ / 8;
    const int offset = static_cast<int>(bit_ % 8);
    const int take = std::min(8 - offset, bits - got);
    const std::uint64_t part = (static_cast<std::uint64_t>(in_[byte]) >> offset) & ((1u << take) - 1u);
    v |= part << got;
    got += take;
    bit_ += static_cast<std::size_t>(take);
  }
  value = static_cast<std::uint32_t>(v);
  return true;
}

bool Stream::serialize_uint(std::uint32_t& value, std::uint32_t min, std::uint32_t max) noexcept {
  if (!ok()) return false;
  if (min > max) return fail("range with min above max");
  if (mode_ != Mode::read && (value < min || value > max)) return fail("value outside its range");
  const int bits = bits_required(max - min);
  if (bits == 0) {
    value = min;
    return true;
  }
  std::uint32_t offset = value - min;
  if (!serialize_bits(offset, bits)) return false;
  if (mode_ == Mode::read) {
    if (offset > max - min) return fail("value read outside its range");
    value = min + offset;
  }
  return true;
}

bool Stream::serialize_int(std::int32_t& value, std::int32_t min, std::int32_t max) noexcept {
  if (!ok()) return false;
  if (min > max) return fail("range with min above max");
  if (mode_ != Mode::read && (value < min || value > max)) return fail("value outside its range");
  const auto span = static_cast<std::uint32_t>(static_cast<std::int64_t>(max) - min);
  std::uint32_t offset = static_cast<std::uint32_t>(static_cast<std::int64_t>(value) - min);
  if (!serialize_uint(offset, 0, span)) return false;
  if (mode_ == Mode::read) value = static_cast<std::int32_t>(static_cast<std::int64_t>(min) + offset);
  return true;
}

bool Stream::serialize_bool(bool& value) noexcept {
  std::uint32_t bit = value ? 1u : 0u;
  if (!serialize_bits(bit, 1)) return false;
  if (mode_ == Mode::read) value = bit != 0;
  return true;
}

bool Stream::serialize_float(float& value) noexcept {
  if (!ok()) return false;
  if (mode_ != Mode::read && !std::isfinite(value)) return fail("float not finite");
  std::uint32_t raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  if (!serialize_bits(raw, 32)) return false;
  if (mode_ == Mode::read) {
    float read = 0.0f;
    std::memcpy(&read, &raw, sizeof read);
    if (!std::isfinite(read)) return fail("float read not finite");
    value = read;
  }
  return true;
}

bool Stream::serialize_quantized(float& value, float min, float max, float resolution) noexcept {
  if (!ok()) return false;
  if (!(std::isfinite(min) && std::isfinite(max) && min < max))
    return fail("quantized range not finite or empty");
  if (!(std::isfinite(resolution) && resolution > 0.0f)) return fail("quantized resolution not positive");
  // The top step is the first multiple of resolution at or above max (read back as max), so a
  // value just below max is never more than resolution / 2 away. The slack keeps a range that is
  // a whole number of steps but for float rounding (2000 / 0.01f) from growing a step.
  const double steps = std::max(0.0, std::ceil((static_cast<double>(max) - min) / resolution - 1e-3));
  if (steps > 4294967295.0) return fail("quantized range needs more than 32 bits");
  const auto top = static_cast<std::uint32_t>(steps);
  std::uint32_t step = 0;
  if (mode_ != Mode::read) {
    if (!std::isfinite(value) || value < min || value > max) return fail("value outside its range");
    const double q = std::round((static_cast<double>(value) - min) / resolution);
    step = static_cast<std::uint32_t>(std::min(q, steps));
  }
  if (!serialize_uint(step, 0, top)) return false;
  if (mode_ == Mode::read) {
    const double v = static_cast<double>(min) + static_cast<double>(step) * resolution;
    value = static_cast<float>(std::min(v, static_cast<double>(max)));
  }
  return true;
}

bool Stream::serialize_bytes(std::uint8_t* data, std::size_t count) noexcept {
  if (!ok()) return false;
  if (mode_ == Mode::measure) {
    bit_ += count * 8;
    return true;
  }
  if ((size_bits_ - bit_) / 8 < count)
    return fail(mode_ == Mode::write ? "buffer full" : "read past the end");
  if (bit_ % 8 == 0) {
    if (mode_ == Mode::write) {
      if (count != 0) std::memcpy(out_ + bit_ / 8, data, count);
    } else if (count != 0) {
      std::memcpy(data, in_ + bit_ / 8, count);
    }
    bit_ += count * 8;
    return true;
  }
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t byte = data[i];
    if (!serialize_bits(byte, 8)) return false;
    if (mode_ == Mode::read) data[i] = static_cast<std::uint8_t>(byte);
  }
  return true;
}

bool Stream::rest_is_zero() const noexcept {
  if (mode_ != Mode::read) return true;
  for (std::size_t bit = bit_; bit < size_bits_;) {
    if (bit % 8 == 0) {
      if (in_[bit / 8] != 0) return false;
      bit += 8;
    } else {
      if ((in_[bit / 8] >> (bit % 8)) & 1u) return false;
      ++bit;
    }
  }
  return true;
}

}  // namespace sightline
