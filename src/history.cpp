// The flight recorder: for each client that has it on, its spawns and despawns with the distance
// and the rule at their tick, in a ring of its own (World::set_history_capacity, World::history).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sightline/world.h"
#include "world_impl.h"

namespace sightline {
namespace {

// From the client's nearest origin in the entity's space to the entity, at the tick just run.
float nearest_origin_distance(const WorldImpl& w, const ClientSlot& c, std::uint32_t e) {
  const std::uint32_t space = w.cold[e].space;
  float best = std::numeric_limits<float>::infinity();
  const auto consider = [&](std::uint32_t o) {
    if (w.cold[o].space == space) best = std::min(best, std::hypot(w.xs[e] - w.xs[o], w.zs[e] - w.zs[o]));
  };
  consider(c.viewer);
  for (const std::uint32_t o : c.extra_origins) consider(o);
  return best;
}

void push(WorldImpl::HistoryRing& ring, const HistoryEntry& entry) {
  const auto size = static_cast<std::uint32_t>(ring.entries.size());
  ring.entries[ring.next] = entry;
  ring.next = ring.next + 1 == size ? 0 : ring.next + 1;
  ring.count = std::min(ring.count + 1, size);
}

std::vector<HistoryEntry> kept(const WorldImpl::HistoryRing& ring, EntityId only) {
  std::vector<HistoryEntry> out;
  const auto size = static_cast<std::uint32_t>(ring.entries.size());
  for (std::uint32_t i = 0; i < ring.count; ++i) {
    const HistoryEntry& e = ring.entries[(ring.next + size - ring.count + i) % size];
    if (only.is_null() || e.entity == only) out.push_back(e);
  }
  return out;
}

}  // namespace

// After every tick: the recording clients' records of it, despawns first as they apply.
void WorldImpl::record_history(const World& world) {
  if (history_clients == 0) return;
  const std::uint64_t tick = ticks - 1;
  for (const ClientId id : live_clients) {
    if (id.index >= histories.size() || histories[id.index].generation != id.generation) continue;
    HistoryRing& ring = histories[id.index];
    const ClientSlot& c = client_slots[id.index];
    const ClientStream stream = *world.stream(id);
    const auto entry = [&](EntityId entity) {
      HistoryEntry h;
      h.tick = tick;
      h.entity = entity;
      h.distance = nearest_origin_distance(*this, c, entity.index);
      // A destroyed entity has no rule; asking why() would build a refusal's message.
      if (alive[entity.index] != 0 && live_generation[entity.index] == entity.generation) {
        if (const Result<Why> why = world.why(id, entity)) {
          h.rule_known = true;
          h.rule = why->rule;
        }
      }
      return h;
    };
    for (const DespawnRecord& d : stream.despawns) {
      HistoryEntry h = entry(d.entity);
      h.despawn_reason = d.reason;
      push(ring, h);
    }
    for (const SpawnRecord& s : stream.spawns) {
      HistoryEntry h = entry(s.entity);
      h.spawned = true;
      h.spawn_reason = s.reason;
      push(ring, h);
    }
  }
}

Status World::set_history_capacity(ClientId client, std::uint32_t capacity) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (capacity > kMaxHistoryEntries) {
    return {ErrorCode::invalid_argument, "history capacity is " + std::to_string(capacity) +
                                             ": must be at most kMaxHistoryEntries (" +
                                             std::to_string(kMaxHistoryEntries) + ")"};
  }
  if (w.histories.size() <= client.index) w.histories.resize(client.index + 1);
  WorldImpl::HistoryRing& ring = w.histories[client.index];
  const bool was_on = ring.generation != 0;
  if (was_on && capacity == ring.entries.size()) return {};  // kept as it is
  ring = WorldImpl::HistoryRing{};
  if (capacity > 0) {
    ring.generation = client.generation;
    ring.entries.resize(capacity);
  }
  w.history_clients = w.history_clients - (was_on ? 1 : 0) + (capacity > 0 ? 1 : 0);
  w.recorder.record(recording::Op::set_history_capacity, client, capacity);
  return {};
}

Result<std::vector<HistoryEntry>> World::history(ClientId client, EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (entity.is_null()) return Status{ErrorCode::invalid_argument, "history of a null entity"};
  if (client.index >= w.histories.size() || w.histories[client.index].generation != client.generation) {
    return std::vector<HistoryEntry>{};
  }
  return kept(w.histories[client.index], entity);
}

Result<std::vector<HistoryEntry>> World::history(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (client.index >= w.histories.size() || w.histories[client.index].generation != client.generation) {
    return std::vector<HistoryEntry>{};
  }
  return kept(w.histories[client.index], EntityId{});
}

}  // namespace sightline
