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
  for (std::uint32_t c = w.first_child[e]; c != WorldImpl::kNone; c = w.next_sibling[c]) {
    if (any_in_tree(w, c, f)) return true;
  }
  return false;
}

// Position of e in the client's set after the last tick, or -1.
std::int64_t member_at(const WorldImpl& w, const ClientSlot& client, std::uint32_t e) {
  const EntityId* const begin = w.members[w.current].data() + client.members.begin;
  const EntityId* const end = begin + client.members.count;
  const EntityId* at = std::lower_bound(begin, end, e, [](EntityId m, std::uint32_t i) { return m.index < i; });
  return at != end && at->index == e ? at - begin : -1;
}

}  // namespace

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
  const std::uint32_t client_space = w.space[c.viewer];
  const SpaceSlot& room = w.space_slots[client_space];
  auto answer = [&](bool held, Rule rule) { return Why{held, rule, EntityId{r, w.generation[r]}}; };
  if (e == c.viewer) return answer(false, Rule::viewer);
  if (w.space[r] != client_space) return answer(false, Rule::other_space);
  if (any_in_tree(w, r, [&](std::uint32_t x) { return w.always[x] != 0; })) return answer(true, Rule::always);
  if (any_in_tree(w, r, [&](std::uint32_t x) { return w.owner[x] == client.index + 1; })) {
    return answer(true, Rule::owner);
  }
  const auto is_origin = [&](std::uint32_t x) {
    return x == c.viewer || std::binary_search(c.extra_origins.begin(), c.extra_origins.end(), x);
  };
  if (any_in_tree(w, r, is_origin)) return answer(true, Rule::origin);
  const Subscription* subscription = w.key[r] == 0 ? nullptr : find_subscription(c, w.key[r]);
  if (w.key[r] != 0 && subscription == nullptr) return answer(false, Rule::key_excluded);
  if (w.presenter[r]) return answer(true, Rule::presenter);
  if (subscription != nullptr && subscription->bypass_distance) return answer(true, Rule::key_bypass);
  if (!room.culls) return answer(true, Rule::unculled);
  std::array<float, kMaxOrigins + 1> origin_x;
  std::array<float, kMaxOrigins + 1> origin_z;
  std::size_t origins = 0;
  float best = std::numeric_limits<float>::infinity();
  auto consider = [&](std::uint32_t o) {
    origin_x[origins] = w.xs[o];
    origin_z[origins] = w.zs[o];
    ++origins;
    const float dx = w.xs[r] - w.xs[o];
    const float dz = w.zs[r] - w.zs[o];
    best = std::min(best, dx * dx + dz * dz);
  };
  consider(c.viewer);
  for (const std::uint32_t o : c.extra_origins) {
    if (w.space[o] == client_space) consider(o);
  }
  const std::int64_t at = member_at(w, c, r);
  const bool member = at >= 0;
  const float enter = room.enter + w.bound[r];
  const float leave = room.leave + w.bound[r];
  Rule rule = Rule::out_of_range;
  if (best <= enter * enter) {
    rule = Rule::near;
  } else if (member && best <= leave * leave) {
    rule = Rule::within_leave;
  } else {
    return answer(false, Rule::out_of_range);
  }
  const Sight sight = w.sight_of(c, client.index, origins, origin_x.data(), origin_z.data());
  if (sight.needed) {
    OccluderScratch occluders;
    if (!w.sees(sight, r, occluders)) {
      if (!member) return answer(false, Rule::hidden);
      const std::uint64_t last_tick = w.ticks == 0 ? 0 : w.ticks - 1;
      const std::uint64_t last =
          c.sighted ? w.seen[w.current][c.seen.begin + static_cast<std::uint32_t>(at)] : last_tick;
      if (last_tick - last > sight.hold_ticks) return answer(false, Rule::hidden);
    }
  }
  return answer(true, rule);
}

Result<std::uint32_t> World::holder_count(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.holders[entity.index];
}

}  // namespace sightline
