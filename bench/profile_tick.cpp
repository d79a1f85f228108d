// sightline-bench-profile: runs one scenario's steady ticks, or its sends, for an instruction-count
// profiler.
//
//   valgrind --tool=callgrind --instr-atstart=no build/bin/sightline-bench-profile arena 60 20
//   valgrind --tool=callgrind --instr-atstart=no build/bin/sightline-bench-profile mmo 60 3 1 send
//
// Arguments: scenario (any of bench_scenarios.h: reference, arena, mmo, observers, ..., world_4000000),
// warm-up ticks (default 60), measured ticks (default 20), threads (WorldDef::threads, default 1), and
// "send" to also run Replicator::send after each tick (sightline-bench's send row: the walker's state, a
// 1200-byte budget; the Replicator is made before the warm-up).
// Prints the measured ticks' wall-clock time per tick (set_positions and tick, and each apart, and the
// tick's phases as World::last_tick_timings gives them), for a quick look, and with "send" the time per send,
// per member considered (held by a client) and per record written; sightline-bench is the measurement. Only
// World::set_positions and World::tick() of the measured ticks (with "send": only the sends) are instrumented
// (when built with valgrind's callgrind.h); frame generation is not.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

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

namespace {

// This thread's CPU time in seconds: on a machine shared with other work, it leaves out the time
// the thread waited for a core (not the slowdown from caches and memory it shares).
double thread_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sightline;
  using namespace sightline::bench;
  const std::string_view name = argc > 1 ? argv[1] : "arena";
  BenchScenario scenario;
  bool found = false;
  std::vector<BenchScenario> known = all_scenarios();
  for (BenchScenario& s : world_scaling_scenarios()) known.push_back(std::move(s));
  for (const BenchScenario& s : known) {
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
  std::chrono::steady_clock::duration send_timed{};
  std::chrono::steady_clock::duration timed{};
  std::chrono::steady_clock::duration input{};
  double tick_cpu = 0.0;
  double input_cpu = 0.0;
  TickTimings phases;  // summed over the measured ticks
  for (long t = 0; t < warmup + measured; ++t) {
    if (!frames.ready()) frames.refill();
    const FrameStream::Frame frame = frames.next();
    const bool profiled = t >= warmup;
    if (profiled && !send) SIGHTLINE_PROFILE_START();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_seconds();
    if (!world.set_positions(entities, frame.xs, frame.zs).ok()) return 1;
    const auto input_done = std::chrono::steady_clock::now();
    const double cpu_before = thread_seconds();
    const TickStats stats = world.tick();
    if (profiled) {
      tick_cpu += thread_seconds() - cpu_before;
      input_cpu += cpu_before - cpu_start;
      timed += std::chrono::steady_clock::now() - start;
      input += input_done - start;
      if (!send) SIGHTLINE_PROFILE_STOP();
    }
    if (send) {
      if (profiled) SIGHTLINE_PROFILE_START();
      const auto send_start = std::chrono::steady_clock::now();
      if (Status s = replicator->send(); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
      }
      if (profiled) {
        send_timed += std::chrono::steady_clock::now() - send_start;
        SIGHTLINE_PROFILE_STOP();
        const SendStats& sent = replicator->stats();
        records += sent.spawns + sent.updates + sent.despawns;
      }
    }
    if (profiled) {
      const TickTimings& last = world.last_tick_timings();
      phases.spaces_ns += last.spaces_ns;
      phases.index_ns += last.index_ns;
      phases.relevance_ns += last.relevance_ns;
      phases.events_ns += last.events_ns;
      phases.release_ns += last.release_ns;
      totals.members += stats.members;
      totals.distance_tests += stats.distance_tests;
      totals.spawns += stats.spawns;
      totals.despawns += stats.despawns;
    }
  }
  const double ms_per_tick =
      std::chrono::duration<double, std::milli>(timed).count() / static_cast<double>(measured);
  const double ms_per_input =
      std::chrono::duration<double, std::milli>(input).count() / static_cast<double>(measured);
  std::printf(
      "%s on %u thread(s): %ld measured ticks after %ld, %llu visible pairs, %llu distance tests, %llu "
      "spawns, "
      "%llu despawns, %.4f ms/tick (set_positions %.4f, tick %.4f), %.2f ns/entity; CPU time "
      "(this thread's) per tick: set_positions %.4f ms, tick %.4f ms, %.2f ns/entity\n",
      scenario.name.c_str(), scenario.threads, measured, warmup,
      static_cast<unsigned long long>(totals.members), static_cast<unsigned long long>(totals.distance_tests),
      static_cast<unsigned long long>(totals.spawns), static_cast<unsigned long long>(totals.despawns),
      ms_per_tick, ms_per_input, ms_per_tick - ms_per_input, ms_per_tick * 1e6 / scenario.walk.entities,
      input_cpu * 1e3 / static_cast<double>(measured), tick_cpu * 1e3 / static_cast<double>(measured),
      (input_cpu + tick_cpu) * 1e9 / static_cast<double>(measured) / scenario.walk.entities);
  const auto ms = [&](std::uint64_t ns) {
    return static_cast<double>(ns) * 1e-6 / static_cast<double>(measured);
  };
  std::printf(
      "tick phases, ms/tick: spaces %.4f, index %.4f, relevance and schedule %.4f, events %.4f, release "
      "%.4f\n",
      ms(phases.spaces_ns), ms(phases.index_ns), ms(phases.relevance_ns), ms(phases.events_ns),
      ms(phases.release_ns));
  if (send) {
    const double ns = std::chrono::duration<double, std::nano>(send_timed).count();
    std::printf(
        "send: %.4f ms/send, %.1f ns per member considered, %.1f ns per record written (%.0f a send)\n",
        ns * 1e-6 / static_cast<double>(measured), ns / static_cast<double>(totals.members),
        ns / static_cast<double>(records), static_cast<double>(records) / static_cast<double>(measured));
  }
  return 0;
}
