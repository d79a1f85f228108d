// WorldImpl::validate: every invariant of the World's state between ticks, checked as a whole.
// run_tick calls it at the end of every tick in the builds that keep SIGHTLINE_ASSERT (Debug and
// the sanitizer builds of make test), so every test that ticks a World checks it after every tick.
#include <cstdio>
#include <cstdlib>

#include "sightline_assert.h"
#include "world_impl.h"

namespace sightline {

namespace detail {
void assert_failed(const char* condition, const char* file, int line, const char* detail) noexcept {
  std::fprintf(stderr, "%s:%d: Sightline invariant failed: %s%s%s\n", file, line, condition,
               detail != nullptr ? ": " : "", detail != nullptr ? detail : "");
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

// Outside an anonymous namespace: where assertions are compiled out, these are named only in
// unevaluated operands, which clang would flag in internal functions.
namespace validation {

template <class T>
inline bool within(const Slice& slice, const RecordBuffer<T>& buffer) noexcept {
  return std::uint64_t{slice.begin} + slice.count <= buffer.size();
}

inline bool sorted_unique(const std::vector<std::uint32_t>& list) noexcept {
  for (std::size_t i = 1; i < list.size(); ++i) {
    if (list[i - 1] >= list[i]) return false;
  }
  return true;
}

}  // namespace validation

using validation::sorted_unique;
using validation::within;

void WorldImpl::validate_entities() const {
  const std::size_t slots = xs.size();
  SIGHTLINE_ASSERT(generation.size() == slots && live_generation.size() == slots && cold.size() == slots);
  SIGHTLINE_ASSERT(zs.size() == slots && alive.size() == slots && traits.size() == slots);
  SIGHTLINE_ASSERT(bound.size() == slots && binned.size() == slots && scale.size() == slots);
  SIGHTLINE_ASSERT(external.size() == slots);
  std::uint32_t live = 0;
  std::size_t named = 0;
  std::uint32_t attached = 0;
  std::uint32_t scaled = 0;
  for (std::uint32_t e = 0; e < slots; ++e) {
    SIGHTLINE_ASSERT(generation[e] != 0);
    scaled += scale[e] != 1.0f ? 1u : 0u;
    SIGHTLINE_ASSERT(live_generation[e] == (alive[e] ? generation[e] : 0u));
    SIGHTLINE_ASSERT(((traits[e] & kDead) != 0) == (alive[e] == 0));
    if (!alive[e]) continue;
    ++live;
    if (external[e] != 0) {
      ++named;
      SIGHTLINE_ASSERT(by_external.find(external[e]) == e);
    }
    SIGHTLINE_ASSERT(external[e] != 0 || def.order_key == OrderKey::slot);
    const SpaceSlot& room = space_slots[cold[e].space];
    SIGHTLINE_ASSERT(room.alive);
    SIGHTLINE_ASSERT(cold[e].space_pos < room.entities.size() && room.entities[cold[e].space_pos] == e);
    if (cold[e].parent == kNone) {
      SIGHTLINE_ASSERT(cold[e].depth == 0);
      continue;
    }
    ++attached;
    const std::uint32_t p = cold[e].parent;
    SIGHTLINE_ASSERT(alive[p] && cold[e].depth == cold[p].depth + 1 && (traits[e] & kChild) != 0);
    bool listed = false;
    for (std::uint32_t c = cold[p].first_child; c != kNone && !listed; c = cold[c].next_sibling)
      listed = c == e;
    SIGHTLINE_ASSERT_MSG(listed, "an attached entity is among its parent's children");
  }
  SIGHTLINE_ASSERT(live == live_entities && scaled == scaled_entities && named == by_external.size());
  SIGHTLINE_ASSERT(attached == attached_entities);
  SIGHTLINE_ASSERT(entity_slots.count() == slots && client_pool.count() == client_slots.size());
  SIGHTLINE_ASSERT(space_pool.count() == space_slots.size());
  for (const std::uint32_t e : entity_slots.freed()) SIGHTLINE_ASSERT(e < slots && !alive[e]);
  SIGHTLINE_ASSERT(sorted_unique(always_list) && sorted_unique(wide_list) && sorted_unique(presenter_list));
  for (const std::uint32_t e : always_list) SIGHTLINE_ASSERT(alive[e] && cold[e].always);
  for (const std::uint32_t e : wide_list)
    SIGHTLINE_ASSERT(alive[e] && (bound[e] > 0.0f || scale[e] > 1.0f) && !binned[e]);
  std::size_t in_spaces = 0;
  for (const SpaceSlot& room : space_slots) in_spaces += room.alive ? room.entities.size() : 0;
  SIGHTLINE_ASSERT(in_spaces == live_entities);
}

void WorldImpl::validate_clients() const {
  validate_holders.assign(xs.size(), 0);
  std::uint64_t member_total = 0;
  for (std::size_t i = 0; i < live_clients.size(); ++i) {
    const ClientId id = live_clients[i];
    SIGHTLINE_ASSERT(i == 0 || live_clients[i - 1].index < id.index);
    const ClientSlot& c = client_slots[id.index];
    SIGHTLINE_ASSERT(c.alive && c.generation == id.generation && alive[c.viewer]);
    SIGHTLINE_ASSERT(sorted_unique(c.owned) && sorted_unique(c.extra_origins));
    SIGHTLINE_ASSERT(c.part < parts.size());
    const TickOutputs& outputs = outputs_of(c);
    const RecordBuffer<EntityId>& sets = outputs.members;
    SIGHTLINE_ASSERT(within(c.members, sets) && within(c.spawns, outputs.spawns) &&
                     within(c.despawns, outputs.despawns));
    SIGHTLINE_ASSERT(c.updates_in_set
                         ? c.updates.begin == c.members.begin && c.updates.count == c.members.count
                         : within(c.updates, outputs.updates));
    SIGHTLINE_ASSERT(std::uint64_t{c.events.begin} + c.events.count <= events.records.size());
    SIGHTLINE_ASSERT(!c.sighted || (within(c.seen, outputs.seen) && c.seen.count == c.members.count));
    member_total += c.members.count;
    // The set: sorted by index, live entities of their current generation, never the viewer.
    const EntityId* const set = sets.data() + c.members.begin;
    for (std::uint32_t m = 0; m < c.members.count; ++m) {
      const EntityId member = set[m];
      SIGHTLINE_ASSERT_MSG(m == 0 || set[m - 1].index < member.index, "a set is sorted by index, no repeats");
      SIGHTLINE_ASSERT(member.index < xs.size() && live_generation[member.index] == member.generation);
      SIGHTLINE_ASSERT(member.index != c.viewer);
      ++validate_holders[member.index];
    }
    auto holds = [&](EntityId e) {
      const EntityId* const end = set + c.members.count;
      const EntityId* at =
          std::lower_bound(set, end, e.index, [](EntityId x, std::uint32_t v) { return x.index < v; });
      return at != end && *at == e;
    };
    for (std::uint32_t s = 0; s < c.spawns.count; ++s)
      SIGHTLINE_ASSERT(holds(outputs.spawns[c.spawns.begin + s].entity));
    for (std::uint32_t d = 0; d < c.despawns.count; ++d) {
      SIGHTLINE_ASSERT(!holds(outputs.despawns[c.despawns.begin + d].entity));
    }
    for (const EntityId u : updates_of(c)) SIGHTLINE_ASSERT(holds(u));
  }
  SIGHTLINE_ASSERT(member_total <= this->member_total());
  for (const OutputPart& part : parts) {
    SIGHTLINE_ASSERT(!record_periods || part.out.periods.size() == part.out.members.size());
  }
  for (std::size_t e = 0; e < xs.size(); ++e) {
    SIGHTLINE_ASSERT_MSG(cold[e].holders == validate_holders[e],
                         "holder counts equal the sets that hold each entity");
  }
}

void WorldImpl::validate() const {
  validate_entities();
  validate_clients();
}

}  // namespace sightline
