// A World and a BruteForceOracle driven in lockstep: every input goes to both, every tick's
// records are compared. The first inconsistency is kept for the test to report.
#pragma once

#include <span>
#include <string>

#include "brute_force_oracle.h"
#include "sightline/world.h"

namespace sightline::testing {

class MirroredWorld {
 public:
  /// `def` must be valid (the constructor aborts through Result otherwise).
  explicit MirroredWorld(const WorldDef& def);

  // Each forwards to the World; when the World accepts, the oracle gets the same input.
  // destroy_entity of a viewer must be refused with entity_is_viewer, anything else on a live
  // handle must be accepted; a mismatch is recorded in error().
  Result<EntityId> create_entity(const EntityDef& def);
  Status destroy_entity(EntityId entity);
  Status set_position(EntityId entity, float x, float z);
  Status set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                       std::span<const float> zs);
  Status set_always_relevant(EntityId entity, bool always_relevant);
  Result<ClientId> create_client(EntityId viewer);
  Status destroy_client(ClientId client);
  Status set_viewer(ClientId client, EntityId viewer);
  Status set_radii(float enter_radius, float leave_radius);

  /// Ticks both, then compares the TickStats (all but distance_tests), clients(), every stream and
  /// every interest set.
  TickStats tick();

  [[nodiscard]] World& world() noexcept { return world_; }
  [[nodiscard]] const BruteForceOracle& oracle() const noexcept { return oracle_; }
  /// Empty while everything matched; else the first difference.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  void note(std::string message);

  World world_;
  BruteForceOracle oracle_;
  std::string error_;
};

}  // namespace sightline::testing
