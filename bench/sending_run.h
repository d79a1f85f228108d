// The second row of sightline-bench's table: a scenario's World with a Replicator sending after
// every tick, on a walk of its own, and the heap the World and the Replicator hold.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "bench_scenarios.h"
#include "sightline/replicator.h"

namespace sightline::bench {

/// The send row's ReplicatorDef: the walker's state (scenarios/walker_state.h), reliable
/// delivery, the default 1200-byte budget and 32 KiB entry allowance, payloads shared.
inline constexpr std::uint32_t kSendBudgetBytes = 1200;

/// Heap bytes kept, from support::live_heap_bytes() around the making and warm-up of each part.
struct HeapFigures {
  double world_per_entity = 0;  ///< A World with the entities and no clients, ticked, / entities.
  double world_per_client = 0;  ///< A World with the clients, warmed up, less the one without, / clients.
  /// The Replicator after its warm-up sends, with what the World grew meanwhile (the per-member
  /// periods it keeps for a Replicator), / clients.
  double replicator_per_client = 0;
};

/// A World with the scenario's clients and a Replicator over it; the serializer reads `world`,
/// so the run stays where it was made (held by pointer).
struct SendingRun {
  scenarios::JitterWalk walk;
  ScenarioWorld world;
  std::optional<Replicator> replicator;
};

/// At most this many of the warm-up ticks end with a send (the last ones): enough for every
/// client's table to fill and its accumulators to settle, without a minute of MMO sends.
inline constexpr std::uint32_t kSendWarmup = 100;

/// Builds the scenario's World with its clients at the walk's start, ticks it through the
/// scenario's warm-up, and creates the Replicator before the last kSendWarmup ticks, each then
/// followed by a send. `idle_world_bytes` is what a World with the same entities and no clients
/// holds; `heap` gets the figures per entity and client. Fails with the first refused call.
[[nodiscard]] Result<std::unique_ptr<SendingRun>> start_sending(const BenchScenario& scenario,
                                                                std::int64_t idle_world_bytes,
                                                                HeapFigures& heap);

}  // namespace sightline::bench
