#include "jitter_walk.h"

#include <cmath>
#include <numbers>

namespace sightline::scenarios {

namespace {

// Mirror v into [0, limit] and report whether it bounced.
bool reflect(float& v, float limit) {
  bool bounced = false;
  if (v < 0.0f) {
    v = -v;
    bounced = true;
  }
  if (v > limit) {
    v = 2.0f * limit - v;
    bounced = true;
  }
  if (v < 0.0f || v > limit) v = std::fmin(std::fmax(v, 0.0f), limit);
  return bounced;
}

}  // namespace

JitterWalk::JitterWalk(const JitterWalkDef& def) : def_(def), rng_(def.seed) {
  xs_.resize(def.entities);
  zs_.resize(def.entities);
  heading_.resize(def.entities);
  for (std::uint32_t i = 0; i < def.entities; ++i) {
    xs_[i] = rng_.uniform(0.0f, def.width);
    zs_[i] = rng_.uniform(0.0f, def.height);
    heading_[i] = rng_.uniform(0.0f, 2.0f * std::numbers::pi_v<float>);
  }
}

void JitterWalk::step() {
  const float dt = 1.0f / def_.hz;
  const float turn = def_.turn * std::sqrt(dt) * std::numbers::sqrt3_v<float>;
  const float stride = def_.speed * dt;
  for (std::size_t i = 0; i < xs_.size(); ++i) {
    heading_[i] += rng_.uniform(-turn, turn);
    float x = xs_[i] + stride * std::cos(heading_[i]) + rng_.uniform(-def_.jitter, def_.jitter);
    float z = zs_[i] + stride * std::sin(heading_[i]) + rng_.uniform(-def_.jitter, def_.jitter);
    if (reflect(x, def_.width)) heading_[i] = std::numbers::pi_v<float> - heading_[i];
    if (reflect(z, def_.height)) heading_[i] = -heading_[i];
    xs_[i] = x;
    zs_[i] = z;
  }
}

}  // namespace sightline::scenarios
