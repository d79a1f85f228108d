// Byte streams for the wire format: one serialize function per packet part (protocol.cpp) runs
// over a writer, a reader or a measurer, so what is written, what is read and what a record is
// counted to cost cannot drift apart. Each stream offers the same calls: u8, u16, u32, varint,
// id, bytes; `reading` tells a serialize function whether to check what it got.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "sightline/handles.h"
#include "sightline/protocol.h"
#include "sightline/status.h"

namespace sightline {

/// Writes into a buffer the caller has measured to have room: no call checks it.
class WireWriter {
 public:
  static constexpr bool reading = false;

  explicit WireWriter(std::span<std::uint8_t> buffer) noexcept : out_(buffer.data()) {}

  bool u8(const std::uint8_t& v, const char*) noexcept {
    out_[pos_++] = v;
    return true;
  }
  bool u16(const std::uint32_t& v, const char*) noexcept {
    out_[pos_] = static_cast<std::uint8_t>(v);
    out_[pos_ + 1] = static_cast<std::uint8_t>(v >> 8);
    pos_ += 2;
    return true;
  }
  bool u32(const std::uint32_t& v, const char*) noexcept {
    for (int i = 0; i < 4; ++i)
      out_[pos_ + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
    pos_ += 4;
    return true;
  }
  bool varint(const std::uint32_t& value, const char*) noexcept {
    std::uint32_t v = value;
    while (v >= 0x80u) {
      out_[pos_++] = static_cast<std::uint8_t>(v | 0x80u);
      v >>= 7;
    }
    out_[pos_++] = static_cast<std::uint8_t>(v);
    return true;
  }
  bool id(const EntityId& e) noexcept { return varint(e.index, nullptr) && varint(e.generation, nullptr); }
  /// `count` is bytes.size().
  bool bytes(const std::span<const std::uint8_t>& bytes, std::uint32_t count, const char*) noexcept {
    // Most payloads are a few bytes: two overlapping fixed-size copies (or a byte or three) beat a
    // call to memcpy there, and a loop of one byte at a time.
    std::uint8_t* const to = out_ + pos_;
    const std::uint8_t* const from = bytes.data();
    if (count > 16) {
      std::memcpy(to, from, count);
    } else if (count >= 8) {
      std::memcpy(to, from, 8);
      std::memcpy(to + count - 8, from + count - 8, 8);
    } else if (count >= 4) {
      std::memcpy(to, from, 4);
      std::memcpy(to + count - 4, from + count - 4, 4);
    } else {
      for (std::uint32_t i = 0; i < count; ++i) to[i] = from[i];
    }
    pos_ += count;
    return true;
  }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }

 private:
  std::uint8_t* out_;
  std::size_t pos_ = 0;
};

/// Counts the bytes a WireWriter would write; `bytes` takes only the count.
class WireMeasurer {
 public:
  static constexpr bool reading = false;

  bool u8(const std::uint8_t&, const char*) noexcept { return add(1); }
  bool u16(const std::uint32_t&, const char*) noexcept { return add(2); }
  bool u32(const std::uint32_t&, const char*) noexcept { return add(4); }
  bool varint(const std::uint32_t& v, const char*) noexcept { return add(varint_bytes(v)); }
  bool id(const EntityId& e) noexcept { return add(varint_bytes(e.index) + varint_bytes(e.generation)); }
  bool bytes(const std::span<const std::uint8_t>&, std::uint32_t count, const char*) noexcept {
    return add(count);
  }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }

 private:
  bool add(std::size_t n) noexcept {
    pos_ += n;
    return true;
  }
  std::size_t pos_ = 0;
};

/// Measures like WireMeasurer, at compile time, and notes where the field named at construction
/// starts: protocol.cpp checks the offsets protocol.h names with it.
class WireFieldFinder {
 public:
  static constexpr bool reading = false;

  constexpr explicit WireFieldFinder(std::string_view field) noexcept : field_(field) {}

