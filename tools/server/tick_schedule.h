// When the server's ticks are due: tick i at start + i / rate, and a server more than a tick
// behind runs the latest due tick next instead of a burst of late ones.
#pragma once

#include <chrono>
#include <cstdint>

namespace sightline::demo {

class TickSchedule {
 public:
  using Clock = std::chrono::steady_clock;

  TickSchedule(Clock::time_point start, std::uint16_t rate) noexcept : start_(start), rate_(rate) {}

  /// When the next tick is due.
  [[nodiscard]] Clock::time_point next() const noexcept {
    return start_ + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::nanoseconds(index_ * 1'000'000'000ull / rate_));
  }

  /// The tick ran and finished at `now`: moves on to the next, skipping those already past.
  /// Returns how many were skipped.
  std::uint64_t advance(Clock::time_point now) noexcept {
    ++index_;
    const auto elapsed_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(now - start_).count());
    const std::uint64_t due =
        elapsed_ns / 1'000'000'000ull * rate_ + elapsed_ns % 1'000'000'000ull * rate_ / 1'000'000'000ull;
    if (due <= index_) return 0;
    const std::uint64_t skipped = due - index_;
    index_ = due;
    return skipped;
  }

 private:
  Clock::time_point start_;
  std::uint64_t index_ = 0;
  std::uint16_t rate_;
};

}  // namespace sightline::demo
