// The seeded jittering walk: the motion model of the reference run (see README, "Motion model").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "rng.h"

namespace sightline::scenarios {

struct JitterWalkDef {
  std::uint32_t entities = 120;
  float width = 12.0f;    ///< World is [0, width] x [0, height], world units.
  float height = 7.5f;
  float hz = 20.0f;       ///< Ticks per second.
  std::uint64_t seed = 1;
  float speed = 0.5f;     ///< Walking speed, units per second.
  float turn = 1.0f;      ///< Heading random walk, radians per sqrt(second).
  float jitter = 0.02f;   ///< Side-to-side noise, units per tick, uniform in [-jitter, jitter] per axis.
};

/// Entities start uniformly in the world with random headings. Each tick, each entity turns by
/// a random amount (turn * sqrt(dt) * uniform[-sqrt3, sqrt3], unit variance), walks speed * dt
/// along its heading, and is displaced by the jitter; walls reflect both position and heading.
class JitterWalk {
 public:
  explicit JitterWalk(const JitterWalkDef& def);

  /// Advances every entity by one tick.
  void step();

  [[nodiscard]] std::span<const float> xs() const noexcept { return xs_; }
  [[nodiscard]] std::span<const float> zs() const noexcept { return zs_; }
  [[nodiscard]] const JitterWalkDef& def() const noexcept { return def_; }

 private:
  JitterWalkDef def_;
  Rng rng_;
  std::vector<float> xs_;
  std::vector<float> zs_;
  std::vector<float> heading_;
};

}  // namespace sightline::scenarios
