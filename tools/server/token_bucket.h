// The per-connection frame limit of docs/demo_protocol.md: a token bucket.
#pragma once

#include <algorithm>
#include <chrono>

namespace sightline::demo {

/// Holds at most `capacity` tokens, starts full, and refills continuously at `per_second`.
/// Each frame takes one token; a frame that finds none is over the limit.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  TokenBucket(double capacity, double per_second, Clock::time_point now) noexcept
      : capacity_(capacity), per_second_(per_second), tokens_(capacity), refilled_(now) {}

  /// Takes one token at time `now` (not earlier than the last call); false when none is left.
  [[nodiscard]] bool take(Clock::time_point now) noexcept {
    const double elapsed = std::chrono::duration<double>(now - refilled_).count();
    tokens_ = std::min(capacity_, tokens_ + std::max(0.0, elapsed) * per_second_);
    refilled_ = now;
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  double capacity_;
  double per_second_;
  double tokens_;
  Clock::time_point refilled_;
};

}  // namespace sightline::demo
