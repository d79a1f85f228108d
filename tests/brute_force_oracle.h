// A brute-force model of the documented interest rule, written from the docs and not from the
// library's code: every client is tested against every entity each tick, O(clients x entities).
// Tests drive it in lockstep with a World and require identical records.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sightline/handles.h"
#include "sightline/stream.h"
#include "sightline/world_def.h"

namespace sightline {
class World;
}

namespace sightline::testing {

/// The rule, per client, per tick (the state starts empty; the first tick is tick 0):
///   1. leave: members that were destroyed leave (despawn `destroyed`); the viewer itself leaves
///      (`left`); always-relevant members stay without a test; any other member leaves (`left`)
///      when its float squared distance to the viewer exceeds L*L;
///   2. enter: every live always-relevant non-member other than the viewer enters (`always`);
///      every other live non-member non-viewer enters (`near`) when dx*dx + dz*dz <= R*R, with
///      dx = ex - vx and dz = ez - vz in float (d == R is inside);
///   3. schedule: every member gets an update (no tiers); with tiers, a member within
///      fraction * R of the viewer (inclusive) uses the first such tier's
///      period, a member beyond the last tier uses the last tier's period, and it is updated when
///      period == 1 or (tick + entity_index) % period == 0.
///      "Within" is tested like the enter radius: d2 <= (fraction * R) * (fraction * R) in float.
/// Every list is sorted by entity index. Destroyed slots are forgotten after the tick.
class BruteForceOracle {
 public:
  struct ClientRecords {
    std::vector<SpawnRecord> spawns;
    std::vector<UpdateRecord> updates;
    std::vector<DespawnRecord> despawns;
    std::vector<EntityId> members;  ///< The interest set after the last tick.
  };

  BruteForceOracle(float enter_radius, float leave_radius, std::vector<DistanceTier> tiers);

  // Mirrors of the World's inputs. Each returns an empty string when the call is consistent with
  // the rule (the handle names what the oracle knows), else a description of the inconsistency.
  std::string create_entity(EntityId id, float x, float z, bool always_relevant);
  std::string destroy_entity(EntityId id);
  std::string set_position(EntityId id, float x, float z);
  std::string set_always_relevant(EntityId id, bool always_relevant);
  std::string create_client(ClientId id, EntityId viewer);
  std::string destroy_client(ClientId id);
  std::string set_viewer(ClientId id, EntityId viewer);
  void set_radii(float enter_radius, float leave_radius);

  /// Runs one tick of the rule; returns its totals (distance_tests is left 0).
  TickStats tick();

  [[nodiscard]] std::uint64_t tick_count() const noexcept { return ticks_; }
  /// Live clients, ascending by index.
  [[nodiscard]] std::vector<ClientId> clients() const;
  /// Live entities, ascending by index.
  [[nodiscard]] std::vector<EntityId> entities() const;
  /// Live entities that are some client's viewer.
  [[nodiscard]] bool is_viewer(EntityId id) const;
  [[nodiscard]] EntityId viewer(ClientId id) const;
  /// Nullptr when the client is unknown.
  [[nodiscard]] const ClientRecords* records(ClientId id) const;

  /// Compares the World's clients(), and every client's stream and interest set, with the
  /// oracle's. Empty when equal; otherwise the first difference, naming client and entity.
  [[nodiscard]] std::string compare(const World& world) const;

 private:
  struct Entity {
    EntityId id;
    float x = 0.0f;
    float z = 0.0f;
    bool always = false;
    bool alive = true;  ///< False once destroyed, until the next tick forgets the slot.
  };
  struct Client {
    ClientId id;
    EntityId viewer;
    ClientRecords records;
  };

  [[nodiscard]] const Entity* live(EntityId id) const;
  [[nodiscard]] std::uint32_t period_for(float distance2) const;

  float enter_radius_;
  float leave_radius_;
  std::vector<DistanceTier> tiers_;
  std::map<std::uint32_t, Entity> entities_;          // by slot index
  std::map<std::uint32_t, std::uint32_t> last_generation_;  // by slot index, ever seen
  std::map<std::uint32_t, Client> clients_;           // by slot index
  std::uint64_t ticks_ = 0;
};

/// "entity 3:1", "client 0:2": the library's own spelling, for messages.
[[nodiscard]] std::string to_string(EntityId id);
[[nodiscard]] std::string to_string(ClientId id);

}  // namespace sightline::testing
