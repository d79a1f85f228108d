// A World driven by external ids (EntityDef::external_id), whose sets and records are read back
// by external id: for tests that compare Worlds holding the same entities in other slots.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

/// A client's set after a tick (external ids, ascending) and its records of the tick.
struct NamedView {
  std::vector<std::uint64_t> set;
  NamedRecords records;
  friend bool operator==(const NamedView&, const NamedView&) = default;
};

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
  /// The external id of a live entity, or of one removed through remove().
  [[nodiscard]] std::uint64_t id(EntityId e) const {
    const Result<std::uint64_t> external = world_.external_id(e);
    return external.ok() ? *external : gone_.at(key(e));
  }
  void remove(std::uint64_t id, bool withdraw) {
    const EntityId e = of(id);
    gone_[key(e)] = id;
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
  [[nodiscard]] NamedView view(ClientId c) const {
    NamedView v;
    for (const EntityId e : *world_.interest_set(c)) v.set.push_back(id(e));
    std::sort(v.set.begin(), v.set.end());
    const ClientStream stream = *world_.stream(c);
    for (const SpawnRecord& s : stream.spawns)
      v.records.emplace_back('s', id(s.entity), static_cast<int>(s.reason), s.created);
    for (const EntityId u : stream.updates) v.records.emplace_back('u', id(u), 0, false);
    for (const DespawnRecord& d : stream.despawns)
      v.records.emplace_back('d', id(d.entity), static_cast<int>(d.reason), false);
    std::sort(v.records.begin(), v.records.end());
    return v;
  }
  /// Ticks; then every client's view, by its viewer's external id.
  std::map<std::uint64_t, NamedView> tick() {
    (void)world_.tick();
    std::map<std::uint64_t, NamedView> out;
    for (const ClientId c : world_.clients()) out[id(*world_.viewer(c))] = view(c);
    return out;
  }
  [[nodiscard]] World& world() { return world_; }

 private:
  static std::uint64_t key(EntityId e) { return std::uint64_t{e.index} << 32 | e.generation; }
  World world_;
  std::map<std::uint64_t, std::uint64_t> gone_;  // by key(): the ids of entities removed
  std::uint64_t decoys_ = 0;
};

}  // namespace sightline::testing
