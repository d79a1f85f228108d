// sightline-bench-threads: how the tick and the send scale with threads. For each scenario and
// each thread count (1, 2, 4, ... up to --threads N, and N), a World on that many threads
// (WorldDef::threads) with a Replicator sending after every tick (sending_run.h), warmed up, then
// timed tick by tick: World::set_positions + World::tick(), then Replicator::send(). The table
// gives each part's time, its speed-up over one thread, and the serial fraction that speed-up
// implies by Amdahl's law: f = (n / S - 1) / (n - 1) for a speed-up S on n threads (0: all of it
// parallel, 1: none of it).
//
// Usage: sightline-bench-threads [--threads N] [--scenarios a,b,...] [--benchmark_...]
//   --threads N     the largest thread count (default: the machine's hardware threads);
//   --scenarios     names from bench_scenarios.h (default: reference, arena, mmo, clustered,
//                   observers, observers_crowd).
// Results are the median over 5 repetitions of at least 0.2 s each.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_scenarios.h"
#include "sending_run.h"
#include "summary_reporter.h"

namespace sightline::bench {
namespace {

constexpr int kRepetitions = 5;
constexpr double kMinTimeSeconds = 0.2;

struct Case {
  BenchScenario scenario;  // with its thread count
  std::string name;        // "<scenario>/threads:<n>"
};

std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

// One warmed-up run at a time: an MMO World and Replicator hold about a gigabyte, and every
// repetition of a case reuses it.
struct Current {
  std::size_t index = static_cast<std::size_t>(-1);
  std::unique_ptr<SendingRun> run;
  std::string error;
};

Current& current() {
  static Current held;
  return held;
}

SendingRun* run_of(std::size_t index, std::string& error) {
  Current& held = current();
  if (held.index != index) {
    held.run.reset();  // the last case's, before this one is built
    held.index = index;
    held.error.clear();
    HeapFigures heap;
    Result<std::unique_ptr<SendingRun>> started = start_sending(cases()[index].scenario, 0, heap);
    if (started) {
      held.run = std::move(started).value();
    } else {
      held.error = started.status().message();
    }
  }
  error = held.error;
  return held.run.get();
}

void bm_tick_and_send(benchmark::State& state, std::size_t index) {
  std::string error;
  SendingRun* run = run_of(index, error);
  if (run == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  using Clock = std::chrono::steady_clock;
  World& world = run->world.world;
  double tick_seconds = 0, send_seconds = 0;
  bool ok = true;
  for (auto _ : state) {
    run->walk.step();  // untimed: the frame
    const Clock::time_point start = Clock::now();
    ok = ok && world.set_positions(run->world.entities, run->walk.xs(), run->walk.zs()).ok();
    (void)world.tick();
    const Clock::time_point ticked = Clock::now();
    ok = ok && run->replicator->send().ok();
    const Clock::time_point sent = Clock::now();
    const double tick = std::chrono::duration<double>(ticked - start).count();
    const double send = std::chrono::duration<double>(sent - ticked).count();
    tick_seconds += tick;
    send_seconds += send;
    state.SetIterationTime(tick + send);
  }
  if (!ok) state.SkipWithError("a frame or a send was refused");
  state.counters["tick_ms"] = benchmark::Counter(tick_seconds * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["send_ms"] = benchmark::Counter(send_seconds * 1e3, benchmark::Counter::kAvgIterations);
}

std::vector<std::uint32_t> thread_counts(std::uint32_t most) {
  std::vector<std::uint32_t> counts;
  for (std::uint32_t n = 1; n < most; n *= 2) counts.push_back(n);
  counts.push_back(most);
  return counts;
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// Amdahl's serial fraction for a speed-up s on n threads; none for one thread.
std::string serial_fraction(double s, std::uint32_t n) {
  if (n == 1) return "-";
  return format("%.2f", (static_cast<double>(n) / s - 1.0) / (static_cast<double>(n) - 1.0));
}

void print_table(std::ostream& out, const CollectingReporter& reporter, const std::vector<std::string>& names,
                 const std::vector<std::uint32_t>& counts) {
  out << "\nThread scaling (sightline-bench-threads; medians; speed-up over 1 thread; f: the serial\n"
         "fraction Amdahl's law gives for that speed-up)\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %7s %9s %7s %6s %9s %7s %6s %11s %7s %6s\n", "scenario", "threads",
                "tick ms", "speedup", "f", "send ms", "speedup", "f", "tick+send", "speedup", "f");
  out << line;
  for (const std::string& name : names) {
    double tick_one = 0, send_one = 0, both_one = 0;
    for (const std::uint32_t n : counts) {
      const benchmark::BenchmarkReporter::Run* run = reporter.find(name + "/threads:" + std::to_string(n));
      if (run == nullptr) continue;
      if (run->error_occurred) {
        out << name << " on " << n << " threads: " << run->error_message << "\n";
        continue;
      }
      const double tick = counter(*run, "tick_ms");
      const double send = counter(*run, "send_ms");
      const double both = real_ns(*run) / 1e6;
      if (n == 1) {
        tick_one = tick;
        send_one = send;
        both_one = both;
      }
      if (tick_one == 0) continue;  // no one-thread row to compare with
      std::snprintf(line, sizeof line, "%-18s %7u %9.3f %7.2f %6s %9.3f %7.2f %6s %11.3f %7.2f %6s\n",
                    name.c_str(), n, tick, tick_one / tick, serial_fraction(tick_one / tick, n).c_str(), send,
                    send_one / send, serial_fraction(send_one / send, n).c_str(), both, both_one / both,
                    serial_fraction(both_one / both, n).c_str());
      out << line;
    }
  }
}

struct Options {
  std::uint32_t threads = 0;
  std::vector<std::string> scenarios{"reference", "arena",     "mmo",
                                     "clustered", "observers", "observers_crowd"};
};

std::optional<Options> take_options(int& argc, char** argv, std::string& error) {
  Options options;
  options.threads = std::max(1u, std::thread::hardware_concurrency());
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--threads" || arg == "--scenarios") {
      if (i + 1 == argc) {
        error = std::string(arg) + " needs a value";
        return std::nullopt;
      }
      const std::string value = argv[++i];
      if (arg == "--threads") {
        char* end = nullptr;
        const unsigned long n = std::strtoul(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0' || n < 1 || n > 64) {
          error = "--threads " + value + ": a whole number in [1, 64] is needed";
          return std::nullopt;
        }
        options.threads = static_cast<std::uint32_t>(n);
      } else {
        options.scenarios.clear();
        std::stringstream list(value);
        for (std::string name; std::getline(list, name, ',');) options.scenarios.push_back(name);
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return options;
}

}  // namespace
}  // namespace sightline::bench

int main(int argc, char** argv) {
  using namespace sightline::bench;
  std::string error;
  const std::optional<Options> options = take_options(argc, argv, error);
  if (!options) {
    std::cerr << "sightline-bench-threads: " << error
              << "\nusage: sightline-bench-threads [--threads N] [--scenarios a,b,...] [--benchmark_...]\n";
    return 2;
  }
  const std::vector<BenchScenario> all = all_scenarios();
  const std::vector<std::uint32_t> counts = thread_counts(options->threads);
  for (const std::string& name : options->scenarios) {
    const auto found =
        std::find_if(all.begin(), all.end(), [&](const BenchScenario& s) { return s.name == name; });
    if (found == all.end()) {
      std::cerr << "sightline-bench-threads: no scenario named '" << name << "' in bench_scenarios.h\n";
      return 2;
    }
    for (const std::uint32_t n : counts) {
      BenchScenario s = *found;
      s.threads = n;
      cases().push_back({s, name + "/threads:" + std::to_string(n)});
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (std::size_t i = 0; i < cases().size(); ++i) {
    benchmark::RegisterBenchmark(cases()[i].name.c_str(),
                                 [i](benchmark::State& state) { bm_tick_and_send(state, i); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(kMinTimeSeconds)
        ->Repetitions(kRepetitions)
        ->ReportAggregatesOnly(true);
  }
  auto display = std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_Tabular);
  CollectingReporter reporter(std::move(display));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  current().run.reset();
  print_table(std::cout, reporter, options->scenarios, counts);
  benchmark::Shutdown();
  return reporter.errors() == 0 ? 0 : 1;
}
