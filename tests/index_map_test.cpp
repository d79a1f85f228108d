// The flat index map against std::unordered_map, on seeded random inserts, erases and reassigns,
// with runs of neighbouring keys, keys that share a home slot and the extreme keys.
#include "../src/index_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace sightline {
namespace {

TEST(IndexMapTest, MatchesAnUnorderedMapOnRandomOperations) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    IndexMap map;
    std::unordered_map<std::uint32_t, std::uint32_t> model;
    std::vector<std::uint32_t> keys;  // the model's, to pick from
    // A small key space makes erases and re-inserts of the same keys common; the extremes and a
    // lattice of multiples of 2^16 (whose Fibonacci hashes differ only in low bits) are mixed in.
    const auto key = [&]() -> std::uint32_t {
      switch (rng() % 4) {
        case 0: return static_cast<std::uint32_t>(rng() % 512);
        case 1: return static_cast<std::uint32_t>(rng() % 64) << 16;
        case 2: return 0xffffffffu - static_cast<std::uint32_t>(rng() % 4);
        default: return static_cast<std::uint32_t>(rng());
      }
    };
    for (int step = 0; step < 20000; ++step) {
      const std::uint32_t op = static_cast<std::uint32_t>(rng() % 10);
      if (op < 5) {
        const std::uint32_t k = key();
        const auto value = static_cast<std::uint32_t>(rng() % 0xfffffffeu);
        if (model.count(k) == 0) {
          map.insert(k, value);
          model[k] = value;
          keys.push_back(k);
        }
      } else if (op < 8 && !keys.empty()) {
        const std::size_t i = rng() % keys.size();
        map.erase(keys[i]);
        model.erase(keys[i]);
        keys[i] = keys.back();
        keys.pop_back();
      } else if (!keys.empty()) {
        const std::uint32_t k = keys[rng() % keys.size()];
        const auto value = static_cast<std::uint32_t>(rng() % 0xfffffffeu);
        map.assign(k, value);
        model[k] = value;
      }
      ASSERT_EQ(map.size(), model.size()) << "seed " << seed << " step " << step;
      if (step % 97 == 0) {
        for (const auto& [k, v] : model) ASSERT_EQ(map.find(k), v) << "seed " << seed << " key " << k;
        for (int probe = 0; probe < 32; ++probe) {
          const std::uint32_t k = key();
          ASSERT_EQ(map.find(k), model.count(k) != 0 ? model[k] : IndexMap::kNone) << "seed " << seed;
        }
      }
    }
    // Erased down to empty, every key gone.
    for (const std::uint32_t k : keys) map.erase(k);
    EXPECT_EQ(map.size(), 0u);
    for (const auto& [k, v] : model) EXPECT_EQ(map.find(k), IndexMap::kNone);
  }
}

TEST(IndexMapTest, AnEmptyMapFindsNothing) {
  const IndexMap map;
  EXPECT_EQ(map.find(0), IndexMap::kNone);
  EXPECT_EQ(map.find(0xffffffffu), IndexMap::kNone);
}

}  // namespace
}  // namespace sightline
