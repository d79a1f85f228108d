// sightline-bench: each scenario's full steady tick, beside the brute-force baseline on the same
// frames, then a summary table built from this run's measurements.
//
// Per scenario, these benchmarks:
//   <name>/sightline    World::set_positions for every entity, then World::tick(), clients as in the
//                       scenario;
//   <name>/sightline_2_threads  the same on a World with two threads;
//   <name>/brute_force  the same frames through BruteForce (same rule, no grid);
//   <name>/input        World::set_positions for every entity alone (a world without clients);
//   <name>/grid_only    World::tick() with no clients, timed alone (the frame is applied untimed): the
//                       grid build;
//   <name>/sightline_send    the tick, then Replicator::send() at a 1200-byte budget (priorities,
//                            budget, packets), on a World and walk of its own (sending_run.h);
//   <name>/brute_force_send  the brute force's tick, then BruteForce::send(): every member scored,
//                            fully sorted and serialized per client.
// The table's second row per scenario ("+ send") is the pair of *_send benchmarks. Heap bytes per
// entity and per client come from a replaced operator new that tracks live bytes
// (support/alloc_counter.h), around the making and warm-up of the World without clients, with
// them, and of the Replicator.
// Before any timing, each scenario's World and BruteForce run in lock-step from empty sets, and
// again from the World's warmed-up sets; every checked tick's spawns, updates, despawns and
// members must match, or the scenario's benchmarks are skipped with the first difference as their
// error (and the exit status is 1). Frames come from the scenario's walk, continuing it: refills
// happen outside the timed region, once per frame_block ticks.
//
// Own flags, taken out before Google Benchmark's:
//   --scaling    instead of the scenarios, the scaling families (bench_scenarios.h): (f) at its
//                density for 500 to 50,000 entities, sightline and brute_force only, and a table
//                of tick time against entity count with the least-squares log-log slopes; then
//                the world family (the MMO's density, 100 clients, 250,000 to 4M entities,
//                sightline only) with its ns per entity and fitted slopes;
//   --json FILE  the printed table's numbers as JSON, with the machine context;
//   --csv FILE   the same as CSV (what tools/plot/scaling.sh reads).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "bench_scenarios.h"
#include "brute_force.h"
#include "sending_run.h"
#include "summary_reporter.h"

namespace sightline::bench {
namespace {

using support::allocation_count;
using support::live_heap_bytes;

constexpr int kRepetitions = 5;
constexpr double kMinTimeSeconds = 0.2;
constexpr std::uint32_t kThreads = 2;  // the machine's cores

struct Fixture {
  Fixture(BenchScenario s, bool table) : scenario(std::move(s)), full(table) {}
  BenchScenario scenario;
  bool full;  // every benchmark of the table, the send row's World included
  std::optional<ScenarioRun> run;
  std::optional<ScenarioWorld> idle;  // the same entities, no clients
  std::optional<BruteForce> brute;
  std::optional<ScenarioWorld> threaded;  // the same World on kThreads threads, ticked in step
  std::unique_ptr<SendingRun> sending;    // the send row's World and Replicator
  std::optional<HeapFigures> heap;        // once the send row's World is warmed up
  // One stream per consumer, all made from the same walk state: each sees the same frames.
  std::optional<FrameStream> world_frames;
  std::optional<FrameStream> brute_frames;
  std::optional<FrameStream> idle_frames;
  std::optional<FrameStream> threaded_frames;
  std::optional<FrameStream> sending_frames;
  std::uint64_t checked_ticks = 0;
  std::string error;  // non-empty when setup failed or the brute force disagreed

  // Drops the Worlds, the baseline and the frames; what the summary prints stays.
  void release() {
    run.reset();
    idle.reset();
    brute.reset();
    threaded.reset();
    sending.reset();
    world_frames.reset();
    brute_frames.reset();
    idle_frames.reset();
    threaded_frames.reset();
    sending_frames.reset();
  }
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
  f.checked_ticks = 0;
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
  f.brute.emplace(s.walk.entities, viewers, s.enter_radius, s.leave_radius, s.crowd_cap);
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

  const std::int64_t before_idle = live_heap_bytes();
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
  const std::int64_t idle_bytes = live_heap_bytes() - before_idle -
                                  static_cast<std::int64_t>(f.idle->entities.capacity() * sizeof(EntityId));

