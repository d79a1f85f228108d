// The tick: index, then per client leave, enter and schedule, then release.
#include <algorithm>
#include <array>

#include "world_impl.h"

namespace sightline {

namespace {

[[nodiscard]] float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

// Sizes the scratch to the entity slots, so no pass ever grows it, and starts a fresh epoch;
// on wrap-around the stamps are cleared so old ones cannot match.
void prepare(PassScratch& scratch, std::size_t entity_slots) {
  if (scratch.stamp.size() < entity_slots) {
    scratch.stamp.resize(entity_slots, 0);
    scratch.kept.resize(entity_slots);
    scratch.entering.reserve(entity_slots);
  }
  if (++scratch.epoch == 0) {
    std::fill(scratch.stamp.begin(), scratch.stamp.end(), 0);
    scratch.epoch = 1;
  }
}

template <class T>
[[nodiscard]] std::uint32_t size32(const std::vector<T>& v) noexcept {
  return static_cast<std::uint32_t>(v.size());
}

}  // namespace

// Every output array is bounded by a total set size (spawns and updates by the new one, despawns
// by the old one). On a new high h beyond what the last reserve covers, every array is reserved
// to 3h: a later tick grows none of them until the total set size passes 3h, and the next reserve
// comes only once the high passes 2h, so steady ticks never allocate.
void WorldImpl::reserve_outputs(std::uint64_t member_total) {
  if (member_total <= reserved_for_members) return;
  const std::size_t capacity = 3 * member_total + 192;
  for (auto* v : {&members[0], &members[1]}) v->reserve(capacity);
  spawns.reserve(capacity);
  updates.reserve(capacity);
  despawns.reserve(capacity);
  reserved_for_members = 2 * member_total + 64;
}

void WorldImpl::run_tick(TickStats& stats) {
  stats = TickStats{};
  stats.tick = ticks;
  const float cell = def.cell_size == 0.0f ? enter_radius : def.cell_size;
  grid.build(xs, zs, binned, cell, def.max_grid_cells);
  if (keys_dirty) rebuild_keyed_index();

  members[1 - current].clear();
  spawns.clear();
  updates.clear();
  despawns.clear();
  for (const ClientId id : live_clients) client_pass(client_slots[id.index], scratch, stats);
  current = 1 - current;
  reserve_outputs(stats.members);

  for (const std::uint32_t index : destroyed) free_entities.push_back(index);
  destroyed.clear();
  ++ticks;
}

void WorldImpl::client_pass(ClientSlot& client, PassScratch& pass, TickStats& stats) {
  const auto client_slot = static_cast<std::uint32_t>(&client - client_slots.data());
  prepare(pass, alive.size());
  const std::uint32_t epoch = pass.epoch;
  std::uint32_t* const stamp = pass.stamp.data();
  const float vx = xs[client.viewer];
  const float vz = zs[client.viewer];
  const float enter2 = enter_radius * enter_radius;
  const float leave2 = leave_radius * leave_radius;
  const std::uint8_t* const entity_traits = traits.data();
  stamp[client.viewer] = epoch;

  // Origins: the viewer first, then the extra ones. Near means near any of them.
  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  const std::size_t origins = 1 + client.extra_origins.size();
  origin_x[0] = vx;
  origin_z[0] = vz;
  for (std::size_t o = 1; o < origins; ++o) {
    origin_x[o] = xs[client.extra_origins[o - 1]];
    origin_z[o] = zs[client.extra_origins[o - 1]];
  }
  auto nearest2 = [&](float x, float z) {
    float best = distance2(x, z, vx, vz);
    for (std::size_t o = 1; o < origins; ++o) best = std::min(best, distance2(x, z, origin_x[o], origin_z[o]));
    return best;
  };
  auto is_extra_origin = [&client](std::uint32_t e) {
    return std::binary_search(client.extra_origins.begin(), client.extra_origins.end(), e);
  };

  // Leave: members are sorted, so the despawns and the kept members stay sorted.
  // Outputs are sized for the worst case first and trimmed after: no capacity test per record.
  // Despawns cannot outgrow the reserve: with this client's old set they stay within the old total.
  const std::uint32_t despawns_begin = size32(despawns);
  despawns.resize(despawns_begin + client.members.count);
  DespawnRecord* const despawned = despawns.data() + despawns_begin;
  std::uint32_t despawn_count = 0;
  EntityId* const kept = pass.kept.data();
  std::uint32_t kept_count = 0;
  const EntityId* const old_members = members[current].data() + client.members.begin;
  for (std::uint32_t i = 0; i < client.members.count; ++i) {
    const EntityId member = old_members[i];
    const std::uint32_t e = member.index;
    if (entity_traits[e] == 0 && e != client.viewer) {
      // The plain path of the rules below: a live point with a Global key, no owner, no origin.
      ++stats.distance_tests;
      if (nearest2(xs[e], zs[e]) > leave2) {
        despawned[despawn_count++] = {member, DespawnReason::left};
        continue;
      }
      stamp[e] = epoch;
      kept[kept_count++] = member;
      continue;
    }
    if (!alive[e]) {
      despawned[despawn_count++] = {member, DespawnReason::destroyed};
      continue;
    }
    if (e == client.viewer) {
      despawned[despawn_count++] = {member, DespawnReason::left};
      continue;
    }
    if (!always[e] && owner[e] != client_slot + 1 && (origins == 1 || !is_extra_origin(e))) {
      const std::uint64_t k = key[e];
      const Subscription* subscription = k == 0 ? nullptr : find_subscription(client, k);
      if (k != 0 && subscription == nullptr) {
        despawned[despawn_count++] = {member, DespawnReason::key_removed};
        continue;
      }
      if (subscription == nullptr || !subscription->bypass_distance) {
        ++stats.distance_tests;
        const float reach = leave_radius + bound[e];
        if (nearest2(xs[e], zs[e]) > reach * reach) {
          despawned[despawn_count++] = {member, DespawnReason::left};
          continue;
        }
      }
    }
    stamp[e] = epoch;
    kept[kept_count++] = member;
  }

  despawns.resize(despawns_begin + despawn_count);

  // Enter: always-relevant entities, then those a bypass subscription admits at any distance,
  // then the cells around the viewer.
  pass.entering.clear();
  auto enter = [&pass](std::uint32_t e, SpawnReason reason) {
    pass.entering.push_back(static_cast<std::uint64_t>(e) << 8 | static_cast<std::uint64_t>(reason));
  };
  for (const std::uint32_t e : always_list) {
    if (stamp[e] == epoch) continue;
    stamp[e] = epoch;
    enter(e, SpawnReason::always);
  }
  for (const std::uint32_t e : client.owned) {
    if (stamp[e] == epoch) continue;
    stamp[e] = epoch;
    enter(e, SpawnReason::owner);
  }
  for (const std::uint32_t e : client.extra_origins) {
    if (stamp[e] == epoch) continue;
    stamp[e] = epoch;
    enter(e, SpawnReason::origin);
  }
  if (client.bypass_subscriptions != 0) {
    for (const Subscription& subscription : client.subscriptions) {
      if (!subscription.bypass_distance) continue;
      auto at = std::lower_bound(keyed_index.begin(), keyed_index.end(),
                                 std::pair<std::uint64_t, std::uint32_t>{subscription.stored_key, 0});
      for (; at != keyed_index.end() && at->first == subscription.stored_key; ++at) {
        if (stamp[at->second] == epoch) continue;
        stamp[at->second] = epoch;
        enter(at->second, SpawnReason::key);
      }
    }
  }
  // Bounded entities are not in the grid: each is tested against the sphere's surface.
  for (const std::uint32_t e : bounded_list) {
    if (stamp[e] == epoch) continue;
    if (key[e] != 0 && find_subscription(client, key[e]) == nullptr) continue;
    ++stats.distance_tests;
    const float reach = enter_radius + bound[e];
    if (nearest2(xs[e], zs[e]) <= reach * reach) {
      stamp[e] = epoch;
      enter(e, SpawnReason::near);
    }
  }
  const std::uint32_t* const items = grid.items().data();
  const float* const item_x = grid.item_x().data();
  const float* const item_z = grid.item_z().data();
  const bool any_keys = keyed_entities != 0;
  // Each origin scans its own cells; an entity near one origin is found by that origin's scan.
  for (std::size_t o = 0; o < origins; ++o) {
    const float ox = origin_x[o];
    const float oz = origin_z[o];
    const Grid::Range range = grid.cell_range(ox, oz, enter_radius);
    for (std::uint32_t row = range.z0; row <= range.z1; ++row) {
      const std::uint32_t begin = grid.run_begin(row, range.x0);
      const std::uint32_t end = grid.run_end(row, range.x1);
      stats.cell_candidates += end - begin;
      for (std::uint32_t at = begin; at < end; ++at) {
        const std::uint32_t e = items[at];
        if (stamp[e] == epoch) continue;
        if (any_keys && key[e] != 0 && find_subscription(client, key[e]) == nullptr) continue;
        ++stats.distance_tests;
        if (distance2(item_x[at], item_z[at], ox, oz) <= enter2) {
          stamp[e] = epoch;
          enter(e, SpawnReason::near);
        }
      }
    }
  }

  // Spawns sorted by index, merged into the kept members so the new set stays sorted.
  std::sort(pass.entering.begin(), pass.entering.end());
  const std::uint32_t spawns_begin = size32(spawns);
  const std::uint32_t spawn_count = size32(pass.entering);
  spawns.resize(spawns_begin + spawn_count);
  SpawnRecord* const spawned = spawns.data() + spawns_begin;
  for (std::uint32_t i = 0; i < spawn_count; ++i) {
    const std::uint64_t entering = pass.entering[i];
    const auto e = static_cast<std::uint32_t>(entering >> 8);
    spawned[i] = {EntityId{e, generation[e]}, static_cast<SpawnReason>(entering & 0xff)};
  }
  std::vector<EntityId>& next = members[1 - current];
  const std::uint32_t members_begin = size32(next);
  const std::uint32_t member_count = kept_count + spawn_count;
  next.resize(members_begin + member_count);
  EntityId* const merged = next.data() + members_begin;
  // A spawned entity was not stamped, so it is never a kept member: indices never tie.
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t n = 0;
  while (a < kept_count && b < spawn_count) {
    merged[n++] = kept[a].index < spawned[b].entity.index ? kept[a++] : spawned[b++].entity;
  }
  for (; a < kept_count; ++a) merged[n++] = kept[a];
  for (; b < spawn_count; ++b) merged[n++] = spawned[b].entity;

  // Schedule: every member, or by distance tier with updates staggered by entity index.
  const std::uint32_t updates_begin = size32(updates);
  updates.resize(updates_begin + member_count);
  UpdateRecord* const updated = updates.data() + updates_begin;
  std::uint32_t update_count = 0;
  const std::size_t tiers = tier_period.size();
  for (std::uint32_t i = 0; i < member_count; ++i) {
    const EntityId member = merged[i];
    const std::uint32_t e = member.index;
    std::uint32_t period = 1;
    if (tiers != 0) {
      const float d2 = nearest2(xs[e], zs[e]);
      std::size_t tier = 0;
      if (bound[e] == 0.0f) {
        while (tier + 1 < tiers && d2 > tier_limit2[tier]) ++tier;
      } else {
        auto beyond = [&](std::size_t t) {
          const float reach = tier_fraction[t] * enter_radius + bound[e];
          return d2 > reach * reach;
        };
        while (tier + 1 < tiers && beyond(tier)) ++tier;
      }
      period = tier_period[tier];
    }
    if (any_keys && key[e] != 0 && !always[e] && owner[e] != client_slot + 1 &&
        (origins == 1 || !is_extra_origin(e))) {
      period = std::max(period, find_subscription(client, key[e])->send_rate);
    }
    if (period != 1 && (ticks + e) % period != 0) continue;
    updated[update_count++] = {member};
  }
  updates.resize(updates_begin + update_count);

  client.members = {members_begin, member_count};
  client.spawns = {spawns_begin, spawn_count};
  client.updates = {updates_begin, update_count};
  client.despawns = {despawns_begin, despawn_count};
  stats.spawns += client.spawns.count;
  stats.updates += client.updates.count;
  stats.despawns += client.despawns.count;
  stats.members += client.members.count;
}

}  // namespace sightline
