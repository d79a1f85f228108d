// Occlusion: static walls that block sight, and a hook for the game's own visibility test.
#pragma once

#include <cstdint>

#include "sightline/handles.h"
#include "sightline/limits.h"

namespace sightline {

/// A wall from (x0, z0) to (x1, z1), world units, on the ground plane; coordinates finite with
/// magnitude <= kMaxCoordinate. The segment is closed: a sight line that touches it, even at an
/// endpoint, is blocked. A wall of zero length is a post that blocks the lines through it.
struct WallSegment {
  float x0 = 0.0f;
  float z0 = 0.0f;
  float x1 = 0.0f;
  float z1 = 0.0f;
};

/// The game's own visibility test (fog of war, stealth, a line-of-sight query into its physics),
/// asked after the walls for an entity within range: true when `client` may see `entity` this
/// tick. It must be deterministic for the World to be, must not call back into the World, and
/// is called only from tick() and why(). `context` is the pointer given to set_visibility_filter.
using VisibilityFilter = bool (*)(void* context, ClientId client, EntityId entity);

/// An entity's velocity, world units per second (World::set_velocity).
struct Velocity {
  float x = 0.0f;
  float z = 0.0f;
};

}  // namespace sightline
