// One function serializes a game's entity state in three modes: it writes on the server, reads
// on the client, and measures (counts bits without writing) when the packet filler asks what a
// record would cost. Read and write cannot drift apart, because they are the same code.
//
//   bool serialize_npc(sightline::Stream& s, Npc& npc, sightline::StatePart part) {
//     if (!s.serialize_quantized(npc.x, -1000.0f, 1000.0f, 0.01f)) return false;
//     if (!s.serialize_quantized(npc.z, -1000.0f, 1000.0f, 0.01f)) return false;
//     if (part == sightline::StatePart::full && !s.serialize_uint(npc.hp, 0, 100)) return false;
//     return true;
//   }
//
// Bit layout (docs/protocol.md): bit i of a stream is bit (i % 8) of byte (i / 8); a value of n
// bits goes low bit first. A payload is padded with zero bits to a whole byte.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/limits.h"
#include "sightline/status.h"

namespace sightline {

/// Which part of an entity's state a payload carries.
enum class StatePart : std::uint8_t {
  full = 0,    ///< Everything a client that knows nothing about the entity needs (a spawn).
  update = 1,  ///< What changes from tick to tick (an update): the same for every client.
};

/// Where a payload names another entity (Stream::serialize_entity): the bit it starts at and the
/// entity written there.
struct EntityReference {
  std::uint32_t bit = 0;
  EntityId entity;
};

/// Bits an entity reference takes in a payload: its index, then its generation, 32 bits each.
inline constexpr int kEntityReferenceBits = 64;

/// Bits needed to hold any value in [0, range]: 0 for range 0, 32 for 0xffffffff.
[[nodiscard]] constexpr int bits_required(std::uint32_t range) noexcept { return std::bit_width(range); }

/// A quantized range (Stream::serialize_quantized) whose checks and arithmetic are done once,
/// for a range known only at run time (a level's bounds, a setting): serialize_quantized(value,
/// range) writes and reads exactly the bits serialize_quantized(value, min, max, resolution)
/// does, without a division and a ceil per call. With constant arguments the compiler folds that
/// work away anyway. Copyable; make one per range and keep it.
class SIGHTLINE_API QuantizedRange {
 public:
  /// Refuses (invalid_argument, naming the argument and its value) what serialize_quantized
  /// refuses: min or max not finite, min >= max, resolution not finite or <= 0, or a range of
  /// more than 2^32 - 1 steps.
  [[nodiscard]] static Result<QuantizedRange> make(float min, float max, float resolution);

  [[nodiscard]] float min() const noexcept { return min_; }
  [[nodiscard]] float max() const noexcept { return max_; }
  [[nodiscard]] float resolution() const noexcept { return resolution_; }
  /// The top step: values take bits_required(top_step()) bits.
  [[nodiscard]] std::uint32_t top_step() const noexcept { return static_cast<std::uint32_t>(steps_); }

 private:
  friend class Stream;
  QuantizedRange(float min, float max, float resolution, double steps) noexcept
      : min_(min), max_(max), resolution_(resolution), steps_(steps) {}

  float min_;
  float max_;
  float resolution_;
  double steps_;  // the top step, as serialize_quantized's arithmetic uses it
};

/// A bit stream that writes into a caller's buffer, reads from caller's bytes, or only counts.
///
/// Every serialize_* call returns false on failure and the stream stays failed: later calls do
/// nothing and return false, and error() names the first failure. Writing fails when the buffer
/// is full or a value is outside its declared range (a server bug caught before it reaches the
/// wire); reading fails when the bytes run out, or a value read is outside its declared range,
/// or a float is not finite, so a reader never hands the game a value its writer could not have
/// produced. Measuring fails only where writing would for a value out of range.
/// Copyable; holds no allocation; does not own its buffer.
class SIGHTLINE_API Stream {
 public:
  enum class Mode : std::uint8_t { write, read, measure };

  /// A stream that writes into `buffer` (its bytes are overwritten from the start).
  [[nodiscard]] static Stream writer(std::span<std::uint8_t> buffer) noexcept;
  /// The same, and each non-null entity reference written is noted in `references` (see
  /// references()); a reference beyond its size fails the stream ("more entity references than
  /// the stream notes"). A Replicator writes payloads with one, kMaxReferences long.
  [[nodiscard]] static Stream writer(std::span<std::uint8_t> buffer,
                                     std::span<EntityReference> references) noexcept;
  /// A stream that reads `bytes`.
  [[nodiscard]] static Stream reader(std::span<const std::uint8_t> bytes) noexcept;
  /// A stream that counts the bits a write would produce.
  [[nodiscard]] static Stream measurer() noexcept;

