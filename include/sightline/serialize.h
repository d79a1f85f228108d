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

#include <cstddef>
#include <cstdint>
#include <span>

namespace sightline {

/// Which part of an entity's state a payload carries.
enum class StatePart : std::uint8_t {
  full = 0,    ///< Everything a client that knows nothing about the entity needs (a spawn).
  update = 1,  ///< What changes from tick to tick (an update): the same for every client.
};

/// Bits needed to hold any value in [0, range]: 0 for range 0, 32 for 0xffffffff.
[[nodiscard]] constexpr int bits_required(std::uint32_t range) noexcept {
  int bits = 0;
  while (bits < 32 && (range >> bits) != 0) ++bits;
  return bits;
}

/// A bit stream that writes into a caller's buffer, reads from caller's bytes, or only counts.
///
/// Every serialize_* call returns false on failure and the stream stays failed: later calls do
/// nothing and return false, and error() names the first failure. Writing fails when the buffer
/// is full or a value is outside its declared range (a server bug caught before it reaches the
/// wire); reading fails when the bytes run out, or a value read is outside its declared range,
/// or a float is not finite, so a reader never hands the game a value its writer could not have
/// produced. Measuring fails only where writing would for a value out of range.
/// Copyable; holds no allocation; does not own its buffer.
class Stream {
 public:
  enum class Mode : std::uint8_t { write, read, measure };

  /// A stream that writes into `buffer` (its bytes are overwritten from the start).
  [[nodiscard]] static Stream writer(std::span<std::uint8_t> buffer) noexcept;
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
  /// `count` raw bytes (byte-aligned or not).
  bool serialize_bytes(std::uint8_t* data, std::size_t count) noexcept;

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

  Mode mode_;
  std::uint8_t* out_ = nullptr;
  const std::uint8_t* in_ = nullptr;
  std::size_t size_bits_ = 0;
  std::size_t bit_ = 0;
  const char* error_ = nullptr;
};

}  // namespace sightline
