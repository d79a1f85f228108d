// The update filler's candidate order (src/candidate_order.h) against std::sort, exactly: every
// count from none to past the bucketed range, accumulators spread, bunched, equal and infinite.
#include "../src/candidate_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "rng.h"

namespace sightline {
namespace {

enum class Spread { priority, uniform_bits, few_values, equal, one_infinite, bunched_tail };

std::vector<Candidate> make_candidates(scenarios::Rng& rng, std::size_t n, Spread spread) {
  std::vector<Candidate> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    float acc = 1.0f;
    switch (spread) {
      // What the send makes: a base priority falling with distance, times a tick.
      case Spread::priority: acc = 0.05f / (1.0f + rng.uniform(0.0f, 220.0f) / 17.8f); break;
      case Spread::uniform_bits: acc = rng.uniform(1e-30f, 1e30f) * rng.uniform(); break;
      case Spread::few_values: acc = static_cast<float>(1 + rng.below(3)); break;
      case Spread::equal: acc = 0.25f; break;
      case Spread::one_infinite:
        acc = i == n / 2 ? std::numeric_limits<float>::infinity() : rng.uniform(0.01f, 1.0f);
        break;
      // Most within a hair of each other, a few far above: the buckets hold them all in one.
      case Spread::bunched_tail: acc = rng.below(50) == 0 ? 1e20f : 1.0f + rng.uniform() * 1e-6f; break;
    }
    if (!(acc > 0.0f)) acc = std::numeric_limits<float>::min();
    out.push_back(candidate(acc, i));  // table order, as the filler lists them
  }
  return out;
}

TEST(CandidateOrderTest, SortsHighestFirstAsAFullSortDoesForEveryCountAndSpread) {
  scenarios::Rng rng(7);
  const std::vector<std::size_t> counts = {0,   1,   2,   3,    17,   63,   64,   65,  100,
                                           127, 128, 300, 1000, 2047, 2048, 2049, 5000};
  for (const Spread spread : {Spread::priority, Spread::uniform_bits, Spread::few_values, Spread::equal,
                              Spread::one_infinite, Spread::bunched_tail}) {
    for (const std::size_t n : counts) {
      for (int round = 0; round < 3; ++round) {
        std::vector<Candidate> got = make_candidates(rng, n, spread);
        std::vector<Candidate> radix = got;
        std::vector<Candidate> want = got;
        std::vector<Candidate> scratch(n);
        std::sort(want.begin(), want.end(), std::greater<>());
        sort_highest_first(got.data(), got.data() + n, scratch.data());
        radix_sort_highest_first(radix.data(), radix.data() + n, scratch.data());
        ASSERT_EQ(got, want) << "count " << n << ", spread " << static_cast<int>(spread);
        ASSERT_EQ(radix, want) << "count " << n << ", spread " << static_cast<int>(spread);
      }
    }
  }
}

TEST(CandidateOrderTest, GatherHighestKeepsEachSideInOrderAndEveryGatheredAboveTheRest) {
  scenarios::Rng rng(11);
  for (const std::size_t n : {1u, 5u, 64u, 100u, 1000u}) {
    for (const std::size_t want : {std::size_t{1}, std::size_t{10}, n / 2, n, n + 5}) {
      const std::vector<Candidate> given = make_candidates(rng, n, Spread::priority);
      std::vector<Candidate> moved = given;
      std::vector<Candidate> scratch(n);
      Candidate* const end = gather_highest(moved.data(), moved.data() + n, want, scratch.data());
      const auto high = static_cast<std::size_t>(end - moved.data());
      ASSERT_GE(high, 1u);
      if (want >= n) {
        ASSERT_EQ(high, n);
      }
      const Candidate lowest_gathered = *std::min_element(moved.begin(), moved.begin() + high);
      for (std::size_t i = high; i < n; ++i) ASSERT_LT(moved[i], lowest_gathered);
      // Each side keeps the order it had: table order, places rising.
      auto by_place = [](Candidate a, Candidate b) { return member_of(a) < member_of(b); };
      ASSERT_TRUE(std::is_sorted(moved.begin(), moved.begin() + high, by_place));
      ASSERT_TRUE(std::is_sorted(moved.begin() + high, moved.end(), by_place));
      std::vector<Candidate> a = given;
      std::vector<Candidate> b = moved;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      ASSERT_EQ(a, b);
    }
  }
}

}  // namespace
}  // namespace sightline
