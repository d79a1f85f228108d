#include "recording_format.h"

namespace sightline::recording {

const char* op_name(std::uint8_t op) noexcept {
  static constexpr std::array<const char*, kLastOp + 1> kNames = {
      "unknown",
      "tick",
      "create_entity",
      "destroy_entity",
      "set_position",
      "set_positions",
      "set_bound_radius",
      "set_radius_scale",
      "set_always_relevant",
      "set_presenter",
      "teleport",
      "attach",
      "detach",
      "create_client",
      "destroy_client",
      "set_viewer",
      "add_origin",
      "remove_origin",
      "set_owner",
      "clear_owner",
      "set_area_interest_key",
      "set_user_interest_key",
      "set_global_interest_key",
      "set_area_subscriptions",
      "add_user_subscription",
      "remove_user_subscription",
      "clear_area_subscriptions",
      "clear_user_subscriptions",
      "clear_subscriptions",
      "create_space",
      "destroy_space",
      "set_space_def",
      "set_space",
      "set_culling_drill",
      "clear_culling_drill",
      "set_walls",
      "set_velocity",
      "set_look_ahead",
      "set_visibility_filter",
      "set_view_radius",
      "set_history_capacity",
      "set_radii",
      "set_crowd_cap",
      "create_event_class",
      "set_event_class",
      "emit_event",
      "withdraw_entity",
      "adopt_client",
  };
  return op <= kLastOp ? kNames[op] : "unknown";
}

}  // namespace sightline::recording
