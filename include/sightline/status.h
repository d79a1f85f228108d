// Errors by kind: a Status the caller can test, and Result<T> for calls that make something.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "sightline/export.h"

namespace sightline {

/// What went wrong. Each refused call leaves the world (or mirror) exactly as it was.
enum class ErrorCode : std::uint8_t {
  ok = 0,
  invalid_def,          ///< A WorldDef field is out of range; the message names the field and value.
  invalid_argument,     ///< An argument is out of range; the message names it and its value.
  null_handle,          ///< A handle with generation 0 (never created) was passed.
  stale_handle,         ///< The handle's slot was destroyed or reused: the generation does not match.
  non_finite_position,  ///< A position is NaN, infinite or beyond kMaxCoordinate.
  entity_is_viewer,  ///< The entity is some client's viewer; destroy the client or change its viewer first.
  malformed_packet,  ///< Bytes from the network do not decode; the message says where and why.
};

/// Short stable name of an error code, e.g. "stale_handle".
[[nodiscard]] SIGHTLINE_API const char* error_code_name(ErrorCode code) noexcept;

/// The outcome of a call that can be refused. Cheap to return when ok (no allocation);
/// an error carries a message naming the field, handle and value involved.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] bool ok() const noexcept { return code_ == ErrorCode::ok; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  /// Empty when ok. Otherwise, for example: "leave_radius is 1.5: must be >= enter_radius (1.6)".
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_ = ErrorCode::ok;
  std::string message_;
};

namespace detail {
/// Prints the status message to stderr and aborts: reading the value of a failed Result is a
/// programmer error, reported loudly rather than left undefined.
[[noreturn]] SIGHTLINE_API void fail_on_empty_result(const Status& status) noexcept;
}  // namespace detail

/// A value, or the Status that explains why there is none. Check ok() (or the bool conversion)
/// before reading the value; reading the value of a failed Result aborts with its message.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return status_.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] const Status& status() const noexcept { return status_; }

  [[nodiscard]] T& value() & noexcept { return checked(); }
  [[nodiscard]] const T& value() const& noexcept { return checked(); }
  /// On a temporary Result the value is moved out, so `for (auto e : *world.interest_set(c))`
  /// iterates a live value rather than a member of a destroyed temporary.
  [[nodiscard]] T value() && { return std::move(checked()); }
  T* operator->() noexcept { return &checked(); }
  const T* operator->() const noexcept { return &checked(); }
  T& operator*() & noexcept { return checked(); }
  const T& operator*() const& noexcept { return checked(); }
  T operator*() && { return std::move(checked()); }

 private:
  T& checked() noexcept {
    if (!value_) detail::fail_on_empty_result(status_);
    return *value_;
  }
  const T& checked() const noexcept {
    if (!value_) detail::fail_on_empty_result(status_);
    return *value_;
  }

  std::optional<T> value_;
  Status status_;
};

}  // namespace sightline
