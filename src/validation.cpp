#include "validation.h"

#include <cmath>
#include <string>

#include "format_value.h"

namespace sightline {

Status validate_radii(float enter, float leave) {
  if (!(enter >= kMinRadius && enter <= kMaxRadius)) {
    return {ErrorCode::invalid_def, "enter_radius is " + format_value(enter) + ": must be in [" +
                                        format_value(kMinRadius) + ", " + format_value(kMaxRadius) + "]"};
  }
  if (!std::isfinite(leave) || leave > kMaxRadius) {
    return {ErrorCode::invalid_def,
            "leave_radius is " + format_value(leave) + ": must be finite and <= " + format_value(kMaxRadius)};
  }
  if (leave < enter) {
    return {ErrorCode::invalid_def, "leave_radius is " + format_value(leave) + ": must be >= enter_radius (" +
                                        format_value(enter) + ")"};
  }
  return {};
}

Status validate(const WorldDef& def) {
  if (Status s = validate_radii(def.enter_radius, def.leave_radius); !s) return s;
  if (def.cell_size != 0.0f &&
      (!std::isfinite(def.cell_size) || def.cell_size < def.enter_radius || def.cell_size > kMaxRadius)) {
    return {ErrorCode::invalid_def, "cell_size is " + format_value(def.cell_size) +
                                        ": must be 0 (use enter_radius) or finite, >= enter_radius (" +
                                        format_value(def.enter_radius) +
                                        ") and <= " + format_value(kMaxRadius)};
  }
  if (def.max_grid_cells == 0) {
    return {ErrorCode::invalid_def, "max_grid_cells is 0: must be >= 1"};
  }
  if (def.threads < 1 || def.threads > kMaxThreads) {
    return {ErrorCode::invalid_def,
            "threads is " + std::to_string(def.threads) + ": must be in 1.." + std::to_string(kMaxThreads)};
  }
  if ((def.enqueue_task == nullptr) != (def.finish_task == nullptr)) {
    return {ErrorCode::invalid_def,
            def.enqueue_task == nullptr
                ? "enqueue_task is null while finish_task is set: set both or neither"
                : "finish_task is null while enqueue_task is set: set both or neither"};
  }
  if (def.order_key != OrderKey::slot && def.order_key != OrderKey::external) {
    return {ErrorCode::invalid_def, "order_key is " + std::to_string(static_cast<unsigned>(def.order_key)) +
                                        ": must be OrderKey::slot (0) or OrderKey::external (1)"};
  }
  float previous = 0.0f;
  for (std::size_t i = 0; i < def.tiers.size(); ++i) {
    const DistanceTier& tier = def.tiers[i];
    const std::string name = "tiers[" + std::to_string(i) + "]";
    if (std::isnan(tier.max_distance_fraction) || tier.max_distance_fraction <= previous) {
      return {ErrorCode::invalid_def,
              name + ".max_distance_fraction is " + format_value(tier.max_distance_fraction) +
                  ": must be > 0 and greater than the previous tier's (" + format_value(previous) + ")"};
    }
    if (tier.period < 1 || tier.period > kMaxPeriod) {
      return {ErrorCode::invalid_def,
              name + ".period is " + std::to_string(tier.period) + ": must be in 1..65535"};
    }
    previous = tier.max_distance_fraction;
  }
  return {};
}

Status validate_position(EntityId entity, float x, float z) {
  auto bad = [](float v) { return !std::isfinite(v) || std::fabs(v) > kMaxCoordinate; };
  if (bad(x) || bad(z)) {
    return {ErrorCode::non_finite_position,
            "position of " + describe(entity) + " is (" + format_value(x) + ", " + format_value(z) +
                "): x and z must be finite and within +-" + format_value(kMaxCoordinate)};
  }
  return {};
}

Status validate_bound_radius(EntityId entity, float radius) {
  if (!(radius >= 0.0f && radius <= kMaxRadius)) {
    return {ErrorCode::invalid_argument, "bound_radius of " + describe(entity) + " is " +
                                             format_value(radius) + ": must be in [0, " +
                                             format_value(kMaxRadius) + "]"};
  }
  return {};
}

Status validate_radius_scale(EntityId entity, float scale) {
  if (!(scale >= kMinRadiusScale && scale <= kMaxRadiusScale)) {
    return {ErrorCode::invalid_argument,
            "radius_scale of " + describe(entity) + " is " + format_value(scale) + ": must be in [" +
                format_value(kMinRadiusScale) + ", " + format_value(kMaxRadiusScale) + "]"};
  }
  return {};
}

Status validate_view_radius(const std::string& who, float enter_radius, float leave_radius) {
  const std::string of = " of " + who + " is ";
  if (enter_radius == 0.0f) {
    if (leave_radius != 0.0f) {
      return {ErrorCode::invalid_argument, "view leave radius" + of + format_value(leave_radius) +
                                               ": must be 0 when the enter radius is 0"};
    }
  } else if (!(enter_radius >= kMinRadius && enter_radius <= kMaxRadius)) {
    return {ErrorCode::invalid_argument,
            "view radius" + of + format_value(enter_radius) + ": must be 0 (the space's radii) or in [" +
                format_value(kMinRadius) + ", " + format_value(kMaxRadius) + "]"};
  } else if (leave_radius != 0.0f && !(leave_radius >= enter_radius && leave_radius <= kMaxRadius)) {
    return {ErrorCode::invalid_argument, "view leave radius" + of + format_value(leave_radius) +
                                             ": must be 0 (the space's proportion) or in [" +
                                             format_value(enter_radius) + ", " + format_value(kMaxRadius) +
                                             "]"};
  }
  return {};
}

Status validate_look_ahead(const std::string& who, float seconds) {
  if (!(seconds >= 0.0f && seconds <= kMaxLookAhead)) {
    return {ErrorCode::invalid_argument, "look-ahead of " + who + " is " + format_value(seconds) +
                                             " s: must be in [0, " + format_value(kMaxLookAhead) + "]"};
  }
  return {};
}

}  // namespace sightline
