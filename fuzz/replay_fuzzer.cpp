// libFuzzer target for Replay: any bytes are refused at open, or replay tick by tick until they
// end or an error names the byte; never a crash, and after the end every call is refused.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "sightline/recording.h"
#include "sightline/world.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One thread and a small grid: a fuzzed header may ask for 64 threads and 2^32 cells.
  const sightline::ReplayDef def{.threads = 1, .max_grid_cells = 1u << 16};
  sightline::Result<sightline::Replay> replay = sightline::Replay::open(std::span(data, size), def);
  if (!replay) {
    if (replay.status().message().empty()) std::abort();
    return 0;
  }
  while (!replay->done()) {
    const sightline::Result<sightline::TickStats> stats = replay->next_tick();
    if (!stats) {
      if (stats.status().message().empty() || !replay->done()) std::abort();
      break;
    }
    // The tick numbers go on from the recorded WorldDef::first_tick, one a tick.
    if (stats->tick + 1 != replay->world().tick_count()) std::abort();
  }
  if (replay->offset() > size || replay->next_tick().ok()) std::abort();
  return 0;
}
