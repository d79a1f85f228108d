// What sightline-server counts while it runs, and the --stats-json file written at exit.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sightline/status.h"

namespace sightline::demo {

/// Tick wall times in logarithmic buckets 1% wide from 1 us to 10 s: constant memory however
/// long the server runs (so RSS stays flat), percentiles within 1%, the maximum exact.
class TickTimes {
 public:
  void add(double ms) noexcept;
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// The q-quantile (q in [0, 1]) as its bucket's upper edge, never above max(); 0 when empty.
  [[nodiscard]] double percentile(double q) const noexcept;
  [[nodiscard]] double max() const noexcept { return max_; }

 private:
  static constexpr std::size_t kBuckets = 1620;  // ceil(ln(1e7) / ln(1.01))
  std::array<std::uint32_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  double max_ = 0.0;
};

struct ServerStats {
  TickTimes tick_ms;  ///< Each tick's wall time on the main thread: the Game's tick, frames staged.
  /// Its parts: the Worlds' ticks (World::tick) and the Replicators' sends (Replicator::send),
  /// summed over the Worlds; the rest of tick_ms is building and staging the frames.
  TickTimes world_ms;
  TickTimes send_ms;
  /// CPU time the I/O threads (reads, writes, the WebSocket protocol) used over the run.
  double io_cpu_seconds = 0.0;
  std::uint32_t io_threads = 0;
  std::uint64_t ticks = 0;
  /// Ticks the schedule skipped because a tick ran later than one period behind.
  std::uint64_t ticks_skipped = 0;
  std::uint32_t connections_peak = 0;  ///< Most WebSockets open at once (handshakes done).
  std::uint64_t upgrades_full = 0;     ///< Upgrades beyond --max-connections closed as "server full" (1013).
  /// Upgrades refused: 400 for a malformed Sec-WebSocket-Key, 503 when shutting down or with too
  /// many "server full" closes at once.
  std::uint64_t upgrades_refused = 0;
  std::uint64_t http_requests = 0;
  /// Connections closed before they became WebSockets to make room for a newer one: at
  /// --max-http-connections, or when the server ran out of file descriptors.
  std::uint64_t http_evicted = 0;
  std::uint64_t frames_in = 0;               ///< Complete client messages read, refused ones included.
  std::uint64_t frames_out = 0;              ///< Frames written to clients.
  std::uint64_t bytes_out = 0;               ///< Their payload bytes.
  std::optional<std::int64_t> rss_kb_start;  ///< As it starts listening: the idle server's.
  std::optional<std::int64_t> rss_kb_after_warmup;
  std::optional<std::int64_t> rss_kb_end;
  /// The heap in use at the same three marks (heap_in_use_kb): what the program holds, where RSS
  /// also counts what the allocator keeps after a free.
  std::optional<std::int64_t> heap_kb_start;
  std::optional<std::int64_t> heap_kb_after_warmup;
  std::optional<std::int64_t> heap_kb_end;
  /// The heap in use at the last status line (every 5 s), which /metrics serves: reading it locks
  /// the allocator's arenas, so a scraper asking often does not make the server read it often.
  std::optional<std::int64_t> heap_kb_now;
  /// Closed connections by why (e.g. "client", "idle", "too many frames", "shutdown").
  std::map<std::string, std::uint64_t> closes;
};

/// The line the server logs every few seconds: connections, ticks, tick p99 and the rates since
/// the previous line, then the resident size and the heap in use in MiB where they can be read
/// (no newline). It samples the heap into stats.heap_kb_now.
class StatusLine {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StatusLine(Clock::time_point start) noexcept : last_(start) {}
  [[nodiscard]] std::string next(ServerStats& stats, std::size_t connections, Clock::time_point now);

 private:
  Clock::time_point last_;
  std::uint64_t last_bytes_ = 0;
  std::uint64_t last_frames_in_ = 0;
};

/// VmRSS of /proc/self/status in kB; nullopt where it cannot be read.
[[nodiscard]] std::optional<std::int64_t> resident_kb();

/// The heap in use, kB: what the C library's allocator has handed out and not had back (glibc's
/// mallinfo2, its arenas' allocated chunks and its mapped blocks); nullopt with another C library.
/// It locks each arena in turn: read it every few seconds, not in a loop.
[[nodiscard]] std::optional<std::int64_t> heap_in_use_kb();

/// Writes the stats as one JSON object (flat keys: ticks, tick_ms_p50, tick_ms_p99, tick_ms_max,
/// connections_peak, frames_in, frames_out, bytes_out, rss_kb_after_warmup, rss_kb_end, heap_kb_*,
/// closes...).
[[nodiscard]] Status write_stats_json(const std::string& path, const ServerStats& stats);

}  // namespace sightline::demo
