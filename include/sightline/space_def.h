// Configuration of a space (a room, an instance): whether it culls, its radii, its broadcast
// threshold. A plain struct with documented defaults, validated by World::create_space.
#pragma once

#include <cstdint>

#include "sightline/limits.h"

namespace sightline {

/// Whether a space culls by distance.
enum class Culling : std::uint8_t {
  /// Every client of the space may hold every entity of it: only keys filter. The default for a
  /// space that never asked for culling.
  off = 0,
  /// Entities are held by distance to the client's origins (enter radius, leave radius).
  on = 1,
};

/// A space's settings. A game with several kinds of room keeps one SpaceDef per kind; a field
/// left at 0 takes the World's value (its enter and leave radius at each tick), so a kind's own
/// settings win over the world's and a kind with none takes the world's.
struct SpaceDef {
  /// Off unless asked for.
  Culling culling = Culling::off;

  /// Radii when culling, world units, with the World's rules (enter in [kMinRadius, kMaxRadius],
  /// leave in [enter, kMaxRadius]). Both 0 (the default) takes the world's; give both or neither.
  float enter_radius = 0.0f;
  float leave_radius = 0.0f;

  /// The factor form instead: when radius > 0, enter = radius * enter_factor and
  /// leave = radius * leave_factor (in float), and enter_radius and leave_radius must be 0.
  /// radius in [kLeastInterestRadius, kMostInterestRadius]; enter_factor in (0, kMaxRadiusFactor];
  /// leave_factor in [enter_factor, kMaxRadiusFactor]. The defaults, 1.2 and 1.4, let an entity in
  /// at 1.2 x radius and out past 1.4 x, so one pacing at the edge does not flicker. The factors
  /// are checked only when radius > 0.
  float radius = 0.0f;
  float enter_factor = 1.2f;
  float leave_factor = 1.4f;

  /// The range of a client's own view radius (World::set_view_radius), world units: a client's
  /// enter radius R_c is its view radius raised to min_view_radius, then lowered to
  /// max_view_radius, with 0 meaning the space's enter radius for the maximum (so by default a
  /// client may narrow its view but not widen it: a wider view costs the server more cells a
  /// tick) and no lower bound for the minimum. Each 0 or in [kMinRadius, kMaxRadius]; when both
  /// are given, min_view_radius <= max_view_radius.
  float min_view_radius = 0.0f;
  float max_view_radius = 0.0f;

  /// Broadcast below a client count: while a culling space has at most this many clients (live
  /// clients whose viewer is in the space) it sends everything, as if culling were off; 0 (the
  /// default) never broadcasts. It switches to culling when the count rises above the
  /// threshold, and back only once the count is at most threshold - broadcast_margin (never, if
  /// the margin exceeds the threshold), so a count moving around the threshold does not flap.
  /// A space created with a threshold > 0 starts in broadcast mode. The mode is switched at the
  /// start of every tick while the threshold is > 0 (whatever `culling` says, so turning culling
  /// on later finds the mode the count implies); a threshold of 0 leaves it off.
  /// kRecommendedBroadcastThreshold suits spaces where every entity is a player.
  std::uint32_t broadcast_threshold = 0;
  std::uint32_t broadcast_margin = 2;

  /// Sight (World::set_walls, set_visibility_filter): a member out of sight stays held for this
  /// many ticks after it was last visible, so sight does not flicker at a corner. At most
  /// kMaxVisibilityHoldTicks; 0 lets it go at the first tick it is not visible.
  std::uint32_t visibility_hold_ticks = 10;
};

/// A broadcast threshold for spaces whose entities are the players themselves: a room of up to
/// ten players sends everything, as a small match or lobby would. Not the default: where entities
/// outnumber clients (NPCs, props), broadcasting to a few clients sends the whole space to each.
inline constexpr std::uint32_t kRecommendedBroadcastThreshold = 10;

/// What a space does as of the last tick (World::space_state).
struct SpaceState {
  bool culling = false;       ///< It culled at the last tick (setting, broadcast and drill applied).
  bool broadcasting = false;  ///< culling is on, no drill, and the space is in broadcast mode.
  bool drill = false;         ///< A culling drill forced culling on.
  float enter_radius = 0.0f;  ///< Radii used at the last tick when culling; 0 when not.
  float leave_radius = 0.0f;
  std::uint32_t clients = 0;   ///< Clients whose viewer was in the space at the last tick.
  std::uint32_t entities = 0;  ///< Live entities in the space now.
};

}  // namespace sightline
