// The World's private state: entities and clients as structure of arrays, the grid, scratch.
#pragma once

#include <cstdint>
#include <vector>

#include "grid.h"
#include "sightline/world.h"

namespace sightline {

/// Per-client state. Buffers keep their capacity across ticks and across client slot reuse.
struct ClientSlot {
  std::uint32_t generation = 0;
  bool alive = false;
  std::uint32_t viewer = 0;             // entity index
  std::vector<EntityId> members;        // sorted by index
  std::vector<EntityId> next_members;   // built by the tick, then swapped with members
  std::vector<SpawnRecord> spawns;
  std::vector<UpdateRecord> updates;
  std::vector<DespawnRecord> despawns;
};

/// Reusable per-pass scratch. One per worker when passes run in parallel.
struct PassScratch {
  std::vector<std::uint32_t> stamp;     // per entity slot: == epoch when already handled this pass
  std::uint32_t epoch = 0;
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

  Grid grid;
  PassScratch scratch;
  std::uint64_t ticks = 0;

  [[nodiscard]] Status check(EntityId id) const;
  [[nodiscard]] Status check(ClientId id) const;
  void set_radii(float enter, float leave);

 private:
  void client_pass(ClientSlot& client, PassScratch& scratch, TickStats& stats);
};

}  // namespace sightline
