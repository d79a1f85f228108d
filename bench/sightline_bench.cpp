// sightline-bench: each scenario's full steady tick, beside the brute-force baseline on the same
// frames, then a summary table built from this run's measurements.
//
// Per scenario, four benchmarks:
//   <name>/sightline    World::set_positions for every entity, then World::tick(), clients as in the
//                       scenario;
//   <name>/brute_force  the same frames through BruteForce (same rule, no grid);
//   <name>/input        World::set_positions for every entity alone (a world without clients);
//   <name>/grid_only    World::tick() with no clients, timed alone (the frame is applied untimed): the
//                       grid build.
// Before any timing, each scenario's World and BruteForce run in lock-step from empty sets, and
// again from the World's warmed-up sets; every checked tick's spawns, updates, despawns and
// members must match, or the scenario's benchmarks are skipped with the first difference as their
// error (and the exit status is 1). Frames come from the scenario's walk, continuing it: refills
// happen outside the timed region, once per frame_block ticks.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alloc_counter.h"
#include "bench_scenarios.h"
#include "brute_force.h"
#include "summary_reporter.h"

namespace sightline::bench {
namespace {

using support::allocation_count;

constexpr int kRepetitions = 5;
constexpr double kMinTimeSeconds = 0.2;
constexpr std::uint32_t kThreads = 2;  // the machine's cores

struct Fixture {
  explicit Fixture(BenchScenario s) : scenario(s) {}
  BenchScenario scenario;
  std::optional<ScenarioRun> run;
  std::optional<ScenarioWorld> idle;  // the same entities, no clients
  std::optional<BruteForce> brute;
  std::optional<ScenarioWorld> threaded;  // the same World on kThreads threads, ticked in step
  // One stream per consumer, all made from the same walk state: each sees the same frames.
  std::optional<FrameStream> world_frames;
  std::optional<FrameStream> brute_frames;
  std::optional<FrameStream> idle_frames;
  std::optional<FrameStream> threaded_frames;
  std::uint64_t checked_ticks = 0;
  std::string error;  // non-empty when setup failed or the brute force disagreed
};

// The input of a tick: every entity's position, in one World::set_positions call.
[[nodiscard]] bool apply(World& world, std::span<const EntityId> entities, std::span<const float> xs,
                         std::span<const float> zs) {
  return world.set_positions(entities, xs, zs).ok();
}

// Outside timing only: refills without pausing a timer.
FrameStream::Frame take(FrameStream& frames) {
  if (!frames.ready()) frames.refill();
  return frames.next();
}

[[nodiscard]] std::string compare(const TickStats& lib, const TickStats& brute) {
  if (lib.spawns == brute.spawns && lib.updates == brute.updates && lib.despawns == brute.despawns &&
      lib.members == brute.members) {
    return {};
  }
  return "tick " + std::to_string(lib.tick) + ": sightline spawns/updates/despawns/members " +
         std::to_string(lib.spawns) + "/" + std::to_string(lib.updates) + "/" + std::to_string(lib.despawns) +
         "/" + std::to_string(lib.members) + ", brute force " + std::to_string(brute.spawns) + "/" +
         std::to_string(brute.updates) + "/" + std::to_string(brute.despawns) + "/" +
         std::to_string(brute.members);
}

// Checked from empty sets, warmed up, handed to the brute force and checked again; then the
// three frame streams start at the same walk state.
void set_up(Fixture& f) {
  const BenchScenario& s = f.scenario;
  Result<ScenarioRun> run = build_scenario(s);
  if (!run) {
    f.error = "build_scenario: " + run.status().message();
    return;
  }
  f.run.emplace(std::move(run).value());
  scenarios::JitterWalk& walk = f.run->walk;
  World& world = f.run->world.world;
  const std::span<const EntityId> entities = f.run->world.entities;
  const std::span<const ClientId> clients = f.run->world.clients;

  std::vector<std::uint32_t> viewers(clients.size());
  std::iota(viewers.begin(), viewers.end(), 0u);
  f.brute.emplace(s.walk.entities, viewers, s.enter_radius, s.leave_radius);
  BruteForce& brute = *f.brute;
  brute.set_positions(walk.xs(), walk.zs());

  auto tick_both = [&]() -> bool {
    const TickStats lib = world.tick();
    f.error = compare(lib, brute.tick());
    ++f.checked_ticks;
    return f.error.empty();
  };
  // The threaded World follows every input and must give the same totals on every tick.
  BenchScenario on_threads = s;
  on_threads.threads = kThreads;
  Result<ScenarioWorld> threaded = build_world(on_threads, walk.xs(), walk.zs(), s.clients);
  if (!threaded) {
    f.error = "build_world on threads: " + threaded.status().message();
    return;
  }
  f.threaded.emplace(std::move(threaded).value());
  auto tick_threaded = [&](const TickStats& lib) -> bool {
    const TickStats other = f.threaded->world.tick();
    if (lib.spawns == other.spawns && lib.updates == other.updates && lib.despawns == other.despawns &&
        lib.members == other.members && lib.distance_tests == other.distance_tests) {
      return true;
    }
    f.error = "tick " + std::to_string(lib.tick) + ": " + std::to_string(kThreads) + " threads differ from 1";
    return false;
  };
  auto walk_world = [&]() -> bool {
    walk.step();
    if (apply(world, entities, walk.xs(), walk.zs()) &&
        apply(f.threaded->world, f.threaded->entities, walk.xs(), walk.zs())) {
      return true;
    }
    f.error = "set_positions refused a walk position";
    return false;
  };

  for (std::uint32_t t = 0; t < s.checked_from_start; ++t) {
    const TickStats lib = world.tick();
    f.error = compare(lib, brute.tick());
    ++f.checked_ticks;
    if (!f.error.empty() || !tick_threaded(lib) || !walk_world()) return;
    brute.set_positions(walk.xs(), walk.zs());
  }
  for (std::uint32_t t = 0; t < s.warmup_ticks; ++t) {
    if (!tick_threaded(world.tick()) || !walk_world()) return;
  }

  std::vector<std::uint32_t> members;
  for (std::size_t c = 0; c < clients.size(); ++c) {
    Result<std::span<const EntityId>> set = world.interest_set(clients[c]);
    if (!set) {
      f.error = "interest_set: " + set.status().message();
      return;
    }
    members.clear();
    for (const EntityId e : *set) members.push_back(e.index);
    brute.set_members(c, members);
  }

  f.world_frames.emplace(walk, s.frame_block);
  f.threaded_frames.emplace(walk, s.frame_block);
  f.brute_frames.emplace(walk, s.frame_block);
  f.idle_frames.emplace(walk, s.frame_block);
  for (std::uint32_t t = 0; t < s.checked_steady; ++t) {
    const FrameStream::Frame w = take(*f.world_frames);
    const FrameStream::Frame b = take(*f.brute_frames);
    if (!apply(world, entities, w.xs, w.zs)) {
      f.error = "set_positions refused a frame position";
      return;
    }
    brute.set_positions(b.xs, b.zs);
    if (!tick_both()) return;
  }

  Result<ScenarioWorld> idle = build_world(s, walk.xs(), walk.zs(), 0);
  if (!idle) {
    f.error = "build_world without clients: " + idle.status().message();
    return;
  }
  f.idle.emplace(std::move(idle).value());
  for (std::uint32_t t = 0; t < 8; ++t) {
    const FrameStream::Frame frame = take(*f.idle_frames);
    (void)apply(f.idle->world, f.idle->entities, frame.xs, frame.zs);
    (void)f.idle->world.tick();
  }
}

// Refills outside the timed region: once per frame_block iterations.
FrameStream::Frame next_frame(benchmark::State& state, FrameStream& frames) {
  if (!frames.ready()) {
    state.PauseTiming();
    frames.refill();
    state.ResumeTiming();
  }
  return frames.next();
}

std::vector<std::unique_ptr<Fixture>>& fixtures() {
  static std::vector<std::unique_ptr<Fixture>> all;
  return all;
}

// Built on first use, so a filtered run only pays for the scenarios it measures.
Fixture* ready(benchmark::State& state, std::size_t index) {
  Fixture& f = *fixtures()[index];
  if (!f.run && f.error.empty()) set_up(f);
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return nullptr;
  }
  return &f;
}

void set_tick_counters(benchmark::State& state, double members, double tests, double churn,
                       std::uint64_t allocations) {
  using benchmark::Counter;
  state.counters["pairs"] = Counter(members, Counter::kAvgIterations);
  state.counters["tests"] = Counter(tests, Counter::kAvgIterations);
  state.counters["churn"] = Counter(churn, Counter::kAvgIterations);
  state.counters["allocs"] = Counter(static_cast<double>(allocations), Counter::kAvgIterations);
  state.counters["s_per_pair"] = Counter(members, Counter::kIsRate | Counter::kInvert);
}

// World::set_positions and World::tick() on the fixture's frames, with the tick counters.
void time_ticks(benchmark::State& state, World& world, std::span<const EntityId> entities, FrameStream& frames) {
  double members = 0, tests = 0, churn = 0;
  bool ok = true;
  const std::uint64_t allocations_before = allocation_count();
  for (auto _ : state) {
    const FrameStream::Frame frame = next_frame(state, frames);
    if (!apply(world, entities, frame.xs, frame.zs)) ok = false;
    const TickStats stats = world.tick();
    members += static_cast<double>(stats.members);
    tests += static_cast<double>(stats.distance_tests);
    churn += static_cast<double>(stats.spawns + stats.despawns);
  }
  const std::uint64_t allocations = allocation_count() - allocations_before;
  if (!ok) state.SkipWithError("set_positions refused a frame position");
  set_tick_counters(state, members, tests, churn, allocations);
}

void bm_sightline(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f != nullptr) time_ticks(state, f->run->world.world, f->run->world.entities, *f->world_frames);
}

