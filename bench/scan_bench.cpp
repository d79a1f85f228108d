// sightline-bench-scan: the enter test alone, the scalar loop beside the AVX2 one, over runs of
// candidates as the grid hands them over (3 x 3 cells of side R around the origin, so about
// pi / 9 = 35% of the candidates are hits). Reports nanoseconds per candidate.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "../src/distance_scan.h"
#include "../src/simd.h"
#include "rng.h"

namespace {

struct Run {
  std::vector<float> xs, zs;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> hits;
  std::vector<std::uint32_t> stamp;  // none stamped with the scan's epoch (1): every hit is fresh
};

Run make_run(std::uint32_t count) {
  sightline::scenarios::Rng rng(count);
  Run run;
  for (std::uint32_t i = 0; i < count; ++i) {
    run.xs.push_back(rng.uniform(-1.5f, 1.5f));
    run.zs.push_back(rng.uniform(-1.5f, 1.5f));
    run.ids.push_back(i);
  }
  run.hits.resize(count + 8);
  run.stamp.assign(count, 0);
  return run;
}

void scan(benchmark::State& state, sightline::DistanceScan fn) {
  if (fn == nullptr) {
    state.SkipWithError("this build or CPU has no AVX2 scan");
    return;
  }
  const auto count = static_cast<std::uint32_t>(state.range(0));
  Run run = make_run(count);
  std::uint64_t hits = 0;
  for (auto _ : state) {
    const sightline::ScanRun whole{0, count};
    hits += fn(run.xs.data(), run.zs.data(), run.ids.data(), &whole, 1, 0.0f, 0.0f, 1.0f, run.stamp.data(), 1,
               run.hits.data());
    benchmark::DoNotOptimize(run.hits.data());
    benchmark::ClobberMemory();
  }
  const double candidates = static_cast<double>(state.iterations()) * count;
  state.counters["ns_per_candidate"] =
      benchmark::Counter(candidates, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["hit_rate"] = static_cast<double>(hits) / candidates;
}

void scalar(benchmark::State& state) { scan(state, &sightline::scan_within_scalar); }
void avx2(benchmark::State& state) {
  scan(state, sightline::simd::cpu_has_avx2() ? sightline::scan_within_avx2 : nullptr);
}

}  // namespace

BENCHMARK(scalar)->Arg(12)->Arg(48)->Arg(400)->Arg(4000);
BENCHMARK(avx2)->Arg(12)->Arg(48)->Arg(400)->Arg(4000);
BENCHMARK_MAIN();
