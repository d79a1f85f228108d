// The tick: index, then per client leave, enter and schedule, then release.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "pass_steps.h"
#include "simd.h"
#include "world_impl.h"

namespace sightline {

namespace {

[[nodiscard]] float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

template <class Array>
[[nodiscard]] std::uint32_t size32(const Array& v) noexcept {
  return static_cast<std::uint32_t>(v.size());
}

/// Adds what client passes count (phases 3 and 4) from one share's totals.
void add_pass_totals(TickStats& to, const TickStats& from) noexcept {
  to.spawns += from.spawns;
  to.updates += from.updates;
  to.despawns += from.despawns;
  to.distance_tests += from.distance_tests;
  to.cell_candidates += from.cell_candidates;
  to.members += from.members;
  to.plain_passes += from.plain_passes;
}

}  // namespace

void size_scratch(PassScratch& scratch, std::size_t entity_slots, std::uint32_t grid_rows) {
  if (scratch.runs.size() < grid_rows) scratch.runs.resize(grid_rows);
  if (scratch.stamp.size() >= entity_slots) return;
  scratch.stamp.resize(entity_slots, 0);
  scratch.kept.resize(entity_slots);
  scratch.gaps.resize(entity_slots);
  scratch.merge.resize(entity_slots);
  scratch.forced.resize(entity_slots, 0);
  scratch.forced_reason.resize(entity_slots, 0);
  scratch.entering.reserve(entity_slots);
  scratch.child_members.reserve(entity_slots);
  scratch.forced_roots.reserve(entity_slots);
  scratch.unseen.resize(entity_slots, 0);
  scratch.last_seen.resize(entity_slots, 0);
  scratch.hits.resize(entity_slots + 8);
  scratch.crowd.reserve(entity_slots);
  scratch.crowded.resize(entity_slots, 0);
}

// Every output array is bounded by a total set size (spawns and updates by the new one, despawns
// by the old one). On a new high h beyond what the last reserve covers, every array is reserved
// to 3h: a later tick grows none of them until the total set size passes 3h, and the next reserve
// comes only once the high passes 2h, so steady ticks never allocate.
void WorldImpl::reserve_outputs(std::uint64_t member_total) {
  if (member_total <= reserved_for_members) return;
  const std::size_t capacity = 3 * member_total + 192;
  for (auto* v : {&members[0], &members[1]}) v->reserve(capacity);
  for (auto* v : {&seen[0], &seen[1]}) v->reserve(capacity);
  spawns.reserve(capacity);
  if (record_periods) periods.reserve(capacity);
  updates.reserve(capacity);
  despawns.reserve(capacity);
  reserved_for_members = 2 * member_total + 64;
}

void WorldImpl::settle_trees() {
  for (const std::uint32_t r : always_roots) tree_always[r] = 0;
  always_roots.clear();
  for (const std::uint32_t e : always_list) {
    const std::uint32_t r = root_of(e);
    if (tree_always[r]) continue;
    tree_always[r] = 1;
    always_roots.push_back(r);
  }
  for (const std::uint32_t e : teleported_list) {
    const std::uint32_t r = root_of(e);
    if (tree_teleported[r]) continue;
    tree_teleported[r] = 1;
    tree_teleported_list.push_back(r);
  }
}

void WorldImpl::finish_tick() {
  last_teleported_roots.assign(tree_teleported_list.begin(), tree_teleported_list.end());
  for (const std::uint32_t e : teleported_list) teleported[e] = 0;
  teleported_list.clear();
  for (const std::uint32_t r : tree_teleported_list) tree_teleported[r] = 0;
  tree_teleported_list.clear();
}

void WorldImpl::run_tick(TickStats& stats) {
  stats = TickStats{};
  stats.tick = ticks;
  settle_spaces();
  settle_trees();
  const float cell = def.cell_size == 0.0f ? enter_radius : def.cell_size;
  grid.build(xs, zs, binned, cell, def.max_grid_cells);
  if (keys_dirty) rebuild_keyed_index();

  members[1 - current].clear();
  seen[1 - current].clear();
  periods.clear();
  spawns.clear();
  updates.clear();
  despawns.clear();
  plain_tick = plain_world();
  // Last tick's sets and clients: the same measure of work as split_shares uses.
  const std::uint64_t work = members[current].size() + 16 * static_cast<std::uint64_t>(live_clients.size());
  const bool threaded =
      pool != nullptr && live_clients.size() >= 2 * shares.size() && work >= def.thread_min_work;
  if (threaded) split_shares();
  order_passes(threaded ? static_cast<std::uint32_t>(shares.size()) : 1);
  if (threaded) {
    parallel_passes(stats);
  } else {
    PassOutputs shared{members[1 - current],    seen[1 - current],   periods, spawns, updates, despawns,
                       members[current].data(), seen[current].data()};
    run_passes(0, size32(pass_order), scratch, shared, stats);
  }
  // Holder counts after every pass: a pass only writes what its own client owns.
  for (const ClientId id : live_clients) {
    const ClientSlot& c = client_slots[id.index];
    for (std::uint32_t i = 0; i < c.spawns.count; ++i) ++holders[spawns[c.spawns.begin + i].entity.index];
    for (std::uint32_t i = 0; i < c.despawns.count; ++i)
      --holders[despawns[c.despawns.begin + i].entity.index];
  }
  current = 1 - current;
  // Spawns arrive about at random, so a pass finds none with probability near exp(-spawns per
  // pass); the count costs about half the scan it can save, so it pays while that is over half.
  count_enters = stats.spawns * 3 < 2 * static_cast<std::uint64_t>(live_clients.size());
  reserve_outputs(stats.members);
  deliver_events(stats);
  finish_tick();

  for (const std::uint32_t index : destroyed) free_entities.push_back(index);
  destroyed.clear();
  deep_destroyed = 0;
  ++ticks;
}

// Clients split into runs of live_clients (slot order) of about equal work (members at the last
// tick, plus a fixed cost per client), one per thread. Runs of slots, not of the pass order: a
// pass writes its client's slot, so two threads then share at most the line at the boundary.
void WorldImpl::split_shares() {
  const auto n = static_cast<std::uint32_t>(shares.size());
  std::uint64_t total = 0;
  for (const ClientId id : live_clients) total += client_slots[id.index].members.count + 16;
  std::uint64_t acc = 0;
  std::uint32_t share = 0;
  shares[0].first = 0;
  for (std::uint32_t i = 0; i < live_clients.size(); ++i) {
    acc += client_slots[live_clients[i].index].members.count + 16;
    while (share + 1 < n && acc * n >= total * (share + 1)) {
      shares[share].last = i + 1;
      shares[++share].first = i + 1;
    }
  }
  shares[share].last = static_cast<std::uint32_t>(live_clients.size());
  for (std::uint32_t s = share + 1; s < n; ++s) shares[s].first = shares[s].last = shares[share].last;
}

// Within a share, clients pass in the grid's cell order of their viewers, not in slot order:
// neighbours share most candidates and members, so each pass finds the positions, items and
// stamps it reads still in cache from the last one. One counting sort by (share, cell) keeps
// every share's clients at the same positions of pass_order as in live_clients. Only the layout
// of the shared arrays follows this order; every client reads its own slices, and the order
// depends on nothing but positions, clients and the thread count.
void WorldImpl::order_passes(std::uint32_t share_count) {
  const std::uint32_t cells = grid.cells_x() * grid.cells_z();
  pass_cursor.assign(static_cast<std::size_t>(cells) * share_count + 1, 0);
  pass_cell.resize(live_clients.size());
  for (std::uint32_t s = 0; s < share_count; ++s) {
    const std::uint32_t first = share_count == 1 ? 0 : shares[s].first;
    const auto last = share_count == 1 ? static_cast<std::uint32_t>(live_clients.size()) : shares[s].last;
    for (std::uint32_t i = first; i < last; ++i) {
      const std::uint32_t v = client_slots[live_clients[i].index].viewer;
      pass_cell[i] = s * cells + grid.cell_of_point(xs[v], zs[v]);
      ++pass_cursor[pass_cell[i] + 1];
    }
  }
  for (std::size_t k = 0; k + 1 < pass_cursor.size(); ++k) pass_cursor[k + 1] += pass_cursor[k];
  pass_order.resize(live_clients.size());
  for (std::size_t i = 0; i < live_clients.size(); ++i)
    pass_order[pass_cursor[pass_cell[i]]++] = live_clients[i].index;
}

// One share per thread (split_shares), each writing its own outputs; placed in share order after.
void WorldImpl::parallel_passes(TickStats& stats) {
  const auto n = static_cast<std::uint32_t>(shares.size());
  pool->run(
      n, [](void* world, std::uint32_t s) { static_cast<WorldImpl*>(world)->run_share(s); }, this);
  // Share 0 wrote straight into the shared arrays; the others are placed after it.
  std::size_t at_members = 0, at_seen = 0, at_periods = 0, at_spawns = 0, at_updates = 0, at_despawns = 0;
  for (WorkerShare& w : shares) {
    if (&w == &shares[0]) {
      at_members = members[1 - current].size();
      at_seen = seen[1 - current].size();
      at_periods = periods.size();
      at_spawns = spawns.size();
      at_updates = updates.size();
      at_despawns = despawns.size();
      add_pass_totals(stats, w.stats);
      continue;
    }
    w.at_members = at_members;
    w.at_seen = at_seen;
    w.at_periods = at_periods;
    w.at_spawns = at_spawns;
    w.at_updates = at_updates;
    w.at_despawns = at_despawns;
    at_members += w.members.size();
    at_seen += w.seen.size();
    at_periods += w.periods.size();
    at_spawns += w.spawns.size();
    at_updates += w.updates.size();
    at_despawns += w.despawns.size();
    add_pass_totals(stats, w.stats);
  }
  members[1 - current].resize_unwritten(at_members);
  seen[1 - current].resize_unwritten(at_seen);
  periods.resize_unwritten(at_periods);
  spawns.resize_unwritten(at_spawns);
  updates.resize_unwritten(at_updates);
  despawns.resize_unwritten(at_despawns);
  // Task s places share s, on the thread that ran it (the pool keeps a task on its thread), so the
  // share's part of the shared arrays is written by the core whose passes read it next tick.
  pool->run(
      n, [](void* world, std::uint32_t s) { static_cast<WorldImpl*>(world)->place_share(s); }, this);
}

void WorldImpl::run_share(std::uint32_t s) {
  WorkerShare& w = shares[s];
  if (s == 0) {
    w.stats = TickStats{};
    PassOutputs shared{members[1 - current],    seen[1 - current],   periods, spawns, updates, despawns,
                       members[current].data(), seen[current].data()};
    run_passes(w.first, w.last, w.scratch, shared, w.stats);
    return;
  }
  // The same headroom policy as reserve_outputs, on this share's part of the sets.
  std::uint64_t old_total = 0;
  for (std::uint32_t i = w.first; i < w.last; ++i) old_total += client_slots[pass_order[i]].members.count;
  const std::uint64_t high = std::max<std::uint64_t>(old_total, w.stats.members);
  if (high > w.reserved_for_members) {
    const std::size_t capacity = 3 * high + 192;
    w.members.reserve(capacity);
    w.seen.reserve(capacity);
    if (record_periods) w.periods.reserve(capacity);
    w.spawns.reserve(capacity);
    w.updates.reserve(capacity);
    w.despawns.reserve(capacity);
    w.reserved_for_members = 2 * high + 64;
  }
  w.members.clear();
  w.seen.clear();
  w.periods.clear();
  w.spawns.clear();
  w.updates.clear();
  w.despawns.clear();
  w.stats = TickStats{};
  PassOutputs out = w.outputs(members[current].data(), seen[current].data());
  run_passes(w.first, w.last, w.scratch, out, w.stats);
}

void WorldImpl::place_share(std::uint32_t s) {
  if (s == 0) return;  // share 0 wrote in place
  WorkerShare& w = shares[s];
  std::copy(w.members.begin(), w.members.end(),
            members[1 - current].begin() + static_cast<std::ptrdiff_t>(w.at_members));
  std::copy(w.seen.begin(), w.seen.end(), seen[1 - current].begin() + static_cast<std::ptrdiff_t>(w.at_seen));
  std::copy(w.periods.begin(), w.periods.end(), periods.begin() + static_cast<std::ptrdiff_t>(w.at_periods));
  std::copy(w.spawns.begin(), w.spawns.end(), spawns.begin() + static_cast<std::ptrdiff_t>(w.at_spawns));
  std::copy(w.updates.begin(), w.updates.end(), updates.begin() + static_cast<std::ptrdiff_t>(w.at_updates));
  std::copy(w.despawns.begin(), w.despawns.end(),
            despawns.begin() + static_cast<std::ptrdiff_t>(w.at_despawns));
  for (std::uint32_t i = w.first; i < w.last; ++i) {
    ClientSlot& c = client_slots[pass_order[i]];
    c.members.begin += static_cast<std::uint32_t>(w.at_members);
    if (c.sighted) c.seen.begin += static_cast<std::uint32_t>(w.at_seen);
    c.spawns.begin += static_cast<std::uint32_t>(w.at_spawns);
    c.updates.begin += static_cast<std::uint32_t>(c.updates_in_set ? w.at_members : w.at_updates);
    c.despawns.begin += static_cast<std::uint32_t>(w.at_despawns);
  }
}

void WorldImpl::run_passes(std::uint32_t first, std::uint32_t last, PassScratch& pass, PassOutputs& out,
                           TickStats& stats) {
  size_scratch(pass, alive.size(), grid.cells_z());
  for (std::uint32_t i = first; i < last; ++i) {
    ClientSlot& client = client_slots[pass_order[i]];
    if (plain_tick && plain_client(client)) {
      plain_pass(client, pass, out, stats);
    } else {
      client_pass(client, pass, out, stats);
    }
  }
}

void WorldImpl::client_pass(ClientSlot& client, PassScratch& pass, PassOutputs& out, TickStats& stats) {
  const auto client_slot = static_cast<std::uint32_t>(&client - client_slots.data());
  const std::uint32_t epoch = begin_pass(pass);
  std::uint32_t* const stamp = pass.stamp.data();
  std::uint32_t* const forced = pass.forced.data();
  const std::uint32_t viewer = client.viewer;
  const std::uint32_t client_space = space[viewer];
  const SpaceSlot& room = space_slots[client_space];
  const bool culls = room.culls;
  const float enter_r = room.enter;
  const float leave_r = room.leave;
  const float enter2 = enter_r * enter_r;
  const float leave2 = leave_r * leave_r;
  const DespawnReason out_of_range = room.switched_on ? DespawnReason::culling_switched : DespawnReason::left;
  // Every live entity is in this space: no member or candidate needs a space test.
  const bool uniform = room.entities.size() == live_entities;
  bool plain_path = culls && uniform;
  const bool attachments = attached_entities != 0 || deep_destroyed != 0;
  const std::uint8_t* const entity_traits = traits.data();
  stamp[viewer] = epoch;

  // Origins: the viewer first, then the extra ones in the client's space. Near means near any.
  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  const std::size_t origins = origins_of(client, origin_x.data(), origin_z.data());
  bool refresh = client.refresh || teleported[viewer];
  for (const std::uint32_t o : client.extra_origins) refresh = refresh || teleported[o];
  auto nearest2 = [&](float x, float z) SIGHTLINE_FORCE_INLINE {
    float best = distance2(x, z, origin_x[0], origin_z[0]);
    for (std::size_t o = 1; o < origins; ++o)
      best = std::min(best, distance2(x, z, origin_x[o], origin_z[o]));
    return best;
  };
  const Sight sight = sight_of(client, client_slot, origins, origin_x.data(), origin_z.data());
  plain_path = plain_path && !sight.needed;
  // Last sightings of the old members; where sight did not apply, the last tick counts as one.
  const std::uint64_t* const old_seen = client.sighted ? out.previous_seen + client.seen.begin : nullptr;
  const std::uint64_t last_tick = ticks == 0 ? 0 : ticks - 1;

  // Trees this client holds whatever their key and distance: those with something it owns, then
  // those with one of its origins (the viewer's own tree included).
  pass.forced_roots.clear();
  auto force = [&](std::uint32_t e, SpawnReason reason) {
    const std::uint32_t r = root_of(e);
    if (forced[r] == epoch) return;
    forced[r] = epoch;
    pass.forced_reason[r] = static_cast<std::uint8_t>(reason);
    pass.forced_roots.push_back(r);
  };
  for (const std::uint32_t e : client.owned) {
    if (space[e] == client_space) force(e, SpawnReason::owner);
  }
  for (const std::uint32_t e : client.extra_origins) {
    if (space[e] == client_space) force(e, SpawnReason::origin);
  }
  force(viewer, SpawnReason::origin);

  // Leave: members are sorted, so the despawns and the kept members stay sorted. Attached
  // members wait until their roots are decided.
  // Outputs are sized for the worst case first and trimmed after: no capacity test per record.
  // Despawns cannot outgrow the reserve: with this client's old set they stay within the old total.
  const std::uint32_t despawns_begin = size32(out.despawns);
  out.despawns.resize_unwritten(despawns_begin + client.members.count);
  DespawnRecord* const despawned = out.despawns.data() + despawns_begin;
  std::uint32_t despawn_count = 0;
  EntityId* kept = pass.kept.data();
  std::uint32_t kept_count = 0;
  pass.child_members.clear();
  const std::uint32_t cap = culls ? def.crowd_cap : 0;
  const bool capped = cap != 0;
  pass.crowd.clear();
  const EntityId* const old_members = out.previous_members + client.members.begin;
  const std::uint32_t old_count = client.members.count;
  // Every rule of the leave test but the plain path's; writes the despawn of a member let go.
  enum class Fate : std::uint8_t { stays, goes, deferred };
  auto decide = [&](std::uint32_t i, EntityId member) -> Fate {
    const std::uint32_t e = member.index;
    if (!alive[e]) {
      despawned[despawn_count++] = {member, DespawnReason::destroyed};
      return Fate::goes;
    }
    if (e == viewer) {
      despawned[despawn_count++] = {member, DespawnReason::left};
      return Fate::goes;
    }
    if (entity_traits[e] & kChild) {
      pass.child_members.push_back(member);
      return Fate::deferred;
    }
    if (space[e] != client_space) {
      despawned[despawn_count++] = {member, DespawnReason::space_changed};
      return Fate::goes;
    }
    if (!tree_always[e] && forced[e] != epoch) {
      const std::uint64_t k = key[e];
      const Subscription* subscription = k == 0 ? nullptr : find_subscription(client, k);
      if (k != 0 && subscription == nullptr) {
        despawned[despawn_count++] = {member, DespawnReason::key_removed};
        return Fate::goes;
      }
      const bool anywhere =
          presenter[e] || (subscription != nullptr && subscription->bypass_distance) || !culls;
      if (!anywhere) {
        ++stats.distance_tests;
        const float reach = leave_r + bound[e];
        const float d2 = nearest2(xs[e], zs[e]);
        if (d2 > reach * reach) {
          despawned[despawn_count++] = {member, out_of_range};
          return Fate::goes;
        }
        if (sight.needed && !sees(sight, e, pass.occluders)) {
          const std::uint64_t last = old_seen != nullptr ? old_seen[i] : last_tick;
          if (ticks - last > sight.hold_ticks) {
            despawned[despawn_count++] = {member, DespawnReason::hidden};
            return Fate::goes;
          }
          pass.unseen[e] = epoch;
          pass.last_seen[e] = last;
        }
        if (capped) pass.crowd.push_back(crowd_rank(d2, reach, e));
      }
    }
    return Fate::stays;
  };
  // The lean pass: the plain path with no cap and nothing attached anywhere, so a member only
  // stays or goes. The kept members are not copied out: the positions that went are noted, and
  // the merge below copies the runs between them.
  const bool lean = plain_path && !capped && !attachments;
  std::uint32_t* const gaps = pass.gaps.data();
  std::uint32_t gap_count = 0;
  if (lean) {
    std::uint32_t off_path = 0;
    auto leave = [&](auto&& near2) SIGHTLINE_FORCE_INLINE {
      for (std::uint32_t i = 0; i < old_count; ++i) {
        const EntityId member = old_members[i];
        const std::uint32_t e = member.index;
        if (entity_traits[e] != 0 || e == viewer) [[unlikely]] {
          ++off_path;
          if (decide(i, member) == Fate::stays) {
            stamp[e] = epoch;
          } else {
            gaps[gap_count++] = i;
          }
          continue;
        }
        if (near2(xs[e], zs[e]) > leave2) {
          despawned[despawn_count++] = {member, out_of_range};
          gaps[gap_count++] = i;
          continue;
        }
        stamp[e] = epoch;
      }
    };
    if (origins == 1) {
      const float ox = origin_x[0];
      const float oz = origin_z[0];
      leave([ox, oz](float x, float z) { return distance2(x, z, ox, oz); });
    } else {
      leave(nearest2);
    }
    stats.distance_tests += old_count - off_path;
    kept_count = old_count - gap_count;
  } else {
    for (std::uint32_t i = 0; i < old_count; ++i) {
      const EntityId member = old_members[i];
      const std::uint32_t e = member.index;
      if (entity_traits[e] == 0 && plain_path && e != viewer) {
        // The plain path of the rule: a live unattached point in this space with a Global key, no
        // owner, not always relevant, nobody's origin, nothing attached.
        ++stats.distance_tests;
        const float d2 = nearest2(xs[e], zs[e]);
        if (d2 > leave2) {
          despawned[despawn_count++] = {member, out_of_range};
          continue;
        }
        if (capped) pass.crowd.push_back(crowd_rank(d2, leave_r, e));
        stamp[e] = epoch;
        kept[kept_count++] = member;
        continue;
      }
      if (decide(i, member) == Fate::stays) {
        stamp[e] = epoch;
        kept[kept_count++] = member;
      }
    }
  }

  // Enter, in rule order so the first rule that admits a root names its reason.
  pass.entering.clear();
  auto enter = [&pass](std::uint32_t e, SpawnReason reason) {
    pass.entering.push_back(static_cast<std::uint64_t>(e) << 8 | static_cast<std::uint64_t>(reason));
  };
  auto admits = [&](std::uint32_t e) { return key[e] == 0 || find_subscription(client, key[e]) != nullptr; };
  for (const std::uint32_t r : always_roots) {
    if (stamp[r] == epoch || space[r] != client_space) continue;
    stamp[r] = epoch;
    enter(r, SpawnReason::always);
  }
  for (const std::uint32_t r : pass.forced_roots) {
    if (stamp[r] == epoch) continue;
    stamp[r] = epoch;
    enter(r, static_cast<SpawnReason>(pass.forced_reason[r]));
  }
  for (const std::uint32_t r : presenter_list) {
    if (stamp[r] == epoch || space[r] != client_space || !admits(r)) continue;
    stamp[r] = epoch;
    enter(r, SpawnReason::presenter);
  }
  if (client.bypass_subscriptions != 0) {
    for (const Subscription& subscription : client.subscriptions) {
      if (!subscription.bypass_distance) continue;
      auto at = std::lower_bound(keyed_index.begin(), keyed_index.end(),
                                 std::pair<std::uint64_t, std::uint32_t>{subscription.stored_key, 0});
      for (; at != keyed_index.end() && at->first == subscription.stored_key; ++at) {
        const std::uint32_t e = at->second;
        if (stamp[e] == epoch || space[e] != client_space) continue;
        stamp[e] = epoch;
        enter(e, SpawnReason::key);
      }
    }
  }
  const bool any_keys = keyed_entities != 0;
  if (!culls) {
    for (const std::uint32_t e : room.entities) {
      if (stamp[e] == epoch || (entity_traits[e] & kChild) || !admits(e)) continue;
      stamp[e] = epoch;
      enter(e, SpawnReason::unculled);
    }
  } else {
    auto near_reason = [this](std::uint32_t e) {
      return tree_teleported[e] ? SpawnReason::teleport : SpawnReason::near;
    };
    // Bounded entities are not in the grid: each is tested against the sphere's surface.
    for (const std::uint32_t e : bounded_list) {
      if (stamp[e] == epoch || space[e] != client_space || !admits(e)) continue;
      ++stats.distance_tests;
      const float reach = enter_r + bound[e];
      const float d2 = nearest2(xs[e], zs[e]);
      if (d2 <= reach * reach) {
        if (sight.needed && !sees(sight, e, pass.occluders)) continue;
        if (capped) pass.crowd.push_back(crowd_rank(d2, reach, e));
        stamp[e] = epoch;
        enter(e, near_reason(e));
      }
    }
    const std::uint32_t* const hits = pass.hits.data();
    // Once the cap is full without the grid's newcomers, one ranked after the cap-th candidate
    // cannot get in: scan no farther than such a newcomer could stand (a hair farther, for the
    // rounding of the rank), so a steady crowd costs about the cap, not the crowd.
    float scan_radius = enter_r;
    float scan2 = enter2;
    if (capped && pass.crowd.size() >= cap) {
      const auto nth = pass.crowd.begin() + (cap - 1);
      std::nth_element(pass.crowd.begin(), nth, pass.crowd.end());
      const float worst = std::bit_cast<float>(static_cast<std::uint32_t>(*nth >> 32));
      const float bound2 = worst * enter2 * (1.0f + 0x1.0p-20f);
      if (bound2 < enter2) {
        scan2 = bound2;
        scan_radius = std::sqrt(bound2) * (1.0f + 0x1.0p-20f);
      }
    }
    // Each origin scans its own cells; an entity near one origin is found by that origin's scan.
    for (std::size_t o = 0; o < origins; ++o) {
      const std::uint32_t found =
          scan_near(grid, scan, pass, origin_x[o], origin_z[o], scan_radius, scan2, stats);
      for (std::uint32_t h = 0; h < found; ++h) {
        const std::uint32_t e = hits[h];
        if (!uniform && space[e] != client_space) continue;
        if (any_keys && key[e] != 0 && find_subscription(client, key[e]) == nullptr) continue;
        if (sight.needed && !sees(sight, e, pass.occluders)) continue;
        if (capped) pass.crowd.push_back(crowd_rank(nearest2(xs[e], zs[e]), enter_r, e));
        stamp[e] = epoch;
        enter(e, near_reason(e));
      }
    }
  }

  // Crowd cap: the roots held by distance beyond the cap nearest are let go (members `left`).
  const std::uint32_t* const crowded = pass.crowded.data();
  if (capped && pass.crowd.size() > cap) {
    const auto cut = pass.crowd.begin() + cap;
    std::nth_element(pass.crowd.begin(), cut, pass.crowd.end());
    for (auto at = cut; at != pass.crowd.end(); ++at) {
      const auto e = static_cast<std::uint32_t>(*at);
      stamp[e] = epoch - 1;
      pass.crowded[e] = epoch;
    }
    std::uint32_t still_kept = 0;
    bool dropped_member = false;
    for (std::uint32_t i = 0; i < kept_count; ++i) {
      if (stamp[kept[i].index] == epoch) {
        kept[still_kept++] = kept[i];
      } else {
        despawned[despawn_count++] = {kept[i], DespawnReason::left};
        dropped_member = true;
      }
    }
    kept_count = still_kept;
    std::erase_if(pass.entering, [&](std::uint64_t x) { return stamp[x >> 8] != epoch; });
    if (dropped_member && !attachments) {
      std::sort(despawned, despawned + despawn_count, [](const DespawnRecord& x, const DespawnRecord& y) {
        return x.entity.index < y.entity.index;
      });
    }
  }

  // Attached members follow their roots; held trees bring in what is attached to them.
  std::uint32_t kept_children = 0;
  if (attachments) {
    for (const EntityId member : pass.child_members) {
      const std::uint32_t e = member.index;
      const std::uint32_t r = root_of(e);
      if (stamp[r] == epoch) {
        stamp[e] = epoch;
        pass.child_members[kept_children++] = member;
        continue;
      }
      DespawnReason reason = out_of_range;
      if (capped && crowded[r] == epoch) {
        reason = DespawnReason::left;
      } else if (space[r] != client_space) {
        reason = DespawnReason::space_changed;
      } else if (!admits(r)) {
        reason = DespawnReason::key_removed;
      } else if (sight.needed) {
        // Not held although in its space and admitted: in range means out of sight.
        const EntityId* const old_end = old_members + client.members.count;
        const EntityId* const at = std::lower_bound(old_members, old_end, r,
                                                    [](EntityId m, std::uint32_t x) { return m.index < x; });
        const float reach = (at != old_end && at->index == r ? leave_r : enter_r) + bound[r];
        if (nearest2(xs[r], zs[r]) <= reach * reach) reason = DespawnReason::hidden;
      }
      despawned[despawn_count++] = {member, reason};
    }
    auto bring = [&](auto& self, std::uint32_t e) -> void {
      for (std::uint32_t c = first_child[e]; c != kNone; c = next_sibling[c]) {
        if (stamp[c] != epoch) {
          stamp[c] = epoch;
          enter(c, SpawnReason::attached);
        }
        self(self, c);
      }
    };
    for (std::uint32_t i = 0; i < kept_count; ++i) {
      if (first_child[kept[i].index] != kNone) bring(bring, kept[i].index);
    }
    const std::size_t entered_roots = pass.entering.size();
    for (std::size_t i = 0; i < entered_roots; ++i) {
      const auto e = static_cast<std::uint32_t>(pass.entering[i] >> 8);
      if (first_child[e] != kNone) bring(bring, e);
    }
    if (parent[viewer] == kNone && first_child[viewer] != kNone) bring(bring, viewer);
    if (kept_children != 0) {
      // Both lists are sorted by index and disjoint.
      EntityId* const joined = pass.merge.data();
      const EntityId* const roots = kept;
      const EntityId* const children = pass.child_members.data();
      std::uint32_t a = 0;
      std::uint32_t b = 0;
      std::uint32_t n = 0;
      while (a < kept_count && b < kept_children) {
        joined[n++] = roots[a].index < children[b].index ? roots[a++] : children[b++];
      }
      for (; a < kept_count; ++a) joined[n++] = roots[a];
      for (; b < kept_children; ++b) joined[n++] = children[b];
      kept = joined;
      kept_count = n;
    }
  }
  out.despawns.resize_unwritten(despawns_begin + despawn_count);

  // The new set: entering entities sorted by index, merged into the kept members.
  const std::uint32_t spawns_begin = write_spawns(pass, out.spawns, generation.data());
  const std::uint32_t spawn_count = size32(pass.entering);
  SpawnRecord* const spawned = out.spawns.data() + spawns_begin;
  RecordBuffer<EntityId>& next = out.members;
  const std::uint32_t members_begin = size32(next);
  const std::uint32_t member_count = kept_count + spawn_count;
  next.resize_unwritten(members_begin + member_count);
  EntityId* const merged = next.data() + members_begin;
  // An entering entity was not stamped before, so it is never a kept member: indices never tie.
  if (lean) {
    merge_set(old_members, old_count, gaps, gap_count, spawned, spawn_count, merged);
  } else {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::uint32_t n = 0;
    while (a < kept_count && b < spawn_count) {
      merged[n++] = kept[a].index < spawned[b].entity.index ? kept[a++] : spawned[b++].entity;
    }
    for (; a < kept_count; ++a) merged[n++] = kept[a];
    for (; b < spawn_count; ++b) merged[n++] = spawned[b].entity;
  }
  if (sight.needed) {
    RecordBuffer<std::uint64_t>& next_seen = out.seen;
    const std::uint32_t seen_begin = size32(next_seen);
    next_seen.resize_unwritten(seen_begin + member_count);
    std::uint64_t* const sightings = next_seen.data() + seen_begin;
    for (std::uint32_t i = 0; i < member_count; ++i) {
      const std::uint32_t e = merged[i].index;
      sightings[i] = pass.unseen[e] == epoch ? pass.last_seen[e] : ticks;
    }
    client.seen = {seen_begin, member_count};
  }
  client.sighted = sight.needed;
  if (attachments) {
    // Parents spawn before what is attached to them, and despawn after it.
    const std::uint8_t* const d = depth.data();
    std::sort(spawned, spawned + spawn_count, [d](const SpawnRecord& x, const SpawnRecord& y) {
      return d[x.entity.index] != d[y.entity.index] ? d[x.entity.index] < d[y.entity.index]
                                                    : x.entity.index < y.entity.index;
    });
    std::sort(despawned, despawned + despawn_count, [d](const DespawnRecord& x, const DespawnRecord& y) {
      return d[x.entity.index] != d[y.entity.index] ? d[x.entity.index] > d[y.entity.index]
                                                    : x.entity.index < y.entity.index;
    });
  }

  // Schedule: by the root's distance tier and key rate, staggered by the root's index. When every
  // member is due the updates are the set's own slice, not a copy of it.
  const std::uint32_t updates_begin = size32(out.updates);
  std::uint32_t update_count = 0;
  const std::size_t tiers = culls ? tier_period.size() : 0;
  // The squared tier bounds of a point, precomputed for the world's radius (the same float steps).
  const float* const point_limits = enter_r == enter_radius ? tier_limit2.data() : nullptr;
  // Without tiers and keys every period is 1: every member is due.
  const bool all_due = tiers == 0 && !any_keys;
  std::uint32_t* const period_of = record_periods ? out.periods.extend(member_count) : nullptr;
  if (all_due) {
    update_count = member_count;
    if (period_of != nullptr) std::fill(period_of, period_of + member_count, 1u);
  } else {
    out.updates.resize_unwritten(updates_begin + member_count);
  }
  EntityId* const updated = out.updates.data() + updates_begin;
  for (std::uint32_t i = 0; !all_due && i < member_count; ++i) {
    const EntityId member = merged[i];
    const std::uint32_t r = attachments ? root_of(member.index) : member.index;
    std::uint32_t period = 1;
    if (tiers != 0) {
      const float d2 = nearest2(xs[r], zs[r]);
      std::size_t tier = 0;
      if (point_limits != nullptr && bound[r] == 0.0f) {
        while (tier + 1 < tiers && d2 > point_limits[tier]) ++tier;
      } else {
        auto beyond = [&](std::size_t t) {
          const float reach = tier_fraction[t] * enter_r + bound[r];
          return d2 > reach * reach;
        };
        while (tier + 1 < tiers && beyond(tier)) ++tier;
      }
      period = tier_period[tier];
    }
    if (any_keys && key[r] != 0 && !tree_always[r] && forced[r] != epoch) {
      const Subscription* subscription = find_subscription(client, key[r]);
      if (subscription != nullptr) period = std::max(period, subscription->send_rate);
    }
    if (period_of != nullptr) period_of[i] = period;
    if (period != 1 && !refresh && !tree_teleported[r] && (ticks + r) % period != 0) continue;
    updated[update_count++] = member;
  }
  const bool updates_in_set = update_count == member_count;
  out.updates.resize_unwritten(updates_in_set ? updates_begin : updates_begin + update_count);

  client.refresh = false;
  client.origins_changed = refresh;
  client.members = {members_begin, member_count};
  client.spawns = {spawns_begin, spawn_count};
  client.updates = {updates_in_set ? members_begin : updates_begin, update_count};
  client.updates_in_set = updates_in_set;
  client.despawns = {despawns_begin, despawn_count};
  stats.spawns += client.spawns.count;
  stats.updates += client.updates.count;
  stats.despawns += client.despawns.count;
  stats.members += client.members.count;
}

}  // namespace sightline
