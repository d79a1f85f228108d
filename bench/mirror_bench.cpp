// sightline-bench-mirror: ClientMirror::receive as a bots process or a busy client sees it. Many
// mirrors each hold 200 entities of a 40,000-entity world and receive, round robin, one packet a
// tick updating all of them in a shuffled order, so that each mirror's table is cold when its
// packet comes (one mirror: warm). Beside it the plain model of tests/plain_mirror.h (a std::map
// by index, a deque of snapshots) applying the same packets, decoded in the loop as the mirror
// decodes them. Reports nanoseconds per record applied.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "../tests/plain_mirror.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"

namespace {

using namespace sightline;

constexpr std::uint32_t kHeld = 200;
constexpr std::uint32_t kWorld = 40000;
// Ticks of packets made ahead, the benchmark running each once: 24 for the 1,000 cold mirrors
// (4.8 million records), 2,000 for the one warm mirror (400,000).
constexpr std::uint32_t kColdRounds = 24;
constexpr std::uint32_t kWarmRounds = 2000;
constexpr std::size_t kPayload = 5;  // two quantized coordinates, as the demo's update parts

using Bytes = std::vector<std::uint8_t>;

// Per mirror: its spawn packet, then `rounds` update packets with sequences 1..rounds.
struct Stream {
  Bytes spawns;
  std::vector<Bytes> updates;
};

std::vector<Stream> make_streams(std::uint32_t mirrors, std::uint32_t rounds) {
  std::mt19937_64 rng(mirrors);
  std::vector<std::uint32_t> world(kWorld);
  std::iota(world.begin(), world.end(), 0u);
  std::vector<Stream> streams(mirrors);
  Bytes buffer(64 * 1024);
  Bytes payload(kPayload);
  for (Stream& s : streams) {
    std::shuffle(world.begin(), world.end(), rng);
    std::vector<EntityId> held;
    for (std::uint32_t i = 0; i < kHeld; ++i) held.push_back({world[i], 1});
    PacketWriter spawns(buffer, PacketHeader{Delivery::reliable, 0, 1, 0, {}});
    for (std::uint32_t i = 0; i < kHeld; ++i) {
      for (std::uint8_t& b : payload) b = static_cast<std::uint8_t>(rng());
      (void)spawns.add_spawn(i, held[i], SpawnReason::near, false, payload);
    }
    const auto sb = spawns.finish();
    s.spawns.assign(sb.begin(), sb.end());
    for (std::uint32_t round = 1; round <= rounds; ++round) {
      std::shuffle(held.begin(), held.end(), rng);
      PacketWriter w(buffer, PacketHeader{Delivery::reliable, round, 1 + round, kHeld, {}});
      for (const EntityId e : held) {
        for (std::uint8_t& b : payload) b = static_cast<std::uint8_t>(rng());
        (void)w.add_update(e, payload);
      }
      const auto ub = w.finish();
      s.updates.emplace_back(ub.begin(), ub.end());
    }
  }
  return streams;
}

void report(benchmark::State& state, std::uint32_t mirrors) {
  const double records = static_cast<double>(state.iterations()) * mirrors * kHeld;
  state.counters["ns_per_record"] =
      benchmark::Counter(records, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void mirror(benchmark::State& state) {
  const auto mirrors = static_cast<std::uint32_t>(state.range(0));
  const std::vector<Stream> streams = make_streams(mirrors, static_cast<std::uint32_t>(state.max_iterations));
  MirrorDef def = default_mirror_def();
  def.history = 1;
  std::vector<ClientMirror> table;
  for (const Stream& s : streams) {
    table.push_back(std::move(ClientMirror::create(def).value()));
    if (!table.back().receive(s.spawns).ok()) state.SkipWithError("spawn packet refused");
  }
  std::uint32_t round = 0;
  for (auto _ : state) {
    for (std::uint32_t m = 0; m < mirrors; ++m) {
      if (!table[m].receive(streams[m].updates[round]).ok() || !table[m].anomalies().empty()) {
        state.SkipWithError("update packet refused or anomalous");
      }
    }
    ++round;
  }
  report(state, mirrors);
}

void plain(benchmark::State& state) {
  const auto mirrors = static_cast<std::uint32_t>(state.range(0));
  const std::vector<Stream> streams = make_streams(mirrors, static_cast<std::uint32_t>(state.max_iterations));
  std::vector<testing::PlainMirror> table(mirrors, testing::PlainMirror(1, kWorld));
  DecodedPacket decoded;
  for (std::uint32_t m = 0; m < mirrors; ++m) {
    if (!decode_packet(streams[m].spawns, decoded).ok()) state.SkipWithError("spawn packet refused");
    (void)table[m].apply(decoded);
  }
  std::uint32_t round = 0;
  for (auto _ : state) {
    for (std::uint32_t m = 0; m < mirrors; ++m) {
      if (!decode_packet(streams[m].updates[round], decoded).ok() || table[m].apply(decoded) != 0) {
        state.SkipWithError("update packet refused or anomalous");
      }
    }
    ++round;
  }
  report(state, mirrors);
}

}  // namespace

BENCHMARK(mirror)->Arg(1)->Iterations(kWarmRounds)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(mirror)
    ->Arg(1000)
    ->Iterations(kColdRounds)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(plain)->Arg(1)->Iterations(kWarmRounds)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(plain)
    ->Arg(1000)
    ->Iterations(kColdRounds)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
