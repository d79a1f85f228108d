// A small hand-built World for directed tests: entities placed by hand, records read back as
// plain vectors so a test states exactly what it expects.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "sightline/sightline.h"

namespace sightline::testing {

/// A culling space at these radii.
inline SpaceDef culling_space(float enter_radius, float leave_radius) {
  SpaceDef def;
  def.culling = Culling::on;
  def.enter_radius = enter_radius;
  def.leave_radius = leave_radius;
  return def;
}

/// default_world_def() at these radii.
inline WorldDef small_world_def(float enter_radius = 10.0f, float leave_radius = 12.0f) {
  WorldDef def = default_world_def();
  def.enter_radius = enter_radius;
  def.leave_radius = leave_radius;
  return def;
}

struct SmallWorld {
  explicit SmallWorld(float enter_radius = 10.0f, float leave_radius = 12.0f)
      : SmallWorld(small_world_def(enter_radius, leave_radius)) {}
  /// `def` must be valid (the constructor aborts through Result otherwise).
  explicit SmallWorld(const WorldDef& def) : world(std::move(World::create(def).value())) {}

  EntityId make(float x, float z, SpaceId space = {}) { return make({.x = x, .z = z, .space = space}); }

  EntityId make(const EntityDef& def) {
    auto e = world.create_entity(def);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? *e : EntityId{};
  }

  ClientId client(EntityId viewer) {
    auto c = world.create_client(viewer);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : ClientId{};
  }

  std::vector<std::pair<EntityId, SpawnReason>> spawns(ClientId c) const {
    const ClientStream s = *world.stream(c);
    std::vector<std::pair<EntityId, SpawnReason>> out;
    for (const SpawnRecord& r : s.spawns) out.emplace_back(r.entity, r.reason);
    return out;
  }

  std::vector<std::pair<EntityId, DespawnReason>> despawns(ClientId c) const {
    const ClientStream s = *world.stream(c);
    std::vector<std::pair<EntityId, DespawnReason>> out;
    for (const DespawnRecord& r : s.despawns) out.emplace_back(r.entity, r.reason);
    return out;
  }

  std::vector<EntityId> updates(ClientId c) const {
    const ClientStream s = *world.stream(c);
    std::vector<EntityId> out;
    for (const EntityId r : s.updates) out.push_back(r);
    return out;
  }

  std::vector<EntityId> held(ClientId c) const {
    const auto set = *world.interest_set(c);
    return {set.begin(), set.end()};
  }

  /// Whether `e` is in c's interest set after the last tick; is_relevant_to must say the same.
  bool holds(ClientId c, EntityId e) const {
    const auto set = *world.interest_set(c);
    const bool member = std::find(set.begin(), set.end(), e) != set.end();
    const Result<bool> relevant = world.is_relevant_to(c, e);
    EXPECT_TRUE(relevant.ok() && *relevant == member)
        << "is_relevant_to(client " << c.index << ", entity " << e.index << ") disagrees with the set";
    return member;
  }

  World world;
};

/// A serializer of both parts: the entity's position, two floats. `world` is its World.
inline bool write_position(Stream& s, EntityId e, StatePart, void* world) {
  Position p = *static_cast<World*>(world)->position(e);
  return s.serialize_float(p.x) && s.serialize_float(p.z);
}

/// default_replicator_def() that writes `world`'s positions (write_position).
inline ReplicatorDef position_replicator_def(World& world, Delivery delivery = Delivery::reliable) {
  ReplicatorDef def = default_replicator_def();
  def.serialize = write_position;
  def.serialize_context = &world;
  def.delivery = delivery;
  return def;
}

/// Every record of the client's packets of the last send, in order. Payloads view the packets:
/// valid until the next send.
inline std::vector<WireRecord> sent_records(const Replicator& r, ClientId c) {
  std::vector<WireRecord> out;
  DecodedPacket p;
  for (const std::span<const std::uint8_t> packet : *r.packets(c)) {
    EXPECT_TRUE(decode_packet(packet, p).ok());
    out.insert(out.end(), p.records.begin(), p.records.end());
  }
  return out;
}

}  // namespace sightline::testing