  [[nodiscard]] Mode mode() const noexcept { return mode_; }
  [[nodiscard]] bool writing() const noexcept { return mode_ == Mode::write; }
  [[nodiscard]] bool reading() const noexcept { return mode_ == Mode::read; }
  [[nodiscard]] bool measuring() const noexcept { return mode_ == Mode::measure; }

  /// The low `bits` (1..32) of value. Reading sets value to what was written.
  bool serialize_bits(std::uint32_t& value, int bits) noexcept;
  /// A value in [min, max] in bits_required(max - min) bits. Requires min <= max.
  bool serialize_uint(std::uint32_t& value, std::uint32_t min, std::uint32_t max) noexcept;
  bool serialize_int(std::int32_t& value, std::int32_t min, std::int32_t max) noexcept;
  bool serialize_bool(bool& value) noexcept;
  /// A finite float in 32 bits, exact. NaN and infinities are refused in every mode.
  bool serialize_float(float& value) noexcept;
  /// A float in [min, max] rounded to the nearest multiple of `resolution` above min, so within
  /// resolution / 2: steps 0..top where top = ceil((max - min) / resolution) (a fraction of a
  /// step below 0.001 is dropped), in bits_required(top) bits, top at most 2^32 - 1. Reading gives
  /// min + step * resolution, clamped to max. Writing refuses a value outside [min, max] or not
  /// finite. Requires min < max, resolution > 0. The exact arithmetic, for a decoder in another
  /// language, is in docs/protocol.md's payload table.
  bool serialize_quantized(float& value, float min, float max, float resolution) noexcept;
  /// The same, with the range's checks and arithmetic done once (QuantizedRange).
  bool serialize_quantized(float& value, const QuantizedRange& range) noexcept;
  /// `count` raw bytes (byte-aligned or not).
  bool serialize_bytes(std::uint8_t* data, std::size_t count) noexcept;
  /// A reference to another entity (a target, a mount, a leader), in kEntityReferenceBits bits:
  /// its index, then its generation, 32 bits each, both 0 for null. A Replicator writes the
  /// entity only to a client that holds it (or whose viewer it is) and null to any other, so an
  /// entity's id never reaches a client that was not sent it; once the client is sent that
  /// entity, it sends the referring entity's full state again (docs/protocol.md, "Entity
  /// references"). Writing a null entity writes null whatever its index. Reading refuses a null
  /// with a non-zero index; on the client, ClientMirror::resolve answers whether the entity read
  /// is held (under unreliable delivery a late update may name one the client has let go since).
  /// An event's payload may not name an entity (replicator.h, EventSerializer).
  bool serialize_entity(EntityId& entity) noexcept;
  /// Writing with a list of references (writer's second form): those written so far, in order.
  [[nodiscard]] std::span<const EntityReference> references() const noexcept {
    return {references_, reference_count_};
  }

  /// Bits written, read or measured so far.
  [[nodiscard]] std::size_t bits() const noexcept { return bit_; }
  /// The same rounded up to whole bytes: a payload's length.
  [[nodiscard]] std::size_t bytes() const noexcept { return (bit_ + 7) / 8; }
  /// True until a call fails.
  [[nodiscard]] bool ok() const noexcept { return error_ == nullptr; }
  /// The first failure ("read past the end", "value above max", ...), or null.
  [[nodiscard]] const char* error() const noexcept { return error_; }
  /// Reading: whether every bit after the last one read, to the end of the bytes, is zero (the
  /// padding a writer leaves). A reader that checks it refuses trailing garbage.
  [[nodiscard]] bool rest_is_zero() const noexcept;

 private:
  Stream(Mode mode, std::uint8_t* out, const std::uint8_t* in, std::size_t size) noexcept
      : mode_(mode), out_(out), in_(in), size_bits_(size * 8) {}
  bool fail(const char* why) noexcept {
    if (error_ == nullptr) error_ = why;
    return false;
  }
  // serialize_bits past its checks: bits in 1..32, room for them, value within them (writing).
  void write_bits(std::uint32_t value, int bits) noexcept;
  [[nodiscard]] std::uint32_t read_bits(int bits) noexcept;
  // serialize_quantized's top step for a checked range.
  [[nodiscard]] static double quantized_steps(float min, float max, float resolution) noexcept;
  // serialize_quantized past its range checks: steps 0..steps (a whole number below 2^32).
  bool serialize_steps(float& value, float min, float max, float resolution, double steps) noexcept;
  friend class QuantizedRange;

