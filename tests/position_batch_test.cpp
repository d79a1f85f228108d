// set_positions' batch check: the AVX2 path must name exactly the entry the scalar path names,
// and both the first entry that breaks the rule (a null, out-of-range, stale or destroyed
// handle, or a coordinate beyond kMaxCoordinate or NaN), at every batch length and position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../src/position_batch.h"
#include "rng.h"
#include "sightline/world_def.h"

namespace sightline {
namespace {

std::size_t brute_first_bad(const std::vector<EntityId>& ids, const std::vector<float>& xs,
                            const std::vector<float>& zs, const std::vector<std::uint32_t>& live) {
  auto coordinate_ok = [](float v) { return !std::isnan(v) && std::fabs(v) <= kMaxCoordinate; };
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const EntityId id = ids[i];
    const bool handle_ok = id.generation != 0 && id.index < live.size() && live[id.index] == id.generation;
    if (!handle_ok || !coordinate_ok(xs[i]) || !coordinate_ok(zs[i])) return i;
  }
  return ids.size();
}

TEST(PositionBatch, BothChecksNameTheFirstBadEntry) {
  const bool avx2 = first_bad_position_avx2 != nullptr && __builtin_cpu_supports("avx2");
  scenarios::Rng rng(0xba7c4);
  // 200 slots: generation 1..5 while alive, 0 for the destroyed ones.
  std::vector<std::uint32_t> live(200);
  for (std::uint32_t& g : live) g = rng.below(6) == 0 ? 0 : 1 + rng.below(5);
  const float edge = kMaxCoordinate;
  const float odd[] = {std::nextafter(edge, 2 * edge), -std::nextafter(edge, 2 * edge),
                       std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  const float fine[] = {edge, -edge, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min()};
  std::size_t found_bad = 0;
  for (std::uint32_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<EntityId> ids;
      std::vector<float> xs;
      std::vector<float> zs;
      for (std::uint32_t i = 0; i < count; ++i) {
        std::uint32_t index = rng.below(200);
        while (live[index] == 0) index = rng.below(200);
        ids.push_back({index, live[index]});
        xs.push_back(rng.below(8) == 0 ? fine[rng.below(5)] : rng.uniform(-edge, edge));
        zs.push_back(rng.below(8) == 0 ? fine[rng.below(5)] : rng.uniform(-edge, edge));
      }
      // Mostly one flaw, sometimes two, anywhere in the batch; sometimes none.
      const std::uint32_t flaws = count == 0 ? 0 : rng.below(3);
      for (std::uint32_t f = 0; f < flaws; ++f) {
        const std::uint32_t at = rng.below(count);
        switch (rng.below(8)) {
          case 0: ids[at] = EntityId{}; break;                                        // null
          case 1: ids[at].index = 200 + rng.below(100); break;                        // never created
          case 2: ids[at].index = 0x80000000u + rng.below(1000); break;               // far out, signed negative
          case 3: ids[at].generation += 1 + rng.below(3); break;                      // stale
          case 4: { std::uint32_t d = 0; while (live[d] != 0) ++d; ids[at] = {d, 1}; break; }  // destroyed
          case 5: xs[at] = odd[rng.below(5)]; break;
          case 6: zs[at] = odd[rng.below(5)]; break;
          default: ids[at].index = 0xffffffffu; break;
        }
      }
      const std::size_t want = brute_first_bad(ids, xs, zs, live);
      found_bad += want != count ? 1 : 0;
      ASSERT_EQ(first_bad_position_scalar(ids.data(), xs.data(), zs.data(), count, live.data(), live.size(),
                                          kMaxCoordinate),
                want)
          << "count " << count << " trial " << trial;
      if (avx2) {
        ASSERT_EQ(first_bad_position_avx2(ids.data(), xs.data(), zs.data(), count, live.data(), live.size(),
                                          kMaxCoordinate),
                  want)
            << "count " << count << " trial " << trial;
      }
    }
  }
  EXPECT_GT(found_bad, 3000u);
}

TEST(PositionBatch, BestIsOneOfThem) {
  const PositionBatchCheck best = best_position_batch_check();
  EXPECT_TRUE(best == &first_bad_position_scalar || (best != nullptr && best == first_bad_position_avx2));
}

}  // namespace
}  // namespace sightline
