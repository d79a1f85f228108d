// A large World for the tests of threads and allocation: entities on a square lattice, 1 apart,
// a client on every k-th, R = 4 and L = 5 (about 50 members a client), jittered about their
// places so the world keeps its box.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "rng.h"
#include "sightline/world.h"

namespace sightline::testing {

/// default_world_def() at the lattice's radii.
inline WorldDef lattice_world_def() {
  WorldDef def = default_world_def();
  def.enter_radius = 4.0f;
  def.leave_radius = 5.0f;
  return def;
}

struct LatticeWorld {
  /// side x side entities, a client's viewer on every `every_client`-th; `def` must be valid.
  LatticeWorld(const WorldDef& def, std::uint32_t side, std::uint32_t every_client)
      : world(std::move(World::create(def).value())) {
    for (std::uint32_t i = 0; i < side * side; ++i) {
      home_x.push_back(static_cast<float>(i % side));
      home_z.push_back(static_cast<float>(i / side));
      ids.push_back(*world.create_entity({home_x.back(), home_z.back()}));
    }
    for (std::size_t i = 0; i < ids.size(); i += every_client) (void)*world.create_client(ids[i]);
    xs = home_x;
    zs = home_z;
  }

  /// Each entity to within `reach` of its place, then a tick.
  void jitter_and_tick(scenarios::Rng& rng, float reach) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      xs[i] = home_x[i] + rng.uniform(-reach, reach);
      zs[i] = home_z[i] + rng.uniform(-reach, reach);
    }
    if (!world.set_positions(ids, xs, zs).ok()) std::abort();
    world.tick();
  }

  World world;
  std::vector<EntityId> ids;
  std::vector<float> home_x, home_z;  // each entity's place on the lattice
  std::vector<float> xs, zs;          // where the last jitter put them
};

}  // namespace sightline::testing
