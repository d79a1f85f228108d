// The per-tick output: for each client, spans of spawn, update and despawn records.
#pragma once

#include <cstdint>
#include <span>

#include "sightline/events.h"
#include "sightline/export.h"
#include "sightline/handles.h"

namespace sightline {

/// Why an entity entered a client's interest set.
enum class SpawnReason : std::uint8_t {
  near = 0,       ///< Came within the enter radius of the client's viewer.
  always = 1,     ///< Always relevant: held by every client without a radius test.
  key = 2,        ///< Admitted at any distance by a subscription with bypass_distance.
  owner = 3,      ///< Owned by the client: held at any distance, whatever its key.
  origin = 4,     ///< One of the client's origins is in its attachment tree (World::add_origin).
  attached = 5,   ///< Attached to an entity the client holds: arrives with its tree's root.
  teleport = 6,   ///< Came within the enter radius because it was teleported (World::teleport).
  presenter = 7,  ///< A presenter: held by every client of its space whose key admits it.
  unculled = 8,   ///< Its space does not cull (culling off, or below the broadcast threshold).
};

/// Why an entity left a client's interest set. A client must not play a death for `left`.
enum class DespawnReason : std::uint8_t {
  left = 0,       ///< Walked beyond the leave radius (or stopped being relevant, or withdrawn). Not a death.
  destroyed = 1,  ///< The entity was destroyed.
  key_removed = 2,       ///< The entity's key no longer admits the client (key or subscription changed).
  space_changed = 3,     ///< The entity, or the client's viewer, is now in another space.
  culling_switched = 4,  ///< Beyond the leave radius at the tick its space turned culling on.
  hidden = 5,            ///< Out of sight for longer than its space's visibility hold.
};

/// Stable names of the reasons, their enumerators' spelling ("near", "key_removed"); "unknown"
/// for a value outside the enum. The strings are static: never freed, safe from any thread.
[[nodiscard]] SIGHTLINE_API const char* spawn_reason_name(SpawnReason reason) noexcept;
[[nodiscard]] SIGHTLINE_API const char* despawn_reason_name(DespawnReason reason) noexcept;

/// The entity entered the set this tick. The caller writes the entity's full state for it:
/// the client knows nothing about the entity yet.
struct SpawnRecord {
  EntityId entity;
  SpawnReason reason = SpawnReason::near;
  /// True when the entity was created since the World's previous tick (this tick is its first):
  /// a game plays its appearance (a spawn effect). False when it existed already and came into
  /// the set (walked into range, was attached, keyed, ...): nothing to play. The counterpart of
  /// a despawn's `destroyed` against `left`.
  bool created = false;
};

/// The entity left the set this tick; the client should forget it.
struct DespawnRecord {
  EntityId entity;
  DespawnReason reason = DespawnReason::left;
};

/// One client's records for the last tick. Updates are sorted by entity index, ascending.
/// Spawns are sorted by attachment depth (a root is depth 0), then entity index, so a parent
/// always comes before what is attached to it; despawns by depth descending, then index, so an
/// attachment always goes before its parent (a destroyed entity sorts at the depth it had when it
/// was destroyed). Without attachments all three are sorted by index.
/// Within a tick, apply despawns, then spawns, then updates: no entity appears in both despawns
/// and spawns of one tick, and every updated entity is a member after the tick. Events come after
/// all three: the subject of a record is held after the tick (a member, or the client's viewer),
/// or null, or the class sends it as is (EventClassDef::when_absent).
/// The spans are valid until the next call to World::tick() or until the World is destroyed or
/// moved; do not store them.
struct ClientStream {
  std::span<const SpawnRecord> spawns;
  /// The members due for an update this tick (a delta is enough), by the schedule in World's
  /// class comment (world.h): a member spawned this tick is here only when it is due, and a
  /// serializer may fold its update into the spawn's full state. When every member is due (no
  /// tiers and no key rates) this is the interest set itself, the same memory as
  /// World::interest_set(): an update list costs nothing to build.
  std::span<const EntityId> updates;
  std::span<const DespawnRecord> despawns;
  /// The events this client received at the tick (World::emit_event), sorted by event index, at
  /// most one record per event.
  std::span<const EventRecord> events;
};

/// Totals over all clients for one tick.
struct TickStats {
  std::uint64_t tick = 0;  ///< Index of the tick just run; the first tick is 0.
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;
  std::uint64_t despawns = 0;
  /// Point-to-origin distance tests: one per member checked against the leave radius, and one
  /// per entity found in the scanned cells (the enter test runs over whole cell runs, members
  /// and the viewer included, before membership is looked at).
  std::uint64_t distance_tests = 0;
  /// Every entity found in the scanned cells, members and the viewer included (with a crowd cap,
  /// a densely filled cell counts only the part of it a scan reads: see WorldDef::crowd_cap).
  std::uint64_t cell_candidates = 0;
  std::uint64_t members = 0;        ///< Sum of interest set sizes after the tick.
  std::uint64_t events = 0;         ///< Events delivered this tick (emitted since the last one).
  std::uint64_t event_records = 0;  ///< Event records over all clients.
  /// Clients that took the plain pass: the same records as the general pass, at a fraction of its
  /// fixed cost per client. WorldDef::fast_paths says which clients take it.
  std::uint64_t plain_passes = 0;
};

}  // namespace sightline
