#include "jitter_walk.h"

#include <algorithm>
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
  const std::uint32_t n = def.entities;
  xs_.resize(n);
  zs_.resize(n);
  heading_.resize(n);
  lo_x_.assign(n, 0.0f);
  lo_z_.assign(n, 0.0f);
  hi_x_.assign(n, def.width);
  hi_z_.assign(n, def.height);
  if (def.hotspots != 0) {
    const float side_x = std::fmin(def.hotspot_size, def.width);
    const float side_z = std::fmin(def.hotspot_size, def.height);
    std::vector<float> cx(def.hotspots), cz(def.hotspots);
    for (std::uint32_t h = 0; h < def.hotspots; ++h) {
      cx[h] = rng_.uniform(0.0f, def.width - side_x);
      cz[h] = rng_.uniform(0.0f, def.height - side_z);
    }
    const auto crowded =
        static_cast<std::uint32_t>(std::lround(static_cast<double>(def.hotspot_fraction) * n));
    for (std::uint32_t i = 0; i < crowded && i < n; ++i) {
      const std::uint32_t h = i % def.hotspots;
      lo_x_[i] = cx[h];
      lo_z_[i] = cz[h];
      hi_x_[i] = cx[h] + side_x;
      hi_z_[i] = cz[h] + side_z;
    }
  }
  walkers_ = n - std::min(def.far_entities, n);
  for (std::uint32_t i = walkers_; i < n; ++i) {
    xs_[i] = def.far_x;
    zs_[i] = def.far_z;
  }
  for (std::uint32_t i = 0; i < walkers_; ++i) {
    xs_[i] = rng_.uniform(lo_x_[i], hi_x_[i]);
    zs_[i] = rng_.uniform(lo_z_[i], hi_z_[i]);
    heading_[i] = rng_.uniform(0.0f, 2.0f * std::numbers::pi_v<float>);
  }
}

void JitterWalk::step() {
  const float dt = 1.0f / def_.hz;
  const float turn = def_.turn * std::sqrt(dt) * std::numbers::sqrt3_v<float>;
  const float stride = def_.speed * dt;
  for (std::size_t i = 0; i < walkers_; ++i) {
    heading_[i] += rng_.uniform(-turn, turn);
    float x = xs_[i] + stride * std::cos(heading_[i]) + rng_.uniform(-def_.jitter, def_.jitter) - lo_x_[i];
    float z = zs_[i] + stride * std::sin(heading_[i]) + rng_.uniform(-def_.jitter, def_.jitter) - lo_z_[i];
    if (reflect(x, hi_x_[i] - lo_x_[i])) heading_[i] = std::numbers::pi_v<float> - heading_[i];
    if (reflect(z, hi_z_[i] - lo_z_[i])) heading_[i] = -heading_[i];
    xs_[i] = x + lo_x_[i];
    zs_[i] = z + lo_z_[i];
    if (def_.teleport_fraction > 0.0f && rng_.uniform() < def_.teleport_fraction) {
      xs_[i] = rng_.uniform(lo_x_[i], hi_x_[i]);
      zs_[i] = rng_.uniform(lo_z_[i], hi_z_[i]);
    }
  }
}

}  // namespace sightline::scenarios
