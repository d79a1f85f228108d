// The questions a game asks of the last tick: who holds what, and why.
#include <algorithm>
#include <array>
#include <limits>

#include "world_impl.h"

namespace sightline {

namespace {

// Calls f on e and everything attached below it until f returns true; returns whether it did.
template <class F>
bool any_in_tree(const WorldImpl& w, std::uint32_t e, const F& f) {
  if (f(e)) return true;
  for (std::uint32_t c = w.cold[e].first_child; c != WorldImpl::kNone; c = w.cold[c].next_sibling) {
    if (any_in_tree(w, c, f)) return true;
  }
  return false;
}

// Position of e in the client's set after the last tick, or -1.
std::int64_t member_at(const WorldImpl& w, const ClientSlot& client, std::uint32_t e) {
  const EntityId* const begin = w.outputs_of(client).members.data() + client.members.begin;
  const EntityId* const end = begin + client.members.count;
  const EntityId* at =
      std::lower_bound(begin, end, e, [](EntityId m, std::uint32_t i) { return m.index < i; });
  return at != end && at->index == e ? at - begin : -1;
}

}  // namespace

Result<GridScan> World::grid_scan(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const ClientSlot& c = w.client_slots[client.index];
  GridScan scan;
  scan.origin_x = w.grid.origin_x();
  scan.origin_z = w.grid.origin_z();
  scan.cell_size = w.grid.cell_size();
  scan.cells_x = w.grid.cells_x();
  scan.cells_z = w.grid.cells_z();
  scan.culling = c.enter != 0.0f;
  if (!scan.culling) return scan;
  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  scan.origins = static_cast<std::uint32_t>(w.origins_of(c, origin_x.data(), origin_z.data()));
  for (std::uint32_t o = 0; o < scan.origins; ++o) {
    const Grid::Range r = w.grid.cell_range(origin_x[o], origin_z[o], c.enter);
    scan.ranges[o] = {r.x0, r.x1, r.z0, r.z1};
  }
  return scan;
}

Result<bool> World::is_relevant_to(ClientId client, EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = w.check(entity); !s) return s;
  return member_at(w, w.client_slots[client.index], entity.index) >= 0;
}

Result<Why> World::why(ClientId client, EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = w.check(entity); !s) return s;
  const ClientSlot& c = w.client_slots[client.index];
  const std::uint32_t e = entity.index;
  const std::uint32_t r = w.root_of(e);
  const std::uint32_t client_space = w.cold[c.viewer].space;
  const SpaceSlot& room = w.space_slots[client_space];
  const PassRadii radii = pass_radii(c, room);
  auto answer = [&](bool held, Rule rule) { return Why{held, rule, EntityId{r, w.generation[r]}}; };
  if (e == c.viewer) return answer(false, Rule::viewer);

  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  std::size_t origins = 0;
  auto add_origin = [&](std::uint32_t o) {
    origin_x[origins] = w.xs[o];
    origin_z[origins] = w.zs[o];
    ++origins;
  };
  add_origin(c.viewer);
  for (const std::uint32_t o : c.extra_origins) {
    if (w.cold[o].space == client_space) add_origin(o);
  }
  const Sight sight = w.sight_of(c, client.index, origins, origin_x.data(), origin_z.data());
  OccluderScratch occluders;
  const auto is_origin = [&](std::uint32_t x) {
    return x == c.viewer || std::binary_search(c.extra_origins.begin(), c.extra_origins.end(), x);
  };

  // Rules b to k for a root; `rank` orders the roots held by distance (j, k) for the crowd cap.
  struct Decision {
    bool held = false;
    Rule rule = Rule::out_of_range;
    bool by_distance = false;
    std::uint64_t rank = 0;
  };
  auto decide = [&](std::uint32_t x) -> Decision {
    auto rule = [](bool held, Rule which) { return Decision{held, which}; };
    if (w.cold[x].space != client_space) return rule(false, Rule::other_space);
    if (any_in_tree(w, x, [&](std::uint32_t y) { return w.cold[y].always != 0; }))
      return rule(true, Rule::always);
    if (any_in_tree(w, x, [&](std::uint32_t y) { return w.cold[y].owner == client.index + 1; })) {
      return rule(true, Rule::owner);
    }
    if (any_in_tree(w, x, is_origin)) return rule(true, Rule::origin);
    const Subscription* subscription = w.cold[x].key == 0 ? nullptr : find_subscription(c, w.cold[x].key);
    if (w.cold[x].key != 0 && subscription == nullptr) return rule(false, Rule::key_excluded);
    if (w.cold[x].presenter) return rule(true, Rule::presenter);
    if (subscription != nullptr && subscription->bypass_distance) return rule(true, Rule::key_bypass);
    if (!room.culls) return rule(true, Rule::unculled);
    float best = std::numeric_limits<float>::infinity();
    for (std::size_t o = 0; o < origins; ++o) {
      const float dx = w.xs[x] - origin_x[o];
      const float dz = w.zs[x] - origin_z[o];
      best = std::min(best, dx * dx + dz * dz);
    }
    const std::int64_t at = member_at(w, c, x);
    const bool member = at >= 0;
    const float enter = w.scale[x] * radii.enter + w.bound[x];
    const float leave = w.scale[x] * radii.leave + w.bound[x];
    Decision d{true, Rule::near, true, 0};
    if (best <= enter * enter) {
      d.rule = Rule::near;
    } else if (member && best <= leave * leave) {
      d.rule = Rule::within_leave;
    } else {
      return rule(false, Rule::out_of_range);
    }
    if (sight.needed && !w.sees(sight, x, occluders)) {
      if (!member) return rule(false, Rule::hidden);
      const std::uint64_t last_tick = w.ticks == 0 ? 0 : w.ticks - 1;
      const std::uint64_t last =
          c.sighted ? w.outputs_of(c).seen[c.seen.begin + static_cast<std::uint32_t>(at)] : last_tick;
      if (last_tick - last > sight.hold_ticks) return rule(false, Rule::hidden);
    }
    d.rank = crowd_rank(best, member ? leave : enter, x);
    return d;
  };

  const Decision d = decide(r);
  if (d.by_distance && w.def.crowd_cap != 0) {
    // Held only if fewer than crowd_cap roots held by distance rank before it.
    const CrowdOrder before = w.crowd_order();
    std::uint32_t ahead = 0;
    for (std::uint32_t x = 0; x < w.alive.size() && ahead < w.def.crowd_cap; ++x) {
      if (x == r || !w.alive[x] || w.cold[x].parent != WorldImpl::kNone) continue;
      const Decision other = decide(x);
      if (other.by_distance && before(other.rank, d.rank)) ++ahead;
    }
    if (ahead >= w.def.crowd_cap) return answer(false, Rule::crowded);
  }
  return answer(d.held, d.rule);
}

Result<std::uint32_t> World::holder_count(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.cold[entity.index].holders;
}

}  // namespace sightline
