// libFuzzer target for the CSV trace reader: any bytes either parse or are refused with a line
// number, never crash; a parsed trace written back parses to exactly the same positions.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include "trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const sightline::sim::TraceParse parsed = sightline::sim::parse_trace(text);
  if (!parsed.ok()) {
    if (parsed.error.line == 0 || parsed.error.message.empty()) std::abort();
    return 0;
  }
  const sightline::sim::Trace& trace = *parsed.trace;
  if (trace.entities == 0 || trace.ticks == 0 || trace.xs.size() != trace.entities * trace.ticks ||
      trace.zs.size() != trace.xs.size()) {
    std::abort();
  }
  std::ostringstream out;
  sightline::sim::write_trace_header(out);
  for (std::uint64_t t = 0; t < trace.ticks; ++t) {
    sightline::sim::write_trace_tick(out, t, trace.tick_xs(t), trace.tick_zs(t));
  }
  const sightline::sim::TraceParse again = sightline::sim::parse_trace(out.str());
  if (!again.ok() || again.trace->entities != trace.entities || again.trace->ticks != trace.ticks ||
      std::memcmp(again.trace->xs.data(), trace.xs.data(), trace.xs.size() * sizeof(float)) != 0 ||
      std::memcmp(again.trace->zs.data(), trace.zs.data(), trace.zs.size() * sizeof(float)) != 0) {
    std::abort();
  }
  return 0;
}
