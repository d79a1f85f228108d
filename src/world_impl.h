// The World's private state: entities and clients as structure of arrays, the grid, scratch.
#pragma once

#include <cstdint>
#include <vector>

#include "grid.h"
#include "sightline/world.h"

namespace sightline {

/// A client's slice of one of the shared per-tick arrays.
struct Slice {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

/// Per-client state. Its set and records live in the World's shared arrays: one array per kind
/// for all clients grows far less often than one per client, since the totals are much steadier
/// than any one client's counts (this is what keeps steady ticks allocation-free).
struct ClientSlot {
  std::uint32_t generation = 0;
  bool alive = false;
  std::uint32_t viewer = 0;  // entity index
  Slice members;             // into WorldImpl::members[current], sorted by index
  Slice spawns;
  Slice updates;
  Slice despawns;
};

/// Reusable per-pass scratch, sized to the entity slots. One per worker when passes run in
/// parallel.
struct PassScratch {
  std::vector<std::uint32_t> stamp;     // per entity slot: == epoch when already handled this pass
  std::uint32_t epoch = 0;
  std::vector<EntityId> kept;           // members that survive the leave phase
  std::vector<std::uint32_t> entering;  // candidate indices found this pass
};

class WorldImpl {
 public:
  explicit WorldImpl(const WorldDef& def);

  void run_tick(TickStats& stats);

  WorldDef def;
  float enter_radius;
  float leave_radius;
  std::vector<float> tier_limit2;        // squared distance bounds of each tier
  std::vector<std::uint32_t> tier_period;

  // Entities, structure of arrays, indexed by slot.
  std::vector<float> xs;
  std::vector<float> zs;
  std::vector<std::uint32_t> generation;
  std::vector<std::uint8_t> alive;
  std::vector<std::uint8_t> always;
  std::vector<std::uint32_t> viewer_refs;  // clients viewing from this entity
  std::vector<std::uint32_t> free_entities;
  std::vector<std::uint32_t> destroyed;    // released after the next tick
  std::vector<std::uint32_t> always_list;  // sorted entity indices
  std::uint32_t live_entities = 0;

  std::vector<ClientSlot> client_slots;
  std::vector<std::uint32_t> free_clients;
  std::vector<ClientId> live_clients;      // sorted by index

  // Shared per-tick outputs. Sets are double-buffered: a tick reads members[current] and
  // writes members[1 - current].
  std::vector<EntityId> members[2];
  int current = 0;
  std::vector<SpawnRecord> spawns;
  std::vector<UpdateRecord> updates;
  std::vector<DespawnRecord> despawns;
  std::uint64_t high_water_members = 0;

  Grid grid;
  PassScratch scratch;
  std::uint64_t ticks = 0;

  [[nodiscard]] Status check(EntityId id) const;
  [[nodiscard]] Status check(ClientId id) const;
  void set_radii(float enter, float leave);
  void reserve_outputs(std::uint64_t member_total);

 private:
  void client_pass(ClientSlot& client, PassScratch& scratch, TickStats& stats);
};

}  // namespace sightline
