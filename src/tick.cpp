// The tick: its phases in order (run_tick), and what it settles before and after the client passes.
#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include "pass_steps.h"
#include "sightline_assert.h"
#include "world_impl.h"

namespace sightline {

// Every array of an output part is bounded by the total set size of the clients passed into it
// (spawns and updates by the new one, despawns by the old one). On a new high h beyond what the
// last reserve covers, every array is reserved to 3h: a later tick grows none of them until that
// total passes 3h, and the next reserve comes only once the high passes 2h, so steady ticks never
// allocate. Here the growth rule (TickOutputs::reserve_for) for each part's sets of this tick,
// and the same room for the sets and sightings they swap with; a share reserves its part again
// for its clients' last sets before its passes (run_share), and a tick on one thread part 0 for
// all of them.
void WorldImpl::reserve_outputs() {
  for (OutputPart& part : parts) {
    (void)part.out.reserve_for(part.out.members.size(), record_periods);
    part.previous_members.reserve(part.out.members.capacity());
    part.previous_seen.reserve(part.out.seen.capacity());
  }
}

void WorldImpl::settle_trees() {
  for (const std::uint32_t r : always_roots) cold[r].tree_always = 0;
  always_roots.clear();
  for (const std::uint32_t e : always_list) {
    const std::uint32_t r = root_of(e);
    if (cold[r].tree_always) continue;
    cold[r].tree_always = 1;
    always_roots.push_back(r);
  }
  for (const std::uint32_t e : teleported_list) {
    const std::uint32_t r = root_of(e);
    if (cold[r].tree_teleported) continue;
    cold[r].tree_teleported = 1;
    tree_teleported_list.push_back(r);
  }
}

// One tick, phase by phase: world.h lists the phases with the same numbers, architecture.md
// describes each.
void WorldImpl::run_tick(TickStats& stats) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point& mark) {
    const Clock::time_point now = Clock::now();
    const auto ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(now - mark).count());
    mark = now;
    return ns;
  };
  stats = TickStats{};
  stats.tick = ticks;
  Clock::time_point mark = Clock::now();
  settle_spaces();  // 1. spaces
  settle_trees();
  timings.spaces_ns = since(mark);
  index_entities();  // 2. index
  timings.index_ns = since(mark);
  run_client_passes(stats);  // 3. relevance and 4. schedule, client by client
  adopt_sets(stats);
  timings.relevance_ns = since(mark);
  deliver_events(stats);  // 5. events
  timings.events_ns = since(mark);
  release();  // 6. release
  timings.release_ns = since(mark);
#if SIGHTLINE_ASSERTS_ON
  validate();
#endif
}

// In a world large enough for the grid to fill only the cells its queries reach, those queries
// are the passes' scans: around each live client's origins, of at most its enter radius.
void WorldImpl::index_entities() {
  const float cell = def.cell_size == 0.0f ? enter_radius : def.cell_size;
  if (xs.size() < grid.partition_min_slots) {
    grid.build(xs, zs, binned, cell, def.max_grid_cells);
  } else {
    // A client's view radius stays within its space's range.
    float radius = enter_radius;
    for (const SpaceSlot& space : space_slots) radius = std::max({radius, space.enter, space.view_max});
    query_x.clear();
    query_z.clear();
    std::array<float, kMaxOrigins + 1> origin_x;
    std::array<float, kMaxOrigins + 1> origin_z;
    for (const ClientId id : live_clients) {
      const std::size_t origins = origins_of(client_slots[id.index], origin_x.data(), origin_z.data());
      query_x.insert(query_x.end(), origin_x.begin(),
                     origin_x.begin() + static_cast<std::ptrdiff_t>(origins));
      query_z.insert(query_z.end(), origin_z.begin(),
                     origin_z.begin() + static_cast<std::ptrdiff_t>(origins));
    }
    const Grid::QueryCover cover{query_x, query_z, radius};
    grid.build(xs, zs, binned, cell, def.max_grid_cells, &cover);
  }
  crowd_index.clear();
  if (def.crowd_cap != 0 && crowd_index.find_dense_cells(grid)) {
    for (const ClientId c : live_clients) {
      const ClientSlot& client = client_slots[c.index];
      crowd_index.count_scanner(grid, xs[client.viewer], zs[client.viewer]);
      for (const std::uint32_t o : client.extra_origins) crowd_index.count_scanner(grid, xs[o], zs[o]);
    }
    crowd_index.index_busy_cells(grid);
  }
  if (keys_dirty) rebuild_keyed_index();
}

// On the calling thread, or one run of clients per thread when there is work enough.
void WorldImpl::run_client_passes(TickStats& stats) {
  std::uint64_t previous_total = 0;
  for (OutputPart& part : parts) {
    std::swap(part.out.members, part.previous_members);
    std::swap(part.out.seen, part.previous_seen);
    part.out.clear();
    previous_total += part.previous_members.size();
  }
  plain_tick = plain_world();
  if (plain_tick) settle_plain_spaces();
  // Last tick's sets and clients: the same measure of work as split_shares uses.
  const std::uint64_t work = previous_total + 16 * static_cast<std::uint64_t>(live_clients.size());
  const bool threaded =
      tasks->workers() > 1 && live_clients.size() >= 2 * shares.size() && work >= def.thread_min_work;
  order_passes();
  if (threaded) split_shares();
  if (threaded) {
    parallel_passes(stats);
  } else {
    // Every client into part 0, which after threaded ticks held only the first share's.
    (void)parts[0].out.reserve_for(previous_total, record_periods);
    PassOutputs out = pass_outputs(0);
    run_passes(0, size32(pass_order), scratch, out, stats);
  }
}

// The holder counts the new sets imply (after every pass: a pass writes only what its own client
// owns), and room for the next tick's outputs.
// The spawns and despawns arrays hold every live client's records of this tick and nothing else:
// one loop over each, with no cost per client.
void WorldImpl::adopt_sets(const TickStats& stats) {
  for (OutputPart& part : parts) {
    for (SpawnRecord& spawn : part.out.spawns) {
      EntityCold& entity = cold[spawn.entity.index];
      ++entity.holders;
      spawn.created = entity.created != 0;
    }
    for (const DespawnRecord& despawn : part.out.despawns) --cold[despawn.entity.index].holders;
  }
  // Spawns arrive about at random, so a pass finds none with probability near exp(-spawns per
  // pass); the count costs about half the scan it can save, so it pays while that is over half.
  count_enters = stats.spawns * 3 < 2 * static_cast<std::uint64_t>(live_clients.size());
  reserve_outputs();
}

// Slots of entities destroyed before this tick become reusable; teleport marks are cleared.
void WorldImpl::release() {
  last_teleported_roots.assign(tree_teleported_list.begin(), tree_teleported_list.end());
  for (const std::uint32_t e : teleported_list) cold[e].teleported = 0;
  teleported_list.clear();
  for (const std::uint32_t e : created_list) cold[e].created = 0;
  created_list.clear();
  for (const std::uint32_t r : tree_teleported_list) cold[r].tree_teleported = 0;
  tree_teleported_list.clear();
  for (const std::uint32_t index : destroyed) entity_slots.free(index);
  destroyed.clear();
  deep_destroyed = 0;
  ++ticks;
}

}  // namespace sightline
