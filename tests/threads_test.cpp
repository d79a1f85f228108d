// Threads change nothing but speed: the whole model's records, sets, events and answers are the
// same for 1, 2, 3 and 4 threads, tick by tick, and the brute-force oracle agrees with each. This
// file also runs under ThreadSanitizer in make test.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "random_run.h"
#include "tick_fingerprint.h"
#include "sightline/world.h"

namespace sightline {
namespace {

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
    prints.push_back(testing::tick_fingerprint(mirror.world(), stats));
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
