// CSV position traces: `tick,id,x,y`, one row per entity per tick (y is the world's z axis).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sightline::sim {

/// Positions of `entities` entities over `ticks` consecutive ticks starting at 0.
/// Row-major by tick: the position of entity `id` at tick `t` is at `t * entities + id`.
struct Trace {
  std::uint32_t entities = 0;
  std::uint64_t ticks = 0;
  std::vector<float> xs;
  std::vector<float> zs;

  [[nodiscard]] std::span<const float> tick_xs(std::uint64_t tick) const noexcept {
    return std::span<const float>(xs).subspan(tick * entities, entities);
  }
  [[nodiscard]] std::span<const float> tick_zs(std::uint64_t tick) const noexcept {
    return std::span<const float>(zs).subspan(tick * entities, entities);
  }
};

/// Why a trace was refused: the 1-based line and what is wrong with it.
struct TraceError {
  std::size_t line = 0;
  std::string message;

  /// "line 7: ..." as printed by the tools.
  [[nodiscard]] std::string to_string() const;
};

/// A parsed trace, or the first error found.
struct TraceParse {
  std::optional<Trace> trace;
  TraceError error;

  [[nodiscard]] bool ok() const noexcept { return trace.has_value(); }
};

/// Parses a whole trace. Rules: the first line is exactly `tick,id,x,y`; every other line has
/// four comma-separated fields (spaces around a field and a trailing '\r' are allowed);
/// tick and id are non-negative decimal integers; x and y are finite decimal floats with
/// |v| <= kMaxCoordinate; ticks start at 0 and rise by one; the rows of tick 0 fix N, and every
/// tick holds each id 0..N-1 exactly once, in any order; at least one row. Never throws and never
/// reads past `text`, whatever the input (it is a fuzz target).
[[nodiscard]] TraceParse parse_trace(std::string_view text);

/// Reads the whole stream, then parses it as above.
[[nodiscard]] TraceParse parse_trace(std::istream& in);

/// Writes the header line.
void write_trace_header(std::ostream& out);

/// Writes one tick's rows in id order. Floats use the shortest text that reads back to the
/// same value, so a written trace reproduces a run's counts exactly.
void write_trace_tick(std::ostream& out, std::uint64_t tick, std::span<const float> xs,
                      std::span<const float> zs);

}  // namespace sightline::sim
