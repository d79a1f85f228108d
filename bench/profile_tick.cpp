// sightline-bench-profile: runs one scenario's steady ticks, or its sends, for an instruction-count
// profiler.
//
//   valgrind --tool=callgrind --instr-atstart=no build/bin/sightline-bench-profile arena 60 20
//   valgrind --tool=callgrind --instr-atstart=no build/bin/sightline-bench-profile mmo 60 3 1 send
//
// Arguments: scenario (any of bench_scenarios.h: reference, arena, mmo, observers, ...), warm-up ticks
// (default 60), measured ticks (default 20), threads (WorldDef::threads, default 1), and "send" to
// measure Replicator::send after each tick instead of the tick (sightline-bench's send row: the
// walker's state, a 1200-byte budget; the Replicator is made before the warm-up).
// Prints the measured ticks' (or sends') wall-clock time, for a quick look, and with "send" the
// time per member considered (held by a client) and per record written; sightline-bench is the
// measurement. Only World::set_positions and World::tick() of the measured ticks (or only the
// sends) are instrumented (when built with valgrind's callgrind.h); frame generation is not.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "bench_scenarios.h"
#include "sending_run.h"
#include "sightline/replicator.h"
#include "walker_state.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define SIGHTLINE_PROFILE_START() CALLGRIND_START_INSTRUMENTATION
#define SIGHTLINE_PROFILE_STOP() CALLGRIND_STOP_INSTRUMENTATION
#else
#define SIGHTLINE_PROFILE_START() (void)0
#define SIGHTLINE_PROFILE_STOP() (void)0
#endif

int main(int argc, char** argv) {
  using namespace sightline;
  using namespace sightline::bench;
  const std::string_view name = argc > 1 ? argv[1] : "arena";
  BenchScenario scenario;
  bool found = false;
  for (const BenchScenario& s : all_scenarios()) {
    if (name == s.name) {
      scenario = s;
      found = true;
    }
  }
  if (!found) {
    std::fprintf(stderr, "unknown scenario '%s': use a name of bench_scenarios.cpp (reference, arena, ...)\n",
                 argv[1]);
    return 2;
  }
  const long warmup = argc > 2 ? std::atol(argv[2]) : 60;
  const long measured = argc > 3 ? std::atol(argv[3]) : 20;
  scenario.threads = argc > 4 ? static_cast<std::uint32_t>(std::atol(argv[4])) : 1;
  const bool send = argc > 5 && std::string_view(argv[5]) == "send";

  Result<ScenarioRun> run = build_scenario(scenario);
  if (!run) {
    std::fprintf(stderr, "%s\n", run.status().message().c_str());
    return 1;
  }
  World& world = run->world.world;
  const std::span<const EntityId> entities = run->world.entities;
  FrameStream frames(run->walk, scenario.frame_block);
  std::optional<Replicator> replicator;
  if (send) {
    ReplicatorDef def;
    def.serialize = scenarios::serialize_walker;
    def.serialize_context = &world;
    def.tick_seconds = 1.0f / scenario.walk.hz;
    def.budget_bytes = kSendBudgetBytes;
    Result<Replicator> made = Replicator::create(world, def);
    if (!made) {
      std::fprintf(stderr, "%s\n", made.status().message().c_str());
      return 1;
    }
    replicator.emplace(std::move(made).value());
  }
  TickStats totals;
  std::uint64_t records = 0;
  std::chrono::steady_clock::duration timed{};
  for (long t = 0; t < warmup + measured; ++t) {
    if (!frames.ready()) frames.refill();
    const FrameStream::Frame frame = frames.next();
    const bool profiled = t >= warmup;
    if (profiled && !send) SIGHTLINE_PROFILE_START();
    auto start = std::chrono::steady_clock::now();
    if (!world.set_positions(entities, frame.xs, frame.zs).ok()) return 1;
    const TickStats stats = world.tick();
    if (send) {
      if (profiled) SIGHTLINE_PROFILE_START();
      start = std::chrono::steady_clock::now();
      if (Status s = replicator->send(); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
      }
    }
    if (profiled) {
      timed += std::chrono::steady_clock::now() - start;
      SIGHTLINE_PROFILE_STOP();
      if (send) {
        const SendStats& sent = replicator->stats();
        records += sent.spawns + sent.updates + sent.despawns;
      }
      totals.members += stats.members;
      totals.distance_tests += stats.distance_tests;
      totals.spawns += stats.spawns;
      totals.despawns += stats.despawns;
    }
  }
  const double ms_per_tick =
      std::chrono::duration<double, std::milli>(timed).count() / static_cast<double>(measured);
  std::printf(
      "%s on %u thread(s): %ld measured ticks after %ld, %llu visible pairs, %llu distance tests, %llu "
      "spawns, "
      "%llu despawns, %.4f ms/tick\n",
      scenario.name.c_str(), scenario.threads, measured, warmup,
      static_cast<unsigned long long>(totals.members), static_cast<unsigned long long>(totals.distance_tests),
      static_cast<unsigned long long>(totals.spawns), static_cast<unsigned long long>(totals.despawns),
      ms_per_tick);
  if (send) {
    const double ns = std::chrono::duration<double, std::nano>(timed).count();
    std::printf(
        "send: %.4f ms/send, %.1f ns per member considered, %.1f ns per record written (%.0f a send)\n",
        ms_per_tick, ns / static_cast<double>(totals.members), ns / static_cast<double>(records),
        static_cast<double>(records) / static_cast<double>(measured));
  }
  return 0;
}
