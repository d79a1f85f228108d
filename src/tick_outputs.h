// What the client passes of a tick write, each client's part a slice of every array.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "record_buffer.h"
#include "sightline/stream.h"

namespace sightline {

/// The six outputs of the client passes: the sets (each sorted by index), beside them each
/// member's last sighting (clients with sight) and update period (while periods are recorded),
/// and the spawn, update and despawn records. The World keeps one for the tick, each worker one
/// for its share of the clients.
struct TickOutputs {
  RecordBuffer<EntityId> members;
  RecordBuffer<std::uint64_t> seen;
  RecordBuffer<std::uint32_t> periods;
  RecordBuffer<SpawnRecord> spawns;
  RecordBuffer<EntityId> updates;
  RecordBuffer<DespawnRecord> despawns;
  std::uint64_t reserved_for_members = 0;  // largest total set size the last reserve covers

  /// The sizes of the six, in the order above.
  using Sizes = std::array<std::size_t, 6>;

  [[nodiscard]] Sizes sizes() const noexcept {
    return {members.size(), seen.size(), periods.size(), spawns.size(), updates.size(), despawns.size()};
  }

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

  /// Sets every size (the elements beyond the old sizes unwritten).
  void resize(const Sizes& to) {
    members.resize_unwritten(to[0]);
    seen.resize_unwritten(to[1]);
    periods.resize_unwritten(to[2]);
    spawns.resize_unwritten(to[3]);
    updates.resize_unwritten(to[4]);
    despawns.resize_unwritten(to[5]);
  }

  /// Copies part `part` of `parts` (equal slices) of all six into `to`, each at its offset in `at`
  /// (room already made there): `parts` threads copy one share's outputs side by side.
  void copy_part_into(TickOutputs& to, const Sizes& at, std::uint32_t part, std::uint32_t parts) const {
    auto place = [part, parts](const auto& from, auto& into, std::size_t offset) {
      const std::size_t first = from.size() * part / parts;
      const std::size_t last = from.size() * (part + 1) / parts;
      std::copy(from.begin() + static_cast<std::ptrdiff_t>(first),
                from.begin() + static_cast<std::ptrdiff_t>(last),
                into.begin() + static_cast<std::ptrdiff_t>(offset + first));
    };
    place(members, to.members, at[0]);
    place(seen, to.seen, at[1]);
    place(periods, to.periods, at[2]);
    place(spawns, to.spawns, at[3]);
    place(updates, to.updates, at[4]);
    place(despawns, to.despawns, at[5]);
  }
};

}  // namespace sightline
