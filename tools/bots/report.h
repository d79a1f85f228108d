// What sightline-bots prints and writes: the run's figures over every bot.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "run.h"

namespace sightline::bots {

/// Mean, smallest and largest of one per-client rate over the bots that connected.
struct Spread {
  double mean = 0.0;
  double min = 0.0;
  double max = 0.0;
};

struct Summary {
  std::uint32_t bots = 0;
  std::array<std::uint32_t, 4> outcomes{};  ///< By Outcome.
  double wall_seconds = 0.0;
  double cpu_seconds = 0.0;     ///< The bots' process (RunResult::cpu_seconds).
  Spread bytes_per_second;      ///< Server frame bytes per second, per client.
  Spread frames_per_second;     ///< Server frames per second, per client.
  Spread packets_per_second;    ///< State packets per second, per client.
  Spread ticks_per_second;      ///< Tick frames per second, per client.
  std::uint32_t tick_rate = 0;  ///< The server's (its welcome's); 0 when no bot was welcomed.
  BotTotals totals;             ///< Summed over the bots that connected.
  std::uint64_t delay_samples = 0;
  double delay_p50_ms = 0.0;  ///< Tick frame receive time - its server time, every bot's.
  double delay_p99_ms = 0.0;
  double delay_max_ms = 0.0;
  double delay_min_ms = 0.0;
  std::uint64_t problems = 0;
  std::vector<std::string> notes;     ///< First problems, "bot 3: ...".
  std::vector<std::string> failures;  ///< First connections that failed, closed or hung.
  /// Why the run failed, one line each, in the order of the rules; empty when it passed.
  std::vector<std::string> verdict;
  static constexpr std::size_t kMaxLines = 10;

  /// The run passes when every bot finished, no bot saw a problem, the slowest bot received
  /// tick frames at RunDef::min_tick_share of the tick rate or more, and the delivery delay p99
  /// is under RunDef::max_delay_ms.
  [[nodiscard]] bool passed() const noexcept { return verdict.empty(); }
};

/// The run's figures, and its verdict by `def`'s criteria.
[[nodiscard]] Summary summarize(const RunResult& result, const RunDef& def);
/// The table on stdout.
[[nodiscard]] std::string format_table(const Summary& summary);
/// The same figures as JSON (keys in the table's words, rates per second, delays in ms).
[[nodiscard]] std::string format_json(const Summary& summary, const RunDef& def);

}  // namespace sightline::bots
