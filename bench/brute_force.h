// The baseline: the same interest rule as World::tick(), with no grid. O(clients x entities).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sightline/stream.h"

namespace sightline::bench {

/// Per client and tick: drop members farther than the leave radius (despawn), then test every
/// other entity that is not a member against the enter radius (spawn, d == R inside), then emit
/// an update for every member; with a crowd cap, keep the cap nearest of the kept and new members
/// by (d2 / L^2 for a member, d2 / R^2 for a newcomer, index), as WorldDef::crowd_cap does.
/// Sets are sorted vectors plus a per-client member flag per entity.
/// Entities never die here; clients never change viewer. Buffers keep their capacity.
class BruteForce {
 public:
  /// `viewers[c]` is the entity client c views from; entity indices are 0 .. entities-1.
  BruteForce(std::uint32_t entities, std::span<const std::uint32_t> viewers, float enter_radius,
             float leave_radius, std::uint32_t crowd_cap = 0);

  /// Copies this tick's positions in; both spans hold one value per entity.
  void set_positions(std::span<const float> xs, std::span<const float> zs);

  /// Replaces client `client`'s set with `members` (sorted entity indices): lets the baseline
  /// take over a state the World reached, without replaying the ticks that led there.
  void set_members(std::size_t client, std::span<const std::uint32_t> members);

  /// Runs one tick. distance_tests counts every member tested against L and every non-member
  /// tested against R (all entities but the viewer).
  TickStats tick();

  /// What send() wrote, over every client.
  struct SendTotals {
    std::uint64_t bytes = 0;
    std::uint64_t updates = 0;
  };

  /// The baseline of a Replicator send after tick(), the straightforward way: per client, every
  /// despawn and every spawn (full state) of the tick, then updates by priority accumulator
  /// (the Replicator's default rule with no bounds or speed: base 1 / (1 + d / (R / 10)), added
  /// times `tick_seconds` each send), all members scored and fully sorted (highest first, then
  /// lowest index), each written while it fits in `budget_bytes`, its accumulator reset.
  /// Accumulators live in a hash map per client; every record's state is serialized for that
  /// client alone (the walker's state: position to 1/256 unit, a spawn 18 bytes more).
  SendTotals send(float tick_seconds, std::uint32_t budget_bytes);

 private:
  struct Client {
    std::uint32_t viewer = 0;
    std::vector<std::uint8_t> is_member;  // per entity
    std::vector<std::uint32_t> members;   // sorted
    std::vector<std::uint32_t> kept;
    std::vector<std::uint32_t> spawns;
    std::vector<std::uint32_t> despawns;
    std::vector<std::uint32_t> updates;
    std::vector<std::pair<float, std::uint32_t>> ranked;
    std::unordered_map<std::uint32_t, float> accumulators;  // send()'s, by member
  };

  std::vector<float> xs_;
  std::vector<float> zs_;
  std::vector<Client> clients_;
  std::vector<std::pair<float, std::uint32_t>> candidates_;  // send()'s, one client at a time
  std::vector<std::uint8_t> packet_;
  float enter_radius_;
  float enter2_;
  float leave2_;
  std::uint32_t crowd_cap_;
  std::uint64_t ticks_ = 0;
};

}  // namespace sightline::bench
