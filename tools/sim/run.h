// One configuration of the simulator: positions in, interest totals out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "sightline/status.h"

namespace sightline::sim {

/// How interest is managed in one run. Radii in world units.
struct RunConfig {
  float enter_radius = 1.6f;
  float leave_radius = 1.6f;
  bool tiers = false;         ///< Use sightline::default_distance_tiers().
  bool no_interest = false;   ///< Send everything: no World runs; every client gets every other entity.
  std::uint32_t clients = 0;  ///< The first `clients` entity ids are clients; <= entities.
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

/// Runs `ticks` ticks of `entities` entities. The world starts empty; entities are created in id
/// order (index == id) at their tick-0 positions, the first `config.clients` become clients, and
/// each tick sets every position, then ticks. Refused (with the library's message) when the
/// configuration or a position is invalid.
[[nodiscard]] Result<Totals> run(const RunConfig& config, std::uint32_t entities, std::uint64_t ticks,
                                 const PositionSource& positions, const Progress& progress = {});

}  // namespace sightline::sim
