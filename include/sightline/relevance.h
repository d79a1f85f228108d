// The answer to "why does this client hold (or not hold) this entity?" (World::why).
#pragma once

#include <array>
#include <cstdint>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/limits.h"

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
[[nodiscard]] SIGHTLINE_API const char* rule_name(Rule rule) noexcept;

/// World::why's answer.
struct Why {
  bool held = false;  ///< Whether the rule admits the entity.
  Rule rule = Rule::out_of_range;
  /// The root of the entity's attachment tree, whose rule decided (the entity itself when it is
  /// not attached): an attached entity is held exactly when its tree is.
  EntityId root;
};

/// The grid of the last tick and the cells a client's enter scan reads in it (World::grid_scan):
/// what a debug view shades. Cell (x, z) spans [origin_x + x * cell_size, origin_x + (x + 1) *
/// cell_size) and likewise in z; the grid covers the entities of the last tick, and a cell on its
/// border also holds whatever lies beyond it on that side.
struct GridScan {
  float origin_x = 0.0f;  ///< World units: the low corner of cell (0, 0).
  float origin_z = 0.0f;
  float cell_size = 0.0f;  ///< World units (WorldDef::cell_size, or the world's enter radius).
  std::uint32_t cells_x = 0;
  std::uint32_t cells_z = 0;
  /// Inclusive cell bounds of one origin's scan.
  struct Cells {
    std::uint32_t x0 = 0, x1 = 0, z0 = 0, z1 = 0;
  };
  /// One range per origin of the client in its space (the viewer first, as World::origins
  /// lists the others): ranges[0, origins).
  std::array<Cells, kMaxOrigins + 1> ranges;
  std::uint32_t origins = 0;
  /// False where the client's space does not cull (nothing is scanned: every entity of the space
  /// is held); the ranges are then empty.
  bool culling = false;
};

/// A client's enter and leave radii: those its distance rules used at a tick
/// (World::client_radii), or those it asked for (World::view_radius).
struct ClientRadii {
  float enter_radius = 0.0f;  ///< World units.
  float leave_radius = 0.0f;  ///< World units.
};

}  // namespace sightline