// The same scenario on kThreads threads (the threaded World was checked equal while warming up).
void bm_threads(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f != nullptr) time_ticks(state, f->threaded->world, f->threaded->entities, *f->threaded_frames);
}

void bm_brute_force(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f == nullptr) return;
  BruteForce& brute = *f->brute;
  FrameStream& frames = *f->brute_frames;
  double members = 0, tests = 0, churn = 0;
  const std::uint64_t allocations_before = allocation_count();
  for (auto _ : state) {
    const FrameStream::Frame frame = next_frame(state, frames);
    brute.set_positions(frame.xs, frame.zs);
    const TickStats stats = brute.tick();
    members += static_cast<double>(stats.members);
    tests += static_cast<double>(stats.distance_tests);
    churn += static_cast<double>(stats.spawns + stats.despawns);
  }
  const std::uint64_t allocations = allocation_count() - allocations_before;
  set_tick_counters(state, members, tests, churn, allocations);
}

void bm_input(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f == nullptr) return;
  World& world = f->idle->world;
  const std::span<const EntityId> entities = f->idle->entities;
  FrameStream& frames = *f->idle_frames;
  bool ok = true;
  for (auto _ : state) {
    const FrameStream::Frame frame = next_frame(state, frames);
    if (!apply(world, entities, frame.xs, frame.zs)) ok = false;
  }
  if (!ok) state.SkipWithError("set_positions refused a frame position");
}

