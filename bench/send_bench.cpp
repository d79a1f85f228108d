// sightline-bench-send: Replicator::send after a steady World tick, serialize-once against
// serializing per client, in the reference and arena scenarios, at a 1200-byte budget.
//
//   <scenario>/shared      ReplicatorDef::share_payloads = true: each entity's payload of a part
//                          is written once per send and copied into every client's packet;
//   <scenario>/per_client  false: every record measures, then writes, its own payload (what a
//                          serializer without the shared path does).
//   <scenario>/whole       shared, every update carrying the walker's whole 40-byte state
//                          (scenarios::serialize_walker_whole);
//   <scenario>/whole_delta the same with ReplicatorDef::delta_updates: updates written as byte
//                          runs against a state the client keeps;
//   <scenario>/references  shared, the walker state and two entity references in both parts
//                          (Stream::serialize_entity) to the next entities by index, so some
//                          clients hold the target and some do not: copies with nulls per client
//                          and refreshes. Its baseline is `shared` (the same state, no references).
// Only send() is timed; the tick before it is not. Counters: serializer calls and payload bytes
// they produced per send, the packet bytes per send (the same for shared and per_client: the wire
// is unchanged), the updates and delta updates sent per send, and refreshes per send.
#include <benchmark/benchmark.h>

#include <optional>
#include <vector>

#include "bench_scenarios.h"
#include "sightline/replicator.h"
#include "walker_state.h"

namespace sightline::bench {
namespace {

enum class Mode { shared, per_client, whole, whole_delta, references };

constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::shared: return "shared";
    case Mode::per_client: return "per_client";
    case Mode::whole: return "whole";
    case Mode::whole_delta: return "whole_delta";
    case Mode::references: return "references";
  }
  return "";
}

bool serialize_referring_walker(Stream& s, EntityId e, StatePart part, void* context) {
  EntityId next{e.index + 1, 1};
  EntityId after{e.index + 2, 1};
  return scenarios::serialize_walker(s, e, part, context) && s.serialize_entity(next) &&
         s.serialize_entity(after);
}

void run_send(benchmark::State& state, BenchScenario scenario, Mode mode) {
  scenario.warmup_ticks = std::min<std::uint32_t>(scenario.warmup_ticks, 300);
  Result<ScenarioRun> built = build_scenario(scenario);
  if (!built) {
    state.SkipWithError(built.status().message().c_str());
    return;
  }
  ScenarioRun& run = built.value();
  World& world = run.world.world;
  ReplicatorDef def;
  const bool whole = mode == Mode::whole || mode == Mode::whole_delta;
  def.serialize = whole                      ? scenarios::serialize_walker_whole
                  : mode == Mode::references ? serialize_referring_walker
                                             : scenarios::serialize_walker;
  def.serialize_context = &world;
  def.share_payloads = mode != Mode::per_client;
  def.delta_updates = mode == Mode::whole_delta;
  def.tick_seconds = 1.0f / scenario.walk.hz;
  Replicator replicator = std::move(Replicator::create(world, def).value());
  auto step = [&] {
    run.walk.step();
    if (!world.set_positions(run.world.entities, run.walk.xs(), run.walk.zs()).ok()) std::abort();
    world.tick();
  };
  for (std::uint32_t t = 0; t < scenario.warmup_ticks; ++t) {
    step();
    if (!replicator.send().ok()) std::abort();
  }
  std::uint64_t calls = 0, payload_bytes = 0, packet_bytes = 0, updates = 0, deltas = 0, refreshes = 0,
                sends = 0;
  for (auto _ : state) {
    state.PauseTiming();
    step();
    state.ResumeTiming();
    if (!replicator.send().ok()) std::abort();
    calls += replicator.stats().serialize_calls;
    payload_bytes += replicator.stats().serialized_bytes;
    packet_bytes += replicator.stats().bytes;
    updates += replicator.stats().updates;
    deltas += replicator.stats().delta_updates;
    refreshes += replicator.stats().refreshes;
    ++sends;
  }
  const double n = static_cast<double>(std::max<std::uint64_t>(1, sends));
  state.counters["serialize_calls"] = static_cast<double>(calls) / n;
  state.counters["serialized_bytes"] = static_cast<double>(payload_bytes) / n;
  state.counters["packet_bytes"] = static_cast<double>(packet_bytes) / n;
  state.counters["updates"] = static_cast<double>(updates) / n;
  state.counters["deltas"] = static_cast<double>(deltas) / n;
  state.counters["refreshes"] = static_cast<double>(refreshes) / n;
}

void register_all() {
  for (const BenchScenario& s : {reference_scenario(), arena_scenario()}) {
    for (const Mode mode :
         {Mode::shared, Mode::per_client, Mode::whole, Mode::whole_delta, Mode::references}) {
      const std::string name = std::string(s.name) + "/" + mode_name(mode);
      benchmark::RegisterBenchmark(name.c_str(), [s, mode](benchmark::State& st) { run_send(st, s, mode); })
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.5)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  }
}

}  // namespace
}  // namespace sightline::bench

int main(int argc, char** argv) {
  sightline::bench::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
