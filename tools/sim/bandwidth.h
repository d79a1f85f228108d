// The simulator's bandwidth run: the World's sets through a Replicator, across a seeded channel,
// into one ClientMirror per client; bytes, waits, pacing and the radius promise measured.
#pragma once

#include <cstdint>

#include "run.h"
#include "sightline/status.h"

namespace sightline::sim {

struct BandwidthConfig {
  float enter_radius = 1.6f;
  float leave_radius = 1.6f;
  bool tiers = false;
  std::uint32_t clients = 0;    ///< The first `clients` entity ids are clients.
  float hz = 20.0f;             ///< Ticks (and sends) per second.
  std::uint32_t budget = 1200;  ///< ReplicatorDef::budget_bytes.
  std::uint32_t entry_budget = 32 * 1024;
  float latency_ms = 0.0f;    ///< One way, server to client (acks take as long back).
  float loss_percent = 0.0f;  ///< > 0 switches to unreliable delivery.
  std::uint64_t seed = 1;     ///< Of the channels.
  /// Events emitted a second over the whole world (a gunshot at a random walker, naming it, heard
  /// at twice the enter radius, sent reliably); 0: none.
  float events_per_second = 0.0f;
  /// Every update carries the walker's whole 40-byte state (scenarios::serialize_walker_whole)
  /// instead of its position alone.
  bool whole_state = false;
  bool delta_updates = false;  ///< ReplicatorDef::delta_updates.
};

struct BandwidthTotals {
  std::uint64_t ticks = 0;
  std::uint64_t clients = 0;
  std::uint64_t entities = 0;
  bool unreliable = false;
  std::uint32_t latency_ticks = 0;
  std::uint64_t bytes = 0;  ///< All packets to all clients.
  std::uint64_t packets = 0;
  std::uint64_t max_client_bytes = 0;  ///< The busiest client's total.
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;
  std::uint64_t delta_updates = 0;  ///< Of `updates`, those sent as deltas.
  std::uint64_t despawns = 0;
  std::uint64_t events_emitted = 0;
  std::uint64_t events = 0;        ///< Event records sent (one a recipient).
  std::uint64_t event_bytes = 0;   ///< Their bytes, resends included.
  std::uint64_t events_heard = 0;  ///< By the clients' mirrors.
  std::uint64_t resends = 0;
  std::uint64_t updates_skipped = 0;
  std::uint64_t spawns_delayed = 0;
  std::uint64_t spawn_delay_sends = 0;
  std::uint32_t longest_wait = 0;  ///< Sends.
  std::uint32_t max_pending = 0;
  float promise_radius = 0.0f;
  /// Development mode's count: spawns sent while already inside the promise radius.
  std::uint64_t violations_at_send = 0;
  /// At the client: entities inside the promise radius of its viewer that its mirror did not hold,
  /// counted once per entity and entry, while its entry had caught up (latency included).
  std::uint64_t violations_at_client = 0;
  float worst_violation_distance = 0.0f;  ///< The smallest distance of any violation at the client.
  std::uint64_t anomalies = 0;            ///< Mirror anomalies (must be 0).
  std::uint64_t stale_updates = 0;
  std::uint64_t datagrams_dropped = 0;
};

/// Runs `ticks` ticks of `entities` entities as sim::run does, and replicates every tick. The
/// caller has checked latency_ms (0..10000) and loss_percent (0..100), as main does for its flags.
[[nodiscard]] Result<BandwidthTotals> run_bandwidth(const BandwidthConfig& config, std::uint32_t entities,
                                                    std::uint64_t ticks, const PositionSource& positions,
                                                    const Progress& progress = {});

}  // namespace sightline::sim
