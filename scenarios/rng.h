// A small seeded generator with platform-independent output (std distributions are not).
#pragma once

#include <cmath>
#include <cstdint>

namespace sightline::scenarios {

/// SplitMix64: fast, full period, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 24 bits of mantissa.
  float uniform() noexcept { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi) noexcept { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n), n > 0.
  std::uint32_t below(std::uint32_t n) noexcept {
    return static_cast<std::uint32_t>((next() >> 32) * n >> 32);
  }

 private:
  std::uint64_t state_;
};

}  // namespace sightline::scenarios