// Manual time: only World::tick() is timed (a steady_clock read on each side), so the input
// does not have to be subtracted from it.
void bm_grid_only(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f == nullptr) return;
  World& world = f->idle->world;
  const std::span<const EntityId> entities = f->idle->entities;
  FrameStream& frames = *f->idle_frames;
  bool ok = true;
  std::uint64_t allocations = 0;
  for (auto _ : state) {
    const FrameStream::Frame frame = take(frames);
    if (!apply(world, entities, frame.xs, frame.zs)) ok = false;
    const std::uint64_t allocations_before = allocation_count();
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(world.tick());
    const auto stop = std::chrono::steady_clock::now();
    allocations += allocation_count() - allocations_before;
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
  if (!ok) state.SkipWithError("set_positions refused a frame position");
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(allocations), benchmark::Counter::kAvgIterations);
}

void register_benchmarks() {
  for (const BenchScenario& s : all_scenarios()) fixtures().push_back(std::make_unique<Fixture>(s));
  for (std::size_t i = 0; i < fixtures().size(); ++i) {
    const std::string name = fixtures()[i]->scenario.name;
    const auto add = [&](const char* what, void (*body)(benchmark::State&, std::size_t),
                         bool manual_time = false) {
      benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
          (name + "/" + what).c_str(), [body, i](benchmark::State& state) { body(state, i); });
      if (manual_time) {
        b->UseManualTime();
      } else {
        b->UseRealTime();
      }
      b->Unit(benchmark::kMicrosecond)
          ->MinTime(kMinTimeSeconds)
          ->Repetitions(kRepetitions)
          ->ReportAggregatesOnly(true);
    };
    add("sightline", bm_sightline);
    add("sightline_2_threads", bm_threads);
    add("brute_force", bm_brute_force);
    add("input", bm_input);
    add("grid_only", bm_grid_only, true);
  }
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