  if (!f.full) return;
  HeapFigures heap;
  Result<std::unique_ptr<SendingRun>> sending = start_sending(s, idle_bytes, heap);
  if (!sending) {
    f.error = "start_sending: " + sending.status().message();
    return;
  }
  f.sending = std::move(sending).value();
  f.heap = heap;
  f.sending_frames.emplace(f.sending->walk, s.frame_block);
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

// Built on first use, so a filtered run only pays for the scenarios it measures. One scenario
// is held at a time: the brute force keeps a flag per client and entity (1 GB for the MMO,
// 2.5 GB for 50,000 observers).
Fixture* ready(benchmark::State& state, std::size_t index) {
  Fixture& f = *fixtures()[index];
  if (!f.run && f.error.empty()) {
    for (const auto& other : fixtures()) other->release();
    set_up(f);
  }
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
void time_ticks(benchmark::State& state, World& world, std::span<const EntityId> entities,
                FrameStream& frames) {
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

// The tick of bm_sightline, then a send; on the send row's own World.
void bm_sightline_send(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f == nullptr) return;
  SendingRun& run = *f->sending;
  FrameStream& frames = *f->sending_frames;
  double members = 0, tests = 0, churn = 0, bytes = 0;
  bool ok = true;
  const std::uint64_t allocations_before = allocation_count();
  for (auto _ : state) {
    const FrameStream::Frame frame = next_frame(state, frames);
    if (!apply(run.world.world, run.world.entities, frame.xs, frame.zs)) ok = false;
    const TickStats stats = run.world.world.tick();
    if (!run.replicator->send().ok()) ok = false;
    members += static_cast<double>(stats.members);
    tests += static_cast<double>(stats.distance_tests);
    churn += static_cast<double>(stats.spawns + stats.despawns);
    bytes += static_cast<double>(run.replicator->stats().bytes);
  }
  const std::uint64_t allocations = allocation_count() - allocations_before;
  if (!ok) state.SkipWithError("set_positions or send refused");
  set_tick_counters(state, members, tests, churn, allocations);
  state.counters["bytes"] = benchmark::Counter(bytes, benchmark::Counter::kAvgIterations);
}

void bm_brute_force_send(benchmark::State& state, std::size_t index) {
  Fixture* f = ready(state, index);
  if (f == nullptr) return;
  BruteForce& brute = *f->brute;
  FrameStream& frames = *f->brute_frames;
  const float tick_seconds = 1.0f / f->scenario.walk.hz;
  double members = 0, tests = 0, churn = 0, bytes = 0;
  const std::uint64_t allocations_before = allocation_count();
  for (auto _ : state) {
    const FrameStream::Frame frame = next_frame(state, frames);
    brute.set_positions(frame.xs, frame.zs);
    const TickStats stats = brute.tick();
    bytes += static_cast<double>(brute.send(tick_seconds, kSendBudgetBytes).bytes);
    members += static_cast<double>(stats.members);
    tests += static_cast<double>(stats.distance_tests);
    churn += static_cast<double>(stats.spawns + stats.despawns);
  }
  const std::uint64_t allocations = allocation_count() - allocations_before;
  set_tick_counters(state, members, tests, churn, allocations);
  state.counters["bytes"] = benchmark::Counter(bytes, benchmark::Counter::kAvgIterations);
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

// Every benchmark of the table when `full`; otherwise (the scaling family) only the tick of
// Sightline and, where the scenario times it, of the brute force.
void register_benchmarks(const std::vector<BenchScenario>& scenarios, bool full) {
  for (const BenchScenario& s : scenarios) fixtures().push_back(std::make_unique<Fixture>(s, full));
  for (std::size_t i = 0; i < fixtures().size(); ++i) {
    const BenchScenario& scenario = fixtures()[i]->scenario;
    const auto add = [&](const char* what, void (*body)(benchmark::State&, std::size_t),
                         bool manual_time = false) {
      benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
          (scenario.name + "/" + what).c_str(), [body, i](benchmark::State& state) { body(state, i); });
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
    if (full) add("sightline_2_threads", bm_threads);
    if (scenario.time_brute_force) add("brute_force", bm_brute_force);
    if (full) {
      add("input", bm_input);
      add("grid_only", bm_grid_only, true);
      add("sightline_send", bm_sightline_send);
      if (scenario.time_brute_force) add("brute_force_send", bm_brute_force_send);
    }
  }
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

using Run = benchmark::BenchmarkReporter::Run;
using Value = std::optional<double>;  // empty: the benchmark was filtered out or failed

Value ms(const Run* run) {
  return run != nullptr && !run->error_occurred ? Value(real_ns(*run) / 1e6) : std::nullopt;
}
Value count(const Run* run, const char* name) {
  return run != nullptr && !run->error_occurred ? Value(counter(*run, name)) : std::nullopt;
}
Value divide(Value a, Value b, double scale = 1.0) { return a && b ? Value(*a / *b * scale) : std::nullopt; }
std::string cell(Value value, const char* pattern, const char* none = "-") {
  return value ? format(pattern, *value) : none;
}

// One line of the summary table, from this run's medians.
struct SummaryRow {
  Value sightline_ms, threads_ms, speedup, brute_ms, brute_ratio, ns_per_pair, pairs, tests, brute_tests,
      input_ms, grid_ns_per_entity, client_passes_ms, allocs, grid_allocs, bytes_per_entity, bytes_per_client;
  // The second row: the tick and a send.
  Value send_ms, brute_send_ms, send_ratio, send_ns_per_pair, send_pairs, send_allocs, send_bytes,
      send_bytes_per_client;
};

SummaryRow summary_row(const Fixture& f, const CollectingReporter& reporter) {
  const std::string& name = f.scenario.name;
  const Run* lib = reporter.find(name + "/sightline");
  const Run* brute = reporter.find(name + "/brute_force");
  const Run* grid = reporter.find(name + "/grid_only");
  const Value grid_ms = ms(grid);
  SummaryRow r;
  r.sightline_ms = ms(lib);
  r.threads_ms = ms(reporter.find(name + "/sightline_2_threads"));
  r.speedup = divide(r.sightline_ms, r.threads_ms);
  r.brute_ms = ms(brute);
  r.brute_ratio = divide(r.brute_ms, r.sightline_ms);
  r.pairs = count(lib, "pairs");
  r.ns_per_pair = divide(r.sightline_ms, r.pairs, 1e6);
  r.tests = count(lib, "tests");
  r.brute_tests = count(brute, "tests");
  r.input_ms = ms(reporter.find(name + "/input"));
  r.grid_ns_per_entity = divide(grid_ms, Value(f.scenario.walk.entities), 1e6);
  if (r.sightline_ms && r.input_ms && grid_ms) r.client_passes_ms = *r.sightline_ms - *r.input_ms - *grid_ms;
  r.allocs = count(lib, "allocs");
  r.grid_allocs = count(grid, "allocs");
  if (f.heap) {
    r.bytes_per_entity = f.heap->world_per_entity;
    r.bytes_per_client = f.heap->world_per_client;
    r.send_bytes_per_client = f.heap->world_per_client + f.heap->replicator_per_client;
  }
  const Run* send = reporter.find(name + "/sightline_send");
  const Run* brute_send = reporter.find(name + "/brute_force_send");
  r.send_ms = ms(send);
  r.brute_send_ms = ms(brute_send);
  r.send_ratio = divide(r.brute_send_ms, r.send_ms);
  r.send_pairs = count(send, "pairs");
  r.send_ns_per_pair = divide(r.send_ms, r.send_pairs, 1e6);
  r.send_allocs = count(send, "allocs");
  r.send_bytes = count(send, "bytes");
  return r;
}

// Prints the summary table and returns its numbers, for --json and --csv.
std::vector<TableRow> print_summary(std::ostream& out, const CollectingReporter& reporter) {
  out << "\nSummary: medians of " << kRepetitions
      << " repetitions, wall-clock time per steady tick, single thread. A tick here is set_positions\n"
         "for every entity plus World::tick(); brute force gets the same frames. ns/visible pair = "
         "sightline\n"
         "tick / pairs. Input = set_positions alone. Grid build = grid_only / entities, where\n"
         "grid_only times World::tick() alone with no clients. Client passes = sightline - input - "
         "grid_only.\n"
         "Each scenario's second row (+ send) is the tick followed by Replicator::send() at a "
         "1200-byte budget\n"
         "(priorities, budget, packets), beside the brute force's tick and a send that scores, sorts "
         "and\n"
         "serializes every member per client. Heap bytes: kept by a World without clients per "
         "entity, and\n"
         "added per client by its clients (in the + send row, with the Replicator's).\n\n";
  out << "| scenario | clients x entities | sightline ms/tick | 2 threads ms/tick (speed-up) | brute force "
         "ms/tick | brute/sightline "
         "| ns/visible pair | visible pairs/tick | distance tests/tick (sightline / brute) "
         "| input ms/tick | grid build ns/entity | client passes ms/tick | allocations/tick "
         "| heap bytes/entity | heap bytes/client | ticks checked |\n";
  out << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<TableRow> rows;
  for (const auto& fixture : fixtures()) {
    const Fixture& f = *fixture;
    const SummaryRow r = summary_row(f, reporter);
    out << "| " << f.scenario.name << " | " << f.scenario.clients << " x " << f.scenario.walk.entities
        << " | ";
    if (!f.error.empty()) {
      out << "error: " << f.error << " |\n";
    } else {
      out << cell(r.sightline_ms, "%.4g") << " | " << cell(r.threads_ms, "%.4g")
          << cell(r.speedup, " (%.2fx)", "") << " | " << cell(r.brute_ms, "%.4g") << " | "
          << cell(r.brute_ratio, "%.1f") << " | " << cell(r.ns_per_pair, "%.2f") << " | "
          << cell(r.pairs, "%.0f") << " | " << cell(r.tests, "%.0f") << " / " << cell(r.brute_tests, "%.0f")
          << " | " << cell(r.input_ms, "%.4g") << " | " << cell(r.grid_ns_per_entity, "%.2f") << " | "
          << cell(r.client_passes_ms, "%.4g") << " | " << cell(r.allocs, "%.3g") << " / "
          << cell(r.grid_allocs, "%.3g") << " | " << cell(r.bytes_per_entity, "%.0f") << " | "
          << cell(r.bytes_per_client, "%.0f") << " | " << f.checked_ticks << " |\n";
      if (r.send_ms) {
        out << "| " << f.scenario.name << " + send | | " << cell(r.send_ms, "%.4g") << " | - | "
            << cell(r.brute_send_ms, "%.4g") << " | " << cell(r.send_ratio, "%.1f") << " | "
            << cell(r.send_ns_per_pair, "%.2f") << " | " << cell(r.send_pairs, "%.0f") << " | "
            << cell(r.send_bytes, "%.0f") << " bytes sent | - | - | - | " << cell(r.send_allocs, "%.3g")
            << " | | " << cell(r.send_bytes_per_client, "%.0f") << " | |\n";
      }
    }
    rows.push_back({f.scenario.name,
                    {{"clients", f.scenario.clients},
                     {"entities", f.scenario.walk.entities},
                     {"sightline_ms_per_tick", r.sightline_ms},
                     {"threads_2_ms_per_tick", r.threads_ms},
                     {"threads_2_speedup", r.speedup},
                     {"brute_force_ms_per_tick", r.brute_ms},
                     {"brute_over_sightline", r.brute_ratio},
                     {"ns_per_visible_pair", r.ns_per_pair},
                     {"visible_pairs_per_tick", r.pairs},
                     {"distance_tests_per_tick_sightline", r.tests},
                     {"distance_tests_per_tick_brute_force", r.brute_tests},
                     {"input_ms_per_tick", r.input_ms},
                     {"grid_build_ns_per_entity", r.grid_ns_per_entity},
                     {"client_passes_ms_per_tick", r.client_passes_ms},
                     {"allocations_per_tick_sightline", r.allocs},
                     {"allocations_per_tick_grid_only", r.grid_allocs},
                     {"heap_bytes_per_entity", r.bytes_per_entity},
                     {"heap_bytes_per_client", r.bytes_per_client},
                     {"with_send_ms_per_tick", r.send_ms},
                     {"with_send_brute_force_ms_per_tick", r.brute_send_ms},
                     {"with_send_brute_over_sightline", r.send_ratio},
                     {"with_send_ns_per_visible_pair", r.send_ns_per_pair},
                     {"with_send_allocations_per_tick", r.send_allocs},
                     {"with_send_bytes_sent_per_tick", r.send_bytes},
                     {"with_send_heap_bytes_per_client", r.send_bytes_per_client},
                     {"ticks_checked", static_cast<double>(f.checked_ticks)}},
                    f.error});
  }
  out << "\nallocations/tick: heap allocations per timed tick (sightline / grid_only), counted by a "
         "replaced\n"
         "global operator new; issue 2 requires 0. ticks checked: ticks on which the brute force and the\n"
         "library gave equal spawns, updates, despawns and members before timing.\n";
  return rows;
}

// Least-squares slope of log(y) against log(x) over the points that have a y; empty below two.
Value loglog_slope(const std::vector<double>& xs, const std::vector<Value>& ys) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!ys[i]) continue;
    const double lx = std::log(xs[i]), ly = std::log(*ys[i]);
    n += 1;
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  if (n < 2) return std::nullopt;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// Least-squares slope of y against x (through no fixed point) over the points that have a y.
Value linear_slope(const std::vector<double>& xs, const std::vector<Value>& ys) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (!ys[i]) continue;
    n += 1;
    sx += xs[i];
    sy += *ys[i];
    sxx += xs[i] * xs[i];
    sxy += xs[i] * *ys[i];
  }
  if (n < 2) return std::nullopt;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// The world family (issue 18's item 5): the MMO's density at 250,000 to 4M entities with 100
// clients; ns per entity at each size, its spread, and the fitted slopes. Appends to `rows`.
void print_world_scaling(std::ostream& out, const CollectingReporter& reporter, std::vector<TableRow>& rows) {
  out << "\nWorld scaling: the MMO's density (side 10,000 x sqrt(N / 100,000), R = 178, L = 1.25R) with 100\n"
         "clients. Medians of "
      << kRepetitions
      << " repetitions, wall-clock time per steady tick (set_positions plus World::tick()),\n"
         "single thread.\n\n";
  out << "| entities N | world side | sightline ms/tick | sightline ns/entity | visible pairs/client | ticks "
         "checked "
         "|\n";
  out << "|---|---|---|---|---|---|\n";
  std::vector<double> counts;
  std::vector<Value> lib_ms;
  double lowest = 0, highest = 0;
  for (const auto& fixture : fixtures()) {
    const Fixture& f = *fixture;
    if (f.scenario.name.rfind("world_", 0) != 0) continue;
    const double entities = f.scenario.walk.entities;
    const Run* lib = reporter.find(f.scenario.name + "/sightline");
    const Value sightline = ms(lib);
    const Value ns_per_entity = divide(sightline, Value(entities), 1e6);
    const Value pairs_per_client = divide(count(lib, "pairs"), Value(f.scenario.clients));
    out << "| " << f.scenario.walk.entities << " | " << format("%.0f", f.scenario.walk.width) << " | ";
    if (!f.error.empty()) {
      out << "error: " << f.error << " |\n";
    } else {
      out << cell(sightline, "%.4g") << " | " << cell(ns_per_entity, "%.2f") << " | "
          << cell(pairs_per_client, "%.2f") << " | " << f.checked_ticks << " |\n";
    }
    if (ns_per_entity) {
      lowest = lowest == 0 ? *ns_per_entity : std::min(lowest, *ns_per_entity);
      highest = std::max(highest, *ns_per_entity);
    }
    rows.push_back({f.scenario.name,
                    {{"entities", entities},
                     {"world_side", f.scenario.walk.width},
                     {"sightline_ms_per_tick", sightline},
                     {"sightline_ns_per_entity", ns_per_entity},
                     {"visible_pairs_per_client", pairs_per_client},
                     {"ticks_checked", static_cast<double>(f.checked_ticks)}},
                    f.error});
    counts.push_back(entities);
    lib_ms.push_back(sightline);
  }
  if (counts.empty()) return;
  out << "\nFitted slope of ms/tick against N, least squares: "
      << cell(divide(linear_slope(counts, lib_ms), Value(1.0), 1e6), "%.2f")
      << " ns per entity; of log(ms/tick) against log(N): " << cell(loglog_slope(counts, lib_ms), "%.2f")
      << ". Highest ns/entity over lowest: "
      << cell(lowest > 0 ? Value(highest / lowest) : std::nullopt, "%.2f") << ".\n";
}

// Prints the scaling table and the fitted slopes, and returns its numbers, for --csv and --json.
std::vector<TableRow> print_scaling(std::ostream& out, const CollectingReporter& reporter) {
  out << "\nScaling: (f) everyone observes (R = 30, L = 33, 2 units a tick, every entity a client) at\n"
         "(f)'s density, on a square of side 2048 x sqrt(N / 10,000). Medians of "
      << kRepetitions
      << " repetitions, wall-clock time per\n"
         "steady tick (set_positions plus World::tick()), single thread. Brute force timed up to N = "
      << kScalingBruteMaxEntities << ";\nbeyond, it only runs the checked ticks.\n\n";
  out << "| entities N | world side | sightline ms/tick | brute force ms/tick | brute/sightline "
         "| sightline ns/entity | visible pairs/client | ticks checked |\n";
  out << "|---|---|---|---|---|---|---|---|\n";
  std::vector<TableRow> rows;
  std::vector<double> counts;
  std::vector<Value> lib_ms, brute_ms;
  for (const auto& fixture : fixtures()) {
    const Fixture& f = *fixture;
    if (f.scenario.name.rfind("scaling_", 0) != 0) continue;
    const double entities = f.scenario.walk.entities;
    const Run* lib = reporter.find(f.scenario.name + "/sightline");
    const Value sightline = ms(lib);
    const Value brute = ms(reporter.find(f.scenario.name + "/brute_force"));
    const Value ratio = divide(brute, sightline);
    const Value ns_per_entity = divide(sightline, Value(entities), 1e6);
    const Value pairs_per_client = divide(count(lib, "pairs"), Value(f.scenario.clients));
    out << "| " << f.scenario.walk.entities << " | " << format("%.0f", f.scenario.walk.width) << " | ";
    if (!f.error.empty()) {
      out << "error: " << f.error << " |\n";
    } else {
      out << cell(sightline, "%.4g") << " | " << cell(brute, "%.4g") << " | " << cell(ratio, "%.1f") << " | "
          << cell(ns_per_entity, "%.1f") << " | " << cell(pairs_per_client, "%.2f") << " | "
          << f.checked_ticks << " |\n";
    }
    rows.push_back({f.scenario.name,
                    {{"entities", entities},
                     {"world_side", f.scenario.walk.width},
                     {"sightline_ms_per_tick", sightline},
                     {"brute_force_ms_per_tick", brute},
                     {"brute_over_sightline", ratio},
                     {"sightline_ns_per_entity", ns_per_entity},
                     {"visible_pairs_per_client", pairs_per_client},
                     {"ticks_checked", static_cast<double>(f.checked_ticks)}},
                    f.error});
    counts.push_back(entities);
    lib_ms.push_back(sightline);
    brute_ms.push_back(brute);
  }
  out << "\nFitted slope of log(ms/tick) against log(N), least squares over the timed points: sightline "
      << cell(loglog_slope(counts, lib_ms), "%.2f") << ", brute force "
      << cell(loglog_slope(counts, brute_ms), "%.2f") << ".\n";
  print_world_scaling(out, reporter, rows);
  return rows;
}

// This binary's own flags, taken out of argv before Google Benchmark sees it.
struct Options {
  bool scaling = false;
  std::string json;  // --json FILE: the printed table's numbers as JSON
  std::string csv;   // --csv FILE: the same as CSV
};

std::optional<Options> take_options(int& argc, char** argv) {
  Options options;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--scaling") {
      options.scaling = true;
    } else if (arg == "--json" || arg == "--csv") {
      if (i + 1 == argc) return std::nullopt;
      (arg == "--json" ? options.json : options.csv) = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return options;
}

// Nothing to do for an empty path; false, with a message, when the file cannot be written.
bool write_file(const std::string& path, void (*write)(std::ostream&, std::span<const TableRow>),
                std::span<const TableRow> rows) {
  if (path.empty()) return true;
  std::ofstream file(path);
  write(file, rows);
  file.close();
  if (file) return true;
  std::cerr << "sightline-bench: cannot write " << path << "\n";
  return false;
}

}  // namespace
}  // namespace sightline::bench

int main(int argc, char** argv) {
  using namespace sightline::bench;
  const std::optional<Options> options = take_options(argc, argv);
  if (!options) {
    std::cerr << "usage: sightline-bench [--scaling] [--json FILE] [--csv FILE] [--benchmark_...]\n";
    return 2;
  }
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--benchmark_format=json") json = true;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<BenchScenario> scenarios = options->scaling ? scaling_scenarios() : all_scenarios();
  if (options->scaling) {
    for (BenchScenario& s : world_scaling_scenarios()) scenarios.push_back(std::move(s));
  }
  register_benchmarks(scenarios, !options->scaling);

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
  std::ostream& out = json ? std::cerr : std::cout;
  const std::vector<TableRow> rows =
      options->scaling ? print_scaling(out, reporter) : print_summary(out, reporter);
  const bool written =
      write_file(options->json, write_json, rows) && write_file(options->csv, write_csv, rows);
  benchmark::Shutdown();
  return reporter.errors() == 0 && written ? 0 : 1;
}
