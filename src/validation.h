// Checks shared by World::create and the World's setters.
#pragma once

#include <string>

#include "sightline/handles.h"
#include "sightline/status.h"
#include "sightline/world_def.h"

namespace sightline {

/// enter in (0, kMaxRadius], leave in [enter, kMaxRadius], both finite.
[[nodiscard]] Status validate_radii(float enter, float leave);
/// x and z finite and within kMaxCoordinate; the message names `entity`.
[[nodiscard]] Status validate_position(EntityId entity, float x, float z);

/// radius finite and in [0, kMaxRadius]; the message names `entity`.
[[nodiscard]] Status validate_bound_radius(EntityId entity, float radius);
/// scale finite and in [kMinRadiusScale, kMaxRadiusScale]; the message names `entity`.
[[nodiscard]] Status validate_radius_scale(EntityId entity, float scale);

/// A client's view radii (World::set_view_radius's rule); the message names `who`.
[[nodiscard]] Status validate_view_radius(const std::string& who, float enter_radius, float leave_radius);
/// seconds in [0, kMaxLookAhead]; the message names `who`.
[[nodiscard]] Status validate_look_ahead(const std::string& who, float seconds);

}  // namespace sightline