void print_summary(std::ostream& out, const CollectingReporter& reporter) {
  out << "\nSummary: medians of " << kRepetitions
      << " repetitions, wall-clock time per steady tick, single thread. A tick here is set_positions\n"
         "for every entity plus World::tick(); brute force gets the same frames. ns/visible pair = "
         "sightline\n"
         "tick / pairs. Input = set_positions alone. Grid build = grid_only / entities, where\n"
         "grid_only times World::tick() alone with no clients. Client passes = sightline - input - "
         "grid_only.\n\n";
  out << "| scenario | clients x entities | sightline ms/tick | 2 threads ms/tick (speed-up) | brute force ms/tick | brute/sightline "
         "| ns/visible pair | visible pairs/tick | distance tests/tick (sightline / brute) "
         "| input ms/tick | grid build ns/entity | client passes ms/tick | allocations/tick | ticks checked "
         "|\n";
  out << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& fixture : fixtures()) {
    const Fixture& f = *fixture;
    const std::string name = f.scenario.name;
    const auto* lib = reporter.find(name + "/sightline");
    const auto* brute = reporter.find(name + "/brute_force");
    const auto* threads = reporter.find(name + "/sightline_2_threads");
    const auto* input = reporter.find(name + "/input");
    const auto* grid = reporter.find(name + "/grid_only");
    const auto usable = [](const benchmark::BenchmarkReporter::Run* run) {
      return run != nullptr && !run->error_occurred;
    };
    out << "| " << name << " | " << f.scenario.clients << " x " << f.scenario.walk.entities << " | ";
    if (!f.error.empty()) {
      out << "error: " << f.error << " |\n";
      continue;
    }
    const std::string none = "-";
    const double entities = f.scenario.walk.entities;
    out << (usable(lib) ? format("%.4g", real_ns(*lib) / 1e6) : none) << " | "
        << (usable(threads) ? format("%.4g", real_ns(*threads) / 1e6) : none)
        << (usable(lib) && usable(threads) ? format(" (%.2fx)", real_ns(*lib) / real_ns(*threads)) : "") << " | "
        << (usable(brute) ? format("%.4g", real_ns(*brute) / 1e6) : none) << " | "
        << (usable(lib) && usable(brute) ? format("%.1f", real_ns(*brute) / real_ns(*lib)) : none) << " | "
        << (usable(lib) ? format("%.2f", real_ns(*lib) / counter(*lib, "pairs")) : none) << " | "
        << (usable(lib) ? format("%.0f", counter(*lib, "pairs")) : none) << " | "
        << (usable(lib) ? format("%.0f", counter(*lib, "tests")) : none) << " / "
        << (usable(brute) ? format("%.0f", counter(*brute, "tests")) : none) << " | "
        << (usable(input) ? format("%.4g", real_ns(*input) / 1e6) : none) << " | "
        << (usable(grid) ? format("%.2f", real_ns(*grid) / entities) : none) << " | "
        << (usable(lib) && usable(input) && usable(grid)
                ? format("%.4g", (real_ns(*lib) - real_ns(*input) - real_ns(*grid)) / 1e6)
                : none)
        << " | " << (usable(lib) ? format("%.3g", counter(*lib, "allocs")) : none) << " / "
        << (usable(grid) ? format("%.3g", counter(*grid, "allocs")) : none) << " | " << f.checked_ticks
        << " |\n";
  }
  out << "\nallocations/tick: heap allocations per timed tick (sightline / grid_only), counted by a "
         "replaced\n"
         "global operator new; issue 2 requires 0. ticks checked: ticks on which the brute force and the\n"
         "library gave equal spawns, updates, despawns and members before timing.\n";
}

}  // namespace
}  // namespace sightline::bench

int main(int argc, char** argv) {
  using namespace sightline::bench;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--benchmark_format=json") json = true;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();

  std::unique_ptr<benchmark::BenchmarkReporter> display;
  if (json) {
    display = std::make_unique<benchmark::JSONReporter>();
  } else {
    display = std::make_unique<benchmark::ConsoleReporter>(isatty(STDOUT_FILENO)
                                                               ? benchmark::ConsoleReporter::OO_ColorTabular
                                                               : benchmark::ConsoleReporter::OO_Tabular);
  }
  CollectingReporter reporter(std::move(display));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // With --benchmark_format=json stdout stays one JSON document; the table goes to stderr.
  print_summary(json ? std::cerr : std::cout, reporter);
  benchmark::Shutdown();
  return reporter.errors() == 0 ? 0 : 1;
}
