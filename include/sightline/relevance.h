// The answer to "why does this client hold (or not hold) this entity?" (World::why).
#pragma once

#include <cstdint>

#include "sightline/handles.h"

namespace sightline {

/// The rule that decided, in the order World applies them (docs/relevance.md).
enum class Rule : std::uint8_t {
  viewer = 0,         ///< Not held: the client's own viewer is never sent.
  other_space = 1,    ///< Not held: the entity and the client's viewer are in different spaces.
  always = 2,         ///< Held: always relevant (or something in its attachment tree is).
  owner = 3,          ///< Held: the client owns something in its attachment tree.
  origin = 4,         ///< Held: one of the client's origins is in its attachment tree.
  key_excluded = 5,   ///< Not held: its (root's) key does not admit the client.
  presenter = 6,      ///< Held: a presenter of the client's space.
  key_bypass = 7,     ///< Held: a bypass_distance subscription admits it.
  unculled = 8,       ///< Held: its space does not cull (off, broadcasting).
  near = 9,           ///< Held: within the enter radius of an origin (a member or not).
  within_leave = 10,  ///< Held: a member beyond the enter radius, within the leave radius (hysteresis).
  out_of_range = 11,  ///< Not held: beyond the enter radius (or the leave radius, for a member).
  hidden = 12,        ///< Not held: in range but out of sight (walls, filter; beyond the hold).
  crowded = 13,       ///< Not held: in range and in sight, but beyond the crowd cap (WorldDef::crowd_cap).
};

/// The rule's stable name, its enumerator's spelling ("within_leave"); "unknown" for a value
/// outside the enum. The string is static: never freed, safe from any thread.
[[nodiscard]] const char* rule_name(Rule rule) noexcept;

/// World::why's answer.
struct Why {
  bool held = false;  ///< Whether the rule admits the entity.
  Rule rule = Rule::out_of_range;
  /// The root of the entity's attachment tree, whose rule decided (the entity itself when it is
  /// not attached): an attached entity is held exactly when its tree is.
  EntityId root;
};

/// A client's enter and leave radii: those its distance rules used at a tick
/// (World::client_radii), or those it asked for (World::view_radius).
struct ClientRadii {
  float enter_radius = 0.0f;  ///< World units.
  float leave_radius = 0.0f;  ///< World units.
};

}  // namespace sightline
