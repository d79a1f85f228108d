// What the client passes of a tick write, each client's part a slice of every array.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record_buffer.h"
#include "sightline/stream.h"

namespace sightline {

/// The six outputs of the client passes: the sets (each sorted by index), beside them each
/// member's last sighting (clients with sight) and update period (while periods are recorded),
/// and the spawn, update and despawn records. The World keeps one per thread (OutputPart), each
/// holding the records of the clients one share of the tick passed.
struct TickOutputs {
  RecordBuffer<EntityId> members;
  RecordBuffer<std::uint64_t> seen;
  RecordBuffer<std::uint32_t> periods;
  RecordBuffer<SpawnRecord> spawns;
  RecordBuffer<EntityId> updates;
  RecordBuffer<DespawnRecord> despawns;
  std::uint64_t reserved_for_members = 0;  // largest total set size the last reserve covers

  void clear() noexcept {
    members.clear();
    seen.clear();
    periods.clear();
    spawns.clear();
    updates.clear();
    despawns.clear();
  }

  /// The one growth rule. Every array is bounded by a total set size (spawns, updates, periods and
  /// sightings by the new one, despawns by the old one). On a new high h beyond what the last
  /// reserve covers, every array is reserved to 3h: no later tick grows one until the total set
  /// size passes 3h, and the next reserve comes only once the high passes 2h, so steady ticks
  /// never allocate. Returns the capacity reserved, 0 when nothing was.
  std::size_t reserve_for(std::uint64_t member_total, bool with_periods) {
    if (member_total <= reserved_for_members) return 0;
    const auto capacity = static_cast<std::size_t>(3 * member_total + 192);
    members.reserve(capacity);
    seen.reserve(capacity);
    if (with_periods) periods.reserve(capacity);
    spawns.reserve(capacity);
    updates.reserve(capacity);
    despawns.reserve(capacity);
    reserved_for_members = 2 * member_total + 64;
    return capacity;
  }
};

}  // namespace sightline
