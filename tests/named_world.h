// A World driven by external ids (EntityDef::external_id), whose sets and records are read back
// by external id: for tests that compare Worlds holding the same entities in other slots.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sightline/world.h"

namespace sightline::testing {

/// One tick's records of a client, by external id: (kind 's', 'u' or 'd', id, reason, created),
/// sorted.
using NamedRecords = std::vector<std::tuple<char, std::uint64_t, int, bool>>;

/// One event a client received: (class index, x bits, z bits, user data, subject's external id or
/// 0).
using NamedEvent = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t>;

/// A client's set after a tick (external ids, ascending) and its records of the tick.
struct NamedView {
  std::vector<std::uint64_t> set;
  NamedRecords records;
  std::vector<NamedEvent> events;  ///< Sorted.
  friend bool operator==(const NamedView&, const NamedView&) = default;
};

/// The client's set and records of the last tick, by external id (entities removed at that tick
/// are still named: World::external_id).
inline NamedView named_view(const World& world, ClientId c) {
  const auto id = [&](EntityId e) { return world.external_id(e).value(); };
  NamedView v;
  for (const EntityId e : *world.interest_set(c)) v.set.push_back(id(e));
  std::sort(v.set.begin(), v.set.end());
  const ClientStream stream = *world.stream(c);
  for (const SpawnRecord& s : stream.spawns)
    v.records.emplace_back('s', id(s.entity), static_cast<int>(s.reason), s.created);
  for (const EntityId u : stream.updates) v.records.emplace_back('u', id(u), 0, false);
  for (const DespawnRecord& d : stream.despawns)
    v.records.emplace_back('d', id(d.entity), static_cast<int>(d.reason), false);
  std::sort(v.records.begin(), v.records.end());
  for (const EventRecord& r : stream.events) {
    const EventDef& e = world.events()[r.event];
    v.events.emplace_back(e.event_class.index, std::bit_cast<std::uint32_t>(e.x),
                          std::bit_cast<std::uint32_t>(e.z), e.user_data,
                          r.subject.is_null() ? 0 : id(r.subject));
  }
  std::sort(v.events.begin(), v.events.end());
  return v;
}

class NamedWorld {
 public:
  explicit NamedWorld(const WorldDef& def) : world_(std::move(World::create(def).value())) {}

  void create(std::uint64_t id, float x, float z, bool created = true) {
    EntityDef def;
    def.x = x;
    def.z = z;
    def.external_id = id;
    def.created = created;
    ASSERT_TRUE(world_.create_entity(def).ok());
  }
  [[nodiscard]] EntityId of(std::uint64_t id) const { return world_.find_external(id); }
  [[nodiscard]] std::uint64_t id(EntityId e) const { return world_.external_id(e).value(); }
  void remove(std::uint64_t id, bool withdraw) {
    const EntityId e = of(id);
    ASSERT_TRUE((withdraw ? world_.withdraw_entity(e) : world_.destroy_entity(e)).ok());
  }
  /// A decoy created and destroyed, so that the slots of entities created after the next tick
  /// shift.
  void decoy() {
    EntityDef def;
    def.external_id = ~0ull - decoys_++;
    ASSERT_TRUE(world_.destroy_entity(*world_.create_entity(def)).ok());
  }
  /// The client's set and records of the last tick, by external id.
  [[nodiscard]] NamedView view(ClientId c) const { return named_view(world_, c); }
  /// Ticks; then every client's view, by its viewer's external id.
  std::map<std::uint64_t, NamedView> tick() {
    (void)world_.tick();
    std::map<std::uint64_t, NamedView> out;
    for (const ClientId c : world_.clients()) out[id(*world_.viewer(c))] = view(c);
    return out;
  }
  [[nodiscard]] World& world() { return world_; }

 private:
  World world_;
  std::uint64_t decoys_ = 0;
};

}  // namespace sightline::testing
