// The Replicator's narrow view of a World: what the last tick produced (sets, records, periods,
// teleported roots, origins) and the entity arrays it ranks members by, as pointers into the
// World's own arrays. The Replicator reads a World through this header alone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "entity_cold.h"
#include "sightline/handles.h"
#include "sightline/status.h"
#include "sightline/stream.h"
#include "sightline/world_def.h"

namespace sightline {

class TaskRunner;
class World;
class WorldImpl;

/// The World after its last tick. Every pointer is into an array indexed by entity slot, of
/// entity_slots elements. Valid until the World changes (a tick, a new entity).
struct TickView {
  static constexpr std::uint32_t kNoParent = kNoEntity;

  std::uint64_t ticks = 0;  // ticks run so far
  std::size_t entity_slots = 0;
  const std::uint8_t* alive = nullptr;
  const std::uint32_t* generation = nullptr;
  const float* xs = nullptr;
  const float* zs = nullptr;
  const float* bound = nullptr;                     // bounding-sphere radius; 0 for a point
  const float* scale = nullptr;                     // radius scale; 1 by default
  const EntityCold* cold = nullptr;                 // parent (kNoParent for a root), depth, velocity
  bool attachments = false;                         // false: every entity is its own root
  std::span<const std::uint32_t> teleported_roots;  // roots of the trees teleported for the last tick
  std::span<const ClientId> live_clients;           // sorted by index
  // The live clients' slots with neighbours together (the order the tick passed them in), or
  // empty where that order is no better than live_clients' or no longer covers them.
  std::span<const std::uint32_t> nearby_order;
  std::uint64_t members = 0;          // the sum of the live clients' set sizes
  std::uint32_t thread_min_work = 0;  // WorldDef's: less work than this runs on one thread
  std::size_t client_slots = 0;
  std::span<const EventDef> events;  // delivered at the last tick, in emit order

  [[nodiscard]] std::uint32_t root_of(std::uint32_t e) const noexcept {
    while (cold[e].parent != kNoParent) e = cold[e].parent;
    return e;
  }
};

/// One client's part of the last tick. Valid as TickView is.
struct ClientTick {
  std::uint32_t viewer = 0;                // entity index
  bool origins_changed = false;            // its origins changed for the last tick: every member was due
  std::span<const EntityId> members;       // its set, sorted by index
  const std::uint32_t* periods = nullptr;  // beside members: each one's update period; null when not recorded
  std::span<const SpawnRecord> spawns;
  std::span<const DespawnRecord> despawns;
  std::span<const EntityId> updates;
  std::span<const EventRecord> events;  // sorted by event index (TickView::events)
  bool culls = false;                   // the viewer's space culls by distance
  float enter = 0.0f;                   // the enter radius there
  // Its origins in the viewer's space, the viewer first.
  std::size_t origins = 0;
  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  std::array<std::uint32_t, kMaxOrigins + 1> origin_entity;
};

/// The Replicator's door into a World (its only friend): the views above, handle checks, and a
/// counted request that the World record per-member periods while someone reads them.
class TickSource {
 public:
  explicit TickSource(World& world) noexcept;

  [[nodiscard]] TickView view() const noexcept;
  /// `client_slot` must be a live client's.
  [[nodiscard]] ClientTick client(std::uint32_t client_slot) const noexcept;
  /// The def of the class an event of the last tick names (EventDef::event_class.index).
  [[nodiscard]] const EventClassDef& event_class(std::uint32_t index) const noexcept;
  /// Whether the live client in `client_slot` is subscribed to the key (interest_keys.h's stored
  /// form; 0, Global, admits everyone).
  [[nodiscard]] bool admits(std::uint32_t client_slot, std::uint64_t stored_key) const noexcept;
  /// The slot of the space the live client's viewer is in.
  [[nodiscard]] std::uint32_t space_slot(std::uint32_t client_slot) const noexcept;
  [[nodiscard]] Status check(SpaceId space) const;
  /// Whether the client's slot still holds that client.
  [[nodiscard]] bool holds(ClientId client) const noexcept;
  [[nodiscard]] std::size_t entity_slots() const noexcept;
  [[nodiscard]] Status check(ClientId client) const;
  [[nodiscard]] Status check(EntityId entity) const;
  /// Where the World runs its parallel work: a send runs its clients there too.
  [[nodiscard]] TaskRunner& tasks() const noexcept;
  /// Each request keeps periods recorded from the next tick on, until it is released.
  void request_periods() noexcept;
  void release_periods() noexcept;

 private:
  WorldImpl* world_;
};

}  // namespace sightline
