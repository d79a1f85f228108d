#include "sightline/serialize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "format_value.h"

namespace sightline {

Result<QuantizedRange> QuantizedRange::make(float min, float max, float resolution) {
  const auto bad = [](const char* what, float value, const char* rule) {
    return Status{ErrorCode::invalid_argument,
                  std::string("QuantizedRange ") + what + " is " + format_value(value) + ": " + rule};
  };
  if (!std::isfinite(min)) return bad("min", min, "must be finite");
  if (!std::isfinite(max)) return bad("max", max, "must be finite");
  if (!(min < max)) return bad("max", max, ("must be above min (" + format_value(min) + ")").c_str());
  if (!(std::isfinite(resolution) && resolution > 0.0f))
    return bad("resolution", resolution, "must be finite and > 0");
  const double steps = Stream::quantized_steps(min, max, resolution);
  if (steps > 4294967295.0) {
    return bad(
        "resolution", resolution,
        ("makes more than 2^32 - 1 steps of [" + format_value(min) + ", " + format_value(max) + "]").c_str());
  }
  return QuantizedRange(min, max, resolution, steps);
}

Stream Stream::writer(std::span<std::uint8_t> buffer) noexcept {
  return Stream(Mode::write, buffer.data(), nullptr, buffer.size());
}

Stream Stream::writer(std::span<std::uint8_t> buffer, std::span<EntityReference> references) noexcept {
  Stream s(Mode::write, buffer.data(), nullptr, buffer.size());
  s.references_ = references.data();
  s.reference_room_ = references.size();
  return s;
}

Stream Stream::reader(std::span<const std::uint8_t> bytes) noexcept {
  return Stream(Mode::read, nullptr, bytes.data(), bytes.size());
}

Stream Stream::measurer() noexcept { return Stream(Mode::measure, nullptr, nullptr, 0); }

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

bool Stream::serialize_entity(EntityId& entity) noexcept {
  if (!ok()) return false;
  const std::size_t at = bit_;
  std::uint32_t index = entity.is_null() ? 0 : entity.index;
  std::uint32_t generation = entity.generation;
  const bool noted = mode_ == Mode::write && references_ != nullptr && generation != 0;
  if (noted && reference_count_ == reference_room_)
    return fail("more entity references than the stream notes");
  if (!serialize_bits(index, 32) || !serialize_bits(generation, 32)) return false;
  if (mode_ == Mode::read) {
    if (generation == 0 && index != 0) return fail("null entity reference with a non-zero index");
    entity = {index, generation};
    return true;
  }
  if (noted) references_[reference_count_++] = {static_cast<std::uint32_t>(at), {index, generation}};
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
