// The tick: index, then per client leave, enter and schedule, then release.
#include <algorithm>

#include "world_impl.h"

namespace sightline {

namespace {

[[nodiscard]] float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

// A fresh epoch for the stamp array; on wrap-around, clear it so old stamps cannot match.
void next_epoch(PassScratch& scratch, std::size_t entity_slots) {
  if (scratch.stamp.size() < entity_slots) scratch.stamp.resize(entity_slots, 0);
  if (++scratch.epoch == 0) {
    std::fill(scratch.stamp.begin(), scratch.stamp.end(), 0);
    scratch.epoch = 1;
  }
}

}  // namespace

void WorldImpl::run_tick(TickStats& stats) {
  stats = TickStats{};
  stats.tick = ticks;
  const float cell = def.cell_size == 0.0f ? enter_radius : def.cell_size;
  grid.build(xs, zs, alive, cell, def.max_grid_cells);

  for (const ClientId id : live_clients) client_pass(client_slots[id.index], scratch, stats);

  for (const std::uint32_t index : destroyed) free_entities.push_back(index);
  destroyed.clear();
  ++ticks;
}

void WorldImpl::client_pass(ClientSlot& client, PassScratch& pass, TickStats& stats) {
  next_epoch(pass, alive.size());
  const std::uint32_t epoch = pass.epoch;
  std::uint32_t* const stamp = pass.stamp.data();
  const float vx = xs[client.viewer];
  const float vz = zs[client.viewer];
  const float leave2 = leave_radius * leave_radius;
  const float enter2 = enter_radius * enter_radius;

  client.spawns.clear();
  client.updates.clear();
  client.despawns.clear();
  client.next_members.clear();
  stamp[client.viewer] = epoch;

  // Leave: members are sorted, so the despawns and the kept members stay sorted.
  for (const EntityId member : client.members) {
    const std::uint32_t e = member.index;
    if (!alive[e]) {
      client.despawns.push_back({member, DespawnReason::destroyed});
      continue;
    }
    if (e == client.viewer) {
      client.despawns.push_back({member, DespawnReason::left});
      continue;
    }
    if (!always[e]) {
      ++stats.distance_tests;
      if (distance2(xs[e], zs[e], vx, vz) > leave2) {
        client.despawns.push_back({member, DespawnReason::left});
        continue;
      }
    }
    stamp[e] = epoch;
    client.next_members.push_back(member);
  }

  // Enter: always-relevant entities first (no radius test), then the cells around the viewer.
  pass.entering.clear();
  for (const std::uint32_t e : always_list) {
    if (stamp[e] == epoch) continue;
    stamp[e] = epoch;
    pass.entering.push_back(e);
  }
  const Grid::Range range = grid.cell_range(vx, vz, enter_radius);
  const std::uint32_t* const items = grid.items().data();
  const float* const item_x = grid.item_x().data();
  const float* const item_z = grid.item_z().data();
  for (std::uint32_t row = range.z0; row <= range.z1; ++row) {
    const std::uint32_t end = grid.run_end(row, range.x1);
    for (std::uint32_t at = grid.run_begin(row, range.x0); at < end; ++at) {
      const std::uint32_t e = items[at];
      if (stamp[e] == epoch) continue;
      ++stats.distance_tests;
      if (distance2(item_x[at], item_z[at], vx, vz) <= enter2) {
        stamp[e] = epoch;
        pass.entering.push_back(e);
      }
    }
  }

  // Spawns sorted by index; merge them into the kept members so the set stays sorted.
  std::sort(pass.entering.begin(), pass.entering.end());
  for (const std::uint32_t e : pass.entering) {
    const EntityId id{e, generation[e]};
    client.spawns.push_back({id, always[e] ? SpawnReason::always : SpawnReason::near});
  }
  const std::size_t kept = client.next_members.size();
  client.members.clear();
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < kept || b < client.spawns.size()) {
    if (b == client.spawns.size() ||
        (a < kept && client.next_members[a].index < client.spawns[b].entity.index)) {
      client.members.push_back(client.next_members[a++]);
    } else {
      client.members.push_back(client.spawns[b++].entity);
    }
  }

  // Schedule: every member, or by distance tier with updates staggered by entity index.
  const std::size_t tiers = tier_period.size();
  if (tiers == 0) {
    for (const EntityId member : client.members) client.updates.push_back({member});
  } else {
    for (const EntityId member : client.members) {
      const std::uint32_t e = member.index;
      const float d2 = distance2(xs[e], zs[e], vx, vz);
      std::size_t tier = 0;
      while (tier + 1 < tiers && d2 > tier_limit2[tier]) ++tier;
      const std::uint32_t period = tier_period[tier];
      if (period == 1 || (ticks + e) % period == 0) client.updates.push_back({member});
    }
  }

  stats.spawns += client.spawns.size();
  stats.updates += client.updates.size();
  stats.despawns += client.despawns.size();
  stats.members += client.members.size();
}

}  // namespace sightline
