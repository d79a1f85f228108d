// sightline-server's /metrics: its figures in the Prometheus text exposition format (0.0.4).
// Debian packages no Prometheus client library, and the format is a few lines of text.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "game.h"
#include "server_stats.h"

namespace sightline::demo {

/// A Prometheus histogram of durations in seconds: fixed buckets from 50 us to 1 s, constant
/// memory however long the server runs.
class SecondsHistogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                     0.005,   0.01,   0.025,   0.05,   0.1,   1.0};
  void observe(double seconds) noexcept;
  /// Appends `name`'s bucket, sum and count lines, each with `labels` (`key="value"` pairs
  /// separated by commas, or empty).
  void write(std::string& out, const char* name, const std::string& labels) const;

 private:
  std::array<std::uint64_t, kBounds.size()> buckets_{};  // not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
};

/// What the server observes tick by tick for /metrics.
class TickMetrics {
 public:
  /// Names of the phases, as the `phase` label reads: World::tick's five timed phases, then
  /// the Replicator's send.
  static constexpr std::array<const char*, 6> kPhases = {"spaces", "index",   "relevance",
                                                         "events", "release", "send"};
  /// One tick: its wall time (the Game's tick, frames included) and its phases (GameStats).
  void observe(double tick_seconds, const GameStats& game) noexcept;
  [[nodiscard]] const SecondsHistogram& ticks() const noexcept { return tick_; }
  [[nodiscard]] const SecondsHistogram& phase(std::size_t i) const noexcept { return phases_[i]; }

 private:
  SecondsHistogram tick_;
  std::array<SecondsHistogram, kPhases.size()> phases_{};
};

/// The whole /metrics page: tick and phase histograms, connections, entities, frames and bytes
/// out, messages, spawns, updates and despawns, pending spawns, closes by reason, memory.
[[nodiscard]] std::string prometheus_text(const ServerStats& server, const GameStats& game,
                                          const TickMetrics& ticks, std::size_t connections);

}  // namespace sightline::demo