  Mode mode_;
  std::uint8_t* out_ = nullptr;
  const std::uint8_t* in_ = nullptr;
  std::size_t size_bits_ = 0;
  std::size_t bit_ = 0;
  const char* error_ = nullptr;
  EntityReference* references_ = nullptr;
  std::size_t reference_room_ = 0;
  std::size_t reference_count_ = 0;
};

// The calls a serializer makes for each field of each entity, defined here so that they inline
// into it: with constant ranges the compiler folds the range arithmetic away.

inline void Stream::write_bits(std::uint32_t value, int bits) noexcept {
  // At most 5 bytes from the current one: the bits below the offset are kept, the ones above the
  // value's are zero (a payload's padding).
  const std::size_t byte = bit_ / 8;
  const int offset = static_cast<int>(bit_ % 8);
  const std::uint64_t word = (std::uint64_t{value} << offset) | (out_[byte] & ((1u << offset) - 1u));
  const int touched = (offset + bits + 7) / 8;
  for (int i = 0; i < touched; ++i)
    out_[byte + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(word >> (8 * i));
  bit_ += static_cast<std::size_t>(bits);
}

inline std::uint32_t Stream::read_bits(int bits) noexcept {
  const std::size_t byte = bit_ / 8;
  const int offset = static_cast<int>(bit_ % 8);
  const int touched = (offset + bits + 7) / 8;
  std::uint64_t word = 0;
  for (int i = 0; i < touched; ++i) word |= std::uint64_t{in_[byte + static_cast<std::size_t>(i)]} << (8 * i);
  bit_ += static_cast<std::size_t>(bits);
  return static_cast<std::uint32_t>((word >> offset) & ((std::uint64_t{1} << bits) - 1u));
}

inline bool Stream::serialize_bits(std::uint32_t& value, int bits) noexcept {
  if (!ok()) return false;
  if (bits < 1 || bits > 32) return fail("bit count outside 1..32");
  if (mode_ == Mode::measure) {
    bit_ += static_cast<std::size_t>(bits);
    return true;
  }
  if (size_bits_ - bit_ < static_cast<std::size_t>(bits)) {
    return fail(mode_ == Mode::write ? "buffer full" : "read past the end");
  }
  if (mode_ == Mode::write) {
    if ((std::uint64_t{value} >> bits) != 0) return fail("value wider than its bit count");
    write_bits(value, bits);
  } else {
    value = read_bits(bits);
  }
  return true;
}

inline bool Stream::serialize_uint(std::uint32_t& value, std::uint32_t min, std::uint32_t max) noexcept {
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

inline double Stream::quantized_steps(float min, float max, float resolution) noexcept {
  // The top step is the first multiple of resolution at or above max (read back as max, or just
  // below it where the slack below dropped a fraction of a step), so a
  // value just below max is never more than resolution / 2 away. The slack keeps a range that is
  // a whole number of steps but for float rounding (2000 / 0.01f) from growing a step.
  const double steps = std::ceil((static_cast<double>(max) - min) / resolution - 1e-3);
  return steps > 0.0 ? steps : 0.0;
}

inline bool Stream::serialize_quantized(float& value, float min, float max, float resolution) noexcept {
  if (!ok()) return false;
  if (!(std::isfinite(min) && std::isfinite(max) && min < max))
    return fail("quantized range not finite or empty");
  if (!(std::isfinite(resolution) && resolution > 0.0f)) return fail("quantized resolution not positive");
  const double steps = quantized_steps(min, max, resolution);
  if (steps > 4294967295.0) return fail("quantized range needs more than 32 bits");
  return serialize_steps(value, min, max, resolution, steps);
}

inline bool Stream::serialize_quantized(float& value, const QuantizedRange& range) noexcept {
  if (!ok()) return false;
  return serialize_steps(value, range.min_, range.max_, range.resolution_, range.steps_);
}

inline bool Stream::serialize_steps(float& value, float min, float max, float resolution,
                                    double steps) noexcept {
  const auto top = static_cast<std::uint32_t>(steps);
  std::uint32_t step = 0;
  if (mode_ != Mode::read) {
    if (!std::isfinite(value) || value < min || value > max) return fail("value outside its range");
    // std::round of a value >= 0 below 2^33 (ties away from zero), without the library call: the
    // truncation through an integer is exact there, and so is the fraction left.
    const double x = (static_cast<double>(value) - min) / resolution;
    const double whole = static_cast<double>(static_cast<std::uint64_t>(x));
    const double q = x - whole >= 0.5 ? whole + 1.0 : whole;
    step = static_cast<std::uint32_t>(q < steps ? q : steps);
  }
  if (!serialize_uint(step, 0, top)) return false;
  if (mode_ == Mode::read) {
    const double v = static_cast<double>(min) + static_cast<double>(step) * resolution;
    value = static_cast<float>(v < static_cast<double>(max) ? v : static_cast<double>(max));
  }
  return true;
}

}  // namespace sightline