  constexpr bool u8(const std::uint8_t&, const char* what) noexcept { return add(1, what); }
  constexpr bool u16(const std::uint32_t&, const char* what) noexcept { return add(2, what); }
  constexpr bool u32(const std::uint32_t&, const char* what) noexcept { return add(4, what); }
  constexpr bool varint(const std::uint32_t& v, const char* what) noexcept {
    return add(varint_bytes(v), what);
  }
  constexpr bool id(const EntityId& e) noexcept {
    return add(varint_bytes(e.index), "entity index") && add(varint_bytes(e.generation), "entity generation");
  }
  constexpr bool bytes(const std::span<const std::uint8_t>&, std::uint32_t count, const char* what) noexcept {
    return add(count, what);
  }
  /// Where the field starts, or the bytes measured if it never came.
  [[nodiscard]] constexpr std::size_t offset() const noexcept { return found_ ? offset_ : pos_; }

 private:
  constexpr bool add(std::size_t n, const char* what) noexcept {
    if (!found_ && !field_.empty() && field_ == what) {
      found_ = true;
      offset_ = pos_;
    }
    pos_ += n;
    return true;
  }
  std::string_view field_;
  std::size_t pos_ = 0;
  std::size_t offset_ = 0;
  bool found_ = false;
};

/// Reads untrusted bytes, checking each call against the end; a value a writer could not have
/// written (an overlong or oversized varint, a null generation) is refused too. The first
/// failure is kept as "<field> at byte <offset> <why>".
class WireReader {
 public:
  static constexpr bool reading = true;

  explicit WireReader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  bool u8(std::uint8_t& v, const char* what) {
    if (pos_ >= bytes_.size()) return refuse(what, "ends before it");
    v = bytes_[pos_++];
    return true;
  }
  bool u16(std::uint32_t& v, const char* what) {
    if (bytes_.size() - pos_ < 2) return refuse(what, "ends before it");
    v = std::uint32_t{bytes_[pos_]} | std::uint32_t{bytes_[pos_ + 1]} << 8;
    pos_ += 2;
    return true;
  }
  bool u32(std::uint32_t& v, const char* what) {
    if (bytes_.size() - pos_ < 4) return refuse(what, "ends before it");
    const std::uint8_t* p = bytes_.data() + pos_;
    v = std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
        std::uint32_t{p[3]} << 24;
    pos_ += 4;
    return true;
  }
  bool varint(std::uint32_t& v, const char* what) {
    if (pos_ < bytes_.size() && bytes_[pos_] < 0x80u) {  // most varints on the wire are one byte
      v = bytes_[pos_++];
      return true;
    }
    const std::size_t start = pos_;
    std::uint64_t value = 0;
    for (int i = 0; i < 5; ++i) {
      if (pos_ >= bytes_.size()) return refuse_at(start, what, "ends inside a varint");
      const std::uint8_t b = bytes_[pos_++];
      value |= std::uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80u) == 0) {
        if (i > 0 && b == 0) return refuse_at(start, what, "is an overlong varint");
        if (value > 0xffffffffu) return refuse_at(start, what, "is a varint above 32 bits");
        v = static_cast<std::uint32_t>(value);
        return true;
      }
    }
    return refuse_at(start, what, "is a varint longer than 5 bytes");
  }
  bool id(EntityId& e) {
    if (!varint(e.index, "entity index")) return false;
    const std::size_t generation_at = pos_;
    if (!varint(e.generation, "entity generation")) return false;
    if (e.generation == 0) return refuse_at(generation_at, "entity generation", "is 0 (the null handle)");
    return true;
  }
  /// `bytes` views the next `count` bytes of what is read.
  bool bytes(std::span<const std::uint8_t>& bytes, std::uint32_t count, const char* what) {
    if (bytes_.size() - pos_ < count) {
      return refuse(what, "of " + std::to_string(count) + " bytes runs past the end");
    }
    bytes = bytes_.subspan(pos_, count);
    pos_ += count;
    return true;
  }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

  /// Refuses the field that starts at the current offset (one that could not be read whole).
  bool refuse(std::string_view what, std::string_view why) { return refuse_at(pos_, what, why); }
  /// Refuses the field that starts at byte `at`.
  bool refuse_at(std::size_t at, std::string_view what, std::string_view why) {
    if (error_.empty()) {
      error_.append(what).append(" at byte ").append(std::to_string(at)).append(" ").append(why);
    }
    return false;
  }
  /// Refuses with a whole message, for a failure that is not one field's.
  bool refuse_with(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  [[nodiscard]] Status status() const { return {ErrorCode::malformed_packet, error_}; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace sightline
