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

// Seeded random operations on a map of `Key`s against std::unordered_map.
template <class Key>
void matches_an_unordered_map() {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    KeyedIndexMap<Key> map;
    std::unordered_map<Key, std::uint32_t> model;
    std::vector<Key> keys;  // the model's, to pick from
    // A small key space makes erases and re-inserts of the same keys common; the extremes and a
    // lattice of multiples of 2^16 (whose Fibonacci hashes differ only in low bits) are mixed in;
    // 64-bit keys also get keys that differ only above bit 32.
    const auto key = [&]() -> Key {
      switch (rng() % 5) {
        case 0: return static_cast<Key>(rng() % 512);
        case 1: return static_cast<Key>(rng() % 64) << 16;
        case 2: return static_cast<Key>(~Key{0} - static_cast<Key>(rng() % 4));
        case 3:
          return sizeof(Key) == 8 ? static_cast<Key>((rng() % 64) << 32 | 5u) : static_cast<Key>(rng() % 7);
        default: return static_cast<Key>(rng());
      }
    };
    for (int step = 0; step < 20000; ++step) {
      const std::uint32_t op = static_cast<std::uint32_t>(rng() % 10);
      if (op < 5) {
        const Key k = key();
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
        const Key k = keys[rng() % keys.size()];
        const auto value = static_cast<std::uint32_t>(rng() % 0xfffffffeu);
        map.assign(k, value);
        model[k] = value;
      }
      ASSERT_EQ(map.size(), model.size()) << "seed " << seed << " step " << step;
      if (step % 97 == 0) {
        for (const auto& [k, v] : model) ASSERT_EQ(map.find(k), v) << "seed " << seed << " key " << k;
        for (int probe = 0; probe < 32; ++probe) {
          const Key k = key();
          ASSERT_EQ(map.find(k), model.count(k) != 0 ? model[k] : KeyedIndexMap<Key>::kNone)
              << "seed " << seed;
        }
      }
    }
    // Erased down to empty, every key gone.
    for (const Key k : keys) map.erase(k);
    EXPECT_EQ(map.size(), 0u);
    for (const auto& [k, v] : model) EXPECT_EQ(map.find(k), KeyedIndexMap<Key>::kNone);
  }
}

TEST(IndexMapTest, MatchesAnUnorderedMapOnRandomOperations) { matches_an_unordered_map<std::uint32_t>(); }
TEST(IndexMapTest, SixtyFourBitKeysMatchAnUnorderedMap) { matches_an_unordered_map<std::uint64_t>(); }

TEST(IndexMapTest, AnEmptyMapFindsNothing) {
  const IndexMap map;
  EXPECT_EQ(map.find(0), IndexMap::kNone);
  EXPECT_EQ(map.find(0xffffffffu), IndexMap::kNone);
}

}  // namespace
}  // namespace sightline
