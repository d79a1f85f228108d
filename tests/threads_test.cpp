// Threads change nothing but speed: the whole model's records, sets, events and answers are the
// same for 1, 2, 3 and 4 threads, tick by tick, and the brute-force oracle agrees with each. This
// file also runs under ThreadSanitizer in make test.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "random_run.h"
#include "sightline/world.h"

namespace sightline {
namespace {

// FNV-1a over everything a tick produced.
struct Fingerprint {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void add(EntityId e) { add((std::uint64_t{e.index} << 32) | e.generation); }
};

std::vector<std::uint64_t> run(std::uint64_t seed, std::uint32_t threads) {
  testing::RandomRunDef def;
  def.seed = seed;
  def.tiers = seed % 2 == 0 ? testing::TierMode::preset : testing::TierMode::custom;
  def.ticks = 30;
  def.max_entities = 120;
  def.max_clients = 40;
  def.keys = true;
  def.relevance = true;
  def.structure = true;
  def.sight = true;
  def.threads = threads;
  std::vector<std::uint64_t> prints;
  testing::run_random(def, [&](testing::MirroredWorld& mirror, const TickStats& stats) {
    World& world = mirror.world();
    Fingerprint f;
    f.add(stats.tick);
    f.add(stats.spawns);
    f.add(stats.updates);
    f.add(stats.despawns);
    f.add(stats.distance_tests);
    f.add(stats.cell_candidates);
    f.add(stats.members);
    f.add(stats.event_records);
    for (const ClientId c : world.clients()) {
      f.add((std::uint64_t{c.index} << 32) | c.generation);
      const ClientStream s = *world.stream(c);
      for (const SpawnRecord& r : s.spawns) f.add((std::uint64_t{r.entity.index} << 8) | static_cast<std::uint8_t>(r.reason));
      for (const EntityId r : s.updates) f.add(r);
      for (const DespawnRecord& r : s.despawns) f.add((std::uint64_t{r.entity.index} << 8) | static_cast<std::uint8_t>(r.reason));
      for (const EventRecord& r : s.events) f.add(r.event);
      for (const EntityId e : *world.interest_set(c)) f.add(e);
    }
    prints.push_back(f.h);
  });
  return prints;
}

TEST(ThreadsTest, RecordsAreIdenticalForAnyThreadCount) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::vector<std::uint64_t> one = run(seed, 1);
    ASSERT_FALSE(one.empty());
    for (const std::uint32_t threads : {2u, 3u, 4u}) {
      EXPECT_EQ(run(seed, threads), one) << "seed " << seed << ", " << threads << " threads";
      if (HasFailure()) return;
    }
  }
}

TEST(ThreadsTest, AThreadCountOutsideItsRangeIsRefused) {
  WorldDef def = default_world_def();
  def.threads = 0;
  auto w = World::create(def);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("threads is 0"), std::string::npos);
  def.threads = kMaxThreads + 1;
  EXPECT_FALSE(World::create(def).ok());
  def.threads = 4;
  EXPECT_TRUE(World::create(def).ok());
}

}  // namespace
}  // namespace sightline
