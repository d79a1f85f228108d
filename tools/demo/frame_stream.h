// Byte streams for the demo's frames: one serialize function per frame (frames.cpp) runs over a
// writer, a reader or a measurer, so what the server writes and what a client reads are the same
// code, and each frame's size and field offsets are measured from it. Every stream offers
// value, finite, positive, bytes, sized and at_least; `reading` tells a serialize function whether to
// check what it got. Little-endian, no padding.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sightline/status.h"

namespace sightline::demo {

/// Appends to a vector.
class FrameWriter {
 public:
  static constexpr bool reading = false;

  explicit FrameWriter(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

  template <class T>
  bool value(const T& v, const char*) {
    std::uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));  // x86-64: the host order is little-endian
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
    return true;
  }
  template <class F>
  bool finite(const F& v, const char* what) {
    return value(v, what);
  }
  bool positive(const float& v, const char* what) { return value(v, what); }
  /// `count` is bytes.size().
  bool bytes(const std::span<const std::uint8_t>& bytes, std::size_t, const char*) {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    return true;
  }
  /// Size checks are a reader's.
  static constexpr bool sized(std::size_t) noexcept { return true; }
  static constexpr bool at_least(std::size_t) noexcept { return true; }

 private:
  std::vector<std::uint8_t>& out_;
};

/// Counts the bytes a FrameWriter would write; at compile time too. Given a field's name, it also
/// notes the offset where that field starts (field_offset), so frames.cpp names offsets without
/// counting bytes by hand.
class FrameMeasurer {
 public:
  static constexpr bool reading = false;

  constexpr explicit FrameMeasurer(std::string_view field = {}) noexcept : field_(field) {}

  template <class T>
  constexpr bool value(const T&, const char* what) noexcept {
    return add(sizeof(T), what);
  }
  template <class F>
  constexpr bool finite(const F& v, const char* what) noexcept {
    return value(v, what);
  }
  constexpr bool positive(const float& v, const char* what) noexcept { return value(v, what); }
  constexpr bool bytes(const std::span<const std::uint8_t>&, std::size_t count, const char* what) noexcept {
    return add(count, what);
  }
  static constexpr bool sized(std::size_t) noexcept { return true; }
  static constexpr bool at_least(std::size_t) noexcept { return true; }

  [[nodiscard]] constexpr std::size_t pos() const noexcept { return pos_; }
  /// Where the field named at construction starts, or the size measured if it never came.
  [[nodiscard]] constexpr std::size_t field_offset() const noexcept { return found_ ? field_pos_ : pos_; }

 private:
  constexpr bool add(std::size_t n, const char* what) noexcept {
    if (!found_ && !field_.empty() && field_ == what) {
      found_ = true;
      field_pos_ = pos_;
    }
    pos_ += n;
    return true;
  }
  std::string_view field_;
  std::size_t pos_ = 0;
  std::size_t field_pos_ = 0;
  bool found_ = false;
};

/// A float or double as refusals print it: its shortest round-trip form, or nan, inf, -inf.
template <class F>
std::string number_text(F value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

/// Reads one untrusted frame, checking each call against its end; the first failure names the
/// frame, the field, its byte and the reason.
class FrameReader {
 public:
  static constexpr bool reading = true;

  FrameReader(std::span<const std::uint8_t> bytes, const char* frame) : bytes_(bytes), frame_(frame) {}

  template <class T>
  bool value(T& v, const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) return refuse(what, "ends before it");
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    last_ = pos_;
    pos_ += sizeof(T);
    return true;
  }
  /// A float or double that is not NaN or infinite.
  template <class F>
  bool finite(F& v, const char* what) {
    if (!value(v, what)) return false;
    if (!std::isfinite(v)) return refuse_last(what, "is " + number_text(v) + ": not finite");
    return true;
  }
  /// A finite float above 0.
  bool positive(float& v, const char* what) {
    if (!finite(v, what)) return false;
    if (!(v > 0.0f)) return refuse_last(what, "is " + number_text(v) + ": must be > 0");
    return true;
  }
  /// `bytes` views the next `count` bytes of the frame.
  bool bytes(std::span<const std::uint8_t>& bytes, std::size_t count, const char* what) {
    if (bytes_.size() - pos_ < count) {
      return refuse(what, "of " + std::to_string(count) + " bytes runs past the end");
    }
    bytes = bytes_.subspan(pos_, count);
    pos_ += count;
    return true;
  }
  /// The whole frame is exactly `expected` bytes.
  bool sized(std::size_t expected) {
    if (bytes_.size() == expected) return true;
    return refuse_frame("is " + std::to_string(bytes_.size()) + " bytes, expected " +
                        std::to_string(expected));
  }
  /// The whole frame is no shorter than its `header`.
  bool at_least(std::size_t header) {
    if (bytes_.size() >= header) return true;
    return refuse_frame("is " + std::to_string(bytes_.size()) + " bytes, shorter than its " +
                        std::to_string(header) + "-byte header");
  }

  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

  /// Refuses what was read: `what` at the current offset.
  bool refuse(std::string_view what, std::string_view why) { return refuse_at(pos_, what, why); }
  /// Refuses the value read last, at the byte where it starts.
  bool refuse_last(std::string_view what, std::string_view why) { return refuse_at(last_, what, why); }
  /// Refuses the field that starts at byte `at`.
  bool refuse_at(std::size_t at, std::string_view what, std::string_view why) {
    if (error_.empty()) {
      error_.append(frame_).append(" frame: ").append(what).append(" at byte ").append(std::to_string(at));
      error_.append(" ").append(why);
    }
    return false;
  }
  /// Refuses the frame as a whole (its size, what follows its last field).
  bool refuse_frame(std::string_view why) {
    if (error_.empty()) error_.append(frame_).append(" frame ").append(why);
    return false;
  }
  [[nodiscard]] Status status() const { return {ErrorCode::malformed_packet, error_}; }

 private:
  std::span<const std::uint8_t> bytes_;
  const char* frame_;
  std::size_t pos_ = 0;
  std::size_t last_ = 0;
  std::string error_;
};

}  // namespace sightline::demo
