// One configuration of the simulator: positions in, interest totals out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "sightline/status.h"
#include "sightline/world_def.h"

namespace sightline::sim {

/// How interest is managed in one run. Radii in world units.
struct RunConfig {
  /// Where the run's World records its inputs (WorldDef::recording); none by default.
  RecordingSink recording;
  float enter_radius = 1.6f;
  float leave_radius = 1.6f;
  bool tiers = false;         ///< Use sightline::default_distance_tiers().
  bool no_interest = false;   ///< Send everything: no World runs; every client gets every other entity.
  std::uint32_t clients = 0;  ///< The first `clients` entity ids are clients; <= entities.

  /// A culling drill: the entities live in a space that never asked for culling, and a drill
  /// forces it on at enter_radius and leave_radius (World::set_culling_drill). drill == false
  /// with culling_off == true shows what that space sends without the drill: everything.
  bool drill = false;
  bool culling_off = false;

  // The relevance scenario's extras, created after the walk's entities (ids >= entities):
  /// Clients alternate between `teams` teams; each team has `team_markers` static markers with
  /// the team's user key, which teammates subscribe to with bypass_distance (held at any distance,
  /// never by the other team).
  std::uint32_t teams = 0;
  std::uint32_t team_markers = 0;
  /// A boss standing in the middle of the world turns always relevant at this tick (0: no boss).
  std::uint64_t boss_from_tick = 0;
  /// Every `carried_every`-th client's viewer carries an item attached to it (0: none).
  std::uint32_t carried_every = 0;
  /// Each client owns a drone parked beyond every radius.
  bool drones = false;
  /// Walls block sight: a lattice of short walls over the walk's area, one every 2 R, each R long.
  bool walls = false;
};

/// Totals over a run (message counts summed over all clients and ticks).
struct Totals {
  std::uint64_t ticks = 0;
  std::uint64_t entities = 0;
  std::uint64_t clients = 0;
  std::uint64_t send_all = 0;  ///< ticks x clients x (entities - 1).
  std::uint64_t updates = 0;
  std::uint64_t spawns = 0;
  std::uint64_t despawns = 0;
  std::uint64_t messages = 0;  ///< updates + spawns + despawns.
  std::uint64_t distance_tests = 0;
  std::uint64_t cell_candidates = 0;  ///< Entities found in scanned cells (TickStats::cell_candidates).
};

/// Fills xs and zs (each `entities` long) with the positions of tick `tick`. Called once per tick,
/// in order, starting at 0.
using PositionSource = std::function<void(std::uint64_t tick, std::span<float> xs, std::span<float> zs)>;

/// Called after each tick with the number of ticks done.
using Progress = std::function<void(std::uint64_t ticks_done)>;

/// The simulator's WorldDef: the radii, the preset tiers if asked, capacities for the counts.
[[nodiscard]] WorldDef sim_world_def(float enter_radius, float leave_radius, bool tiers,
                                     std::uint32_t entities, std::uint32_t clients);

/// Runs `ticks` ticks of `entities` entities. The world starts empty; entities are created in id
/// order (index == id) at their tick-0 positions, the first `config.clients` become clients, and
/// each tick sets every position, then ticks. Refused (with the library's message) when the
/// configuration or a position is invalid.
[[nodiscard]] Result<Totals> run(const RunConfig& config, std::uint32_t entities, std::uint64_t ticks,
                                 const PositionSource& positions, const Progress& progress = {});

}  // namespace sightline::sim
