// The plain pass: the client pass of a client none of whose rules apply beyond distance (every
// client of the benchmark's worlds). It gives exactly the general pass's records (the tests run
// both) at a fraction of its fixed cost, which dominates small sets: a client seeing a handful
// of entities paid more for the general pass's setup than for its distance tests.
#include <algorithm>

#include "pass_steps.h"
#include "simd.h"
#include "world_impl.h"

namespace sightline {

// What the plain pass leaves out, world by world: attachments, the crowd cap, always-relevant
// entities, presenters, bounded and scaled entities, interest keys (and with them key rates and bypass
// subscriptions, which admit only keyed entities), distance tiers and the visibility filter.
// Nor does it run on a tick after entities were destroyed: the leave test below reads positions
// alone, and a dead member is told apart only by its trait, which the general pass reads.
bool WorldImpl::plain_world() const noexcept {
  return def.fast_paths && destroyed.empty() && attached_entities == 0 && deep_destroyed == 0 &&
         def.crowd_cap == 0 && always_roots.empty() && presenter_list.empty() && wide_list.empty() &&
         scaled_entities == 0 && keyed_entities == 0 && tier_period.empty() && filter == nullptr;
}

// And client by client: owned entities and extra origins (forced trees, several origins); a space
// that does not cull, has walls or does not hold every live entity (space tests per candidate),
// which settle_plain_spaces notes once a tick in SpaceSlot::plain. An entity owned by another
// client, or its origin, is a plain point to this one.
void WorldImpl::settle_plain_spaces() noexcept {
  for (SpaceSlot& room : space_slots) {
    room.plain =
        room.alive && room.culls && room.entities.size() == live_entities && room.walls.wall_count() == 0;
  }
}

// Below two full steps of eight the gathers cost more than the scalar loop saves (profile binary:
// observers, 7 members a client, 3-5% slower with them throughout; MMO, 100 a client, 8% faster).
constexpr std::uint32_t kVectorLeave = 16;

// Nothing went and nothing can enter: the set is the old one, every member due.
SIGHTLINE_FORCE_INLINE inline void WorldImpl::keep_set(ClientSlot& client, const EntityId* old_members,
                                                       std::uint32_t count, PassOutputs& out,
                                                       TickStats& stats) {
  const auto members_begin = static_cast<std::uint32_t>(out.to.members.size());
  EntityId* const to = out.to.members.extend(count);
  // Most kept sets of a sparse world hold a member or none: no call for those.
  if (count == 1) {
    to[0] = old_members[0];
  } else {
    std::copy(old_members, old_members + count, to);
  }
  if (record_periods) {
    std::uint32_t* const period_of = out.to.periods.extend(count);
    std::fill(period_of, period_of + count, 1u);
  }
  client.members = {members_begin, count};
  client.spawns = {static_cast<std::uint32_t>(out.to.spawns.size()), 0};
  client.updates = {members_begin, count};
  client.updates_in_set = true;
  client.despawns = {static_cast<std::uint32_t>(out.to.despawns.size()), 0};
  stats.distance_tests += count;
  stats.updates += count;
  stats.members += count;
}

SIGHTLINE_FORCE_INLINE inline bool WorldImpl::plain_pass(ClientSlot& client, PassScratch& pass,
                                                         PassOutputs& out, TickStats& stats) {
  const std::uint32_t viewer = client.viewer;
  const EntityCold& viewer_cold = cold[viewer];
  const SpaceSlot& room = space_slots[viewer_cold.space];
  if (!room.plain || !client.owned.empty() || !client.extra_origins.empty()) return false;
  const PassRadii radii = pass_radii(client, room);
  const float enter2 = radii.enter * radii.enter;
  const float leave2 = radii.leave * radii.leave;
  client.enter = radii.enter;
  client.leave = radii.leave;
  client.sighted = false;
  client.origins_changed = client.refresh || viewer_cold.teleported;
  client.refresh = false;
  ++stats.plain_passes;
  const float ox = xs[viewer];
  const float oz = zs[viewer];
  const EntityId* const old_members = out.old_members(client);
  const std::uint32_t old_count = client.members.count;

  // Leave: no member can be dead (plain_world): the leave test (vectorised for a large set,
  // branch-free for a small one) over the whole set notes the positions that go, and counts the
  // kept members within R. It stamps nothing: the enter count below decides whether any stamp
  // is needed.
  std::uint32_t* const gaps = pass.gaps.data();
  std::uint32_t inside = 0;
  const LeaveTest test = old_count >= kVectorLeave ? leave_test : &leave_test_scalar;
  const std::uint32_t gap_count =
      test(old_members, old_count, xs.data(), zs.data(), ox, oz, leave2, enter2, viewer, gaps, inside);

  // Enter: the grid's entities within R not already held. In a plain world every live entity is
  // binned and no member is dead, so those within R are the members counted inside, the viewer,
  // and whatever may enter: a count that finds no more than that settles the pass without a stamp
  // or a scan (most passes, where sets change slowly; count_enters turns it off where most find
  // something).
  const NearRuns near = near_runs(grid, pass, ox, oz, radii.enter, stats);
  const float* const item_x = grid.item_x().data();
  const float* const item_z = grid.item_z().data();
  // The count finds at least the held (inside, and the viewer): where the runs hold no more
  // candidates than that, it is known without a distance test (most passes of a sparse world).
  const std::uint32_t held = inside + binned[viewer];
  const bool newcomers =
      !count_enters || (near.candidates != held &&
                        count_near(item_x, item_z, pass.runs.data(), near.rows, ox, oz, enter2) != held);

  if (gap_count == 0 && !newcomers) {
    keep_set(client, old_members, old_count, out, stats);
  } else {
    change_set(client, room, gap_count, newcomers, near.rows, pass, out, stats);
  }
  return true;
}

// The rest of a plain pass where something went or may enter: the despawns (which keep the set's
// order), the stamped scan, the spawns sorted by index and merged into the kept members.
void WorldImpl::change_set(ClientSlot& client, const SpaceSlot& room, std::uint32_t gap_count, bool newcomers,
                           std::uint32_t rows, PassScratch& pass, PassOutputs& out, TickStats& stats) {
  const std::uint32_t viewer = client.viewer;
  const EntityId* const old_members = out.old_members(client);
  const std::uint32_t old_count = client.members.count;
  const std::uint32_t* const gaps = pass.gaps.data();
  const auto despawns_begin = static_cast<std::uint32_t>(out.to.despawns.size());
  DespawnRecord* const despawned = out.to.despawns.extend(gap_count);
  const DespawnReason out_of_range = room.switched_on ? DespawnReason::culling_switched : DespawnReason::left;
  std::uint32_t untested = 0;  // the viewer goes without a distance test
  for (std::uint32_t g = 0; g < gap_count; ++g) {
    const EntityId member = old_members[gaps[g]];
    const bool own = member.index == viewer;
    untested += own ? 1 : 0;
    despawned[g] = {member, own ? DespawnReason::left : out_of_range};
  }
  stats.distance_tests += old_count - untested;

  pass.entering.clear();
  if (newcomers) {
    const std::uint32_t epoch = begin_pass(pass);
    std::uint32_t* const stamp = pass.stamp.data();
    // The viewer is never its own member; the members, those that went too, are held (beyond
    // L >= R none can enter): stamped, none of them enters.
    stamp[viewer] = epoch;
    for (std::uint32_t i = 0; i < old_count; ++i) stamp[old_members[i].index] = epoch;
    const float ox = xs[viewer];
    const float oz = zs[viewer];
    const std::uint32_t found =
        scan(grid.item_x().data(), grid.item_z().data(), grid.items().data(), pass.runs.data(), rows, ox, oz,
             client.enter * client.enter, stamp, epoch, pass.hits.data());
    const std::uint32_t* const hits = pass.hits.data();
    for (std::uint32_t h = 0; h < found; ++h) {
      const std::uint32_t e = hits[h];
      stamp[e] = epoch;
      const SpawnReason reason = cold[e].tree_teleported ? SpawnReason::teleport : SpawnReason::near;
      pass.entering.push_back(static_cast<std::uint64_t>(e) << 8 | static_cast<std::uint64_t>(reason));
    }
  }

  const std::uint32_t spawns_begin = write_spawns(pass, out.to.spawns, generation.data());
  const auto spawn_count = static_cast<std::uint32_t>(pass.entering.size());
  const SpawnRecord* const spawned = out.to.spawns.data() + spawns_begin;
  const auto members_begin = static_cast<std::uint32_t>(out.to.members.size());
  const std::uint32_t member_count = old_count - gap_count + spawn_count;
  merge_set(old_members, old_count, gaps, gap_count, spawned, spawn_count,
            out.to.members.extend(member_count));

  // Without tiers and keys every member is due every tick: the updates are the set itself.
  if (record_periods) {
    std::uint32_t* const period_of = out.to.periods.extend(member_count);
    std::fill(period_of, period_of + member_count, 1u);
  }
  client.members = {members_begin, member_count};
  client.spawns = {spawns_begin, spawn_count};
  client.updates = {members_begin, member_count};
  client.updates_in_set = true;
  client.despawns = {despawns_begin, gap_count};
  stats.spawns += spawn_count;
  stats.updates += member_count;
  stats.despawns += gap_count;
  stats.members += member_count;
}

// The passes of a plain tick: each client's plain pass, or the general one where something of its
// own takes it off the plain pass. One loop here, so the plain pass is inlined into it.
void WorldImpl::plain_passes(std::uint32_t first, std::uint32_t last, PassScratch& pass, PassOutputs& out,
                             TickStats& stats) {
  for (std::uint32_t i = first; i < last; ++i) {
    ClientSlot& client = client_slots[pass_order[i]];
    if (!plain_pass(client, pass, out, stats)) client_pass(client, pass, out, stats);
    client.part = out.part;
  }
}

}  // namespace sightline
