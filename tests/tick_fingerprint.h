// A hash of everything one tick produced: the stats, and every live client's records, events and
// set. Two runs of the same inputs agree tick by tick exactly when their hashes do.
#pragma once

#include <cstdint>

#include "sightline/world.h"

namespace sightline::testing {

/// FNV-1a over 64-bit values.
struct Fingerprint {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void add(EntityId e) { add((std::uint64_t{e.index} << 32) | e.generation); }
};

/// The hash of `world`'s last tick, whose stats are `stats` (all but plain_passes, which says
/// how, not what).
[[nodiscard]] inline std::uint64_t tick_fingerprint(const World& world, const TickStats& stats) {
  Fingerprint f;
  f.add(stats.tick);
  f.add(stats.spawns);
  f.add(stats.updates);
  f.add(stats.despawns);
  f.add(stats.distance_tests);
  f.add(stats.cell_candidates);
  f.add(stats.members);
  f.add(stats.event_records);
  for (const ClientId c : world.clients()) {
    f.add((std::uint64_t{c.index} << 32) | c.generation);
    const ClientStream s = *world.stream(c);
    for (const SpawnRecord& r : s.spawns)
      f.add((std::uint64_t{r.entity.index} << 8) | static_cast<std::uint8_t>(r.reason));
    for (const EntityId r : s.updates) f.add(r);
    for (const DespawnRecord& r : s.despawns)
      f.add((std::uint64_t{r.entity.index} << 8) | static_cast<std::uint8_t>(r.reason));
    for (const EventRecord& r : s.events) f.add(r.event);
    for (const EntityId e : *world.interest_set(c)) f.add(e);
  }
  return f.h;
}

}  // namespace sightline::testing
